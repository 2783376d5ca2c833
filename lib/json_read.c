/* json_read.c: strict, bounded JSON reading on top of json-c (see json_read.h). */
#include "json_read.h"

#include <string.h>

#include "rawtext.h"

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

static json_object *fail_at(const char *text, size_t off, const char *why, tbm_err_t *err)
{
    int line, col;

    position(text, off, &line, &col);
    tbm_errprintf(err, "invalid JSON at line %d column %d: %s; capture the output again in full", line, col,
                  why);
    return NULL;
}

json_object *tbm_json_parse(const char *text, size_t len, tbm_err_t *err)
{
    struct json_tokener *tok;
    json_object *doc;
    enum json_tokener_error jerr;
    size_t end;

    if (len > TBM_RAW_MAX)
        return tbm_errprintf(err, "JSON text of %zu bytes exceeds the limit of %u bytes; check that the right "
                             "file was given", len, TBM_RAW_MAX), NULL;
    if (!text || len == 0 || tbm_span_trim(text, len).n == 0)
        return tbm_errprintf(err, "empty JSON text; capture the output again"), NULL;
    tok = json_tokener_new_ex(TBM_JSON_DEPTH);
    if (!tok)
        return tbm_errprintf(err, "out of memory reading JSON"), NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    doc = json_tokener_parse_ex(tok, text, (int)len);
    jerr = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (!doc && jerr == json_tokener_continue)
        return fail_at(text, len, "the text ends inside the document (truncated?)", err);
    if (!doc)
        return fail_at(text, end, json_tokener_error_desc(jerr), err);
    if (end < len && tbm_span_trim(text + end, len - end).n > 0) {
        json_object_put(doc);
        return fail_at(text, end, "text after the end of the document", err);
    }
    return doc;
}

json_object *tbm_json_typed(json_object *obj, const char *key, json_type type)
{
    json_object *v = NULL;

    if (!json_object_is_type(obj, json_type_object) || !json_object_object_get_ex(obj, key, &v))
        return NULL;
    return json_object_is_type(v, type) ? v : NULL;
}

const char *tbm_json_str(json_object *obj, const char *key)
{
    json_object *v = tbm_json_typed(obj, key, json_type_string);
    const char *s;

    if (!v)
        return NULL;
    s = json_object_get_string(v);
    return strlen(s) == (size_t)json_object_get_string_len(v) ? s : NULL;
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
