/* bench_options.c: `macnode bench`'s command line: nccl-tests' options and ours, checked, with a message that
 * says what to give for a bad value. */
#include "config.h"
#include "bench.h"

#include "scalar.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#define TBM_STR2(x) #x
#define TBM_STR(x) TBM_STR2(x)

const char *const bench_op_names[OP_COUNT] = { "allreduce", "allgather", "reducescatter", "broadcast",
                                               "sendrecv", "p2p" };

static void usage(FILE *f)
{
    fprintf(f, "usage: macnode bench [options]\n"
               "  Measure the mesh with exactly the environment MLX reads (run it under srun in a --gres=tbmesh\n"
               "  job), with -l N ranks on this host, or under mpirun with -T mpi. nccl-tests' conventions.\n"
               "  -T, --transport tcp|mpi|both  transport (tcp; mpi: start the ranks with mpirun; both: under\n"
               "                                mpirun, libtbmcoll's TCP mesh (in a tbmesh job the one MLX's\n"
               "                                environment describes, else over 127.0.0.1 on one host) and\n"
               "                                Open MPI in the same ranks, taking turns at each size, -F csv)\n"
               "      --turns N                 -T both: turns of each transport at each size, 1 to 99 (3)\n"
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
               "  -S, --streams N               TCP mesh: connections per pair of ranks, 1 to 4 (%d where\n"
               "                                every machine has more cores than ranks, else 1); large\n"
               "                                transfers are split across them; every rank must give the same\n"
               "  -B, --sockbuf SIZE            TCP: socket buffers asked for (4M; 0: the kernel's own, tuned)\n"
               "  -G, --segment SIZE            TCP: the pipelines' piece, 4K to 64M (256K): a mesh all-reduce\n"
               "                                moves each rank's part in pieces of it, a ring folds and forwards\n"
               "                                in pieces of it, the halving folds what arrives in pieces of it\n"
               "                                (chunks of 8 pieces, one after the other); every rank must give\n"
               "                                the same\n"
               "  -a, --mesh-allreduce HOW      TCP mesh (or ring of 4) all-reduce above 128K (ring: 32K): auto\n"
               "                                (halving and doubling where a machine runs more ranks than it\n"
               "                                has cores; else direct: on a ring, the ring's own), direct or\n"
               "                                halving (4, 8, 16 ... ranks; a ring of 4); every rank must\n"
               "                                give the same\n"
               "  -y, --small-allreduce HOW     TCP mesh all-reduce up to 128K: auto (through rank 0 where a\n"
               "                                machine runs more ranks than it has cores; recursive doubling\n"
               "                                where one runs 8, 16 ... with a core each; else one round),\n"
               "                                oneround, rooted (3 ranks or more) or doubling (4, 8, 16 ...;\n"
               "                                a ring of 4: doubling where ranks outnumber cores or asked,\n"
               "                                else both ways around); every rank must give the same\n"
               "  -Z, --recv-staging auto|on|off TCP: receive into memory 1 to 31 bytes past a 64-byte boundary\n"
               "                                through a page-aligned buffer (auto: where this CPU copies\n"
               "                                to such memory 3x slower or more, measured at start; the\n"
               "                                header says; see kernels/README.md)\n"
               "  -O, --offset BYTES            the buffers this many bytes (0 to 4095) past a page boundary\n"
               "                                (default: where malloc puts them)\n"
               "  -V, --verbose                 per size, where the time goes (TCP; largest over the ranks):\n"
               "                                send/recv calls, reductions, waiting\n"
               "      --traffic                 TCP: after the sweep, the bytes each rank sent to and received\n"
               "                                from each peer, and the interface (cable) they left by\n"
               "      --bind auto|none          -l: each rank on a CPU of its own when every rank can have one,\n"
               "                                as mpirun binds to cores (auto), or where the scheduler puts it\n"
               "      --progress auto|on|off    progress on stderr (auto: of long runs, on a terminal, and every\n"
               "                                10 s otherwise once a run has taken 10 s; on: every step)\n"
               "  Exit: 0 all values right, 1 a value was wrong, 2 bad usage or set-up, 3 a rank failed.\n",
            LOCAL_MAX, TBMCOLL_SPIN_US_DEFAULT, TBMCOLL_STREAMS_DEFAULT);
}

