/* test_coll.c: libtbmcoll against a serial reference: every operation, type and size class (1, 7, 1023,
 * 1M+3 elements), 1 to 4 ranks on loopback (and 8 for the mesh's halving all-reduce), mesh (direct, halving
 * and the automatic choice) and ring, in place and out of place, bit for bit; with the buffers at every
 * offset from a page boundary that decides whether receives are staged. */
#include "ranks.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NSIZES 4
#define NCFGS 8
#define BIG 100000     /* above this, only sum all-reduce for every type; the other operations on f32 */
static size_t sizes[NSIZES] = { 1, 7, 1023, (1u << 20) + 3 };
/* Under valgrind (check-valgrind) the largest class is TBM_COLL_BIG elements instead: the same paths (striped
 * over the streams, folded in blocks) at a size valgrind runs through in minutes, not tens of them. */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Rank k's input: count elements of dt, from a seed; floats in [-8, 8) with all mantissa bits used. */
static void *gen(int k, size_t count, tbm_dtype_t dt, unsigned salt)
{
    size_t es = tbm_dtype_size(dt), i;
    unsigned char *p = malloc(count * es + 1);

    for (i = 0; i < count; i++) {
        uint64_t h = mix(((uint64_t)salt << 48) ^ ((uint64_t)k << 40) ^ i);
        float f = (float)((int64_t)(h >> 40) - (1 << 23)) / (float)(1 << 20);
        uint16_t half = dt == TBM_DT_F16 ? tbm_f32_to_f16(f) : tbm_f32_to_bf16(f);
        int32_t v = (int32_t)(uint32_t)h;
        memcpy(p + i * es, dt == TBM_DT_F32 ? (void *)&f : dt == TBM_DT_I32 ? (void *)&v : (void *)&half, es);
    }
    return p;
}

/* The mesh's halving all-reduce: ranks [lo, hi) folded as a balanced tree in rank order, the lower half's
 * result first ((r0 op r1) op (r2 op r3) for 4), elements [first, first+count). */
static void tree(unsigned char *const *in, int lo, int hi, tbm_dtype_t dt, tbm_redop_t op, unsigned char *out,
                 size_t first, size_t count)
{
    size_t es = tbm_dtype_size(dt);
    unsigned char *upper;
    int mid = (lo + hi) / 2;

    if (hi - lo == 1) {
        memcpy(out, in[lo] + first * es, count * es);
        return;
    }
    upper = malloc(count * es + 1);
    tree(in, lo, mid, dt, op, out, first, count);
    tree(in, mid, hi, dt, op, upper, first, count);
    tbm_reduce(out, out, upper, count, dt, op);
    free(upper);
}

/* The reduction the library promises: chunk c of `total` elements folded as acc = acc op next in rank order
 * (mesh) or ring order c+1, ..., c+n (ring), or as a tree (ring == 2: the mesh's halving all-reduce, for a
 * whole buffer above the small size; ring == 3: a ring of 4's, over its ranks in Gray order 0, 1, 3, 2). Writes elements [first, first+count) of the result. */
/* Whether this rank's mesh runs its small all-reduce by recursive doubling (set per rank process). */
static int small_doubling;

static void reference(unsigned char *const *in, int n, size_t total, tbm_dtype_t dt, tbm_redop_t op, int ring,
                      unsigned char *out, size_t first, size_t count)
{
    /* small all-reduces fold whole buffers in rank order on both algorithms (in one round and through rank
     * 0), or as a balanced tree in rank order by recursive doubling */
    size_t small_max = ring == 1 || ring == 3 ? TBMCOLL_SMALL_BYTES : TBMCOLL_MESH_SMALL_BYTES;
    int whole = first == 0 && count == total, small = whole && total * tbm_dtype_size(dt) <= small_max;
    size_t es = tbm_dtype_size(dt), off, len, lo, hi;
    int c, k, o0, o1;

    if (small && small_doubling) {
        unsigned char *corner[8];

        for (c = 0; c < n && c < 8; c++)   /* a ring of 4 doubles in Gray order: corner c is rank c ^ (c >> 1) */
            corner[c] = ring == 1 || ring == 3 ? in[c ^ (c >> 1)] : in[c];
        tree(corner, 0, n, dt, op, out, 0, count);
        return;
    }

    if ((ring == 2 || ring == 3) && whole && !small) {
        unsigned char *corner[8];

        for (c = 0; c < n && c < 8; c++)   /* a ring of 4 halves in Gray order: corner c is rank c ^ (c >> 1) */
            corner[c] = ring == 3 ? in[c ^ (c >> 1)] : in[c];
        tree(corner, 0, n, dt, op, out, 0, count);
        return;
    }
    ring = ring == 1 && !small;

    for (c = 0; c < n; c++) {
        tbm_chunk(total, n, c, &off, &len);
        lo = off > first ? off : first;
        hi = off + len < first + count ? off + len : first + count;
        if (lo >= hi)
            continue;
        o0 = ring ? (c + 1) % n : 0;
        if (n == 1) {
            memcpy(out + (lo - first) * es, in[0] + lo * es, (hi - lo) * es);
            continue;
        }
        o1 = ring ? (c + 2) % n : 1;
        tbm_reduce(out + (lo - first) * es, in[o0] + lo * es, in[o1] + lo * es, hi - lo, dt, op);
        for (k = 2; k < n; k++)
            tbm_reduce(out + (lo - first) * es, out + (lo - first) * es, in[ring ? (c + 1 + k) % n : k] + lo * es,
                       hi - lo, dt, op);
    }
}

