/* coll_halving.c: all-reduce by recursive halving and doubling, for a mesh of 4, 8, 16 ... ranks and for a ring
 * of 4 (coll_mesh.c and coll_ring.c choose it when c->halving is set); each exchange folds as the data comes
 * (coll_schedule.c). */
#include "coll.h"

#include <string.h>

/* Bytes [*at, *at + *len) of the blocks [lo, hi) (block b is chunk b of `count` elements of esize bytes among
 * the ranks). */
static void blocks_of(const tbmcoll_comm_t *c, size_t count, size_t esize, int lo, int hi, size_t *at,
                      size_t *len)
{
    size_t off, l, end;

    tbmcoll_chunk_bytes(c, count, esize, lo, at, &l);
    tbmcoll_chunk_bytes(c, count, esize, hi - 1, &off, &l);
    end = off + l;
    *len = end - *at;
}

/* Halving and doubling on a ring of 4 (tbmcoll_halving_allreduce): a ring of four is a square, whose corners
 * numbered in Gray code (ring rank r is corner r ^ (r >> 1): 0, 1, 3, 2) differ in one bit from each
 * neighbour's; so every exchange of the halving is with a ring neighbour. A mesh's corners are its ranks. */
static int corner_of(const tbmcoll_comm_t *c, int rank)
{
    return c->algo == TBMCOLL_ALGO_RING ? rank ^ (rank >> 1) : rank;
}

static tbmcoll_link_t *corner_link(tbmcoll_comm_t *c, int corner)
{
    int rank;

    if (c->algo != TBMCOLL_ALGO_RING)
        return &c->links[corner];
    rank = corner ^ (corner >> 1);   /* the inverse of r ^ (r >> 1) for two bits */
    return rank == c->right.peer ? &c->right : &c->left;
}

/* All-reduce by recursive halving, then recursive doubling (Rabenseifner's), for a power-of-two number of
 * ranks (corners: see corner_of; below, "rank" is a corner): in step s of the halving, rank r exchanges with
 * rank r ^ 2^s half of the blocks it still holds
 * (the upper half when bit s of r is clear), folding what it receives into the half it keeps (the lower
 * rank's operand first) segment by segment as it arrives, while it is in cache, and sending its other half
 * meanwhile, as one stream (tbmcoll_pair_fold: at most a piece ahead of what has come in), in windows of
 * TBMCOLL_HALVING_PIECES pieces: the scratch a window is received into is bounded (out of place, the first
 * step receives into dst itself and needs none).
 * After log2(n) steps it holds one block folded over all ranks, as a balanced tree in rank order
 * ((r0 op r1) op (r2 op r3) for 4). The doubling sends the blocks back the same way (an exchange in pieces,
 * tbmcoll_xfer_run_pieces). Each step talks to one
 * peer only: where ranks share cores, two of them at a time can run. */
static int halving(tbmcoll_comm_t *c, const unsigned char *src, unsigned char *dst, size_t count,
                   tbm_dtype_t dt, tbm_redop_t op, size_t piece)
{
    tbmcoll_xfer_t xs[2];
    int lo[8], hi[8], steps = 0, d, p, mid, klo, khi, glo, ghi, n, me = corner_of(c, c->rank);
    size_t kat, klen, gat, glen, k, rounds, at, gat_k, pl, gpl;
    size_t esize = tbm_dtype_size(dt), total = count * esize;
    size_t win = piece <= TBMCOLL_SEGMENT_MAX / TBMCOLL_HALVING_PIECES ? piece * TBMCOLL_HALVING_PIECES
                                                                        : TBMCOLL_SEGMENT_MAX;
    const unsigned char *from = src;
    unsigned char *slot = tbmcoll_scratch(c, win < total ? win : total), *into;

    if (!slot)
        return -1;
    lo[0] = 0, hi[0] = c->size;
    for (d = 1; d < c->size; d <<= 1, steps++) {
        p = me ^ d;
        mid = (lo[steps] + hi[steps]) / 2;
        if (me & d)
            klo = mid, khi = hi[steps], glo = lo[steps], ghi = mid;
        else
            klo = lo[steps], khi = mid, glo = mid, ghi = hi[steps];
        blocks_of(c, count, esize, klo, khi, &kat, &klen);
        blocks_of(c, count, esize, glo, ghi, &gat, &glen);
        rounds = ((klen > glen ? klen : glen) + win - 1) / win;
        for (k = 0; k < rounds; k++) {
            tbmcoll_piece_of(glen, win, k, &gat_k, &gpl);
            tbmcoll_piece_of(klen, win, k, &at, &pl);
            into = from != dst ? dst + kat + at : slot;   /* out of place: straight into place */
            if (tbmcoll_pair_fold(c, corner_link(c, p), from + gat + gat_k, gpl, into, pl, dst + kat + at,
                                  from + kat + at, me < p, dt, op, "all-reduce") < 0)
                return -1;
        }
        from = dst;
        lo[steps + 1] = klo, hi[steps + 1] = khi;
    }
    for (d = c->size >> 1; d >= 1; d >>= 1) {
        p = me ^ d;
        steps--;
        /* this rank holds blocks [lo, hi) of step `steps + 1`; the peer holds the rest of step `steps`'s */
        blocks_of(c, count, esize, lo[steps + 1], hi[steps + 1], &kat, &klen);
        if (lo[steps + 1] == lo[steps])
            blocks_of(c, count, esize, hi[steps + 1], hi[steps], &gat, &glen);
        else
            blocks_of(c, count, esize, lo[steps], lo[steps + 1], &gat, &glen);
        n = 0;
        tbmcoll_xfer_add(xs, &n, corner_link(c, p), 1, dst + kat, klen, 0);
        tbmcoll_xfer_add(xs, &n, corner_link(c, p), 0, dst + gat, glen, 0);
        if (tbmcoll_xfer_run_pieces(c, xs, n, "all-reduce") < 0)
            return -1;
    }
    return 0;
}

