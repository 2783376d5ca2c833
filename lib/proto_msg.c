/* proto_msg.c: the JSON messages of the bridge-agent protocol: typed member readers, one parser and one
 * builder per message type, and the encoder that validates what it builds by parsing it back (proto.h). */
#include "proto.h"
#include "proto_json.h"

#include <stdlib.h>
#include <string.h>

#define PJ_DEPTH 16

/* Typed member readers ------------------------------------------------------------------------------- */

json_object *tbm_pj_parse(const void *text, size_t len, const char *what, tbm_err_t *err)
{
    struct json_tokener *tok;
    json_object *o;
    enum json_tokener_error jerr;
    size_t end;

    if (len == 0 || len > TBM_FRAME_MAX)
        return tbm_errprintf(err, "%s: %zu bytes of JSON; 1 to %u are allowed", what, len, TBM_FRAME_MAX), NULL;
    tok = json_tokener_new_ex(PJ_DEPTH);
    if (!tok)
        return tbm_errprintf(err, "%s: out of memory", what), NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    o = json_tokener_parse_ex(tok, text, (int)len);
    jerr = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (!o && jerr == json_tokener_continue)
        return tbm_errprintf(err, "%s: bad JSON: the text ends inside the object", what), NULL;
    if (!o)
        return tbm_errprintf(err, "%s: bad JSON at byte %zu: %s", what, end, json_tokener_error_desc(jerr)), NULL;
    if (end < len || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        return tbm_errprintf(err, "%s: bad JSON: %s", what,
                             end < len ? "text after the end of the object" : "not a JSON object"), NULL;
    }
    return o;
}

/* The member, or NULL; -1 when it is required and absent. */
static int member(json_object *o, const char *what, const char *key, int required, json_object **v,
                  tbm_err_t *err)
{
    *v = NULL;
    if (json_object_object_get_ex(o, key, v) && *v)
        return 1;
    *v = NULL;
    return required ? tbm_errprintf(err, "%s: member '%s' is missing", what, key) : 0;
}

int tbm_pj_int(json_object *o, const char *what, const char *key, int required, int64_t min, int64_t max,
               int64_t *out, tbm_err_t *err)
{
    json_object *v;
    int64_t x;
    int rc = member(o, what, key, required, &v, err);

    if (rc <= 0)
        return rc;
    if (!json_object_is_type(v, json_type_int))
        return tbm_errprintf(err, "%s: '%s' must be an integer", what, key);
    x = json_object_get_int64(v);
    if (x < min || x > max || (x == INT64_MAX && max == INT64_MAX && json_object_get_uint64(v) > INT64_MAX))
        return tbm_errprintf(err, "%s: '%s' is %lld, outside %lld..%lld", what, key, (long long)x,
                             (long long)min, (long long)max);
    *out = x;
    return 0;
}

/* A JSON string without NUL bytes, its length in *n. */
static const char *plain_string(json_object *v, size_t *n)
{
    const char *s;

    if (!json_object_is_type(v, json_type_string))
        return NULL;
    s = json_object_get_string(v);
    *n = (size_t)json_object_get_string_len(v);
    return strlen(s) == *n ? s : NULL;
}

int tbm_pj_str(json_object *o, const char *what, const char *key, int required, size_t maxlen,
               const char **out, tbm_err_t *err)
{
    json_object *v;
    const char *s;
    size_t n = 0;
    int rc = member(o, what, key, required, &v, err);

    if (rc <= 0)
        return rc;
    s = plain_string(v, &n);
    if (!s || n == 0 || n > maxlen)
        return tbm_errprintf(err, "%s: '%s' must be a string of 1 to %zu bytes without NUL", what, key, maxlen);
    *out = s;
    return 0;
}

int tbm_pj_bool(json_object *o, const char *what, const char *key, int *out, tbm_err_t *err)
{
    json_object *v;
    int rc = member(o, what, key, 0, &v, err);

    *out = 0;
    if (rc <= 0)
        return rc;
    if (!json_object_is_type(v, json_type_boolean))
        return tbm_errprintf(err, "%s: '%s' must be true or false", what, key);
    *out = json_object_get_boolean(v);
    return 0;
}

