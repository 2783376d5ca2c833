/* record_build.c: the reproducibility record's assembly from what the SPANK plug-in gathered (see
 * record_build.h): the submit half, the job's facts, a step's part, the parts merged at the end. */
#include "config.h"
#include "record_build.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "json_read.h"
#include "record.h"
#include "scalar.h"
#include "strbuf.h"

const char *const tbm_rb_option_names[TBM_RB_N] = { "repro-model", "repro-data", "repro-seed", "repro-output",
                                                    "repro-note", "repro" };
const char *const tbm_rb_option_envs[TBM_RB_N] = { "TBMESH_REPRO_MODEL", "TBMESH_REPRO_DATA",
                                                   "TBMESH_REPRO_SEED", "TBMESH_REPRO_OUTPUT",
                                                   "TBMESH_REPRO_NOTE", "TBMESH_REPRO" };

#define ID_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"

static int printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 0;
    return 1;
}

/* ID[@REVISION]: a model id (Hugging Face "org/name", a name or a path) and an optional revision. */
static int check_model(const char *v, char *why, size_t len)
{
    const char *at = strrchr(v, '@');
    size_t id = at ? (size_t)(at - v) : strlen(v);

    if (id == 0 || id > 256 || strspn(v, ID_CHARS "/:+") < id)
        return snprintf(why, len, "give the model as ID[@REVISION], e.g. mlx-community/Llama-3.2-1B@7c6e1a2"), -1;
    if (at && (!at[1] || strlen(at + 1) > 128 || strspn(at + 1, ID_CHARS) != strlen(at + 1)))
        return snprintf(why, len, "the revision after @ is letters, digits, '.', '_' or '-' (a commit or tag)"), -1;
    return 0;
}

/* PATH[,PATH...]: each made absolute against cwd; inputs must exist now. */
static int check_paths(const char *v, const char *cwd, int must_exist, char **out, char *why, size_t len)
{
    char buf[8192], *p, *save = NULL;
    tbm_strbuf_t sb;
    struct stat st;
    int n = 0;

    if (!*v || strlen(v) >= sizeof(buf) || !printable(v))
        return snprintf(why, len, "give one or more paths separated by commas"), -1;
    if (v[0] == ',' || v[strlen(v) - 1] == ',' || strstr(v, ",,"))
        return snprintf(why, len, "give 1 to %d paths separated by single commas", TBM_RB_MAX_PATHS), -1;
    snprintf(buf, sizeof(buf), "%s", v);
    tbm_sb_init(&sb);
    for (p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        char abs[PATH_MAX + 8];
        if (++n > TBM_RB_MAX_PATHS) {
            tbm_sb_free(&sb);
            return snprintf(why, len, "give 1 to %d paths separated by single commas", TBM_RB_MAX_PATHS), -1;
        }
        if (p[0] == '/')
            snprintf(abs, sizeof(abs), "%s", p);
        else
            tbm_record_fmt(abs, sizeof(abs), "%s%s%s", cwd && *cwd ? cwd : "/",
                           cwd && *cwd && cwd[strlen(cwd) - 1] != '/' ? "/" : "", p);
        if (must_exist && stat(abs, &st) < 0) {
            tbm_sb_free(&sb);
            return snprintf(why, len, "%.200s: %s; give files or folders the job reads (they are digested when "
                            "it starts)", abs, strerror(errno)), -1;
        }
        tbm_sb_printf(&sb, "%s%s", sb.len ? "," : "", abs);
    }
    if (!(*out = tbm_sb_take(&sb)))
        return snprintf(why, len, "out of memory"), -1;
    return 0;
}

int tbm_rb_option_check(int o, const char *v, const char *cwd, char **kept, char *why, size_t len)
{
    uint64_t seed;

    *kept = NULL;
    switch (o) {
    case TBM_RB_MODEL:
        if (check_model(v, why, len) < 0)
            return -1;
        break;
    case TBM_RB_DATA:
    case TBM_RB_OUTPUT:
        return check_paths(v, cwd, o == TBM_RB_DATA, kept, why, len);
    case TBM_RB_SEED:
        if (tbm_parse_u64(v, UINT64_MAX, &seed) < 0)
            return snprintf(why, len, "give the seed as a whole number from 0 to 18446744073709551615"), -1;
        break;
    case TBM_RB_NOTE:
        if (strlen(v) > TBM_RB_NOTE_MAX || !printable(v))
            return snprintf(why, len, "give at most %d printable characters on one line", TBM_RB_NOTE_MAX), -1;
        break;
    case TBM_RB_SWITCH:
        if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
            return snprintf(why, len, "use --repro=on or --repro=off"), -1;
        break;
    default:
        return snprintf(why, len, "not an option of the record"), -1;
    }
    if (!(*kept = strdup(v)))
        return snprintf(why, len, "out of memory"), -1;
    return 0;
}

