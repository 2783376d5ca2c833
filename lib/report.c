/* report.c: the usage report's aggregation: each job and node event folded into fixed-size totals per
 * group, per Mac group and per time bucket as it streams by; nothing is kept per job. */
#include "config.h"
#include "report.h"
#include "hostlist.h"
#include "scalar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMELINE_MAX_BUCKETS 62
#define DEFAULT_TOP 10

typedef struct dim_table {
    tbm_ragg_t *aggs;
    size_t n, cap;
    size_t *index;                /* open addressing: 1 + position in aggs, 0 empty */
    size_t index_cap;             /* a power of two, at least twice n */
} dim_table_t;

typedef struct ev {
    int node;                     /* index into conf nodes, -1 when not a Mac */
    time_t start, end;
} ev_t;

struct tbm_report {
    tbm_report_opts_t o;
    time_t horizon;               /* min(until, now): what "still" is clipped to */
    dim_table_t dims[TBM_RDIM_N];
    /* Mac groups */
    tbm_rgroup_use_t *use;        /* one per conf group */
    int *node_count;              /* scratch: a job's nodes per series (n_groups + 1) */
    ev_t *events;
    size_t n_events, cap_events;
    /* failures */
    tbm_rfailure_t *fail;
    size_t n_fail;
    /* timeline */
    size_t n_buckets, n_series;
    time_t bucket_s;
    const char **series_names;
    uint64_t *series;
    char **notes;
    size_t n_notes;
    tbm_rtrust_t trust;           /* Mac jobs whose record CPU use (or GPU and energy) was left out */
    long trust_note;              /* the index of the note about the CPU use, -1 before the first */
    long gpu_note;                /* ... about the GPU and energy */
};

/* ---- names ---- */

static const char *const dim_names[TBM_RDIM_N] = { "kind", "group", "account", "user", "partition",
                                                    "backend", "state" };
static const char *const state_names[TBM_RST_N] = { "completed", "failed", "cancelled", "timeout",
                                                     "node_fail", "out_of_memory", "pending", "running",
                                                     "other" };
static const char *const slurm_states[TBM_RST_N] = { "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                                                      "NODE_FAIL", "OUT_OF_MEMORY", "PENDING", "RUNNING",
                                                      NULL };
static const char *const size_names[TBM_RSIZE_N] = { "nodes_1", "nodes_2", "nodes_3_4", "nodes_5_8",
                                                      "nodes_9_up" };

const char *tbm_rdim_name(tbm_rdim_t d) { return d < TBM_RDIM_N ? dim_names[d] : "?"; }
const char *tbm_rstate_name(tbm_rstate_t s) { return s < TBM_RST_N ? state_names[s] : "?"; }
const char *tbm_rsize_name(int i) { return i >= 0 && i < TBM_RSIZE_N ? size_names[i] : "?"; }

int tbm_rdim_parse(const char *s, tbm_rdim_t *out)
{
    int i;

    for (i = 0; s && i < TBM_RDIM_N; i++)
        if (!strcmp(s, dim_names[i])) {
            *out = (tbm_rdim_t)i;
            return 0;
        }
    return -1;
}

tbm_rstate_t tbm_rstate_of(const char *st)
{
    int i;

    for (i = 0; st && i < TBM_RST_N; i++)
        if (slurm_states[i] && !strcmp(st, slurm_states[i]))
            return (tbm_rstate_t)i;
    return TBM_RST_OTHER;
}

static int size_class(uint32_t nodes)
{
    return nodes <= 1 ? 0 : nodes == 2 ? 1 : nodes <= 4 ? 2 : nodes <= 8 ? 3 : 4;
}

/* ---- histogram ---- */

#define RHIST_BUCKETS (TBM_RHIST_EXACT + (TBM_RHIST_BITS - 10) * TBM_RHIST_SUB)

