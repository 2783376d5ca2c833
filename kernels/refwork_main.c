/* refwork_main.c: macnode refwork (the program macnode-refwork), the reference workload that compares a single Mac with a mesh. The same
 * deterministic tensor-parallel network (lib/refwork.c) runs on one rank or on N ranks (each holds 1/N of
 * every weight matrix; one all-reduce per layer over the Thunderbolt links); rank 0 writes the output, and
 * --compare gives the verdict: bitwise identical, within the tolerance (the largest error and where), or
 * different. */
#include "config.h"
#include "tbmcoll.h"
#include "clock.h"
#include "fileio.h"
#include "refwork.h"
#include "scalar.h"

#include <errno.h>
#include <getopt.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC "TBMRW1\n"
#define HEADER_WORDS 6   /* seed (2 words), layers, hidden, batch, ranks */

typedef struct run {
    tbm_refwork_t w;
    const char *out;
    tbmcoll_opts_t opts;
} run_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: macnode refwork [-L LAYERS] [-H HIDDEN] [-B BATCH] [-s SEED] [-o OUT] [-l N]\n"
            "       macnode refwork --compare A B [--rtol R] [--atol A]\n"
            "  Runs a deterministic tensor-parallel network (y = relu(x W) per layer, W split by rows across\n"
            "  the ranks, one all-reduce per layer). Ranks come from MLX's environment (under srun in a\n"
            "  --gres=tbmesh job), from -l N local ranks, or there is one (a single Mac). Rank 0 prints the\n"
            "  output's SHA-256 and the time, and writes the output to OUT.\n"
            "  --compare A B: the verdict on two outputs of the same network: bitwise identical, within the\n"
            "  tolerance |a-b| <= atol + rtol*max(|a|,|b|) (defaults 1e-6, 1e-4: float32 sums in another\n"
            "  order), or different (exit 1); with the largest error and where it is.\n"
            "  Defaults: 4 layers, hidden 1024, batch 16, seed 1.\n");
}

static double now_s(void)
{
    return (double)tbm_now_us() / 1e6;
}

static void digest(const float *y, size_t n, char hex[65])
{
    unsigned char md[32];
    unsigned int len = 0, i;

    EVP_Digest(y, n * sizeof(*y), md, &len, EVP_sha256(), NULL);
    for (i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

static int write_out(const char *path, const tbm_refwork_t *w, int ranks, const float *y, size_t n)
{
    uint32_t hdr[HEADER_WORDS] = { (uint32_t)(w->seed >> 32), (uint32_t)w->seed, (uint32_t)w->layers,
                                   (uint32_t)w->hidden, (uint32_t)w->batch, (uint32_t)ranks };
    tbm_err_t err = { { 0 } };
    int fd = tbm_open_for_writing(path, 0644, &err), ok;   /* never through a link: root runs this too */
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;

    if (!f) {
        if (fd >= 0)
            close(fd);
        return fprintf(stderr, "macnode refwork: -o %s\n", fd < 0 ? err.msg : strerror(errno)), -1;
    }
    ok = fwrite(MAGIC, 1, strlen(MAGIC), f) == strlen(MAGIC) && fwrite(hdr, sizeof(hdr), 1, f) == 1 &&
         fwrite(y, sizeof(*y), n, f) == n;
    if (fclose(f) != 0 || !ok)
        return fprintf(stderr, "macnode refwork: cannot write %s\n", path), -1;
    return 0;
}

/* One rank's part: every layer's partial product, then the all-reduce (or nothing, alone). */
static int run_rank(tbmcoll_comm_t *c, void *arg)
{
    run_t *r = arg;
    int rank = c ? tbmcoll_rank(c) : 0, size = c ? tbmcoll_size(c) : 1, row0, nrows, l, rc = 0;
    size_t n = (size_t)r->w.batch * (size_t)r->w.hidden;
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float)), *rows;
    tbm_err_t err = { { 0 } };
    double t0;
    char hex[65];

    tbm_rw_shard(r->w.hidden, rank, size, &row0, &nrows);
    rows = malloc((size_t)(nrows ? nrows : 1) * (size_t)r->w.hidden * sizeof(float));
    if (!x || !y || !rows) {
        fprintf(stderr, "macnode refwork: rank %d: out of memory\n", rank);
        rc = 2;
        goto out;
    }
    tbm_rw_input(&r->w, x);
    t0 = now_s();
    for (l = 0; l < r->w.layers && rc == 0; l++) {
        tbm_rw_weights(&r->w, l, row0, nrows, rows);
        tbm_rw_partial(&r->w, x, rows, row0, nrows, y);
        if (c && tbmcoll_allreduce(c, y, y, n, TBM_DT_F32, TBM_OP_SUM, &err) < 0) {
            fprintf(stderr, "macnode refwork: rank %d, layer %d: %s\n", rank, l, err.msg);
            rc = 3;
            break;
        }
        tbm_rw_relu(y, n);
        memcpy(x, y, n * sizeof(float));
    }
    if (rc == 0 && rank == 0) {
        digest(x, n, hex);
        printf("macnode refwork: %d layers, hidden %d, batch %d, seed %llu on %d rank%s: %.3f s, output sha256 %s\n",
               r->w.layers, r->w.hidden, r->w.batch, (unsigned long long)r->w.seed, size, size == 1 ? "" : "s",
               now_s() - t0, hex);
        if (r->out && write_out(r->out, &r->w, size, x, n) < 0)
            rc = 2;
    }
out:
    free(x);
    free(y);
    free(rows);
    if (c)
        tbmcoll_comm_free(c);
    return rc;
}

