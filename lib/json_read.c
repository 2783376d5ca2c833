/* json_read.c: the one strict, bounded JSON reader on top of json-c, and typed member look-ups (see
 * json_read.h). */
#include "json_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_text.h"

static void position(const char *text, size_t off, int *line, int *col)
{
    size_t i;

    *line = 1;
    *col = 1;
    for (i = 0; i < off; i++) {
        if (text[i] == '\n')
            (*line)++, *col = 1;
        else
            (*col)++;
    }
}

/* "<what>: <problem>; <fix>"; returns NULL. */
static json_object *fail(const tbm_json_rules_t *r, tbm_err_t *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static json_object *fail(const tbm_json_rules_t *r, tbm_err_t *err, const char *fmt, ...)
{
    char problem[TBM_ERR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(problem, sizeof(problem), fmt, ap);
    va_end(ap);
    tbm_errprintf(err, "%s%s%s%s%s", r->what ? r->what : "", r->what ? ": " : "", problem, r->fix ? "; " : "",
                  r->fix ? r->fix : "");
    return NULL;
}

static json_object *fail_at(const tbm_json_rules_t *r, const char *text, size_t off, const char *why,
                            tbm_err_t *err)
{
    int line, col;

    position(text, off, &line, &col);
    return fail(r, err, "invalid JSON at line %d column %d: %s", line, col, why);
}

/* What json-c's strict mode lets through although JSON has no such thing: outside strings only structure,
 * numbers, true, false and null may stand (no single-quoted names, no NaN or Infinity). Returns the offset
 * of the first character that may not, or len; counts the ':' outside strings (one per member written). */
static size_t scan_outside_strings(const char *text, size_t len, size_t *colons)
{
    size_t i;
    int in_string = 0;

    *colons = 0;
    for (i = 0; i < len; i++) {
        if (in_string) {
            if (text[i] == '\\')
                i++;
            else if (text[i] == '"')
                in_string = 0;
        } else if (text[i] == '"') {
            in_string = 1;
        } else if (text[i] == ':') {
            (*colons)++;
        } else if (!strchr(" \t\r\n{}[],0123456789+-.eEtrufalsn", text[i])) {
            return i;
        }
    }
    return len;
}

/* Members the document holds: json-c keeps one per key, so fewer than were written means a key twice. */
static size_t members_kept(json_object *o)
{
    size_t n = 0, i, len;

    if (json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, key, v) {
            (void)key;
            n += 1 + members_kept(v);
        }
    } else if (json_object_is_type(o, json_type_array)) {
        len = json_object_array_length(o);
        for (i = 0; i < len; i++)
            n += members_kept(json_object_array_get_idx(o, i));
    }
    return n;
}

/* The text json-c reads: the document as given, or with its raw UTF-8 as \u escapes (escape_utf8). */
typedef struct {
    const char *orig;     /* as given */
    size_t orig_len;
    const char *text;     /* as read: orig, or the escaped copy */
    size_t len;
} source_t;

/* An offset into what json-c read, as an offset into the document as given. */
static size_t given_offset(const source_t *src, size_t off)
{
    const unsigned char *s = (const unsigned char *)src->orig;
    size_t i = 0, at = 0, n;

    if (src->text == src->orig)
        return off;
    while (i < src->orig_len && at < off) {
        if (s[i] < 0x80) {
            i++, at++;
            continue;
        }
        n = tbm_utf8_seq(s + i, src->orig_len - i);
        at += n == 4 ? 12 : 6;   /* \uXXXX, or a surrogate pair of them */
        i += n ? n : 1;
    }
    return i;
}

/* The document's raw UTF-8 (already checked valid) written as \u escapes, in a copy: json-c 0.17 and 0.18
 * (Debian 13) refuse in strict mode every byte above 0x7f in a string, and every release must read the same
 * documents. NULL with *oom 0 when the text is ASCII already. */
static char *escape_utf8(const char *text, size_t len, size_t *out_len, int *oom)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i, n, k, o = 0, extra = 0;
    unsigned cp;
    char *copy;

    *oom = 0;
    for (i = 0; i < len; i++)
        if (s[i] >= 0x80)
            extra += 12;
    if (!extra)
        return NULL;
    if (!(copy = malloc(len + extra + 1))) {
        *oom = 1;
        return NULL;
    }
    for (i = 0; i < len; i += n) {
        if (s[i] < 0x80) {
            copy[o++] = text[i];
            n = 1;
            continue;
        }
        n = tbm_utf8_seq(s + i, len - i);
        cp = s[i] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
        for (k = 1; k < n; k++)
            cp = (cp << 6) | (s[i + k] & 0x3f);
        if (cp > 0xffff) {
            cp -= 0x10000;
            o += (size_t)sprintf(copy + o, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
        } else {
            o += (size_t)sprintf(copy + o, "\\u%04x", cp);
        }
    }
    copy[o] = '\0';
    *out_len = o;
    return copy;
}

static json_object *checked_doc(json_object *doc, const source_t *src, size_t end, const tbm_json_rules_t *r,
                                tbm_err_t *err)
{
    const char *text = src->text;
    const char *want = NULL;
    size_t colons, bad = scan_outside_strings(text, end, &colons);

    if (bad < end) {
        json_object_put(doc);
        return fail_at(r, src->orig, given_offset(src, bad), "not JSON (a single-quoted name, NaN or Infinity?)", err);
    }
    if (members_kept(doc) != colons)
        want = "a key appears twice in one object (which value counts would be a guess)";
    else if (r->want_object && !json_object_is_type(doc, json_type_object))
        want = "the document must be a JSON object";
    else if (r->want_array && !json_object_is_type(doc, json_type_array))
        want = "the document must be a JSON list";
    if (!want)
        return doc;
    json_object_put(doc);
    return fail(r, err, "invalid JSON: %s", want);
}

/* Where the text stops being UTF-8, or len. Checked here, not by json-c: its own check
 * (JSON_TOKENER_VALIDATE_UTF8) refuses valid text such as {"\u00e9":"\u20ac"} written as UTF-8 in json-c
 * 0.17 and 0.18 (Debian 13), and every release must read the same documents. */
static size_t first_bad_utf8(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0, n;

    while (i < len) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        if ((n = tbm_utf8_seq(s + i, len - i)) == 0)
            return i;
        i += n;
    }
    return len;
}

