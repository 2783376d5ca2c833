/* plist.h: a small strict reader of XML property lists, the form `powermetrics -f plist` prints. It builds no
 * tree: each value goes to a callback with the path of keys and indices that leads to it, so a reader takes
 * what it needs and the memory used does not grow with the document. Bounded in size, depth and text.
 *
 * Read: an optional `<?xml ...?>` and `<!DOCTYPE ...>` (no internal subset), `<plist ...>`, one value,
 * `</plist>`, then only white space. Values: <dict> (<key> then a value, repeated), <array>, <string>,
 * <integer>, <real>, <date>, <data>, <true/>, <false/>; `<x/>` for an empty one. Refused, with the line and
 * the path: any other element, comments, text between elements, a '<' or a bad '&' entity in a text, a key
 * without a value, a number that is not one, a document cut short, text that is not UTF-8 (or has a NUL).
 * A key may appear twice in one dict (powermetrics writes the GPU's idle_ratio twice): both are handed on. */
#ifndef TBM_PLIST_H
#define TBM_PLIST_H

#include <stddef.h>

#include "errbuf.h"

#define TBM_PLIST_SIZE_MAX  (4u * 1024u * 1024u)   /* one document */
#define TBM_PLIST_DEPTH_MAX 16                       /* dicts and arrays inside one another */
#define TBM_PLIST_TEXT_MAX  (64u * 1024u)            /* the text of one key or value */

typedef enum tbm_plist_type {
    TBM_PLIST_DICT,
    TBM_PLIST_ARRAY,
    TBM_PLIST_STRING,
    TBM_PLIST_INTEGER,
    TBM_PLIST_REAL,
    TBM_PLIST_BOOL,
    TBM_PLIST_DATE,
    TBM_PLIST_DATA,
} tbm_plist_type_t;

typedef struct tbm_plist_value {
    tbm_plist_type_t type;
    const char *text;   /* the element's text as written (entities not decoded); "" for dict, array, bool */
    size_t len;
    double real;        /* TBM_PLIST_REAL (may be NaN or infinite), and TBM_PLIST_INTEGER as a double */
    long long integer;  /* TBM_PLIST_INTEGER when `exact` */
    int exact;          /* the integer fits a long long */
    int boolean;        /* TBM_PLIST_BOOL */
    int line;           /* the line the value starts on, from 1 */
} tbm_plist_value_t;

/* One step of a path: a dict's key (as written) or an array's index. */
typedef struct tbm_plist_step {
    const char *key;    /* NULL in an array */
    size_t key_len;
    size_t index;
} tbm_plist_step_t;

typedef struct tbm_plist_path {
    int depth;          /* 0: the document's top value; 1: a value inside it; ... */
    tbm_plist_step_t step[TBM_PLIST_DEPTH_MAX];
} tbm_plist_path_t;

/* Called for every value, a dict or an array when it opens (before what it holds). Returns 0 to go on, or -1
 * with err set to stop the reading (tbm_plist_read then returns -1 with that message). */
typedef int (*tbm_plist_fn)(const tbm_plist_path_t *path, const tbm_plist_value_t *v, void *arg, tbm_err_t *err);

/* Read one document. Returns 0, or -1 with err saying "line N: what is wrong (at PATH)". */
int tbm_plist_read(const char *text, size_t len, tbm_plist_fn fn, void *arg, tbm_err_t *err);

/* True when the path is exactly the dict keys keys[0]/.../keys[n-1] from the top value. */
int tbm_plist_path_is(const tbm_plist_path_t *path, size_t n, const char *const *keys);

/* The path for a message: "processor/clusters[1]/name"; "(top)" for the top value. */
void tbm_plist_path_text(const tbm_plist_path_t *path, char *buf, size_t size);

const char *tbm_plist_type_name(tbm_plist_type_t type);

#endif
