/* bench.c: `macnode bench` (the program macnode-bench, which macnode runs), libtbmcoll's benchmark in the
 * form of nccl-tests: a sweep of sizes, in place and out of place, time as the maximum over ranks, algbw and
 * busbw, and a check counting wrong values; or, with -o p2p, bandwidth and latency of every cable, one at a
 * time. Over TCP (mesh or ring, from MLX's environment or N local ranks) or over Open MPI for comparison. */
#include "config.h"
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

typedef enum bench_op { OP_ALLREDUCE, OP_ALLGATHER, OP_REDUCESCATTER, OP_BROADCAST, OP_SENDRECV, OP_P2P,
                        OP_COUNT } bench_op_t;
static const char *const op_names[OP_COUNT] = { "allreduce", "allgather", "reducescatter", "broadcast", "sendrecv",
                                                "p2p" };
static const char *prog = "macnode bench";

enum { FMT_TABLE, FMT_CSV, FMT_JSON };
enum { PROGRESS_AUTO, PROGRESS_ON, PROGRESS_OFF };
#define LOCAL_MAX 16         /* -l: ranks on one host */
#define LOCAL_MAX_RANKS 64   /* ranks of a communicator (tbmcoll.h) */
#define HOST_MAX 64
#define TBM_STR2(x) #x
#define TBM_STR(x) TBM_STR2(x)

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
    int lat_iters;               /* -L: ping-pong round trips per cable (p2p) */
    int progress;                /* --progress auto|on|off */
    tbmcoll_comm_t *c;
    int rank, n;
    unsigned char *sendbuf, *recvbuf;
    double busbw_sum;
    int busbw_count;
    long wrong_total;
    /* progress (rank 0): work done and to do, in bytes moved per rank */
    double work_total, work_done, t_start, t_said;
    int said, tty;
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
    fprintf(f, "usage: macnode bench [options]\n"
               "  Measure the mesh with exactly the environment MLX reads (run it under srun in a --gres=tbmesh\n"
               "  job), with -l N ranks on this host, or under mpirun with -T mpi. nccl-tests' conventions.\n"
               "  -T, --transport tcp|mpi       transport (tcp; mpi: start the ranks with mpirun)\n"
               "  -A, --algo auto|mesh|ring     TCP algorithm (auto: what the environment describes)\n"
               "  -l, --local N                 start N ranks on this host (127.0.0.1), 1 to %d\n"
               "  -o, --op OP                   allreduce, allgather, reducescatter, broadcast, sendrecv or p2p\n"
               "                                (allreduce). sendrecv: every rank sends to rank+1 while receiving\n"
               "                                from rank-1. p2p: every cable (pair of connected ranks) alone in\n"
               "                                turn: bandwidth each way and both ways at once at -e bytes, and\n"
               "                                latency (half a round trip) at -b bytes\n"
               "  -d, --datatype TYPE           f32, f16, bf16 or i32 (f32)\n"
               "  -r, --redop OP                sum or max (sum)\n"
               "  -R, --root RANK               broadcast root (0)\n"
               "  -b, --minbytes SIZE           smallest size in bytes, K/M/G suffixes (8)\n"
               "  -e, --maxbytes SIZE           largest size (64M)\n"
               "  -f, --stepfactor N            size multiplier between steps (2)\n"
               "  -n, --iters N                 timed iterations per size (20)\n"
               "  -w, --warmup_iters N          warm-up iterations per size (5)\n"
               "  -L, --lat_iters N             p2p: round trips timed for the latency (1000)\n"
               "  -c, --check 0|1               check every result and count wrong values (1)\n"
               "  -F, --format table|csv|json   output format (table)\n"
               "  -t, --timeout MS              TCP: longest wait without progress before failing (30000;\n"
               "                                p2p: 600000, as the ranks off the cable measured wait)\n"
               "  -s, --spin US                 TCP: keep trying (and yielding) this long before sleeping in\n"
               "                                poll (%d; 0: sleep at once)\n"
               "  -S, --streams N               TCP mesh: connections per pair of ranks, 1 to 4 (%d); large\n"
               "                                transfers are split across them; every rank must give the same\n"
               "  -B, --sockbuf SIZE            TCP: socket buffers asked for (4M; 0: the kernel's own, tuned)\n"
               "      --progress auto|on|off    progress on stderr (auto: of long runs, on a terminal, and every\n"
               "                                10 s otherwise once a run has taken 10 s; on: every step)\n"
               "  Exit: 0 all values right, 1 a value was wrong, 2 bad usage or set-up, 3 a rank failed.\n",
            LOCAL_MAX, TBMCOLL_SPIN_US_DEFAULT, TBMCOLL_STREAMS_DEFAULT);
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

