/* proto_json.h: the typed JSON member readers that proto.c and proto_msg.c share (internal to lib/).
 * Each names the message and member in its error: "spawn: 'argv' must be an array of strings". */
#ifndef TBM_PROTO_JSON_H
#define TBM_PROTO_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "errbuf.h"

/* Parse `len` bytes as one strict JSON object (UTF-8 checked, depth-limited). NULL with err on failure. */
json_object *tbm_pj_parse(const void *text, size_t len, const char *what, tbm_err_t *err);

/* Member `key` of o as an integer in [min, max]. Absent and not required: 0, *out untouched. */
int tbm_pj_int(json_object *o, const char *what, const char *key, int required, int64_t min, int64_t max,
               int64_t *out, tbm_err_t *err);

/* Member `key` as a string of 1..maxlen bytes without NUL. Absent and not required: 0, *out untouched. */
int tbm_pj_str(json_object *o, const char *what, const char *key, int required, size_t maxlen,
               const char **out, tbm_err_t *err);

/* Member `key` as a boolean. Absent: 0 and *out = 0. */
int tbm_pj_bool(json_object *o, const char *what, const char *key, int *out, tbm_err_t *err);

/* A frame around JSON text (internal to the protocol code): malloc'd, NULL with err when too large. */
unsigned char *tbm_frame_wrap(const char *json, size_t len, size_t *out_len, tbm_err_t *err);

#endif
