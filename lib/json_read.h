/* json_read.h: reading JSON text safely (json-c): bounded size and depth, strict syntax, valid UTF-8,
 * nothing after the document; and typed look-ups of members. */
#ifndef TBM_JSON_READ_H
#define TBM_JSON_READ_H

#include <stddef.h>
#include <json-c/json.h>

#include "errbuf.h"

/* Nesting deeper than this is refused (real system_profiler output nests about 8 levels). */
#define TBM_JSON_DEPTH 32

/* Parse a whole buffer. Returns the document (json_object_put it), or NULL with err saying what and
 * where (line and column) it was wrong. */
json_object *tbm_json_parse(const char *text, size_t len, tbm_err_t *err);

/* The member `key` of obj when it is a string without NUL bytes, else NULL. */
const char *tbm_json_str(json_object *obj, const char *key);

/* The member `key` of obj when it has type `type`, else NULL. */
json_object *tbm_json_typed(json_object *obj, const char *key, json_type type);

/* Name of a JSON type for messages: "a string", "an array". */
const char *tbm_json_type_name(json_type type);

#endif
