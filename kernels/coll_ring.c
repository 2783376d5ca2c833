/* coll_ring.c: collectives on a ring: data flows to rank+1 and comes from rank-1. All-reduce is a pipelined
 * ring reduce-scatter then all-gather; a step forwards each segment as soon as the step before produced it
 * (coll_schedule.c runs the steps). A ring of 4 may all-reduce by halving instead (coll_halving.c). */
#include "coll.h"

#include <string.h>

static int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

/* The reduce-scatter / all-gather schedule, steps first..last of 0 .. 2n-3. Step s sends chunk r-s-1 and
 * receives chunk r-s-2; steps below n-1 fold (reduce-scatter), the others copy (all-gather). Step 0 sends
 * from src, later steps from work; a fold writes work's chunk, or out for the last reduce-scatter step when
 * out is given. scratch holds one received chunk. */
typedef struct ring_bufs {
    const unsigned char *src;
    unsigned char *work;
    unsigned char *out;
    unsigned char *scratch;
    size_t count;                    /* elements in the whole buffer */
} ring_bufs_t;

static int rs_ag(tbmcoll_comm_t *c, const ring_bufs_t *b, int first, int last, tbm_dtype_t dt, tbm_redop_t op,
                 const char *what)
{
    tbmcoll_step_t st[2 * TBM_MLX_RING_MAX];
    size_t soff, slen, roff, rlen, esize = tbm_dtype_size(dt);
    int s, k = 0, n = c->size;

    for (s = first; s <= last; s++, k++) {
        tbmcoll_step_t *t = &st[k];
        tbmcoll_chunk_bytes(c, b->count, esize, mod(c->rank - s - 1, n), &soff, &slen);
        tbmcoll_chunk_bytes(c, b->count, esize, mod(c->rank - s - 2, n), &roff, &rlen);
        *t = (tbmcoll_step_t){ .send = (s == 0 ? b->src : b->work) + soff, .send_len = slen, .recv_len = rlen,
                               .gate = s == first ? -1 : k - 1 };
        if (s < n - 1) {
            t->recv = b->scratch;
            t->fold_dst = (s == n - 2 && b->out) ? b->out : b->work + roff;
            t->fold_b = b->src + roff;
        } else {
            t->recv = b->work + roff;
        }
    }
    return tbmcoll_schedule_run(c, &c->left, &c->right, st, k, dt, op, what);
}

static unsigned char *chunk_scratch(tbmcoll_comm_t *c, size_t count, size_t esize, size_t extra)
{
    size_t off, maxlen;

    tbmcoll_chunk_bytes(c, count, esize, 0, &off, &maxlen);   /* chunk 0 is the largest */
    return tbmcoll_scratch(c, maxlen + extra);
}

/* Small all-reduce: every rank's whole buffer goes around the ring both ways at once, rightwards for
 * ceil((n-1)/2) steps and leftwards for floor((n-1)/2) (a TCP connection carries both directions), so after
 * ceil((n-1)/2) steps instead of n-1 every rank holds all n buffers; each then folds them in rank order, so
 * every rank has the same bits. In step s a rank passes on what it received in step s-1 (its own in step 1):
 * to the right the buffer of rank r-s+1 while rank r-s's comes from the left, to the left rank r+s-1's while
 * rank r+s's comes from the right. */
