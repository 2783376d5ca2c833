/* record.h: the reproducibility record of a Mac job (one versioned JSON schema, "tbmesh-record" version 1):
 * strict reading and writing, the TBM1 summary for Slurm's AdminComment, redaction of secrets, the
 * comparison of two records with a verdict, Python distributions from dist-info METADATA, data digests and
 * the Workflow Run RO-Crate. The schema itself is written down in tbmesh-repro(1). */
#ifndef TBM_RECORD_H
#define TBM_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "errbuf.h"

#define TBM_RECORD_SCHEMA "tbmesh-record"
#define TBM_RECORD_VERSION 1
#define TBM_RECORD_MAX (4u * 1024u * 1024u)   /* bytes of one record's JSON text */
#define TBM_RECORD_STR_MAX (256u * 1024u)     /* bytes of one string inside a record */
#define TBM_SUMMARY_PREFIX "TBM1:"
#define TBM_SUMMARY_MAX 4096                  /* bytes of a TBM1 summary's JSON (AdminComment stays short) */
#define TBM_SUMMARY_VERSION 2                 /* the summary's "v" written; version 1 is still read */
#define TBM_SUBMIT_HALF_MAX (64u * 1024u)     /* bytes of the submit half's JSON in the job control env */
#define TBM_SHA256_HEX 65                     /* 64 hex digits and a NUL */

/* ---- the record (record.c) ---- */

/* A skeleton record: schema, version and job.id/cluster/phase/state; add the rest with json-c. */
json_object *tbm_record_new(uint32_t job_id, const char *cluster, const char *phase, const char *state);

/* A fact that could not be found: {"absent": why}. Where the schema allows a fact, this stands in its place. */
json_object *tbm_record_absent(const char *why);

/* 1 with *why set when v is {"absent": why}, else 0. */
int tbm_record_is_absent(json_object *v, const char **why);

/* Check a record against the schema: known members only, the right types, required members present,
 * bounded strings. 0, or -1 with err naming the member ("record: job.nodes[2]: ...") and what to do. */
int tbm_record_validate(json_object *rec, tbm_err_t *err);

/* Strict reading (lib/json_read) and validation of a record's text. The record, or NULL with err. */
json_object *tbm_record_parse(const char *text, size_t len, tbm_err_t *err);

/* The record's text (validated first, pretty-printed, ending in a newline), malloc'd, or NULL with err. */
char *tbm_record_text(json_object *rec, size_t *len, tbm_err_t *err);

/* Which version of a job's record a sealed one is, told against the record digest Slurm's accounting holds
 * (the TBM1 summary's "record", set at the job's end; NULL when it holds none) and the phase the seal names. */
typedef enum tbm_record_version {
    TBM_VERSION_CURRENT,      /* accounting names this very record */
    TBM_VERSION_SYNC_LATER,   /* a `repro sync` record sealed after the end record accounting names */
    TBM_VERSION_EARLIER,      /* accounting names another record: an earlier version was put back */
    TBM_VERSION_START,        /* the start record; accounting names none yet */
    TBM_VERSION_UNNAMED       /* accounting names no record (its end could not set AdminComment) */
} tbm_record_version_t;
tbm_record_version_t tbm_record_version(const char *sha256, const char *phase, const char *acct_digest);

/* 1 when a record with this job.phase is complete: its end wrote it last, or `tbmesh repro sync` did; 0 for
 * the submit or start record, another word, or NULL. */
int tbm_record_phase_complete(const char *phase);

/* Text from the job's side (command lines, variables, file contents) as valid UTF-8: every byte that does not
 * begin a valid sequence (and every NUL) becomes U+FFFD. malloc'd, its length in *out_len (may be NULL). */
char *tbm_utf8_clean(const char *s, size_t len, size_t *out_len);
/* The same for every string value of a JSON tree, in place; how many strings it changed. */
int tbm_utf8_clean_tree(json_object *v);

/* Set (or replace) member key of obj; a NULL value sets {"absent": why_if_null}. Returns 0, or -1. */
int tbm_record_set(json_object *obj, const char *key, json_object *value, const char *why_if_null);

/* The object at a dotted path ("job", "submit.git"), made when missing. NULL when a member on the way is not
 * an object. */
json_object *tbm_record_obj(json_object *rec, const char *path);

/* snprintf that may cut (for paths inside messages): the record modules' one formatter of bounded text. */
void tbm_record_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- digests (record_digest.c, OpenSSL SHA-256) ---- */

/* SHA-256 of a buffer as 64 lower-case hex digits. */
void tbm_sha256_hex(const void *data, size_t len, char hex[TBM_SHA256_HEX]);

