/* auth.h: MUNGE credentials: make one (a connection's hello, a root-made job grant, a record's seal) and
 * decode one, saying who made it and until when it is good. */
#ifndef TBM_COMMON_AUTH_H
#define TBM_COMMON_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "errbuf.h"

/* Why a credential was refused, for the agent's log and error code. */
typedef enum auth_fail {
    AUTH_OK = 0,
    AUTH_FORGED,     /* invalid, bad key, corrupt: not made by a munged sharing our key */
    AUTH_REPLAYED,   /* seen before */
    AUTH_EXPIRED,    /* too old (or from the future: clocks) */
    AUTH_UNAVAILABLE /* munged could not be asked */
} auth_fail_t;

/* A decoded credential. */
typedef struct auth_cred {
    uid_t uid;
    gid_t gid;
    int64_t expires;      /* encode time + TTL, seconds since the epoch */
    char *payload;        /* NUL-terminated (malloc'd; may be NULL when empty) */
    size_t len;
} auth_cred_t;

/* A credential carrying `payload` (may be NULL) good for ttl seconds (0: munged's default), made through
 * the munged at `socket` (NULL: the default socket). malloc'd, or NULL with err. */
char *auth_encode(const char *socket, const void *payload, size_t len, int ttl, tbm_err_t *err);

/* auth_encode, a failure said as "munge: cannot DOING: ..." (doing: "seal the record of job 5"). */
char *auth_encode_doing(const char *doing, const char *socket, const void *payload, size_t len, int ttl,
                        tbm_err_t *err);

/* Decode `cred` through the munged at `socket`. AUTH_OK and *c filled (auth_cred_free it), or the reason
 * with err saying what munged said. */
auth_fail_t auth_decode(const char *socket, const char *cred, auth_cred_t *c, tbm_err_t *err);

/* auth_decode, but a credential that has expired, was decoded before or was made "in the future" still says
 * who made it and what it carries (AUTH_OK): for a seal checked long after it was made, not for a hello. */
auth_fail_t auth_decode_stale(const char *socket, const char *cred, auth_cred_t *c, tbm_err_t *err);

void auth_cred_free(auth_cred_t *c);

/* The error code the protocol uses for a failure ("forged", "replay", "expired", "auth"). */
const char *auth_fail_code(auth_fail_t f);

#endif
