/* coll_mesh.c: collectives on a full mesh: every rank talks to every other one at once, using all n-1 links
 * (direct reduce-scatter to each chunk's owner, then direct all-gather; for all-reduce both fused and
 * pipelined piece by piece); where ranks share cores, all-reduce by halving and doubling (coll_halving.c). */
#include "coll.h"

#include <string.h>

/* Chunk layout of a buffer of `count` elements among the ranks, in bytes. */
typedef struct layout {
    size_t count;
    size_t esize;
} layout_t;

static void chunk_of(const tbmcoll_comm_t *c, const layout_t *ly, int i, size_t *off, size_t *len)
{
    tbmcoll_chunk_bytes(c, ly->count, ly->esize, i, off, len);
}

static void add_xfer(tbmcoll_xfer_t *xs, int *n, tbmcoll_link_t *l, int is_send, const void *buf, size_t len)
{
    tbmcoll_xfer_add(xs, n, l, is_send, buf, len, 0);
}

/* This rank's own part of a fold: read where it is, unless it is dst itself (in place) at a place the fold
 * would overwrite before reading it (tbm_fold allows dst to be part[0] or part[1]); then its slot (part[rank])
 * gets a copy. Saves a copy of the chunk on every rank out of place, and on ranks 0 and 1 in place. */
static void own_part(const tbmcoll_comm_t *c, const unsigned char **part, const unsigned char *mine,
                     const unsigned char *dst, size_t len)
{
    if (mine != dst || c->rank <= 1)
        part[c->rank] = mine;
    else
        memcpy((unsigned char *)part[c->rank], mine, len);
}

/* Small all-reduce through rank 0: every other rank sends its buffer to rank 0 and waits for the result; rank
 * 0 folds all n in rank order (as the one round does: the same bits) and sends the result to every rank.
 * 2(n-1) messages in two hops (tbm_small_plan() says where that pays). In place is safe: a rank's
 * result can only arrive after rank 0 has all of its buffer, so its send has read all of it by then. */
static int mesh_rooted(tbmcoll_comm_t *c, const unsigned char *src, unsigned char *dst, size_t count,
                       tbm_dtype_t dt, tbm_redop_t op)
{
    tbmcoll_xfer_t xs[2 * TBM_MLX_RING_MAX];
    const unsigned char *part[TBM_MLX_RING_MAX];
    size_t bytes = count * tbm_dtype_size(dt);
    unsigned char *slots;
    int j, n = 0;

    if (c->rank != 0) {
        add_xfer(xs, &n, &c->links[0], 1, src, bytes);
        add_xfer(xs, &n, &c->links[0], 0, dst, bytes);
        return tbmcoll_xfer_run(c, xs, n, "all-reduce");
    }
    if (!(slots = tbmcoll_scratch(c, bytes * (size_t)(c->size - 1))))
        return -1;
    for (j = 1; j < c->size; j++) {
        part[j] = slots + (size_t)(j - 1) * bytes;
        add_xfer(xs, &n, &c->links[j], 0, part[j], bytes);
    }
    if (tbmcoll_xfer_run(c, xs, n, "all-reduce") < 0)
        return -1;
    part[0] = src;   /* rank 0's own part, read where it is (tbm_fold allows dst == part[0]: in place) */
    tbmcoll_fold(c, dst, part, c->size, count, dt, op);
    for (n = 0, j = 1; j < c->size; j++)
        add_xfer(xs, &n, &c->links[j], 1, dst, bytes);
    return tbmcoll_xfer_run(c, xs, n, "all-reduce");
}

/* Reduce-scatter: chunk j of src goes to rank j; this rank folds its chunk from every rank, in rank order,
 * into dst (which may be src's own chunk: in place). */
static int mesh_rs(tbmcoll_comm_t *c, const unsigned char *src, unsigned char *dst, const layout_t *ly,
                   tbm_dtype_t dt, tbm_redop_t op, const char *what)
{
    tbmcoll_xfer_t xs[2 * TBM_MLX_RING_MAX];
    const unsigned char *part[TBM_MLX_RING_MAX];
    size_t off, len, mine, mylen, maxlen;
    unsigned char *slots;
    int j, n = 0;

    chunk_of(c, ly, c->rank, &mine, &mylen);
    chunk_of(c, ly, 0, &off, &maxlen);            /* chunk 0 is the largest */
    if (!(slots = tbmcoll_scratch(c, maxlen * (size_t)c->size)))
        return -1;
    for (j = 0; j < c->size; j++) {
        part[j] = slots + (size_t)j * maxlen;
        if (j == c->rank)
            continue;
        chunk_of(c, ly, j, &off, &len);
        add_xfer(xs, &n, &c->links[j], 1, src + off, len);
        add_xfer(xs, &n, &c->links[j], 0, part[j], mylen);
    }
    if (tbmcoll_xfer_run_pieces(c, xs, n, what) < 0)
        return -1;
    own_part(c, part, src + mine, dst, mylen);
    tbmcoll_fold(c, dst, part, c->size, mylen / ly->esize, dt, op);
    return 0;
}

