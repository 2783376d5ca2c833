/* parse_sysinfo.c: `sw_vers` (macOS name, version, build), `sysctl -n hw.memsize machdep.cpu.brand_string
 * hw.model` (memory, chip, model identifier) and `sysctl hw.perflevel{0,1}.physicalcpu` (cores by kind).
 * Both sysctl captures come in either form: bare values (`sysctl -n`, one a line in the order of the
 * command) or `name: value` lines (plain `sysctl`, as a person types it; `name = value` too). The first
 * line that is not blank decides. A value that is plainly another field's (a memory that is not a number, a
 * chip or model that holds a sysctl name or a colon, a core count of 0) is dropped with a finding. */
#include "parse_macos.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "parse_text.h"

#define SW_SOURCE "sw_vers"
#define SW_FIX "run `sw_vers` again and capture it"
#define SYSCTL_SOURCE "sysctl -n hw.memsize machdep.cpu.brand_string hw.model"
#define PERF_SOURCE "sysctl hw.perflevel0.physicalcpu hw.perflevel1.physicalcpu"
#define MEMSIZE_MAX (1ll << 50)     /* 1 PiB: anything above is not a Mac's memory */
#define CORES_MAX 4096

/* A "Key: value" line that fills a text field of the facts. */
typedef struct text_key {
    const char *key;
    size_t offset;                  /* of a char[TBM_HOST_MAX] in tbm_host_facts_t */
} text_key_t;

static const text_key_t sw_keys[] = {
    { "ProductName", offsetof(tbm_host_facts_t, os_name) },
    { "ProductVersion", offsetof(tbm_host_facts_t, os_version) },
    { "BuildVersion", offsetof(tbm_host_facts_t, os_build) },
};
#define N_SW_KEYS (sizeof(sw_keys) / sizeof(sw_keys[0]))

/* Copy a value into a text field; returns -1 (field "") when too long, empty or not printable. */
static int put_text(char *dst, tbm_span_t val)
{
    if (val.n == 0 || tbm_span_copy(dst, TBM_HOST_MAX, val) < 0 || !tbm_valid_text(dst)) {
        dst[0] = '\0';
        return -1;
    }
    return 0;
}

static int read_sw_line(tbm_parse_ctx_t *ctx, const tbm_line_t *l, void *state)
{
    tbm_host_facts_t *facts = state;
    tbm_span_t key, val;
    size_t i;

    if (l->text.n == 0)
        return 0;
    if (tbm_span_keyval(l->text, &key, &val) < 0) {
        tbm_note(ctx, TBM_SEV_WARNING, "sw-vers-garbage-line", l->lineno, SW_FIX,
                 "\"%.*s\" is not a \"Key: value\" line; ignored", TBM_SPAN_SHOW(l->text));
        return 0;
    }
    for (i = 0; i < N_SW_KEYS; i++)
        if (tbm_span_eq(key, sw_keys[i].key) && put_text((char *)facts + sw_keys[i].offset, val) < 0)
            tbm_note(ctx, TBM_SEV_WARNING, "sw-vers-bad-value", l->lineno, SW_FIX,
                     "%s \"%.*s\" is empty, too long or not printable", sw_keys[i].key, TBM_SPAN_SHOW(val));
    return 0;
}

int tbm_parse_sw_vers(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    tbm_parse_ctx_t ctx;
    size_t i;

    tbm_parse_begin(&ctx, fs, SW_SOURCE);
    if (tbm_parse_lines(&ctx, text, len, 0, read_sw_line, facts) < 0)
        return -1;
    for (i = 0; i < N_SW_KEYS; i++)
        if (!((char *)facts + sw_keys[i].offset)[0])
            tbm_note(&ctx, TBM_SEV_WARNING, "sw-vers-missing", 0, SW_FIX, "no usable %s line", sw_keys[i].key);
    tbm_parse_end(&ctx);
    return 0;
}

/* ---- sysctl ---- */

/* The values read from sysctl, in the order `sysctl -n` prints them in sysctl.txt. */
typedef enum sc_field {
    SC_MEMSIZE = 0,
    SC_BRAND,
    SC_MODEL,
    SC_PERF0,
    SC_PERF1,
    SC_NFIELDS,
} sc_field_t;

static const char *const sc_names[SC_NFIELDS] = {
    "hw.memsize", "machdep.cpu.brand_string", "hw.model", "hw.perflevel0.physicalcpu", "hw.perflevel1.physicalcpu",
};

/* One of the two sysctl captures: which values its `sysctl -n` form holds, line by line, and which it must
 * hold. Both also take the `name: value` (and `name = value`) form a person types, in any order. */
