/* spank_repro.c: spank_tbmesh's reproducibility records, the glue between SPANK and acct/record_build.c. On
 * the submit side it registers the --repro-* options (also read from TBMESH_REPRO_* variables), refuses bad
 * values at once, and passes the submit half (code revision of the submit folder, sbatch line, declared
 * model, data, seed, outputs, note) to job_submit/tbmesh and the nodes in the job control environment. On the
 * nodes, as root, from the step's one description (spank_step.c): the batch step's start writes the record
 * (job, per-node facts, data digests) to the store; every step's end leaves what its node learnt (command,
 * exit, resource use, the backend's variables); the batch step's end completes, seals and stores the record
 * and sets the TBM1 summary in AdminComment while the job still runs. What goes into the record is decided
 * in acct/record_build.c; here it is gathered (from slurmstepd, slurmctld, the agents, the job's user) and
 * stored. */
#include "config.h"
#include "spank_repro.h"
#include "spank_step.h"
#include "spank_submit.h"
#include "spank_bridge.h"

#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tbm_slurm.h"

#include "../acct/record_build.h"
#include "../acct/repro_node.h"
#include "../acct/store.h"
#include "run.h"
#include "json_read.h"
#include "tbmesh.h"

#define SUBMIT_ENV_REMOTE "SLURM_SPANK_" TBM_RB_SUBMIT_ENV
#define PROBE_MS 10000
#define DIGEST_SECONDS 3600
#define TAIL_LINES 20
#define USAGE_WAIT_MS 5000   /* how long a step's end waits for the agent to reap tasks still running */
#define GIT_MS 5000          /* each git command of the submit half */

/* ---- plug-in arguments ---- */

static char record_dir[TBM_RECORD_PATH_MAX];   /* record_dir=: the store, over tbmesh.conf's RecordDir */

/* The plug-in's other arguments (conf=, macnode=, munge_socket=) are read once, in spank_step.c. */
static void args(int ac, char **av)
{
    int i;

    for (i = 0; i < ac; i++)
        if (!strncmp(av[i], "record_dir=", 11))
            snprintf(record_dir, sizeof(record_dir), "%s", av[i] + 11);
}

/* ---- the options (submit side) ---- */

static char *given[TBM_RB_N];   /* the values, checked */

static int check_value(int o, const char *v, char *why, size_t len)
{
    char cwd[PATH_MAX], *kept;

    if (!getcwd(cwd, sizeof(cwd)))
        snprintf(cwd, sizeof(cwd), "/");
    if (tbm_rb_option_check(o, v, cwd, &kept, why, len) < 0)
        return -1;
    free(given[o]);
    given[o] = kept;
    return 0;
}

static int option_cb(int val, const char *optarg, int remote)
{
    char why[400];

    if (remote)
        return 0;   /* checked at submit; the nodes read the submit half from the job's environment */
    if (val < 0 || val >= TBM_RB_N || check_value(val, optarg ? optarg : "", why, sizeof(why)) < 0) {
        slurm_error("tbmesh: --%s=%s is refused: %s", val >= 0 && val < TBM_RB_N ? tbm_rb_option_names[val] : "?",
                    optarg ? optarg : "", why);
        return -1;
    }
    return 0;
}

static struct spank_option options[] = {
    { "repro-model", "ID[@REVISION]", "reproducibility record: the model this job uses (e.g. a Hugging Face id "
      "and its commit)", 1, TBM_RB_MODEL, option_cb },
    { "repro-data", "PATH[,PATH...]", "reproducibility record: the data the job reads (files are recorded by "
      "SHA-256 and size, folders by a manifest digest)", 1, TBM_RB_DATA, option_cb },
    { "repro-seed", "N", "reproducibility record: the job's random seed", 1, TBM_RB_SEED, option_cb },
    { "repro-output", "PATH[,PATH...]", "reproducibility record: the job's outputs, digested when it ends", 1,
      TBM_RB_OUTPUT, option_cb },
    { "repro-note", "TEXT", "reproducibility record: a note (acceptance criteria, purpose)", 1, TBM_RB_NOTE,
      option_cb },
    { "repro", "on|off", "reproducibility record of this Mac job (default on)", 1, TBM_RB_SWITCH, option_cb },
    SPANK_OPTIONS_TABLE_END
};