/* A cache of file digests keyed by device, inode, size and modification time: an unchanged file is not
 * read again. Kept as JSON text by the caller (tbm_digest_cache_text/load). */
typedef struct tbm_digest_cache tbm_digest_cache_t;
tbm_digest_cache_t *tbm_digest_cache_new(void);
void tbm_digest_cache_free(tbm_digest_cache_t *c);
int tbm_digest_cache_load(tbm_digest_cache_t *c, const char *text, size_t len, tbm_err_t *err);
char *tbm_digest_cache_text(const tbm_digest_cache_t *c);
size_t tbm_digest_cache_reads(const tbm_digest_cache_t *c);   /* files read (not found in the cache) */
uint64_t tbm_digest_cache_bytes(const tbm_digest_cache_t *c); /* bytes read */

/* A path's digest: a regular file gives its SHA-256 and size; a folder gives a manifest digest (SHA-256 over
 * "sha256  size  relative/path\n" of every regular file below it, sorted by path; symlinks are listed as
 * links, never followed) with its total size and file count. The entry {path, kind, sha256, size, files},
 * or {path, why} when it cannot be read. c may be NULL (no cache). */
json_object *tbm_digest_path(const char *path, tbm_digest_cache_t *c);

/* ---- redaction (record_redact.c) ---- */

/* 1 when a variable or option name looks like it holds a secret: TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE,
 * CREDENTIAL, APIKEY, PRIVATEKEY, ACCESSKEY anywhere in it, or a word KEY, AUTH, AUTHORIZATION, PASS, PAT,
 * COOKIE, SESSION, PRIVATE, SIGNATURE, CREDS, DSN, PWD (any case; words split at '_', '-', '.'; PWD alone is
 * the working folder), e.g. HF_TOKEN, aws_secret_access_key, API-KEY, GITHUB_PAT, MYSQL_PWD. */
int tbm_secret_name(const char *name);

#define TBM_REDACTED "[redacted]"

/* Redact a text, reading it once; where one of the forms below starts, what names the secret is kept and its
 * value becomes TBM_REDACTED (a URL's user-info is dropped):
 *   - a value of one of the given secrets (the job's secret variables; shorter than 6 bytes: not searched);
 *   - a PEM private-key block (the lines between BEGIN and END; the rest of the text without an END);
 *   - scheme://user:password@host (up to the last '@' before the host) -> scheme://host;
 *   - Authorization: / Proxy-Authorization: SCHEME credentials (the scheme is kept);
 *   - "name": "value" / 'name': 'value' / "name": 123 in JSON or a dict, where the name looks secret;
 *   - NAME="value" / NAME='value' / NAME: "value" (quoted values, to the closing quote);
 *   - NAME=value, --name=value, NAME = value, NAME: value, ?name=value&... (a query's value ends at '&');
 *   - --name value (the next word, unless it is an option);
 *   - -pPASSWORD in a mysql or mariadb command; curl's -u / --user / -U / --proxy-user user:password;
 *   - tokens by shape anywhere: ghp_ gho_ ghs_ ghu_ ghr_ (20+), github_pat_ (20+), hf_ (30+ letters and
 *     digits), xoxb- xoxp- xoxa- xoxr- xoxs- xapp- (Slack), AKIA/ASIA + 16 (AWS access key ids);
 *   - 40 characters of base64 in both cases after an AWS access key id or after a secret name (an AWS secret
 *     access key; a git commit's 40 hex digits are not one).
 * malloc'd, or NULL when out of memory. */
char *tbm_redact_text(const char *s, const char *const *secrets, size_t n_secrets);

/* The name of the i-th form tbm_redact_text knows (in the order they are tried), NULL past the last. */
const char *tbm_redact_form(size_t i);

/* Redact every string of a JSON tree in place (as tbm_redact_text); the values of members whose names look
 * secret become TBM_REDACTED. Returns the number of strings changed. */
size_t tbm_redact_tree(json_object *o, const char *const *secrets, size_t n_secrets);

/* ---- comparison (record_diff.c) ---- */

typedef enum tbm_diff_class {
    TBM_DIFF_DATA = 0,   /* data and inputs: declared data, model */
    TBM_DIFF_CODE,       /* code: git revision, dirty tree, batch script */
    TBM_DIFF_VERSIONS,   /* versions and environment: macOS, Python, MLX, Open MPI */
    TBM_DIFF_HOSTS,      /* hosts, communication and backend: nodes, group, links, backend, hardware */
    TBM_DIFF_PARAMS,     /* parameters and seeds: seed, sbatch line, options, step command lines */
    TBM_DIFF_RESULTS,    /* results (not a cause): state, exit codes, output digests, resource use */
    TBM_DIFF_NCLASSES
} tbm_diff_class_t;

