/* coll_ring.c: collectives on a ring: data flows to rank+1 and comes from rank-1. All-reduce is a pipelined
 * ring reduce-scatter then all-gather; a step forwards each segment as soon as the step before produced it. */
#include "coll.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

/* One step of a ring schedule: send a chunk to the right, receive one from the left (optionally folding it
 * with this rank's contribution). A step's send may only use bytes that its gate step has already
 * received and folded: that is what pipelines the ring. */
typedef struct ring_step {
    const unsigned char *send;
    size_t send_len;
    unsigned char *recv;
    size_t recv_len;
    unsigned char *fold_dst;         /* NULL: recv is final; else fold_dst = recv op fold_b */
    const unsigned char *fold_b;
    int recv_second;                 /* fold_dst = fold_b op recv instead (the received operand second) */
    int gate;                        /* index of the gating step, or -1 */
} ring_step_t;

typedef struct ring_run {
    tbmcoll_comm_t *c;
    tbmcoll_link_t *in, *out;        /* receive on in (the left), send on out (the right); may be one link */
    ring_step_t *st;
    int n;
    tbm_dtype_t dt;
    tbm_redop_t op;
    size_t esize;
    const char *what;
    int ss;                          /* current send step, bytes sent in it */
    size_t sent;
    int rs;                          /* current receive step, bytes received and folded in it */
    size_t got, done;
} ring_run_t;

static int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

/* Skip steps with nothing to send or receive (empty chunks when count < ranks). */
static void skip_empty(ring_run_t *r)
{
    while (r->ss < r->n && r->st[r->ss].send_len == 0)
        r->ss++;
    while (r->rs < r->n && r->st[r->rs].recv_len == 0)
        r->rs++;
}

/* Bytes of the current send step that may go out now. */
static size_t send_avail(const ring_run_t *r)
{
    const ring_step_t *s = &r->st[r->ss];
    size_t ready;

    if (s->gate < 0 || s->gate < r->rs)
        return s->send_len;
    ready = s->gate == r->rs ? r->done : 0;
    return ready < s->send_len ? ready : s->send_len;
}

/* Fold the received bytes of the current step in segments (whole elements); all of them at the end. */
static void fold_received(ring_run_t *r)
{
    ring_step_t *s = &r->st[r->rs];
    size_t upto = r->got;

    if (!s->fold_dst) {
        r->done = r->got;
        return;
    }
    if (r->got < s->recv_len) {
        if (r->got - r->done < r->c->opts.segment_bytes)
            return;
        upto = r->done + (r->got - r->done) / r->esize * r->esize;
    }
    if (s->recv_second)
        tbmcoll_reduce(r->c, s->fold_dst + r->done, s->fold_b + r->done, s->recv + r->done,
                       (upto - r->done) / r->esize, r->dt, r->op);
    else
        tbmcoll_reduce(r->c, s->fold_dst + r->done, s->recv + r->done, s->fold_b + r->done,
                       (upto - r->done) / r->esize, r->dt, r->op);
    r->done = upto;
}

/* One receive on the in link; 0 or an error code (tbmcoll_xfer_step). */
static int do_recv(ring_run_t *r)
{
    ring_step_t *s = &r->st[r->rs];
    tbmcoll_xfer_t x = { .link = r->in, .is_send = 0, .buf = s->recv, .len = s->recv_len, .done = r->got };
    int code = tbmcoll_xfer_step(r->c, &x);

    if (code)
        return code;
    r->got = x.done;
    fold_received(r);
    if (r->done == s->recv_len) {
        r->rs++;
        r->got = r->done = 0;
    }
    return 0;
}