/* ---- the submit half ---- */

/* Run a command (no shell, the submitting user's PATH) within GIT_MS; its first line of output in out. 0 when
 * it exited 0. */
static int run_line(const char *const argv[], char *out, size_t len)
{
    extern char **environ;
    run_opts_t o = { .env = environ, .timeout_ms = GIT_MS, .max = 4096, .truncate = 1 };
    tbm_err_t err = { { 0 } };
    run_out_t r;
    int rc = run_command(argv, &o, &r, &err);

    snprintf(out, len, "%.*s", (int)strcspn(r.out ? r.out : "", "\r\n"), r.out ? r.out : "");
    run_out_free(&r);
    return rc == 0 ? 0 : -1;
}

/* The submit folder's git facts into g (its strings in the four buffers). */
static void git_facts(const char *dir, tbm_rb_git_t *g, char bufs[4][1024])
{
    const char *head[] = { "git", "-C", dir, "rev-parse", "HEAD", NULL };
    const char *branch[] = { "git", "-C", dir, "rev-parse", "--abbrev-ref", "HEAD", NULL };
    const char *status[] = { "git", "-C", dir, "status", "--porcelain", "--untracked-files=no", NULL };
    const char *remote[] = { "git", "-C", dir, "remote", "get-url", "origin", NULL };

    memset(g, 0, sizeof(*g));
    if (run_line(head, bufs[0], sizeof(bufs[0])) < 0 || strlen(bufs[0]) < 40) {
        g->absent = access("/usr/bin/git", X_OK) && !getenv("PATH")
                        ? "git is not installed on the submit host"
                        : "the submit folder is not in a git work tree with a commit (or git is missing)";
        return;
    }
    g->commit = bufs[0];
    if (run_line(branch, bufs[1], sizeof(bufs[1])) == 0 && bufs[1][0])
        g->branch = bufs[1];
    run_line(status, bufs[2], sizeof(bufs[2]));
    g->dirty = bufs[2][0] != '\0';
    if (run_line(remote, bufs[3], sizeof(bufs[3])) == 0 && bufs[3][0])
        g->remote = bufs[3];
}

static json_object *submit_half(void)
{
    char cwd[PATH_MAX], backend[32], cmdline[65536], git[4][1024];
    tbm_rb_submit_t s = { cwd, cmdline, 0, { 0 }, given, NULL };
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, cmdline, sizeof(cmdline)) : -1;

    if (fd >= 0)
        close(fd);
    s.cmdline_len = n > 0 ? (size_t)n : 0;
    if (!getcwd(cwd, sizeof(cwd)))
        snprintf(cwd, sizeof(cwd), "/");
    git_facts(cwd, &s.git, git);
    if (tbm_spank_backend(backend, sizeof(backend)))
        s.backend = backend;
    return tbm_rb_submit_half(&s);
}

int tbm_spank_repro_init(spank_t sp, int ac, char **av)
{
    int i;

    args(ac, av);
    for (i = 0; options[i].name; i++)
        if (spank_option_register(sp, &options[i]) != ESPANK_SUCCESS) {
            slurm_error("tbmesh: cannot register --%s", options[i].name);
            return -1;
        }
    return 0;
}

int tbm_spank_repro_post_opt(spank_t sp)
{
    const char *v;
    char why[400];
    json_object *doc;
    int o;

    if (spank_context() == S_CTX_LOCAL && getenv("SLURM_JOB_ID"))
        return 0;   /* a step inside a job: the job's record holds it */
    for (o = 0; o < TBM_RB_N; o++) {
        if (given[o] || !(v = getenv(tbm_rb_option_envs[o])) || !*v)
            continue;
        if (check_value(o, v, why, sizeof(why)) < 0) {
            slurm_error("tbmesh: %s=%s is refused: %s", tbm_rb_option_envs[o], v, why);
            return -1;
        }
    }
    doc = submit_half();
    if (spank_job_control_setenv(sp, TBM_RB_SUBMIT_ENV, json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN |
                                                                                            JSON_C_TO_STRING_NOSLASHESCAPE),
                                 1) != ESPANK_SUCCESS) {
        json_object_put(doc);
        slurm_error("tbmesh: cannot pass the reproducibility details to the controller");
        return -1;
    }
    json_object_put(doc);
    return 0;
}

