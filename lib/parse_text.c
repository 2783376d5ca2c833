/* parse_text.c: checks of raw command outputs, a line reader and span helpers shared by the parsers
 * (see parse_text.h). */
#include "parse_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "scalar.h"

/* Lines of a buffer. Each line comes without its "\n" or "\r\n". */
typedef struct lines {
    const char *p;
    const char *end;
    int lineno;           /* number of the line last returned, from 1 */
} lines_t;

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

void tbm_parse_begin(tbm_parse_ctx_t *ctx, tbm_findings_t *fs, const char *source)
{
    ctx->fs = fs;
    ctx->source = source;
    ctx->notes = 0;
    ctx->hidden = TBM_SEV_INFO;
}

void tbm_note(tbm_parse_ctx_t *ctx, tbm_severity_t sev, const char *code, int lineno, const char *fix,
              const char *fmt, ...)
{
    char where[TBM_FINDING_WHERE_MAX];
    char what[TBM_FINDING_TEXT_MAX];
    va_list ap;

    if (lineno > 0 && ctx->notes++ >= TBM_NOTES_MAX) {
        if (sev > ctx->hidden)
            ctx->hidden = sev;
        return;
    }
    if (lineno > 0)
        snprintf(where, sizeof(where), "%s line %d", ctx->source, lineno);
    else
        snprintf(where, sizeof(where), "%s", ctx->source);
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    tbm_finding_add(ctx->fs, sev, code, where, fix, "%s", what);
}

void tbm_parse_end(tbm_parse_ctx_t *ctx)
{
    if (ctx->notes > TBM_NOTES_MAX && ctx->hidden == TBM_SEV_INFO)   /* notes only: nothing is wrong */
        tbm_note(ctx, TBM_SEV_INFO, "output-more-notes", 0, "nothing to do: they are information, not problems",
                 "%d more notes not shown", ctx->notes - TBM_NOTES_MAX);
    else if (ctx->notes > TBM_NOTES_MAX)
        tbm_note(ctx, ctx->hidden, "output-more-problems", 0,
                 "fix the problems reported above first, then run the probe again",
                 "%d more line problems not shown", ctx->notes - TBM_NOTES_MAX);
}

