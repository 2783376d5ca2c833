/* accept_parse.c: what the acceptance jobs printed, read back: `macnode bench` CSV (an all-reduce sweep, the
 * per-cable p2p rows), `macnode refwork`'s summary and output, each rank's backend environment; and the two
 * refwork outputs compared. */
#include "accept.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlxenv.h"
#include "record.h"
#include "scalar.h"

#define RW_MAGIC "TBMRW1\n"
#define RW_HEADER_WORDS 6        /* seed (2 words), layers, hidden, batch, ranks */
#define CSV_FIELDS_MAX 16
#define ENV_VALUE_MAX 512

/* The next line of text from *pos into buf (cut to len - 1); 0 at the end. */
static int next_line(const char *text, size_t *pos, char *buf, size_t len)
{
    const char *s = text + *pos, *nl;
    size_t n;

    if (!*s)
        return 0;
    nl = strchr(s, '\n');
    n = nl ? (size_t)(nl - s) : strlen(s);
    *pos += n + (nl ? 1 : 0);
    if (n >= len)
        n = len - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (n && buf[n - 1] == '\r')
        buf[n - 1] = '\0';
    return 1;
}

/* Split a CSV line (no quoting: bench writes none) in place. Returns the number of fields. */
static int split_csv(char *line, char **f, int max)
{
    int n = 0;

    f[n++] = line;
    for (; *line && n < max; line++)
        if (*line == ',') {
            *line = '\0';
            f[n++] = line + 1;
        }
    return n;
}

