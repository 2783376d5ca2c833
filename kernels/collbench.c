/* collbench.c: tbm-collbench, libtbmcoll's benchmark in the form of nccl-tests: a sweep of sizes, in place
 * and out of place, time as the maximum over ranks, algbw and busbw, and a check counting wrong values;
 * over TCP (mesh or ring, from MLX's environment or N local ranks) or over Open MPI for comparison. */
#include "tbmcoll.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef enum bench_op { OP_ALLREDUCE, OP_ALLGATHER, OP_REDUCESCATTER, OP_BROADCAST, OP_SENDRECV, OP_COUNT } bench_op_t;
static const char *const op_names[OP_COUNT] = { "allreduce", "allgather", "reducescatter", "broadcast", "sendrecv" };

enum { FMT_TABLE, FMT_CSV, FMT_JSON };
#define LOCAL_MAX 16

typedef struct bench {
    int use_mpi;
    int local_ranks;             /* -l N: fork N ranks on 127.0.0.1; 0: MLX's environment (or MPI) */
    tbmcoll_opts_t opts;
    bench_op_t op;
    tbm_dtype_t dt;
    tbm_redop_t redop;
    int root;
    size_t minb, maxb;
    unsigned factor;
    int iters, warmup, check, format;
    tbmcoll_comm_t *c;
    int rank, n;
    unsigned char *sendbuf, *recvbuf;
    double busbw_sum;
    int busbw_count;
    long wrong_total;
} bench_t;