static size_t rhist_bucket(uint64_t v)
{
    int k = 10;

    if (v < TBM_RHIST_EXACT)
        return (size_t)v;
    if (v >= (1ULL << TBM_RHIST_BITS))
        v = (1ULL << TBM_RHIST_BITS) - 1;
    while (v >= (2ULL << k))
        k++;
    return TBM_RHIST_EXACT + (size_t)(k - 10) * TBM_RHIST_SUB + (size_t)((v - (1ULL << k)) >> (k - 6));
}

static uint64_t rhist_low(size_t b)
{
    size_t k;

    if (b < TBM_RHIST_EXACT)
        return b;
    k = 10 + (b - TBM_RHIST_EXACT) / TBM_RHIST_SUB;
    return (1ULL << k) + ((uint64_t)((b - TBM_RHIST_EXACT) % TBM_RHIST_SUB) << (k - 6));
}

int tbm_rhist_init(tbm_rhist_t *h)
{
    h->n = 0;
    h->count = calloc(RHIST_BUCKETS, sizeof(*h->count));
    return h->count ? 0 : -1;
}

void tbm_rhist_free(tbm_rhist_t *h)
{
    free(h->count);
    h->count = NULL;
}

void tbm_rhist_add(tbm_rhist_t *h, uint64_t v)
{
    h->count[rhist_bucket(v)]++;
    h->n++;
}

uint64_t tbm_rhist_percentile(const tbm_rhist_t *h, int p)
{
    uint64_t rank, seen = 0;
    size_t b;

    if (!h->n)
        return 0;
    rank = (h->n * (uint64_t)p + 99) / 100;
    if (rank < 1)
        rank = 1;
    for (b = 0; b < RHIST_BUCKETS; b++) {
        seen += h->count[b];
        if (seen >= rank)
            return rhist_low(b);
    }
    return rhist_low(RHIST_BUCKETS - 1);
}

/* ---- groups of one dimension ---- */

static size_t hash_name(const char *s)
{
    size_t h = 1469598103934665603ULL;

    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}

static int dim_rehash(dim_table_t *t, size_t cap)
{
    size_t *idx = calloc(cap, sizeof(*idx)), i, h;

    if (!idx)
        return -1;
    for (i = 0; i < t->n; i++) {
        for (h = hash_name(t->aggs[i].name) & (cap - 1); idx[h]; h = (h + 1) & (cap - 1))
            ;
        idx[h] = i + 1;
    }
    free(t->index);
    t->index = idx;
    t->index_cap = cap;
    return 0;
}

static tbm_ragg_t *dim_find(const dim_table_t *t, const char *name)
{
    size_t h;

    if (!t->index_cap)
        return NULL;
    for (h = hash_name(name) & (t->index_cap - 1); t->index[h]; h = (h + 1) & (t->index_cap - 1))
        if (!strcmp(t->aggs[t->index[h] - 1].name, name))
            return &t->aggs[t->index[h] - 1];
    return NULL;
}

static tbm_ragg_t *dim_get(dim_table_t *t, const char *name)
{
    tbm_ragg_t *a = dim_find(t, name);
    size_t h;

    if (a)
        return a;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        tbm_ragg_t *na = realloc(t->aggs, cap * sizeof(*na));
        if (!na)
            return NULL;
        t->aggs = na;
        t->cap = cap;
    }
    if (2 * (t->n + 1) > t->index_cap && dim_rehash(t, t->index_cap ? t->index_cap * 2 : 64) < 0)
        return NULL;
    a = &t->aggs[t->n];
    memset(a, 0, sizeof(*a));
    if (!(a->name = strdup(name)) || tbm_rhist_init(&a->wait) < 0) {
        free(a->name);
        return NULL;
    }
    for (h = hash_name(name) & (t->index_cap - 1); t->index[h]; h = (h + 1) & (t->index_cap - 1))
        ;
    t->index[h] = ++t->n;
    return a;
}

static void dim_free(dim_table_t *t)
{
    size_t i;

    for (i = 0; i < t->n; i++) {
        free(t->aggs[i].name);
        tbm_rhist_free(&t->aggs[i].wait);
    }
    free(t->aggs);
    free(t->index);
}