typedef enum tbm_verdict {
    TBM_COMPARABLE = 0,
    TBM_COMPARABLE_WITH_DIFFERENCES,
    TBM_NOT_COMPARABLE
} tbm_verdict_t;

typedef struct tbm_diff_item {
    tbm_diff_class_t cls;
    char *path;   /* "nodes[*].python.mlx", "declared.data[/data/train.jsonl].sha256" */
    char *a;      /* the value in the first record ("(none)" when missing) */
    char *b;
} tbm_diff_item_t;

typedef struct tbm_diff {
    tbm_diff_item_t *items;
    size_t n;
    tbm_verdict_t verdict;
    char *why;    /* the verdict's reasons, one sentence */
} tbm_diff_t;

/* Compare two valid records: every difference, classified, in a stable order, and the verdict on "can these
 * two runs be compared?". Node count and backend are named when they differ. 0, or -1 with err. */
int tbm_record_diff(json_object *a, json_object *b, tbm_diff_t *out, tbm_err_t *err);
void tbm_diff_free(tbm_diff_t *d);
const char *tbm_diff_class_name(tbm_diff_class_t c);
const char *tbm_verdict_name(tbm_verdict_t v);

/* ---- the TBM1 summary (record_codec.c) ---- */

/* AdminComment is shown to every user (scontrol show job, sacct), so the summary (version 2) holds only what
 * a report needs: v, job, phase, state, exit, backend, group, node count, records (on/off as asked at
 * submit) and the stored record's digest. No command line, paths, git remote, model, seed, data or note: the
 * submit half travels to the nodes in the job control environment, which only the job's user and root see.
 * Version 1 summaries (which also held the submit half and declared inputs) are still read. */

/* The summary of a record: v, job, phase, state, exit, backend, group, nodes, and record_sha256 if given. */
json_object *tbm_summary_of_record(json_object *rec, const char *record_sha256);

/* The summary job_submit writes: phase submit, state PENDING, the backend asked for ("auto" when NULL or
 * empty), the group (may be NULL) and "records" as the submit half says (may be NULL). */
json_object *tbm_summary_at_submit(const char *backend, const char *group, const char *records);

/* The record `tbmesh repro sync` makes for a job that left no record (phase sync): the backend asked for and
 * the group from the summary; a version 1 summary's submit half and declared inputs; else the submit half
 * absent, saying why (`started`: whether Slurm says the job started). */
json_object *tbm_record_of_summary(json_object *summary, uint32_t job, const char *cluster, const char *state,
                                   int started);

/* The submit half as sbatch's spank_tbmesh passes it (TBMESH_REPRO_SUBMIT): at most TBM_SUBMIT_HALF_MAX
 * bytes of JSON with "submit", "declared" and "records" as the record has them. The object, or NULL with
 * err saying what is wrong. */
json_object *tbm_submit_half_parse(const char *text, size_t len, tbm_err_t *err);

/* Check a summary's members and types (as its version, 1 or 2, has them). 0, or -1 with err. */
int tbm_summary_validate(json_object *summary, tbm_err_t *err);

/* "TBM1:" + base64(gzip(JSON)) of a valid summary, malloc'd, or NULL with err. */
char *tbm_summary_encode(json_object *summary, tbm_err_t *err);

/* The summary inside a "TBM1:..." string (bounded inflate, strict JSON, schema), or NULL with err saying
 * what was wrong (not TBM1, bad base64, not gzip, too large, not a summary). */
json_object *tbm_summary_decode(const char *text, tbm_err_t *err);

/* base64 (RFC 4648, with padding). Encode: malloc'd NUL-terminated. Decode: strict (no spaces, right
 * padding); malloc'd bytes and their count, or NULL. */
char *tbm_base64_encode(const unsigned char *data, size_t len);
unsigned char *tbm_base64_decode(const char *s, size_t *len);

/* ---- Python distributions (record_pydist.c) ---- */

/* Name and Version from a dist-info METADATA text (the header block only). 0, or -1 with err. */
int tbm_pydist_metadata(const char *text, size_t len, char *name, size_t name_len, char *version,
                        size_t version_len, tbm_err_t *err);

/* PEP 503's normal form of a distribution name ("MLX_LM" -> "mlx-lm"), in place. */
void tbm_pydist_normalize(char *name);

/* ---- Workflow Run RO-Crate (record_crate.c) ---- */