size_t tbm_utf8_seq(const unsigned char *s, size_t n)
{
    size_t len, i;
    unsigned cp;

    if (s[0] < 0x80)
        return s[0] ? 1 : 0;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        len = 2, cp = s[0] & 0x1f;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        len = 3, cp = s[0] & 0x0f;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        len = 4, cp = s[0] & 0x07;
    else
        return 0;
    if (n < len)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

size_t tbm_utf8_check(const char *data, size_t len)
{
    const unsigned char *s = (const unsigned char *)data;
    size_t i = 0, k;

    while (i < len) {
        k = tbm_utf8_seq(s + i, len - i);
        if (k == 0)
            return i;
        i += k;
    }
    return len;
}

static int line_of(const char *data, size_t off)
{
    int line = 1;
    size_t i;

    for (i = 0; i < off; i++)
        line += data[i] == '\n';
    return line;
}

int tbm_raw_usable(tbm_parse_ctx_t *ctx, const char *data, size_t len, int allow_empty)
{
    const char *rerun = "run the command again on the Mac and capture its standard output in full";
    size_t bad;

    if (!data) {
        tbm_note(ctx, TBM_SEV_WARNING, "output-missing", 0, rerun, "no output of %s was given", ctx->source);
        return -1;
    }
    if (len > TBM_RAW_MAX) {
        tbm_note(ctx, TBM_SEV_ERROR, "output-too-large", 0,
                 "check that the right file was captured: real outputs are far smaller",
                 "output of %zu bytes is larger than the limit of %u bytes", len, TBM_RAW_MAX);
        return -1;
    }
    if (tbm_span_trim(data, len).n == 0 && !allow_empty) {
        tbm_note(ctx, TBM_SEV_ERROR, "output-empty", 0, rerun, "the output is empty");
        return -1;
    }
    bad = tbm_utf8_check(data, len);
    if (bad < len) {
        tbm_note(ctx, TBM_SEV_ERROR, "output-invalid-utf8", 0,
                 "capture the output again (LC_ALL=C) and check the file was not damaged in transfer",
                 "byte %zu (line %d) is not valid UTF-8 text (or is a NUL byte)", bad, line_of(data, bad));
        return -1;
    }
    return 0;
}

static void lines_init(lines_t *it, const char *data, size_t len)
{
    it->p = data;
    it->end = data ? data + len : data;
    it->lineno = 0;
}

static int lines_next(lines_t *it, const char **line, size_t *len)
{
    const char *nl;

    if (!it->p || it->p >= it->end)
        return 0;
    nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
    *line = it->p;
    *len = (size_t)((nl ? nl : it->end) - it->p);
    it->p = nl ? nl + 1 : it->end;
    if (*len > 0 && (*line)[*len - 1] == '\r')
        (*len)--;
    it->lineno++;
    return 1;
}


int tbm_parse_lines(tbm_parse_ctx_t *ctx, const char *text, size_t len, int allow_empty, tbm_line_fn fn,
                    void *state)
{
    lines_t it;
    tbm_line_t line;
    const char *p;
    size_t n;

    if (tbm_raw_usable(ctx, text, len, allow_empty) < 0)
        return -1;
    lines_init(&it, text, len);
    while (lines_next(&it, &p, &n)) {
        line.text = tbm_span_trim(p, n);
        line.indented = n > 0 && blank(p[0]);
        line.lineno = it.lineno;
        if (fn(ctx, &line, state))
            break;
    }
    return it.lineno;
}

tbm_span_t tbm_span_trim(const char *p, size_t n)
{
    tbm_span_t s = { p, n };

    while (s.n > 0 && blank(s.p[0]))
        s.p++, s.n--;
    while (s.n > 0 && blank(s.p[s.n - 1]))
        s.n--;
    return s;
}

size_t tbm_span_spn(const char *p, size_t n, const char *set)
{
    size_t i = 0;

    while (i < n && p[i] && strchr(set, p[i]))
        i++;
    return i;
}

int tbm_span_eq(tbm_span_t s, const char *lit)
{
    return strlen(lit) == s.n && memcmp(s.p, lit, s.n) == 0;
}

int tbm_span_starts(tbm_span_t s, const char *lit)
{
    size_t k = strlen(lit);

    return s.n >= k && memcmp(s.p, lit, k) == 0;
}

tbm_span_t tbm_span_after(tbm_span_t s, size_t k)
{
    if (k > s.n)
        k = s.n;
    return tbm_span_trim(s.p + k, s.n - k);
}

tbm_span_t tbm_span_word(tbm_span_t *rest)
{
    tbm_span_t w;

    *rest = tbm_span_trim(rest->p, rest->n);
    w.p = rest->p;
    for (w.n = 0; w.n < rest->n && !blank(w.p[w.n]); w.n++)
        ;
    *rest = tbm_span_after(*rest, w.n);
    return w;
}

int tbm_span_keyval(tbm_span_t line, tbm_span_t *key, tbm_span_t *val)
{
    const char *colon = line.n ? memchr(line.p, ':', line.n) : NULL;
    size_t k;

    if (!colon)
        return -1;
    k = (size_t)(colon - line.p);
    *key = tbm_span_trim(line.p, k);
    *val = tbm_span_after(line, k + 1);
    return 0;
}

int tbm_show_len(const char *p, size_t n, size_t max)
{
    if (n <= max)
        return (int)n;
    while (max > 0 && ((unsigned char)p[max] & 0xc0) == 0x80)
        max--;   /* p[max] continues a character: cut before that character */
    return (int)max;
}

int tbm_span_copy(char *dst, size_t size, tbm_span_t s)
{
    if (s.n >= size) {
        dst[0] = '\0';
        return -1;
    }
    if (s.n)
        memcpy(dst, s.p, s.n);
    dst[s.n] = '\0';
    return 0;
}

int tbm_span_long(tbm_span_t s, long long min, long long max, long long *out)
{
    /* digits only, never a sign (whatever min allows), at most 20 of them */
    if (s.n == 0 || s.n > 20 || s.p[0] < '0' || s.p[0] > '9')
        return -1;
    return tbm_parse_ll_span(s.p, s.n, 10, min, max, out);
}