static int agg_cmp(const void *a, const void *b)
{
    return strcmp(((const tbm_ragg_t *)a)->name, ((const tbm_ragg_t *)b)->name);
}

/* ---- the report ---- */

void tbm_report_free(tbm_report_t *r)
{
    size_t i;

    if (!r)
        return;
    for (i = 0; i < TBM_RDIM_N; i++)
        dim_free(&r->dims[i]);
    for (i = 0; i < r->n_fail; i++) {
        free(r->fail[i].kind);
        free(r->fail[i].reason);
    }
    for (i = 0; i < r->n_notes; i++)
        free(r->notes[i]);
    free(r->notes);
    free(r->fail);
    free(r->use);
    free(r->node_count);
    free(r->events);
    free(r->series_names);
    free(r->series);
    free(r);
}

static int timeline_init(tbm_report_t *r)
{
    const tbm_conf_t *c = r->o.conf;
    time_t len = r->o.period.until - r->o.period.since;
    size_t i;

    r->bucket_s = len <= TIMELINE_MAX_BUCKETS * 86400 ? 86400 : len <= TIMELINE_MAX_BUCKETS * 7 * 86400
                  ? 7 * 86400 : 30 * 86400;
    if (len < 2 * 86400) {   /* a short period: the smallest of these that gives at most 48 buckets */
        static const time_t sizes[] = { 60, 300, 600, 900, 1800, 3600 };
        for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
            if ((r->bucket_s = sizes[i]) * 48 >= len)
                break;
    }
    r->n_buckets = (size_t)((len + r->bucket_s - 1) / r->bucket_s);
    if (r->n_buckets > TIMELINE_MAX_BUCKETS) {
        r->bucket_s = (len + TIMELINE_MAX_BUCKETS - 1) / TIMELINE_MAX_BUCKETS;
        r->n_buckets = (size_t)((len + r->bucket_s - 1) / r->bucket_s);
    }
    r->n_series = c->n_groups + 1;
    r->series_names = calloc(r->n_series, sizeof(*r->series_names));
    r->series = calloc(r->n_series * r->n_buckets, sizeof(*r->series));
    if (!r->series_names || !r->series)
        return -1;
    for (i = 0; i < c->n_groups; i++)
        r->series_names[i] = c->groups[i].caps.name;
    r->series_names[c->n_groups] = "linux";
    return 0;
}

static const tbm_conf_t empty_conf;

tbm_report_t *tbm_report_new(const tbm_report_opts_t *o, tbm_err_t *err)
{
    tbm_report_t *r = calloc(1, sizeof(*r));
    size_t i;

    if (!r)
        goto oom;
    r->o = *o;
    if (!r->o.conf)
        r->o.conf = &empty_conf;
    if (r->o.top <= 0)
        r->o.top = DEFAULT_TOP;
    r->horizon = o->now < o->period.until ? o->now : o->period.until;
    r->trust_note = r->gpu_note = -1;
    r->use = calloc(r->o.conf->n_groups + 1, sizeof(*r->use));
    r->node_count = calloc(r->o.conf->n_groups + 1, sizeof(*r->node_count));
    if (!r->use || !r->node_count || timeline_init(r) < 0)
        goto oom;
    for (i = 0; i < r->o.conf->n_groups; i++) {
        r->use[i].name = r->o.conf->groups[i].caps.name;
        r->use[i].nodes = (int)r->o.conf->groups[i].caps.n_nodes;
    }
    return r;
oom:
    tbm_report_free(r);
    tbm_errprintf(err, "out of memory starting the report");
    return NULL;
}

const tbm_report_opts_t *tbm_report_opts(const tbm_report_t *r) { return &r->o; }