/* A size in bytes: digits and one optional K, M or G (powers of 1024), from 1 to 16 GiB. */
static int parse_size(const char *s, size_t *out)
{
    char digits[32];
    size_t len = strlen(s);
    unsigned shift = 0;
    uint64_t v;

    if (len == 0 || len >= sizeof(digits))
        return -1;
    memcpy(digits, s, len + 1);
    switch (digits[len - 1]) {
    case 'G': case 'g': shift = 30; break;
    case 'M': case 'm': shift = 20; break;
    case 'K': case 'k': shift = 10; break;
    default: break;
    }
    if (shift)
        digits[len - 1] = '\0';
    if (tbm_parse_u64(digits, (1ull << 34) >> shift, &v) < 0 || v == 0)
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    long long v;

    if (tbm_parse_ll(s, 10, lo, hi, &v) < 0)
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

/* The short options; the long options' other values (--progress, --bind, --turns) have no short form. */
static const char shortopts[] = ":T:A:a:y:l:o:d:r:R:b:e:f:n:w:L:c:F:t:s:S:B:G:Z:O:Vh";

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
    { "segment", required_argument, NULL, 'G' },    { "verbose", no_argument, NULL, 'V' },
    { "mesh-allreduce", required_argument, NULL, 'a' }, { "recv-staging", required_argument, NULL, 'Z' },
    { "small-allreduce", required_argument, NULL, 'y' },
    { "offset", required_argument, NULL, 'O' }, { "bind", required_argument, NULL, 'K' },
    { "turns", required_argument, NULL, 'U' }, { "traffic", no_argument, NULL, 'X' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static const char *const transports[] = { "tcp", "mpi", "both" }, *const formats[] = { "table", "csv", "json" },
                         *const auto_on_off[] = { "auto", "on", "off" }, *const auto_none[] = { "auto", "none" };

/* "-o/--op" for the option whose short name is c. */
static const char *opt_name(const struct option *o, int c)
{
    static char buf[48];

    for (; o->name; o++)
        if (o->val == c) {
            if (!strchr(shortopts + 1, c))   /* long only */
                snprintf(buf, sizeof(buf), "--%s", o->name);
            else
                snprintf(buf, sizeof(buf), "-%c/--%s", c, o->name);
            return buf;
        }
    snprintf(buf, sizeof(buf), "-%c", c);
    return buf;
}

/* What to give, for the options whose values come from a fixed set or range. */
static const char *hint(int opt)
{
    static const struct {
        int opt;
        const char *text;
    } hints[] = {
        { 'l', " (give 1 to " TBM_STR(LOCAL_MAX) " ranks)" },
        { 'b', " (a size in bytes from 1 to 16G, with K, M or G)" },
        { 'e', " (a size in bytes from 1 to 16G, with K, M or G)" },
        { 'o', " (give allreduce, allgather, reducescatter, broadcast, sendrecv or p2p)" },
        { 'T', " (give tcp, mpi or both)" },
        { 'U', " (give 1 to 99)" },
        { 'F', " (give table, csv or json)" },
        { 'P', " (give auto, on or off)" },
        { 'c', " (give 0 or 1)" },
        { 'S', " (give 1 to 4)" },
        { 'G', " (give 4K to 64M)" },
        { 'Z', " (give auto, on or off)" },
        { 'O', " (give 0 to 4095)" },
        { 'K', " (give auto or none)" },
    };
    size_t i;

    for (i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
        if (hints[i].opt == opt)
            return hints[i].text;
    return "";
}

/* What an option's value did (the parsers of each family of options below). */
enum { OPT_DONE, OPT_BAD, OPT_OTHER };

/* What runs: transport, algorithm, ranks, operation, type, reduction, root. */
static int run_option(bench_t *b, int opt, const char *arg, tbm_err_t *err)
{
    int v = 0, bad;

    switch (opt) {
    case 'T': bad = parse_name(arg, transports, 3, &b->use_mpi); break;
    case 'U': bad = parse_int(arg, 1, 99, &b->turns); break;
    case 'A': bad = tbmcoll_algo_parse(arg, &b->opts.algo, err); break;
    case 'a': bad = tbmcoll_mesh_ar_parse(arg, &b->opts.mesh_allreduce, err); break;
    case 'y': bad = tbmcoll_small_ar_parse(arg, &b->opts.small_allreduce, err); break;
    case 'l': bad = parse_int(arg, 1, LOCAL_MAX, &b->local_ranks); break;
    case 'o': bad = parse_name(arg, bench_op_names, OP_COUNT, &v); b->op = (bench_op_t)v; break;
    case 'd': bad = tbm_dtype_parse(arg, &b->dt, err); break;
    case 'r': bad = tbm_redop_parse(arg, &b->redop, err); break;
    case 'R': bad = parse_int(arg, 0, 1 << 20, &b->root); break;
    default: return OPT_OTHER;
    }
    return bad ? OPT_BAD : OPT_DONE;
}

/* The sweep and its output: sizes, iterations, check, buffers' offset, format, progress. */
static int sweep_option(bench_t *b, int opt, const char *arg)
{
    int v = 0, bad;

    switch (opt) {
    case 'b': bad = parse_size(arg, &b->minb); break;
    case 'e': bad = parse_size(arg, &b->maxb); break;
    case 'f': bad = parse_int(arg, 2, 1 << 20, &v); b->factor = (unsigned)v; break;
    case 'n': bad = parse_int(arg, 1, 1 << 24, &b->iters); break;
    case 'w': bad = parse_int(arg, 0, 1 << 24, &b->warmup); break;
    case 'L': bad = parse_int(arg, 1, 1 << 24, &b->lat_iters); break;
    case 'c': bad = parse_int(arg, 0, 1, &b->check); break;
    case 'O': bad = parse_int(arg, 0, 4095, &b->offset); break;
    case 'F': bad = parse_name(arg, formats, 3, &b->format); break;
    case 'P': bad = parse_name(arg, auto_on_off, 3, &b->progress); break;
    default: return OPT_OTHER;
    }
    return bad ? OPT_BAD : OPT_DONE;
}

/* TCP's sizes: socket buffers (0: the kernel's own) and the pipelines' piece. */
static int tcp_size_option(bench_t *b, int opt, const char *arg)
{
    size_t sz = 0;
    int bad = 0;

    switch (opt) {
    case 'B':
        if (strcmp(arg, "0") == 0) {
            b->opts.sockbuf_bytes = -1;
        } else {
            bad = parse_size(arg, &sz) || sz > (1u << 30);
            b->opts.sockbuf_bytes = (int)sz;
        }
        break;
    case 'G':
        bad = parse_size(arg, &sz) || sz < 4096 || sz > (64u << 20);
        b->opts.segment_bytes = sz;
        break;
    default: return OPT_OTHER;
    }
    return bad ? OPT_BAD : OPT_DONE;
}

/* The TCP transport's tuning: timeout, spin, streams, receive staging, binding of -l's ranks. */
static int tcp_option(bench_t *b, int opt, const char *arg)
{
    int v = 0, bad, tmo = 0;

    switch (opt) {
    case 't': bad = parse_int(arg, 1, 1 << 30, &tmo); b->opts.io_timeout_ms = tmo; break;
    case 's':
        bad = parse_int(arg, 0, 1000000, &b->opts.spin_us);
        if (!bad && b->opts.spin_us == 0)
            b->opts.spin_us = -1;   /* 0 here means no spin */
        break;
    case 'S': bad = parse_int(arg, 1, 4, &b->opts.streams); break;
    case 'Z':
        bad = parse_name(arg, auto_on_off, 3, &v);
        b->opts.recv_staging = v == 1 ? 1 : v == 2 ? -1 : 0;
        break;
    case 'K':
        bad = parse_name(arg, auto_none, 2, &v);
        b->opts.bind_local = v ? -1 : 0;
        break;
    default: return tcp_size_option(b, opt, arg);
    }
    return bad ? OPT_BAD : OPT_DONE;
}

/* An option with a value, by family. */
static int value_option(bench_t *b, int opt, const char *arg, tbm_err_t *err)
{
    int r;

    if ((r = run_option(b, opt, arg, err)) != OPT_OTHER || (r = sweep_option(b, opt, arg)) != OPT_OTHER)
        return r;
    return tcp_option(b, opt, arg);
}

/* The options that do not go together; 0, or -1 with a message. */
static int check_combination(const bench_t *b)
{
    if (b->minb > b->maxb) {
        fprintf(stderr, "%s: -b must not exceed -e (%zu > %zu bytes)\n", BENCH_PROG, b->minb, b->maxb);
        return -1;
    }
    if (b->use_mpi == TRANSPORT_BOTH && (b->op == OP_P2P || b->format != FMT_CSV)) {
        fprintf(stderr, "%s: -T both writes the sweeps' rows of both transports, in turns, as CSV: give -F csv "
                "(and an operation other than p2p)\n", BENCH_PROG);
        return -1;
    }
    if (b->turns && b->use_mpi != TRANSPORT_BOTH) {
        fprintf(stderr, "%s: --turns is for -T both (the two transports taking turns)\n", BENCH_PROG);
        return -1;
    }
    if (b->traffic && (b->use_mpi || b->op == OP_P2P)) {
        fprintf(stderr, "%s: --traffic counts what libtbmcoll's TCP transport moves in a sweep: not with %s\n",
                BENCH_PROG, b->op == OP_P2P ? "-o p2p (its table names each cable already)" : "-T mpi or -T both");
        return -1;
    }
    if (b->use_mpi && b->local_ranks) {
        fprintf(stderr, "%s: -l starts TCP ranks; start MPI ranks with mpirun -np N ... -T mpi\n", BENCH_PROG);
        return -1;
    }
    return 0;
}

int bench_parse_args(bench_t *b, int argc, char **argv)
{
    tbm_err_t err = { { 0 } };
    int opt, r;

    opterr = 0;
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        if (opt == 'V' || opt == 'X') {
            *(opt == 'V' ? &b->verbose : &b->traffic) = 1;
            continue;
        }
        if (opt == 'h') {
            usage(stdout);
            return 1;
        }
        if (opt == ':') {
            fprintf(stderr, "%s: option %s needs a value; see --help\n", BENCH_PROG,
                    optopt ? opt_name(longopts, optopt) : argv[optind - 1]);
            return -1;
        }
        if ((r = value_option(b, opt, optarg, &err)) == OPT_OTHER) {
            fprintf(stderr, "%s: unknown option '%s'; see --help\n", BENCH_PROG, argv[optind - 1]);
            return -1;
        }
        if (r == OPT_BAD) {
            fprintf(stderr, "%s: bad value '%s' for %s%s%s%s; see --help\n", BENCH_PROG, optarg,
                    opt_name(longopts, opt), err.msg[0] ? ": " : "", err.msg, hint(opt));
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'; see --help\n", BENCH_PROG, argv[optind]);
        return -1;
    }
    return check_combination(b);
}