/* Where a string has a backslash before a byte above 0x7f, or len: no escape is written so (JSON has \" \\ \/ \b
 * \f \n \r \t and \uXXXX), and escape_utf8 would write the byte as \u00e9 after the backslash, which reads as a
 * backslash and "u00e9". */
static size_t first_bad_escape(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i;
    int in_string = 0;

    for (i = 0; i < len; i++) {
        if (!in_string) {
            in_string = s[i] == '"';
        } else if (s[i] == '"') {
            in_string = 0;
        } else if (s[i] == '\\' && i + 1 < len) {
            if (s[++i] >= 0x80)
                return i;
        }
    }
    return len;
}

json_object *tbm_json_read(const char *text, size_t len, const tbm_json_rules_t *rules, tbm_err_t *err)
{
    static const tbm_json_rules_t defaults;
    const tbm_json_rules_t *r = rules ? rules : &defaults;
    size_t max = r->max_len ? r->max_len : TBM_RAW_MAX, end;
    struct json_tokener *tok;
    json_object *doc;
    enum json_tokener_error jerr;
    const char *nul;
    size_t bad;
    source_t src;
    char *copy;
    int oom;

    if (len > max || len > (size_t)INT32_MAX)
        return fail(r, err, "JSON text of %zu bytes exceeds the limit of %zu bytes", len, max);
    if (!text || len == 0 || tbm_span_trim(text, len).n == 0)
        return fail(r, err, "empty JSON text");
    if ((nul = memchr(text, '\0', len)))
        return fail_at(r, text, (size_t)(nul - text), "a NUL byte", err);
    if ((bad = first_bad_utf8(text, len)) < len)
        return fail_at(r, text, bad, "invalid utf-8 string", err);
    if ((bad = first_bad_escape(text, len)) < len)
        return fail_at(r, text, bad, "invalid string sequence", err);
    src.orig = src.text = text;
    src.orig_len = src.len = len;
    if ((copy = escape_utf8(text, len, &src.len, &oom)))
        src.text = copy;
    else if (oom)
        return fail(r, err, "out of memory reading JSON");
    tok = json_tokener_new_ex(r->max_depth > 0 ? r->max_depth : TBM_JSON_DEPTH);
    if (!tok) {
        free(copy);
        return fail(r, err, "out of memory reading JSON");
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    doc = json_tokener_parse_ex(tok, src.text, (int)src.len);
    jerr = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    if (!doc && jerr == json_tokener_continue) {
        /* the end of the text: a number or null at the top ends here, anything else was cut short */
        doc = json_tokener_parse_ex(tok, "", 1);
        jerr = doc || json_tokener_get_error(tok) == json_tokener_success ? json_tokener_success
                                                                            : json_tokener_continue;
        end = src.len;
    }
    json_tokener_free(tok);
    if (!doc) {
        free(copy);
        if (jerr == json_tokener_success)
            return fail_at(r, text, len, "null is not a document here", err);
        if (jerr == json_tokener_continue)
            return fail_at(r, text, len, "the text ends inside the document (truncated?)", err);
        return fail_at(r, text, given_offset(&src, end), json_tokener_error_desc(jerr), err);
    }
    if (end < src.len && tbm_span_trim(src.text + end, src.len - end).n > 0) {
        json_object_put(doc);
        end = given_offset(&src, end);
        free(copy);
        return fail_at(r, text, end, "text after the end of the document", err);
    }
    doc = checked_doc(doc, &src, end, r, err);
    free(copy);
    return doc;
}

json_object *tbm_json_parse(const char *text, size_t len, tbm_err_t *err)
{
    static const tbm_json_rules_t capture = { .fix = "capture the output again in full" };

    return tbm_json_read(text, len, &capture, err);
}

json_object *tbm_json_typed(json_object *obj, const char *key, json_type type)
{
    json_object *v = NULL;

    if (!json_object_is_type(obj, json_type_object) || !json_object_object_get_ex(obj, key, &v))
        return NULL;
    return json_object_is_type(v, type) ? v : NULL;
}

const char *tbm_json_plain_string(json_object *v, size_t *len)
{
    const char *s;
    size_t n;

    if (!json_object_is_type(v, json_type_string))
        return NULL;
    s = json_object_get_string(v);
    n = (size_t)json_object_get_string_len(v);
    if (len)
        *len = n;
    return strlen(s) == n ? s : NULL;
}

const char *tbm_json_str(json_object *obj, const char *key)
{
    return tbm_json_plain_string(tbm_json_typed(obj, key, json_type_string), NULL);
}

const char *tbm_json_type_name(json_type type)
{
    switch (type) {
    case json_type_null:    return "null";
    case json_type_boolean: return "a boolean";
    case json_type_double:  return "a number with a fraction";
    case json_type_int:     return "an integer";
    case json_type_object:  return "an object";
    case json_type_array:   return "an array";
    case json_type_string:  return "a string";
    }
    return "an unknown type";
}

/* Typed members ---------------------------------------------------------------------------------------- */

/* 1 with the member, 0 when absent and not required, -1 when required and absent. */
static int member(json_object *o, const char *what, const char *key, int required, json_object **v,
                  tbm_err_t *err)
{
    *v = NULL;
    if (json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, v) && *v)
        return 1;
    *v = NULL;
    return required ? tbm_errprintf(err, "%s: member '%s' is missing", what, key) : 0;
}