static float *read_out(const char *path, uint32_t hdr[HEADER_WORDS], size_t *n)
{
    char magic[sizeof(MAGIC)] = "";
    FILE *f = fopen(path, "rb");
    float *y = NULL;

    if (!f)
        return fprintf(stderr, "macnode refwork: cannot read %s: %s\n", path, strerror(errno)), NULL;
    if (fread(magic, 1, strlen(MAGIC), f) != strlen(MAGIC) || memcmp(magic, MAGIC, strlen(MAGIC)) ||
        fread(hdr, sizeof(uint32_t), HEADER_WORDS, f) != HEADER_WORDS || hdr[3] == 0 || hdr[4] == 0 ||
        hdr[3] > 65536 || hdr[4] > 65536) {
        fprintf(stderr, "macnode refwork: %s is not an output of macnode refwork (-o): make it again\n", path);
    } else {
        *n = (size_t)hdr[3] * (size_t)hdr[4];
        y = malloc(*n * sizeof(float));
        if (y && fread(y, sizeof(float), *n, f) != *n) {
            fprintf(stderr, "macnode refwork: %s is cut short: make it again\n", path);
            free(y);
            y = NULL;
        }
    }
    fclose(f);
    return y;
}

static int compare(const char *a, const char *b, double rtol, double atol)
{
    uint32_t ha[HEADER_WORDS], hb[HEADER_WORDS];
    size_t na = 0, nb = 0;
    float *ya = read_out(a, ha, &na), *yb = ya ? read_out(b, hb, &nb) : NULL;
    tbm_rw_diff_t d;
    int rc = 2;

    if (!ya || !yb)
        goto out;
    if (memcmp(ha, hb, 5 * sizeof(uint32_t)) != 0) {
        fprintf(stderr, "macnode refwork: %s and %s are outputs of different networks (seed, layers, hidden or "
                        "batch): run both with the same options\n", a, b);
        goto out;
    }
    tbm_rw_compare(ya, yb, na, rtol, atol, &d);
    if (d.bitwise)
        printf("verdict: bitwise identical (%zu values; %u rank%s vs %u rank%s)\n", na, ha[5], ha[5] == 1 ? "" : "s",
               hb[5], hb[5] == 1 ? "" : "s");
    else
        printf("verdict: %s: %zu of %zu values differ, %zu beyond the tolerance (rtol %.3g, atol %.3g); largest "
               "error %.3g (relative %.3g) at batch %zu, column %zu: %.9g vs %.9g%s\n",
               d.n_beyond == 0 ? "within tolerance" : "DIFFERENT", d.n_differ, na, d.n_beyond, rtol, atol,
               d.max_abs, d.max_rel, d.where / ha[3], d.where % ha[3], ya[d.where], yb[d.where],
               d.nonfinite ? "; a NaN or infinity is in the outputs" : "");
    rc = d.n_beyond == 0 ? 0 : 1;
out:
    free(ya);
    free(yb);
    return rc;
}