/* "-o/--op" for the option whose short name is c. */
static const char *opt_name(const struct option *o, int c)
{
    static char buf[48];

    for (; o->name; o++)
        if (o->val == c) {
            if (c == 'P')
                snprintf(buf, sizeof(buf), "--%s", o->name);
            else
                snprintf(buf, sizeof(buf), "-%c/--%s", c, o->name);
            return buf;
        }
    snprintf(buf, sizeof(buf), "-%c", c);
    return buf;
}

static int parse_args(bench_t *b, int argc, char **argv)
{
    static const char *const transports[] = { "tcp", "mpi" }, *const formats[] = { "table", "csv", "json" },
                             *const progress[] = { "auto", "on", "off" };
    static const struct option longopts[] = {
        { "transport", required_argument, NULL, 'T' },  { "algo", required_argument, NULL, 'A' },
        { "local", required_argument, NULL, 'l' },      { "op", required_argument, NULL, 'o' },
        { "datatype", required_argument, NULL, 'd' },   { "redop", required_argument, NULL, 'r' },
        { "root", required_argument, NULL, 'R' },       { "minbytes", required_argument, NULL, 'b' },
        { "maxbytes", required_argument, NULL, 'e' },   { "stepfactor", required_argument, NULL, 'f' },
        { "iters", required_argument, NULL, 'n' },      { "warmup_iters", required_argument, NULL, 'w' },
        { "lat_iters", required_argument, NULL, 'L' },  { "check", required_argument, NULL, 'c' },
        { "format", required_argument, NULL, 'F' },     { "timeout", required_argument, NULL, 't' },
        { "spin", required_argument, NULL, 's' },       { "progress", required_argument, NULL, 'P' },
        { "streams", required_argument, NULL, 'S' },    { "sockbuf", required_argument, NULL, 'B' },
        { "help", no_argument, NULL, 'h' },             { NULL, 0, NULL, 0 },
    };
    tbm_err_t err = { { 0 } };
    int opt, v, bad = 0, tmo = 0;
    const char *what;

    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":T:A:l:o:d:r:R:b:e:f:n:w:L:c:F:t:s:S:B:h", longopts, NULL)) != -1) {
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
        case 'L': bad = parse_int(optarg, 1, 1 << 24, &b->lat_iters); break;
        case 'c': bad = parse_int(optarg, 0, 1, &b->check); break;
        case 'F': bad = parse_name(optarg, formats, 3, &b->format); break;
        case 't': bad = parse_int(optarg, 1, 1 << 30, &tmo); b->opts.io_timeout_ms = tmo; break;
        case 's':
            bad = parse_int(optarg, 0, 1000000, &b->opts.spin_us);
            if (!bad && b->opts.spin_us == 0)
                b->opts.spin_us = -1;   /* 0 here means no spin */
            break;
        case 'P': bad = parse_name(optarg, progress, 3, &b->progress); break;
        case 'S': bad = parse_int(optarg, 1, 4, &b->opts.streams); break;
        case 'B':
            if (strcmp(optarg, "0") == 0) {
                b->opts.sockbuf_bytes = -1;
            } else {
                size_t sz = 0;
                bad = parse_size(optarg, &sz) || sz > (1u << 30);
                b->opts.sockbuf_bytes = (int)sz;
            }
            break;
        case 'h': usage(stdout); exit(0);
        case ':':
            fprintf(stderr, "%s: option %s needs a value; see --help\n", prog,
                    optopt ? opt_name(longopts, optopt) : argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "%s: unknown option '%s'; see --help\n", prog, argv[optind - 1]);
            return -1;
        }
        if (bad) {
            what = opt == 'l' ? " (give 1 to " TBM_STR(LOCAL_MAX) " ranks)"
                   : opt == 'b' || opt == 'e' ? " (a size in bytes from 1 to 16G, with K, M or G)"
                   : opt == 'o' ? " (give allreduce, allgather, reducescatter, broadcast, sendrecv or p2p)"
                   : opt == 'T' ? " (give tcp or mpi)" : opt == 'F' ? " (give table, csv or json)"
                   : opt == 'P' ? " (give auto, on or off)" : opt == 'c' ? " (give 0 or 1)"
                   : opt == 'S' ? " (give 1 to 4)" : "";
            fprintf(stderr, "%s: bad value '%s' for %s%s%s%s; see --help\n", prog, optarg, opt_name(longopts, opt),
                    err.msg[0] ? ": " : "", err.msg, what);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'; see --help\n", prog, argv[optind]);
        return -1;
    }
    if (b->minb > b->maxb) {
        fprintf(stderr, "%s: -b must not exceed -e (%zu > %zu bytes)\n", prog, b->minb, b->maxb);
        return -1;
    }
    if (b->use_mpi && b->local_ranks) {
        fprintf(stderr, "%s: -l starts TCP ranks; start MPI ranks with mpirun -np N ... -T mpi\n", prog);
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
        printf("# macnode bench: %s, %d ranks, transport %s, %s %s, %d iterations, %d warm-up, check %s\n"
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

/* ---- progress (rank 0, stderr) ---- */

static void progress_start(bench_t *b, double work_total)
{
    b->work_total = work_total;
    b->work_done = 0;
    b->t_start = b->t_said = now_s();
    b->said = 0;
    b->tty = isatty(STDERR_FILENO);
}

/* After each step. auto: on a terminal, one line kept up to date once the run has taken 2 s; elsewhere
 * (srun's output file) a line every 10 s once it has taken 10 s. on: a line after every step. The estimate
 * assumes time grows with bytes. */
static void progress_step(bench_t *b, double work, const char *what)
{
    double t = now_s(), elapsed = t - b->t_start, left, every = b->tty ? 1 : 10;

    b->work_done += work;
    if (b->rank != 0 || b->progress == PROGRESS_OFF)
        return;
    if (b->progress == PROGRESS_AUTO && (elapsed < (b->tty ? 2 : every) || t - b->t_said < every ||
                                         b->work_done >= b->work_total))
        return;
    left = b->work_done > 0 ? elapsed * (b->work_total - b->work_done) / b->work_done : 0;
    fprintf(stderr, "%s%s: %s done, %.0f%% of the work, %.0f s so far, about %.0f s left%s", b->tty ? "\r" : "",
            prog, what, 100 * b->work_done / b->work_total, elapsed, left, b->tty ? "\033[K" : "\n");
    fflush(stderr);
    b->t_said = t;
    b->said = 1;
}

static void progress_end(bench_t *b)
{
    if (b->rank == 0 && b->said && b->tty)
        fprintf(stderr, "\r\033[K");
}

static int sweep(bench_t *b)
{
    tbm_err_t err = { { 0 } };
    size_t bytes;
    int place, first_json = 1, k = 0, steps = 0;
    double total = 0;
    char what[64];

    for (bytes = b->minb; bytes <= b->maxb; bytes *= b->factor) {
        shape_t s = shape_of(b, bytes);
        total += (double)s.bytes * (b->iters + b->warmup + b->check) + 4096;
        steps++;
        if (bytes > b->maxb / b->factor)
            break;
    }
    progress_start(b, total);
    if (b->rank == 0)
        print_header(b);
    for (bytes = b->minb; bytes <= b->maxb; bytes *= b->factor) {
        shape_t s = shape_of(b, bytes);
        result_t r[2] = { { 0 }, { 0 } };
        k++;
        if (s.count != 0) {
            for (place = 0; place < 2; place++)
                if (placement_applies(b, place) && measure(b, &s, place, &r[place], &err) < 0) {
                    progress_end(b);
                    fprintf(stderr, "%s: %s\n", prog, err.msg);
                    return 3;
                }
            if (b->rank == 0) {
                if (b->format == FMT_TABLE) {
                    char root[16] = "-";
                    if (b->op == OP_BROADCAST)
                        snprintf(root, sizeof(root), "%d", b->root);
                    printf("  %12zu %12zu %6s %6s %5s", s.bytes, s.count, tbm_dtype_name(b->dt),
                           b->op == OP_ALLREDUCE || b->op == OP_REDUCESCATTER ? tbm_redop_name(b->redop) : "-",
                           root);
                }
                for (place = 0; place < 2; place++)
                    print_result(b, &s, &r[place], place, &first_json);
                if (b->format == FMT_TABLE)
                    printf("\n");
                fflush(stdout);
            }
        }
        snprintf(what, sizeof(what), "%d of %d sizes", k, steps);
        progress_step(b, (double)s.bytes * (b->iters + b->warmup + b->check) + 4096, what);
        if (bytes > b->maxb / b->factor)   /* the next step would pass -e (or overflow) */
            break;
    }
    progress_end(b);
    if (b->rank == 0)
        print_footer(b);
    return b->wrong_total ? 1 : 0;
}

/* ---- p2p: every cable alone in turn ---- */

/* What each rank tells the others about itself: its host and, per peer, whether they are connected and the
 * interface its end leaves by. Whole 32-bit words, to travel as TBM_DT_I32. */
typedef struct rank_card {
    char host[HOST_MAX];
    struct {
        char ifname[16];
        int32_t connected;
    } peer[LOCAL_MAX_RANKS];
} rank_card_t;

/* Per cable, summed over ranks (each field is written by one rank only). */
enum { P_AB, P_BA, P_BOTH, P_LAT, P_WRONG, P_FIELDS };

static long check_values(const bench_t *b, const unsigned char *buf, size_t count, int sender)
{
    size_t i;
    long wrong = 0;

    for (i = 0; i < count; i++)
        wrong += get(b->dt, buf, i) != (double)value_of(sender, i);
    return wrong;
}

/* Elements of the bandwidth messages (-e) and of the latency ones (-b, at least one). */
static size_t p2p_count(const bench_t *b)
{
    size_t n = b->maxb / tbm_dtype_size(b->dt);
    return n ? n : 1;
}

static size_t p2p_lat_count(const bench_t *b)
{
    size_t n = b->minb / tbm_dtype_size(b->dt);
    return n ? n : 1;
}

/* One direction of one cable: `from` sends iters messages of count elements, `to` receives them and answers
 * with one element; the sender's clock gives the rate. Returns 0 and, at the sender, the rate in GB/s. */
static int one_way(bench_t *b, int from, int to, size_t count, float *gbs, float *wrong, tbm_err_t *err)
{
    size_t es = tbm_dtype_size(b->dt);
    int i, me = b->rank;
    double t0 = 0;

    for (i = 0; i < b->warmup + b->iters; i++) {
        if (i == b->warmup && me == from)
            t0 = now_s();
        if (me == from ? tbmcoll_send(b->c, b->sendbuf, count, b->dt, to, err)
                       : tbmcoll_recv(b->c, b->recvbuf, count, b->dt, from, err))
            return -1;
        if (i < b->warmup || i == b->warmup + b->iters - 1) {   /* the warm-ups, and the end: an answer */
            if (me == from ? tbmcoll_recv(b->c, b->recvbuf + p2p_count(b) * tbm_dtype_size(b->dt), 1, b->dt, to, err)
                           : tbmcoll_send(b->c, b->sendbuf, 1, b->dt, from, err))
                return -1;
        }
    }
    if (me == from)
        *gbs = (float)((double)count * es * b->iters / (now_s() - t0) / 1e9);
    else if (b->check)
        *wrong += (float)check_values(b, b->recvbuf, count, from);
    return 0;
}

static int measure_cable(bench_t *b, int x, int y, float *res, tbm_err_t *err)
{
    size_t count = p2p_count(b), lat = p2p_lat_count(b);
    int me = b->rank, peer = me == x ? y : x, i;
    double t0 = 0;

    if (one_way(b, x, y, count, &res[P_AB], &res[P_WRONG], err) < 0 ||
        one_way(b, y, x, count, &res[P_BA], &res[P_WRONG], err) < 0)
        return -1;
    /* both ways at once */
    for (i = 0; i < b->warmup + b->iters; i++) {
        if (i == b->warmup)
            t0 = now_s();
        if (tbmcoll_sendrecv(b->c, b->sendbuf, peer, b->recvbuf, peer, count, b->dt, err) < 0)
            return -1;
    }
    if (tbmcoll_sendrecv(b->c, b->sendbuf, peer, b->recvbuf + p2p_count(b) * tbm_dtype_size(b->dt), peer, 1, b->dt, err) < 0)
        return -1;
    if (me == x)
        res[P_BOTH] = (float)(2.0 * count * tbm_dtype_size(b->dt) * b->iters / (now_s() - t0) / 1e9);
    if (b->check)
        res[P_WRONG] += (float)check_values(b, b->recvbuf, count, peer);
    /* latency: ping-pong of -b bytes, x's clock, half the round trip */
    for (i = 0; i < 10 + b->lat_iters; i++) {
        if (i == 10)
            t0 = now_s();
        if (me == x ? tbmcoll_send(b->c, b->sendbuf, lat, b->dt, y, err) < 0 ||
                      tbmcoll_recv(b->c, b->recvbuf, lat, b->dt, y, err) < 0
                    : tbmcoll_recv(b->c, b->recvbuf, lat, b->dt, x, err) < 0 ||
                      tbmcoll_send(b->c, b->sendbuf, lat, b->dt, x, err) < 0)
            return -1;
    }
    if (me == x)
        res[P_LAT] = (float)((now_s() - t0) * 1e6 / b->lat_iters / 2);
    if (b->check)
        res[P_WRONG] += (float)check_values(b, b->recvbuf, lat, peer);
    return 0;
}

static void cable_end(const rank_card_t *cards, int r, int peer, char *out, size_t outsz)
{
    const char *ifn = cards[r].peer[peer].ifname;

    snprintf(out, outsz, "%s%s%s", cards[r].host, *ifn ? ":" : "", ifn);
}

static void print_cables(bench_t *b, const rank_card_t *cards, const int (*pairs)[2], int np, const float *res)
{
    char ea[HOST_MAX + 24], eb[HOST_MAX + 24];
    double slowest = 0, sum = 0;
    size_t es = tbm_dtype_size(b->dt), size = p2p_count(b) * es, lat = p2p_lat_count(b) * es;
    int k, worst = -1;
    long wrong = 0;

    if (b->format == FMT_CSV)
        printf("op,transport,rank_a,end_a,rank_b,end_b,size_bytes,a_to_b_gbs,b_to_a_gbs,both_ways_gbs,"
               "latency_bytes,latency_us,wrong\n");
    else if (b->format == FMT_JSON)
        printf("{\"op\": \"p2p\", \"transport\": \"%s\", \"ranks\": %d, \"type\": \"%s\", \"size_bytes\": %zu, "
               "\"latency_bytes\": %zu, \"iterations\": %d, \"warmup\": %d, \"latency_iterations\": %d, "
               "\"check\": %s, \"cables\": [", transport_name(b), b->n, tbm_dtype_name(b->dt), size, lat,
               b->iters, b->warmup, b->lat_iters, b->check ? "true" : "false");
    else
        printf("# macnode bench: p2p, %d ranks, transport %s, every cable alone in turn: %zu-byte messages "
               "(%d iterations, %d warm-up),\n# latency as half the round trip of %zu bytes (%d round trips), "
               "check %s\n#\n# %4s %-24s %4s %-24s %9s %9s %9s %9s %7s\n# %4s %-24s %4s %-24s %9s %9s %9s %9s\n",
               b->n, transport_name(b), size, b->iters, b->warmup, lat, b->lat_iters, b->check ? "on" : "off",
               "rank", "end", "rank", "end", "a->b", "b->a", "both", "latency", "#wrong", "a", "", "b", "",
               "(GB/s)", "(GB/s)", "(GB/s)", "(us)");
    for (k = 0; k < np; k++) {
        const float *r = res + k * P_FIELDS;
        int x = pairs[k][0], y = pairs[k][1];
        double low = r[P_AB] < r[P_BA] ? r[P_AB] : r[P_BA];
        cable_end(cards, x, y, ea, sizeof(ea));
        cable_end(cards, y, x, eb, sizeof(eb));
        wrong += (long)r[P_WRONG];
        sum += low;
        if (worst < 0 || low < slowest)
            slowest = low, worst = k;
        if (b->format == FMT_CSV)
            printf("p2p,%s,%d,%s,%d,%s,%zu,%.4f,%.4f,%.4f,%zu,%.2f,%ld\n", transport_name(b), x, ea, y, eb, size,
                   r[P_AB], r[P_BA], r[P_BOTH], lat, r[P_LAT], (long)r[P_WRONG]);
        else if (b->format == FMT_JSON)
            printf("%s\n  {\"rank_a\": %d, \"end_a\": \"%s\", \"rank_b\": %d, \"end_b\": \"%s\", \"a_to_b_gbs\": %.4f, "
                   "\"b_to_a_gbs\": %.4f, \"both_ways_gbs\": %.4f, \"latency_us\": %.2f, \"wrong\": %ld}",
                   k ? "," : "", x, ea, y, eb, r[P_AB], r[P_BA], r[P_BOTH], r[P_LAT], (long)r[P_WRONG]);
        else
            printf("  %4d %-24s %4d %-24s %9.3f %9.3f %9.3f %9.1f %7ld\n", x, ea, y, eb, r[P_AB], r[P_BA], r[P_BOTH],
                   r[P_LAT], (long)r[P_WRONG]);
    }
    b->wrong_total = wrong;
    if (b->format == FMT_JSON) {
        printf("\n], \"wrong_total\": %ld, \"slowest_gbs\": %.4f, \"mean_gbs\": %.4f}\n", wrong, slowest,
               np ? sum / np : 0);
    } else if (b->format == FMT_TABLE) {
        if (worst >= 0) {
            cable_end(cards, pairs[worst][0], pairs[worst][1], ea, sizeof(ea));
            cable_end(cards, pairs[worst][1], pairs[worst][0], eb, sizeof(eb));
            printf("# Slowest cable      : %s <-> %s, %.3f GB/s one way (mean of the cables %.3f GB/s)\n", ea, eb,
                   slowest, sum / np);
        }
        printf("# Wrong values       : %ld %s\n#\n", wrong, wrong ? "FAILED" : "OK");
    }
    fflush(stdout);
}

static int p2p(bench_t *b)
{
    tbm_err_t err = { { 0 } };
    rank_card_t *cards = calloc((size_t)b->n, sizeof(*cards)), mine;
    int(*pairs)[2] = calloc((size_t)b->n * (size_t)b->n, sizeof(*pairs));
    float *res = NULL, *sum = NULL;
    int x, y, np = 0, k, rc = 3;
    char what[64];

    memset(&mine, 0, sizeof(mine));
    if (!cards || !pairs)
        goto oom;
    if (gethostname(mine.host, sizeof(mine.host) - 1) < 0)
        snprintf(mine.host, sizeof(mine.host), "rank%d", b->rank);
    for (y = 0; y < b->n; y++) {
        tbmcoll_peer_info_t pi;
        if (y == b->rank || tbmcoll_peer_info(b->c, y, &pi, &err) < 0)
            continue;
        mine.peer[y].connected = pi.connected;
        snprintf(mine.peer[y].ifname, sizeof(mine.peer[y].ifname), "%s", pi.local_if);
    }
    if (tbmcoll_allgather(b->c, &mine, cards, sizeof(mine) / 4, TBM_DT_I32, &err) < 0)
        goto fail;
    for (x = 0; x < b->n; x++)
        for (y = x + 1; y < b->n; y++)
            if (cards[x].peer[y].connected && cards[y].peer[x].connected)
                pairs[np][0] = x, pairs[np][1] = y, np++;
    res = calloc((size_t)np * P_FIELDS + 1, sizeof(*res));
    sum = calloc((size_t)np * P_FIELDS + 1, sizeof(*sum));
    if (!res || !sum)
        goto oom;
    fill(b->dt, b->sendbuf, p2p_count(b), b->rank, 0);
    progress_start(b, np);
    for (k = 0; k < np; k++) {
        if (tbmcoll_barrier(b->c, &err) < 0)
            goto fail;
        if ((b->rank == pairs[k][0] || b->rank == pairs[k][1]) &&
            measure_cable(b, pairs[k][0], pairs[k][1], res + k * P_FIELDS, &err) < 0)
            goto fail;
        snprintf(what, sizeof(what), "%d of %d cables", k + 1, np);
        progress_step(b, 1, what);
    }
    if (np && tbmcoll_allreduce(b->c, res, sum, (size_t)np * P_FIELDS, TBM_DT_F32, TBM_OP_SUM, &err) < 0)
        goto fail;
    progress_end(b);
    if (b->rank == 0) {
        if (np == 0)
            fprintf(stderr, "%s: p2p: no two ranks are connected (one rank?): nothing to measure\n", prog);
        print_cables(b, cards, (const int(*)[2])pairs, np, sum);
    }
    rc = np == 0 ? 2 : b->wrong_total ? 1 : 0;
    goto out;
oom:
    fprintf(stderr, "%s: out of memory\n", prog);
    goto out;
fail:
    progress_end(b);
    fprintf(stderr, "%s: p2p: %s\n", prog, err.msg);
out:
    free(cards);
    free(pairs);
    free(res);
    free(sum);
    return rc;
}

static int run_rank(bench_t *b)
{
    size_t es = tbm_dtype_size(b->dt);

    b->rank = tbmcoll_rank(b->c);
    b->n = tbmcoll_size(b->c);
    if ((b->op == OP_SENDRECV || b->op == OP_P2P) && b->n < 2) {
        fprintf(stderr, "%s: %s needs at least 2 ranks\n", prog, op_names[b->op]);
        return 2;
    }
    if (b->op == OP_BROADCAST && b->root >= b->n) {
        fprintf(stderr, "%s: root %d is not a rank (0 to %d)\n", prog, b->root, b->n - 1);
        return 2;
    }
    if (b->n > LOCAL_MAX_RANKS) {
        fprintf(stderr, "%s: %d ranks: at most %d\n", prog, b->n, LOCAL_MAX_RANKS);
        return 2;
    }
    /* room for a one-element answer after the largest message */
    b->sendbuf = calloc(1, b->maxb + 2 * es);
    b->recvbuf = calloc(1, b->maxb + 2 * es);
    if (!b->sendbuf || !b->recvbuf) {
        fprintf(stderr, "%s: out of memory for two buffers of %zu bytes\n", prog, b->maxb);
        return 2;
    }
    return b->op == OP_P2P ? p2p(b) : sweep(b);
}

/* -l N: N ranks on this host. */
static int local_rank(tbmcoll_comm_t *c, void *arg)
{
    bench_t *b = arg;
    int rc;

    b->c = c;
    rc = run_rank(b);
    tbmcoll_comm_free(b->c);
    free(b->sendbuf);
    free(b->recvbuf);
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
                  .factor = 2, .iters = 20, .warmup = 5, .lat_iters = 1000, .check = 1, .format = FMT_TABLE };
    tbm_err_t err = { { 0 } };
    int rc;

    signal(SIGPIPE, SIG_IGN);
    if (parse_args(&b, argc, argv) < 0)
        return 2;
    /* p2p: the ranks off the cable being measured wait in a barrier all along; unless -t says otherwise, let
     * them wait long (a dead peer still fails them at once: its connections close) */
    if (b.op == OP_P2P && b.opts.io_timeout_ms == 0)
        b.opts.io_timeout_ms = 600000;
    if (b.local_ranks)
        return tbmcoll_run_local(b.local_ranks, &b.opts, local_rank, &b, prog);
    if (!b.use_mpi && !in_mlx_env()) {
        fprintf(stderr, "%s: MLX_RANK is not set, so this is not a rank of a tbmesh job: run it under srun in a "
                "job with --gres=tbmesh:N (the plug-in sets MLX's environment), or give -l N to start N ranks "
                "on this host\n", prog);
        return 2;
    }
    b.c = b.use_mpi ? tbmcoll_comm_from_mpi(&argc, &argv, &err) : tbmcoll_comm_from_env(&b.opts, &err);
    if (!b.c) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        return 2;
    }
    rc = run_rank(&b);
    tbmcoll_comm_free(b.c);
    free(b.sendbuf);
    free(b.recvbuf);
    return rc;
}