/* ---- on the nodes ---- */

/* A step of a job with a record, on a Mac: the step's description (spank_step.c) and what this file adds. */
typedef struct job_ctx {
    const tbm_spank_step_t *s;
    char **env;
    tbm_store_t store;
    job_info_msg_t *info;     /* slurmctld's record of the job, whence its identity */
    char user[256];           /* the job user's name, "" when unknown */
    tbm_rb_job_t j;           /* its fields, copied out of info */
} job_ctx_t;

static int task_status = -1;   /* this node's worst task exit status (wait status) */
static int tasks_seen;

/* slurmctld's record of the job (the batch step's identity: user, account, partition, folder, output
 * paths, array, restarts, times), into c->j. Logged when slurmctld cannot say: the record then holds what the
 * node knows itself. */
static void job_info(job_ctx_t *c)
{
    const slurm_job_info_t *ji;

    if (c->info)
        slurm_free_job_info_msg(c->info);
    c->info = NULL;
    memset(&c->j, 0, sizeof(c->j));
    c->j.job = c->s->job;
    c->j.uid = c->s->uid;
    c->j.user = c->user[0] ? c->user : NULL;
    if (slurm_load_job(&c->info, c->s->job, SHOW_DETAIL) != SLURM_SUCCESS || !c->info || c->info->record_count < 1) {
        slurm_error("tbmesh: job %u: slurmctld cannot say who runs it (%s): its record holds what the node knows "
                    "itself", c->s->job, tbm_slurm_errstr());
        if (c->info)
            slurm_free_job_info_msg(c->info);
        c->info = NULL;
        return;
    }
    ji = &c->info->job_array[0];
    c->j.known = 1;
    c->j.name = ji->name;
    c->j.account = ji->account;
    c->j.partition = ji->partition;
    c->j.work_dir = ji->work_dir;
    c->j.std_out = ji->std_out;
    c->j.std_err = ji->std_err;
    c->j.batch_host = ji->batch_host;
    c->j.restarts = ji->restart_cnt;
    c->j.array = ji->array_job_id && ji->array_task_id != NO_VAL;
    c->j.array_job_id = ji->array_job_id;
    c->j.array_task_id = ji->array_task_id;
    c->j.submit_time = (int64_t)ji->submit_time;
    c->j.start_time = (int64_t)ji->start_time;
}

/* This step's job, node and store when the job runs on Macs of tbmesh.conf with records on; else 0. */
static int job_context(spank_t sp, job_ctx_t *c)
{
    const tbm_spank_step_t *s = tbm_spank_step();
    tbm_err_t err = { { 0 } };
    char conf_path[4096];

    memset(c, 0, sizeof(*c));
    c->s = s;
    if (!s->mac_node || spank_get_item(sp, S_JOB_ENV, &c->env) != ESPANK_SUCCESS)
        return 0;   /* not a Mac, or the step could not be described (said there) */
    if (tbm_rb_records_off(repro_env(c->env, SUBMIT_ENV_REMOTE)))
        return 0;
    tbm_spank_conf_path(conf_path, sizeof(conf_path));
    if (tbm_store_open(&c->store, conf_path, getenv("SLURM_CONF") ? getenv("SLURM_CONF") : "/etc/slurm/slurm.conf",
                       record_dir, &err) < 0) {
        slurm_error("tbmesh: job %u: no reproducibility record: %s", s->job, err.msg);
        return 0;
    }
    if (tbm_spank_args()->munge_socket[0])
        tbm_spank_say(c->store.munge_socket, sizeof(c->store.munge_socket), "%s", tbm_spank_args()->munge_socket);
    if (!c->store.set.records)
        return 0;
    {
        struct passwd *pw = getpwuid(s->uid);
        tbm_spank_say(c->user, sizeof(c->user), "%s", pw ? pw->pw_name : "");
    }
    if (s->step == SLURM_BATCH_SCRIPT)   /* read here: the start's work runs in a child that asks Slurm nothing */
        job_info(c);
    return 1;
}