/* A count from 0 to 4096 (a rank, MLX_RANK). */
static int small_int(const char *s, int *out)
{
    long long v;

    if (tbm_parse_ll(s, 10, 0, 4096, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

static int to_double(const char *s, double *out)
{
    char *end;

    *out = strtod(s, &end);
    return *s && !*end ? 0 : -1;
}

int tbm_accept_parse_sweep(const char *text, tbm_accept_sweep_t *s, tbm_err_t *err)
{
    char line[1024], *f[CSV_FIELDS_MAX];
    size_t pos = 0;
    long long bytes, wrong;
    double us, busbw;
    int ranks;

    memset(s, 0, sizeof(*s));
    while (next_line(text, &pos, line, sizeof(line))) {
        /* op,transport,ranks,size_bytes,count,type,redop,root,placement,time_us,algbw_gbs,busbw_gbs,wrong */
        if (split_csv(line, f, CSV_FIELDS_MAX) != 13 || strcmp(f[0], "allreduce") != 0 ||
            strcmp(f[8], "out-of-place") != 0 || tbm_parse_uint(f[2], 4096, &ranks) < 0 ||
            tbm_parse_ll(f[3], 10, 1, 1LL << 40, &bytes) < 0 || to_double(f[9], &us) < 0 ||
            to_double(f[11], &busbw) < 0 || tbm_parse_ll(f[12], 10, 0, 1LL << 40, &wrong) < 0)
            continue;
        s->wrong_total += (long)wrong;
        if (s->n == TBM_ACCEPT_SIZES_MAX)
            continue;
        s->ranks = ranks;
        s->bytes[s->n] = (size_t)bytes;
        s->time_us[s->n] = us;
        s->busbw[s->n++] = busbw;
    }
    s->ran = s->n > 0;
    return s->ran ? 0 : tbm_errprintf(err, "no all-reduce row in the benchmark's output");
}

/* The cable with these two ends, either way round (*flip set when given the other way), or -1. */
static int find_cable(const tbm_accept_cable_t *c, size_t n, const char *a, const char *b, int *flip)
{
    size_t i;

    for (i = 0; i < n; i++) {
        *flip = strcmp(c[i].end[0], b) == 0 && strcmp(c[i].end[1], a) == 0;
        if (*flip || (strcmp(c[i].end[0], a) == 0 && strcmp(c[i].end[1], b) == 0))
            return (int)i;
    }
    return -1;
}

int tbm_accept_parse_p2p(const char *text, tbm_accept_cable_t *cables, size_t n, tbm_findings_t *fs)
{
    char line[1024], *f[CSV_FIELDS_MAX], where[TBM_FINDING_WHERE_MAX];
    size_t pos = 0;
    double ab, ba;
    long long wrong;
    int rows = 0, k, flip;

    while (next_line(text, &pos, line, sizeof(line))) {
        /* op,transport,rank_a,end_a,rank_b,end_b,size_bytes,a_to_b,b_to_a,both,latency_bytes,latency_us,wrong */
        if (split_csv(line, f, CSV_FIELDS_MAX) != 13 || strcmp(f[0], "p2p") != 0 || to_double(f[7], &ab) < 0 ||
            to_double(f[8], &ba) < 0 || tbm_parse_ll(f[12], 10, 0, 1LL << 40, &wrong) < 0)
            continue;
        rows++;
        k = find_cable(cables, n, f[3], f[5], &flip);
        if (k < 0) {
            snprintf(where, sizeof(where), "%.70s <-> %.70s", f[3], f[5]);
            tbm_finding_add(fs, TBM_SEV_WARNING, "cable-unplanned", where,
                            "run tbmesh inventory --last tbmesh.conf and install the tbmesh.conf it writes",
                            "the benchmark measured a link that tbmesh.conf does not list");
            continue;
        }
        cables[k].measured = 1;
        cables[k].gbs[flip] = ab;
        cables[k].gbs[!flip] = ba;
        cables[k].wrong += (long)wrong;
    }
    return rows;
}

void tbm_accept_refwork_free(tbm_accept_refwork_t *rw)
{
    free(rw->out);
    rw->out = NULL;
    rw->out_len = 0;
}

int tbm_accept_parse_refwork(const char *text, tbm_accept_refwork_t *rw, tbm_err_t *err)
{
    const char *sum = strstr(text, "macnode refwork: "), *on, *out = strstr(text, TBM_ACCEPT_RW_TAG), *sha;
    char *b64;
    size_t n;

    tbm_accept_refwork_free(rw);
    memset(rw, 0, sizeof(*rw));
    while (sum && !strstr(sum, " output sha256 "))
        sum = strstr(sum + 1, "macnode refwork: ");
    if (!sum || !(on = strstr(sum, " on ")) ||
        (sscanf(on, " on %d ranks: %lf s,", &rw->ranks, &rw->seconds) != 2 &&
         sscanf(on, " on %d rank: %lf s,", &rw->ranks, &rw->seconds) != 2))
        return tbm_errprintf(err, "no summary line of macnode refwork in its output");
    sha = strstr(sum, " output sha256 ") + 15;
    n = strspn(sha, "0123456789abcdef");
    if (n != 64)
        return tbm_errprintf(err, "macnode refwork's summary line has no SHA-256");
    memcpy(rw->sha256, sha, 64);
    rw->sha256[64] = '\0';
    rw->ran = 1;
    if (out) {
        out += strlen(TBM_ACCEPT_RW_TAG);
        n = strcspn(out, "\r\n");
        if ((b64 = strndup(out, n)) != NULL)
            rw->out = tbm_base64_decode(b64, &rw->out_len);
        free(b64);
    }
    return 0;
}

/* ---- each rank's environment ---- */

/* The value of `name` that rank printed after `tag` ("TAG RANK HOST NAME=VALUE" or "TAG RANK HOST NAME TEXT"),
 * and its host. Returns 1 when found. */
static int rank_value(const char *text, const char *tag, int rank, const char *name, char *host, size_t hlen,
                      char *val, size_t vlen)
{
    const char *s = text, *nl;
    char word[32], h[TBM_HOSTNAME_MAX], key[64];
    int r, used;

    for (; (s = strstr(s, tag)) != NULL; s = nl) {
        nl = strchr(s, '\n');
        if (!nl)
            nl = s + strlen(s);
        if (s != text && s[-1] != '\n')
            continue;
        s += strlen(tag);
        used = 0;
        if (sscanf(s, "%31s %63s %63[^= ]%n", word, h, key, &used) != 3 || small_int(word, &r) < 0 ||
            r != rank)
            continue;
        if (hlen)
            snprintf(host, hlen, "%s", h);
        if (!name)
            return 1;
        if (strcmp(key, name) != 0 || (s[used] != '=' && s[used] != ' '))
            continue;
        snprintf(val, vlen, "%.*s", (int)(nl - (s + used + 1)), s + used + 1);
        return 1;
    }
    return 0;
}

static void env_bad(tbm_findings_t *fs, int rank, const char *host, const char *code, const char *fix,
                    const char *what, const char *detail)
{
    char where[TBM_FINDING_WHERE_MAX];

    snprintf(where, sizeof(where), "rank %d (%s)", rank, host);
    tbm_finding_add(fs, TBM_SEV_ERROR, code, where, fix, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
}

/* One rank's variables against the backend's; returns 0 when right. */
static int check_rank(const char *text, tbm_backend_t b, int r, int nranks, tbm_findings_t *fs)
{
    static const char *fix = "run `macnode check` on that Mac and see the job's stderr; tbmesh.conf must list "
                             "the group's cables as the inventory found them";
    char host[TBM_HOSTNAME_MAX] = "?", v[ENV_VALUE_MAX], *file;
    int jaccl = b == TBM_BACKEND_JACCL || b == TBM_BACKEND_JACCL_RING, want, bad = 0;
    tbm_err_t err = { { 0 } };

    if (!rank_value(text, TBM_ACCEPT_ENV_TAG, r, NULL, host, sizeof(host), NULL, 0)) {
        env_bad(fs, r, "?", "env-missing", "see the job's output: the rank did not run", "no environment came back",
                NULL);
        return -1;
    }
    if (b != TBM_BACKEND_MPI) {
        if (!rank_value(text, TBM_ACCEPT_ENV_TAG, r, "MLX_RANK", host, sizeof(host), v, sizeof(v)) ||
            small_int(v, &want) < 0 || want != r)
            bad = (env_bad(fs, r, host, "env-rank", fix, "MLX_RANK is not the rank's number", NULL), -1);
    }
    if (jaccl != rank_value(text, TBM_ACCEPT_ENV_TAG, r, "MLX_IBV_DEVICES", host, sizeof(host), v, sizeof(v)) ||
        (b == TBM_BACKEND_RING) != rank_value(text, TBM_ACCEPT_ENV_TAG, r, "MLX_HOSTFILE", host, sizeof(host), v,
                                              sizeof(v)))
        bad = (env_bad(fs, r, host, "env-backend", fix,
                       "the rank's MLX variables are not exactly those of the backend", tbm_backend_name(b)), -1);
    file = malloc(TBM_MLX_TEXT_MAX);
    if (!file)
        return -1;
    if (b == TBM_BACKEND_RING) {
        tbm_mlx_hostfile_t *hf = malloc(sizeof(*hf));
        if (!rank_value(text, TBM_ACCEPT_FILE_TAG, r, "MLX_HOSTFILE", host, sizeof(host), file, TBM_MLX_TEXT_MAX) ||
            !hf || tbm_mlx_hostfile_parse(file, strlen(file), "MLX_HOSTFILE", hf, &err) < 0 || hf->nranks != nranks)
            bad = (env_bad(fs, r, host, "env-hostfile", fix, "the ring hostfile is missing or wrong",
                           err.msg[0] ? err.msg : "not one entry per rank"), -1);
        free(hf);
    } else if (jaccl) {
        tbm_mlx_devmatrix_t *m = malloc(sizeof(*m));
        tbm_mlx_addr_t addr;
        if (!rank_value(text, TBM_ACCEPT_FILE_TAG, r, "MLX_IBV_DEVICES", host, sizeof(host), file,
                        TBM_MLX_TEXT_MAX) ||
            !m || tbm_mlx_devmatrix_parse(file, strlen(file), "MLX_IBV_DEVICES", m, &err) < 0 || m->n != nranks ||
            (b == TBM_BACKEND_JACCL ? !m->is_mesh : !m->is_ring))
            bad = (env_bad(fs, r, host, "env-devices", fix, "the JACCL device matrix is missing or wrong",
                           err.msg[0] ? err.msg : b == TBM_BACKEND_JACCL ? "not a mesh of every rank"
                                                                       : "not a ring of every rank"), -1);
        tbm_errclear(&err);
        if (!rank_value(text, TBM_ACCEPT_ENV_TAG, r, "MLX_JACCL_COORDINATOR", host, sizeof(host), v, sizeof(v)) ||
            tbm_mlx_coordinator_parse(v, &addr, &err) < 0)
            bad = (env_bad(fs, r, host, "env-coordinator", fix, "MLX_JACCL_COORDINATOR is missing or wrong",
                           err.msg[0] ? err.msg : NULL), -1);
        free(m);
    }
    free(file);
    return bad;
}

int tbm_accept_check_env(const char *text, tbm_backend_t backend, int nranks, tbm_findings_t *fs)
{
    int r, ok = 0;

    for (r = 0; r < nranks && r < TBM_MLX_RING_MAX; r++)
        if (check_rank(text, backend, r, nranks, fs) == 0)
            ok++;
    return ok;
}

/* ---- refwork outputs ---- */

static int rw_header(const tbm_accept_refwork_t *rw, uint32_t *hdr, size_t *n, tbm_err_t *err, const char *which)
{
    size_t head = strlen(RW_MAGIC) + sizeof(uint32_t) * RW_HEADER_WORDS;

    if (!rw->out || rw->out_len < head || memcmp(rw->out, RW_MAGIC, strlen(RW_MAGIC)) != 0)
        return tbm_errprintf(err, "the %s run sent no output of macnode refwork", which);
    memcpy(hdr, rw->out + strlen(RW_MAGIC), sizeof(uint32_t) * RW_HEADER_WORDS);
    *n = (rw->out_len - head) / sizeof(float);
    if ((rw->out_len - head) % sizeof(float) || *n != (size_t)hdr[3] * hdr[4])
        return tbm_errprintf(err, "the %s run's output of macnode refwork is cut short", which);
    return 0;
}

int tbm_accept_refwork_compare(const tbm_accept_refwork_t *a, const tbm_accept_refwork_t *b, double rtol,
                               double atol, tbm_rw_diff_t *d, tbm_err_t *err)
{
    uint32_t ha[RW_HEADER_WORDS], hb[RW_HEADER_WORDS];
    size_t na, nb, head = strlen(RW_MAGIC) + sizeof(ha);
    float *ya, *yb;

    memset(d, 0, sizeof(*d));
    if (rw_header(a, ha, &na, err, "baseline") < 0 || rw_header(b, hb, &nb, err, "mesh") < 0)
        return -1;
    if (memcmp(ha, hb, sizeof(uint32_t) * 5) != 0)
        return tbm_errprintf(err, "the two runs of macnode refwork ran different networks (seed, layers, hidden, "
                                  "batch)");
    ya = malloc(na * sizeof(float));
    yb = malloc(nb * sizeof(float));
    if (!ya || !yb) {
        free(ya);
        free(yb);
        return tbm_errprintf(err, "out of memory");
    }
    memcpy(ya, a->out + head, na * sizeof(float));
    memcpy(yb, b->out + head, nb * sizeof(float));
    tbm_rw_compare(ya, yb, na, rtol, atol, d);
    free(ya);
    free(yb);
    return 0;
}