/* ---- the submit half ---- */

static void add_str(json_object *o, const char *key, const char *v)
{
    if (v && *v)
        json_object_object_add(o, key, json_object_new_string(v));
}

static json_object *git_facts(const tbm_rb_git_t *g)
{
    json_object *git;
    char *r;

    if (!g->commit)
        return tbm_record_absent(g->absent ? g->absent : "the submit folder's git facts are not known");
    git = json_object_new_object();
    add_str(git, "commit", g->commit);
    add_str(git, "branch", g->branch);
    json_object_object_add(git, "dirty", json_object_new_boolean(g->dirty));
    if (g->remote && *g->remote && (r = tbm_redact_text(g->remote, NULL, 0))) {
        json_object_object_add(git, "remote", json_object_new_string(r));
        free(r);
    } else {
        json_object_object_add(git, "remote", tbm_record_absent("no remote named origin"));
    }
    return git;
}

/* sbatch's options that take their value as the next word (sbatch(1)). */
static int takes_value(const char *a)
{
    static const char *const flags[] = { "--exclusive", "--hold", "--parsable", "--requeue", "--no-requeue",
                                         "--wait", "--test-only", "--overcommit", "--contiguous", "--spread-job",
                                         "--use-min-nodes", "--ignore-pbs", "--no-kill", "--quiet", "--verbose",
                                         "--oversubscribe", "--reboot", "--wrap", NULL };
    int i;

    if (a[0] != '-' || strchr(a, '='))
        return 0;
    if (a[1] != '-')
        return a[2] == '\0' && strchr("ABDGJLMNQSUacdeijklmnopqstwx", a[1]) != NULL;
    for (i = 0; flags[i]; i++)
        if (!strcmp(a, flags[i]))
            return 0;
    return 1;
}

void tbm_rb_command_line(const char *cmdline, size_t n, char *line, size_t len, char *script, size_t slen)
{
    const char *p, *end = cmdline + n;
    int skip = 0, first = 1;
    tbm_strbuf_t sb;
    char *s;

    line[0] = script[0] = '\0';
    if (!cmdline || !n)
        return;
    tbm_sb_init(&sb);
    for (p = cmdline; p < end; p += strnlen(p, (size_t)(end - p)) + 1) {
        size_t w = strnlen(p, (size_t)(end - p));
        int plain = w && strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=.,/:@+%") >= w;
        tbm_sb_printf(&sb, "%s%s%.*s%s", sb.len ? " " : "", plain ? "" : "'", (int)w, p, plain ? "" : "'");
        if (first) {
            first = 0;
            continue;
        }
        if (!script[0] && !skip && p[0] != '-' && w)
            snprintf(script, slen, "%.*s", (int)w, p);
        skip = !skip && w && takes_value(p);
    }
    s = tbm_sb_take(&sb);
    snprintf(line, len, "%s", s ? s : "");
    free(s);
}

static json_object *paths_array(const char *list, int digest_entries)
{
    json_object *a = json_object_new_array();
    char buf[8192], *p, *save = NULL;

    snprintf(buf, sizeof(buf), "%s", list);
    for (p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (digest_entries) {
            json_object *o = json_object_new_object();
            json_object_object_add(o, "path", json_object_new_string(p));
            json_object_array_add(a, o);
        } else {
            json_object_array_add(a, json_object_new_string(p));
        }
    }
    return a;
}

