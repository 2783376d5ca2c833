/* record_crate.c: a record as a Workflow Run RO-Crate (Process Run Crate profile): the job is a CreateAction
 * whose instrument is the batch script (and its code revision), whose objects are the declared inputs and
 * whose results are the outputs, with agent, times, status and the backend's environment. */
#include "record.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_read.h"
#include "strbuf.h"

#define PROCESS_PROFILE "https://w3id.org/ro/wfrun/process/0.5"
#define CRATE_SPEC "https://w3id.org/ro/crate/1.1"

static json_object *ref(const char *id)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "@id", json_object_new_string(id));
    return o;
}

static json_object *entity(json_object *graph, const char *id, const char *type)
{
    json_object *o = ref(id);
    json_object_object_add(o, "@type", json_object_new_string(type));
    json_object_array_add(graph, o);
    return o;
}

static void set_str(json_object *o, const char *key, const char *v)
{
    if (v)
        json_object_object_add(o, key, json_object_new_string(v));
}

static void iso_time(json_object *job, const char *member, char *buf, size_t len)
{
    json_object *v = tbm_json_typed(job, member, json_type_int);
    time_t t;
    struct tm tm;

    buf[0] = '\0';
    if (!v || json_object_get_int64(v) <= 0)
        return;
    t = (time_t)json_object_get_int64(v);
    if (gmtime_r(&t, &tm))
        strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A file:// URI for an absolute path (percent-encoding all but unreserved characters and '/'). */
static char *file_uri(const char *path)
{
    tbm_strbuf_t sb;

    tbm_sb_init(&sb);
    tbm_sb_printf(&sb, "file://%s", path[0] == '/' ? "" : "/");
    for (; *path; path++) {
        unsigned char c = (unsigned char)*path;
        if (isalnum(c) || strchr("-._~/", c))
            tbm_sb_append(&sb, path, 1);
        else
            tbm_sb_printf(&sb, "%%%02X", c);
    }
    return tbm_sb_take(&sb);
}

/* Data entities for declared inputs or outputs, referenced from the action under `member`. */
static void data_entities(json_object *graph, json_object *action, json_object *root_parts, const char *member,
                          json_object *list)
{
    json_object *refs = json_object_new_array();
    size_t i, n = list ? json_object_array_length(list) : 0;

    (void)root_parts;
    for (i = 0; i < n; i++) {
        json_object *d = json_object_array_get_idx(list, i), *e;
        const char *path = tbm_json_str(d, "path"), *kind = tbm_json_str(d, "kind");
        char *uri;
        json_object *size = tbm_json_typed(d, "size", json_type_int);
        char sz[32];

        if (!path || !(uri = file_uri(path)))
            continue;
        e = entity(graph, uri, kind && !strcmp(kind, "folder") ? "Dataset" : "File");
        set_str(e, "name", path);
        if (tbm_json_str(d, "sha256"))
            set_str(e, "sha256", tbm_json_str(d, "sha256"));
        if (size) {
            tbm_record_fmt(sz, sizeof(sz), "%lld", (long long)json_object_get_int64(size));
            set_str(e, "contentSize", sz);
        }
        if (tbm_json_str(d, "why"))
            set_str(e, "description", tbm_json_str(d, "why"));
        json_object_array_add(refs, ref(uri));
        free(uri);
    }
    json_object_object_add(action, member, refs);
}

static void environment(json_object *graph, json_object *action, json_object *rec)
{
    json_object *nodes = tbm_json_typed(rec, "nodes", json_type_array), *env, *refs = json_object_new_array();
    size_t i, n = nodes ? json_object_array_length(nodes) : 0;
    char id[600];

    for (i = 0; i < n; i++) {
        json_object *node = json_object_array_get_idx(nodes, i);
        const char *name = tbm_json_str(node, "name");
        if (!(env = tbm_json_typed(node, "backend_env", json_type_object)) || tbm_record_is_absent(env, NULL))
            continue;
        json_object_object_foreach(env, key, val) {
            json_object *p;
            tbm_record_fmt(id, sizeof(id), "#env-%s-%s", name ? name : "node", key);
            p = entity(graph, id, "PropertyValue");
            set_str(p, "name", key);
            set_str(p, "value", json_object_get_string(val));
            set_str(p, "description", name);
            json_object_array_add(refs, ref(id));
        }
    }
    json_object_object_add(action, "environment", refs);
}

char *tbm_record_crate(json_object *rec, const char *record_name, tbm_err_t *err)
{
    json_object *crate, *graph, *meta, *root, *action, *job, *submit, *declared, *results, *o, *parts, *git;
    const char *state, *user;
    char id[128], t[64], name[256];
    long long job_id;
    char *out;

    if (tbm_record_validate(rec, err) < 0)
        return NULL;
    job = tbm_json_typed(rec, "job", json_type_object);
    submit = tbm_json_typed(rec, "submit", json_type_object);
    declared = tbm_json_typed(rec, "declared", json_type_object);
    results = tbm_json_typed(rec, "results", json_type_object);
    job_id = (long long)json_object_get_int64(tbm_json_typed(job, "id", json_type_int));
    state = tbm_json_str(job, "state");
    user = tbm_json_str(job, "user");

    crate = json_object_new_object();
    graph = json_object_new_array();
    json_object_object_add(crate, "@context", json_object_new_string("https://w3id.org/ro/crate/1.1/context"));
    json_object_object_add(crate, "@graph", graph);

    meta = entity(graph, "ro-crate-metadata.json", "CreativeWork");
    json_object_object_add(meta, "conformsTo", ref(CRATE_SPEC));
    json_object_object_add(meta, "about", ref("./"));

    tbm_record_fmt(id, sizeof(id), "#job-%lld", job_id);
    root = entity(graph, "./", "Dataset");
    tbm_record_fmt(name, sizeof(name), "Slurm job %lld (%s)", job_id, tbm_json_str(job, "cluster") ? tbm_json_str(job, "cluster") : "slurm");
    set_str(root, "name", name);
    set_str(root, "description", "Reproducibility record of a Mac job run by slurm-tbmesh");
    iso_time(job, "end_time", t, sizeof(t));
    if (!t[0])
        iso_time(job, "submit_time", t, sizeof(t));
    set_str(root, "datePublished", t[0] ? t : "1970-01-01T00:00:00Z");
    set_str(root, "license", "https://spdx.org/licenses/CC0-1.0");   /* the record itself: facts, no work */
    o = json_object_new_array();
    json_object_array_add(o, ref(PROCESS_PROFILE));
    json_object_object_add(root, "conformsTo", o);
    parts = json_object_new_array();
    json_object_array_add(parts, ref(record_name));
    json_object_object_add(root, "hasPart", parts);
    o = json_object_new_array();
    json_object_array_add(o, ref(id));
    json_object_object_add(root, "mentions", o);

    o = entity(graph, PROCESS_PROFILE, "CreativeWork");
    set_str(o, "name", "Process Run Crate");
    set_str(o, "version", "0.5");

    o = entity(graph, record_name, "File");
    set_str(o, "name", "slurm-tbmesh reproducibility record");
    set_str(o, "encodingFormat", "application/json");

    action = entity(graph, id, "CreateAction");
    set_str(action, "name", name);
    iso_time(job, "start_time", t, sizeof(t));
    if (t[0])
        set_str(action, "startTime", t);
    iso_time(job, "end_time", t, sizeof(t));
    if (t[0])
        set_str(action, "endTime", t);
    json_object_object_add(action, "actionStatus",
                           ref(state && !strcmp(state, "COMPLETED") ? "http://schema.org/CompletedActionStatus"
                               : state && (!strcmp(state, "RUNNING") || !strcmp(state, "PENDING"))
                                   ? "http://schema.org/ActiveActionStatus"
                                   : "http://schema.org/FailedActionStatus"));
    if (state && strcmp(state, "COMPLETED") != 0)
        set_str(action, "error", tbm_json_str(results, "failed_step") ? tbm_json_str(results, "failed_step") : state);

    o = entity(graph, "#batch-script", "SoftwareApplication");
    set_str(o, "name", "batch script");
    if (tbm_json_str(submit, "script_sha256"))
        set_str(o, "sha256", tbm_json_str(submit, "script_sha256"));
    if (tbm_json_str(submit, "sbatch_line"))
        set_str(o, "description", tbm_json_str(submit, "sbatch_line"));
    git = tbm_json_typed(submit, "git", json_type_object);
    if (git && tbm_json_str(git, "commit")) {
        set_str(o, "version", tbm_json_str(git, "commit"));
        if (tbm_json_str(git, "remote"))
            set_str(o, "codeRepository", tbm_json_str(git, "remote"));
    }
    json_object_object_add(action, "instrument", ref("#batch-script"));

    if (user) {
        char pid[300];
        tbm_record_fmt(pid, sizeof(pid), "#user-%s", user);
        o = entity(graph, pid, "Person");
        set_str(o, "name", user);
        json_object_object_add(action, "agent", ref(pid));
    }
    data_entities(graph, action, parts, "object", tbm_json_typed(declared, "data", json_type_array));
    data_entities(graph, action, parts, "result", tbm_json_typed(results, "outputs", json_type_array));
    environment(graph, action, rec);

    out = strdup(json_object_to_json_string_ext(crate, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                           JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(crate);
    if (!out)
        tbm_errprintf(err, "RO-Crate: out of memory");
    return out;
}