/* The halving on a large vector: one chunk of TBMCOLL_HALVING_CHUNK_PIECES pieces after the other (the last
 * one up to half as long again, so that none is short), each all-reduced whole. A chunk's data then stays in
 * the caches through the steps of its halving and doubling; over the whole vector at once, every step read
 * and wrote it from memory again, and the kernel's copies of it with it. Each element is folded over the
 * same tree either way: the same bits. */
static int halving_chunked(tbmcoll_comm_t *c, const unsigned char *src, unsigned char *dst, size_t count,
                           tbm_dtype_t dt, tbm_redop_t op, size_t piece)
{
    size_t esize = tbm_dtype_size(dt), per = piece / esize * TBMCOLL_HALVING_CHUNK_PIECES, done, n;

    for (done = 0; done < count; done += n) {
        n = count - done < per + per / 2 ? count - done : per;
        if (halving(c, src + done * esize, dst + done * esize, n, dt, op, piece) < 0)
            return -1;
    }
    return 0;
}

int tbmcoll_halving_allreduce(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                              tbm_redop_t op)
{
    size_t esize = tbm_dtype_size(dt), piece = c->opts.segment_bytes / esize * esize;

    return halving_chunked(c, send, recv, count, dt, op, piece > esize ? piece : esize);
}

/* Small all-reduce by recursive doubling: in step s this rank (a corner) exchanges its partial result with
 * corner ^ 2^s and both fold the lower corner's operand first, so both hold the same bits; after log2(n) steps
 * every rank holds the balanced tree over the corners in order ((c0 op c1) op (c2 op c3)) ... One message
 * each way per step: 2 log2(n) per rank, where one round moves 2(n-1) and the ring's both ways around
 * 2(n-1) in ceil((n-1)/2) steps (tbm_small_plan() says where that pays). */
int tbmcoll_small_doubling(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                           tbm_redop_t op)
{
    tbmcoll_xfer_t xs[2];
    const unsigned char *part[2];
    size_t bytes = count * tbm_dtype_size(dt);
    unsigned char *theirs = tbmcoll_scratch(c, bytes), *dst = recv;
    int bit, peer, n, me = corner_of(c, c->rank);

    if (!theirs)
        return -1;
    if (recv != send)
        memcpy(recv, send, bytes);
    for (bit = 1; bit < c->size; bit <<= 1) {
        peer = me ^ bit;
        n = 0;
        tbmcoll_xfer_add(xs, &n, corner_link(c, peer), 1, dst, bytes, 0);
        tbmcoll_xfer_add(xs, &n, corner_link(c, peer), 0, theirs, bytes, 0);
        if (tbmcoll_xfer_run(c, xs, n, "all-reduce") < 0)
            return -1;
        part[0] = me < peer ? dst : theirs;
        part[1] = me < peer ? theirs : dst;
        tbmcoll_fold(c, dst, part, 2, count, dt, op);
    }
    return 0;
}
