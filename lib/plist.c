/* plist.c: the strict, bounded XML property list reader (see plist.h): one pass over the text, a callback
 * per value, no tree. */
#include "plist.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse_text.h"
#include "scalar.h"

#define NAME_MAX_LEN 15     /* the longest element name read ("integer" is 7) */
#define NUMBER_MAX_LEN 63   /* the longest number text read */
#define CUT_SHORT "the output was cut short"

typedef struct reader {
    const char *start, *p, *end;
    int line;
    tbm_plist_path_t path;
    tbm_plist_fn fn;
    void *arg;
    tbm_err_t *err;
} reader_t;

typedef enum tag_kind { TAG_OPEN, TAG_CLOSE, TAG_EMPTY } tag_kind_t;

typedef struct tag {
    tag_kind_t kind;
    char name[NAME_MAX_LEN + 1];
    int line;
} tag_t;

static void advance(reader_t *r, size_t n)
{
    const char *stop = r->p + n;

    while (r->p < stop)
        if (*r->p++ == '\n')
            r->line++;
}

static int fail(reader_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(reader_t *r, const char *fmt, ...)
{
    char what[TBM_ERR_MAX], where[256] = "";
    va_list ap;

    if (tbm_erris(r->err))   /* the callback's own message stands */
        return -1;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (r->path.depth > 0) {
        strcpy(where, " (at ");
        tbm_plist_path_text(&r->path, where + 5, sizeof(where) - 6);
        strcat(where, ")");
    }
    return tbm_errprintf(r->err, "line %d: %s%s", r->line, what, where);
}

static void skip_ws(reader_t *r)
{
    size_t n = 0;

    while (r->p + n < r->end && strchr(" \t\r\n", r->p[n]) && r->p[n])
        n++;
    advance(r, n);
}

static int at(const reader_t *r, const char *lit)
{
    size_t n = strlen(lit);

    return (size_t)(r->end - r->p) >= n && memcmp(r->p, lit, n) == 0;
}

/* Skip through the first `stop` (included); -1 when the text ends before it. */
static int skip_past(reader_t *r, const char *stop)
{
    const char *s = r->p;
    size_t n = strlen(stop);

    for (; (size_t)(r->end - s) >= n; s++)
        if (memcmp(s, stop, n) == 0) {
            advance(r, (size_t)(s - r->p) + n);
            return 0;
        }
    return -1;
}

static int show_len(const reader_t *r)
{
    size_t n = 0;

    while (r->p + n < r->end && r->p[n] != '\n' && n < 40)
        n++;
    return tbm_show_len(r->p, n, 40);
}

static int tag_end(reader_t *r, tag_t *t)
{
    if (t->kind == TAG_OPEN && strcmp(t->name, "plist") == 0) {
        const char *gt = memchr(r->p, '>', (size_t)(r->end - r->p));
        const char *lt = memchr(r->p, '<', (size_t)(r->end - r->p));

        if (!gt)
            return fail(r, "the text ends inside <plist ...>: " CUT_SHORT);
        if ((lt && lt < gt) || gt - r->p > 256)
            return fail(r, "<plist ...> is not closed by '>'");
        if (gt > r->p && gt[-1] == '/')
            t->kind = TAG_EMPTY;
        advance(r, (size_t)(gt - r->p) + 1);
        return 0;
    }
    skip_ws(r);     /* XML allows blanks before '>' and "/>" */
    if (t->kind != TAG_CLOSE && at(r, "/>")) {
        t->kind = TAG_EMPTY;
        advance(r, 2);
        return 0;
    }
    if (at(r, ">")) {
        advance(r, 1);
        return 0;
    }
    if (r->p >= r->end)
        return fail(r, "the text ends inside <%s%s>: " CUT_SHORT, t->kind == TAG_CLOSE ? "/" : "", t->name);
    return fail(r, "<%s%s has \"%.*s\" where '>' was expected (only <plist> may have attributes)",
                t->kind == TAG_CLOSE ? "/" : "", t->name, show_len(r), r->p);
}

/* The next tag, white space before it skipped. */
static int read_tag(reader_t *r, tag_t *t)
{
    size_t n = 0;

    skip_ws(r);
    t->line = r->line;
    if (r->p >= r->end)
        return fail(r, "the text ends where an element was expected: " CUT_SHORT);
    if (*r->p != '<')
        return fail(r, "text \"%.*s\" stands between elements, where only an element may be", show_len(r), r->p);
    advance(r, 1);
    t->kind = TAG_OPEN;
    if (at(r, "/")) {
        t->kind = TAG_CLOSE;
        advance(r, 1);
    }
    while (r->p + n < r->end && n <= NAME_MAX_LEN &&
           ((r->p[n] >= 'a' && r->p[n] <= 'z') || (r->p[n] >= 'A' && r->p[n] <= 'Z')))
        n++;
    if (n == 0 || n > NAME_MAX_LEN) {
        if (r->p >= r->end)
            return fail(r, "the text ends inside a tag: " CUT_SHORT);
        return fail(r, "\"<%.*s\" is not an element of a property list (comments and declarations are not read "
                       "here)", show_len(r), r->p);
    }
    memcpy(t->name, r->p, n);
    t->name[n] = '\0';
    advance(r, n);
    return tag_end(r, t);
}

/* An '&' in a text: &amp; &lt; &gt; &quot; &apos; &#NN; &#xHH; only. Returns its length, or 0. */
static size_t entity_len(const char *s, size_t n)
{
    static const char *const named[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
    size_t i, k;

    for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
        if (n >= strlen(named[i]) && memcmp(s, named[i], strlen(named[i])) == 0)
            return strlen(named[i]);
    if (n < 4 || s[1] != '#')
        return 0;
    k = s[2] == 'x' ? 3 : 2;
    i = k;
    while (i < n && i < k + 8 && (k == 3 ? strchr("0123456789abcdefABCDEF", s[i]) : strchr("0123456789", s[i])) &&
           s[i])
        i++;
    return (i > k && i < n && s[i] == ';') ? i + 1 : 0;
}

/* The text of <name> up to its closing tag, which is read too. */
static int read_text(reader_t *r, const char *name, const char **text, size_t *len)
{
    const char *s = r->p, *lt = memchr(s, '<', (size_t)(r->end - s));
    tag_t close;
    size_t i, k;

    if (!lt)
        return fail(r, "the text ends inside <%s>: " CUT_SHORT, name);
    if ((size_t)(lt - s) > TBM_PLIST_TEXT_MAX)
        return fail(r, "the text of <%s> is longer than %u bytes", name, TBM_PLIST_TEXT_MAX);
    for (i = 0; s + i < lt; i += k) {
        k = 1;
        if (s[i] == '&' && (k = entity_len(s + i, (size_t)(lt - s) - i)) == 0) {
            advance(r, i);
            return fail(r, "'&' in the text of <%s> does not start an entity (&amp; &lt; &gt; &quot; &apos; "
                           "&#N;)", name);
        }
    }
    *text = s;
    *len = (size_t)(lt - s);
    advance(r, *len);
    if (read_tag(r, &close) < 0)
        return -1;
    if (close.kind != TAG_CLOSE || strcmp(close.name, name) != 0)
        return fail(r, "<%s> is followed by <%s%s> where </%s> was expected", name,
                    close.kind == TAG_CLOSE ? "/" : "", close.name, name);
    return 0;
}

static int read_integer(reader_t *r, tbm_plist_value_t *v)
{
    const char *s = v->text;
    size_t n = v->len, sign = (n > 0 && (s[0] == '-' || s[0] == '+'));
    char buf[NUMBER_MAX_LEN + 1];

    if (n == sign || n > 40 || tbm_span_spn(s + sign, n - sign, "0123456789") < n - sign)
        return fail(r, "<integer> holds \"%.*s\", not a whole number", tbm_show_len(s, n, 40), s);
    memcpy(buf, s, n);
    buf[n] = '\0';
    v->real = strtod(buf, NULL);
    v->exact = tbm_parse_ll(buf + (s[0] == '+'), 10, LLONG_MIN, LLONG_MAX, &v->integer) == 0;
    return 0;
}

static int read_real(reader_t *r, tbm_plist_value_t *v)
{
    const char *s = v->text;
    size_t n = v->len, sign = (n > 0 && (s[0] == '-' || s[0] == '+'));
    char buf[NUMBER_MAX_LEN + 1], *end;

    if (n > sign && n <= NUMBER_MAX_LEN && tbm_span_spn(s, n, "0123456789+-.eE") < n) {
        memcpy(buf, s + sign, n - sign);
        buf[n - sign] = '\0';
        if (strcasecmp(buf, "nan") == 0) {
            v->real = NAN;
            return 0;
        }
        if (strcasecmp(buf, "inf") == 0 || strcasecmp(buf, "infinity") == 0) {
            v->real = s[0] == '-' ? -INFINITY : INFINITY;
            return 0;
        }
    } else if (n > sign && n <= NUMBER_MAX_LEN) {
        memcpy(buf, s, n);
        buf[n] = '\0';
        v->real = strtod(buf, &end);
        if (*end == '\0' && end != buf)
            return 0;
    }
    return fail(r, "<real> holds \"%.*s\", not a number", tbm_show_len(s, n, 40), s);
}

static int emit(reader_t *r, tbm_plist_value_t *v)
{
    if (!r->fn || r->fn(&r->path, v, r->arg, r->err) == 0)
        return 0;
    if (!tbm_erris(r->err))
        tbm_errprintf(r->err, "line %d: the reader stopped without saying why", v->line);
    return -1;
}

static int read_value(reader_t *r, const tag_t *t);

static int push(reader_t *r, const char *key, size_t key_len, size_t index)
{
    tbm_plist_step_t *s;

    if (r->path.depth >= TBM_PLIST_DEPTH_MAX)
        return fail(r, "values are nested more than %d deep", TBM_PLIST_DEPTH_MAX);
    s = &r->path.step[r->path.depth++];
    s->key = key;
    s->key_len = key_len;
    s->index = index;
    return 0;
}

/* The key and the value of one dict entry, the tag of <key> already read. */
static int read_entry(reader_t *r, const tag_t *key)
{
    const char *text = "";
    size_t len = 0;
    tag_t t;

    if (strcmp(key->name, "key") != 0)
        return fail(r, "<%s> stands in a <dict> where a <key> was expected", key->name);
    if (key->kind == TAG_OPEN && read_text(r, "key", &text, &len) < 0)
        return -1;
    if (push(r, text, len, 0) < 0 || read_tag(r, &t) < 0)
        return -1;
    if (t.kind == TAG_CLOSE)
        return fail(r, "the key has no value: </%s> follows it", t.name);
    if (read_value(r, &t) < 0)
        return -1;
    r->path.depth--;
    return 0;
}

/* What a dict or an array holds, its opening tag already read, through its closing tag. */
static int read_members(reader_t *r, const char *name)
{
    size_t index = 0;
    tag_t t;

    for (;;) {
        if (read_tag(r, &t) < 0)
            return -1;
        if (t.kind == TAG_CLOSE) {
            if (strcmp(t.name, name) != 0)
                return fail(r, "</%s> closes a <%s>", t.name, name);
            return 0;
        }
        if (name[0] == 'd') {
            if (read_entry(r, &t) < 0)
                return -1;
            continue;
        }
        if (push(r, NULL, 0, index++) < 0 || read_value(r, &t) < 0)
            return -1;
        r->path.depth--;
    }
}

static int read_bool(reader_t *r, const tag_t *t, tbm_plist_value_t *v)
{
    tag_t close;

    v->type = TBM_PLIST_BOOL;
    v->boolean = t->name[0] == 't';
    if (t->kind == TAG_OPEN && (read_tag(r, &close) < 0 || close.kind != TAG_CLOSE || strcmp(close.name, t->name)))
        return fail(r, "<%s> holds something; write <%s/>", t->name, t->name);
    return emit(r, v);
}

static int read_value(reader_t *r, const tag_t *t)
{
    static const struct { const char *name; tbm_plist_type_t type; } texts[] = {
        { "string", TBM_PLIST_STRING }, { "integer", TBM_PLIST_INTEGER }, { "real", TBM_PLIST_REAL },
        { "date", TBM_PLIST_DATE }, { "data", TBM_PLIST_DATA },
    };
    tbm_plist_value_t v = { .text = "", .line = t->line };
    size_t i;

    if (t->kind == TAG_CLOSE)
        return fail(r, "</%s> stands where a value was expected", t->name);
    if (strcmp(t->name, "dict") == 0 || strcmp(t->name, "array") == 0) {
        v.type = t->name[0] == 'd' ? TBM_PLIST_DICT : TBM_PLIST_ARRAY;
        if (emit(r, &v) < 0)
            return -1;
        return t->kind == TAG_EMPTY ? 0 : read_members(r, t->name);
    }
    if (strcmp(t->name, "true") == 0 || strcmp(t->name, "false") == 0)
        return read_bool(r, t, &v);
    for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        if (strcmp(t->name, texts[i].name) == 0)
            break;
    if (i == sizeof(texts) / sizeof(texts[0]))
        return fail(r, "<%s> is not a value of a property list", t->name);
    v.type = texts[i].type;
    if (t->kind == TAG_OPEN && read_text(r, t->name, &v.text, &v.len) < 0)
        return -1;
    if ((v.type == TBM_PLIST_INTEGER && read_integer(r, &v) < 0) || (v.type == TBM_PLIST_REAL && read_real(r, &v) < 0))
        return -1;
    return emit(r, &v);
}

/* `<?xml ...?>` and `<!DOCTYPE ...>`, each optional. */
static int read_prolog(reader_t *r)
{
    skip_ws(r);
    if (r->p >= r->end)
        return fail(r, "the document is empty: nothing was captured");
    if (at(r, "<?xml") && skip_past(r, "?>") < 0)
        return fail(r, "the text ends inside <?xml ...?>: " CUT_SHORT);
    skip_ws(r);
    if (at(r, "<!DOCTYPE")) {
        const char *gt = memchr(r->p, '>', (size_t)(r->end - r->p));
        const char *bracket = memchr(r->p, '[', (size_t)(r->end - r->p));

        if (!gt)
            return fail(r, "the text ends inside <!DOCTYPE ...>: " CUT_SHORT);
        if (bracket && bracket < gt)
            return fail(r, "<!DOCTYPE ...> has an internal subset ('['), which is not read");
        advance(r, (size_t)(gt - r->p) + 1);
    }
    return 0;
}

int tbm_plist_read(const char *text, size_t len, tbm_plist_fn fn, void *arg, tbm_err_t *err)
{
    reader_t r = { .start = text, .p = text, .end = text + len, .line = 1, .fn = fn, .arg = arg, .err = err };
    size_t bad;
    tag_t t;

    tbm_errclear(err);
    if (len > TBM_PLIST_SIZE_MAX)
        return tbm_errprintf(err, "the document is %zu bytes, more than the %u read", len, TBM_PLIST_SIZE_MAX);
    bad = text ? tbm_utf8_check(text, len) : 0;
    if (bad < len) {
        advance(&r, bad);
        return fail(&r, "byte %zu is not UTF-8 text (or is a NUL byte)", bad);
    }
    if (read_prolog(&r) < 0 || read_tag(&r, &t) < 0)
        return -1;
    if (t.kind != TAG_OPEN || strcmp(t.name, "plist") != 0)
        return fail(&r, "the document starts with <%s%s>, not <plist>", t.kind == TAG_CLOSE ? "/" : "", t.name);
    if (read_tag(&r, &t) < 0 || read_value(&r, &t) < 0 || read_tag(&r, &t) < 0)
        return -1;
    if (t.kind != TAG_CLOSE || strcmp(t.name, "plist") != 0)
        return fail(&r, "<%s> follows the value; a <plist> holds one value, then </plist>", t.name);
    skip_ws(&r);
    if (r.p < r.end)
        return fail(&r, "\"%.*s\" follows </plist>", show_len(&r), r.p);
    return 0;
}

int tbm_plist_path_is(const tbm_plist_path_t *path, size_t n, const char *const *keys)
{
    size_t i;

    if ((size_t)path->depth != n)
        return 0;
    for (i = 0; i < n; i++) {
        const tbm_plist_step_t *s = &path->step[i];

        if (!s->key || s->key_len != strlen(keys[i]) || memcmp(s->key, keys[i], s->key_len) != 0)
            return 0;
    }
    return 1;
}

void tbm_plist_path_text(const tbm_plist_path_t *path, char *buf, size_t size)
{
    size_t used = 0;
    int i, n;

    if (size == 0)
        return;
    buf[0] = '\0';
    if (path->depth == 0) {
        snprintf(buf, size, "(top)");
        return;
    }
    for (i = 0; i < path->depth && used < size; i++) {
        const tbm_plist_step_t *s = &path->step[i];

        if (s->key)
            n = snprintf(buf + used, size - used, "%s%.*s", i ? "/" : "", tbm_show_len(s->key, s->key_len, 40), s->key);
        else
            n = snprintf(buf + used, size - used, "[%zu]", s->index);
        if (n < 0)
            return;
        used += (size_t)n;
    }
}

const char *tbm_plist_type_name(tbm_plist_type_t type)
{
    static const char *const names[] = { "dict", "array", "string", "integer", "real", "bool", "date", "data" };

    return (unsigned)type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}