static void ctx_free(job_ctx_t *c)
{
    if (c->info)
        slurm_free_job_info_msg(c->info);
    c->info = NULL;
}

static void set_admin_comment(uint32_t job, json_object *rec, const char *sha)
{
    tbm_err_t err = { { 0 } };
    json_object *s = tbm_summary_of_record(rec, sha);
    char *tbm1 = tbm_summary_encode(s, &err);
    job_desc_msg_t d;

    json_object_put(s);
    if (!tbm1) {
        slurm_error("tbmesh: job %u: %s", job, err.msg);
        return;
    }
    slurm_init_job_desc_msg(&d);
    d.job_id = job;
    d.admin_comment = tbm1;
    if (slurm_update_job(&d) != SLURM_SUCCESS)
        slurm_info("tbmesh: job %u: AdminComment not updated (%s); the record store has the record", job,
                   tbm_slurm_errstr());
    free(tbm1);
}

/* What the job's user may read (Python, Open MPI, digests, the end of stderr), read as the user; the user's
 * digest cache kept in the store. */
static json_object *run_as_user(job_ctx_t *c, repro_user_work_t *w)
{
    char name[32];
    size_t len;
    char *cache = NULL;
    tbm_err_t err = { { 0 } };
    json_object *out, *ct;
    int digests = w->paths && json_object_array_length(w->paths);

    snprintf(name, sizeof(name), "%u.json", (unsigned)c->s->uid);
    if (digests)
        cache = tbm_store_cache_get(&c->store, name, &len);
    w->cache_text = cache;
    w->env = c->env;
    w->tail_lines = TAIL_LINES;
    out = repro_as_user(c->s->uid, c->s->gid, repro_user_facts, w, DIGEST_SECONDS, &err);
    free(cache);
    if (!out)
        slurm_error("tbmesh: job %u: reading as the user: %s", c->s->job, err.msg);
    else if (digests && (ct = tbm_json_typed(out, "cache", json_type_string)) &&
             tbm_store_cache_put(&c->store, name, json_object_get_string(ct), &err) < 0)
        slurm_error("tbmesh: job %u: digest cache: %s", c->s->job, err.msg);
    return out;
}

/* Every node's facts: through each Mac's agent, in parallel (acct/repro_node.c). */
static json_object *node_facts(job_ctx_t *c, json_object *user)
{
    repro_nodes_t in = { &c->s->conf, c->s->nodes, c->s->n_nodes, c->s->node_id, c->s->bridge, user,
                         tbm_spank_args()->macnode, tbm_spank_args()->munge_socket, PROBE_MS };

    return repro_node_facts(&in);
}

/* The job's identity, from slurmstepd (job id, uid) and slurmctld (the rest); the job's environment, which
 * its user writes, is never asked. */
static void job_facts(job_ctx_t *c, json_object *rec)
{
    const tbm_spank_step_t *s = c->s;
    int idx = s->n_nodes ? tbm_conf_node(&s->conf, s->nodes[0]) : -1;
    const char *backend = s->tag.backend != TBM_BACKEND_AUTO ? tbm_backend_name(s->tag.backend) : NULL;

    tbm_rb_job_facts(tbm_record_obj(rec, "job"), &c->j, s->nodes, s->n_nodes,
                     idx >= 0 ? s->conf.groups[s->conf.nodes[idx].group].caps.name : NULL, backend,
                     (int64_t)time(NULL));
}

static int store_it(job_ctx_t *c, json_object *rec, const char *what, int admin_comment)
{
    const char *secrets[256];
    size_t ns = tbm_rb_secrets(c->env, secrets, 256);
    char sha[TBM_SHA256_HEX];
    tbm_err_t err = { { 0 } };

    tbm_redact_tree(rec, secrets, ns);
    tbm_utf8_clean_tree(rec);
    switch (tbm_store_record(&c->store, rec, c->s->uid, sha, &err)) {
    case -1:
        slurm_error("tbmesh: job %u: the %s record was not stored: %s", c->s->job, what, err.msg);
        return -1;
    case 1:
        slurm_error("tbmesh: job %u: %s", c->s->job, err.msg);
        break;
    }
    if (admin_comment)
        set_admin_comment(c->s->job, rec, sha);
    return 0;
}

