/* slurmstate.c: Slurm's nodes and jobs from the text of scontrol, squeue and sacct (see slurmstate.h). */
#include "config.h"
#include "slurmstate.h"
#include "parse_text.h"
#include "record.h"
#include "scalar.h"

#include <time.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What may follow the reason on a one-line node (Slurm 23.02 and later print these after it). */
static const char *const after_reason[] = { "Comment=", "Extra=", "InstanceId=", "InstanceType=",
                                            "ReservationName=", NULL };

/* The first occurrence of " KEY" in s[0..n) (a key at a word's start), or NULL. */
static const char *find_key(const char *s, size_t n, const char *key)
{
    size_t k = strlen(key), i;

    for (i = 0; i + k < n; i++)
        if (s[i] == ' ' && !memcmp(s + i + 1, key, k))
            return s + i;
    return NULL;
}

/* True when s[0..n) is where the reason may end: the line's end, a key printed after it, or the start of its
 * next line (a reason of several lines goes on after eight spaces). */
static int reason_ends_here(const char *s, size_t n)
{
    int k;

    if (n == 0 || (n >= 8 && !memcmp(s, "        ", 8)))
        return 1;
    for (k = 0; after_reason[k]; k++)
        if (n > strlen(after_reason[k]) && s[0] == ' ' && !memcmp(s + 1, after_reason[k], strlen(after_reason[k])))
            return 1;
    return 0;
}

/* Length of Slurm's stamp " [user@time]" at s[0..n), or 0 when there is none. */
static size_t stamp_len(const char *s, size_t n)
{
    size_t i = 2, at = 0;

    if (n < 5 || s[0] != ' ' || s[1] != '[')
        return 0;
    for (; i < n && s[i] != ']'; i++) {
        if (s[i] == '@' && !at)
            at = i;
        else if (s[i] == '[' || (s[i] == ' ' && !at))   /* a user name has no blank; the time may ("Tue 12:00") */
            return 0;
    }
    return i < n && at > 2 && i > at + 1 ? i + 1 : 0;
}

/* The reason's length in v[0..n): up to Slurm's stamp where one ends it, else up to a key printed after it. */
static size_t reason_len(const char *v, size_t n)
{
    const char *end = NULL, *k;
    size_t i, sl;
    int j;

    for (i = 0; i < n; i++)
        if ((sl = stamp_len(v + i, n - i)) && reason_ends_here(v + i + sl, n - i - sl))
            return i;
    for (j = 0; after_reason[j]; j++)
        if ((k = find_key(v, n, after_reason[j])) && (!end || k < end))
            end = k;
    return end ? (size_t)(end - v) : n;
}

/* src[0..n) into dst (size bytes): control bytes and bytes that are not UTF-8 become '?'; cut at a
 * character's end. */
static void clean_copy(char *dst, size_t size, const char *src, size_t n)
{
    size_t i = 0, o = 0, seq;

    while (i < n && o + 1 < size) {
        seq = tbm_utf8_seq((const unsigned char *)src + i, n - i);
        if (seq == 0 || (seq == 1 && ((unsigned char)src[i] < 0x20 || src[i] == 0x7f))) {
            dst[o++] = '?';
            i++;
            continue;
        }
        if (o + seq + 1 > size)
            break;
        memcpy(dst + o, src + i, seq);
        o += seq;
        i += seq;
    }
    dst[o] = '\0';
}

/* The State token s[0..n) into n's state and flags. */
static void read_state(const char *s, size_t len, tbm_slurm_node_t *n)
{
    size_t base = 0, i, k;
    char token[TBM_SLURM_STATE_MAX * 8];

    while (base < len && s[base] != '+')   /* s is not NUL-terminated */
        base++;
    snprintf(token, sizeof(token), "%.*s", (int)(len < sizeof(token) ? len : sizeof(token) - 1), s);
    n->drain = strstr(token, "DRAIN") != NULL;
    n->not_responding = strstr(token, "NOT_RESPONDING") != NULL;
    for (i = k = 0; i < base && k + 1 < sizeof(n->state); i++) {
        if (s[i] == '*')   /* "IDLE*": not responding, as older releases and sinfo write it */
            n->not_responding = 1;
        else
            n->state[k++] = (char)tolower((unsigned char)s[i]);
    }
    n->state[k] = '\0';
}