static int same(const char *what, tbm_dtype_t dt, size_t count, const void *got, const void *want)
{
    size_t es = tbm_dtype_size(dt), i;

    if (memcmp(got, want, count * es) == 0)
        return 0;
    for (i = 0; i < count && memcmp((const char *)got + i * es, (const char *)want + i * es, es) == 0; i++)
        ;
    fprintf(stderr, "%s %s count %zu: element %zu differs\n", what, tbm_dtype_name(dt), count, i);
    return 1;
}

typedef struct ctx {
    tbmcoll_comm_t *c;
    int rank, n, ring;   /* ring: 1 for the ring, 3 for its halving all-reduce (4 ranks), 2 for the mesh's
                          * halving all-reduce, 0 for its direct one */
    tbm_err_t err;
} ctx_t;

static int call_ok(ctx_t *x, int rc, const char *what)
{
    if (rc == 0)
        return 0;
    fprintf(stderr, "%s failed: %s\n", what, x->err.msg);
    return 1;
}

static int check_allreduce(ctx_t *x, size_t count, tbm_dtype_t dt, unsigned char *const *in)
{
    size_t bytes = count * tbm_dtype_size(dt);
    unsigned char *want = malloc(bytes + 1), *got = malloc(bytes + 1);
    int bad = 0, op;

    for (op = 0; op < (count > BIG ? 1 : TBM_OP_COUNT) && !bad; op++) {
        reference(in, x->n, count, dt, (tbm_redop_t)op, x->ring, want, 0, count);
        bad |= call_ok(x, tbmcoll_allreduce(x->c, in[x->rank], got, count, dt, (tbm_redop_t)op, &x->err),
                       "all-reduce");
        bad |= bad || same("all-reduce out of place", dt, count, got, want);
        memcpy(got, in[x->rank], bytes);
        bad |= bad || call_ok(x, tbmcoll_allreduce(x->c, got, got, count, dt, (tbm_redop_t)op, &x->err),
                              "all-reduce");
        bad |= bad || same("all-reduce in place", dt, count, got, want);
    }
    free(want);
    free(got);
    return bad;
}

/* All-gather and reduce-scatter with `per` elements per rank (the whole buffer about `count`). */
static int check_gather_scatter(ctx_t *x, size_t per, tbm_dtype_t dt, unsigned char *const *in)
{
    size_t es = tbm_dtype_size(dt), total = per * (size_t)x->n;
    unsigned char *all = malloc(total * es + 1), *want = malloc(total * es + 1);
    int k, bad = 0;

    for (k = 0; k < x->n; k++)
        memcpy(want + (size_t)k * per * es, in[k], per * es);
    bad |= call_ok(x, tbmcoll_allgather(x->c, in[x->rank], all, per, dt, &x->err), "all-gather");
    bad |= bad || same("all-gather", dt, total, all, want);
    memset(all, 0, total * es);
    memcpy(all + (size_t)x->rank * per * es, in[x->rank], per * es);
    bad |= bad || call_ok(x, tbmcoll_allgather(x->c, all + (size_t)x->rank * per * es, all, per, dt, &x->err),
                          "all-gather");
    bad |= bad || same("all-gather in place", dt, total, all, want);
    /* reduce-scatter: every rank's input is `total` elements; use in[k] of the all-reduce (large enough) */
    reference(in, x->n, total, dt, TBM_OP_SUM, x->ring == 1 || x->ring == 3, want, (size_t)x->rank * per, per);
    bad |= bad || call_ok(x, tbmcoll_reduce_scatter(x->c, in[x->rank], all, per, dt, TBM_OP_SUM, &x->err),
                          "reduce-scatter");
    bad |= bad || same("reduce-scatter", dt, per, all, want);
    memcpy(all, in[x->rank], total * es);
    bad |= bad || call_ok(x, tbmcoll_reduce_scatter(x->c, all, all + (size_t)x->rank * per * es, per, dt,
                                                    TBM_OP_MAX, &x->err), "reduce-scatter");
    reference(in, x->n, total, dt, TBM_OP_MAX, x->ring == 1 || x->ring == 3, want, (size_t)x->rank * per, per);
    bad |= bad || same("reduce-scatter in place", dt, per, all + (size_t)x->rank * per * es, want);
    free(all);
    free(want);
    return bad;
}