/* The batch script as slurmd received it (the batch step's argv[0]): its SHA-256 is a fact of the node. */
static void script_digest(spank_t sp, json_object *rec)
{
    json_object *submit = tbm_json_typed(rec, "submit", json_type_object);
    char **argv = NULL, hex[TBM_SHA256_HEX];
    tbm_err_t err = { { 0 } };
    size_t len;
    char *text;
    int argc = 0;

    if (!submit || spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 1)
        return;
    if (!(text = tbm_read_file(argv[0], 64u << 20, &len, &err))) {
        json_object_object_add(submit, "script_sha256", tbm_record_absent(err.msg));
        return;
    }
    tbm_sha256_hex(text, len, hex);
    json_object_object_add(submit, "script_sha256", json_object_new_string(hex));
    free(text);
}

/* The batch step starts (root): the record as far as it is known. */
static void batch_start(spank_t sp, job_ctx_t *c)
{
    json_object *rec = tbm_record_new(c->s->job, c->store.cluster, "start", "RUNNING"), *user, *v;
    tbm_err_t err = { { 0 } };
    repro_user_work_t w = { NULL, NULL, NULL, NULL, 0, 0, NULL };

    job_facts(c, rec);
    w.paths = tbm_rb_start_submit(rec, repro_env(c->env, SUBMIT_ENV_REMOTE));
    script_digest(sp, rec);
    w.python = !c->s->bridge;
    user = run_as_user(c, &w);
    if (user && w.paths && (v = tbm_json_typed(user, "digests", json_type_array)))
        json_object_object_add(json_object_object_get(rec, "declared"), "data", json_object_get(v));
    json_object_object_add(rec, "nodes", node_facts(c, user));
    json_object_object_add(rec, "usage", tbm_record_absent("the job is running"));
    if (tbm_record_validate(rec, &err) < 0)
        slurm_error("tbmesh: job %u: the start record does not hold together: %s", c->s->job, err.msg);
    else
        store_it(c, rec, "start", 0);   /* AdminComment keeps the submit half until the end */
    json_object_put(w.paths);
    json_object_put(user);
    json_object_put(rec);
}

/* Bridge mode: what the step's tasks used on the Mac, as its agent measured them (asked as root, in this
 * process: a usage request on a connection of its own; the forwarder, the user's process, carries it too but
 * could be made to say anything). Tasks the agent still runs (a forwarder killed before its task ended) are
 * waited for a little, then counted as not reported. 1 with *used, or 0 with why. */
static int agent_usage(const tbm_spank_step_t *s, tbm_msg_t *used, char *why, size_t len)
{
    char said[512] = "";
    long long end = tbm_now_ms() + USAGE_WAIT_MS;
    tbm_msg_t req = { .type = TBM_MSG_USAGE, .job = s->job, .step = s->step };
    int rc;

    for (;;) {
        tbm_msg_free(used);
        rc = tbm_spank_agent_ask(s->agent, &req, TBM_MSG_USED, used, PROBE_MS, said, sizeof(said));
        if (rc == 1 && (used->job != s->job || used->step != s->step)) {
            snprintf(said, sizeof(said), "it answered for job %u step %u", used->job, used->step);
            tbm_msg_free(used);
            rc = 0;
        }
        if (rc != 1 || used->running == 0 || tbm_now_ms() >= end)
            break;
        usleep(200 * 1000);
    }
    if (rc == 1)
        return 1;
    snprintf(why, len, "the agent at %s gave no usage: %s", s->agent, said);
    return 0;
}