static json_object *declared_of(char *const *given)
{
    json_object *declared = json_object_new_object(), *m;
    const char *model = given[TBM_RB_MODEL], *at;

    if (model) {
        m = json_object_new_object();
        at = strrchr(model, '@');
        json_object_object_add(m, "id", json_object_new_string_len(model, at ? (int)(at - model) : (int)strlen(model)));
        if (at)
            json_object_object_add(m, "revision", json_object_new_string(at + 1));
        json_object_object_add(declared, "model", m);
    }
    if (given[TBM_RB_DATA])
        json_object_object_add(declared, "data", paths_array(given[TBM_RB_DATA], 1));
    add_str(declared, "seed", given[TBM_RB_SEED]);
    if (given[TBM_RB_OUTPUT])
        json_object_object_add(declared, "outputs", paths_array(given[TBM_RB_OUTPUT], 0));
    add_str(declared, "note", given[TBM_RB_NOTE]);
    return declared;
}

json_object *tbm_rb_submit_half(const tbm_rb_submit_t *s)
{
    json_object *doc = json_object_new_object(), *submit = json_object_new_object(), *opts;
    char line[65536], script[PATH_MAX], *r;
    int o;

    tbm_rb_command_line(s->cmdline, s->cmdline_len, line, sizeof(line), script, sizeof(script));
    add_str(submit, "work_dir", s->cwd ? s->cwd : "/");
    add_str(submit, "script", script);
    json_object_object_add(submit, "git", git_facts(&s->git));
    if ((r = tbm_redact_text(line, NULL, 0))) {
        if (strlen(r) > TBM_RB_LINE_MAX)
            strcpy(r + TBM_RB_LINE_MAX - 4, "...");
        json_object_object_add(submit, "sbatch_line", json_object_new_string(r));
        free(r);
    }
    opts = json_object_new_object();
    for (o = 0; o < TBM_RB_N; o++)
        add_str(opts, tbm_rb_option_names[o], s->given[o]);
    add_str(opts, "mlx-backend", s->backend);
    json_object_object_add(submit, "options", opts);
    json_object_object_add(doc, "submit", submit);
    json_object_object_add(doc, "declared", declared_of(s->given));
    if (s->given[TBM_RB_SWITCH] && !strcmp(s->given[TBM_RB_SWITCH], "off"))
        json_object_object_add(doc, "records", json_object_new_string("off"));
    tbm_redact_tree(doc, NULL, 0);
    return doc;
}

int tbm_rb_records_off(const char *submit_text)
{
    tbm_err_t err = { { 0 } };
    json_object *doc = submit_text ? tbm_json_parse(submit_text, strlen(submit_text), &err) : NULL;
    const char *v = doc ? tbm_json_str(doc, "records") : NULL;
    int off = v && !strcmp(v, "off");

    json_object_put(doc);
    return off;
}

json_object *tbm_rb_start_submit(json_object *rec, const char *submit_text)
{
    tbm_err_t err = { { 0 } };
    json_object *sub = submit_text ? tbm_json_parse(submit_text, strlen(submit_text), &err) : NULL, *v, *data;
    json_object *paths = NULL;
    size_t i;

    if (sub && tbm_json_typed(sub, "submit", json_type_object))
        json_object_object_add(rec, "submit", json_object_get(json_object_object_get(sub, "submit")));
    else
        json_object_object_add(rec, "submit", tbm_record_absent("the job was not submitted through sbatch with "
                                                                "spank_tbmesh (no submit half)"));
    if (sub && (v = tbm_json_typed(sub, "declared", json_type_object))) {
        json_object_object_add(rec, "declared", json_object_get(v));
        data = tbm_json_typed(v, "data", json_type_array);
        paths = json_object_new_array();
        for (i = 0; data && i < json_object_array_length(data); i++) {
            const char *p = tbm_json_str(json_object_array_get_idx(data, i), "path");
            if (p)
                json_object_array_add(paths, json_object_new_string(p));
        }
    }
    json_object_put(sub);
    return paths;
}

/* ---- the job ---- */