int tbm_json_get_int(json_object *o, const char *what, const char *key, int required, int64_t min, int64_t max,
                     int64_t *out, tbm_err_t *err)
{
    json_object *v;
    int64_t x;
    int rc = member(o, what, key, required, &v, err);

    if (rc <= 0)
        return rc;
    if (!json_object_is_type(v, json_type_int))
        return tbm_errprintf(err, "%s: '%s' must be an integer", what, key);
    x = json_object_get_int64(v);
    if (x < min || x > max || (x == INT64_MAX && max == INT64_MAX && json_object_get_uint64(v) > INT64_MAX))
        return tbm_errprintf(err, "%s: '%s' is %lld, outside %lld..%lld", what, key, (long long)x,
                             (long long)min, (long long)max);
    *out = x;
    return 0;
}

int tbm_json_get_str(json_object *o, const char *what, const char *key, int required, size_t maxlen,
                     const char **out, tbm_err_t *err)
{
    json_object *v;
    const char *s;
    size_t n = 0;
    int rc = member(o, what, key, required, &v, err);

    if (rc <= 0)
        return rc;
    s = tbm_json_plain_string(v, &n);
    if (!s || n == 0 || n > maxlen)
        return tbm_errprintf(err, "%s: '%s' must be a string of 1 to %zu bytes without NUL", what, key, maxlen);
    *out = s;
    return 0;
}

int tbm_json_get_bool(json_object *o, const char *what, const char *key, int *out, tbm_err_t *err)
{
    json_object *v;
    int rc = member(o, what, key, 0, &v, err);

    *out = 0;
    if (rc <= 0)
        return rc;
    if (!json_object_is_type(v, json_type_boolean))
        return tbm_errprintf(err, "%s: '%s' must be true or false", what, key);
    *out = json_object_get_boolean(v);
    return 0;
}