/* One send on the out link, of what the gate allows; 0 or an error code. */
static int do_send(ring_run_t *r)
{
    ring_step_t *s = &r->st[r->ss];
    tbmcoll_xfer_t x = { .link = r->out, .is_send = 1, .buf = (unsigned char *)s->send,
                         .len = send_avail(r), .done = r->sent };
    int code = tbmcoll_xfer_step(r->c, &x);

    if (code)
        return code;
    r->sent = x.done;
    if (r->sent == s->send_len) {
        r->ss++;
        r->sent = 0;
    }
    return 0;
}

/* Fail naming the neighbours whose links failed (code != 0) or, when stalled, those we wait for. A failure
 * on one side looks at the other side too: when both neighbours have closed, both are named. */
static int ring_fail(ring_run_t *r, int left_code, int right_code, int stalled)
{
    tbmcoll_xfer_t lx = { .link = r->in, .is_send = 0 }, rx = { .link = r->out, .is_send = 1 };
    tbmcoll_xfer_t *xs[2], *waiting[1] = { &lx };
    int codes[2], n = 0;

    if (!stalled && !left_code)
        left_code = tbmcoll_peer_closed(r->in->fd);
    if (!stalled && !right_code && r->out != r->in)
        right_code = tbmcoll_peer_closed(r->out->fd);
    if (r->out == r->in && right_code) {   /* one peer: named once */
        left_code = left_code ? left_code : right_code;
        right_code = 0;
    }
    if (left_code)
        xs[n] = &lx, codes[n++] = left_code;
    if (right_code)
        xs[n] = &rx, codes[n++] = right_code;
    if (stalled)
        return tbmcoll_fail_stalled(r->c, xs, n, r->what);
    /* the left still owes data and did not fail: name it as awaited (it may be the cause) */
    return tbmcoll_fail_xfers(r->c, xs, codes, n, waiting, !left_code && r->rs < r->n, r->what);
}

/* Move what can move now without waiting: receive from the left, send what the gate allows to the right.
 * Returns 1 when something moved, 0 when nothing did, -1 after failing. */
static int ring_try(ring_run_t *r)
{
    int ss = r->ss, rs = r->rs, lcode = 0, rcode = 0;
    size_t sent = r->sent, got = r->got;

    if (r->rs < r->n)
        lcode = do_recv(r);
    if (r->ss < r->n && send_avail(r) > r->sent)
        rcode = do_send(r);
    if (lcode || rcode)
        return ring_fail(r, lcode, rcode, 0);
    return ss != r->ss || rs != r->rs || sent != r->sent || got != r->got;
}

/* Sleep in poll until the left has data or the right takes data, bounded by io_timeout. While this rank
 * still owes the right neighbour data, the right link is also watched for its closing (nothing else arrives
 * on it during a collective), so the death of the right neighbour is seen even while this rank only
 * receives. Returns 0, or -1 after failing. */
static int ring_wait(ring_run_t *r, int *watch_right)
{
    struct pollfd p[2];
    int want_send = r->ss < r->n && send_avail(r) > r->sent, want_recv = r->rs < r->n, rc, code;

    *watch_right = *watch_right && r->ss < r->n;   /* once all is sent, the right may finish and close */
    if (!want_send && !want_recv)
        return tbmcoll_fail(r->c, "%s: the ring schedule waits on itself (step %d)", r->what, r->ss);
    p[0] = (struct pollfd){ .fd = want_recv ? r->in->fd : -1, .events = POLLIN };
    p[1] = (struct pollfd){ .fd = want_send || *watch_right ? r->out->fd : -1,
                            .events = (short)((want_send ? POLLOUT : 0) | (*watch_right ? POLLIN : 0)) };
    do
        rc = poll(p, 2, r->c->opts.io_timeout_ms);
    while (rc < 0 && errno == EINTR);
    if (rc < 0)
        return tbmcoll_fail(r->c, "%s: poll failed: %s", r->what, strerror(errno));
    if (rc == 0)
        return ring_fail(r, want_recv, !want_recv, 1);
    if (*watch_right && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
        if ((code = tbmcoll_peer_closed(r->out->fd)) != 0)
            return ring_fail(r, 0, code, 0);
        *watch_right = !(p[1].revents & POLLIN);   /* data from the right is not ours: stop watching */
    }
    return 0;
}