int tbm_report_note(tbm_report_t *r, const char *note, tbm_err_t *err)
{
    char **n = realloc(r->notes, (r->n_notes + 1) * sizeof(*n));

    if (!n)
        return tbm_errprintf(err, "out of memory");
    r->notes = n;
    if (!(n[r->n_notes] = strdup(note)))
        return tbm_errprintf(err, "out of memory");
    r->n_notes++;
    return 0;
}

/* A note on the Mac jobs whose record figures were left out (*which: its index): added with the first, then
 * kept up to date. */
static int trust_note(tbm_report_t *r, const char *text, long *which, tbm_err_t *err)
{
    char *dup;

    if (*which < 0) {
        if (tbm_report_note(r, text, err) < 0)
            return -1;
        *which = (long)r->n_notes - 1;
        return 0;
    }
    if (!(dup = strdup(text)))
        return tbm_errprintf(err, "out of memory");
    free(r->notes[*which]);
    r->notes[*which] = dup;
    return 0;
}

/* A Mac job's record figures as the store says (the coverage hook) and as the report may count them, into mj;
 * the notes on what was left out kept up to date. The GPU and energy figures are the whole job's: the share
 * of its run within the period counts (run of whole seconds), as for the hours. */
static int mac_figures(tbm_report_t *r, const tbm_rjob_t *j, double whole, uint64_t run, tbm_rjob_t *mj,
                       tbm_err_t *err)
{
    double share = whole > 0 && (double)run < whole ? (double)run / whole : 1;
    uint64_t left_out = r->trust.unverified + r->trust.over, gpu_left = r->trust.gpu_unverified;
    char text[1024];
    double gpu, energy;

    *mj = *j;
    if (r->o.coverage) {
        tbm_ruse_t use = { -1, 0, 0, 0, 0 };
        mj->coverage = r->o.coverage(r->o.coverage_ctx, j->id, &use);
        mj->rec_cpu_used_s = use.cpu_used_s;
        mj->rec_gpu = use.gpu, mj->rec_gpu_s = use.gpu_s;
        mj->rec_energy = use.energy, mj->rec_energy_j = use.energy_j;
    }
    mj->rec_cpu_used_s = tbm_rtrust_cpu(&r->trust, mj, whole);
    tbm_rtrust_gpu(&r->trust, mj, &gpu, &energy);
    mj->rec_gpu = gpu >= 0, mj->rec_gpu_s = gpu * share;
    mj->rec_energy = energy >= 0, mj->rec_energy_j = energy * share;
    if (r->trust.unverified + r->trust.over != left_out) {
        tbm_rtrust_note(&r->trust, text, sizeof(text));
        if (trust_note(r, text, &r->trust_note, err) < 0)
            return -1;
    }
    if (r->trust.gpu_unverified != gpu_left) {
        tbm_rtrust_gpu_note(&r->trust, text, sizeof(text));
        if (trust_note(r, text, &r->gpu_note, err) < 0)
            return -1;
    }
    return 0;
}

static int add_failure(tbm_report_t *r, const char *kind, const char *reason, uint64_t node_s)
{
    size_t i;
    tbm_rfailure_t *f;

    for (i = 0; i < r->n_fail; i++)
        if (!strcmp(r->fail[i].kind, kind) && !strcmp(r->fail[i].reason, reason)) {
            r->fail[i].count++;
            r->fail[i].node_s += node_s;
            return 0;
        }
    if (!(f = realloc(r->fail, (r->n_fail + 1) * sizeof(*f))))
        return -1;
    r->fail = f;
    f = &f[r->n_fail];
    f->kind = strdup(kind);
    f->reason = strdup(reason);
    f->count = 1;
    f->node_s = node_s;
    if (!f->kind || !f->reason) {
        free(f->kind);
        free(f->reason);
        return -1;
    }
    r->n_fail++;
    return 0;
}

/* The job's nodes counted per series (Mac group, or linux last) into r->node_count; the first Mac group
 * seen in *first (-1 for none). */
