/* parse_ioreg.c: `ioreg -r -d 1 -w 0 -c IOAccelerator` into the GPU's readings: the driver's utilization
 * percents and memory from each accelerator's PerformanceStatistics, its model and core count. */
#include "parse_ioreg.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "parse_text.h"
#include "scalar.h"

#define IOREG_COMMAND "ioreg -r -d 1 -w 0 -c IOAccelerator"
#define IOREG_FIX "capture `" IOREG_COMMAND "` again, with all of its output"
#define STATS_KEY "PerformanceStatistics"

/* One reading of PerformanceStatistics: its key, where it goes, and whether it is a percent. */
typedef struct stat_key {
    const char *key;
    size_t offset;
    int percent;
} stat_key_t;

static const stat_key_t stat_keys[] = {
    { "Device Utilization %", offsetof(tbm_ioreg_gpu_t, device_util), 1 },
    { "Renderer Utilization %", offsetof(tbm_ioreg_gpu_t, renderer_util), 1 },
    { "Tiler Utilization %", offsetof(tbm_ioreg_gpu_t, tiler_util), 1 },
    { "In use system memory", offsetof(tbm_ioreg_gpu_t, mem_in_use), 0 },
    { "Alloc system memory", offsetof(tbm_ioreg_gpu_t, mem_alloc), 0 },
};

typedef struct state {
    tbm_ioreg_t *out;
    tbm_ioreg_gpu_t *cur;   /* the object being read; NULL before the first */
    int in_props;           /* between its "{" and "}" */
    int object_line;        /* the line of its "+-o" */
    int lineno;
    tbm_err_t *err;
} state_t;