void tbm_rb_job_facts(json_object *job, const tbm_rb_job_t *j, char *const *nodes, size_t n, const char *group,
                      const char *backend_requested, int64_t now)
{
    json_object *a = json_object_new_array();
    size_t i;

    add_str(job, "user", j->user);
    json_object_object_add(job, "uid", json_object_new_int64(j->uid));
    if (j->known) {
        add_str(job, "name", j->name);
        add_str(job, "account", j->account);
        add_str(job, "partition", j->partition);
        add_str(job, "work_dir", j->work_dir);
        json_object_object_add(job, "restarts", json_object_new_int64(j->restarts));
        if (j->array) {
            json_object_object_add(job, "array_job_id", json_object_new_int64(j->array_job_id));
            json_object_object_add(job, "array_task_id", json_object_new_int64(j->array_task_id));
        }
    }
    for (i = 0; i < n; i++)
        json_object_array_add(a, json_object_new_string(nodes[i]));
    json_object_object_add(job, "nodes", a);
    add_str(job, "group", group);
    add_str(job, "backend_requested", backend_requested && *backend_requested ? backend_requested : "auto");
    json_object_object_add(job, "start_time", json_object_new_int64(now));   /* Slurm's at the end */
}

void tbm_rb_stderr_path(const tbm_rb_job_t *j, char *out, size_t len)
{
    const char *pattern = j->std_err && *j->std_err ? j->std_err : j->std_out && *j->std_out ? j->std_out
                          : j->array ? "slurm-%A_%a.out" : "slurm-%j.out";
    tbm_strbuf_t sb;
    const char *p;
    char *s;

    tbm_sb_init(&sb);
    if (pattern[0] != '/')
        tbm_sb_printf(&sb, "%s/", j->work_dir ? j->work_dir : ".");
    for (p = pattern; *p; p++) {
        if (*p != '%' || !p[1]) {
            tbm_sb_append(&sb, p, 1);
            continue;
        }
        switch (*++p) {
        case 'j': tbm_sb_printf(&sb, "%u", j->job); break;
        case 'A': tbm_sb_printf(&sb, "%u", j->array ? j->array_job_id : j->job); break;
        case 'a': tbm_sb_printf(&sb, "%u", j->array ? j->array_task_id : 4294967294u); break;
        case 'x': tbm_sb_printf(&sb, "%s", j->name ? j->name : ""); break;
        case 'u': tbm_sb_printf(&sb, "%s", j->user ? j->user : ""); break;
        case 'N': tbm_sb_printf(&sb, "%s", j->batch_host ? j->batch_host : ""); break;
        case '%': tbm_sb_append(&sb, "%", 1); break;
        default: tbm_sb_printf(&sb, "%%%c", *p);
        }
    }
    s = tbm_sb_take(&sb);
    snprintf(out, len, "%s", s ? s : "");
    free(s);
}

size_t tbm_rb_secrets(char *const *env, const char **out, size_t max)
{
    char name[256];
    size_t n = 0;
    const char *eq;

    for (; env && *env && n < max; env++)
        if ((eq = strchr(*env, '=')) && (size_t)(eq - *env) < sizeof(name)) {
            memcpy(name, *env, (size_t)(eq - *env));
            name[eq - *env] = '\0';
            if (tbm_secret_name(name) && strlen(eq + 1) >= 6)
                out[n++] = eq + 1;
        }
    return n;
}

const char *tbm_rb_end_job(json_object *rec, const tbm_rb_job_t *j, int wait_status, const char *state,
                           int64_t now)
{
    json_object *job = tbm_record_obj(rec, "job");
    int code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 0;
    int sig = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;

    json_object_object_add(job, "phase", json_object_new_string("end"));
    json_object_object_add(job, "end_time", json_object_new_int64(now));
    json_object_object_add(job, "exit_code", json_object_new_int(code));
    json_object_object_add(job, "signal", json_object_new_int(sig));
    if (j && j->known) {
        json_object_object_add(job, "submit_time", json_object_new_int64(j->submit_time));
        json_object_object_add(job, "start_time", json_object_new_int64(j->start_time));
    }
    if (!state)
        state = code || sig ? "FAILED" : "COMPLETED";
    json_object_object_add(job, "state", json_object_new_string(state));
    return state;
}

/* ---- a step's part ---- */

/* The backend's variables and files of this step on this node as the plug-in planned and exported them:
 * never read back from the job's environment or from a path it names, which its user writes. */
