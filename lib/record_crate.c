/* record_crate.c: a record as a Workflow Run RO-Crate (profiles Workflow Run Crate 0.5, Process Run Crate 0.5 and
 * Workflow RO-Crate 1.0): the batch script is the main workflow (File, SoftwareSourceCode, ComputationalWorkflow)
 * with a formal parameter per declared input kind; the job is a CreateAction whose instrument is the script,
 * whose objects are the declared data, model and seed (each an entity of the crate realizing its parameter)
 * and whose results are the outputs, with agent, times, status and the backend's environment. Every @id the
 * crate refers to is an entity of its graph, but for the RO-Crate specification itself and schema.org's action
 * statuses. */
#include "record.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_read.h"
#include "strbuf.h"
#include "utctime.h"

#define CRATE_SPEC       "https://w3id.org/ro/crate/1.1"
#define CRATE_CONTEXT    "https://w3id.org/ro/crate/1.1/context"
#define WFRUN_CONTEXT    "https://w3id.org/ro/terms/workflow-run/context"
#define PROCESS_PROFILE  "https://w3id.org/ro/wfrun/process/0.5"
#define WORKFLOW_PROFILE "https://w3id.org/ro/wfrun/workflow/0.5"
#define WFCRATE_PROFILE  "https://w3id.org/workflowhub/workflow-ro-crate/1.0"
#define LICENSE          "https://spdx.org/licenses/CC0-1.0"
#define LANGUAGE         "#slurm-batch-script"
#define SCRIPT_ID        "#batch-script"   /* the script, when the record does not say where it was */

/* What the crate is being built from and into. */
typedef struct crate {
    json_object *graph, *root, *parts, *action, *workflow;
} crate_t;

static json_object *ref(const char *id)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "@id", json_object_new_string(id));
    return o;
}