int tbm_slurm_node_parse(const char *line, size_t len, tbm_slurm_node_t *n, tbm_err_t *err)
{
    const char *state, *reason;
    size_t nl, sl;

    memset(n, 0, sizeof(*n));
    if (len < 9 || memcmp(line, "NodeName=", 9))
        return tbm_errprintf(err, "not a node line of scontrol show node (no NodeName= at its start): '%.*s'",
                             tbm_show_len(line, len, 60), line);
    nl = tbm_span_spn(line + 9, len - 9, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
    if (nl == 0 || nl >= sizeof(n->name) || (9 + nl < len && line[9 + nl] != ' '))
        return tbm_errprintf(err, "scontrol's node line names no node Slurm could have: '%.*s'",
                             tbm_show_len(line, len, 60), line);
    memcpy(n->name, line + 9, nl);
    state = find_key(line, len, "State=");
    if (!state)
        return tbm_errprintf(err, "scontrol's line of node %s has no State=", n->name);
    state += 7;
    sl = tbm_span_spn(state, len - (size_t)(state - line), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_+*");
    if (sl == 0)
        return tbm_errprintf(err, "scontrol's line of node %s has an empty State=", n->name);
    read_state(state, sl, n);
    reason = find_key(state + sl, len - (size_t)(state + sl - line), "Reason=");
    if (reason) {
        reason += 8;
        clean_copy(n->reason, sizeof(n->reason), reason, reason_len(reason, len - (size_t)(reason - line)));
    }
    return 0;
}

/* Calls fn for each line of text[0..len) without its line end; stops at fn's -1. */
static int each_line(const char *text, size_t len, int (*fn)(const char *, size_t, void *), void *arg)
{
    const char *p = text, *end = text + len, *nl;
    size_t n;

    while (p < end) {
        nl = memchr(p, '\n', (size_t)(end - p));
        n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n && p[n - 1] == '\r')
            n--;
        if (fn(p, n, arg) < 0)
            return -1;
        p = nl ? nl + 1 : end;
    }
    return 0;
}

/* Notes a line that did not read: counted, the first one's reason kept. */
static void skip(size_t *skipped, char *first, size_t size, const char *why)
{
    if ((*skipped)++ == 0)
        snprintf(first, size, "%s", why);
}

/* v (n items of `size` bytes, room for *cap) with room for one more: v itself or a larger copy; NULL when
 * memory ran out (v is left as it was). */
static void *room_for_one(void *v, size_t n, size_t *cap, size_t size)
{
    size_t want = *cap ? *cap * 2 : 16;
    void *grown;

    if (n < *cap)
        return v;
    if ((grown = realloc(v, want * size)))
        *cap = want;
    return grown;
}

typedef struct {
    tbm_slurm_nodes_t *ns;
    size_t cap;
    tbm_err_t *err;
} nodes_ctx_t;

static int node_line(const char *line, size_t n, void *arg)
{
    nodes_ctx_t *c = arg;
    tbm_slurm_nodes_t *ns = c->ns;
    tbm_err_t why = { { 0 } };
    tbm_slurm_node_t *grown;
    tbm_span_t t = tbm_span_trim(line, n);

    if (t.n == 0 || tbm_span_eq(t, "No nodes in the system"))
        return 0;
    if (tbm_span_starts(t, "Node ") && t.n > 15 && !memcmp(t.p + t.n - 10, " not found", 10)) {
        ns->not_found++;
        return 0;
    }
    if (!(grown = room_for_one(ns->v, ns->n, &c->cap, sizeof(*grown))))
        return tbm_errprintf(c->err, "out of memory reading scontrol's nodes");
    ns->v = grown;
    if (tbm_slurm_node_parse(t.p, t.n, &ns->v[ns->n], &why) < 0)
        skip(&ns->skipped, ns->first_error, sizeof(ns->first_error), why.msg);
    else
        ns->n++;
    return 0;
}

int tbm_slurm_nodes_parse(const char *text, size_t len, tbm_slurm_nodes_t *out, tbm_err_t *err)
{
    nodes_ctx_t c = { out, 0, err };

    memset(out, 0, sizeof(*out));
    if (each_line(text, len, node_line, &c) < 0) {
        tbm_slurm_nodes_free(out);
        return -1;
    }
    return 0;
}

void tbm_slurm_nodes_free(tbm_slurm_nodes_t *ns)
{
    free(ns->v);
    ns->v = NULL;
    ns->n = 0;
}

const tbm_slurm_node_t *tbm_slurm_nodes_find(const tbm_slurm_nodes_t *ns, const char *name)
{
    size_t i;

    for (i = 0; i < ns->n; i++)
        if (!strcmp(ns->v[i].name, name))
            return &ns->v[i];
    return NULL;
}

typedef struct {
    tbm_slurm_jobs_t *js;
    size_t cap;
    tbm_err_t *err;
} jobs_ctx_t;

static int job_line(const char *line, size_t n, void *arg)
{
    jobs_ctx_t *c = arg;
    tbm_slurm_jobs_t *js = c->js;
    tbm_span_t rest = tbm_span_trim(line, n), id, list;
    tbm_err_t why = { { 0 } };
    tbm_slurm_job_t *grown, *j;
    char expr[4096];
    long long v;

    if (rest.n == 0)
        return 0;
    id = tbm_span_word(&rest);
    list = tbm_span_word(&rest);
    if (tbm_span_long(id, 1, UINT32_MAX, &v) < 0 || list.n == 0 || rest.n) {
        snprintf(why.msg, sizeof(why.msg), "not a line of squeue --format='%s' (JOBID NODES): '%.*s'",
                 TBM_SQUEUE_FORMAT, tbm_show_len(line, n, 60), line);
        skip(&js->skipped, js->first_error, sizeof(js->first_error), why.msg);
        return 0;
    }
    if (!(grown = room_for_one(js->v, js->n, &c->cap, sizeof(*grown))))
        return tbm_errprintf(c->err, "out of memory reading squeue's jobs");
    js->v = grown;
    j = &js->v[js->n];
    memset(j, 0, sizeof(*j));
    j->id = (uint32_t)v;
    if (tbm_span_copy(expr, sizeof(expr), list) < 0 ||
        tbm_hostlist_expand(expr, &j->nodes, &j->n_nodes, &why) < 0) {
        if (!why.msg[0])
            snprintf(why.msg, sizeof(why.msg), "a node list longer than %zu bytes", sizeof(expr) - 1);
        tbm_errprefix(&why, "job %u's nodes: ", j->id);
        skip(&js->skipped, js->first_error, sizeof(js->first_error), why.msg);
        return 0;
    }
    js->n++;
    return 0;
}

int tbm_slurm_jobs_parse(const char *text, size_t len, tbm_slurm_jobs_t *out, tbm_err_t *err)
{
    jobs_ctx_t c = { out, 0, err };

    memset(out, 0, sizeof(*out));
    if (each_line(text, len, job_line, &c) < 0) {
        tbm_slurm_jobs_free(out);
        return -1;
    }
    return 0;
}

void tbm_slurm_jobs_free(tbm_slurm_jobs_t *js)
{
    size_t i;

    for (i = 0; i < js->n; i++)
        tbm_hostlist_free(js->v[i].nodes, js->v[i].n_nodes);
    free(js->v);
    js->v = NULL;
    js->n = 0;
}

static const char *const final_states[] = { "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                                            "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL", "DEADLINE", NULL };

int tbm_slurm_state_final(const char *state)
{
    size_t n = strcspn(state, " ");
    int i;

    for (i = 0; final_states[i]; i++)
        if (strlen(final_states[i]) == n && !memcmp(state, final_states[i], n))
            return 1;
    return 0;
}

typedef struct {
    tbm_ended_jobs_t *e;
    size_t cap;
    long long until;      /* the latest end counted */
    tbm_err_t *err;
} ended_ctx_t;

long long tbm_sacct_time(const char *s, size_t n)
{
    char buf[32], *end;
    struct tm tm;

    if (n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    memset(&tm, 0, sizeof(tm));
    if (!(end = strptime(buf, "%Y-%m-%dT%H:%M:%S", &tm)) || *end)
        return -1;
    tm.tm_isdst = -1;
    return (long long)mktime(&tm);
}

static int ended_line(const char *line, size_t n, void *arg)
{
    ended_ctx_t *c = arg;
    tbm_ended_jobs_t *e = c->e;
    const char *f[5], *p = line, *bar;
    size_t flen[5], k, prefix = strlen(TBM_SUMMARY_PREFIX);
    char state[32];
    long long id, end;
    uint32_t *grown;

    if (tbm_span_trim(line, n).n == 0)
        return 0;
    for (k = 0; k < 5; k++) {   /* four bars; the comment is the rest */
        bar = k < 4 ? memchr(p, '|', (size_t)(line + n - p)) : NULL;
        f[k] = p;
        flen[k] = bar ? (size_t)(bar - p) : (size_t)(line + n - p);
        if (k < 4 && !bar) {
            char why[TBM_ERR_MAX];
            snprintf(why, sizeof(why), "not a line of sacct -P -o %s: '%.*s'", TBM_SACCT_ENDED_FIELDS,
                     tbm_show_len(line, n, 60), line);
            skip(&e->skipped, e->first_error, sizeof(e->first_error), why);
            return 0;
        }
        p = bar ? bar + 1 : p;
    }
    if (flen[4] < prefix || memcmp(f[4], TBM_SUMMARY_PREFIX, prefix) != 0)
        return 0;   /* not a Mac job */
    if (tbm_span_long((tbm_span_t){ f[0], flen[0] }, 1, UINT32_MAX - 1, &id) < 0) {
        char why[TBM_ERR_MAX];
        snprintf(why, sizeof(why), "a Mac job's id that is not a number: '%.*s'", tbm_show_len(f[0], flen[0], 30),
                 f[0]);
        skip(&e->skipped, e->first_error, sizeof(e->first_error), why);
        return 0;
    }
    snprintf(state, sizeof(state), "%.*s", (int)(flen[1] < sizeof(state) ? flen[1] : sizeof(state) - 1), f[1]);
    if (!tbm_slurm_state_final(state) || (end = tbm_sacct_time(f[2], flen[2])) < 0 || end > c->until)
        return 0;   /* not over, or over too lately to expect its record yet */
    if (flen[3] == 0 || (flen[3] == 13 && !memcmp(f[3], "None assigned", 13)))
        return 0;   /* never ran (cancelled while pending): `tbmesh repro sync` makes its record */
    for (k = 0; k < e->n; k++)
        if (e->id[k] == (uint32_t)id)
            return 0;
    if (!(grown = room_for_one(e->id, e->n, &c->cap, sizeof(*grown))))
        return tbm_errprintf(c->err, "out of memory reading sacct's jobs");
    e->id = grown;
    e->id[e->n++] = (uint32_t)id;
    return 0;
}

int tbm_sacct_ended_parse(const char *text, size_t len, long long now, int grace_s, tbm_ended_jobs_t *out,
                          tbm_err_t *err)
{
    ended_ctx_t c = { out, 0, now - grace_s, err };

    memset(out, 0, sizeof(*out));
    if (each_line(text, len, ended_line, &c) < 0) {
        tbm_ended_jobs_free(out);
        return -1;
    }
    return 0;
}

void tbm_ended_jobs_free(tbm_ended_jobs_t *e)
{
    free(e->id);
    e->id = NULL;
    e->n = 0;
}