static int count_nodes(tbm_report_t *r, const tbm_rjob_t *j, int *first, tbm_err_t *err)
{
    const tbm_conf_t *c = r->o.conf;
    char **names = NULL;
    size_t n = 0, i;

    memset(r->node_count, 0, (c->n_groups + 1) * sizeof(*r->node_count));
    *first = -1;
    if (!j->alloc_nodes || !j->nodes || !*j->nodes || !strcmp(j->nodes, "None assigned"))
        return 0;
    if (tbm_hostlist_expand(j->nodes, &names, &n, err) < 0)
        return tbm_errprefix(err, "job %u: nodes '%s': ", j->id, j->nodes);
    for (i = 0; i < n; i++) {
        int k = tbm_conf_node(c, names[i]);
        int g = k >= 0 ? c->nodes[k].group : (int)c->n_groups;
        r->node_count[g]++;
        if (k >= 0 && *first < 0)
            *first = g;
    }
    tbm_hostlist_free(names, n);
    return 0;
}

static void add_timeline(tbm_report_t *r, time_t s, time_t e)
{
    size_t g, b;

    for (b = (size_t)((s - r->o.period.since) / r->bucket_s); b < r->n_buckets && s < e; b++) {
        time_t bend = r->o.period.since + (time_t)(b + 1) * r->bucket_s, piece = (bend < e ? bend : e) - s;
        for (g = 0; g < r->n_series; g++)
            r->series[g * r->n_buckets + b] += (uint64_t)piece * (uint64_t)r->node_count[g];
        s += piece;
    }
}

static void agg_add(tbm_ragg_t *a, const tbm_rjob_t *j, tbm_rstate_t st, int mac, uint64_t run,
                    double whole_s)
{
    a->jobs++;
    a->state[st]++;
    a->node_s += run * j->alloc_nodes;
    a->cpu_s += run * j->alloc_cpus;
    a->tbmesh_s += run * j->tbmesh_units;
    if (j->alloc_nodes && j->start) {
        a->size[size_class(j->alloc_nodes)]++;
        a->ran++;
        tbm_rhist_add(&a->wait, j->start > j->submit ? (uint64_t)(j->start - j->submit) : 0);
        a->eff_alloc_s[mac] += whole_s * j->alloc_cpus;
        a->eff_used_s[mac] += j->cpu_used_s;
        if (mac && j->rec_cpu_used_s >= 0) {
            a->rec_alloc_s += whole_s * j->alloc_cpus;
            a->rec_used_s += j->rec_cpu_used_s;
        }
    }
    if (mac) {
        a->mac_jobs++;
        a->rec_present += j->coverage == TBM_COV_PRESENT || j->coverage == TBM_COV_VERIFIED;
        a->rec_verified += j->coverage == TBM_COV_VERIFIED;
        a->mac_cpu_s += (double)run * j->alloc_cpus;
        if (j->rec_gpu)
            a->gpu_jobs++, a->gpu_s += j->rec_gpu_s;
        if (j->rec_energy)
            a->energy_jobs++, a->energy_j += j->rec_energy_j;
    }
}

static const char *job_failure(tbm_rstate_t st)
{
    switch (st) {
    case TBM_RST_NODE_FAIL: return "node failure";
    case TBM_RST_TIMEOUT: return "timeout";
    case TBM_RST_CANCELLED: return "cancelled";
    case TBM_RST_FAILED: return "failed";
    case TBM_RST_OUT_OF_MEMORY: return "out of memory";
    default: return NULL;
    }
}

