/* store_seal.c: the record's MUNGE seal. Made by root on the node when the record is written: a credential
 * whose payload names cluster, job and the stored text's SHA-256. Anyone who shares the MUNGE key can check
 * it later; munged reports the maker's uid even once the credential has expired (or was decoded before),
 * so the seal stays checkable as long as the key is kept. */
#include "config.h"
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "json_read.h"

#define SEAL_KIND "tbmesh-record-seal"

/* munged's socket for the store; NULL: libmunge's default. */
static const char *munge_socket(const tbm_store_t *st)
{
    return st->munge_socket[0] ? st->munge_socket : NULL;
}

char *tbm_seal_make(const tbm_store_t *st, uint32_t job, const char *sha256, const tbm_seal_what_t *what,
                    tbm_err_t *err)
{
    char payload[640], doing[64];

    snprintf(payload, sizeof(payload), "{\"seal\":\"%s\",\"v\":1,\"cluster\":\"%s\",\"job\":%u,\"sha256\":\"%s\","
             "\"phase\":\"%s\",\"restarts\":%lld}", SEAL_KIND, st->cluster, job, sha256,
             what && strspn(what->phase, "abcdefghijklmnopqrstuvwxyz") == strlen(what->phase) ? what->phase : "",
             what ? what->restarts : 0);
    snprintf(doing, sizeof(doing), "seal the record of job %u", job);
    return auth_encode_doing(doing, munge_socket(st), payload, strlen(payload), 0, err);
}

int tbm_seal_check(const tbm_store_t *st, const char *seal, uint32_t job, const char *sha256, tbm_seal_what_t *what,
                   tbm_err_t *err)
{
    auth_cred_t c;
    json_object *p = NULL;
    tbm_err_t perr = { { 0 } };
    const char *kind, *cluster, *digest;
    json_object *j;
    int rc = -1;

    if (auth_decode_stale(munge_socket(st), seal, &c, &perr) != AUTH_OK) {
        tbm_errprintf(err, "the seal of job %u is not a valid MUNGE credential of this cluster: %s", job, perr.msg);
        goto out;
    }
    if (c.uid != 0) {
        tbm_errprintf(err, "the seal of job %u was made by uid %u, not by root: the record was not written by the "
                      "node", job, (unsigned)c.uid);
        goto out;
    }
    if (!c.payload || !(p = tbm_json_parse(c.payload, c.len, &perr)) || !(kind = tbm_json_str(p, "seal")) ||
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
    auth_cred_free(&c);
    return rc;
}