static int check_broadcast_p2p(ctx_t *x, size_t count, tbm_dtype_t dt, unsigned char *const *in)
{
    size_t bytes = count * tbm_dtype_size(dt);
    unsigned char *buf = malloc(bytes + 1);
    int root, bad = 0, right = (x->rank + 1) % x->n, left = (x->rank + x->n - 1) % x->n;

    for (root = 0; root < x->n && !bad; root += x->n > 1 ? x->n - 1 : 1) {
        memcpy(buf, in[x->rank], bytes);
        bad |= call_ok(x, tbmcoll_broadcast(x->c, buf, count, dt, root, &x->err), "broadcast");
        bad |= bad || same("broadcast", dt, count, buf, in[root]);
    }
    if (x->n > 1 && !bad) {
        /* ring pattern without a cycle of blocked senders: even ranks send first */
        memset(buf, 0, bytes);
        if (x->rank % 2 == 0)
            bad |= call_ok(x, tbmcoll_send(x->c, in[x->rank], count, dt, right, &x->err), "send");
        bad |= bad || call_ok(x, tbmcoll_recv(x->c, buf, count, dt, left, &x->err), "recv");
        if (x->rank % 2 == 1)
            bad |= bad || call_ok(x, tbmcoll_send(x->c, in[x->rank], count, dt, right, &x->err), "send");
        bad |= bad || same("send/recv", dt, count, buf, in[left]);
        /* every rank at once, both directions of the ring */
        memset(buf, 0, bytes);
        bad |= bad || call_ok(x, tbmcoll_sendrecv(x->c, in[x->rank], right, buf, left, count, dt, &x->err),
                              "sendrecv");
        bad |= bad || same("sendrecv", dt, count, buf, in[left]);
        bad |= bad || call_ok(x, tbmcoll_sendrecv(x->c, in[x->rank], left, buf, right, count, dt, &x->err),
                              "sendrecv");
        bad |= bad || same("sendrecv backwards", dt, count, buf, in[right]);
        /* one side's exchange (which may move in pieces) against the other's send, then receive (whole) */
        memset(buf, 0, bytes);
        if (x->rank == 0)
            bad |= bad || call_ok(x, tbmcoll_sendrecv(x->c, in[0], 1, buf, 1, count, dt, &x->err), "sendrecv");
        if (x->rank == 1) {
            bad |= bad || call_ok(x, tbmcoll_send(x->c, in[1], count, dt, 0, &x->err), "send");
            bad |= bad || call_ok(x, tbmcoll_recv(x->c, buf, count, dt, 0, &x->err), "recv");
        }
        if (x->rank <= 1)
            bad |= bad || same("sendrecv against send and recv", dt, count, buf, in[1 - x->rank]);
    }
    free(buf);
    return bad;
}

static int check_size(ctx_t *x, size_t count, tbm_dtype_t dt)
{
    unsigned char *in[TR_MAX];
    size_t per = (count + (size_t)x->n - 1) / (size_t)x->n;
    int k, bad;

    for (k = 0; k < x->n; k++)
        in[k] = gen(k, per * (size_t)x->n > count ? per * (size_t)x->n : count, dt, (unsigned)count);
    bad = check_allreduce(x, count, dt, in);
    if (count <= BIG || dt == TBM_DT_F32) {
        bad = bad || check_gather_scatter(x, per, dt, in);
        bad = bad || check_broadcast_p2p(x, count, dt, in);
    }
    for (k = 0; k < x->n; k++)
        free(in[k]);
    return bad;
}

