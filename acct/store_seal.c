/* store_seal.c: the record's MUNGE seal. Made by root on the node when the record is written: a credential
 * whose payload names cluster, job and the stored text's SHA-256. Anyone who shares the MUNGE key can check
 * it later; munged reports the maker's uid even once the credential has expired (or was decoded before),
 * so the seal stays checkable as long as the key is kept. */
#include "config.h"
#include "store.h"

#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

#define SEAL_KIND "tbmesh-record-seal"

static munge_ctx_t context(const tbm_store_t *st, tbm_err_t *err)
{
    munge_ctx_t ctx = munge_ctx_create();

    if (!ctx)
        return tbm_errprintf(err, "munge: out of memory"), NULL;
    if (st->munge_socket[0] && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, st->munge_socket) != EMUNGE_SUCCESS) {
        tbm_errprintf(err, "munge: cannot use the socket %s", st->munge_socket);
        munge_ctx_destroy(ctx);
        return NULL;
    }
    return ctx;
}

char *tbm_seal_make(const tbm_store_t *st, uint32_t job, const char *sha256, const tbm_seal_what_t *what,
                    tbm_err_t *err)
{
    char payload[640], *cred = NULL;
    munge_ctx_t ctx = context(st, err);
    munge_err_t rc;

    if (!ctx)
        return NULL;
    snprintf(payload, sizeof(payload), "{\"seal\":\"%s\",\"v\":1,\"cluster\":\"%s\",\"job\":%u,\"sha256\":\"%s\","
             "\"phase\":\"%s\",\"restarts\":%lld}", SEAL_KIND, st->cluster, job, sha256,
             what && strspn(what->phase, "abcdefghijklmnopqrstuvwxyz") == strlen(what->phase) ? what->phase : "",
             what ? what->restarts : 0);
    rc = munge_encode(&cred, ctx, payload, (int)strlen(payload));
    if (rc != EMUNGE_SUCCESS) {
        tbm_errprintf(err, "munge: cannot seal the record of job %u: %s (is munged running%s%s?)", job,
                      munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(rc),
                      st->munge_socket[0] ? " at " : "", st->munge_socket);
        cred = NULL;
    }
    munge_ctx_destroy(ctx);
    return cred;
}

int tbm_seal_check(const tbm_store_t *st, const char *seal, uint32_t job, const char *sha256, tbm_seal_what_t *what,
                   tbm_err_t *err)
{
    munge_ctx_t ctx = context(st, err);
    void *payload = NULL;
    int len = 0, rc = -1;
    uid_t uid = (uid_t)-1;
    gid_t gid;
    munge_err_t mrc;
    json_object *p = NULL;
    tbm_err_t perr;
    const char *kind, *cluster, *digest;
    json_object *j;

    if (!ctx)
        return -1;
    mrc = munge_decode(seal, ctx, &payload, &len, &uid, &gid);
    if (mrc != EMUNGE_SUCCESS && mrc != EMUNGE_CRED_EXPIRED && mrc != EMUNGE_CRED_REPLAYED &&
        mrc != EMUNGE_CRED_REWOUND) {
        tbm_errprintf(err, "the seal of job %u is not a valid MUNGE credential of this cluster: %s", job,
                      munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(mrc));
        goto out;
    }
    if (uid != 0) {
        tbm_errprintf(err, "the seal of job %u was made by uid %u, not by root: the record was not written by the "
                      "node", job, (unsigned)uid);
        goto out;
    }
    if (!payload || !(p = tbm_json_parse(payload, (size_t)len, &perr)) || !(kind = tbm_json_str(p, "seal")) ||
        strcmp(kind, SEAL_KIND) != 0 || !(cluster = tbm_json_str(p, "cluster")) ||
        !(digest = tbm_json_str(p, "sha256")) || !(j = tbm_json_typed(p, "job", json_type_int))) {
        tbm_errprintf(err, "the seal of job %u is a root credential but not a record seal", job);
        goto out;
    }
    if (strcmp(cluster, st->cluster) != 0 || json_object_get_int64(j) != (int64_t)job) {
        tbm_errprintf(err, "the seal belongs to job %lld of cluster %s, not to job %u of %s: it was copied from "
                      "another record", (long long)json_object_get_int64(j), cluster, job, st->cluster);
        goto out;
    }
    if (strcmp(digest, sha256) != 0) {
        tbm_errprintf(err, "the record of job %u was changed after it was sealed (sealed SHA-256 %.16s..., now "
                      "%.16s...): do not trust it", job, digest, sha256);
        goto out;
    }
    if (what) {
        const char *phase = tbm_json_str(p, "phase");
        json_object *r = tbm_json_typed(p, "restarts", json_type_int);
        snprintf(what->phase, sizeof(what->phase), "%s", phase ? phase : "");
        what->restarts = r ? (long long)json_object_get_int64(r) : 0;
    }
    rc = 0;
out:
    json_object_put(p);
    free(payload);
    munge_ctx_destroy(ctx);
    return rc;
}