/* Small all-reduce in one round: every rank sends its whole buffer to every other and folds all of them in
 * rank order (the order reduce-scatter + all-gather uses too). */
static int mesh_oneshot(tbmcoll_comm_t *c, const unsigned char *src, unsigned char *dst, size_t count,
                        tbm_dtype_t dt, tbm_redop_t op)
{
    tbmcoll_xfer_t xs[2 * TBM_MLX_RING_MAX];
    const unsigned char *part[TBM_MLX_RING_MAX];
    size_t bytes = count * tbm_dtype_size(dt);
    unsigned char *slots = tbmcoll_scratch(c, bytes * (size_t)c->size);
    int j, n = 0;

    if (!slots)
        return -1;
    for (j = 0; j < c->size; j++) {
        part[j] = slots + (size_t)j * bytes;
        if (j == c->rank)
            continue;
        add_xfer(xs, &n, &c->links[j], 1, src, bytes);
        add_xfer(xs, &n, &c->links[j], 0, part[j], bytes);
    }
    if (tbmcoll_xfer_run(c, xs, n, "all-reduce") < 0)
        return -1;
    own_part(c, part, src, dst, bytes);
    tbmcoll_fold(c, dst, part, c->size, count, dt, op);
    return 0;
}

/* All-gather in place: buf holds this rank's chunk at its place; every other chunk arrives from its owner.
 * full >= 0 names a rank that holds every chunk already (a broadcast's root): nothing is sent to it. */
static int mesh_ag(tbmcoll_comm_t *c, unsigned char *buf, const layout_t *ly, int full, const char *what)
{
    tbmcoll_xfer_t xs[2 * TBM_MLX_RING_MAX];
    size_t off, len, mine, mylen;
    int j, n = 0;

    chunk_of(c, ly, c->rank, &mine, &mylen);
    for (j = 0; j < c->size; j++) {
        if (j == c->rank)
            continue;
        chunk_of(c, ly, j, &off, &len);
        if (j != full)
            add_xfer(xs, &n, &c->links[j], 1, buf + mine, mylen);
        if (c->rank != full)
            add_xfer(xs, &n, &c->links[j], 0, buf + off, len);
    }
    return tbmcoll_xfer_run_pieces(c, xs, n, what);
}

/* All-reduce above the small size: reduce-scatter and all-gather fused and pipelined. Every rank's part is cut
 * into pieces of `piece` bytes (opts.segment_bytes); in round k each rank sends piece k of every other rank's
 * part to its owner and receives piece k of its own part from every rank, folds it at once in rank order
 * (as mesh_rs) while it is in cache, and in round k+1 sends the folded piece to every rank while piece k+1
 * comes in: the results go on stream 1, the contributions on stream 0, so one batch carries both (with a
 * single stream, the results follow in a batch of their own). The working set is a few pieces, not the
 * whole buffer (the figures are in kernels/HISTORY.md). */