typedef struct sc_spec {
    const char *source;          /* the `where` of its findings */
    const char *fix;             /* what to run again */
    const char *bad_line_code;   /* a line that is neither a value nor `name: value` */
    sc_field_t order[3];         /* the values of the -n form, line by line */
    int n_order;
    unsigned accepted;           /* the names the `name: value` form may give (bit per field) */
    unsigned required;           /* those reported when missing */
} sc_spec_t;

#define SC_BIT(f) (1u << (f))

static const sc_spec_t sysctl_spec = {
    SYSCTL_SOURCE,
    "capture it again with `sysctl -n hw.memsize machdep.cpu.brand_string hw.model` (three values in that order) "
    "or `sysctl hw.memsize machdep.cpu.brand_string hw.model` (name: value lines)",
    "sysctl-bad-line",
    { SC_MEMSIZE, SC_BRAND, SC_MODEL }, 3,
    SC_BIT(SC_MEMSIZE) | SC_BIT(SC_BRAND) | SC_BIT(SC_MODEL) | SC_BIT(SC_PERF0) | SC_BIT(SC_PERF1),
    SC_BIT(SC_MEMSIZE) | SC_BIT(SC_BRAND) | SC_BIT(SC_MODEL),
};

static const sc_spec_t perf_spec = {
    PERF_SOURCE,
    "capture it again with `sysctl hw.perflevel0.physicalcpu hw.perflevel1.physicalcpu`",
    "sysctl-perflevel-bad-line",
    { SC_PERF0, SC_PERF1, SC_PERF1 }, 2,
    SC_BIT(SC_PERF0) | SC_BIT(SC_PERF1),
    0,   /* a Mac with one kind of core has no perflevel1; perflevel0 is checked on its own */
};

typedef enum sc_form { SC_FORM_UNKNOWN = 0, SC_FORM_VALUES, SC_FORM_NAMED } sc_form_t;

#define SC_IGNORED_SHOWN 6        /* names not read that one finding lists; the rest are counted */

typedef struct sc_state {
    const sc_spec_t *spec;
    tbm_host_facts_t *facts;
    sc_form_t form;
    unsigned seen;               /* fields given (bit per field), good or bad */
    int values;                  /* lines read in the -n form */
    tbm_span_t ignored[SC_IGNORED_SHOWN];   /* names of the `name: value` form not read, first ones */
    int n_ignored;               /* all of them */
    int ignored_line;            /* the line of the first */
} sc_state_t;

