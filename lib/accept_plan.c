/* accept_plan.c: the acceptance plan file (tbmesh-accept(1), PLAN FILE): `key = value` lines saying the task,
 * model, data and expected output, the backend wanted and the tolerances of the comparisons. Every bad line is
 * reported with its line number and what to write instead; the rest of the file is still read. And the shell
 * words that run the plan's reference workload on a Mac. */
#include "accept.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scalar.h"

#define PLAN_LINE_MAX 1024

typedef struct plan_parser {
    const char *file;
    int line;
    tbm_accept_plan_t *p;
    tbm_findings_t *errors;
    size_t n_errors;
    unsigned seen;               /* keys already given (bit per key) */
    int seen_line[32];
} plan_parser_t;

typedef int (*plan_setter_t)(plan_parser_t *pp, const char *key, const char *val);

typedef struct plan_key {
    const char *name;
    plan_setter_t set;
    const char *example;         /* a good line, for messages */
} plan_key_t;

static int bad(plan_parser_t *pp, const char *fix, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int bad(plan_parser_t *pp, const char *fix, const char *fmt, ...)
{
    char where[TBM_FINDING_WHERE_MAX], what[TBM_FINDING_TEXT_MAX];
    va_list ap;

    snprintf(where, sizeof(where), "%.120s:%d", pp->file, pp->line);
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    tbm_finding_add(pp->errors, TBM_SEV_ERROR, "plan-error", where, fix, "%s", what);
    pp->n_errors++;
    return -1;
}

void tbm_accept_plan_defaults(tbm_accept_plan_t *p)
{
    memset(p, 0, sizeof(*p));
    p->backend = TBM_BACKEND_JACCL;
    p->rtol = 1e-4;
    p->atol = 1e-6;
    p->link_share = 0.5;
    p->busbw_share = 0.5;
    p->refwork.layers = 4;
    p->refwork.hidden = 1024;
    p->refwork.batch = 16;
    p->refwork.seed = 1;
    p->sweep_max = 16u << 20;
    p->p2p_bytes = 16u << 20;
}

/* ---- values ---- */

static int set_text(plan_parser_t *pp, const char *key, const char *val)
{
    char *dst = !strcasecmp(key, "task") ? pp->p->task : !strcasecmp(key, "model") ? pp->p->model
              : !strcasecmp(key, "data") ? pp->p->data : pp->p->expected;

    if (strlen(val) >= TBM_ACCEPT_TEXT_MAX)
        return bad(pp, "say it in fewer words, or point to a file or URL", "%s is longer than %d characters", key,
                   TBM_ACCEPT_TEXT_MAX - 1);
    snprintf(dst, TBM_ACCEPT_TEXT_MAX, "%s", val);
    return 0;
}

static int set_backend(plan_parser_t *pp, const char *key, const char *val)
{
    tbm_err_t err = { { 0 } };

    (void)key;
    if (tbm_backend_parse(val, &pp->p->backend, &err) < 0)
        return bad(pp, "write e.g. backend = jaccl", "backend = %s", err.msg);
    return 0;
}

/* A number in [lo, hi]. */
static int number(const char *s, double lo, double hi, double *out)
{
    char *end;
    double v;

    if (!*s || isspace((unsigned char)*s))
        return -1;
    v = strtod(s, &end);
    if (*end || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}

static int set_tolerance(plan_parser_t *pp, const char *key, const char *val)
{
    const char *fix = "write tolerance = bitwise, or tolerance = RTOL or RTOL,ATOL (numbers from 0 to 1), "
                      "e.g. tolerance = 1e-4,1e-6";
    char rtol[64];
    const char *comma = strchr(val, ',');
    double r, a = pp->p->atol;

    (void)key;
    if (!strcasecmp(val, "bitwise")) {
        pp->p->bitwise = 1;
        pp->p->rtol = pp->p->atol = 0;
        return 0;
    }
    snprintf(rtol, sizeof(rtol), "%.*s", comma ? (int)(comma - val) : (int)strlen(val), val);
    if (number(rtol, 0, 1, &r) < 0 || (comma && number(comma + 1, 0, 1, &a) < 0))
        return bad(pp, fix, "tolerance = %.60s is not bitwise nor one or two numbers from 0 to 1", val);
    pp->p->bitwise = 0;
    pp->p->rtol = r;
    pp->p->atol = a;
    return 0;
}

static int set_share(plan_parser_t *pp, const char *key, const char *val)
{
    double v;

    if (number(val, 0, 1, &v) < 0)
        return bad(pp, "give a share from 0 to 1, e.g. 0.5 for half", "%s = %.60s is not a number from 0 to 1", key,
                   val);
    *(!strcasecmp(key, "link_share") ? &pp->p->link_share : &pp->p->busbw_share) = v;
    return 0;
}

static int set_refwork(plan_parser_t *pp, const char *key, const char *val)
{
    static const struct { const char *key; int max; } lim[] = {
        { "refwork_layers", 64 }, { "refwork_hidden", 16384 }, { "refwork_batch", 4096 },
    };
    uint64_t seed;
    int i, v;

    if (!strcasecmp(key, "refwork_seed")) {
        if (tbm_parse_u64(val, UINT64_MAX, &seed) < 0)
            return bad(pp, "give a whole number, e.g. refwork_seed = 1", "refwork_seed = %.60s is not a whole number",
                       val);
        pp->p->refwork.seed = seed;
        return 0;
    }
    for (i = 0; strcasecmp(key, lim[i].key) != 0; i++)
        ;
    if (tbm_parse_uint(val, lim[i].max, &v) < 0 || v < 1) {
        char fix[80];
        snprintf(fix, sizeof(fix), "give a whole number from 1 to %d", lim[i].max);
        return bad(pp, fix, "%s = %.60s is not a whole number from 1 to %d", key, val, lim[i].max);
    }
    *(i == 0 ? &pp->p->refwork.layers : i == 1 ? &pp->p->refwork.hidden : &pp->p->refwork.batch) = v;
    return 0;
}

/* A size: digits and one optional K, M or G (powers of 1024), from 8 bytes to 1 GiB. */
static int set_size(plan_parser_t *pp, const char *key, const char *val)
{
    size_t len = strlen(val), mult = 1;
    char digits[24];
    int v;

    if (len && strchr("KkMmGg", val[len - 1])) {
        mult = strchr("Kk", val[len - 1]) ? 1024u : strchr("Mm", val[len - 1]) ? 1024u * 1024u : 1024u << 20;
        len--;
    }
    snprintf(digits, sizeof(digits), "%.*s", (int)(len < 20 ? len : 20), val);
    if (len == 0 || len > 10 || tbm_parse_uint(digits, 1 << 30, &v) < 0 || (size_t)v * mult < 8 ||
        (size_t)v * mult > (1u << 30))
        return bad(pp, "give a size from 8 bytes to 1G, with K, M or G, e.g. 16M", "%s = %.60s is not a size", key,
                   val);
    *(!strcasecmp(key, "sweep_max") ? &pp->p->sweep_max : &pp->p->p2p_bytes) = (size_t)v * mult;
    return 0;
}

static const plan_key_t keys[] = {
    { "task", set_text, "task = fine-tune a 7B model with LoRA on 4 Macs" },
    { "model", set_text, "model = mlx-community/Mistral-7B-Instruct-v0.3-4bit" },
    { "data", set_text, "data = /shared/data/chat-10k.jsonl" },
    { "expected_output", set_text, "expected_output = validation loss below 1.6 after 600 steps" },
    { "backend", set_backend, "backend = jaccl" },
    { "tolerance", set_tolerance, "tolerance = bitwise" },
    { "link_share", set_share, "link_share = 0.5" },
    { "busbw_share", set_share, "busbw_share = 0.5" },
    { "refwork_layers", set_refwork, "refwork_layers = 4" },
    { "refwork_hidden", set_refwork, "refwork_hidden = 1024" },
    { "refwork_batch", set_refwork, "refwork_batch = 16" },
    { "refwork_seed", set_refwork, "refwork_seed = 1" },
    { "sweep_max", set_size, "sweep_max = 16M" },
    { "p2p_size", set_size, "p2p_size = 16M" },
    { NULL, NULL, NULL },
};

/* ---- lines ---- */

static char *trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

static void unknown_key(plan_parser_t *pp, const char *key)
{
    char list[400];
    size_t used = 0;
    int k;

    for (k = 0; keys[k].name; k++)
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", k ? ", " : "known keys: ", keys[k].name);
    bad(pp, list, "unknown key '%.40s'", key);
}

static void read_line(plan_parser_t *pp, char *s)
{
    char *hash = strchr(s, '#'), *eq, *key, *val;
    int k;

    if (hash)
        *hash = '\0';
    s = trim(s);
    if (!*s || !strcasecmp(s, "[acceptance]"))
        return;
    if (*s == '[') {
        bad(pp, "remove it: a plan has one section, [acceptance], or none", "unknown section %.40s", s);
        return;
    }
    eq = strchr(s, '=');
    if (!eq) {
        bad(pp, "write settings as key = value, e.g. backend = jaccl", "'%.60s' is not key = value", s);
        return;
    }
    *eq = '\0';
    key = trim(s);
    val = trim(eq + 1);
    for (k = 0; keys[k].name && strcasecmp(keys[k].name, key) != 0; k++)
        ;
    if (!keys[k].name) {
        unknown_key(pp, key);
        return;
    }
    if (!*val) {
        char fix[TBM_FINDING_TEXT_MAX];
        snprintf(fix, sizeof(fix), "give it a value, e.g. %s, or remove the line", keys[k].example);
        bad(pp, fix, "%s has no value", keys[k].name);
        return;
    }
    if (pp->seen & (1u << k)) {
        bad(pp, "keep one of them", "%s is already given at line %d", keys[k].name, pp->seen_line[k]);
        return;
    }
    pp->seen |= 1u << k;
    pp->seen_line[k] = pp->line;
    keys[k].set(pp, keys[k].name, val);
}

int tbm_accept_plan_parse(const char *text, size_t len, const char *file, tbm_accept_plan_t *p,
                          tbm_findings_t *errors, tbm_err_t *err)
{
    plan_parser_t pp;
    tbm_findings_t own;
    size_t pos = 0, first;
    char buf[PLAN_LINE_MAX + 1];

    tbm_findings_init(&own);
    memset(&pp, 0, sizeof(pp));
    pp.file = file ? file : "plan";
    pp.p = p;
    pp.errors = errors ? errors : &own;
    first = pp.errors->n;
    tbm_accept_plan_defaults(p);
    snprintf(p->file, sizeof(p->file), "%s", pp.file);
    if (len > TBM_ACCEPT_PLAN_MAX) {
        bad(&pp, "a plan is a few lines of key = value: check the file given", "the file holds %zu bytes", len);
        len = 0;
    }
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, n = end - pos;
        pp.line++;
        if (memchr(text + pos, '\0', n))
            bad(&pp, "save the plan as plain text", "the line holds a NUL byte");
        else if (n > PLAN_LINE_MAX)
            bad(&pp, "keep each line under 1024 characters", "the line is %zu characters long", n);
        else {
            memcpy(buf, text + pos, n);
            buf[n] = '\0';
            read_line(&pp, buf);
        }
        pos = end + 1;
    }
    p->present = 1;
    if (pp.n_errors) {
        const tbm_finding_t *f = first < pp.errors->n ? &pp.errors->items[first] : NULL;
        if (!f)
            tbm_errprintf(err, "%s: %zu errors", pp.file, pp.n_errors);
        else if (pp.n_errors == 1)
            tbm_errprintf(err, "%s: %s: %s", f->where, f->what, f->fix);
        else
            tbm_errprintf(err, "%s: %s: %s (and %zu more errors)", f->where, f->what, f->fix, pp.n_errors - 1);
        tbm_findings_free(&own);
        return -1;
    }
    tbm_findings_free(&own);
    return 0;
}

int tbm_accept_refwork_script(const tbm_refwork_t *w, const char *macnode, char *buf, size_t len)
{
    int n = snprintf(buf, len,
                     "d=$(mktemp -d \"${TMPDIR:-/tmp}/tbmesh-accept.XXXXXXXX\") || exit 1; "
                     "%s refwork -L %d -H %d -B %d -s %llu -o \"$d/out.rw\"; rc=$?; "
                     "if [ $rc = 0 ] && [ -s \"$d/out.rw\" ]; then printf \"%%s\" \"" TBM_ACCEPT_RW_TAG "\"; "
                     "base64 < \"$d/out.rw\" | tr -d \"\\n\"; echo; fi; "
                     "rm -rf \"$d\"; exit $rc",
                     macnode, w->layers, w->hidden, w->batch, (unsigned long long)w->seed);

    return n > 0 && (size_t)n < len && !strchr(buf, '\'') ? 0 : -1;
}