int tbm_report_add_job(tbm_report_t *r, const tbm_rjob_t *j, tbm_err_t *err)
{
    const tbm_conf_t *c = r->o.conf;
    tbm_rstate_t st = tbm_rstate_of(j->state);
    time_t s = 0, e = 0, end = j->end ? j->end : r->o.now;
    uint64_t run = 0;
    double whole = 0;
    const char *key[TBM_RDIM_N];
    tbm_rjob_t mj;
    int first, mac, d;
    size_t g;

    if (count_nodes(r, j, &first, err) < 0)
        return -1;
    mac = first >= 0 || (!j->alloc_nodes && j->tbmesh_units > 0);
    if (r->o.only_group && (first < 0 || strcmp(c->groups[first].caps.name, r->o.only_group)))
        return 0;
    if (j->start && j->alloc_nodes) {
        s = j->start > r->o.period.since ? j->start : r->o.period.since;
        e = end < r->horizon ? end : r->horizon;
        run = e > s ? (uint64_t)(e - s) : 0;
        whole = end > j->start ? (double)(end - j->start) : 0;
    }
    if (mac) {
        if (mac_figures(r, j, whole, run, &mj, err) < 0)
            return -1;
        j = &mj;
    }
    key[TBM_RDIM_KIND] = mac ? "mac" : "linux";
    key[TBM_RDIM_GROUP] = first >= 0 ? c->groups[first].caps.name : mac ? "(none)" : "linux";
    key[TBM_RDIM_ACCOUNT] = j->account && *j->account ? j->account : "(none)";
    key[TBM_RDIM_USER] = j->user && *j->user ? j->user : "(none)";
    key[TBM_RDIM_PARTITION] = j->partition && *j->partition ? j->partition : "(none)";
    key[TBM_RDIM_BACKEND] = !mac ? "-" : j->backend && *j->backend ? j->backend : "auto";
    key[TBM_RDIM_STATE] = tbm_rstate_name(st);
    for (d = 0; d < TBM_RDIM_N; d++) {
        tbm_ragg_t *a = dim_get(&r->dims[d], key[d]);
        if (!a)
            return tbm_errprintf(err, "out of memory adding job %u", j->id);
        agg_add(a, j, st, mac, run, whole);
    }
    if (run) {
        add_timeline(r, s, e);
        for (g = 0; g < c->n_groups; g++)
            r->use[g].alloc_s += run * (uint64_t)r->node_count[g];
    }
    for (g = 0; j->alloc_nodes && g < c->n_groups; g++)
        if (r->node_count[g] > 0 && (size_t)r->node_count[g] == c->groups[g].caps.n_nodes)
            r->use[g].whole_group_jobs++;
    if (job_failure(st) && add_failure(r, "job", job_failure(st), run * j->alloc_nodes) < 0)
        return tbm_errprintf(err, "out of memory adding job %u", j->id);
    return 0;
}

/* "drain: tbmesh cable-missing" for "tbmesh: cable-missing at mac01:en2 ...". */
static void event_reason(const char *reason, char *buf, size_t len)
{
    const char *p;
    size_t n;

    if (reason && !strncmp(reason, "tbmesh: ", 8)) {
        p = reason + 8;
        n = strcspn(p, " :,");
        snprintf(buf, len, "drain: tbmesh %.*s", (int)(n < 64 ? n : 64), n ? p : "other");
    } else {
        snprintf(buf, len, "down or drain: other reason");
    }
}

int tbm_report_add_event(tbm_report_t *r, const tbm_revent_t *e, tbm_err_t *err)
{
    time_t s = e->start > r->o.period.since ? e->start : r->o.period.since;
    time_t end = e->end && e->end < r->horizon ? e->end : r->horizon;
    char why[128];
    ev_t *n;

    if (!e->node || end <= s)
        return 0;
    event_reason(e->reason, why, sizeof(why));
    if (add_failure(r, "node", why, (uint64_t)(end - s)) < 0)
        return tbm_errprintf(err, "out of memory adding a node event");
    if (tbm_conf_node(r->o.conf, e->node) < 0)
        return 0;
    if (r->n_events == r->cap_events) {
        size_t cap = r->cap_events ? r->cap_events * 2 : 64;
        if (!(n = realloc(r->events, cap * sizeof(*n))))
            return tbm_errprintf(err, "out of memory adding a node event");
        r->events = n;
        r->cap_events = cap;
    }
    r->events[r->n_events].node = tbm_conf_node(r->o.conf, e->node);
    r->events[r->n_events].start = s;
    r->events[r->n_events].end = end;
    r->n_events++;
    return 0;
}

