/* record.c: the record's schema (version 1) as tables, its strict validation, reading and writing. */
#include "record.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "parse_text.h"

enum kind { K_STR, K_INT, K_BOOL, K_OBJ, K_STRS, K_OBJS, K_MAP, K_NUM };   /* K_NUM: finite, 0 or more */
#define REQ 1    /* must be present */
#define FACT 2   /* may be {"absent": why} instead */

typedef struct field {
    const char *key;
    enum kind kind;
    int flags;
    const struct field *sub;   /* members of K_OBJ and K_OBJS */
} field_t;

#define END { NULL, 0, 0, NULL }

static const field_t step_f[] = {
    { "id", K_STR, REQ, NULL }, { "command", K_STR, 0, NULL }, { "nodes", K_STRS, 0, NULL },
    { "exit_code", K_INT, 0, NULL }, { "signal", K_INT, 0, NULL }, { "state", K_STR, 0, NULL }, END
};
static const field_t job_f[] = {
    { "id", K_INT, REQ, NULL }, { "cluster", K_STR, 0, NULL }, { "name", K_STR, 0, NULL },
    { "user", K_STR, 0, NULL }, { "uid", K_INT, 0, NULL }, { "account", K_STR, 0, NULL },
    { "partition", K_STR, 0, NULL }, { "group", K_STR, 0, NULL }, { "nodes", K_STRS, 0, NULL },
    { "submit_time", K_INT, 0, NULL }, { "start_time", K_INT, 0, NULL }, { "end_time", K_INT, 0, NULL },
    { "phase", K_STR, REQ, NULL }, { "state", K_STR, REQ, NULL }, { "exit_code", K_INT, 0, NULL },
    { "signal", K_INT, 0, NULL }, { "restarts", K_INT, 0, NULL }, { "work_dir", K_STR, 0, NULL },
    { "backend_requested", K_STR, 0, NULL }, { "backend_chosen", K_STR, FACT, NULL },
    { "steps", K_OBJS, 0, step_f }, { "array_job_id", K_INT, 0, NULL }, { "array_task_id", K_INT, 0, NULL }, END
};
static const field_t git_f[] = {
    { "commit", K_STR, REQ, NULL }, { "branch", K_STR, 0, NULL }, { "dirty", K_BOOL, 0, NULL },
    { "remote", K_STR, FACT, NULL }, END
};
static const field_t submit_f[] = {
    { "work_dir", K_STR, 0, NULL }, { "script", K_STR, 0, NULL }, { "git", K_OBJ, FACT, git_f },
    { "script_sha256", K_STR, FACT, NULL },
    { "sbatch_line", K_STR, FACT, NULL }, { "options", K_MAP, 0, NULL }, END
};
static const field_t model_f[] = { { "id", K_STR, REQ, NULL }, { "revision", K_STR, 0, NULL }, END };
static const field_t digest_f[] = {
    { "path", K_STR, REQ, NULL }, { "kind", K_STR, 0, NULL }, { "sha256", K_STR, 0, NULL },
    { "size", K_INT, 0, NULL }, { "files", K_INT, 0, NULL }, { "why", K_STR, 0, NULL }, END
};
static const field_t declared_f[] = {
    { "model", K_OBJ, 0, model_f }, { "data", K_OBJS, 0, digest_f }, { "seed", K_STR, 0, NULL },
    { "outputs", K_STRS, 0, NULL }, { "note", K_STR, 0, NULL }, END
};
static const field_t dist_f[] = { { "name", K_STR, REQ, NULL }, { "version", K_STR, REQ, NULL }, END };
static const field_t python_f[] = {
    { "prefix", K_STR, 0, NULL }, { "source", K_STR, 0, NULL }, { "executable", K_STR, 0, NULL },
    { "version", K_STR, FACT, NULL }, { "mlx", K_STR, FACT, NULL },
    { "mlx_lm", K_STR, FACT, NULL }, { "mlx_metal", K_STR, FACT, NULL },
    { "distributions", K_OBJS, 0, dist_f }, END
};
static const field_t macos_f[] = { { "version", K_STR, 0, NULL }, { "build", K_STR, 0, NULL }, END };
static const field_t link_f[] = {
    { "port", K_INT, 0, NULL }, { "iface", K_STR, 0, NULL }, { "speed_gbps", K_INT, 0, NULL },
    { "peer", K_STR, 0, NULL }, { "ipv4", K_STR, 0, NULL }, { "up", K_BOOL, 0, NULL }, END
};
static const field_t bfile_f[] = { { "name", K_STR, REQ, NULL }, { "content", K_STR, 0, NULL }, END };
static const field_t node_f[] = {
    { "name", K_STR, REQ, NULL }, { "rank", K_INT, 0, NULL }, { "mode", K_STR, 0, NULL },
    { "macos", K_OBJ, FACT, macos_f }, { "chip", K_STR, FACT, NULL }, { "memory_bytes", K_INT, FACT, NULL },
    { "python", K_OBJ, FACT, python_f }, { "openmpi", K_STR, FACT, NULL },
    { "rdma", K_STR, FACT, NULL }, { "links", K_OBJS, FACT, link_f }, { "backend_env", K_MAP, FACT, NULL },
    { "backend_files", K_OBJS, FACT, bfile_f }, END
};
static const field_t noderes_f[] = {
    { "name", K_STR, REQ, NULL }, { "exit_code", K_INT, 0, NULL }, { "signal", K_INT, 0, NULL }, END
};
static const field_t results_f[] = {
    { "nodes", K_OBJS, 0, noderes_f }, { "outputs", K_OBJS, 0, digest_f }, { "failed_step", K_STR, 0, NULL },
    { "stderr_tail", K_STRS, FACT, NULL }, END
};
static const field_t usage_f[] = {
    { "node", K_STR, REQ, NULL }, { "step", K_STR, 0, NULL }, { "task", K_INT, 0, NULL },
    { "source", K_STR, REQ, NULL }, { "cpu_user_us", K_INT, 0, NULL }, { "cpu_system_us", K_INT, 0, NULL },
    { "max_rss_kb", K_INT, 0, NULL }, { "wall_us", K_INT, 0, NULL }, { "why", K_STR, 0, NULL },
    { "gpu_samples", K_INT, 0, NULL }, { "gpu_mean", K_NUM, 0, NULL }, { "gpu_peak", K_NUM, 0, NULL },
    { "gpu_why", K_STR, 0, NULL }, { "power_samples", K_INT, 0, NULL }, { "energy_j", K_NUM, 0, NULL },
    { "energy_why", K_STR, 0, NULL }, END
};
static const field_t top_f[] = {
    { "schema", K_STR, REQ, NULL }, { "version", K_INT, REQ, NULL }, { "job", K_OBJ, REQ, job_f },
    { "submit", K_OBJ, FACT, submit_f }, { "declared", K_OBJ, 0, declared_f },
    { "nodes", K_OBJS, 0, node_f }, { "results", K_OBJ, 0, results_f }, { "usage", K_OBJS, FACT, usage_f },
    END
};