static void backend_setup(const tbm_rb_step_t *s, json_object *env, json_object *files)
{
    size_t i;

    if (!s->plan)
        return;
    for (i = 0; i < s->plan->n_vars; i++)
        add_str(env, s->plan->vars[i].name, s->plan->vars[i].value);
    for (i = 0; !s->bridge && i < s->plan->n_files; i++) {
        const char *path = s->plan->files[i].path, *slash = strrchr(path, '/');
        json_object *f = json_object_new_object();
        add_str(f, "name", slash ? slash + 1 : path);
        add_str(f, "content", s->plan->files[i].data);
        json_object_array_add(files, f);
    }
}

static void agent_usage(const tbm_rb_step_t *s, json_object *part)
{
    json_object *tasks;
    size_t i;

    if (!s->used) {
        add_str(part, "agent_usage_why", s->used_why ? s->used_why : "the agent gave no usage");
        return;
    }
    tasks = json_object_new_array();
    for (i = 0; i < s->used->n_tasks; i++)
        json_object_array_add(tasks, tbm_task_usage_json(&s->used->tasks[i]));
    json_object_object_add(part, "agent_usage", tasks);
    if (s->used->running)
        json_object_object_add(part, "agent_running", json_object_new_int(s->used->running));
}

json_object *tbm_rb_step_part(const tbm_rb_step_t *s, const char *const *secrets, size_t n_secrets)
{
    json_object *part = json_object_new_object(), *env = json_object_new_object(), *files = json_object_new_array();
    tbm_strbuf_t sb;
    char *line;
    int i;

    add_str(part, "node", s->node);
    json_object_object_add(part, "node_id", json_object_new_int((int)s->node_id));
    json_object_object_add(part, "step", json_object_new_int64(s->step));
    json_object_object_add(part, "bridge", json_object_new_boolean(s->bridge));
    tbm_sb_init(&sb);
    for (i = 0; s->argv && i < s->argc; i++)
        tbm_sb_printf(&sb, "%s%s", i ? " " : "", s->argv[i]);
    line = tbm_sb_take(&sb);
    add_str(part, "command", line);
    free(line);
    json_object_object_add(part, "tasks", json_object_new_int(s->tasks));
    if (s->tasks) {
        json_object_object_add(part, "exit_code", json_object_new_int(WIFEXITED(s->status) ? WEXITSTATUS(s->status) : 0));
        json_object_object_add(part, "signal", json_object_new_int(WIFSIGNALED(s->status) ? WTERMSIG(s->status) : 0));
    }
    backend_setup(s, env, files);
    json_object_object_add(part, "backend_env", env);
    json_object_object_add(part, "backend_files", files);
    if (!s->bridge && s->have_rusage) {
        json_object_object_add(part, "cpu_user_us", json_object_new_int64(s->cpu_user_us));
        json_object_object_add(part, "cpu_system_us", json_object_new_int64(s->cpu_system_us));
        json_object_object_add(part, "max_rss_kb", json_object_new_int64(s->max_rss_kb));
    }
    if (s->bridge)
        agent_usage(s, part);
    tbm_redact_tree(part, secrets, n_secrets);
    tbm_utf8_clean_tree(part);   /* a command line need not be UTF-8; the part must read back whole */
    return part;
}

/* ---- the parts merged at the job's end ---- */

static int cmp_part(const void *a, const void *b)
{
    json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;
    long long sx = json_object_get_int64(json_object_object_get(x, "step"));
    long long sy = json_object_get_int64(json_object_object_get(y, "step"));

    return sx != sy ? (sx < sy ? -1 : 1)
                    : json_object_get_int(json_object_object_get(x, "node_id")) -
                          json_object_get_int(json_object_object_get(y, "node_id"));
}

/* A part that could not be read: said, as a step of its own, rather than lost. */
static void unreadable_step(json_object *steps, json_object *p)
{
    json_object *step = json_object_new_object();
    char why[TBM_ERR_MAX + 64];

    add_str(step, "id", tbm_json_str(p, "unreadable"));
    tbm_record_fmt(why, sizeof(why), "its part of the record could not be read: %s", tbm_json_str(p, "why"));
    add_str(step, "state", why);
    json_object_array_add(steps, step);
}