/* The same inputs twice give the same bits (no dependence on arrival order). */
static int check_repeatable(ctx_t *x)
{
    size_t count = 100003;
    unsigned char *in = gen(x->rank, count, TBM_DT_F32, 99), *a = malloc(count * 4), *b = malloc(count * 4);
    int bad = call_ok(x, tbmcoll_allreduce(x->c, in, a, count, TBM_DT_F32, TBM_OP_SUM, &x->err), "all-reduce");

    bad = bad || call_ok(x, tbmcoll_allreduce(x->c, in, b, count, TBM_DT_F32, TBM_OP_SUM, &x->err), "all-reduce");
    bad = bad || same("repeated all-reduce", TBM_DT_F32, count, a, b);
    free(in);
    free(a);
    free(b);
    return bad;
}

/* Results right wherever the buffers lie: receives into memory 1 to 31 bytes past a 64-byte boundary go
 * through the staging buffer on x86-64 (opts.recv_staging), the others straight in; every offset from a page
 * boundary that matters (both sides of the staged range), out of place and in place, all-reduce, all-gather
 * and a send/recv, with 3 pieces per rank's part (one under valgrind). */
static int check_alignments(ctx_t *x)
{
    static const size_t offs[] = { 0, 1, 8, 15, 16, 17, 31, 32, 33, 48, 63, 64 + 16, 4095 };
    /* under valgrind (TBM_COLL_BIG) 128 KiB and 5 floats per rank: above the small all-reduce, and staged */
    size_t per = getenv("TBM_COLL_BIG") ? 32 * 1024 + 5 : 3 * (256u << 10) / 4 + 5;
    size_t count = per * (size_t)x->n, bytes = count * 4, k, j;
    unsigned char *in[TR_MAX], *want = malloc(bytes), *gwant = malloc(bytes), *arena = NULL, *got;
    int r, bad = 0, right = (x->rank + 1) % x->n, left = (x->rank + x->n - 1) % x->n;

    if (!want || !gwant || posix_memalign((void **)&arena, 4096, bytes + 8192) != 0) {
        fprintf(stderr, "rank %d: out of memory for the buffers of %zu bytes\n", x->rank, bytes);
        free(want);
        free(gwant);
        return 1;
    }
    for (r = 0; r < x->n; r++)
        in[r] = gen(r, count, TBM_DT_F32, 4242);
    reference(in, x->n, count, TBM_DT_F32, TBM_OP_SUM, x->ring, want, 0, count);
    for (r = 0; r < x->n; r++)
        memcpy(gwant + (size_t)r * per * 4, in[r], per * 4);
    for (k = 0; k < sizeof(offs) / sizeof(offs[0]) && !bad; k++) {
        got = arena + offs[k];
        memset(got, 0, bytes);
        bad |= call_ok(x, tbmcoll_allreduce(x->c, in[x->rank], got, count, TBM_DT_F32, TBM_OP_SUM, &x->err),
                       "all-reduce");
        bad |= bad || same("all-reduce out of place, offset", TBM_DT_F32, count, got, want);
        memcpy(got, in[x->rank], bytes);
        bad |= bad || call_ok(x, tbmcoll_allreduce(x->c, got, got, count, TBM_DT_F32, TBM_OP_SUM, &x->err),
                              "all-reduce");
        bad |= bad || same("all-reduce in place, offset", TBM_DT_F32, count, got, want);
        memset(got, 0, bytes);
        bad |= bad || call_ok(x, tbmcoll_allgather(x->c, in[x->rank], got, per, TBM_DT_F32, &x->err), "all-gather");
        bad |= bad || same("all-gather, offset", TBM_DT_F32, count, got, gwant);
        if (x->n > 1) {
            memset(got, 0, bytes);
            bad |= bad || call_ok(x, tbmcoll_sendrecv(x->c, in[x->rank], right, got, left, count, TBM_DT_F32,
                                                      &x->err), "sendrecv");
            bad |= bad || same("sendrecv, offset", TBM_DT_F32, count, got, in[left]);
        }
        if (bad)
            fprintf(stderr, "  (rank %d, buffers %zu bytes past a page boundary)\n", x->rank, offs[k]);
    }
    for (j = 0; j < (size_t)x->n; j++)
        free(in[j]);
    free(arena);
    free(want);
    free(gwant);
    return bad;
}