/* One measured placement. */
typedef struct result {
    int ran;
    double us, algbw, busbw;
    long wrong;
} result_t;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: tbm-collbench [options]\n"
               "  -T tcp|mpi        transport (tcp; mpi needs mpirun)\n"
               "  -A auto|mesh|ring TCP algorithm (auto)\n"
               "  -l N              start N ranks on this host (127.0.0.1); default: MLX's environment\n"
               "  -o OP             allreduce, allgather, reducescatter, broadcast or sendrecv (allreduce);\n"
               "                    sendrecv: every rank sends to rank+1 while receiving from rank-1\n"
               "  -d TYPE           f32, f16, bf16 or i32 (f32)\n"
               "  -r OP             sum or max (sum)\n"
               "  -R RANK           broadcast root (0)\n"
               "  -b SIZE -e SIZE   smallest and largest size in bytes, K/M/G suffixes (8, 64M)\n"
               "  -f FACTOR         size multiplier between steps (2)\n"
               "  -n N -w N         timed iterations (20) and warm-up iterations (5) per size\n"
               "  -c 0|1            check the results and count wrong values (1)\n"
               "  -F table|csv|json output format (table)\n"
               "  -t MS             I/O timeout of the TCP transport (30000)\n"
               "  -s US             TCP: keep polling this long before sleeping (0; try 50 with a core per rank)\n");
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    switch (*end) {
    case 'G': case 'g': v <<= 10; /* fall through */
    case 'M': case 'm': v <<= 10; /* fall through */
    case 'K': case 'k': v <<= 10; end++; break;
    default: break;
    }
    if (*end || v == 0 || v > (1ull << 34))
        return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_name(const char *s, const char *const *names, int n, int *out)
{
    int i;

    for (i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

static int parse_args(bench_t *b, int argc, char **argv)
{
    static const char *const transports[] = { "tcp", "mpi" }, *const formats[] = { "table", "csv", "json" };
    tbm_err_t err = { { 0 } };
    int opt, v, bad = 0, tmo = 0;

    while ((opt = getopt(argc, argv, "T:A:l:o:d:r:R:b:e:f:n:w:c:F:t:s:h")) != -1 && !bad) {
        switch (opt) {
        case 'T': bad = parse_name(optarg, transports, 2, &b->use_mpi); break;
        case 'A': bad = tbmcoll_algo_parse(optarg, &b->opts.algo, &err); break;
        case 'l': bad = parse_int(optarg, 1, LOCAL_MAX, &b->local_ranks); break;
        case 'o': bad = parse_name(optarg, op_names, OP_COUNT, &v); b->op = (bench_op_t)v; break;
        case 'd': bad = tbm_dtype_parse(optarg, &b->dt, &err); break;
        case 'r': bad = tbm_redop_parse(optarg, &b->redop, &err); break;
        case 'R': bad = parse_int(optarg, 0, 1 << 20, &b->root); break;
        case 'b': bad = parse_size(optarg, &b->minb); break;
        case 'e': bad = parse_size(optarg, &b->maxb); break;
        case 'f': bad = parse_int(optarg, 2, 1 << 20, &v); b->factor = (unsigned)v; break;
        case 'n': bad = parse_int(optarg, 1, 1 << 24, &b->iters); break;
        case 'w': bad = parse_int(optarg, 0, 1 << 24, &b->warmup); break;
        case 'c': bad = parse_int(optarg, 0, 1, &b->check); break;
        case 'F': bad = parse_name(optarg, formats, 3, &b->format); break;
        case 't': bad = parse_int(optarg, 1, 1 << 30, &tmo); b->opts.io_timeout_ms = tmo; break;
        case 's': bad = parse_int(optarg, 0, 1000000, &b->opts.spin_us); break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
        if (bad) {
            fprintf(stderr, "tbm-collbench: bad value '%s' for -%c%s%s\n", optarg, opt, err.msg[0] ? ": " : "",
                    err.msg);
            usage(stderr);
            return -1;
        }
    }
    if (optind < argc || b->minb > b->maxb || (b->use_mpi && b->local_ranks)) {
        fprintf(stderr, "tbm-collbench: %s\n", optind < argc ? "unexpected argument" : b->minb > b->maxb ?
                "-b must not exceed -e" : "-l starts TCP ranks; start MPI ranks with mpirun");
        usage(stderr);
        return -1;
    }
    return 0;
}

/* ---- element values for the check: small integers, exact in every type, sums too ---- */

static int value_of(int rank, size_t i)
{
    return (int)(((size_t)rank * 3 + i * 7) % 5) - 2;
}

static void put(tbm_dtype_t dt, unsigned char *p, size_t i, int v)
{
    size_t es = tbm_dtype_size(dt);
    float f = (float)v;
    uint16_t h = dt == TBM_DT_F16 ? tbm_f32_to_f16(f) : tbm_f32_to_bf16(f);
    int32_t iv = v;

    memcpy(p + i * es, dt == TBM_DT_F32 ? (void *)&f : dt == TBM_DT_I32 ? (void *)&iv : (void *)&h, es);
}

static double get(tbm_dtype_t dt, const unsigned char *p, size_t i)
{
    float f;
    int32_t iv;
    uint16_t h;

    switch (dt) {
    case TBM_DT_F32: memcpy(&f, p + i * 4, 4); return f;
    case TBM_DT_I32: memcpy(&iv, p + i * 4, 4); return iv;
    case TBM_DT_F16: memcpy(&h, p + i * 2, 2); return tbm_f16_to_f32(h);
    case TBM_DT_BF16: memcpy(&h, p + i * 2, 2); return tbm_bf16_to_f32(h);
    }
    return 0;
}

static void fill(tbm_dtype_t dt, unsigned char *p, size_t count, int rank, size_t first)
{
    size_t i;

    for (i = 0; i < count; i++)
        put(dt, p, i, value_of(rank, first + i));
}

static int reduced(const bench_t *b, size_t i)
{
    int k, acc = value_of(0, i);

    for (k = 1; k < b->n; k++)
        acc = b->redop == TBM_OP_SUM ? acc + value_of(k, i) : (value_of(k, i) > acc ? value_of(k, i) : acc);
    return acc;
}

/* ---- one size ---- */

typedef struct shape {
    size_t count;      /* elements in the size (allgather / reducescatter: per * n) */
    size_t per;        /* elements per rank block (allgather / reducescatter) */
    size_t bytes;      /* bytes of the size */
} shape_t;

static shape_t shape_of(const bench_t *b, size_t bytes)
{
    size_t es = tbm_dtype_size(b->dt);
    shape_t s = { 0, 0, 0 };

    if (b->op == OP_ALLGATHER || b->op == OP_REDUCESCATTER) {
        s.per = bytes / es / (size_t)b->n;
        s.count = s.per * (size_t)b->n;
    } else {
        s.count = bytes / es;
    }
    s.bytes = s.count * es;
    return s;
}

/* Run the operation once in the given placement. */
static int run_once(bench_t *b, const shape_t *s, int in_place, tbm_err_t *err)
{
    size_t es = tbm_dtype_size(b->dt), mine = (size_t)b->rank * s->per * es;

    switch (b->op) {
    case OP_ALLREDUCE:
        return tbmcoll_allreduce(b->c, in_place ? b->recvbuf : b->sendbuf, b->recvbuf, s->count, b->dt, b->redop,
                                 err);
    case OP_ALLGATHER:
        return tbmcoll_allgather(b->c, in_place ? b->recvbuf + mine : b->sendbuf, b->recvbuf, s->per, b->dt, err);
    case OP_REDUCESCATTER:
        return tbmcoll_reduce_scatter(b->c, b->sendbuf, in_place ? b->sendbuf + mine : b->recvbuf, s->per, b->dt,
                                      b->redop, err);
    case OP_BROADCAST:
        return tbmcoll_broadcast(b->c, b->recvbuf, s->count, b->dt, b->root, err);
    default:
        return tbmcoll_sendrecv(b->c, b->sendbuf, (b->rank + 1) % b->n, b->recvbuf, (b->rank + b->n - 1) % b->n,
                                s->count, b->dt, err);
    }
}

/* Fill the inputs, run once, count the elements that differ from the expected values. */
static long check_once(bench_t *b, const shape_t *s, int in_place, tbm_err_t *err)
{
    size_t es = tbm_dtype_size(b->dt), i, n = s->count, mine = (size_t)b->rank * s->per * es;
    const unsigned char *out = b->recvbuf;
    long wrong = 0;

    if (b->op == OP_ALLGATHER)
        fill(b->dt, in_place ? b->recvbuf + mine : b->sendbuf, s->per, b->rank, 0);
    else if (b->op == OP_REDUCESCATTER || !in_place)
        fill(b->dt, b->sendbuf, s->count, b->rank, 0);
    else
        fill(b->dt, b->recvbuf, s->count, b->rank, 0);
    if (b->op == OP_BROADCAST)
        fill(b->dt, b->recvbuf, s->count, b->rank, 0);
    if (run_once(b, s, in_place, err) < 0)
        return -1;
    if (b->op == OP_REDUCESCATTER) {
        out = in_place ? b->sendbuf + mine : b->recvbuf;
        n = s->per;
    }
    for (i = 0; i < n; i++) {
        int want = b->op == OP_ALLREDUCE ? reduced(b, i)
                   : b->op == OP_ALLGATHER ? value_of((int)(i / s->per), i % s->per)
                   : b->op == OP_REDUCESCATTER ? reduced(b, (size_t)b->rank * s->per + i)
                   : b->op == OP_BROADCAST ? value_of(b->root, i)
                   : value_of((b->rank + b->n - 1) % b->n, i);
        wrong += get(b->dt, out, i) != (double)want;
    }
    return wrong;
}

static double busbw_factor(const bench_t *b)
{
    double n = b->n;

    switch (b->op) {
    case OP_ALLREDUCE: return 2 * (n - 1) / n;
    case OP_ALLGATHER:
    case OP_REDUCESCATTER: return (n - 1) / n;
    default: return 1;
    }
}

static int measure(bench_t *b, const shape_t *s, int in_place, result_t *r, tbm_err_t *err)
{
    float us, maxus;
    int32_t wrong32, all;
    double t0;
    int i;

    for (i = 0; i < b->warmup; i++)
        if (run_once(b, s, in_place, err) < 0)
            return -1;
    if (tbmcoll_barrier(b->c, err) < 0)
        return -1;
    t0 = now_s();
    for (i = 0; i < b->iters; i++)
        if (run_once(b, s, in_place, err) < 0)
            return -1;
    us = (float)((now_s() - t0) * 1e6 / b->iters);
    if (tbmcoll_allreduce(b->c, &us, &maxus, 1, TBM_DT_F32, TBM_OP_MAX, err) < 0)
        return -1;
    r->wrong = 0;
    if (b->check) {
        long w = check_once(b, s, in_place, err);
        if (w < 0)
            return -1;
        wrong32 = (int32_t)(w > INT32_MAX ? INT32_MAX : w);
        if (tbmcoll_allreduce(b->c, &wrong32, &all, 1, TBM_DT_I32, TBM_OP_SUM, err) < 0)
            return -1;
        r->wrong = all;
    }
    r->ran = 1;
    r->us = maxus;
    r->algbw = (double)s->bytes / (maxus * 1e-6) / 1e9;
    r->busbw = r->algbw * busbw_factor(b);
    return 0;
}

/* ---- output ---- */

static const char *transport_name(const bench_t *b)
{
    return b->use_mpi ? "mpi" : tbmcoll_algo_name(tbmcoll_algo(b->c));
}

static void print_header(const bench_t *b)
{
    if (b->format == FMT_CSV) {
        printf("op,transport,ranks,size_bytes,count,type,redop,root,placement,time_us,algbw_gbs,busbw_gbs,wrong\n");
    } else if (b->format == FMT_JSON) {
        printf("{\"op\": \"%s\", \"transport\": \"%s\", \"ranks\": %d, \"type\": \"%s\", \"redop\": \"%s\", "
               "\"iterations\": %d, \"warmup\": %d, \"check\": %s, \"results\": [", op_names[b->op],
               transport_name(b), b->n, tbm_dtype_name(b->dt), tbm_redop_name(b->redop), b->iters, b->warmup,
               b->check ? "true" : "false");
    } else {
        printf("# tbm-collbench: %s, %d ranks, transport %s, %s %s, %d iterations, %d warm-up, check %s\n"
               "#\n#%58s%-39s%s\n", op_names[b->op], b->n, transport_name(b), tbm_dtype_name(b->dt),
               tbm_redop_name(b->redop), b->iters, b->warmup, b->check ? "on" : "off", "", "out-of-place",
               "in-place");
        printf("# %12s %12s %6s %6s %5s %10s %8s %8s %7s %10s %8s %8s %7s\n", "size", "count", "type", "redop",
               "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
        printf("# %12s %12s %6s %6s %5s %10s %8s %8s %7s %10s %8s %8s %7s\n", "(B)", "(elements)", "", "", "",
               "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
    }
}

static void print_result(bench_t *b, const shape_t *s, const result_t *r, int in_place, int *first_json)
{
    const char *place = in_place ? "in-place" : "out-of-place";

    if (!r->ran) {
        if (b->format == FMT_TABLE)
            printf(" %10s %8s %8s %7s", "-", "-", "-", "-");
        return;
    }
    b->busbw_sum += r->busbw;
    b->busbw_count++;
    b->wrong_total += r->wrong;
    if (b->format == FMT_TABLE)
        printf(" %10.1f %8.3f %8.3f %7ld", r->us, r->algbw, r->busbw, r->wrong);
    else if (b->format == FMT_CSV)
        printf("%s,%s,%d,%zu,%zu,%s,%s,%d,%s,%.2f,%.4f,%.4f,%ld\n", op_names[b->op], transport_name(b), b->n,
               s->bytes, s->count, tbm_dtype_name(b->dt), tbm_redop_name(b->redop), b->root, place, r->us,
               r->algbw, r->busbw, r->wrong);
    else
        printf("%s\n  {\"size_bytes\": %zu, \"count\": %zu, \"placement\": \"%s\", \"time_us\": %.2f, "
               "\"algbw_gbs\": %.4f, \"busbw_gbs\": %.4f, \"wrong\": %ld}", *first_json ? "" : ",", s->bytes,
               s->count, place, r->us, r->algbw, r->busbw, r->wrong), *first_json = 0;
}

static void print_footer(const bench_t *b)
{
    double avg = b->busbw_count ? b->busbw_sum / b->busbw_count : 0;

    if (b->format == FMT_JSON)
        printf("\n], \"wrong_total\": %ld, \"avg_busbw_gbs\": %.4f}\n", b->wrong_total, avg);
    else if (b->format == FMT_TABLE)
        printf("# Wrong values       : %ld %s\n# Avg bus bandwidth  : %.4f GB/s\n#\n", b->wrong_total,
               b->wrong_total ? "FAILED" : "OK", avg);
}

/* Broadcast has one buffer (in place only); sendrecv two (out of place only). */
static int placement_applies(const bench_t *b, int in_place)
{
    return b->op == OP_BROADCAST ? in_place : b->op == OP_SENDRECV ? !in_place : 1;
}

static int sweep(bench_t *b)
{
    tbm_err_t err = { { 0 } };
    size_t bytes;
    int place, first_json = 1;

    if (b->rank == 0)
        print_header(b);
    for (bytes = b->minb; bytes <= b->maxb; bytes *= b->factor) {
        shape_t s = shape_of(b, bytes);
        result_t r[2] = { { 0 }, { 0 } };
        if (s.count == 0)
            continue;
        for (place = 0; place < 2; place++)
            if (placement_applies(b, place) && measure(b, &s, place, &r[place], &err) < 0) {
                fprintf(stderr, "tbm-collbench: %s\n", err.msg);
                return 1;
            }
        if (b->rank != 0)
            continue;
        if (b->format == FMT_TABLE) {
            char root[16] = "-";
            if (b->op == OP_BROADCAST)
                snprintf(root, sizeof(root), "%d", b->root);
            printf("  %12zu %12zu %6s %6s %5s", s.bytes, s.count, tbm_dtype_name(b->dt),
                   b->op == OP_ALLREDUCE || b->op == OP_REDUCESCATTER ? tbm_redop_name(b->redop) : "-", root);
        }
        for (place = 0; place < 2; place++)
            print_result(b, &s, &r[place], place, &first_json);
        if (b->format == FMT_TABLE)
            printf("\n");
        fflush(stdout);
    }
    if (b->rank == 0)
        print_footer(b);
    return b->wrong_total ? 1 : 0;
}

static int run_rank(bench_t *b)
{
    size_t es = tbm_dtype_size(b->dt);

    b->rank = tbmcoll_rank(b->c);
    b->n = tbmcoll_size(b->c);
    if (b->op == OP_SENDRECV && b->n < 2) {
        fprintf(stderr, "tbm-collbench: sendrecv needs at least 2 ranks\n");
        return 2;
    }
    if (b->op == OP_BROADCAST && b->root >= b->n) {
        fprintf(stderr, "tbm-collbench: root %d is not a rank (0 to %d)\n", b->root, b->n - 1);
        return 2;
    }
    b->sendbuf = calloc(1, b->maxb + es);
    b->recvbuf = calloc(1, b->maxb + es);
    if (!b->sendbuf || !b->recvbuf) {
        fprintf(stderr, "tbm-collbench: out of memory for two buffers of %zu bytes\n", b->maxb);
        return 2;
    }
    return sweep(b);
}

/* -l N: N ranks on this host. */
static int local_rank(tbmcoll_comm_t *c, void *arg)
{
    bench_t *b = arg;

    b->c = c;
    return run_rank(b);
}

int main(int argc, char **argv)
{
    bench_t b = { .op = OP_ALLREDUCE, .dt = TBM_DT_F32, .redop = TBM_OP_SUM, .minb = 8, .maxb = 64u << 20,
                  .factor = 2, .iters = 20, .warmup = 5, .check = 1, .format = FMT_TABLE };
    tbm_err_t err = { { 0 } };
    int rc;

    signal(SIGPIPE, SIG_IGN);
    if (parse_args(&b, argc, argv) < 0)
        return 2;
    if (b.local_ranks)
        return tbmcoll_run_local(b.local_ranks, &b.opts, local_rank, &b, "tbm-collbench");
    b.c = b.use_mpi ? tbmcoll_comm_from_mpi(&argc, &argv, &err) : tbmcoll_comm_from_env(&b.opts, &err);
    if (!b.c) {
        fprintf(stderr, "tbm-collbench: %s\n", err.msg);
        return 2;
    }
    rc = run_rank(&b);
    tbmcoll_comm_free(b.c);
    free(b.sendbuf);
    free(b.recvbuf);
    return rc;
}
