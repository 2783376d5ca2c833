/* bench_main.c: `macnode bench` (the program macnode-bench, which macnode runs), libtbmcoll's benchmark in the
 * form of nccl-tests: a sweep of sizes (bench_sweep.c) or every cable alone (bench_p2p.c), over TCP (mesh or
 * ring, from MLX's environment or N local ranks) or over Open MPI for comparison. This file starts the
 * ranks. */
#include "config.h"
#include "bench.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One zeroed buffer of `bytes`: where calloc puts it (offset < 0), or `offset` bytes past a page boundary
 * (-O: the same place whatever the allocator, e.g. to see receives staged or not). *mem is what to free. */
static int bench_buffer(size_t bytes, int offset, unsigned char **mem, unsigned char **buf)
{
    *buf = NULL;
    if (offset < 0) {
        *mem = calloc(1, bytes);
        *buf = *mem;
        return *mem ? 0 : -1;
    }
    if (posix_memalign((void **)mem, 4096, bytes + (size_t)offset) != 0) {
        *mem = NULL;
        return -1;
    }
    memset(*mem, 0, bytes + (size_t)offset);
    *buf = *mem + offset;
    return 0;
}

static int run_rank(bench_t *b)
{
    size_t es = tbm_dtype_size(b->dt);

    b->rank = tbmcoll_rank(b->c);
    b->n = tbmcoll_size(b->c);
    if ((b->op == OP_SENDRECV || b->op == OP_P2P) && b->n < 2) {
        fprintf(stderr, "%s: %s needs at least 2 ranks\n", BENCH_PROG, bench_op_names[b->op]);
        return 2;
    }
    if (b->op == OP_BROADCAST && b->root >= b->n) {
        fprintf(stderr, "%s: root %d is not a rank (0 to %d)\n", BENCH_PROG, b->root, b->n - 1);
        return 2;
    }
    if (b->n > LOCAL_MAX_RANKS) {
        fprintf(stderr, "%s: %d ranks: at most %d\n", BENCH_PROG, b->n, LOCAL_MAX_RANKS);
        return 2;
    }
    /* room for a one-element answer after the largest message */
    if (bench_buffer(b->maxb + 2 * es, b->offset, &b->sendmem, &b->sendbuf) < 0 ||
        bench_buffer(b->maxb + 2 * es, b->offset, &b->recvmem, &b->recvbuf) < 0) {
        fprintf(stderr, "%s: out of memory for two buffers of %zu bytes\n", BENCH_PROG, b->maxb);
        return 2;
    }
    return b->op == OP_P2P ? bench_p2p(b) : bench_sweep(b);
}

/* -l N: N ranks on this host. */
static int local_rank(tbmcoll_comm_t *c, void *arg)
{
    bench_t *b = arg;
    int rc;

    b->c = c;
    rc = run_rank(b);
    tbmcoll_comm_free(b->c);
    free(b->sendmem);
    free(b->recvmem);
    return rc;
}

/* Whether MLX's environment names this rank (else the TCP transport has nothing to start from). */
static int in_mlx_env(void)
{
    static const char *const names[] = { "MLX_RANK", "JACCL_RANK" };
    size_t i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (getenv(names[i]) && *getenv(names[i]))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    bench_t b = { .op = OP_ALLREDUCE, .dt = TBM_DT_F32, .redop = TBM_OP_SUM, .minb = 8, .maxb = 64u << 20,
                  .factor = 2, .iters = 20, .warmup = 5, .lat_iters = 1000, .check = 1, .format = FMT_TABLE,
                  .offset = -1 };
    tbm_err_t err = { { 0 } };
    int rc;

    signal(SIGPIPE, SIG_IGN);
    rc = bench_parse_args(&b, argc, argv);
    if (rc != 0)
        return rc < 0 ? 2 : 0;
    /* p2p: the ranks off the cable being measured wait in a barrier all along; unless -t says otherwise, let
     * them wait long (a dead peer still fails them at once: its connections close) */
    if (b.op == OP_P2P && b.opts.io_timeout_ms == 0)
        b.opts.io_timeout_ms = 600000;
    if (b.local_ranks) {
        tbmcoll_local_cpus(b.local_ranks, &b.opts, b.cpu);
        return tbmcoll_run_local(b.local_ranks, &b.opts, local_rank, &b, BENCH_PROG);
    }
    if (!b.use_mpi && !in_mlx_env()) {
        fprintf(stderr, "%s: MLX_RANK is not set, so this is not a rank of a tbmesh job: run it under srun in a "
                "job with --gres=tbmesh:N (the plug-in sets MLX's environment), or give -l N to start N ranks "
                "on this host\n", BENCH_PROG);
        return 2;
    }
    b.c = b.use_mpi ? tbmcoll_comm_from_mpi(&argc, &argv, &err) : tbmcoll_comm_from_env(&b.opts, &err);
    if (!b.c) {
        fprintf(stderr, "%s: %s\n", BENCH_PROG, err.msg);
        return 2;
    }
    rc = run_rank(&b);
    tbmcoll_comm_free(b.c);
    free(b.sendmem);
    free(b.recvmem);
    return rc;
}
