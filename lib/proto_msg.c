/* proto_msg.c: the JSON messages of the bridge-agent protocol: typed member readers, one parser and one
 * builder per message type, and the encoder that validates what it builds by parsing it back (proto.h). */
#include "proto.h"
#include "json_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Member readers ------------------------------------------------------------------------------------ */

static int pj_int32(json_object *o, const char *what, const char *key, int required, int64_t min, int64_t max,
                    int *out, tbm_err_t *err)
{
    int64_t v = *out;

    if (tbm_json_get_int(o, what, key, required, min, max, &v, err) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* An array of 0..max strings (each 1..TBM_FRAME_MAX bytes, no NUL; each checked by ok() when given). */
static int pj_strings(json_object *o, const char *what, const char *key, size_t max, int (*ok)(const char *),
                      const char ***out, size_t *count, tbm_err_t *err)
{
    json_object *v;
    size_t i, n, len;
    const char **arr;

    if (!json_object_object_get_ex(o, key, &v) || !v)
        return tbm_errprintf(err, "%s: member '%s' is missing", what, key);
    if (!json_object_is_type(v, json_type_array))
        return tbm_errprintf(err, "%s: '%s' must be an array of strings", what, key);
    n = json_object_array_length(v);
    if (n > max)
        return tbm_errprintf(err, "%s: '%s' has %zu entries; at most %zu are allowed", what, key, n, max);
    arr = calloc(n + 1, sizeof(*arr));
    if (!arr)
        return tbm_errprintf(err, "%s: out of memory", what);
    for (i = 0; i < n; i++) {
        arr[i] = tbm_json_plain_string(json_object_array_get_idx(v, i), &len);
        if (!arr[i] || (ok && !ok(arr[i]))) {
            free(arr);
            return tbm_errprintf(err, "%s: '%s' entry %zu must be a string without NUL%s", what, key, i,
                                 ok ? " of the form NAME=value" : "");
        }
    }
    *out = arr;
    *count = n;
    return 0;
}

/* Message parsers, one per type ---------------------------------------------------------------------- */

/* A prove's or hello's version (read): this side's only. */
static int version_spoken(const char *what, const tbm_msg_t *m, tbm_err_t *err)
{
    if (m->version != TBM_PROTO_VERSION)
        return tbm_errprintf(err, "%s: protocol version %d is not spoken here (this side speaks %d); "
                             "install the same slurm-tbmesh release on the bridge and the Macs", what,
                             m->version, TBM_PROTO_VERSION);
    return 0;
}

static int parse_hello(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    return pj_int32(o, "hello", "version", 1, 1, 1000, &m->version, err) < 0 ||
                   tbm_json_get_str(o, "hello", "cred", 1, TBM_HELLO_MAX, &m->cred, err) < 0 ||
                   version_spoken("hello", m, err) < 0
               ? -1
               : 0;
}

static int parse_prove(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    if (pj_int32(o, "prove", "version", 1, 1, 1000, &m->version, err) < 0 ||
        tbm_json_get_str(o, "prove", "nonce", 1, 64, &m->nonce, err) < 0 || version_spoken("prove", m, err) < 0)
        return -1;
    if (!tbm_nonce_ok(m->nonce))
        return tbm_errprintf(err, "prove: 'nonce' must be %d lowercase hex digits (16 random bytes)", TBM_NONCE_LEN);
    return 0;
}

static int parse_proof(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    return pj_int32(o, "proof", "version", 1, 1, 1000, &m->version, err) < 0 ||
                   tbm_json_get_str(o, "proof", "node", 1, TBM_NODE_MAX - 1, &m->node, err) < 0 ||
                   tbm_json_get_str(o, "proof", "cred", 1, TBM_HELLO_MAX, &m->cred, err) < 0
               ? -1
               : 0;
}

static int parse_welcome(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    int64_t uid = 0;

    if (pj_int32(o, "welcome", "version", 1, 1, 1000, &m->version, err) < 0 ||
        tbm_json_get_int(o, "welcome", "uid", 1, 0, UINT32_MAX, &uid, err) < 0 ||
        tbm_json_get_str(o, "welcome", "node", 1, TBM_NODE_MAX - 1, &m->node, err) < 0)
        return -1;
    m->uid = (uint32_t)uid;
    return 0;
}

static int parse_nothing(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    (void)o, (void)m, (void)err;
    return 0;
}

static int parse_facts(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    if (!json_object_object_get_ex(o, "facts", &m->facts) || !json_object_is_type(m->facts, json_type_object)) {
        m->facts = NULL;
        return tbm_errprintf(err, "facts: member 'facts' must be a JSON object");
    }
    return 0;
}

int tbm_job_file_name_ok(const char *s)
{
    size_t n = strlen(s);

    return n > 0 && n <= TBM_FILE_NAME_MAX && s[0] != '.' &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

int tbm_job_files_read(json_object *files, const char *what, tbm_jobfile_t out[TBM_FILES_MAX], int *n,
                       tbm_err_t *err)
{
    size_t len;

    *n = 0;
    if (!json_object_is_type(files, json_type_object))
        return tbm_errprintf(err, "%s: the job's files must be a JSON object mapping each file's name to its text",
                             what);
    if (json_object_object_length(files) > TBM_FILES_MAX)
        return tbm_errprintf(err, "%s: %d job files; at most %d are allowed", what,
                             json_object_object_length(files), TBM_FILES_MAX);
    json_object_object_foreach(files, name, v) {
        if (!tbm_job_file_name_ok(name))
            return tbm_errprintf(err, "%s: job file name '%.*s' must be 1 to %d letters, digits, '.', '-' or '_', "
                                 "not start with '.' and name no folder", what, TBM_FILE_NAME_MAX + 1, name,
                                 TBM_FILE_NAME_MAX);
        out[*n].data = tbm_json_plain_string(v, &len);
        if (!out[*n].data)
            return tbm_errprintf(err, "%s: job file '%s' must be text (a JSON string without NUL)", what, name);
        if (len > TBM_FILE_DATA_MAX)
            return tbm_errprintf(err, "%s: job file '%s' has %zu bytes; at most %u are allowed", what, name, len,
                                 TBM_FILE_DATA_MAX);
        out[*n].name = name;
        out[*n].len = len;
        (*n)++;
    }
    return 0;
}

static int env_ok(const char *s)
{
    const char *eq = strchr(s, '=');

    return eq && eq != s;
}

static int parse_winsize(json_object *o, const char *what, tbm_msg_t *m, tbm_err_t *err)
{
    return pj_int32(o, what, "rows", 0, 0, TBM_WINSIZE_MAX, &m->rows, err) < 0 ||
                   pj_int32(o, what, "cols", 0, 0, TBM_WINSIZE_MAX, &m->cols, err) < 0
               ? -1
               : 0;
}

static int parse_spawn(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    json_object *files;
    int64_t uid = 0;

    if (tbm_json_get_str(o, "spawn", "grant", 0, TBM_HELLO_MAX, &m->grant, err) < 0 ||
        tbm_json_get_int(o, "spawn", "uid", 1, 0, UINT32_MAX, &uid, err) < 0 ||
        tbm_json_get_str(o, "spawn", "cwd", 1, 4096, &m->cwd, err) < 0 ||
        tbm_json_get_bool(o, "spawn", "pty", &m->pty, err) < 0 || parse_winsize(o, "spawn", m, err) < 0 ||
        pj_int32(o, "spawn", "time_limit", 0, 0, TBM_TIME_LIMIT_MAX, &m->time_limit, err) < 0)
        return -1;
    m->uid = (uint32_t)uid;
    if (m->cwd[0] != '/')
        return tbm_errprintf(err, "spawn: 'cwd' must be an absolute path, not '%s'", m->cwd);
    if (pj_strings(o, "spawn", "argv", TBM_ARGV_MAX, NULL, &m->argv, &m->argc, err) < 0 ||
        pj_strings(o, "spawn", "env", TBM_ARGV_MAX, env_ok, &m->env, &m->envc, err) < 0)
        return -1;
    if (m->argc == 0 || m->argv[0][0] == '\0')
        return tbm_errprintf(err, "spawn: 'argv' must name a command in its first entry");
    if (json_object_object_get_ex(o, "files", &files) && files)
        return tbm_job_files_read(files, "spawn", m->files, &m->n_files, err);
    return 0;
}

static int parse_started(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    int64_t pid = 0;

    if (tbm_json_get_int(o, "started", "pid", 1, 1, INT32_MAX, &pid, err) < 0)
        return -1;
    m->pid = (long)pid;
    return 0;
}

static int signal_member(json_object *o, const char *what, int required, tbm_msg_t *m, tbm_err_t *err)
{
    if (tbm_json_get_str(o, what, "signal", required, 16, &m->signal, err) < 0)
        return -1;
    if (m->signal && !tbm_signal_by_name(m->signal))
        return tbm_errprintf(err, "%s: unknown signal '%s'; use a name like TERM, INT, HUP, USR1 (no SIG)",
                             what, m->signal);
    return 0;
}

static int parse_signal(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    return signal_member(o, "signal", 1, m, err);
}

static int parse_resize(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    return pj_int32(o, "resize", "rows", 1, 1, TBM_WINSIZE_MAX, &m->rows, err) < 0 ||
                   pj_int32(o, "resize", "cols", 1, 1, TBM_WINSIZE_MAX, &m->cols, err) < 0
               ? -1
               : 0;
}

static int parse_exit(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    return tbm_task_end_read(o, "exit", &m->status, &m->signal, &m->core, err) < 0 ||
                   tbm_rusage_read(o, "exit", &m->rusage, err) < 0
               ? -1
               : 0;
}

static int parse_job(json_object *o, const char *what, tbm_msg_t *m, tbm_err_t *err)
{
    int64_t job = 0;

    if (tbm_json_get_int(o, what, "job", 1, 0, UINT32_MAX, &job, err) < 0)
        return -1;
    m->job = (uint32_t)job;
    return 0;
}

static int parse_cleanup(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    m->job_uid = -1;
    return parse_job(o, "cleanup", m, err) < 0 ||
                   tbm_json_get_int(o, "cleanup", "uid", 0, 0, UINT32_MAX - 1, &m->job_uid, err) < 0 ||
                   tbm_json_get_bool(o, "cleanup", "exclusive", &m->exclusive, err) < 0
               ? -1
               : 0;
}

static int parse_cleaned(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    return parse_job(o, "cleaned", m, err) < 0 ||
                   pj_int32(o, "cleaned", "killed", 1, 0, INT32_MAX, &m->killed, err) < 0 ||
                   pj_int32(o, "cleaned", "swept", 0, 0, INT32_MAX, &m->swept, err) < 0
               ? -1
               : 0;
}

static int parse_usage(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    int64_t step = 0;

    if (parse_job(o, "usage", m, err) < 0 || tbm_json_get_int(o, "usage", "step", 1, 0, UINT32_MAX, &step, err) < 0)
        return -1;
    m->step = (uint32_t)step;
    return 0;
}

static int parse_used(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    json_object *a;
    char what[64];
    size_t i, n;
    int64_t step = 0;

    if (parse_job(o, "used", m, err) < 0 || tbm_json_get_int(o, "used", "step", 1, 0, UINT32_MAX, &step, err) < 0 ||
        pj_int32(o, "used", "running", 1, 0, INT32_MAX, &m->running, err) < 0)
        return -1;
    m->step = (uint32_t)step;
    if (!json_object_object_get_ex(o, "tasks", &a) || !json_object_is_type(a, json_type_array))
        return tbm_errprintf(err, "used: member 'tasks' must be an array of task usages");
    n = json_object_array_length(a);
    if (n > TBM_USAGE_TASKS_MAX)
        return tbm_errprintf(err, "used: 'tasks' has %zu entries; at most %d are allowed", n, TBM_USAGE_TASKS_MAX);
    if (n && !(m->tasks = calloc(n, sizeof(*m->tasks))))
        return tbm_errprintf(err, "used: out of memory");
    for (i = 0; i < n; i++) {
        snprintf(what, sizeof(what), "used: tasks[%zu]", i);
        if (tbm_task_usage_read(json_object_array_get_idx(a, i), what, &m->tasks[i], err) < 0)
            return -1;
        if (m->tasks[i].job != m->job || m->tasks[i].step != m->step)
            return tbm_errprintf(err, "%s is of job %u step %u, not of job %u step %u as asked", what,
                                 m->tasks[i].job, m->tasks[i].step, m->job, m->step);
        m->n_tasks = i + 1;
    }
    return 0;
}

static int parse_error(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    return tbm_json_get_str(o, "error", "code", 1, 32, &m->code, err) < 0 ||
                   tbm_json_get_str(o, "error", "message", 1, TBM_ERR_MAX, &m->message, err) < 0
               ? -1
               : 0;
}

static int iface_ok(const char *s)
{
    size_t n = strlen(s);

    return n > 0 && n <= TBM_IFACE_MAX &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static int parse_watching(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    if (pj_strings(o, "watching", "ifaces", TBM_WATCH_IFACES_MAX, iface_ok, &m->ifaces, &m->n_ifaces, err) < 0)
        return tbm_errprintf(err, "watching: 'ifaces' must be an array of at most %d interface names (1 to %d "
                             "letters, digits, '.', '-' or '_')", TBM_WATCH_IFACES_MAX, TBM_IFACE_MAX);
    return 0;
}

static int parse_link(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    if (tbm_json_get_str(o, "link", "iface", 1, TBM_IFACE_MAX, &m->iface, err) < 0 ||
        tbm_json_get_bool(o, "link", "up", &m->up, err) < 0 ||
        tbm_json_get_int(o, "link", "seq", 1, 1, INT64_MAX, &m->seq, err) < 0)
        return -1;
    if (!iface_ok(m->iface))
        return tbm_errprintf(err, "link: 'iface' must be an interface's name (1 to %d letters, digits, '.', "
                             "'-' or '_'), not '%s'", TBM_IFACE_MAX, m->iface);
    return 0;
}

static int parse_missed(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    return tbm_json_get_int(o, "missed", "count", 1, 1, INT64_MAX, &m->count, err) < 0 ||
                   tbm_json_get_int(o, "missed", "seq", 1, 1, INT64_MAX, &m->seq, err) < 0
               ? -1
               : 0;
}

/* Message builders, one per type --------------------------------------------------------------------- */

static void add_str(json_object *o, const char *key, const char *s)
{
    if (s)
        json_object_object_add(o, key, json_object_new_string(s));
}

static void add_int(json_object *o, const char *key, int64_t v)
{
    json_object_object_add(o, key, json_object_new_int64(v));
}

static void add_strings(json_object *o, const char *key, const char *const *s, size_t n)
{
    json_object *a = json_object_new_array();
    size_t i;

    for (i = 0; i < n; i++)
        json_object_array_add(a, json_object_new_string(s[i] ? s[i] : ""));
    json_object_object_add(o, key, a);
}

static void build_hello(json_object *o, const tbm_msg_t *m)
{
    add_int(o, "version", m->version ? m->version : TBM_PROTO_VERSION);
    add_str(o, "cred", m->cred);
}

static void build_welcome(json_object *o, const tbm_msg_t *m)
{
    build_hello(o, m);
    add_int(o, "uid", m->uid);
    add_str(o, "node", m->node);
}

static void build_prove(json_object *o, const tbm_msg_t *m)
{
    add_int(o, "version", m->version ? m->version : TBM_PROTO_VERSION);
    add_str(o, "nonce", m->nonce);
}

static void build_proof(json_object *o, const tbm_msg_t *m)
{
    build_hello(o, m);
    add_str(o, "node", m->node);
}

static void build_nothing(json_object *o, const tbm_msg_t *m)
{
    (void)o, (void)m;
}

static void build_facts(json_object *o, const tbm_msg_t *m)
{
    if (m->facts)
        json_object_object_add(o, "facts", json_object_get(m->facts));
}

static void add_files(json_object *o, const tbm_jobfile_t *files, int n)
{
    json_object *f;
    int i;

    if (n <= 0)
        return;
    f = json_object_new_object();
    for (i = 0; i < n && i < TBM_FILES_MAX; i++)
        json_object_object_add(f, files[i].name ? files[i].name : "",
                               json_object_new_string_len(files[i].data ? files[i].data : "", (int)files[i].len));
    json_object_object_add(o, "files", f);
}

static void build_spawn(json_object *o, const tbm_msg_t *m)
{
    add_str(o, "grant", m->grant);
    add_int(o, "uid", m->uid);
    add_strings(o, "argv", m->argv, m->argc);
    add_strings(o, "env", m->env, m->envc);
    add_str(o, "cwd", m->cwd);
    json_object_object_add(o, "pty", json_object_new_boolean(m->pty));
    add_int(o, "rows", m->rows);
    add_int(o, "cols", m->cols);
    add_int(o, "time_limit", m->time_limit);
    add_files(o, m->files, m->n_files);
}

static void build_started(json_object *o, const tbm_msg_t *m)
{
    add_int(o, "pid", m->pid);
}

static void build_signal(json_object *o, const tbm_msg_t *m)
{
    add_str(o, "signal", m->signal);
}

static void build_resize(json_object *o, const tbm_msg_t *m)
{
    add_int(o, "rows", m->rows);
    add_int(o, "cols", m->cols);
}

static void build_exit(json_object *o, const tbm_msg_t *m)
{
    add_int(o, "status", m->status);
    add_str(o, "signal", m->signal);
    json_object_object_add(o, "core", json_object_new_boolean(m->core));
    tbm_rusage_add(o, &m->rusage);
}

/* A cleanup's "uid" and "exclusive" go only with a uid: a zeroed message (job_uid 0) names none, as -1 does;
 * root's own jobs are never swept by uid anyway (lib/reap.h). */
static void build_cleanup(json_object *o, const tbm_msg_t *m)
{
    add_int(o, "job", m->job);
    if (m->job_uid > 0) {
        add_int(o, "uid", m->job_uid);
        json_object_object_add(o, "exclusive", json_object_new_boolean(m->exclusive));
    }
}

static void build_cleaned(json_object *o, const tbm_msg_t *m)
{
    add_int(o, "job", m->job);
    add_int(o, "killed", m->killed);
    add_int(o, "swept", m->swept);
}

static void build_usage(json_object *o, const tbm_msg_t *m)
{
    add_int(o, "job", m->job);
    add_int(o, "step", m->step);
}

static void build_used(json_object *o, const tbm_msg_t *m)
{
    json_object *a = json_object_new_array();
    size_t i;

    build_usage(o, m);
    add_int(o, "running", m->running);
    for (i = 0; i < m->n_tasks; i++)
        json_object_array_add(a, tbm_task_usage_json(&m->tasks[i]));
    json_object_object_add(o, "tasks", a);
}

static void build_error(json_object *o, const tbm_msg_t *m)
{
    add_str(o, "code", m->code);
    add_str(o, "message", m->message);
}

static void build_watching(json_object *o, const tbm_msg_t *m)
{
    add_strings(o, "ifaces", m->ifaces, m->n_ifaces);
}

static void build_link(json_object *o, const tbm_msg_t *m)
{
    add_str(o, "iface", m->iface);
    json_object_object_add(o, "up", json_object_new_boolean(m->up));
    add_int(o, "seq", m->seq);
}

static void build_missed(json_object *o, const tbm_msg_t *m)
{
    add_int(o, "count", m->count);
    add_int(o, "seq", m->seq);
}

static const struct msg_kind {
    const char *name;
    int (*parse)(json_object *, tbm_msg_t *, tbm_err_t *);
    void (*build)(json_object *, const tbm_msg_t *);
} kinds[] = {
    [TBM_MSG_HELLO] = {"hello", parse_hello, build_hello},
    [TBM_MSG_WELCOME] = {"welcome", parse_welcome, build_welcome},
    [TBM_MSG_PROBE] = {"probe", parse_nothing, build_nothing},
    [TBM_MSG_FACTS] = {"facts", parse_facts, build_facts},
    [TBM_MSG_SPAWN] = {"spawn", parse_spawn, build_spawn},
    [TBM_MSG_STARTED] = {"started", parse_started, build_started},
    [TBM_MSG_SIGNAL] = {"signal", parse_signal, build_signal},
    [TBM_MSG_RESIZE] = {"resize", parse_resize, build_resize},
    [TBM_MSG_EXIT] = {"exit", parse_exit, build_exit},
    [TBM_MSG_CLEANUP] = {"cleanup", parse_cleanup, build_cleanup},
    [TBM_MSG_CLEANED] = {"cleaned", parse_cleaned, build_cleaned},
    [TBM_MSG_ERROR] = {"error", parse_error, build_error},
    [TBM_MSG_WATCH] = {"watch", parse_nothing, build_nothing},
    [TBM_MSG_WATCHING] = {"watching", parse_watching, build_watching},
    [TBM_MSG_LINK] = {"link", parse_link, build_link},
    [TBM_MSG_MISSED] = {"missed", parse_missed, build_missed},
    [TBM_MSG_USAGE] = {"usage", parse_usage, build_usage},
    [TBM_MSG_USED] = {"used", parse_used, build_used},
    [TBM_MSG_PROVE] = {"prove", parse_prove, build_prove},
    [TBM_MSG_PROOF] = {"proof", parse_proof, build_proof},
};
#define N_KINDS ((int)(sizeof(kinds) / sizeof(kinds[0])))

const char *tbm_msg_type_name(tbm_msg_type_t type)
{
    return (int)type >= TBM_MSG_HELLO && (int)type < N_KINDS ? kinds[type].name : "?";
}

static int type_of(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    const char *name = NULL;
    int t;

    if (tbm_json_get_str(o, "message", "type", 1, 32, &name, err) < 0)
        return -1;
    for (t = TBM_MSG_HELLO; t < N_KINDS; t++)
        if (strcmp(kinds[t].name, name) == 0) {
            m->type = (tbm_msg_type_t)t;
            return 0;
        }
    return tbm_errprintf(err, "message: unknown type '%s'; this side speaks protocol version %d", name,
                         TBM_PROTO_VERSION);
}

int tbm_msg_parse(const tbm_frame_t *f, tbm_msg_t *m, tbm_err_t *err)
{
    memset(m, 0, sizeof(*m));
    if (f->kind != TBM_FRAME_JSON)
        return tbm_errprintf(err, "message: a data frame came where a JSON message was expected");
    m->doc = tbm_proto_json(f->data, f->len, "message", err);
    if (!m->doc)
        return -1;
    if (type_of(m->doc, m, err) < 0 || kinds[m->type].parse(m->doc, m, err) < 0) {
        tbm_msg_free(m);
        return -1;
    }
    return 0;
}

void tbm_msg_free(tbm_msg_t *m)
{
    if (m->doc) {
        json_object_put(m->doc);
        free((void *)m->argv);
        free((void *)m->env);
        free((void *)m->ifaces);
        free(m->tasks);
    }
    memset(m, 0, sizeof(*m));
}

unsigned char *tbm_msg_encode(const tbm_msg_t *m, size_t *len, tbm_err_t *err)
{
    json_object *o;
    const char *text;
    size_t n;
    unsigned char *frame = NULL;
    tbm_frame_t f;
    tbm_msg_t check;

    if ((int)m->type < TBM_MSG_HELLO || (int)m->type >= N_KINDS)
        return tbm_errprintf(err, "message: type %d is not a message type", (int)m->type), NULL;
    o = json_object_new_object();
    add_str(o, "type", kinds[m->type].name);
    kinds[m->type].build(o, m);
    text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    n = strlen(text);
    f.kind = TBM_FRAME_JSON;
    f.data = (const unsigned char *)text;
    f.len = n;
    if (tbm_msg_parse(&f, &check, err) == 0) {
        if (check.n_files != (m->type == TBM_MSG_SPAWN ? m->n_files : 0))
            tbm_errprintf(err, "%s: two job files have the same name; give each file its own name",
                          kinds[m->type].name);
        else
            frame = tbm_frame_wrap(text, n, len, err);
        tbm_msg_free(&check);
    }
    json_object_put(o);
    return frame;
}

unsigned char *tbm_msg_encode_hello(const char *cred, const tbm_msg_t *req, size_t *len, tbm_err_t *err)
{
    tbm_msg_t hello = { .type = TBM_MSG_HELLO, .version = TBM_PROTO_VERSION, .cred = cred };
    unsigned char *one, *two = NULL, *both;
    size_t n1, n2 = 0;

    if (!(one = tbm_msg_encode(&hello, &n1, err)))
        return NULL;
    if (req && !(two = tbm_msg_encode(req, &n2, err))) {
        free(one);
        return NULL;
    }
    both = two ? realloc(one, n1 + n2) : one;
    if (!both) {
        free(one), free(two);
        return tbm_errprintf(err, "out of memory"), NULL;
    }
    if (two)
        memcpy(both + n1, two, n2);
    free(two);
    *len = n1 + n2;
    return both;
}
