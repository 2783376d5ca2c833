/* bench_main.c: `macnode bench` (the program macnode-bench, which macnode runs), libtbmcoll's benchmark in the
 * form of nccl-tests: a sweep of sizes (bench_sweep.c) or every cable alone (bench_p2p.c), over TCP (mesh or
 * ring, from MLX's environment or N local ranks) or over Open MPI for comparison, or both in turns. This file
 * starts the ranks. */
#include "config.h"
#include "bench.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One zeroed buffer of `bytes` (run_rank fills it): where calloc puts it (offset < 0), or `offset` bytes past a
 * page boundary (-O: the same place whatever the allocator, e.g. to see receives staged or not). *mem is what
 * to free. */
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
    b->speaker = b->rank == 0;
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
    /* values in both, as the check's: memory never written reads as the kernel's one zero page, always in
     * the caches, and an out-of-place operation that only reads its input would run faster than on data
     * (with the check off the input is never written otherwise: measured here, 2 ranks, 32-64 MiB out of
     * place, 5.8-6.2 GB/s against 4.9-5.2 on data) */
    bench_fill(b->dt, b->sendbuf, (b->maxb + 2 * es) / es, b->rank, 0);
    bench_fill(b->dt, b->recvbuf, (b->maxb + 2 * es) / es, b->rank, 0);
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

/* -T both outside a tbmesh job: beside Open MPI's ranks, libtbmcoll's TCP mesh between the same processes over
 * 127.0.0.1, so that the two can take turns at each size, as close in time as can be (a machine whose speed
 * swings from second to second then sways both alike). Every rank must be on this host and in this network
 * namespace (checked: each tells the others its host name and namespace); each picks a free port and tells
 * it through MPI. (In a tbmesh job the mesh comes from MLX's environment instead: run_both.) */
#define PLACE_WORDS (HOST_MAX / 4)
static tbmcoll_comm_t *tcp_beside_mpi(tbmcoll_comm_t *mpi, const tbmcoll_opts_t *opts, tbm_err_t *err)
{
    int n = tbmcoll_size(mpi), rank = tbmcoll_rank(mpi), r, fd, port = 0;
    int32_t mine[PLACE_WORDS + 1], *all = calloc((size_t)n, sizeof(mine));
    char addr[LOCAL_MAX_RANKS][32], ns[64] = "?";
    const char *addrs[LOCAL_MAX_RANKS];
    ssize_t k;
    tbmcoll_comm_t *tcp = NULL;

    memset(mine, 0, sizeof(mine));
    if (!all || n > LOCAL_MAX_RANKS) {
        tbm_errprintf(err, all ? "-T both: at most %d ranks" : "out of memory", LOCAL_MAX_RANKS);
        free(all);
        return NULL;
    }
    if ((k = readlink("/proc/self/ns/net", ns, sizeof(ns) - 1)) > 0)
        ns[k] = '\0';
    gethostname((char *)mine, HOST_MAX / 2 - 1);
    snprintf((char *)mine + HOST_MAX / 2, HOST_MAX / 2, "%s", ns);
    /* held open until every rank has told its port: no two ranks get the same */
    fd = tbmcoll_loopback_socket(&port);
    mine[PLACE_WORDS] = fd < 0 ? -errno : port;
    r = tbmcoll_allgather(mpi, mine, all, PLACE_WORDS + 1, TBM_DT_I32, err);
    if (fd >= 0)
        close(fd);
    if (r < 0)
        goto out;
    for (r = 0; r < n; r++) {
        const int32_t *theirs = all + (size_t)r * (PLACE_WORDS + 1);
        if (theirs[PLACE_WORDS] <= 0) {
            tbm_errprintf(err, "-T both: rank %d cannot find a free port on 127.0.0.1: %s", r,
                          strerror((int)-theirs[PLACE_WORDS]));
            goto out;
        }
        if (memcmp(theirs, all, HOST_MAX) != 0) {
            tbm_errprintf(err, "-T both runs every rank on one host, in one network namespace (over 127.0.0.1): "
                          "rank 0 is on %.31s (%.31s), rank %d on %.31s (%.31s); start them all on one host",
                          (const char *)all, (const char *)all + HOST_MAX / 2, r, (const char *)theirs,
                          (const char *)theirs + HOST_MAX / 2);
            goto out;
        }
        snprintf(addr[r], sizeof(addr[r]), "127.0.0.1:%d", (int)theirs[PLACE_WORDS]);
        addrs[r] = addr[r];
    }
    tcp = tbmcoll_comm_from_addrs(rank, n, addrs, opts, err);
out:
    free(all);
    return tcp;
}

static int run_both(bench_t *b, int *argc, char ***argv)
{
    tbm_err_t err = { { 0 } };
    int rc;

    b->turn[1] = tbmcoll_comm_from_mpi(argc, argv, &err);
    if (!b->turn[1]) {
        fprintf(stderr, "%s: %s\n", BENCH_PROG, err.msg);
        return 2;
    }
    /* in a tbmesh job, the mesh MLX's environment describes; else one over 127.0.0.1 */
    b->turn[0] = in_mlx_env() ? tbmcoll_comm_from_env(&b->opts, &err) : tcp_beside_mpi(b->turn[1], &b->opts, &err);
    if (b->turn[0] && tbmcoll_size(b->turn[0]) != tbmcoll_size(b->turn[1])) {
        tbm_errprintf(&err, "-T both: MLX's environment names %d ranks and MPI started %d: start one MPI rank per "
                      "rank of the job", tbmcoll_size(b->turn[0]), tbmcoll_size(b->turn[1]));
        tbmcoll_comm_free(b->turn[0]);
        b->turn[0] = NULL;
    }
    if (!b->turn[0]) {
        fprintf(stderr, "%s: %s\n", BENCH_PROG, err.msg);
        tbmcoll_comm_free(b->turn[1]);
        return 2;
    }
    if (!b->turns)
        b->turns = 3;
    b->c = b->turn[0];
    rc = run_rank(b);
    tbmcoll_comm_free(b->turn[0]);
    tbmcoll_comm_free(b->turn[1]);
    free(b->sendmem);
    free(b->recvmem);
    return rc;
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
    if (b.use_mpi == TRANSPORT_BOTH)
        return run_both(&b, &argc, &argv);
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