static json_object *find(json_object *graph, const char *id)
{
    size_t i;

    for (i = 0; i < json_object_array_length(graph); i++) {
        const char *got = tbm_json_str(json_object_array_get_idx(graph, i), "@id");
        if (got && !strcmp(got, id))
            return json_object_array_get_idx(graph, i);
    }
    return NULL;
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

/* Append a reference to id to the array member `key` of o (made when missing). */
static void add_ref(json_object *o, const char *key, const char *id)
{
    json_object *list = tbm_json_typed(o, key, json_type_array);

    if (!list) {
        list = json_object_new_array();
        json_object_object_add(o, key, list);
    }
    json_object_array_add(list, ref(id));
}

static json_object *strings(const char *a, const char *b, const char *c)
{
    json_object *l = json_object_new_array();

    json_object_array_add(l, json_object_new_string(a));
    if (b)
        json_object_array_add(l, json_object_new_string(b));
    if (c)
        json_object_array_add(l, json_object_new_string(c));
    return l;
}

static void iso_time(json_object *job, const char *member, char *buf, size_t len)
{
    json_object *v = tbm_json_typed(job, member, json_type_int);

    buf[0] = '\0';
    if (v)
        tbm_utc_iso((time_t)json_object_get_int64(v), TBM_UTC_EXTENDED, buf, len);
}

/* A file:// URI for a path (made absolute: "/" in front of a relative one), percent-encoding all but
 * unreserved characters and '/'. */
static char *file_uri(const char *path)
{
    tbm_strbuf_t sb;

    tbm_sb_init(&sb);
    tbm_sb_printf(&sb, "file://%s", path[0] == '/' ? "" : "/");
    for (; *path; path++) {
        unsigned char ch = (unsigned char)*path;
        if (isalnum(ch) || strchr("-._~/", ch))
            tbm_sb_append(&sb, path, 1);
        else
            tbm_sb_printf(&sb, "%%%02X", ch);
    }
    return tbm_sb_take(&sb);
}

/* The profiles the crate conforms to, on the metadata descriptor and the root, each an entity. */
static void profiles(crate_t *c, json_object *meta)
{
    static const char *const ids[] = { PROCESS_PROFILE, WORKFLOW_PROFILE, WFCRATE_PROFILE };
    static const char *const names[] = { "Process Run Crate", "Workflow Run Crate", "Workflow RO-Crate" };
    static const char *const versions[] = { "0.5", "0.5", "1.0" };
    size_t i;

    add_ref(meta, "conformsTo", CRATE_SPEC);
    add_ref(meta, "conformsTo", WFCRATE_PROFILE);
    for (i = 0; i < 3; i++) {
        json_object *p = entity(c->graph, ids[i], "CreativeWork");
        set_str(p, "name", names[i]);
        set_str(p, "version", versions[i]);
        add_ref(c->root, "conformsTo", ids[i]);
    }
}

/* The root data entity: name, description, date, license, and the run it mentions. */
static void root_entity(crate_t *c, json_object *job, const char *action_id, const char *name)
{
    json_object *o;
    char t[64];

    c->root = entity(c->graph, "./", "Dataset");
    set_str(c->root, "name", name);
    set_str(c->root, "description", "Reproducibility record of a Mac job run by slurm-tbmesh");
    iso_time(job, "end_time", t, sizeof(t));
    if (!t[0])
        iso_time(job, "submit_time", t, sizeof(t));
    set_str(c->root, "datePublished", t[0] ? t : "1970-01-01T00:00:00Z");
    json_object_object_add(c->root, "license", ref(LICENSE));   /* the record itself: facts, no work */
    o = entity(c->graph, LICENSE, "CreativeWork");
    set_str(o, "name", "CC0-1.0");
    set_str(o, "identifier", LICENSE);
    c->parts = json_object_new_array();
    json_object_object_add(c->root, "hasPart", c->parts);
    add_ref(c->root, "mentions", action_id);
}

/* Where the batch script was: the path sbatch was given, made absolute with the submit folder. */
static char *script_id(json_object *submit)
{
    const char *script = tbm_json_str(submit, "script"), *wd = tbm_json_str(submit, "work_dir");
    char path[4200];

    if (!script || !*script || (script[0] != '/' && (!wd || wd[0] != '/')))
        return strdup(SCRIPT_ID);
    if (script[0] == '/')
        return file_uri(script);
    tbm_record_fmt(path, sizeof(path), "%s/%s", wd, script);
    return file_uri(path);
}

/* The main workflow: the batch script, with its digest, code revision and language. */
static void workflow(crate_t *c, json_object *submit, const char *id)
{
    json_object *o = ref(id), *git = tbm_json_typed(submit, "git", json_type_object);

    json_object_object_add(o, "@type", strings("File", "SoftwareSourceCode", "ComputationalWorkflow"));
    json_object_array_add(c->graph, o);
    c->workflow = o;
    set_str(o, "name", "batch script");
    set_str(o, "description", "the job's batch script, as sbatch was given it");
    set_str(o, "sha256", tbm_json_str(submit, "script_sha256"));
    if (git && tbm_json_str(git, "commit")) {
        set_str(o, "version", tbm_json_str(git, "commit"));
        set_str(o, "codeRepository", tbm_json_str(git, "remote"));
    }
    json_object_object_add(o, "programmingLanguage", ref(LANGUAGE));
    o = entity(c->graph, LANGUAGE, "ComputerLanguage");
    set_str(o, "name", "Slurm batch script");
    set_str(o, "url", "https://slurm.schedmd.com/sbatch.html");
    json_object_object_add(c->root, "mainEntity", ref(id));
    json_object_array_add(c->parts, ref(id));
}

/* A formal parameter of the workflow (its input or output slot `name`, the sbatch option that fills it),
 * made once; its id in id ("#param-NAME"). */
static void parameter(crate_t *c, const char *member, const char *name, json_object *type, const char *what,
                      char id[96])
{
    json_object *p;

    tbm_record_fmt(id, 96, "#param-%s", name);
    if (find(c->graph, id)) {
        json_object_put(type);
        return;
    }
    p = entity(c->graph, id, "FormalParameter");
    set_str(p, "name", name);
    json_object_object_add(p, "additionalType", type);
    set_str(p, "description", what);
    add_ref(c->workflow, member, id);
}

/* Data entities for declared inputs or outputs (File, or Dataset for a folder), each realizing the parameter
 * `param` and referenced from the action under `member` and from the root's hasPart. */
static void data_entities(crate_t *c, const char *member, json_object *list, const char *param, const char *what)
{
    size_t i, n = list ? json_object_array_length(list) : 0;

    for (i = 0; i < n; i++) {
        json_object *d = json_object_array_get_idx(list, i), *e;
        json_object *size = tbm_json_typed(d, "size", json_type_int);
        const char *path = tbm_json_str(d, "path"), *kind = tbm_json_str(d, "kind");
        char *uri, sz[32], pid[96];

        if (!path || !(uri = file_uri(path)))
            continue;
        parameter(c, !strcmp(member, "object") ? "input" : "output", param, strings("File", "Dataset", NULL), what,
                  pid);
        if (!(e = find(c->graph, uri))) {      /* a path both read and written is one entity */
            e = entity(c->graph, uri, kind && !strcmp(kind, "folder") ? "Dataset" : "File");
            set_str(e, "name", path);
            set_str(e, "sha256", tbm_json_str(d, "sha256"));
            if (size) {
                tbm_record_fmt(sz, sizeof(sz), "%lld", (long long)json_object_get_int64(size));
                set_str(e, "contentSize", sz);
            }
            set_str(e, "description", tbm_json_str(d, "why"));
            json_object_array_add(c->parts, ref(uri));
        }
        json_object_object_add(e, "exampleOfWork", ref(pid));
        add_ref(c->action, member, uri);
        free(uri);
    }
}

/* The declared model (--repro-model ID[@REVISION]) and seed (--repro-seed): entities of the crate, objects
 * of the action, each realizing its parameter. */
static void model_and_seed(crate_t *c, json_object *declared)
{
    json_object *model = tbm_json_typed(declared, "model", json_type_object), *o;
    const char *seed = tbm_json_str(declared, "seed");
    char pid[96];

    if (model && tbm_json_str(model, "id")) {
        parameter(c, "input", "repro-model", json_object_new_string("CreativeWork"),
                  "the model the job declared (sbatch --repro-model=ID[@REVISION])", pid);
        o = entity(c->graph, "#model", "CreativeWork");
        set_str(o, "name", tbm_json_str(model, "id"));
        set_str(o, "identifier", tbm_json_str(model, "id"));
        set_str(o, "version", tbm_json_str(model, "revision"));
        json_object_object_add(o, "exampleOfWork", ref(pid));
        add_ref(c->action, "object", "#model");
    }
    if (seed) {
        parameter(c, "input", "repro-seed",
                  json_object_new_string(seed[0] && strspn(seed, "0123456789") == strlen(seed) ? "Integer" : "Text"),
                  "the random seed the job declared (sbatch --repro-seed=N)", pid);
        o = entity(c->graph, "#seed", "PropertyValue");
        set_str(o, "name", "repro-seed");
        set_str(o, "value", seed);
        json_object_object_add(o, "exampleOfWork", ref(pid));
        add_ref(c->action, "object", "#seed");
    }
}

static void environment(crate_t *c, json_object *rec)
{
    json_object *nodes = tbm_json_typed(rec, "nodes", json_type_array), *env;
    size_t i, n = nodes ? json_object_array_length(nodes) : 0;
    char id[600];

    json_object_object_add(c->action, "environment", json_object_new_array());
    for (i = 0; i < n; i++) {
        json_object *node = json_object_array_get_idx(nodes, i);
        const char *name = tbm_json_str(node, "name");
        if (!(env = tbm_json_typed(node, "backend_env", json_type_object)) || tbm_record_is_absent(env, NULL))
            continue;
        json_object_object_foreach(env, key, val) {
            json_object *p;
            tbm_record_fmt(id, sizeof(id), "#env-%s-%s", name ? name : "node", key);
            p = entity(c->graph, id, "PropertyValue");
            set_str(p, "name", key);
            set_str(p, "value", json_object_get_string(val));
            set_str(p, "description", name);
            add_ref(c->action, "environment", id);
        }
    }
}

/* The run: times, status, agent. */
static void run_facts(crate_t *c, json_object *job, json_object *results, json_object *submit)
{
    const char *state = tbm_json_str(job, "state"), *user = tbm_json_str(job, "user");
    char t[64], pid[300];
    json_object *o;

    iso_time(job, "start_time", t, sizeof(t));
    if (t[0])
        set_str(c->action, "startTime", t);
    iso_time(job, "end_time", t, sizeof(t));
    if (t[0])
        set_str(c->action, "endTime", t);
    set_str(c->action, "description", tbm_json_str(submit, "sbatch_line"));
    json_object_object_add(c->action, "actionStatus",
                           ref(state && !strcmp(state, "COMPLETED") ? "http://schema.org/CompletedActionStatus"
                               : state && (!strcmp(state, "RUNNING") || !strcmp(state, "PENDING"))
                                   ? "http://schema.org/ActiveActionStatus"
                                   : "http://schema.org/FailedActionStatus"));
    if (state && strcmp(state, "COMPLETED") != 0)
        set_str(c->action, "error",
                tbm_json_str(results, "failed_step") ? tbm_json_str(results, "failed_step") : state);
    if (user) {
        tbm_record_fmt(pid, sizeof(pid), "#user-%s", user);
        o = entity(c->graph, pid, "Person");
        set_str(o, "name", user);
        json_object_object_add(c->action, "agent", ref(pid));
    }
}

char *tbm_record_crate(json_object *rec, const char *record_name, tbm_err_t *err)
{
    json_object *top, *meta, *o, *job, *submit, *declared, *results;
    crate_t c;
    char id[128], name[256], *wf, *out;
    long long job_id;

    if (tbm_record_validate(rec, err) < 0)
        return NULL;
    job = tbm_json_typed(rec, "job", json_type_object);
    submit = tbm_json_typed(rec, "submit", json_type_object);
    declared = tbm_json_typed(rec, "declared", json_type_object);
    results = tbm_json_typed(rec, "results", json_type_object);
    job_id = (long long)json_object_get_int64(tbm_json_typed(job, "id", json_type_int));
    tbm_record_fmt(id, sizeof(id), "#job-%lld", job_id);
    tbm_record_fmt(name, sizeof(name), "Slurm job %lld (%s)", job_id,
                   tbm_json_str(job, "cluster") ? tbm_json_str(job, "cluster") : "slurm");
    if (!(wf = script_id(submit)))
        return tbm_errprintf(err, "RO-Crate: out of memory"), NULL;

    top = json_object_new_object();
    c.graph = json_object_new_array();
    json_object_object_add(top, "@context", strings(CRATE_CONTEXT, WFRUN_CONTEXT, NULL));
    json_object_object_add(top, "@graph", c.graph);
    meta = entity(c.graph, "ro-crate-metadata.json", "CreativeWork");
    json_object_object_add(meta, "about", ref("./"));
    root_entity(&c, job, id, name);
    profiles(&c, meta);
    o = entity(c.graph, record_name, "File");
    set_str(o, "name", "slurm-tbmesh reproducibility record");
    set_str(o, "encodingFormat", "application/json");
    json_object_array_add(c.parts, ref(record_name));

    c.action = entity(c.graph, id, "CreateAction");
    set_str(c.action, "name", name);
    json_object_object_add(c.action, "object", json_object_new_array());
    json_object_object_add(c.action, "result", json_object_new_array());
    workflow(&c, submit, wf);
    json_object_object_add(c.action, "instrument", ref(wf));
    free(wf);
    run_facts(&c, job, results, submit);
    data_entities(&c, "object", tbm_json_typed(declared, "data", json_type_array), "repro-data",
                  "the data the job declared (sbatch --repro-data=PATH,...)");
    model_and_seed(&c, declared);
    data_entities(&c, "result", tbm_json_typed(results, "outputs", json_type_array), "repro-output",
                  "the outputs the job declared (sbatch --repro-output=PATH,...)");
    environment(&c, rec);

    out = strdup(json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(top);
    if (!out)
        tbm_errprintf(err, "RO-Crate: out of memory");
    return out;
}