/* Run a schedule: move data while it moves, yield briefly (and spin up to spin_us), then sleep in poll. */
static int ring_run(ring_run_t *r)
{
    tbmcoll_idle_t idle = { 0, 0 };
    int watch_right = 1, moved;
    long long t0;

    for (skip_empty(r); r->ss < r->n || r->rs < r->n; skip_empty(r)) {
        if ((moved = ring_try(r)) < 0)
            return -1;
        if (moved) {
            idle.rounds = 0;
            continue;
        }
        t0 = tbmcoll_tick(r->c);
        if (!tbmcoll_idle(r->c, &idle)) {
            r->c->stats.polls++;
            if (ring_wait(r, &watch_right) < 0)
                return -1;
        }
        tbmcoll_tock(r->c, &r->c->stats.wait_us, t0);
    }
    return 0;
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
    ring_step_t st[2 * TBM_MLX_RING_MAX];
    ring_run_t run = { .c = c, .in = &c->left, .out = &c->right, .st = st, .n = 0, .dt = dt, .op = op,
                       .esize = tbm_dtype_size(dt), .what = what };
    size_t soff, slen, roff, rlen;
    int s, n = c->size;

    for (s = first; s <= last; s++) {
        ring_step_t *t = &st[run.n];
        tbmcoll_chunk_bytes(c, b->count, run.esize, mod(c->rank - s - 1, n), &soff, &slen);
        tbmcoll_chunk_bytes(c, b->count, run.esize, mod(c->rank - s - 2, n), &roff, &rlen);
        *t = (ring_step_t){ .send = (s == 0 ? b->src : b->work) + soff, .send_len = slen, .recv_len = rlen,
                            .gate = s == first ? -1 : run.n - 1 };
        if (s < n - 1) {
            t->recv = b->scratch;
            t->fold_dst = (s == n - 2 && b->out) ? b->out : b->work + roff;
            t->fold_b = b->src + roff;
        } else {
            t->recv = b->work + roff;
        }
        run.n++;
    }
    return ring_run(&run);
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
        return ring_small(c, send, recv, count, dt, op);
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
    ring_step_t st = { .send = buf, .send_len = d < c->size - 1 ? bytes : 0, .recv = buf,
                       .recv_len = d > 0 ? bytes : 0, .gate = d > 0 ? 0 : -1 };
    ring_run_t run = { .c = c, .in = &c->left, .out = &c->right, .st = &st, .n = 1, .dt = dt,
                       .esize = tbm_dtype_size(dt), .what = "broadcast" };

    return c->size == 1 ? 0 : ring_run(&run);
}

int tbmcoll_pair_fold(tbmcoll_comm_t *c, tbmcoll_link_t *l, const void *send, size_t send_len, void *recv,
                      size_t recv_len, void *fold_dst, const void *fold_b, int recv_second, tbm_dtype_t dt,
                      tbm_redop_t op, const char *what)
{
    ring_step_t st = { .send = send, .send_len = send_len, .recv = recv, .recv_len = recv_len,
                       .fold_dst = fold_dst, .fold_b = fold_b, .recv_second = recv_second, .gate = -1 };
    ring_run_t run = { .c = c, .in = l, .out = l, .st = &st, .n = 1, .dt = dt, .op = op,
                       .esize = tbm_dtype_size(dt), .what = what };

    return ring_run(&run);
}

const tbmcoll_ops_t tbmcoll_ring_ops = {
    .allreduce = ring_allreduce,
    .allgather = ring_allgather,
    .reduce_scatter = ring_reduce_scatter,
    .broadcast = ring_broadcast,
    .p2p = tbmcoll_tcp_p2p,
    .destroy = NULL,
};