/* The top-level names of sysctl's tree: a word "hw.model" in a value is a name, not a value. */
static int is_sysctl_name(tbm_span_t s)
{
    static const char *const tops[] = { "hw.", "machdep.", "kern.", "vm.", "net.", "debug.", "security.", "user.",
                                        "sysctl." };
    size_t i, dots = 0;

    if (s.n < 3 || s.n > 128)
        return 0;
    for (i = 0; i < s.n; i++) {
        char c = s.p[i];
        if (c == '.')
            dots++;
        else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    if (dots == 0 || s.p[0] == '.' || s.p[s.n - 1] == '.')
        return 0;
    for (i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
        if (tbm_span_starts(s, tops[i]))
            return 1;
    return 0;
}

/* "name: value" or "name = value" with a sysctl name before the first ':' or '='. */
static int named_line(tbm_span_t line, tbm_span_t *name, tbm_span_t *val)
{
    size_t i;

    for (i = 0; i < line.n && line.p[i] != ':' && line.p[i] != '='; i++)
        ;
    if (i == line.n)
        return 0;
    *name = tbm_span_trim(line.p, i);
    *val = tbm_span_after(line, i + 1);
    return is_sysctl_name(*name);
}

static int has_letter(tbm_span_t s)
{
    size_t i;

    for (i = 0; i < s.n; i++)
        if ((s.p[i] >= 'a' && s.p[i] <= 'z') || (s.p[i] >= 'A' && s.p[i] <= 'Z'))
            return 1;
    return 0;
}

/* A word of the value that is a sysctl name, or an empty span. */
static tbm_span_t name_inside(tbm_span_t val)
{
    tbm_span_t rest = val, w, none = { val.p, 0 };
    const char *sep;

    while ((w = tbm_span_word(&rest)).n > 0) {
        if ((sep = memchr(w.p, ':', w.n)) != NULL || (sep = memchr(w.p, '=', w.n)) != NULL)
            w.n = (size_t)(sep - w.p);    /* "hw.model:Mac15,14" */
        if (is_sysctl_name(w))
            return w;
    }
    return none;
}

/* "Mac15,14", "MacBookPro18,2", "VirtualMac2,1": letters, a number, a comma, a number. */
static int is_model_id(tbm_span_t s)
{
    size_t i = 0, d1, d2;

    while (i < s.n && ((s.p[i] >= 'a' && s.p[i] <= 'z') || (s.p[i] >= 'A' && s.p[i] <= 'Z')))
        i++;
    if (i == 0)
        return 0;
    for (d1 = i; i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; i++)
        ;
    if (i == d1 || i >= s.n || s.p[i++] != ',')
        return 0;
    for (d2 = i; i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; i++)
        ;
    return i > d2 && i == s.n;
}

/* Why a text value (chip or model) is plainly not that field; NULL when it may be. */
static const char *text_problem(sc_field_t field, tbm_span_t val, char *why, size_t len)
{
    tbm_span_t inside = name_inside(val);

    if (val.n == 0)
        return "is empty";
    if (inside.n > 0) {
        snprintf(why, len, "holds the sysctl name %.*s: a \"name: value\" line was read as a value",
                 TBM_SPAN_SHOW(inside));
        return why;
    }
    if (memchr(val.p, ':', val.n))
        return "holds a colon, which no chip name or model identifier has";
    if (!has_letter(val))
        return "has no letter: it is a number, not a name";
    if (field == SC_MODEL && !is_model_id(val))
        return "is not a model identifier like \"Mac15,14\"";
    return NULL;
}

/* Check one value and store it; a wrong one leaves the field empty or 0 with a finding. */
static void put_sysctl(tbm_parse_ctx_t *ctx, const sc_state_t *st, sc_field_t field, tbm_span_t val, int lineno)
{
    tbm_host_facts_t *facts = st->facts;
    char why[TBM_FINDING_TEXT_MAX / 2];
    const char *problem = NULL;
    long long n;

    switch (field) {
    case SC_MEMSIZE:
        if (tbm_span_long(val, 1, MEMSIZE_MAX, &n) < 0)
            problem = has_letter(val) || val.n == 0 ? "is not a number of bytes"
                                                    : "is not a memory size from 1 byte to 1 PiB";
        facts->memory_bytes = problem ? 0 : (uint64_t)n;
        break;
    case SC_PERF0:
    case SC_PERF1:
        if (tbm_span_long(val, 1, CORES_MAX, &n) < 0)
            problem = "is not a core count from 1 to 4096";
        *(field == SC_PERF0 ? &facts->cores_performance : &facts->cores_efficiency) = problem ? 0 : (int)n;
        break;
    default:
        problem = text_problem(field, val, why, sizeof(why));
        if (!problem && put_text(field == SC_BRAND ? facts->chip : facts->model_id, val) < 0)
            problem = "is too long or not printable";
        if (problem)
            (field == SC_BRAND ? facts->chip : facts->model_id)[0] = '\0';
        break;
    }
    if (problem)
        tbm_note(ctx, TBM_SEV_WARNING, "sysctl-bad-value", lineno, st->spec->fix, "%s \"%.*s\" %s; ignored",
                 sc_names[field], TBM_SPAN_SHOW(val), problem);
}

/* A line of the `name: value` form. */
static void read_named(tbm_parse_ctx_t *ctx, sc_state_t *st, const tbm_line_t *l)
{
    tbm_span_t name, val;
    int f;

    if (!named_line(l->text, &name, &val)) {
        tbm_note(ctx, TBM_SEV_WARNING, st->spec->bad_line_code, l->lineno, st->spec->fix,
                 "\"%.*s\" is not a \"name: value\" line like \"%s: ...\"; ignored", TBM_SPAN_SHOW(l->text),
                 sc_names[st->spec->order[0]]);
        return;
    }
    for (f = 0; f < SC_NFIELDS && !(tbm_span_eq(name, sc_names[f]) && (st->spec->accepted & SC_BIT(f))); f++)
        ;
    if (f == SC_NFIELDS) {   /* said once for all, at the end (report_ignored) */
        if (st->n_ignored < SC_IGNORED_SHOWN)
            st->ignored[st->n_ignored] = name;
        if (st->n_ignored++ == 0)
            st->ignored_line = l->lineno;
        return;
    }
    if (st->seen & SC_BIT(f)) {
        tbm_note(ctx, TBM_SEV_WARNING, "sysctl-duplicate", l->lineno, st->spec->fix,
                 "%s is given again; the first value is kept", sc_names[f]);
        return;
    }
    st->seen |= SC_BIT(f);
    put_sysctl(ctx, st, (sc_field_t)f, val, l->lineno);
}

/* A line of the `sysctl -n` form: the value of the next name in the command. */
static void read_value(tbm_parse_ctx_t *ctx, sc_state_t *st, const tbm_line_t *l)
{
    tbm_span_t name, val;
    sc_field_t f;

    if (st->values >= st->spec->n_order) {
        if (l->text.n > 0)
            tbm_note(ctx, TBM_SEV_WARNING, "sysctl-extra-line", l->lineno, st->spec->fix,
                     "unexpected line \"%.*s\" after the %d values; ignored", TBM_SPAN_SHOW(l->text),
                     st->spec->n_order);
        return;
    }
    f = st->spec->order[st->values++];
    st->seen |= SC_BIT(f);
    if (named_line(l->text, &name, &val)) {
        tbm_note(ctx, TBM_SEV_WARNING, "sysctl-bad-value", l->lineno, st->spec->fix,
                 "%s: line %d is \"%.*s\", a \"name: value\" line among the bare values of `sysctl -n`; ignored",
                 sc_names[f], l->lineno, TBM_SPAN_SHOW(l->text));
        return;
    }
    put_sysctl(ctx, st, f, l->text, l->lineno);
}

static int read_sysctl_line(tbm_parse_ctx_t *ctx, const tbm_line_t *l, void *state)
{
    sc_state_t *st = state;
    tbm_span_t name, val;

    if (st->form == SC_FORM_UNKNOWN) {
        if (l->text.n == 0)
            return 0;    /* blank lines before the first say nothing of the form */
        st->form = named_line(l->text, &name, &val) ? SC_FORM_NAMED : SC_FORM_VALUES;
    }
    if (st->form == SC_FORM_NAMED) {
        if (l->text.n > 0)
            read_named(ctx, st, l);
    } else {
        read_value(ctx, st, l);
    }
    return 0;
}

/* The names the capture gave that are not read here, in one finding: "hw.ncpu, hw.pagesize and 3 more are not
 * read here; ignored" (a note in sysctl.txt, where any name may come; a warning among the core counts). */
static void report_ignored(tbm_parse_ctx_t *ctx, const sc_state_t *st)
{
    char names[TBM_FINDING_TEXT_MAX / 2];
    size_t used = 0;
    int i, shown = st->n_ignored < SC_IGNORED_SHOWN ? st->n_ignored : SC_IGNORED_SHOWN;

    if (st->n_ignored == 0)
        return;
    names[0] = '\0';
    for (i = 0; i < shown && used < sizeof(names); i++)
        used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%.*s",
                                 i == 0 ? "" : i + 1 < shown || st->n_ignored > shown ? ", " : " and ",
                                 TBM_SPAN_SHOW(st->ignored[i]));
    if (st->n_ignored > shown && used < sizeof(names))
        snprintf(names + used, sizeof(names) - used, " and %d more", st->n_ignored - shown);
    tbm_note(ctx, st->spec == &perf_spec ? TBM_SEV_WARNING : TBM_SEV_INFO,
             st->spec == &perf_spec ? st->spec->bad_line_code : "sysctl-extra-line",
             st->n_ignored == 1 ? st->ignored_line : 0,
             st->spec == &perf_spec ? st->spec->fix : "nothing to do: only the names in the command above are read",
             "%s %s not read here; ignored", names, st->n_ignored == 1 ? "is" : "are");
}

/* Parse one sysctl capture in either form, then report the values it lacks. */
static int parse_sysctl_capture(const sc_spec_t *spec, const char *text, size_t len, tbm_host_facts_t *facts,
                                tbm_findings_t *fs)
{
    tbm_parse_ctx_t ctx;
    sc_state_t st;
    int f;

    memset(&st, 0, sizeof(st));
    st.spec = spec;
    st.facts = facts;
    if (spec == &perf_spec && facts->cores_performance > 0 && (!text || tbm_span_trim(text, len).n == 0))
        return 0;   /* the counts came with sysctl.txt (`name: value` lines): this capture is not needed */
    tbm_parse_begin(&ctx, fs, spec->source);
    if (tbm_parse_lines(&ctx, text, len, 0, read_sysctl_line, &st) < 0)
        return -1;
    report_ignored(&ctx, &st);
    if (st.form == SC_FORM_VALUES && spec->required && st.values < spec->n_order)
        tbm_note(&ctx, TBM_SEV_WARNING, "sysctl-short", 0, spec->fix,
                 "only %d of 3 lines (memsize, brand string, model)", st.values);
    for (f = 0; st.form == SC_FORM_NAMED && f < SC_NFIELDS; f++)
        if ((spec->required & SC_BIT(f)) && !(st.seen & SC_BIT(f)))
            tbm_note(&ctx, TBM_SEV_WARNING, "sysctl-missing", 0, spec->fix, "no %s line", sc_names[f]);
    if (spec == &perf_spec && facts->cores_performance == 0)
        tbm_note(&ctx, TBM_SEV_WARNING, "sysctl-no-performance-cores", 0,
                 "check the capture: every Apple-silicon Mac has performance cores",
                 "no hw.perflevel0.physicalcpu count above 0");
    tbm_parse_end(&ctx);
    return 0;
}

int tbm_parse_sysctl(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    return parse_sysctl_capture(&sysctl_spec, text, len, facts, fs);
}

int tbm_parse_perflevels(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    return parse_sysctl_capture(&perf_spec, text, len, facts, fs);
}