/* ---- read access ---- */

size_t tbm_report_groups(tbm_report_t *r, tbm_rdim_t d, const tbm_ragg_t **out)
{
    dim_table_t *t = &r->dims[d];

    if (t->n)
        qsort(t->aggs, t->n, sizeof(*t->aggs), agg_cmp);
    if (t->index_cap)
        dim_rehash(t, t->index_cap);      /* same size: cannot fail for want of a larger table */
    *out = t->aggs;
    return t->n;
}

const tbm_ragg_t *tbm_report_group(const tbm_report_t *r, tbm_rdim_t d, const char *name)
{
    return dim_find(&r->dims[d], name);
}

static int ev_cmp(const void *a, const void *b)
{
    const ev_t *x = a, *y = b;

    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

size_t tbm_report_group_use(tbm_report_t *r, const tbm_rgroup_use_t **out)
{
    const tbm_conf_t *c = r->o.conf;
    uint64_t span = r->horizon > r->o.period.since ? (uint64_t)(r->horizon - r->o.period.since) : 0;
    size_t g, i;

    for (g = 0; g < c->n_groups; g++) {
        r->use[g].unavailable_s = 0;
        r->use[g].capacity_s = span * c->groups[g].caps.n_nodes;
    }
    /* per node, merge its overlapping events, then charge them to its group */
    if (r->n_events)
        qsort(r->events, r->n_events, sizeof(*r->events), ev_cmp);
    for (i = 0; i < r->n_events;) {
        int node = r->events[i].node;
        time_t s = r->events[i].start, e = r->events[i].end;
        uint64_t down = 0;
        for (; i < r->n_events && r->events[i].node == node; i++) {
            if (r->events[i].start > e) {
                down += (uint64_t)(e - s);
                s = r->events[i].start;
                e = r->events[i].end;
            } else if (r->events[i].end > e) {
                e = r->events[i].end;
            }
        }
        down += (uint64_t)(e - s);
        g = (size_t)c->nodes[node].group;
        r->use[g].unavailable_s += down;
        r->use[g].capacity_s -= down < r->use[g].capacity_s ? down : r->use[g].capacity_s;
    }
    *out = r->use;
    return c->n_groups;
}

size_t tbm_report_failures(const tbm_report_t *r, const tbm_rfailure_t **out)
{
    *out = r->fail;
    return r->n_fail;
}

size_t tbm_report_notes(const tbm_report_t *r, const char *const **out)
{
    *out = (const char *const *)r->notes;
    return r->n_notes;
}

void tbm_report_timeline(const tbm_report_t *r, size_t *n_buckets, time_t *bucket_s, size_t *n_series,
                         const char *const **series_names, const uint64_t **series)
{
    *n_buckets = r->n_buckets;
    *bucket_s = r->bucket_s;
    *n_series = r->n_series;
    *series_names = r->series_names;
    *series = r->series;
}

int tbm_tres_count(const char *tres, int id, uint64_t *out)
{
    const char *p = tres;

    *out = 0;
    while (p && *p) {
        char key[16], val[24];
        size_t kl = strcspn(p, "="), vl;
        long long k;
        uint64_t v;
        if (p[kl] != '=' || kl == 0 || kl >= sizeof(key))
            return -1;
        vl = strcspn(p + kl + 1, ",");
        if (vl == 0 || vl >= sizeof(val))
            return -1;
        memcpy(key, p, kl);
        key[kl] = 0;
        memcpy(val, p + kl + 1, vl);
        val[vl] = 0;
        if (tbm_parse_ll(key, 10, 1, 1000000000LL, &k) < 0 || tbm_parse_u64(val, UINT64_MAX, &v) < 0)
            return -1;
        if (k == id)
            *out = v;
        p += kl + 1 + vl;
        if (*p == ',')
            p++;
    }
    return 0;
}