static int ring_small(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                      tbm_redop_t op)
{
    const unsigned char *part[TBM_MLX_RING_MAX];
    size_t bytes = count * tbm_dtype_size(dt);
    tbmcoll_xfer_t xs[4];
    unsigned char *work;
    int j, s, k, n = c->size, r = c->rank, rightwards = n / 2, leftwards = (n - 1) / 2;

    if (!(work = tbmcoll_scratch(c, bytes * (size_t)n)))
        return -1;
    for (j = 0; j < n; j++)
        part[j] = work + (size_t)j * bytes;
    memcpy(work + (size_t)r * bytes, send, bytes);
    for (s = 1; s <= rightwards; s++) {
        k = 0;
        tbmcoll_xfer_add(xs, &k, &c->right, 1, part[mod(r - s + 1, n)], bytes, 0);
        tbmcoll_xfer_add(xs, &k, &c->left, 0, part[mod(r - s, n)], bytes, 0);
        if (s <= leftwards) {
            tbmcoll_xfer_add(xs, &k, &c->left, 1, part[mod(r + s - 1, n)], bytes, 0);
            tbmcoll_xfer_add(xs, &k, &c->right, 0, part[mod(r + s, n)], bytes, 0);
        }
        if (tbmcoll_xfer_run(c, xs, k, "all-reduce") < 0)
            return -1;
    }
    tbmcoll_fold(c, recv, part, n, count, dt, op);
    return 0;
}

static int ring_allreduce(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                          tbm_redop_t op)
{
    ring_bufs_t b = { .src = send, .work = recv, .count = count };

    if (c->size == 1) {
        memmove(recv, send, count * tbm_dtype_size(dt));
        return 0;
    }
    if (count * tbm_dtype_size(dt) <= TBMCOLL_SMALL_BYTES)
        return c->small == TBM_SMALL_DOUBLING ? tbmcoll_small_doubling(c, send, recv, count, dt, op)
                                              : ring_small(c, send, recv, count, dt, op);
    if (c->halving)
        return tbmcoll_halving_allreduce(c, send, recv, count, dt, op);
    if (!(b.scratch = chunk_scratch(c, count, tbm_dtype_size(dt), 0)))
        return -1;
    return rs_ag(c, &b, 0, 2 * c->size - 3, dt, op, "all-reduce");
}

static int ring_allgather(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt)
{
    size_t bytes = count * tbm_dtype_size(dt);
    unsigned char *mine = (unsigned char *)recv + (size_t)c->rank * bytes;
    ring_bufs_t b = { .work = recv, .count = count * (size_t)c->size };

    if (mine != send)
        memmove(mine, send, bytes);
    if (c->size == 1)
        return 0;
    return rs_ag(c, &b, c->size - 1, 2 * c->size - 3, dt, TBM_OP_SUM, "all-gather");
}

static int ring_reduce_scatter(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                               tbm_redop_t op)
{
    size_t esize = tbm_dtype_size(dt), total = count * (size_t)c->size;
    ring_bufs_t b = { .src = send, .out = recv, .count = total };

    if (c->size == 1) {
        memmove(recv, send, count * esize);
        return 0;
    }
    if (!(b.scratch = chunk_scratch(c, total, esize, total * esize)))
        return -1;
    b.work = b.scratch + count * esize;   /* intermediate chunks; every chunk here has count elements */
    return rs_ag(c, &b, 0, c->size - 2, dt, op, "reduce-scatter");
}

/* Broadcast: a pipelined chain root -> root+1 -> ... -> root-1. */
static int ring_broadcast(tbmcoll_comm_t *c, void *buf, size_t count, tbm_dtype_t dt, int root)
{
    int d = mod(c->rank - root, c->size);
    size_t bytes = count * tbm_dtype_size(dt);
    tbmcoll_step_t st = { .send = buf, .send_len = d < c->size - 1 ? bytes : 0, .recv = buf,
                          .recv_len = d > 0 ? bytes : 0, .gate = d > 0 ? 0 : -1 };

    if (c->size == 1)
        return 0;
    return tbmcoll_schedule_run(c, &c->left, &c->right, &st, 1, dt, TBM_OP_SUM, "broadcast");
}

const tbmcoll_ops_t tbmcoll_ring_ops = {
    .allreduce = ring_allreduce,
    .allgather = ring_allgather,
    .reduce_scatter = ring_reduce_scatter,
    .broadcast = ring_broadcast,
    .p2p = tbmcoll_tcp_p2p,
    .destroy = NULL,
};