static int fail(state_t *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(state_t *st, const char *fmt, ...)
{
    char what[TBM_ERR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return tbm_errprintf(st->err, "ioreg output, line %d: %s; %s", st->lineno, what, IOREG_FIX);
}

static void skip_blanks(tbm_span_t *s)
{
    while (s->n > 0 && (s->p[0] == ' ' || s->p[0] == '\t'))
        s->p++, s->n--;
}

/* Move s past one quoted text (s at its '"'); -1 when it is not closed. */
static int skip_quoted(tbm_span_t *s, tbm_span_t *inner)
{
    const char *q = s->n > 1 ? memchr(s->p + 1, '"', s->n - 1) : NULL;

    if (!q)
        return -1;
    inner->p = s->p + 1;
    inner->n = (size_t)(q - inner->p);
    s->n -= (size_t)(q + 1 - s->p);
    s->p = q + 1;
    return 0;
}

static int skip_value(tbm_span_t *s, int depth, const char **why);

static int bad(const char **why, const char *what)
{
    *why = what;
    return -1;
}

/* The members of a {dict} or an (array), s past its opening; through its closing. */
static int skip_members(tbm_span_t *s, char close, int depth, const char **why)
{
    tbm_span_t key;

    for (;;) {
        skip_blanks(s);
        if (s->n > 0 && s->p[0] == close) {
            s->p++, s->n--;
            return 0;
        }
        if (close == '}') {
            if (s->n == 0 || s->p[0] != '"' || skip_quoted(s, &key) < 0)
                return bad(why, "a key of a dictionary is not a quoted name");
            skip_blanks(s);
            if (s->n == 0 || s->p[0] != '=')
                return bad(why, "a key of a dictionary is not followed by '='");
            s->p++, s->n--;
        }
        if (skip_value(s, depth + 1, why) < 0)
            return -1;
        skip_blanks(s);
        if (s->n > 0 && s->p[0] == ',')
            s->p++, s->n--;
        else if (s->n == 0 || s->p[0] != close)
            return bad(why, s->n == 0 ? "a dictionary or list is not closed on its line"
                                      : "a value is followed by neither ',' nor its closing");
    }
}

/* Move s past one value: a number or word, "text", <data>, {dict} or (array). -1 with *why when it is not one. */
static int skip_value(tbm_span_t *s, int depth, const char **why)
{
    tbm_span_t inner;
    const char *gt;
    size_t n = 0;

    skip_blanks(s);
    if (depth > TBM_IOREG_DEPTH_MAX)
        return bad(why, "values are nested too deep");
    if (s->n == 0)
        return bad(why, "a value is missing");
    if (s->p[0] == '{' || s->p[0] == '(') {
        char close = s->p[0] == '{' ? '}' : ')';

        s->p++, s->n--;
        return skip_members(s, close, depth, why);
    }
    if (s->p[0] == '"')
        return skip_quoted(s, &inner) < 0 ? bad(why, "a quoted text is not closed") : 0;
    if (s->p[0] == '<') {
        gt = s->n > 1 && s->p[1] == '"' ? memchr(s->p + 2, '"', s->n - 2) : s->p;
        gt = gt ? memchr(gt, '>', s->n - (size_t)(gt - s->p)) : NULL;
        if (!gt)
            return bad(why, "a <data> value is not closed");
        s->n -= (size_t)(gt + 1 - s->p);
        s->p = gt + 1;
        return 0;
    }
    while (n < s->n && (strchr("+-._", s->p[n]) || (s->p[n] >= '0' && s->p[n] <= '9') ||
                        (s->p[n] >= 'a' && s->p[n] <= 'z') || (s->p[n] >= 'A' && s->p[n] <= 'Z')) && s->p[n])
        n++;
    if (n == 0)
        return bad(why, "a value starts with a character no value starts with");
    s->p += n, s->n -= n;
    return 0;
}

/* A whole number from a value, at most max. */
static int whole_number(state_t *st, tbm_span_t key, tbm_span_t v, uint64_t max, uint64_t *out)
{
    char buf[24];

    if (v.n == 0 || v.n >= sizeof(buf) || tbm_span_spn(v.p, v.n, "0123456789") < v.n) {
        return fail(st, "\"%.*s\" is \"%.*s\", not a whole number", TBM_SPAN_SHOW(key), TBM_SPAN_SHOW(v));
    }
    memcpy(buf, v.p, v.n);
    buf[v.n] = '\0';
    if (tbm_parse_u64(buf, max, out) < 0)
        return fail(st, "\"%.*s\" is %s, above %llu", TBM_SPAN_SHOW(key), buf, (unsigned long long)max);
    return 0;
}

static int take_stat(state_t *st, tbm_span_t key, tbm_span_t v)
{
    size_t i;
    uint64_t x;

    for (i = 0; i < sizeof(stat_keys) / sizeof(stat_keys[0]); i++) {
        const stat_key_t *k = &stat_keys[i];

        if (!tbm_span_eq(key, k->key))
            continue;
        if (whole_number(st, key, tbm_span_trim(v.p, v.n), k->percent ? 100 : UINT64_MAX, &x) < 0)
            return -1;
        *(tbm_reading_t *)((char *)st->cur + k->offset) = tbm_reported((double)x);
    }
    return 0;
}

/* The value of "PerformanceStatistics": {"key"=value,...}, the whole rest of the line. */
static int read_stats(state_t *st, tbm_span_t s)
{
    const char *why = NULL;
    tbm_span_t key, v;

    if (st->cur->has_stats)
        return fail(st, STATS_KEY " appears twice in the properties of %s", st->cur->ioclass);
    st->cur->has_stats = 1;
    if (s.n == 0 || s.p[0] != '{')
        return fail(st, STATS_KEY " is \"%.*s\", not a dictionary {...}", TBM_SPAN_SHOW(s));
    s.p++, s.n--;
    for (;;) {
        skip_blanks(&s);
        if (s.n > 0 && s.p[0] == '}')
            break;
        if (s.n == 0 || s.p[0] != '"' || skip_quoted(&s, &key) < 0)
            return fail(st, STATS_KEY ": %s", s.n == 0 ? "the dictionary is not closed on its line"
                                                      : "a key is not a quoted name");
        skip_blanks(&s);
        if (s.n == 0 || s.p[0] != '=')
            return fail(st, STATS_KEY ": \"%.*s\" is not followed by '='", TBM_SPAN_SHOW(key));
        s.p++, s.n--;
        skip_blanks(&s);
        v = s;
        if (skip_value(&s, 1, &why) < 0)
            return fail(st, STATS_KEY ", at \"%.*s\": %s", TBM_SPAN_SHOW(key), why);
        v.n = (size_t)(s.p - v.p);
        if (take_stat(st, key, v) < 0)
            return -1;
        skip_blanks(&s);
        if (s.n > 0 && s.p[0] == ',')
            s.p++, s.n--;
        else if (s.n == 0)
            return fail(st, STATS_KEY ": the dictionary is not closed on its line");
        else if (s.p[0] != '}')
            return fail(st, STATS_KEY ": \"%.*s\" is followed by neither ',' nor '}'", TBM_SPAN_SHOW(key));
    }
    s.p++, s.n--;
    if (tbm_span_trim(s.p, s.n).n > 0)
        return fail(st, STATS_KEY ": \"%.*s\" follows its closing '}'", TBM_SPAN_SHOW(s));
    return 0;
}

static void copy_cut(char *dst, size_t size, tbm_span_t s)
{
    snprintf(dst, size, "%.*s", tbm_show_len(s.p, s.n, size - 1), s.p);
}

/* `"key" = value`, inside an object's properties. */
static int read_property(state_t *st, tbm_span_t line)
{
    tbm_span_t key, v = line, inner;
    uint64_t cores;

    if (skip_quoted(&v, &key) < 0)
        return fail(st, "\"%.*s\" is not a property \"key\" = value: its key is not closed", TBM_SPAN_SHOW(line));
    skip_blanks(&v);
    if (v.n == 0 || v.p[0] != '=')
        return fail(st, "\"%.*s\" is not a property \"key\" = value", TBM_SPAN_SHOW(line));
    v.p++, v.n--;
    v = tbm_span_trim(v.p, v.n);
    if (tbm_span_eq(key, STATS_KEY))
        return read_stats(st, v);
    if (tbm_span_eq(key, "gpu-core-count")) {
        if (whole_number(st, key, v, 100000, &cores) < 0)
            return -1;
        st->cur->gpu_cores = (long)cores;
    } else if (tbm_span_eq(key, "model") && v.n >= 2) {
        inner = v;
        if (v.p[0] == '<' && v.n >= 4 && v.p[1] == '"' && v.p[v.n - 1] == '>')
            inner.p++, inner.n -= 2;      /* <"Apple M1"> */
        if (inner.n >= 2 && inner.p[0] == '"' && inner.p[inner.n - 1] == '"')
            copy_cut(st->cur->model, sizeof(st->cur->model), (tbm_span_t){ inner.p + 1, inner.n - 2 });
    }
    return 0;
}

/* "+-o NAME  <class CLASS, id 0x..., ...>": a new object. */
static int read_object(state_t *st, tbm_span_t line)
{
    tbm_span_t name = tbm_span_trim(line.p + 3, line.n - 3), cls = name;
    const char *mark = NULL;
    size_t i;

    if (st->in_props)
        return fail(st, "a new object starts while the properties of %s (line %d) are not closed: the output was "
                        "cut short", st->cur->ioclass, st->object_line);
    if (st->out->n == TBM_IOREG_GPUS_MAX)
        return fail(st, "more than %d accelerator objects", TBM_IOREG_GPUS_MAX);
    st->cur = &st->out->gpu[st->out->n++];
    memset(st->cur, 0, sizeof(*st->cur));
    st->cur->gpu_cores = -1;
    st->object_line = st->lineno;
    for (i = 0; i + 7 <= name.n && !mark; i++)
        if (memcmp(name.p + i, "<class ", 7) == 0)
            mark = name.p + i + 7;
    if (mark)
        cls = (tbm_span_t){ mark, name.n - (size_t)(mark - name.p) };
    for (i = 0; i < cls.n && !strchr(" ,<>", cls.p[i]); i++)
        ;
    cls.n = i;
    if (cls.n == 0)
        return fail(st, "\"%.*s\" names no object", TBM_SPAN_SHOW(line));
    copy_cut(st->cur->ioclass, sizeof(st->cur->ioclass), cls);
    return 0;
}

static int read_line(state_t *st, tbm_span_t line)
{
    while (line.n > 0 && (line.p[0] == ' ' || line.p[0] == '\t' || line.p[0] == '|'))
        line.p++, line.n--;
    line = tbm_span_trim(line.p, line.n);
    if (line.n == 0)
        return 0;
    if (tbm_span_starts(line, "+-o") && (line.n == 3 || line.p[3] == ' '))
        return read_object(st, line);
    if (!st->cur)
        return fail(st, "\"%.*s\" comes before the first object (a line \"+-o ...\"): this is not ioreg's output",
                    TBM_SPAN_SHOW(line));
    if (tbm_span_eq(line, "{")) {
        if (st->in_props)
            return fail(st, "a second \"{\" in the properties of %s", st->cur->ioclass);
        st->in_props = 1;
        return 0;
    }
    if (tbm_span_eq(line, "}")) {
        if (!st->in_props)
            return fail(st, "\"}\" closes nothing");
        st->in_props = 0;
        return 0;
    }
    if (line.p[0] == '"' && st->in_props)
        return read_property(st, line);
    return fail(st, "\"%.*s\" is not a line of ioreg's output%s", TBM_SPAN_SHOW(line),
                line.p[0] == '"' ? " (a property outside an object's \"{\" ... \"}\")" : "");
}

int tbm_parse_ioreg(const char *text, size_t len, tbm_ioreg_t *out, tbm_err_t *err)
{
    state_t st = { .out = out, .err = err };
    size_t pos = 0, bad, end;
    const char *nl;

    memset(out, 0, sizeof(*out));
    tbm_errclear(err);
    if (len > TBM_RAW_MAX)
        return tbm_errprintf(err, "ioreg output is %zu bytes, more than the %u read; " IOREG_FIX, len, TBM_RAW_MAX);
    bad = text ? tbm_utf8_check(text, len) : 0;
    if (bad < len)
        return tbm_errprintf(err, "ioreg output, byte %zu: not UTF-8 text (or a NUL byte); " IOREG_FIX, bad);
    while (text && pos < len) {
        nl = memchr(text + pos, '\n', len - pos);
        end = nl ? (size_t)(nl - text) : len;
        st.lineno++;
        if (read_line(&st, (tbm_span_t){ text + pos, end - pos }) < 0) {
            out->n = 0;
            return -1;
        }
        pos = end + 1;
    }
    if (st.in_props) {
        out->n = 0;
        return fail(&st, "the output ends inside the properties of %s (from line %d): it was cut short",
                    st.cur->ioclass, st.object_line);
    }
    return 0;
}
