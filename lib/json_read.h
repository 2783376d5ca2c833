/* json_read.h: the project's one JSON reader (json-c underneath): strict syntax, valid UTF-8, no NUL byte,
 * no key twice in one object, bounded size and depth, nothing after the document, the root of the expected
 * type; and typed look-ups of members that name what was wrong in their errors. Every module that reads
 * JSON it did not write itself (the protocol, MLX's files, captured macOS outputs) reads it here. */
#ifndef TBM_JSON_READ_H
#define TBM_JSON_READ_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "errbuf.h"

/* Nesting deeper than this is refused (real system_profiler output nests about 8 levels). */
#define TBM_JSON_DEPTH 32

/* What a reading accepts and how its errors read. Zero members take the defaults. */
typedef struct tbm_json_rules {
    const char *what;     /* names the text at the start of each error ("message", "hosts.json"); NULL: none */
    size_t max_len;       /* largest text accepted; 0: TBM_RAW_MAX */
    int max_depth;        /* deepest nesting; 0: TBM_JSON_DEPTH */
    int want_object;      /* the document must be a JSON object */
    int want_array;       /* the document must be a JSON array */
    const char *fix;      /* what to do, ending each error ("capture the output again in full"); NULL: none */
} tbm_json_rules_t;

/* Read a whole buffer under `rules` (NULL: the defaults). Returns the document (json_object_put it), or NULL
 * with err saying what was wrong and where: "<what>: invalid JSON at line L column C: <why>; <fix>". */
json_object *tbm_json_read(const char *text, size_t len, const tbm_json_rules_t *rules, tbm_err_t *err);

/* tbm_json_read for captured outputs: any document, the default limits, "capture the output again in full". */
json_object *tbm_json_parse(const char *text, size_t len, tbm_err_t *err);

/* The member `key` of obj when it is a string without NUL bytes, else NULL. */
const char *tbm_json_str(json_object *obj, const char *key);

/* The member `key` of obj when it has type `type`, else NULL. */
json_object *tbm_json_typed(json_object *obj, const char *key, json_type type);

/* Name of a JSON type for messages: "a string", "an array". */
const char *tbm_json_type_name(json_type type);

/* A JSON string value without NUL bytes (its length in *len when len is not NULL), else NULL. */
const char *tbm_json_plain_string(json_object *v, size_t *len);

/* Typed members that must be right. `what` names the object in errors ("spawn: 'argv' must be ..."). Each
 * returns 0 with *out set, 0 with *out untouched when the member is absent and not required, or -1 with err
 * (err may be NULL). */

/* An integer in [min, max]. */
int tbm_json_get_int(json_object *o, const char *what, const char *key, int required, int64_t min, int64_t max,
                     int64_t *out, tbm_err_t *err);

/* A string of 1..maxlen bytes without NUL. */
int tbm_json_get_str(json_object *o, const char *what, const char *key, int required, size_t maxlen,
                     const char **out, tbm_err_t *err);

/* A boolean; absent: *out = 0. */
int tbm_json_get_bool(json_object *o, const char *what, const char *key, int *out, tbm_err_t *err);

#endif