/* The step of steps with id key, made when new. */
static json_object *step_of(json_object *steps, const char *key, json_object *p)
{
    json_object *step;
    size_t k;

    for (k = 0; k < json_object_array_length(steps); k++)
        if (!strcmp(tbm_json_str(json_object_array_get_idx(steps, k), "id"), key))
            return json_object_array_get_idx(steps, k);
    step = json_object_new_object();
    add_str(step, "id", key);
    add_str(step, "command", tbm_json_str(p, "command"));
    json_object_object_add(step, "nodes", json_object_new_array());
    json_object_object_add(step, "exit_code", json_object_new_int(0));
    json_object_array_add(steps, step);
    return step;
}

/* Each node's entry and result from the last part of it. */
static void merge_nodes(json_object *rec, json_object *last_of, int unreadable, int bridge)
{
    json_object *job = json_object_object_get(rec, "job"), *results = tbm_record_obj(rec, "results");
    json_object *nodes = tbm_json_typed(rec, "nodes", json_type_array), *res_nodes = json_object_new_array();
    size_t i;

    for (i = 0; nodes && i < json_object_array_length(nodes); i++) {
        json_object *n = json_object_array_get_idx(nodes, i), *p, *r = json_object_new_object(), *v;
        const char *name = tbm_json_str(n, "name");
        add_str(r, "name", name);
        if (name && json_object_object_get_ex(last_of, name, &p)) {
            json_object_object_add(n, "backend_env", json_object_get(json_object_object_get(p, "backend_env")));
            v = json_object_object_get(p, "backend_files");
            json_object_object_add(n, "backend_files", bridge ? tbm_record_absent("bridge mode: the files are "
                                   "written on the Mac by its agent; their content follows from backend_env and "
                                   "tbmesh.conf") : json_object_get(v));
            if ((v = tbm_json_typed(tbm_json_typed(p, "backend_env", json_type_object), "TBMESH_BACKEND",
                                    json_type_string)))
                json_object_object_add(job, "backend_chosen", json_object_new_string(json_object_get_string(v)));
            json_object_object_add(r, "exit_code", json_object_new_int(json_object_get_int(json_object_object_get(p, "exit_code"))));
            json_object_object_add(r, "signal", json_object_new_int(json_object_get_int(json_object_object_get(p, "signal"))));
        } else {
            tbm_record_set(n, "backend_env", NULL, unreadable ? "no step's part from this node could be read (see "
                           "job.steps)" : "no step ran on this node");
        }
        json_object_array_add(res_nodes, r);
    }
    if (!json_object_object_get_ex(job, "backend_chosen", NULL))
        json_object_object_add(job, "backend_chosen", tbm_record_absent("no srun step of the job set up MLX"));
    json_object_object_add(results, "nodes", res_nodes);
}

void tbm_rb_merge_parts(json_object *rec, json_object *parts, int bridge)
{
    json_object *job = tbm_record_obj(rec, "job"), *steps = json_object_new_array();
    json_object *results = tbm_record_obj(rec, "results"), *last_of = json_object_new_object();
    size_t i;
    int failed = 0, unreadable = 0;
    char key[64];

    json_object_array_sort(parts, cmp_part);
    for (i = 0; i < json_object_array_length(parts); i++) {
        json_object *p = json_object_array_get_idx(parts, i), *step, *v;
        const char *node = tbm_json_str(p, "node");
        if (tbm_json_str(p, "unreadable")) {
            unreadable++;
            unreadable_step(steps, p);
            continue;
        }
        snprintf(key, sizeof(key), "%lld", (long long)json_object_get_int64(json_object_object_get(p, "step")));
        step = step_of(steps, key, p);
        json_object_array_add(json_object_object_get(step, "nodes"), json_object_new_string(node ? node : "?"));
        if ((v = tbm_json_typed(p, "exit_code", json_type_int)) && json_object_get_int(v) != 0) {
            json_object_object_add(step, "exit_code", json_object_new_int(json_object_get_int(v)));
            if (!failed++)
                add_str(results, "failed_step", key);
        }
        if ((v = tbm_json_typed(p, "signal", json_type_int)) && json_object_get_int(v) != 0)
            json_object_object_add(step, "signal", json_object_new_int(json_object_get_int(v)));
        if (node)
            json_object_object_add(last_of, node, json_object_get(p));
    }
    json_object_object_add(job, "steps", steps);
    json_object_object_add(rec, "usage", tbm_record_usage_of_parts(parts, bridge));
    merge_nodes(rec, last_of, unreadable, bridge);
    json_object_put(last_of);
}