void tbm_record_fmt(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

json_object *tbm_record_absent(const char *why)
{
    json_object *o = json_object_new_object();

    if (o)
        json_object_object_add(o, "absent", json_object_new_string(why && *why ? why : "not known"));
    return o;
}

int tbm_record_is_absent(json_object *v, const char **why)
{
    json_object *w;

    if (!json_object_is_type(v, json_type_object) || json_object_object_length(v) != 1 ||
        !(w = tbm_json_typed(v, "absent", json_type_string)))
        return 0;
    if (why)
        *why = json_object_get_string(w);
    return 1;
}

static const char *kind_name(enum kind k)
{
    static const char *const names[] = { "a string", "a whole number", "true or false", "an object",
                                         "an array of strings", "an array of objects",
                                         "an object of strings", "a number, 0 or more" };
    return names[k];
}

static int check_string(json_object *v, const char *path, tbm_err_t *err)
{
    size_t len = (size_t)json_object_get_string_len(v);

    if (strlen(json_object_get_string(v)) != len)
        return tbm_errprintf(err, "record: %s holds a NUL byte; the record was not written by slurm-tbmesh",
                             path);
    if (len > TBM_RECORD_STR_MAX)
        return tbm_errprintf(err, "record: %s is %zu bytes long (at most %u)", path, len, TBM_RECORD_STR_MAX);
    return 0;
}

static int check_object(json_object *o, const field_t *fields, const char *path, tbm_err_t *err);

static int check_value(json_object *v, const field_t *f, const char *path, tbm_err_t *err)
{
    static const json_type want[] = { json_type_string, json_type_int, json_type_boolean, json_type_object,
                                      json_type_array, json_type_array, json_type_object, json_type_double };
    char sub[512];
    size_t i, n;

    if ((f->flags & FACT) && tbm_record_is_absent(v, NULL))
        return check_string(json_object_object_get(v, "absent"), path, err);
    if (f->kind == K_NUM && (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
        return isfinite(json_object_get_double(v)) && json_object_get_double(v) >= 0
                   ? 0 : tbm_errprintf(err, "record: %s is %s, not %s", path,
                                       json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), kind_name(f->kind));
    if (!json_object_is_type(v, want[f->kind]))
        return tbm_errprintf(err, "record: %s is %s, not %s%s", path, tbm_json_type_name(json_object_get_type(v)),
                             kind_name(f->kind), (f->flags & FACT) ? " or {\"absent\": why}" : "");
    switch (f->kind) {
    case K_STR:
        return check_string(v, path, err);
    case K_OBJ:
        return check_object(v, f->sub, path, err);
    case K_STRS:
    case K_OBJS:
        n = json_object_array_length(v);
        for (i = 0; i < n; i++) {
            json_object *e = json_object_array_get_idx(v, i);
            tbm_record_fmt(sub, sizeof(sub), "%s[%zu]", path, i);
            if (f->kind == K_STRS && !json_object_is_type(e, json_type_string))
                return tbm_errprintf(err, "record: %s is %s, not a string", sub,
                                     tbm_json_type_name(json_object_get_type(e)));
            if ((f->kind == K_STRS ? check_string(e, sub, err) : !json_object_is_type(e, json_type_object)
                                         ? tbm_errprintf(err, "record: %s is %s, not an object", sub,
                                                         tbm_json_type_name(json_object_get_type(e)))
                                         : check_object(e, f->sub, sub, err)) < 0)
                return -1;
        }
        return 0;
    case K_MAP: {
        json_object_object_foreach(v, key, val) {
            tbm_record_fmt(sub, sizeof(sub), "%s.%s", path, key);
            if (!json_object_is_type(val, json_type_string))
                return tbm_errprintf(err, "record: %s is %s, not a string", sub,
                                     tbm_json_type_name(json_object_get_type(val)));
            if (check_string(val, sub, err) < 0)
                return -1;
        }
        return 0;
    }
    default:
        return 0;
    }
}

static int check_object(json_object *o, const field_t *fields, const char *path, tbm_err_t *err)
{
    char sub[512];
    const field_t *f;
    json_object *v;

    json_object_object_foreach(o, key, val) {
        (void)val;
        for (f = fields; f->key && strcmp(f->key, key) != 0; f++)
            ;
        if (!f->key)
            return tbm_errprintf(err, "record: %s%s%.64s is not a member of a version %d record (written by a "
                                 "newer slurm-tbmesh? read it with that version)", path, *path ? "." : "", key,
                                 TBM_RECORD_VERSION);
    }
    for (f = fields; f->key; f++) {
        tbm_record_fmt(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", f->key);
        if (!json_object_object_get_ex(o, f->key, &v)) {
            if (f->flags & REQ)
                return tbm_errprintf(err, "record: %s is missing; the record is incomplete", sub);
            continue;
        }
        if (check_value(v, f, sub, err) < 0)
            return -1;
    }
    return 0;
}

int tbm_record_validate(json_object *rec, tbm_err_t *err)
{
    const char *schema;
    json_object *v;

    if (!json_object_is_type(rec, json_type_object))
        return tbm_errprintf(err, "record: the document is %s, not an object; this is not a tbmesh record",
                             tbm_json_type_name(json_object_get_type(rec)));
    schema = tbm_json_str(rec, "schema");
    if (!schema || strcmp(schema, TBM_RECORD_SCHEMA) != 0)
        return tbm_errprintf(err, "record: \"schema\" is not \"%s\"; this is not a tbmesh record",
                             TBM_RECORD_SCHEMA);
    v = tbm_json_typed(rec, "version", json_type_int);
    if (!v || json_object_get_int64(v) != TBM_RECORD_VERSION)
        return tbm_errprintf(err, "record: version %lld is not known to this slurm-tbmesh (it reads version %d); "
                             "read it with the version that wrote it",
                             v ? (long long)json_object_get_int64(v) : -1LL, TBM_RECORD_VERSION);
    return check_object(rec, top_f, "", err);
}

json_object *tbm_record_parse(const char *text, size_t len, tbm_err_t *err)
{
    json_object *rec;

    if (len > TBM_RECORD_MAX)
        return tbm_errprintf(err, "record: %zu bytes is more than a record may hold (%u)", len, TBM_RECORD_MAX),
               NULL;
    if (!(rec = tbm_json_parse(text, len, err))) {
        tbm_errprefix(err, "record: ");
        return NULL;
    }
    if (tbm_record_validate(rec, err) < 0) {
        json_object_put(rec);
        return NULL;
    }
    return rec;
}

char *tbm_record_text(json_object *rec, size_t *len, tbm_err_t *err)
{
    const char *s;
    size_t n;
    char *out;

    if (tbm_record_validate(rec, err) < 0)
        return NULL;
    s = json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                 JSON_C_TO_STRING_NOSLASHESCAPE);
    if (!s)
        return tbm_errprintf(err, "record: out of memory"), NULL;
    n = strlen(s);
    if (n + 1 > TBM_RECORD_MAX)
        return tbm_errprintf(err, "record: %zu bytes is more than a record may hold (%u)", n, TBM_RECORD_MAX),
               NULL;
    if (!(out = malloc(n + 2)))
        return tbm_errprintf(err, "record: out of memory"), NULL;
    memcpy(out, s, n);
    out[n] = '\n';
    out[n + 1] = '\0';
    if (len)
        *len = n + 1;
    return out;
}

json_object *tbm_record_new(uint32_t job_id, const char *cluster, const char *phase, const char *state)
{
    json_object *rec = json_object_new_object(), *job = json_object_new_object();

    if (!rec || !job) {
        json_object_put(rec);
        json_object_put(job);
        return NULL;
    }
    json_object_object_add(rec, "schema", json_object_new_string(TBM_RECORD_SCHEMA));
    json_object_object_add(rec, "version", json_object_new_int(TBM_RECORD_VERSION));
    json_object_object_add(job, "id", json_object_new_int64(job_id));
    if (cluster && *cluster)
        json_object_object_add(job, "cluster", json_object_new_string(cluster));
    json_object_object_add(job, "phase", json_object_new_string(phase));
    json_object_object_add(job, "state", json_object_new_string(state));
    json_object_object_add(rec, "job", job);
    return rec;
}

int tbm_record_set(json_object *obj, const char *key, json_object *value, const char *why_if_null)
{
    if (!value)
        value = tbm_record_absent(why_if_null);
    if (!obj || !value)
        return json_object_put(value), -1;
    return json_object_object_add(obj, key, value) == 0 ? 0 : -1;
}

json_object *tbm_record_obj(json_object *rec, const char *path)
{
    char key[64];
    const char *dot;
    json_object *cur = rec, *next;
    size_t n;

    while (cur && *path) {
        dot = strchr(path, '.');
        n = dot ? (size_t)(dot - path) : strlen(path);
        if (n == 0 || n >= sizeof(key) || !json_object_is_type(cur, json_type_object))
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        if (!json_object_object_get_ex(cur, key, &next) || tbm_record_is_absent(next, NULL)) {
            next = json_object_new_object();
            if (!next || json_object_object_add(cur, key, next) != 0)
                return NULL;
        }
        cur = json_object_is_type(next, json_type_object) ? next : NULL;
        path += n + (dot ? 1 : 0);
    }
    return cur;
}

/* ---- the TBM1 summary's members (record_codec.c encodes and decodes it) ---- */

/* Version 1 also held the submit half and the declared inputs, which every user could read through
 * `scontrol show job` and sacct: still read (jobs in slurmdbd keep it), no longer written. */
static const field_t summary1_f[] = {
    { "v", K_INT, REQ, NULL }, { "job", K_INT, 0, NULL }, { "phase", K_STR, REQ, NULL },
    { "state", K_STR, REQ, NULL }, { "exit", K_INT, 0, NULL }, { "backend", K_STR, 0, NULL },
    { "group", K_STR, 0, NULL }, { "nodes", K_INT, 0, NULL }, { "model", K_STR, 0, NULL },
    { "commit", K_STR, 0, NULL }, { "dirty", K_BOOL, 0, NULL }, { "seed", K_STR, 0, NULL },
    { "data", K_INT, 0, NULL }, { "script", K_STR, 0, NULL }, { "record", K_STR, 0, NULL },
    { "records", K_STR, 0, NULL }, { "why", K_STR, 0, NULL },
    { "submit", K_OBJ, FACT, submit_f }, { "declared", K_OBJ, 0, declared_f }, END
};
/* Version 2: the least a report needs, as every user may read it. */
static const field_t summary_f[] = {
    { "v", K_INT, REQ, NULL }, { "job", K_INT, 0, NULL }, { "phase", K_STR, REQ, NULL },
    { "state", K_STR, REQ, NULL }, { "exit", K_INT, 0, NULL }, { "backend", K_STR, 0, NULL },
    { "group", K_STR, 0, NULL }, { "nodes", K_INT, 0, NULL }, { "records", K_STR, 0, NULL },
    { "record", K_STR, 0, NULL }, END
};

/* check_object's message without its "record: ", after `prefix`. */
static int checked(json_object *o, const field_t *fields, const char *prefix, tbm_err_t *err)
{
    char msg[TBM_ERR_MAX];

    if (check_object(o, fields, "", err) == 0)
        return 0;
    snprintf(msg, sizeof(msg), "%s", err ? err->msg + (strncmp(err->msg, "record: ", 8) ? 0 : 8) : "");
    return tbm_errprintf(err, "%s%s", prefix, msg);
}

int tbm_summary_validate(json_object *s, tbm_err_t *err)
{
    json_object *v;
    long long version;

    if (!json_object_is_type(s, json_type_object))
        return tbm_errprintf(err, "TBM1 summary: not a JSON object");
    v = tbm_json_typed(s, "v", json_type_int);
    version = v ? (long long)json_object_get_int64(v) : TBM_SUMMARY_VERSION;   /* none: "v is missing" */
    if (version != 1 && version != TBM_SUMMARY_VERSION)
        return tbm_errprintf(err, "TBM1 summary: version %lld is not known (this slurm-tbmesh reads 1 to %d): "
                             "read it with a newer slurm-tbmesh", version, TBM_SUMMARY_VERSION);
    return checked(s, version == 1 ? summary1_f : summary_f, "TBM1 summary: ", err);
}

/* ---- the submit half, as sbatch's spank_tbmesh passes it in the job control environment ---- */

static const field_t submit_half_f[] = {
    { "submit", K_OBJ, FACT, submit_f }, { "declared", K_OBJ, 0, declared_f }, { "records", K_STR, 0, NULL }, END
};

json_object *tbm_submit_half_parse(const char *text, size_t len, tbm_err_t *err)
{
    json_object *doc;

    if (len > TBM_SUBMIT_HALF_MAX)
        return tbm_errprintf(err, "the submit half is %zu bytes, more than %u", len, TBM_SUBMIT_HALF_MAX), NULL;
    if (!(doc = tbm_json_parse(text, len, err))) {
        tbm_errprefix(err, "the submit half: ");
        return NULL;
    }
    if (!json_object_is_type(doc, json_type_object)) {
        json_object_put(doc);
        return tbm_errprintf(err, "the submit half is not a JSON object"), NULL;
    }
    if (checked(doc, submit_half_f, "the submit half: ", err) < 0) {
        json_object_put(doc);
        return NULL;
    }
    return doc;
}

/* ---- which version of a record ---- */

tbm_record_version_t tbm_record_version(const char *sha256, const char *phase, const char *acct_digest)
{
    if (acct_digest && sha256 && !strcmp(acct_digest, sha256))
        return TBM_VERSION_CURRENT;
    if (acct_digest)
        return phase && !strcmp(phase, "sync") ? TBM_VERSION_SYNC_LATER : TBM_VERSION_EARLIER;
    return phase && !strcmp(phase, "start") ? TBM_VERSION_START : TBM_VERSION_UNNAMED;
}

int tbm_record_phase_complete(const char *phase)
{
    return phase && (!strcmp(phase, "end") || !strcmp(phase, "sync"));
}

/* ---- text from the job's side that may not be UTF-8 ---- */

char *tbm_utf8_clean(const char *s, size_t len, size_t *out_len)
{
    const unsigned char *u = (const unsigned char *)s;
    char *out = malloc(len * 3 + 1), *o = out;
    size_t i = 0, k;

    if (!out)
        return NULL;
    while (i < len) {
        if (u[i] == 0) {   /* a NUL inside a string: shown, not cut at */
            memcpy(o, "\xef\xbf\xbd", 3), o += 3, i++;
            continue;
        }
        if ((k = tbm_utf8_seq(u + i, len - i)) == 0) {
            memcpy(o, "\xef\xbf\xbd", 3), o += 3, i++;   /* U+FFFD for each byte that is not UTF-8 */
            continue;
        }
        memcpy(o, s + i, k), o += k, i += k;
    }
    *o = '\0';
    if (out_len)
        *out_len = (size_t)(o - out);
    return out;
}

static int utf8_valid(const char *s, size_t len)
{
    size_t i = 0, k;

    while (i < len) {
        if (!s[i] || (k = tbm_utf8_seq((const unsigned char *)s + i, len - i)) == 0)
            return 0;
        i += k;
    }
    return 1;
}

int tbm_utf8_clean_tree(json_object *v)
{
    int fixed = 0;
    size_t i, n;

    switch (json_object_get_type(v)) {
    case json_type_string: {
        const char *s = json_object_get_string(v);
        size_t len = (size_t)json_object_get_string_len(v);
        char *clean;
        if (utf8_valid(s, len))
            return 0;
        if ((clean = tbm_utf8_clean(s, len, &n))) {
            json_object_set_string_len(v, clean, (int)n);
            free(clean);
        }
        return 1;
    }
    case json_type_array:
        for (i = 0; i < json_object_array_length(v); i++)
            fixed += tbm_utf8_clean_tree(json_object_array_get_idx(v, i));
        return fixed;
    case json_type_object: {
        json_object_object_foreach(v, key, val) {
            if (!utf8_valid(key, strlen(key)))
                continue;   /* keys are the plug-in's own names or the backend's variables (checked names) */
            fixed += tbm_utf8_clean_tree(val);
        }
        return fixed;
    }
    default:
        return 0;
    }
}