static int pj_int32(json_object *o, const char *what, const char *key, int required, int64_t min, int64_t max,
                    int *out, tbm_err_t *err)
{
    int64_t v = *out;

    if (tbm_pj_int(o, what, key, required, min, max, &v, err) < 0)
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

    if (member(o, what, key, 1, &v, err) < 0)
        return -1;
    if (!json_object_is_type(v, json_type_array))
        return tbm_errprintf(err, "%s: '%s' must be an array of strings", what, key);
    n = json_object_array_length(v);
    if (n > max)
        return tbm_errprintf(err, "%s: '%s' has %zu entries; at most %zu are allowed", what, key, n, max);
    arr = calloc(n + 1, sizeof(*arr));
    if (!arr)
        return tbm_errprintf(err, "%s: out of memory", what);
    for (i = 0; i < n; i++) {
        arr[i] = plain_string(json_object_array_get_idx(v, i), &len);
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

static int parse_hello(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    if (pj_int32(o, "hello", "version", 1, 1, 1000, &m->version, err) < 0 ||
        tbm_pj_str(o, "hello", "cred", 1, TBM_HELLO_MAX, &m->cred, err) < 0)
        return -1;
    if (m->version != TBM_PROTO_VERSION)
        return tbm_errprintf(err, "hello: protocol version %d is not spoken here (this side speaks %d); "
                             "install the same slurm-tbmesh release on the bridge and the Macs",
                             m->version, TBM_PROTO_VERSION);
    return 0;
}

static int parse_welcome(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    int64_t uid = 0;

    if (pj_int32(o, "welcome", "version", 1, 1, 1000, &m->version, err) < 0 ||
        tbm_pj_int(o, "welcome", "uid", 1, 0, UINT32_MAX, &uid, err) < 0 ||
        tbm_pj_str(o, "welcome", "node", 1, TBM_NODE_MAX - 1, &m->node, err) < 0)
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

static int file_name_ok(const char *s)
{
    size_t n = strlen(s);

    return n > 0 && n <= TBM_FILE_NAME_MAX && s[0] != '.' &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static int parse_file(json_object *f, size_t i, tbm_jobfile_t *jf, tbm_err_t *err)
{
    json_object *v;
    int64_t mode = 0;

    if (!json_object_is_type(f, json_type_object))
        return tbm_errprintf(err, "prepare: files[%zu] must be an object with name, mode and data", i);
    if (tbm_pj_str(f, "prepare file", "name", 1, TBM_FILE_NAME_MAX, &jf->name, err) < 0 ||
        tbm_pj_int(f, "prepare file", "mode", 1, 0, 0777, &mode, err) < 0)
        return tbm_errprefix(err, "files[%zu]: ", i);
    if (!file_name_ok(jf->name))
        return tbm_errprintf(err, "prepare: files[%zu] name '%s' must be letters, digits, '.', '-', '_', not "
                             "start with '.', and name no folder", i, jf->name);
    if ((mode & ~0755) || !(mode & 0400))
        return tbm_errprintf(err, "prepare: files[%zu] mode 0%llo must be readable by its owner and have no "
                             "group or other write bit", i, (unsigned long long)mode);
    if (!json_object_object_get_ex(f, "data", &v) || !json_object_is_type(v, json_type_string) ||
        (size_t)json_object_get_string_len(v) > TBM_FILE_DATA_MAX)
        return tbm_errprintf(err, "prepare: files[%zu] 'data' must be a string of at most %u bytes", i,
                             TBM_FILE_DATA_MAX);
    jf->data = json_object_get_string(v);
    jf->len = (size_t)json_object_get_string_len(v);
    jf->mode = (int)mode;
    return 0;
}

static int parse_prepare(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    json_object *files;
    size_t i, n;

    if (tbm_pj_str(o, "prepare", "grant", 0, TBM_HELLO_MAX, &m->grant, err) < 0)
        return -1;
    if (!json_object_object_get_ex(o, "files", &files) || !json_object_is_type(files, json_type_array))
        return tbm_errprintf(err, "prepare: member 'files' must be an array");
    n = json_object_array_length(files);
    if (n > TBM_FILES_MAX)
        return tbm_errprintf(err, "prepare: %zu files; at most %d are allowed", n, TBM_FILES_MAX);
    for (i = 0; i < n; i++)
        if (parse_file(json_object_array_get_idx(files, i), i, &m->files[i], err) < 0)
            return -1;
    m->n_files = (int)n;
    return 0;
}

static int parse_prepared(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    return tbm_pj_str(o, "prepared", "dir", 1, 4096, &m->dir, err);
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
    int64_t uid = 0;

    if (tbm_pj_str(o, "spawn", "grant", 0, TBM_HELLO_MAX, &m->grant, err) < 0 ||
        tbm_pj_int(o, "spawn", "uid", 1, 0, UINT32_MAX, &uid, err) < 0 ||
        tbm_pj_str(o, "spawn", "cwd", 1, 4096, &m->cwd, err) < 0 ||
        tbm_pj_bool(o, "spawn", "pty", &m->pty, err) < 0 || parse_winsize(o, "spawn", m, err) < 0 ||
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
    return 0;
}

static int parse_started(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    int64_t pid = 0;

    if (tbm_pj_int(o, "started", "pid", 1, 1, INT32_MAX, &pid, err) < 0)
        return -1;
    m->pid = (long)pid;
    return 0;
}

static int signal_member(json_object *o, const char *what, int required, tbm_msg_t *m, tbm_err_t *err)
{
    if (tbm_pj_str(o, what, "signal", required, 16, &m->signal, err) < 0)
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
    json_object *ru;

    if (pj_int32(o, "exit", "status", 1, 0, 255, &m->status, err) < 0 || signal_member(o, "exit", 0, m, err) < 0 ||
        tbm_pj_bool(o, "exit", "core", &m->core, err) < 0)
        return -1;
    if (m->signal && m->status != 0)
        return tbm_errprintf(err, "exit: a task killed by signal %s cannot also have exit status %d", m->signal,
                             m->status);
    if (!json_object_object_get_ex(o, "rusage", &ru) || !json_object_is_type(ru, json_type_object))
        return tbm_errprintf(err, "exit: member 'rusage' must be an object");
    return tbm_pj_int(ru, "exit rusage", "utime_us", 1, 0, INT64_MAX, &m->rusage.utime_us, err) < 0 ||
                   tbm_pj_int(ru, "exit rusage", "stime_us", 1, 0, INT64_MAX, &m->rusage.stime_us, err) < 0 ||
                   tbm_pj_int(ru, "exit rusage", "maxrss_kb", 1, 0, INT64_MAX, &m->rusage.maxrss_kb, err) < 0
               ? -1
               : 0;
}

static int parse_job(json_object *o, const char *what, tbm_msg_t *m, tbm_err_t *err)
{
    int64_t job = 0;

    if (tbm_pj_int(o, what, "job", 1, 0, UINT32_MAX, &job, err) < 0)
        return -1;
    m->job = (uint32_t)job;
    return 0;
}

static int parse_cleanup(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    return parse_job(o, "cleanup", m, err);
}

static int parse_cleaned(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    return parse_job(o, "cleaned", m, err) < 0 ||
                   pj_int32(o, "cleaned", "killed", 1, 0, INT32_MAX, &m->killed, err) < 0
               ? -1
               : 0;
}

static int parse_error(json_object *o, tbm_msg_t *m, tbm_err_t *err)
{
    return tbm_pj_str(o, "error", "code", 1, 32, &m->code, err) < 0 ||
                   tbm_pj_str(o, "error", "message", 1, TBM_ERR_MAX, &m->message, err) < 0
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

static void build_nothing(json_object *o, const tbm_msg_t *m)
{
    (void)o, (void)m;
}

static void build_facts(json_object *o, const tbm_msg_t *m)
{
    if (m->facts)
        json_object_object_add(o, "facts", json_object_get(m->facts));
}

static void build_prepare(json_object *o, const tbm_msg_t *m)
{
    json_object *files = json_object_new_array(), *f;
    int i;

    add_str(o, "grant", m->grant);
    for (i = 0; i < m->n_files && i < TBM_FILES_MAX; i++) {
        f = json_object_new_object();
        add_str(f, "name", m->files[i].name);
        add_int(f, "mode", m->files[i].mode);
        json_object_object_add(f, "data", json_object_new_string_len(m->files[i].data ? m->files[i].data : "",
                                                                     (int)m->files[i].len));
        json_object_array_add(files, f);
    }
    json_object_object_add(o, "files", files);
}

static void build_prepared(json_object *o, const tbm_msg_t *m)
{
    add_str(o, "dir", m->dir);
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
    json_object *ru = json_object_new_object();

    add_int(o, "status", m->status);
    add_str(o, "signal", m->signal);
    json_object_object_add(o, "core", json_object_new_boolean(m->core));
    add_int(ru, "utime_us", m->rusage.utime_us);
    add_int(ru, "stime_us", m->rusage.stime_us);
    add_int(ru, "maxrss_kb", m->rusage.maxrss_kb);
    json_object_object_add(o, "rusage", ru);
}

static void build_cleanup(json_object *o, const tbm_msg_t *m)
{
    add_int(o, "job", m->job);
}

static void build_cleaned(json_object *o, const tbm_msg_t *m)
{
    add_int(o, "job", m->job);
    add_int(o, "killed", m->killed);
}

static void build_error(json_object *o, const tbm_msg_t *m)
{
    add_str(o, "code", m->code);
    add_str(o, "message", m->message);
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
    [TBM_MSG_PREPARE] = {"prepare", parse_prepare, build_prepare},
    [TBM_MSG_PREPARED] = {"prepared", parse_prepared, build_prepared},
    [TBM_MSG_SPAWN] = {"spawn", parse_spawn, build_spawn},
    [TBM_MSG_STARTED] = {"started", parse_started, build_started},
    [TBM_MSG_SIGNAL] = {"signal", parse_signal, build_signal},
    [TBM_MSG_RESIZE] = {"resize", parse_resize, build_resize},
    [TBM_MSG_EXIT] = {"exit", parse_exit, build_exit},
    [TBM_MSG_CLEANUP] = {"cleanup", parse_cleanup, build_cleanup},
    [TBM_MSG_CLEANED] = {"cleaned", parse_cleaned, build_cleaned},
    [TBM_MSG_ERROR] = {"error", parse_error, build_error},
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

    if (tbm_pj_str(o, "message", "type", 1, 32, &name, err) < 0)
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
    m->doc = tbm_pj_parse(f->data, f->len, "message", err);
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
        tbm_msg_free(&check);
        frame = tbm_frame_wrap(text, n, len, err);
    }
    json_object_put(o);
    return frame;
}