typedef struct run_cfg {
    tbmcoll_algo_t algo;
    int streams;
    int sockbuf;   /* 0: the default (4 MiB asked); small: less than a few pieces of the pipelined all-reduce */
    tbmcoll_mesh_ar_t how;
    size_t segment;   /* 0: the default (256 KiB); small: the halving cuts its vectors into many chunks */
    tbmcoll_small_ar_t small;   /* the mesh's all-reduce up to 128 KiB (the reference knows its bits) */
} run_cfg_t;

/* What the mesh's all-reduce must be for n ranks: halving when asked for 4, 8, ... ranks, and for auto where
 * they outnumber this machine's cores (every rank runs here); direct otherwise. A ring of 4 likewise. */
static const char *plan_wanted(const run_cfg_t *cfg, int n)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int pow2 = n >= 4 && (n & (n - 1)) == 0;
    int halving = cfg->how == TBMCOLL_MESH_AR_HALVING || (cfg->how == TBMCOLL_MESH_AR_AUTO && n > cores);

    if (n == 1)
        return "copy";
    if (cfg->algo == TBMCOLL_ALGO_RING)
        return halving && n == 4 ? "halving" : "ring";
    return halving && pow2 ? "halving" : "direct";
}

/* What the mesh's small all-reduce must be for n ranks: through rank 0 when asked (3 ranks or more), and for
 * auto where the n ranks outnumber this machine's cores (every rank runs here); one round otherwise. */
static const char *small_wanted(const run_cfg_t *cfg, int n)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);

    if (n == 1)
        return "copy";
    if (cfg->algo == TBMCOLL_ALGO_RING)
        return n == 4 && (cfg->small == TBMCOLL_SMALL_AR_DOUBLING || (cfg->small == TBMCOLL_SMALL_AR_AUTO && n > cores))
                   ? "recursive doubling" : "both ways around";
    if (n >= 3 && (cfg->small == TBMCOLL_SMALL_AR_ROOTED || (cfg->small == TBMCOLL_SMALL_AR_AUTO && n > cores)))
        return "through rank 0";
    if (n >= 4 && (n & (n - 1)) == 0 && (cfg->small == TBMCOLL_SMALL_AR_DOUBLING ||
                                         (cfg->small == TBMCOLL_SMALL_AR_AUTO && n >= 8)))
        return "recursive doubling";
    return "one round";
}

static int rank_main(int rank, int n, const char *const *addrs, void *arg)
{
    const run_cfg_t *cfg = arg;
    tbmcoll_opts_t o = tr_opts(cfg->algo, 10000);
    ctx_t x = { .rank = rank, .n = n, .ring = cfg->algo == TBMCOLL_ALGO_RING };
    const char *plan = plan_wanted(cfg, n);
    int s, dt, bad = 0;

    o.streams = cfg->streams;
    o.sockbuf_bytes = cfg->sockbuf;
    o.segment_bytes = cfg->segment;
    o.mesh_allreduce = cfg->how;
    o.small_allreduce = cfg->small;
    o.recv_staging = 1;   /* on whatever the machine: the staged path is checked everywhere */
    x.c = tbmcoll_comm_from_addrs(rank, n, addrs, &o, &x.err);
    if (!x.c) {
        fprintf(stderr, "%s\n", x.err.msg);
        return 2;
    }
    bad |= TR_EXPECT(tbmcoll_rank(x.c) == rank && tbmcoll_size(x.c) == n, "rank/size");
    bad |= TR_EXPECT(tbmcoll_algo(x.c) == (x.ring ? TBMCOLL_ALGO_RING : TBMCOLL_ALGO_MESH), "algorithm");
    bad |= TR_EXPECT(strcmp(tbmcoll_allreduce_plan(x.c), plan) == 0, "all-reduce plan %s, want %s",
                     tbmcoll_allreduce_plan(x.c), plan);
    bad |= TR_EXPECT(strcmp(tbmcoll_small_plan(x.c), small_wanted(cfg, n)) == 0, "small all-reduce plan %s, want %s",
                     tbmcoll_small_plan(x.c), small_wanted(cfg, n));
    if (strcmp(plan, "halving") == 0)
        x.ring = x.ring ? 3 : 2;
    small_doubling = strcmp(small_wanted(cfg, n), "recursive doubling") == 0;
    for (s = 0; s < NSIZES && !bad; s++)
        for (dt = 0; dt < TBM_DT_COUNT && !bad; dt++)
            bad |= check_size(&x, sizes[s], (tbm_dtype_t)dt);
    bad = bad || check_repeatable(&x);
    bad = bad || check_alignments(&x);
    bad = bad || call_ok(&x, tbmcoll_barrier(x.c, &x.err), "barrier");
    tbmcoll_comm_free(x.c);
    return bad;
}