/* The ro-crate-metadata.json of a Workflow Run Crate 0.5 (also Process Run Crate 0.5 and Workflow RO-Crate 1.0)
 * for a record: the batch script as the main workflow (mainEntity) with formal parameters for the declared
 * inputs and outputs, and a CreateAction of the job with the script as instrument, objects (declared data,
 * model and seed, each an entity), results (outputs), agent (the user), times, actionStatus and environment.
 * Every @id referred to is an entity of the graph (but the RO-Crate specification and schema.org's action
 * statuses). The record itself is named `record_name` in the crate. malloc'd JSON text, or NULL with err. */
char *tbm_record_crate(json_object *rec, const char *record_name, tbm_err_t *err);

/* ---- resource use (record_usage.c) ---- */

/* The record's "usage" from the parts each step's end left on its node (JSON objects: node, step, bridge; in
 * direct mode cpu_user_us, cpu_system_us, max_rss_kb from Slurm's step accounting; in bridge mode
 * agent_usage, the task usages the Mac's agent reported (proto.h), agent_running, or agent_usage_why): one
 * entry per step and node (per task in bridge mode), or an entry with why. No entry at all gives
 * {"absent": why}; `bridge` says the job ran on bridge-mode Macs (for that why). */
json_object *tbm_record_usage_of_parts(json_object *parts, int bridge);

/* A task of the Mac's agent also has, each when reported (proto.h's tbm_rusage_t), the Mac's GPU while it ran
 * (gpu_samples, gpu_mean, gpu_peak: shares 0..1) and its package energy (power_samples, energy_j), or why not
 * (gpu_why, energy_why: a tbm_meter_why_name). An entry without any of them comes from an agent older than
 * the figures: not reported either. */

/* What a record's usage adds up to. The tasks of one step on one Mac run at once and each got the whole
 * Mac's figures, so a (node, step) counts with its largest task's: its GPU-seconds are the largest gpu_mean
 * x wall time of its tasks, its energy the largest energy_j; the job's are the sums over its (node, step)s
 * (the steps of a job on one Mac run one after another). */
typedef struct tbm_usage_totals {
    double cpu_s;                 /* user + system of every entry; -1 when the record holds no usage entry */
    int tasks;                    /* entries of tasks the Macs' agents measured */
    int gpu_tasks, energy_tasks;  /* of them, those with GPU figures, with energy */
    int gpu_parts, energy_parts;  /* (node, step)s with GPU figures, with energy */
    double gpu_s;                 /* GPU-seconds (the sum above); 0 when gpu_parts is 0 */
    double energy_j;              /* joules (the sum above); 0 when energy_parts is 0 */
} tbm_usage_totals_t;

void tbm_record_usage_totals(json_object *rec, tbm_usage_totals_t *t);

/* One usage entry's GPU and energy for people ("GPU mean 42.0%, peak 97.5% (12 samples); energy 12.3 kJ
 * (3.42 Wh)", or "... not reported (class: why)"); "" for an entry that is no task of a Mac's agent. */
void tbm_usage_gpu_text(json_object *u, char *buf, size_t len);

/* The totals for people: the job's energy and GPU-hours and how many tasks gave them, or why none. */
void tbm_usage_totals_text(const tbm_usage_totals_t *t, char *buf, size_t len);

/* ---- a node's facts (record_node.c) ---- */

struct tbm_host_facts;

/* Fill a record's node object from what `macnode probe` found (macOS version and build, chip, memory, RDMA,
 * the Thunderbolt links: port, interface, speed, the peer's domain UUID, address, up); what the facts do
 * not say is recorded as absent with why. */
void tbm_record_node_facts(json_object *node, const struct tbm_host_facts *f);

/* Mark every fact of a node that `macnode probe` would give as absent, with why. */
void tbm_record_node_absent(json_object *node, const char *why);

/* ---- the record store's settings (record_settings.c) ---- */

#define TBM_RECORD_PATH_MAX 1024

typedef struct tbm_record_settings {
    char dir[TBM_RECORD_PATH_MAX];   /* RecordDir=: the store (a shared filesystem in production) */
    char readers[64];                /* RecordReaders=: the Unix group that may read every record ("" none) */
    int records;                     /* Records=yes|no: make records at all (default yes) */
} tbm_record_settings_t;

/* Read RecordDir=, RecordReaders= and Records= from a tbmesh.conf text (every other line is left to the
 * tbmesh.conf parser); what is not set keeps its value in *s. 0, or -1 with err naming the line. */
int tbm_record_settings_parse(const char *text, size_t len, const char *name, tbm_record_settings_t *s,
                              tbm_err_t *err);

/* The value of the first line `Key=Value` (key case-insensitive, alone on its line, '#' comments) of a
 * slurm.conf-style text, e.g. ClusterName; 1 found, 0 not. */
int tbm_record_conf_value(const char *text, size_t len, const char *key, char *out, size_t out_len);

#endif
