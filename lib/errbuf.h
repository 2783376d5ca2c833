/* errbuf.h: the human message that travels from where a problem is found to where it is shown.
 * Functions that fail return -1 (or NULL) and fill a tbm_err_t saying what was wrong and what to do. */
#ifndef TBM_ERRBUF_H
#define TBM_ERRBUF_H

#include <stddef.h>

#define TBM_ERR_MAX 1024

typedef struct tbm_err {
    char msg[TBM_ERR_MAX];
} tbm_err_t;

/* Set the message (printf-style). Always returns -1, so callers can write `return tbm_errprintf(...)`.
 * A NULL err is allowed and ignored. A message longer than the buffer is cut and ends in "...". */
int tbm_errprintf(tbm_err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Put context in front of the message already there ("tbmesh.conf:12: " + message). Returns -1. */
int tbm_errprefix(tbm_err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Empty the message. */
void tbm_errclear(tbm_err_t *err);

/* True when a message is set. */
int tbm_erris(const tbm_err_t *err);

#endif