int main(void)
{
    /* the mesh with the streams per pair it chooses, with three (large transfers striped, whatever the
     * machine), with one, with socket buffers smaller than a few pieces of the pipelined all-reduce, and the
     * ring; the halving with 16 KiB pieces too, so that it cuts the vectors into many chunks of 128 KiB
     * (TBMCOLL_HALVING_CHUNK_PIECES), the last one longer; the small all-reduce in one round, through rank 0
     * and by recursive doubling whatever the machine (8 ranks: the last two) */
    static const run_cfg_t cfgs[NCFGS] = {
        { TBMCOLL_ALGO_MESH, 0, 0, TBMCOLL_MESH_AR_AUTO, 0, TBMCOLL_SMALL_AR_AUTO },
        { TBMCOLL_ALGO_MESH, 3, 0, TBMCOLL_MESH_AR_DIRECT, 0, TBMCOLL_SMALL_AR_ONEROUND },
        { TBMCOLL_ALGO_MESH, 1, 0, TBMCOLL_MESH_AR_DIRECT, 0, TBMCOLL_SMALL_AR_ROOTED },
        { TBMCOLL_ALGO_MESH, 3, 64 * 1024, TBMCOLL_MESH_AR_DIRECT, 0, TBMCOLL_SMALL_AR_AUTO },
        { TBMCOLL_ALGO_MESH, 3, 0, TBMCOLL_MESH_AR_HALVING, 0, TBMCOLL_SMALL_AR_DOUBLING },
        { TBMCOLL_ALGO_MESH, 1, 64 * 1024, TBMCOLL_MESH_AR_HALVING, 16 * 1024, TBMCOLL_SMALL_AR_ROOTED },
        { TBMCOLL_ALGO_RING, 0, 0, TBMCOLL_MESH_AR_AUTO, 0, TBMCOLL_SMALL_AR_AUTO },
        { TBMCOLL_ALGO_RING, 0, 0, TBMCOLL_MESH_AR_HALVING, 16 * 1024, TBMCOLL_SMALL_AR_ONEROUND },
    };
    tr_result_t res[TR_MAX];
    int n, a, k, failed = 0;
    const char *big = getenv("TBM_COLL_BIG");

    if (big && atol(big) > 1023)
        sizes[NSIZES - 1] = (size_t)atol(big);

    for (n = 1; n <= 8; n = n < 4 ? n + 1 : n * 2)
        for (a = 0; a < NCFGS; a++) {
            double t0 = tr_now();
            int rc;
            if (n == 8 && (cfgs[a].how != TBMCOLL_MESH_AR_HALVING || cfgs[a].algo == TBMCOLL_ALGO_RING))
                continue;   /* 8 ranks on a few cores: the halving's extra step only */
            rc = tr_run(n, rank_main, (void *)&cfgs[a], 120, NULL, -1, res);
            printf("%s%s%s%s%s%s%s %d rank(s): %s (%.2f s)\n", tbmcoll_algo_name(cfgs[a].algo),
                   cfgs[a].algo == TBMCOLL_ALGO_MESH || cfgs[a].how == TBMCOLL_MESH_AR_HALVING ? ", all-reduce " : "",
                   cfgs[a].algo == TBMCOLL_ALGO_MESH || cfgs[a].how == TBMCOLL_MESH_AR_HALVING
                       ? tbmcoll_mesh_ar_name(cfgs[a].how) : "",
                   cfgs[a].streams == 1 ? " (1 stream)" : "", cfgs[a].sockbuf ? " (64 KiB socket buffers)" : "",
                   cfgs[a].segment ? " (16 KiB pieces)" : "",
                   cfgs[a].small == TBMCOLL_SMALL_AR_ROOTED ? " (small through rank 0)"
                   : cfgs[a].small == TBMCOLL_SMALL_AR_ONEROUND ? " (small in one round)"
                   : cfgs[a].small == TBMCOLL_SMALL_AR_DOUBLING ? " (small by recursive doubling)" : "", n,
                   rc ? "FAIL" : "ok", tr_now() - t0);
            for (k = 0; rc && k < n; k++)
                printf("  rank %d exit %d: %s", k, res[k].status, res[k].err);
            failed |= rc;
        }
    return failed ? 1 : 0;
}