static int parse_int(const char *s, int lo, int hi, int *out, const char *what)
{
    long long v;

    if (tbm_parse_ll(s, 10, lo, hi, &v) < 0)
        return fprintf(stderr, "macnode refwork: %s '%s' is not a whole number from %d to %d\n", what, s, lo, hi), -1;
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = { { "compare", no_argument, NULL, 'C' },
                                          { "rtol", required_argument, NULL, 'T' },
                                          { "atol", required_argument, NULL, 'A' },
                                          { "help", no_argument, NULL, 'h' },
                                          { NULL, 0, NULL, 0 } };
    run_t r = { .w = { 1, 4, 1024, 16 } };
    tbm_err_t err = { { 0 } };
    int c, local = 0, cmp = 0, bad = 0;
    double rtol = 1e-4, atol = 1e-6;
    char *end;
    tbmcoll_comm_t *comm;

    signal(SIGPIPE, SIG_IGN);
    while ((c = getopt_long(argc, argv, "L:H:B:s:o:l:h", opts, NULL)) != -1) {
        switch (c) {
        case 'L': bad |= parse_int(optarg, 1, 1000, &r.w.layers, "-L layers"); break;
        case 'H': bad |= parse_int(optarg, 1, 65536, &r.w.hidden, "-H hidden"); break;
        case 'B': bad |= parse_int(optarg, 1, 65536, &r.w.batch, "-B batch"); break;
        case 'l': bad |= parse_int(optarg, 1, 64, &local, "-l ranks"); break;
        case 's':
            if (tbm_parse_u64(optarg, UINT64_MAX, &r.w.seed) < 0) {
                fprintf(stderr, "macnode refwork: -s seed '%s' is not a whole number\n", optarg);
                bad = -1;
            }
            break;
        case 'o': r.out = optarg; break;
        case 'C': cmp = 1; break;
        case 'T':
        case 'A':
            *(c == 'T' ? &rtol : &atol) = strtod(optarg, &end);
            if (*end || end == optarg || !(strtod(optarg, NULL) >= 0)) {
                fprintf(stderr, "macnode refwork: --%s '%s' is not a number >= 0\n", c == 'T' ? "rtol" : "atol", optarg);
                bad = -1;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (bad)
        return 2;
    if (cmp) {
        if (argc - optind != 2)
            return fprintf(stderr, "macnode refwork: --compare takes two outputs: --compare A B\n"), 2;
        return compare(argv[optind], argv[optind + 1], rtol, atol);
    }
    if (optind < argc)
        return fprintf(stderr, "macnode refwork: unexpected argument '%s'; see --help\n", argv[optind]), 2;
    if (local)
        return tbmcoll_run_local(local, &r.opts, run_rank, &r, "macnode refwork");
    if (!getenv("MLX_RANK") && !getenv("JACCL_RANK"))
        return run_rank(NULL, &r);   /* one Mac: the baseline */
    comm = tbmcoll_comm_from_env(&r.opts, &err);
    if (!comm)
        return fprintf(stderr, "macnode refwork: %s\n", err.msg), 3;
    return run_rank(comm, &r);
}