/* A step ends on a node (root): what it learnt, as a part of the job's record. */
static void step_end(spank_t sp, job_ctx_t *c)
{
    const tbm_spank_step_t *s = c->s;
    tbm_rb_step_t in = { s->node, s->node_id, s->step, s->bridge, NULL, 0, tasks_seen, task_status, NULL, 0, 0, 0,
                         0, NULL, NULL };
    tbm_msg_t used = { 0 };
    const char *secrets[256];
    size_t ns = tbm_rb_secrets(c->env, secrets, 256);
    tbm_err_t err = { { 0 } };
    char name[64], why[700] = "";
    struct rusage ru;
    json_object *part;

    if (spank_get_item(sp, S_JOB_ARGV, &in.argc, &in.argv) != ESPANK_SUCCESS)
        in.argc = 0, in.argv = NULL;
    if (s->planned)
        in.plan = &s->plan;
    /* direct mode: the tasks were this slurmstepd's children, and Slurm's own step accounting is their wait4
     * rusage; bridge mode: the children were forwarders, so nothing true can be said here */
    if (!s->bridge && getrusage(RUSAGE_CHILDREN, &ru) == 0) {
        in.have_rusage = 1;
        in.cpu_user_us = (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec;
        in.cpu_system_us = (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
        in.max_rss_kb = (int64_t)ru.ru_maxrss;
    }
    if (s->bridge && agent_usage(s, &used, why, sizeof(why)))
        in.used = &used;
    else
        in.used_why = why;
    part = tbm_rb_step_part(&in, secrets, ns);
    snprintf(name, sizeof(name), "step-%u-%u", s->step, s->node_id);
    if (tbm_store_part_put(&c->store, s->job, name, json_object_to_json_string_ext(part, JSON_C_TO_STRING_PLAIN), &err) < 0)
        slurm_error("tbmesh: job %u step %u: %s", s->job, s->step, err.msg);
    json_object_put(part);
    tbm_msg_free(&used);
}

static const char *state_name(uint32_t s)
{
    if ((s & (JOB_REQUEUE | JOB_REQUEUE_HOLD | JOB_REQUEUE_FED)) || (s & JOB_STATE_BASE) == JOB_PENDING)
        return "REQUEUED";   /* this run ends and the job waits to run again under the same id */
    switch (s & JOB_STATE_BASE) {
    case JOB_CANCELLED: return "CANCELLED";
    case JOB_TIMEOUT: return "TIMEOUT";
    case JOB_NODE_FAIL: return "NODE_FAIL";
    case JOB_FAILED: return "FAILED";
    case JOB_OOM: return "OUT_OF_MEMORY";
    case JOB_PREEMPTED: return "PREEMPTED";
    case JOB_DEADLINE: return "DEADLINE";
    case JOB_BOOT_FAIL: return "BOOT_FAIL";
    default: return NULL;
    }
}

/* The end's outputs and stderr, read as the user, into results. */
static void end_as_user(job_ctx_t *c, json_object *rec, const char *state)
{
    json_object *results = tbm_record_obj(rec, "results"), *user = NULL, *v;
    repro_user_work_t w = { NULL, NULL, c->j.work_dir, NULL, 0, 0, NULL };
    char errpath[PATH_MAX + 64] = "";

    if (c->j.known)
        tbm_rb_stderr_path(&c->j, errpath, sizeof(errpath));
    if ((v = tbm_json_typed(tbm_json_typed(rec, "declared", json_type_object), "outputs", json_type_array)))
        w.paths = v;
    if (strcmp(state, "COMPLETED") != 0 && errpath[0])
        w.stderr_path = errpath;
    if (w.paths || w.stderr_path)
        user = run_as_user(c, &w);
    if (user && (v = tbm_json_typed(user, "digests", json_type_array)) && json_object_array_length(v))
        json_object_object_add(results, "outputs", json_object_get(v));
    if (w.stderr_path)
        json_object_object_add(results, "stderr_tail", user && json_object_object_get_ex(user, "stderr_tail", &v)
                                                           ? json_object_get(v)
                                                           : tbm_record_absent("the job's stderr could not be read"));
    json_object_put(user);
}

/* The batch step ends (root): the record completed, sealed and stored; the summary into AdminComment. */
static void batch_end(job_ctx_t *c)
{
    tbm_err_t err = { { 0 } };
    json_object *rec = tbm_store_load(&c->store, c->s->job, NULL, &err), *parts;
    json_object *merged = NULL;   /* the parts' file names */
    const char *state;

    slurm_info("tbmesh: job %u: completing its reproducibility record", c->s->job);
    job_info(c);   /* the start's answer is old: the job's state now */
    if (!rec) {    /* the start did not store one: begin again from what is known now */
        rec = tbm_record_new(c->s->job, c->store.cluster, "end", "RUNNING");
        job_facts(c, rec);
        json_object_object_add(rec, "nodes", node_facts(c, NULL));
    }
    state = tbm_rb_end_job(rec, &c->j, task_status < 0 ? 0 : task_status,
                           c->info ? state_name(c->info->job_array[0].job_state) : NULL, (int64_t)time(NULL));
    parts = tbm_store_parts(&c->store, c->s->job, &merged);
    tbm_rb_merge_parts(rec, parts, c->s->bridge);
    end_as_user(c, rec, state);
    if (tbm_record_validate(rec, &err) < 0)
        slurm_error("tbmesh: job %u: the end record does not hold together: %s", c->s->job, err.msg);
    else if (store_it(c, rec, "end", 1) == 0) {
        tbm_store_parts_remove(&c->store, c->s->job, merged);   /* one that came since stays */
        slurm_info("tbmesh: job %u: reproducibility record stored (%s)", c->s->job, state);
    }
    json_object_put(parts);
    json_object_put(merged);
    json_object_put(rec);
}

/* The start work (agents' probes, digests, the first write) runs in a child of slurmstepd while the batch
 * script runs, so that it does not delay the job; the batch step's end waits for it. The child makes no call
 * into Slurm (slurmstepd has threads; only what fork leaves safe is used: our code, exec, munge). */
static pid_t start_worker = -1;

#define START_WAIT_MS 120000

int tbm_spank_repro_start(spank_t sp)
{
    job_ctx_t c;
    pid_t pid;

    if (spank_context() != S_CTX_REMOTE || geteuid() != 0 || tbm_spank_step()->step != SLURM_BATCH_SCRIPT)
        return 0;   /* other steps start with nothing to record */
    if (job_context(sp, &c)) {
        pid = fork();
        if (pid == 0) {
            batch_start(sp, &c);
            _exit(0);
        }
        if (pid < 0)
            batch_start(sp, &c);   /* no child: do it now */
        start_worker = pid;
    }
    ctx_free(&c);
    return 0;
}

/* Wait for the start worker (killed after START_WAIT_MS); how long the end waited, in microseconds. */
static long long wait_start_worker(void)
{
    long long t0 = tbm_now_us();
    int status;

    if (start_worker <= 0)
        return 0;
    while (waitpid(start_worker, &status, WNOHANG) == 0) {
        if (tbm_now_us() - t0 > START_WAIT_MS * 1000LL) {
            kill(start_worker, SIGKILL);
            waitpid(start_worker, &status, 0);
            slurm_error("tbmesh: the record's start work took more than %d s and was stopped", START_WAIT_MS / 1000);
            break;
        }
        usleep(2000);
    }
    start_worker = -1;
    return tbm_now_us() - t0;
}

int tbm_spank_repro_task_exit(spank_t sp)
{
    int status = 0;

    if (spank_context() != S_CTX_REMOTE || spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS)
        return 0;
    /* the worst task: a non-zero exit or a signal beats a clean exit */
    if (!tasks_seen++ || (status && !task_status) || WIFSIGNALED(status))
        task_status = status;
    return 0;
}

int tbm_spank_repro_exit(spank_t sp)
{
    long long t0 = tbm_now_us();
    job_ctx_t c;

    if (spank_context() != S_CTX_REMOTE || geteuid() != 0)
        return 0;
    if (job_context(sp, &c)) {
        long long waited = c.s->step == SLURM_BATCH_SCRIPT ? wait_start_worker() : 0;
        if (c.s->step == SLURM_BATCH_SCRIPT)
            batch_end(&c);
        else if (c.s->step != SLURM_INTERACTIVE_STEP)
            step_end(sp, &c);
        slurm_info("tbmesh: job %u: record %s work took %lld us (%lld us of it waiting for the start work)", c.s->job,
                   c.s->step == SLURM_BATCH_SCRIPT ? "end" : "step", tbm_now_us() - t0, waited);
    }
    ctx_free(&c);
    return 0;
}