static int mesh_pipe(tbmcoll_comm_t *c, const unsigned char *src, unsigned char *dst, const layout_t *ly,
                     tbm_dtype_t dt, tbm_redop_t op, size_t piece)
{
    tbmcoll_xfer_t xs[4 * TBM_MLX_RING_MAX];
    const unsigned char *part[TBM_MLX_RING_MAX];
    size_t off[TBM_MLX_RING_MAX], len[TBM_MLX_RING_MAX], at, pl, rounds, k;
    size_t me = (size_t)c->rank;
    unsigned char *slots;
    int j, n, split = c->size > 1 && c->links[c->rank == 0 ? 1 : 0].nfd >= 2;

    for (j = 0; j < c->size; j++)
        chunk_of(c, ly, j, &off[j], &len[j]);
    rounds = (len[0] + piece - 1) / piece;   /* chunk 0 is the largest */
    if (!(slots = tbmcoll_scratch(c, piece * (size_t)c->size)))
        return -1;
    for (j = 0; j < c->size; j++)
        part[j] = slots + (size_t)j * piece;
    for (k = 0; k <= rounds; k++) {
        n = 0;
        for (j = 0; j < c->size; j++) {
            if (j == c->rank)
                continue;
            if (k < rounds) {
                tbmcoll_piece_of(len[j], piece, k, &at, &pl);
                tbmcoll_xfer_add(xs, &n, &c->links[j], 1, src + off[j] + at, pl, 0);
                tbmcoll_piece_of(len[me], piece, k, &at, &pl);
                tbmcoll_xfer_add(xs, &n, &c->links[j], 0, part[j], pl, 0);
            }
            if (k > 0 && split) {
                tbmcoll_piece_of(len[me], piece, k - 1, &at, &pl);
                tbmcoll_xfer_add(xs, &n, &c->links[j], 1, dst + off[me] + at, pl, 1);
                tbmcoll_piece_of(len[j], piece, k - 1, &at, &pl);
                tbmcoll_xfer_add(xs, &n, &c->links[j], 0, dst + off[j] + at, pl, 1);
            }
        }
        if (tbmcoll_xfer_run_streams(c, xs, n, "all-reduce") < 0)
            return -1;
        if (k > 0 && !split) {
            n = 0;
            for (j = 0; j < c->size; j++) {
                if (j == c->rank)
                    continue;
                tbmcoll_piece_of(len[me], piece, k - 1, &at, &pl);
                add_xfer(xs, &n, &c->links[j], 1, dst + off[me] + at, pl);
                tbmcoll_piece_of(len[j], piece, k - 1, &at, &pl);
                add_xfer(xs, &n, &c->links[j], 0, dst + off[j] + at, pl);
            }
            if (tbmcoll_xfer_run_streams(c, xs, n, "all-reduce") < 0)
                return -1;
        }
        if (k < rounds) {
            tbmcoll_piece_of(len[me], piece, k, &at, &pl);
            own_part(c, part, src + off[me] + at, dst + off[me] + at, pl);
            tbmcoll_fold(c, dst + off[me] + at, part, c->size, pl / ly->esize, dt, op);
            part[c->rank] = slots + me * piece;
        }
    }
    return 0;
}


static int mesh_allreduce(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                          tbm_redop_t op)
{
    layout_t ly = { count, tbm_dtype_size(dt) };
    size_t piece;

    if (count * ly.esize <= TBMCOLL_MESH_SMALL_BYTES)
        return c->small == TBM_SMALL_ROOTED ? mesh_rooted(c, send, recv, count, dt, op)
               : c->small == TBM_SMALL_DOUBLING ? tbmcoll_small_doubling(c, send, recv, count, dt, op)
                                                : mesh_oneshot(c, send, recv, count, dt, op);
    if (c->halving)
        return tbmcoll_halving_allreduce(c, send, recv, count, dt, op);
    piece = c->opts.segment_bytes / ly.esize * ly.esize;
    return mesh_pipe(c, send, recv, &ly, dt, op, piece > ly.esize ? piece : ly.esize);
}

static int mesh_allgather(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt)
{
    layout_t ly = { count * (size_t)c->size, tbm_dtype_size(dt) };
    size_t mine, mylen;

    chunk_of(c, &ly, c->rank, &mine, &mylen);
    if ((unsigned char *)recv + mine != send)
        memmove((unsigned char *)recv + mine, send, mylen);
    return mesh_ag(c, recv, &ly, -1, "all-gather");
}

static int mesh_reduce_scatter(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                               tbm_redop_t op)
{
    layout_t ly = { count * (size_t)c->size, tbm_dtype_size(dt) };

    return mesh_rs(c, send, recv, &ly, dt, op, "reduce-scatter");
}

/* Broadcast: the root scatters the chunks to their owners, then an all-gather spreads them (every link
 * busy); a buffer smaller than one element per rank goes straight from the root to everyone. */
static int mesh_broadcast(tbmcoll_comm_t *c, void *buf, size_t count, tbm_dtype_t dt, int root)
{
    layout_t ly = { count, tbm_dtype_size(dt) };
    tbmcoll_xfer_t xs[TBM_MLX_RING_MAX];
    size_t off, len, whole = count * ly.esize;
    int j, n = 0, direct = count < (size_t)c->size;

    for (j = 0; j < c->size; j++) {
        if (j == root || (c->rank != root && j != c->rank))
            continue;
        chunk_of(c, &ly, j, &off, &len);
        if (direct)
            off = 0, len = whole;
        if (c->rank == root)
            add_xfer(xs, &n, &c->links[j], 1, (unsigned char *)buf + off, len);
        else
            add_xfer(xs, &n, &c->links[root], 0, (unsigned char *)buf + off, len);
    }
    if (tbmcoll_xfer_run(c, xs, n, "broadcast") < 0)
        return -1;
    return direct ? 0 : mesh_ag(c, buf, &ly, root, "broadcast");
}

const tbmcoll_ops_t tbmcoll_mesh_ops = {
    .allreduce = mesh_allreduce,
    .allgather = mesh_allgather,
    .reduce_scatter = mesh_reduce_scatter,
    .broadcast = mesh_broadcast,
    .p2p = tbmcoll_tcp_p2p,
    .destroy = NULL,
};
