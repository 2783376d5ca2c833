/* store.h: the record store: one folder (RecordDir, on a filesystem every node and the controller see)
 * holding each job's record and its MUNGE seal, written by root atomically with fixed modes; readable by the
 * job's user, root and the RecordReaders group only. */
#ifndef TBM_STORE_H
#define TBM_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "record.h"

typedef struct tbm_store {
    tbm_record_settings_t set;
    char cluster[64];
    char munge_socket[1024];   /* "" for libmunge's default */
    gid_t readers_gid;         /* (gid_t)-1 when RecordReaders is not set */
} tbm_store_t;

/* Settings: the built-in default RecordDir, then tbmesh.conf (a missing file keeps the defaults), then
 * dir_override (the plug-in's record_dir= argument) when given; the cluster from slurm.conf's ClusterName
 * (or "cluster"). 0, or -1 with err. */
int tbm_store_open(tbm_store_t *st, const char *tbmesh_conf, const char *slurm_conf, const char *dir_override,
                   tbm_err_t *err);

/* DIR/CLUSTER/JOB.EXT (ext: "json", "seal", "run0.json" ...). */
void tbm_store_path(const tbm_store_t *st, uint32_t job, const char *ext, char *buf, size_t len);

/* As root: the folders (root, 0711: nobody lists them) are made or checked (a real folder of root's, not
 * writable by others), the file written atomically, owned by root and RecordReaders (or root's group), mode
 * 0440, and readable by `owner` through a POSIX ACL entry (owner 0: none): no user owns a file of the store.
 * 0; 1 when stored but `owner` cannot read it (no ACLs there: err says so); -1 with err. */
int tbm_store_put(const tbm_store_t *st, uint32_t job, uid_t owner, const char *ext, const char *data, size_t len,
                  tbm_err_t *err);

/* The file's text, read as the caller: only a file of root's that nobody else may write. NULL with err: a
 * file missing and another user's file get the same answer (no record that you may read). */
char *tbm_store_get(const tbm_store_t *st, uint32_t job, const char *ext, size_t *len, tbm_err_t *err);

/* Store a record and its seal (root): validated, redacted earlier by the caller; sha256 of the stored text
 * in sha (may be NULL). The seal names the record's phase and run (job.restarts). A record already there from
 * an earlier run of a requeued job is kept as JOB.run<N>.json (N = its job.restarts). 0, 1 (stored; its user
 * cannot read it, err says why) or -1 with err. */
int tbm_store_record(const tbm_store_t *st, json_object *rec, uid_t owner, char *sha, tbm_err_t *err);

/* The stored record of job (read and validated; a file of root's naming this job and cluster, else refused),
 * its text's sha256 in sha (may be NULL). */
json_object *tbm_store_load(const tbm_store_t *st, uint32_t job, char *sha, tbm_err_t *err);

/* An earlier run's record of a requeued job (JOB.run<N>.json, as tbm_store_record kept it), read and validated as
 * tbm_store_load's, and naming that run (job.restarts), else refused; NULL with err. */
json_object *tbm_store_load_run(const tbm_store_t *st, uint32_t job, long long run, tbm_err_t *err);

/* Store an earlier run's record again (repro sync: brought to what Slurm recorded of that run), with its seal,
 * under JOB.run<N>.json, N its job.restarts. As tbm_store_record's: 0, 1 or -1 with err. */
int tbm_store_record_run(const tbm_store_t *st, json_object *rec, uid_t owner, tbm_err_t *err);

/* Root's scratch space for one job (DIR/CLUSTER/.parts/JOB, root 0700): what each step's nodes learnt, merged
 * into the record when the batch step ends. */
/* A step's part may come while the batch step's end merges the others: a part is put in place whole (a temporary
 * file, then a rename, tried again when the merger removed the folder meanwhile); the merger removes only the
 * parts it read (their file names in *names), so a part that came after stays for `tbmesh repro sync`. */
int tbm_store_part_put(const tbm_store_t *st, uint32_t job, const char *name, const char *text, tbm_err_t *err);
/* Array of the parts' JSON (a part being written is not seen; one that does not read is
 * {"unreadable": FILE, "why": ...}), and in *names (when not NULL) an array of the file names read, for
 * tbm_store_parts_remove. */
json_object *tbm_store_parts(const tbm_store_t *st, uint32_t job, json_object **names);
/* Remove the parts named (as tbm_store_parts gave them), and the job's folder once it is empty. */
void tbm_store_parts_remove(const tbm_store_t *st, uint32_t job, json_object *names);

/* A file of root's beside the records (digest caches): DIR/CLUSTER/.cache/NAME, root 0600. */
char *tbm_store_cache_get(const tbm_store_t *st, const char *name, size_t *len);
int tbm_store_cache_put(const tbm_store_t *st, const char *name, const char *text, tbm_err_t *err);

/* ---- attestation (store_seal.c): MUNGE credentials made by root naming cluster, job and digest ---- */

/* What a seal says besides cluster, job and digest: which version of the job's record it seals. */
typedef struct tbm_seal_what {
    char phase[16];        /* start, end, sync ("" in seals made before phases were sealed) */
    long long restarts;    /* the job's run (Slurm's restart count) */
} tbm_seal_what_t;

/* A seal of the record's digest, made through munged (as root, on the node). malloc'd, or NULL with err. */
char *tbm_seal_make(const tbm_store_t *st, uint32_t job, const char *sha256, const tbm_seal_what_t *what,
                    tbm_err_t *err);

/* Check a seal: made by uid 0 with this cluster's MUNGE key, for this cluster and job, over this digest
 * (an expired or already-seen credential still proves who made it); what it seals in *what (may be NULL).
 * 0, or -1 with err saying which. */
int tbm_seal_check(const tbm_store_t *st, const char *seal, uint32_t job, const char *sha256, tbm_seal_what_t *what,
                   tbm_err_t *err);

#endif
