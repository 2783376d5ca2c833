/* auth.c: MUNGE credentials for the bridge-agent protocol (see auth.h). */
#include "config.h"
#include "auth.h"

#include <munge.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static munge_ctx_t context(const char *socket, int ttl, tbm_err_t *err)
{
    munge_ctx_t ctx = munge_ctx_create();

    if (!ctx)
        return tbm_errprintf(err, "munge: out of memory"), NULL;
    if ((socket && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) ||
        (ttl > 0 && munge_ctx_set(ctx, MUNGE_OPT_TTL, ttl) != EMUNGE_SUCCESS)) {
        tbm_errprintf(err, "munge: cannot set the socket or TTL: %s", munge_ctx_strerror(ctx));
        munge_ctx_destroy(ctx);
        return NULL;
    }
    return ctx;
}

char *auth_encode(const char *socket, const void *payload, size_t len, int ttl, tbm_err_t *err)
{
    return auth_encode_doing("make a credential", socket, payload, len, ttl, err);
}

char *auth_encode_doing(const char *doing, const char *socket, const void *payload, size_t len, int ttl,
                        tbm_err_t *err)
{
    munge_ctx_t ctx = context(socket, ttl, err);
    char *cred = NULL;
    munge_err_t rc;

    if (!ctx)
        return NULL;
    rc = munge_encode(&cred, ctx, payload, (int)len);
    if (rc != EMUNGE_SUCCESS) {
        tbm_errprintf(err, "munge: cannot %s: %s (is munged running%s%s?)", doing,
                      munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(rc), socket ? " at " : "",
                      socket ? socket : "");
        cred = NULL;
    }
    munge_ctx_destroy(ctx);
    return cred;
}

static auth_fail_t classify(munge_err_t rc)
{
    switch (rc) {
    case EMUNGE_SUCCESS: return AUTH_OK;
    case EMUNGE_CRED_REPLAYED: return AUTH_REPLAYED;
    case EMUNGE_CRED_EXPIRED:
    case EMUNGE_CRED_REWOUND: return AUTH_EXPIRED;
    case EMUNGE_SNAFU:
    case EMUNGE_NO_MEMORY:
    case EMUNGE_SOCKET:
    case EMUNGE_TIMEOUT: return AUTH_UNAVAILABLE;
    default: return AUTH_FORGED;
    }
}

/* Decode cred; with stale_ok, a credential that has expired, was decoded before or rewound still gives its
 * maker and payload (AUTH_OK). */
static auth_fail_t decode(const char *socket, const char *cred, int stale_ok, auth_cred_t *c, tbm_err_t *err)
{
    munge_ctx_t ctx = context(socket, 0, err);
    void *payload = NULL;
    int len = 0, ttl = 0;
    time_t encoded = 0;
    munge_err_t rc;
    auth_fail_t why;

    memset(c, 0, sizeof(*c));
    if (!ctx)
        return AUTH_UNAVAILABLE;
    rc = munge_decode(cred, ctx, &payload, &len, &c->uid, &c->gid);
    why = classify(rc);
    if (stale_ok && (why == AUTH_EXPIRED || why == AUTH_REPLAYED))
        why = AUTH_OK;
    if (why == AUTH_OK) {
        munge_ctx_get(ctx, MUNGE_OPT_ENCODE_TIME, &encoded);
        munge_ctx_get(ctx, MUNGE_OPT_TTL, &ttl);
        c->expires = (int64_t)encoded + ttl;
        c->payload = payload;
        c->len = (size_t)len;
        payload = NULL;
    } else {
        tbm_errprintf(err, "munge: %s", munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(rc));
    }
    free(payload);
    munge_ctx_destroy(ctx);
    return why;
}

auth_fail_t auth_decode(const char *socket, const char *cred, auth_cred_t *c, tbm_err_t *err)
{
    return decode(socket, cred, 0, c, err);
}

auth_fail_t auth_decode_stale(const char *socket, const char *cred, auth_cred_t *c, tbm_err_t *err)
{
    return decode(socket, cred, 1, c, err);
}

void auth_cred_free(auth_cred_t *c)
{
    free(c->payload);
    memset(c, 0, sizeof(*c));
}

const char *auth_fail_code(auth_fail_t f)
{
    switch (f) {
    case AUTH_OK: return "ok";
    case AUTH_FORGED: return "forged";
    case AUTH_REPLAYED: return "replay";
    case AUTH_EXPIRED: return "expired";
    default: return "auth";
    }
}
