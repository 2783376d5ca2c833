/* spank_repro.c: spank_tbmesh's reproducibility records. On the submit side it registers the --repro-*
 * options (also read from TBMESH_REPRO_* variables), refuses bad values at once, and passes the submit half
 * (code revision of the submit folder, sbatch line, declared model, data, seed, outputs, note) to
 * job_submit/tbmesh and the nodes in the job control environment. On the nodes, as root: the batch step's
 * start writes the record (job, per-node facts, data digests) to the store and AdminComment; every step's end
 * leaves what its node learnt (command, exit, resource use, the backend's variables); the batch step's end
 * completes, seals and stores the record and sets the TBM1 summary while the job still runs. */
#include "config.h"
#include "spank_tbmesh.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tbm_slurm.h"

#include "../acct/repro_node.h"
#include "../acct/store.h"
#include "json_read.h"
#include "strbuf.h"
#include "tbmesh.h"

#define SUBMIT_ENV "TBMESH_REPRO_SUBMIT"   /* job control env: the submit half, JSON */
#define SUBMIT_ENV_REMOTE "SLURM_SPANK_" SUBMIT_ENV
#define MAX_PATHS 64
#define NOTE_MAX 1000
#define LINE_MAX_LEN 2000
#define PROBE_MS 10000
#define DIGEST_SECONDS 3600
#define TAIL_LINES 20
#define USAGE_WAIT_MS 5000   /* how long a step's end waits for the agent to reap tasks still running */

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

enum { O_MODEL, O_DATA, O_SEED, O_OUTPUT, O_NOTE, O_SWITCH, O_N };
static const char *const opt_names[O_N] = { "repro-model", "repro-data", "repro-seed", "repro-output",
                                            "repro-note", "repro" };
static const char *const env_names[O_N] = { "TBMESH_REPRO_MODEL", "TBMESH_REPRO_DATA", "TBMESH_REPRO_SEED",
                                            "TBMESH_REPRO_OUTPUT", "TBMESH_REPRO_NOTE", "TBMESH_REPRO" };
static char *given[O_N];   /* the values, checked */

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

    if (id == 0 || id > 256 || strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-/:+") < id)
        return snprintf(why, len, "give the model as ID[@REVISION], e.g. mlx-community/Llama-3.2-1B@7c6e1a2"), -1;
    if (at && (!at[1] || strlen(at + 1) > 128 ||
               strspn(at + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != strlen(at + 1)))
        return snprintf(why, len, "the revision after @ is letters, digits, '.', '_' or '-' (a commit or tag)"), -1;
    return 0;
}

/* PATH[,PATH...]: each made absolute against the submit folder; inputs must exist now. */
static int check_paths(const char *v, int must_exist, char **out, char *why, size_t len)
{
    char buf[8192], cwd[PATH_MAX], *p, *save = NULL;
    tbm_strbuf_t sb;
    struct stat st;
    int n = 0;

    if (!*v || strlen(v) >= sizeof(buf) || !printable(v))
        return snprintf(why, len, "give one or more paths separated by commas"), -1;
    if (!getcwd(cwd, sizeof(cwd)))
        snprintf(cwd, sizeof(cwd), "/");
    snprintf(buf, sizeof(buf), "%s", v);
    tbm_sb_init(&sb);
    for (p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        char abs[PATH_MAX + 8];
        if (!*p || ++n > MAX_PATHS) {
            tbm_sb_free(&sb);
            return snprintf(why, len, "give 1 to %d paths separated by single commas", MAX_PATHS), -1;
        }
        if (p[0] == '/')
            snprintf(abs, sizeof(abs), "%s", p);
        else
            tbm_record_fmt(abs, sizeof(abs), "%s/%s", cwd, p);
        if (must_exist && stat(abs, &st) < 0) {
            tbm_sb_free(&sb);
            return snprintf(why, len, "%.200s: %s; give files or folders the job reads (they are digested when "
                            "it starts)", abs, strerror(errno)), -1;
        }
        tbm_sb_printf(&sb, "%s%s", sb.len ? "," : "", abs);
    }
    *out = tbm_sb_take(&sb);
    return *out ? 0 : -1;
}

static int check_value(int o, const char *v, char *why, size_t len)
{
    uint64_t seed;
    char *paths = NULL;

    switch (o) {
    case O_MODEL:
        if (check_model(v, why, len) < 0)
            return -1;
        break;
    case O_DATA:
    case O_OUTPUT:
        if (check_paths(v, o == O_DATA, &paths, why, len) < 0)
            return -1;
        free(given[o]);
        given[o] = paths;
        return 0;
    case O_SEED:
        if (tbm_parse_u64(v, UINT64_MAX, &seed) < 0)
            return snprintf(why, len, "give the seed as a whole number from 0 to 18446744073709551615"), -1;
        break;
    case O_NOTE:
        if (strlen(v) > NOTE_MAX || !printable(v))
            return snprintf(why, len, "give at most %d printable characters on one line", NOTE_MAX), -1;
        break;
    case O_SWITCH:
        if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
            return snprintf(why, len, "use --repro=on or --repro=off"), -1;
        break;
    }
    free(given[o]);
    given[o] = strdup(v);
    return 0;
}

static int option_cb(int val, const char *optarg, int remote)
{
    char why[400];

    if (remote)
        return 0;   /* checked at submit; the nodes read the submit half from the job's environment */
    if (val < 0 || val >= O_N || check_value(val, optarg ? optarg : "", why, sizeof(why)) < 0) {
        slurm_error("tbmesh: --%s=%s is refused: %s", opt_names[val], optarg ? optarg : "", why);
        return -1;
    }
    return 0;
}

static struct spank_option options[] = {
    { "repro-model", "ID[@REVISION]", "reproducibility record: the model this job uses (e.g. a Hugging Face id "
      "and its commit)", 1, O_MODEL, option_cb },
    { "repro-data", "PATH[,PATH...]", "reproducibility record: the data the job reads (files are recorded by "
      "SHA-256 and size, folders by a manifest digest)", 1, O_DATA, option_cb },
    { "repro-seed", "N", "reproducibility record: the job's random seed", 1, O_SEED, option_cb },
    { "repro-output", "PATH[,PATH...]", "reproducibility record: the job's outputs, digested when it ends", 1,
      O_OUTPUT, option_cb },
    { "repro-note", "TEXT", "reproducibility record: a note (acceptance criteria, purpose)", 1, O_NOTE, option_cb },
    { "repro", "on|off", "reproducibility record of this Mac job (default on)", 1, O_SWITCH, option_cb },
    SPANK_OPTIONS_TABLE_END
};

/* ---- the submit half ---- */

/* Run a command (no shell) with a time limit; its first line of output (trimmed) in out. 0 when it exited 0. */
static int run_line(char *const argv[], char *out, size_t len)
{
    int fd[2], status = -1, devnull;
    struct pollfd p;
    ssize_t n = 0, got;
    pid_t pid;
    long long end = tbm_now_ms() + 5000;

    out[0] = '\0';
    if (pipe2(fd, O_CLOEXEC) < 0)
        return -1;
    if ((pid = fork()) == 0) {
        dup2(fd[1], STDOUT_FILENO);
        if ((devnull = open("/dev/null", O_RDWR)) >= 0) {
            dup2(devnull, STDERR_FILENO);
            dup2(devnull, STDIN_FILENO);
        }
        close(fd[0]);
        close(fd[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    p.fd = fd[0];
    p.events = POLLIN;
    while (pid > 0 && (size_t)n < len - 1 && tbm_now_ms() < end && poll(&p, 1, (int)(end - tbm_now_ms())) > 0 &&
           (got = read(fd[0], out + n, len - 1 - (size_t)n)) > 0)
        n += got;
    close(fd[0]);
    out[n] = '\0';
    if (pid > 0) {
        if (tbm_now_ms() >= end)
            kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    out[strcspn(out, "\r\n")] = '\0';
    return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static json_object *git_info(const char *dir)
{
    char line[1024];
    json_object *git;
    char *head[] = { "git", "-C", (char *)dir, "rev-parse", "HEAD", NULL };
    char *branch[] = { "git", "-C", (char *)dir, "rev-parse", "--abbrev-ref", "HEAD", NULL };
    char *status[] = { "git", "-C", (char *)dir, "status", "--porcelain", "--untracked-files=no", NULL };
    char *remote[] = { "git", "-C", (char *)dir, "remote", "get-url", "origin", NULL };
    char *r;

    if (run_line(head, line, sizeof(line)) < 0 || strlen(line) < 40)
        return tbm_record_absent(access("/usr/bin/git", X_OK) && !getenv("PATH")
                                     ? "git is not installed on the submit host"
                                     : "the submit folder is not in a git work tree with a commit (or git is "
                                       "missing)");
    git = json_object_new_object();
    json_object_object_add(git, "commit", json_object_new_string(line));
    if (run_line(branch, line, sizeof(line)) == 0 && line[0])
        json_object_object_add(git, "branch", json_object_new_string(line));
    run_line(status, line, sizeof(line));
    json_object_object_add(git, "dirty", json_object_new_boolean(line[0] != '\0'));
    if (run_line(remote, line, sizeof(line)) == 0 && line[0] && (r = tbm_redact_text(line, NULL, 0))) {
        json_object_object_add(git, "remote", json_object_new_string(r));
        free(r);
    } else {
        json_object_object_add(git, "remote", tbm_record_absent("no remote named origin"));
    }
    return git;
}

/* sbatch's short options that take their value as the next word (sbatch(1)). */
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

/* The command line of this sbatch (or salloc, srun): the whole line, and the batch script's path. */
static void command_line(char *line, size_t len, char *script, size_t slen)
{
    char buf[65536], *p, *end;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC), skip = 0, first = 1;
    tbm_strbuf_t sb;
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    char *s;

    line[0] = script[0] = '\0';
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    tbm_sb_init(&sb);
    for (p = buf, end = buf + n; p < end; p += strlen(p) + 1) {
        int plain = *p && strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=.,/:@+%") ==
                              strlen(p);
        tbm_sb_printf(&sb, "%s%s%s%s", sb.len ? " " : "", plain ? "" : "'", p, plain ? "" : "'");
        if (first) {
            first = 0;
            continue;
        }
        if (!script[0] && !skip && p[0] != '-')
            snprintf(script, slen, "%s", p);
        skip = !skip && takes_value(p);
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

static json_object *submit_half(void)
{
    json_object *doc = json_object_new_object(), *submit = json_object_new_object(), *declared, *opts, *m;
    char cwd[PATH_MAX], line[65536], script[PATH_MAX], *r, *at;
    int o;

    if (!getcwd(cwd, sizeof(cwd)))
        snprintf(cwd, sizeof(cwd), "/");
    command_line(line, sizeof(line), script, sizeof(script));
    json_object_object_add(submit, "work_dir", json_object_new_string(cwd));
    if (script[0])
        json_object_object_add(submit, "script", json_object_new_string(script));
    json_object_object_add(submit, "git", git_info(cwd));
    if ((r = tbm_redact_text(line, NULL, 0))) {
        if (strlen(r) > LINE_MAX_LEN)
            strcpy(r + LINE_MAX_LEN - 4, "...");
        json_object_object_add(submit, "sbatch_line", json_object_new_string(r));
        free(r);
    }
    opts = json_object_new_object();
    for (o = 0; o < O_N; o++)
        if (given[o])
            json_object_object_add(opts, opt_names[o], json_object_new_string(given[o]));
    if (tbm_spank_backend(line, sizeof(line)))
        json_object_object_add(opts, "mlx-backend", json_object_new_string(line));
    json_object_object_add(submit, "options", opts);
    json_object_object_add(doc, "submit", submit);
    declared = json_object_new_object();
    if (given[O_MODEL]) {
        m = json_object_new_object();
        at = strrchr(given[O_MODEL], '@');
        json_object_object_add(m, "id", json_object_new_string_len(given[O_MODEL],
                                                                    at ? (int)(at - given[O_MODEL]) : (int)strlen(given[O_MODEL])));
        if (at)
            json_object_object_add(m, "revision", json_object_new_string(at + 1));
        json_object_object_add(declared, "model", m);
    }
    if (given[O_DATA])
        json_object_object_add(declared, "data", paths_array(given[O_DATA], 1));
    if (given[O_SEED])
        json_object_object_add(declared, "seed", json_object_new_string(given[O_SEED]));
    if (given[O_OUTPUT])
        json_object_object_add(declared, "outputs", paths_array(given[O_OUTPUT], 0));
    if (given[O_NOTE])
        json_object_object_add(declared, "note", json_object_new_string(given[O_NOTE]));
    json_object_object_add(doc, "declared", declared);
    if (given[O_SWITCH] && !strcmp(given[O_SWITCH], "off"))
        json_object_object_add(doc, "records", json_object_new_string("off"));
    tbm_redact_tree(doc, NULL, 0);
    return doc;
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
    for (o = 0; o < O_N; o++) {
        if (given[o] || !(v = getenv(env_names[o])) || !*v)
            continue;
        if (check_value(o, v, why, sizeof(why)) < 0) {
            slurm_error("tbmesh: %s=%s is refused: %s", env_names[o], v, why);
            return -1;
        }
    }
    doc = submit_half();
    if (spank_job_control_setenv(sp, SUBMIT_ENV, json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN |
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

typedef struct job_ctx {
    uint32_t job, step, node_id;
    uid_t uid;
    gid_t gid;
    char **env;
    char node[TBM_HOSTNAME_MAX];
    int bridge;             /* this node is a bridge-mode Mac (the step runs on its bridge host) */
    tbm_conf_t conf;
    int have_conf;
    tbm_store_t store;
    job_info_msg_t *info;   /* the batch step: slurmctld's record of the job, whence its identity */
    char backend[32];       /* the batch step: the backend the job asked for, as job_submit decided */
} job_ctx_t;

static int task_status = -1;   /* this node's worst task exit status (wait status) */
static int tasks_seen;

/* slurmctld's record of the job (the batch step's identity: user, account, partition, folder, output
 * paths, array, restarts, times). NULL when slurmctld cannot say, logged. */
static const slurm_job_info_t *job_info(job_ctx_t *c)
{
    if (!c->info && (slurm_load_job(&c->info, c->job, SHOW_DETAIL) != SLURM_SUCCESS || !c->info ||
                     c->info->record_count < 1)) {
        slurm_error("tbmesh: job %u: slurmctld cannot say who runs it (%s): its record holds what the node knows "
                    "itself", c->job, tbm_slurm_errstr());
        if (c->info)
            slurm_free_job_info_msg(c->info);
        c->info = NULL;
    }
    return c->info ? &c->info->job_array[0] : NULL;
}

/* This step's job, node and store when the job runs on Macs of tbmesh.conf with records on; else 0. */
static int job_context(spank_t sp, job_ctx_t *c)
{
    tbm_err_t err = { { 0 } };
    char **nodes, conf_path[4096];
    size_t n;
    int idx;

    memset(c, 0, sizeof(*c));
    if (spank_get_item(sp, S_JOB_ID, &c->job) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &c->step) != ESPANK_SUCCESS || c->step == SLURM_EXTERN_CONT ||
        spank_get_item(sp, S_JOB_UID, &c->uid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_GID, &c->gid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_ENV, &c->env) != ESPANK_SUCCESS)
        return 0;
    if (spank_get_item(sp, S_JOB_NODEID, &c->node_id) != ESPANK_SUCCESS)
        c->node_id = 0;
    if (tbm_spank_load_conf(&c->conf, &err) < 0)
        return 0;
    c->have_conf = 1;
    /* this node, from slurmctld's record of the step (never the job's environment) */
    nodes = tbm_spank_step_nodes(sp, &n, c->node, sizeof(c->node), &err);
    tbm_spank_free_nodes(nodes, n);
    if (!nodes) {
        slurm_error("tbmesh: job %u: no reproducibility record from this step: %s", c->job, err.msg);
        return 0;
    }
    if ((idx = tbm_conf_node(&c->conf, c->node)) < 0)
        return 0;   /* not a Mac */
    c->bridge = c->conf.groups[c->conf.nodes[idx].group].mode == TBM_MODE_BRIDGE;
    if (tbm_spank_args.conf[0])
        tbm_spank_say(conf_path, sizeof(conf_path), "%s", tbm_spank_args.conf);
    else
        tbm_conf_default_path(getenv("SLURM_CONF"), conf_path, sizeof(conf_path));
    if (tbm_store_open(&c->store, conf_path, getenv("SLURM_CONF") ? getenv("SLURM_CONF") : "/etc/slurm/slurm.conf",
                       record_dir, &err) < 0) {
        slurm_error("tbmesh: job %u: no reproducibility record: %s", c->job, err.msg);
        return 0;
    }
    if (tbm_spank_args.munge_socket[0])
        tbm_spank_say(c->store.munge_socket, sizeof(c->store.munge_socket), "%s", tbm_spank_args.munge_socket);
    if (!c->store.set.records)
        return 0;
    if (c->step == SLURM_BATCH_SCRIPT) {   /* read here: the start's work runs in a child that asks Slurm nothing */
        tbm_jobtag_t tag = { 0, TBM_BACKEND_AUTO };
        job_info(c);
        if (tbm_spank_read_tag(c->job, &tag, &err) > 0 && tag.backend != TBM_BACKEND_AUTO)
            tbm_spank_say(c->backend, sizeof(c->backend), "%s", tbm_backend_name(tag.backend));
    }
    {
        const char *sub = repro_env(c->env, SUBMIT_ENV_REMOTE);
        if (sub && strstr(sub, "\"records\":\"off\""))
            return 0;
    }
    return 1;
}

static void ctx_free(job_ctx_t *c)
{
    if (c->have_conf)
        tbm_conf_free(&c->conf);
    c->have_conf = 0;
    if (c->info)
        slurm_free_job_info_msg(c->info);
    c->info = NULL;
}

/* Values of the job's variables whose names look secret: searched for and removed anywhere in the record. */
static size_t secrets_of(char **env, const char **out, size_t max)
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

static void add_str(json_object *o, const char *key, const char *v)
{
    if (v && *v)
        json_object_object_add(o, key, json_object_new_string(v));
}

/* Facts the job's user may read: Python, Open MPI, data digests, outputs, the end of stderr. */
typedef struct user_work {
    char **env;
    json_object *paths;     /* data (start) or outputs (end) to digest, absolute or relative to work_dir */
    const char *work_dir;
    const char *stderr_path;
    int python;
    tbm_store_t *store;
    const char *cache_text;
} user_work_t;

static json_object *as_user(void *arg)
{
    user_work_t *w = arg;
    json_object *out = json_object_new_object(), *digests = json_object_new_array();
    tbm_digest_cache_t *cache = tbm_digest_cache_new();
    tbm_err_t err;
    char path[PATH_MAX + 8];
    char *text;
    size_t i;

    if (w->python) {
        json_object_object_add(out, "python", repro_python_env(w->env));
        json_object_object_add(out, "openmpi", repro_openmpi(w->env));
    }
    if (w->cache_text)
        tbm_digest_cache_load(cache, w->cache_text, strlen(w->cache_text), &err);
    for (i = 0; w->paths && i < json_object_array_length(w->paths); i++) {
        const char *p = json_object_get_string(json_object_array_get_idx(w->paths, i));
        if (p[0] == '/')
            snprintf(path, sizeof(path), "%s", p);
        else
            tbm_record_fmt(path, sizeof(path), "%s/%s", w->work_dir ? w->work_dir : ".", p);
        json_object_array_add(digests, tbm_digest_path(path, cache));
    }
    json_object_object_add(out, "digests", digests);
    if (w->stderr_path)
        json_object_object_add(out, "stderr_tail", repro_tail(w->stderr_path, TAIL_LINES));
    if ((text = tbm_digest_cache_text(cache))) {
        json_object_object_add(out, "cache", json_object_new_string(text));
        free(text);
    }
    json_object_object_add(out, "bytes_read", json_object_new_int64((int64_t)tbm_digest_cache_bytes(cache)));
    tbm_digest_cache_free(cache);
    return out;
}

static json_object *run_as_user(job_ctx_t *c, user_work_t *w)
{
    char name[32];
    size_t len;
    char *cache = NULL;
    tbm_err_t err = { { 0 } };
    json_object *out, *ct;

    snprintf(name, sizeof(name), "%u.json", (unsigned)c->uid);
    if (w->paths && json_object_array_length(w->paths))
        cache = tbm_store_cache_get(&c->store, name, &len);
    w->cache_text = cache;
    w->env = c->env;
    out = repro_as_user(c->uid, c->gid, as_user, w, DIGEST_SECONDS, &err);
    free(cache);
    if (!out)
        slurm_error("tbmesh: job %u: reading as the user: %s", c->job, err.msg);
    else if (w->paths && json_object_array_length(w->paths) && (ct = tbm_json_typed(out, "cache", json_type_string)) &&
             tbm_store_cache_put(&c->store, name, json_object_get_string(ct), &err) < 0)
        slurm_error("tbmesh: job %u: digest cache: %s", c->job, err.msg);
    return out;
}

/* Every node's facts: through each Mac's agent, in parallel; Python and Open MPI where the batch step runs
 * on the Mac itself (direct mode). */
static json_object *node_facts(job_ctx_t *c, char **names, size_t n, json_object *user)
{
    json_object *nodes = json_object_new_array();
    repro_probe_t *probes = calloc(n ? n : 1, sizeof(*probes));
    char agent[TBM_HOSTNAME_MAX + 16];
    size_t i;
    int idx;

    for (i = 0; i < n && probes; i++) {
        idx = tbm_conf_node(&c->conf, names[i]);
        probes[i].pid = -1;
        probes[i].fd = -1;
        if (idx >= 0) {
            tbm_conf_agent_of(&c->conf, idx, agent, sizeof(agent));
            repro_probe_start(&probes[i], tbm_spank_args.macnode, agent, names[i], tbm_spank_args.munge_socket);
        }
    }
    for (i = 0; i < n; i++) {
        json_object *node = json_object_new_object(), *v;
        idx = tbm_conf_node(&c->conf, names[i]);
        json_object_object_add(node, "name", json_object_new_string(names[i]));
        json_object_object_add(node, "rank", json_object_new_int((int)i));
        if (idx >= 0) {
            int bridge = c->conf.groups[c->conf.nodes[idx].group].mode == TBM_MODE_BRIDGE;
            tbm_conf_agent_of(&c->conf, idx, agent, sizeof(agent));
            json_object_object_add(node, "mode", json_object_new_string(bridge ? "bridge" : "direct"));
            if (probes)
                repro_probe_finish(&probes[i], node, agent, PROBE_MS);
        } else {
            tbm_record_node_absent(node, "not a Mac of tbmesh.conf");
        }
        if (i == c->node_id && !c->bridge && user && (v = json_object_object_get(user, "python"))) {
            json_object_object_add(node, "python", json_object_get(v));
            json_object_object_add(node, "openmpi", json_object_get(json_object_object_get(user, "openmpi")));
        } else {
            const char *why = c->bridge ? "bridge mode: the batch step runs on the bridge host and the Mac's agent "
                                          "does not report Python environments"
                                        : "read only on the node that runs the batch script; the Mac's agent does "
                                          "not report Python environments";
            tbm_record_set(node, "python", NULL, why);
            tbm_record_set(node, "openmpi", NULL, c->bridge ? "bridge mode: the agent does not report Open MPI"
                                                             : "read only on the node that runs the batch script");
        }
        json_object_array_add(nodes, node);
    }
    free(probes);
    return nodes;
}

/* The job's identity, from slurmstepd (job id, uid) and slurmctld (the rest); the job's environment, which
 * its user writes, is never asked. */
static void job_facts(job_ctx_t *c, json_object *job, char **names, size_t n)
{
    const slurm_job_info_t *ji = job_info(c);
    json_object *a = json_object_new_array();
    struct passwd *pw = getpwuid(c->uid);
    size_t i;
    int idx;

    add_str(job, "user", pw ? pw->pw_name : NULL);
    json_object_object_add(job, "uid", json_object_new_int64(c->uid));
    if (ji) {
        add_str(job, "name", ji->name);
        add_str(job, "account", ji->account);
        add_str(job, "partition", ji->partition);
        add_str(job, "work_dir", ji->work_dir);
        json_object_object_add(job, "restarts", json_object_new_int64(ji->restart_cnt));
        if (ji->array_job_id && ji->array_task_id != NO_VAL) {
            json_object_object_add(job, "array_job_id", json_object_new_int64(ji->array_job_id));
            json_object_object_add(job, "array_task_id", json_object_new_int64(ji->array_task_id));
        }
    }
    for (i = 0; i < n; i++)
        json_object_array_add(a, json_object_new_string(names[i]));
    json_object_object_add(job, "nodes", a);
    if (n && (idx = tbm_conf_node(&c->conf, names[0])) >= 0)
        add_str(job, "group", c->conf.groups[c->conf.nodes[idx].group].caps.name);
    add_str(job, "backend_requested", c->backend[0] ? c->backend : "auto");
    json_object_object_add(job, "start_time", json_object_new_int64((int64_t)time(NULL)));   /* Slurm's at the end */
}

static int store_it(job_ctx_t *c, json_object *rec, const char *what, int admin_comment)
{
    const char *secrets[256];
    size_t ns = secrets_of(c->env, secrets, 256);
    char sha[TBM_SHA256_HEX];
    tbm_err_t err = { { 0 } };

    tbm_redact_tree(rec, secrets, ns);
    tbm_utf8_clean_tree(rec);
    switch (tbm_store_record(&c->store, rec, c->uid, sha, &err)) {
    case -1:
        slurm_error("tbmesh: job %u: the %s record was not stored: %s", c->job, what, err.msg);
        return -1;
    case 1:
        slurm_error("tbmesh: job %u: %s", c->job, err.msg);
        break;
    }
    if (admin_comment)
        set_admin_comment(c->job, rec, sha);
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
    json_object *rec = tbm_record_new(c->job, c->store.cluster, "start", "RUNNING"), *user = NULL, *sub, *v;
    tbm_err_t err = { { 0 } };
    user_work_t w = { NULL, NULL, NULL, NULL, 0, NULL, NULL };
    const char *text = repro_env(c->env, SUBMIT_ENV_REMOTE);
    char **names;
    size_t n = 0;

    names = tbm_spank_step_nodes(sp, &n, NULL, 0, &err);
    job_facts(c, json_object_object_get(rec, "job"), names, n);
    sub = text ? tbm_json_parse(text, strlen(text), &err) : NULL;
    if (sub && tbm_json_typed(sub, "submit", json_type_object))
        json_object_object_add(rec, "submit", json_object_get(json_object_object_get(sub, "submit")));
    else
        json_object_object_add(rec, "submit", tbm_record_absent("the job was not submitted through sbatch with "
                                                                "spank_tbmesh (no submit half)"));
    if (sub && (v = tbm_json_typed(sub, "declared", json_type_object))) {
        json_object *data = tbm_json_typed(v, "data", json_type_array), *paths = json_object_new_array();
        size_t i;
        json_object_object_add(rec, "declared", json_object_get(v));
        for (i = 0; data && i < json_object_array_length(data); i++)
            json_object_array_add(paths, json_object_new_string(tbm_json_str(json_object_array_get_idx(data, i), "path")));
        w.paths = paths;
    }
    script_digest(sp, rec);
    w.python = !c->bridge;
    w.store = &c->store;
    user = run_as_user(c, &w);
    if (user && w.paths && (v = tbm_json_typed(user, "digests", json_type_array)))
        json_object_object_add(json_object_object_get(rec, "declared"), "data", json_object_get(v));
    json_object_object_add(rec, "nodes", node_facts(c, names, n, user));
    json_object_object_add(rec, "usage", tbm_record_absent("the job is running"));
    if (tbm_record_validate(rec, &err) < 0)
        slurm_error("tbmesh: job %u: the start record does not hold together: %s", c->job, err.msg);
    else
        store_it(c, rec, "start", 0);   /* AdminComment keeps the submit half until the end */
    json_object_put(w.paths);
    json_object_put(user);
    json_object_put(sub);
    json_object_put(rec);
    tbm_spank_free_nodes(names, n);
}

/* The backend's variables and files of this step on this node as the plug-in planned and exported them (as
 * root, in spank_step.c): never read back from the job's environment or from a path it names, which its user
 * writes. */
static void backend_setup(const job_ctx_t *c, json_object *env, json_object *files)
{
    const tbm_spank_step_t *s = &tbm_spank_step;
    size_t i;

    if (!s->planned || s->job != c->job || s->step != c->step)
        return;
    for (i = 0; i < s->plan.n_vars; i++)
        add_str(env, s->plan.vars[i].name, s->plan.vars[i].value);
    for (i = 0; !c->bridge && i < s->plan.n_files; i++) {
        const char *path = s->plan.files[i].path, *slash = strrchr(path, '/');
        json_object *f = json_object_new_object();
        add_str(f, "name", slash ? slash + 1 : path);
        add_str(f, "content", s->plan.files[i].data);
        json_object_array_add(files, f);
    }
}

/* Bridge mode: what the step's tasks used on the Mac, as its agent measured them (asked as root, in this
 * process: a usage request on a connection of its own; the forwarder, the user's process, carries it too but could
 * be made to say anything). Tasks the agent still runs (a forwarder killed before its task ended) are waited for
 * a little, then counted as not reported. */
static void agent_usage(job_ctx_t *c, json_object *part)
{
    char agent[TBM_HOSTNAME_MAX + 16], why[512] = "";
    long long end = tbm_now_ms() + USAGE_WAIT_MS;
    tbm_msg_t req = { .type = TBM_MSG_USAGE, .job = c->job, .step = c->step }, used = { 0 };
    json_object *tasks;
    int idx = tbm_conf_node(&c->conf, c->node), rc;
    size_t i;

    if (idx < 0)
        return;
    tbm_conf_agent_of(&c->conf, idx, agent, sizeof(agent));
    for (;;) {
        tbm_msg_free(&used);
        rc = tbm_spank_agent_ask(agent, &req, TBM_MSG_USED, &used, PROBE_MS, why, sizeof(why));
        if (rc == 1 && (used.job != c->job || used.step != c->step)) {
            snprintf(why, sizeof(why), "it answered for job %u step %u", used.job, used.step);
            tbm_msg_free(&used);
            rc = 0;
        }
        if (rc != 1 || used.running == 0 || tbm_now_ms() >= end)
            break;
        usleep(200 * 1000);
    }
    if (rc != 1) {
        char msg[700];
        snprintf(msg, sizeof(msg), "the agent at %s gave no usage: %s", agent, why);
        json_object_object_add(part, "agent_usage_why", json_object_new_string(msg));
        return;
    }
    tasks = json_object_new_array();
    for (i = 0; i < used.n_tasks; i++)
        json_object_array_add(tasks, tbm_task_usage_json(&used.tasks[i]));
    json_object_object_add(part, "agent_usage", tasks);
    if (used.running)
        json_object_object_add(part, "agent_running", json_object_new_int(used.running));
    tbm_msg_free(&used);
}

/* A step ends on a node (root): what it learnt, as a part of the job's record. */
static void step_end(spank_t sp, job_ctx_t *c)
{
    json_object *part = json_object_new_object(), *env = json_object_new_object(), *files = json_object_new_array();
    char **argv = NULL, name[64], *s;
    int argc = 0, i;
    tbm_strbuf_t sb;
    tbm_err_t err = { { 0 } };
    struct rusage ru;
    const char *secrets[256];
    size_t ns = secrets_of(c->env, secrets, 256);

    json_object_object_add(part, "node", json_object_new_string(c->node));
    json_object_object_add(part, "node_id", json_object_new_int((int)c->node_id));
    json_object_object_add(part, "step", json_object_new_int64(c->step));
    json_object_object_add(part, "bridge", json_object_new_boolean(c->bridge));
    tbm_sb_init(&sb);
    if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) == ESPANK_SUCCESS)
        for (i = 0; i < argc; i++)
            tbm_sb_printf(&sb, "%s%s", i ? " " : "", argv[i]);
    s = tbm_sb_take(&sb);
    add_str(part, "command", s);
    free(s);
    json_object_object_add(part, "tasks", json_object_new_int(tasks_seen));
    if (tasks_seen) {
        json_object_object_add(part, "exit_code", json_object_new_int(WIFEXITED(task_status) ? WEXITSTATUS(task_status) : 0));
        json_object_object_add(part, "signal", json_object_new_int(WIFSIGNALED(task_status) ? WTERMSIG(task_status) : 0));
    }
    backend_setup(c, env, files);
    json_object_object_add(part, "backend_env", env);
    json_object_object_add(part, "backend_files", files);
    /* direct mode: the tasks were this slurmstepd's children, and Slurm's own step accounting is their wait4
     * rusage; bridge mode: the children were forwarders, so nothing true can be said here */
    if (!c->bridge && getrusage(RUSAGE_CHILDREN, &ru) == 0) {
        json_object_object_add(part, "cpu_user_us", json_object_new_int64((int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec));
        json_object_object_add(part, "cpu_system_us", json_object_new_int64((int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec));
        json_object_object_add(part, "max_rss_kb", json_object_new_int64((int64_t)ru.ru_maxrss));
    }
    if (c->bridge)
        agent_usage(c, part);
    tbm_redact_tree(part, secrets, ns);
    tbm_utf8_clean_tree(part);   /* a command line need not be UTF-8; the part must read back whole */
    snprintf(name, sizeof(name), "step-%u-%u", c->step, c->node_id);
    if (tbm_store_part_put(&c->store, c->job, name, json_object_to_json_string_ext(part, JSON_C_TO_STRING_PLAIN), &err) < 0)
        slurm_error("tbmesh: job %u step %u: %s", c->job, c->step, err.msg);
    json_object_put(part);
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

/* The job's stderr file as Slurm names it (%j, %A, %a, %x, %u, %N, %%), relative to its folder; Slurm's
 * default, slurm-%j.out (slurm-%A_%a.out for an array's task), when the job named neither stderr nor stdout. */
static void stderr_path(job_ctx_t *c, const slurm_job_info_t *ji, char *out, size_t len)
{
    const char *pattern = ji->std_err && *ji->std_err ? ji->std_err : ji->std_out && *ji->std_out ? ji->std_out
                          : ji->array_job_id && ji->array_task_id != NO_VAL ? "slurm-%A_%a.out" : "slurm-%j.out";
    struct passwd *pw = getpwuid(c->uid);
    int array = ji->array_job_id && ji->array_task_id != NO_VAL;
    tbm_strbuf_t sb;
    const char *p;
    char *s;

    tbm_sb_init(&sb);
    if (pattern[0] != '/')
        tbm_sb_printf(&sb, "%s/", ji->work_dir ? ji->work_dir : ".");
    for (p = pattern; *p; p++) {
        if (*p != '%' || !p[1]) {
            tbm_sb_append(&sb, p, 1);
            continue;
        }
        switch (*++p) {
        case 'j': tbm_sb_printf(&sb, "%u", c->job); break;
        case 'A': tbm_sb_printf(&sb, "%u", array ? ji->array_job_id : c->job); break;
        case 'a': tbm_sb_printf(&sb, "%u", array ? ji->array_task_id : 4294967294u); break;
        case 'x': tbm_sb_printf(&sb, "%s", ji->name ? ji->name : ""); break;
        case 'u': tbm_sb_printf(&sb, "%s", pw ? pw->pw_name : ""); break;
        case 'N': tbm_sb_printf(&sb, "%s", ji->batch_host ? ji->batch_host : ""); break;
        case '%': tbm_sb_append(&sb, "%", 1); break;
        default: tbm_sb_printf(&sb, "%%%c", *p);
        }
    }
    s = tbm_sb_take(&sb);
    snprintf(out, len, "%s", s ? s : "");
    free(s);
}

static int cmp_part(const void *a, const void *b)
{
    json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;
    long long sx = json_object_get_int64(json_object_object_get(x, "step")), sy = json_object_get_int64(json_object_object_get(y, "step"));
    return sx != sy ? (sx < sy ? -1 : 1)
                    : json_object_get_int(json_object_object_get(x, "node_id")) - json_object_get_int(json_object_object_get(y, "node_id"));
}

/* Merge the steps' parts: steps, per-node backend variables and files, the chosen backend, resource use. */
static void merge_parts(job_ctx_t *c, json_object *rec, json_object *parts)
{
    json_object *job = json_object_object_get(rec, "job"), *steps = json_object_new_array();
    json_object *nodes = tbm_json_typed(rec, "nodes", json_type_array), *results = tbm_record_obj(rec, "results");
    json_object *res_nodes = json_object_new_array(), *last_of = json_object_new_object();
    size_t i, k;
    int failed = 0, unreadable = 0;
    char key[64];

    json_object_array_sort(parts, cmp_part);
    for (i = 0; i < json_object_array_length(parts); i++) {
        json_object *p = json_object_array_get_idx(parts, i), *step = NULL, *v;
        const char *node = tbm_json_str(p, "node");
        if (tbm_json_str(p, "unreadable")) {   /* said, as a step of its own, rather than lost */
            char why[TBM_ERR_MAX + 64];
            unreadable++;
            step = json_object_new_object();
            add_str(step, "id", tbm_json_str(p, "unreadable"));
            tbm_record_fmt(why, sizeof(why), "its part of the record could not be read: %s", tbm_json_str(p, "why"));
            add_str(step, "state", why);
            json_object_array_add(steps, step);
            continue;
        }
        snprintf(key, sizeof(key), "%lld", (long long)json_object_get_int64(json_object_object_get(p, "step")));
        for (k = 0; k < json_object_array_length(steps); k++)
            if (!strcmp(tbm_json_str(json_object_array_get_idx(steps, k), "id"), key))
                step = json_object_array_get_idx(steps, k);
        if (!step) {
            step = json_object_new_object();
            add_str(step, "id", key);
            add_str(step, "command", tbm_json_str(p, "command"));
            json_object_object_add(step, "nodes", json_object_new_array());
            json_object_object_add(step, "exit_code", json_object_new_int(0));
            json_object_array_add(steps, step);
        }
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
    json_object_object_add(rec, "usage", tbm_record_usage_of_parts(parts, c->bridge));
    for (i = 0; nodes && i < json_object_array_length(nodes); i++) {
        json_object *n = json_object_array_get_idx(nodes, i), *p, *r = json_object_new_object(), *v;
        const char *name = tbm_json_str(n, "name");
        add_str(r, "name", name);
        if (name && json_object_object_get_ex(last_of, name, &p)) {
            json_object_object_add(n, "backend_env", json_object_get(json_object_object_get(p, "backend_env")));
            v = json_object_object_get(p, "backend_files");
            json_object_object_add(n, "backend_files", c->bridge ? tbm_record_absent("bridge mode: the files are "
                                   "written on the Mac by its agent; their content follows from backend_env and "
                                   "tbmesh.conf") : json_object_get(v));
            if ((v = tbm_json_typed(tbm_json_typed(p, "backend_env", json_type_object), "TBMESH_BACKEND", json_type_string)))
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
    json_object_put(last_of);
}

/* The batch step ends (root): the record completed, sealed and stored; the summary into AdminComment. */
static void batch_end(spank_t sp, job_ctx_t *c)
{
    tbm_err_t err = { { 0 } };
    json_object *rec = tbm_store_load(&c->store, c->job, NULL, &err), *job, *parts, *results, *user = NULL, *v;
    json_object *merged = NULL;   /* the parts' file names */
    const slurm_job_info_t *ji;
    const char *state = NULL;
    char errpath[PATH_MAX + 64] = "";
    user_work_t w = { NULL, NULL, NULL, NULL, 0, &c->store, NULL };
    int code = WIFEXITED(task_status) ? WEXITSTATUS(task_status) : 0;
    int sig = WIFSIGNALED(task_status) ? WTERMSIG(task_status) : 0;

    slurm_info("tbmesh: job %u: completing its reproducibility record", c->job);
    if (!rec) {   /* the start did not store one: begin again from what is known now */
        char **names;
        size_t n = 0;
        rec = tbm_record_new(c->job, c->store.cluster, "end", "RUNNING");
        names = tbm_spank_step_nodes(sp, &n, NULL, 0, &err);
        job_facts(c, json_object_object_get(rec, "job"), names, n);
        json_object_object_add(rec, "nodes", node_facts(c, names, n, NULL));
        tbm_spank_free_nodes(names, n);
    }
    job = json_object_object_get(rec, "job");
    json_object_object_add(job, "phase", json_object_new_string("end"));
    json_object_object_add(job, "end_time", json_object_new_int64((int64_t)time(NULL)));
    json_object_object_add(job, "exit_code", json_object_new_int(code));
    json_object_object_add(job, "signal", json_object_new_int(sig));
    if (c->info) {   /* the start's answer is old: the job's state now */
        slurm_free_job_info_msg(c->info);
        c->info = NULL;
    }
    if ((ji = job_info(c))) {
        state = state_name(ji->job_state);
        json_object_object_add(job, "submit_time", json_object_new_int64((int64_t)ji->submit_time));
        json_object_object_add(job, "start_time", json_object_new_int64((int64_t)ji->start_time));
        stderr_path(c, ji, errpath, sizeof(errpath));
        w.work_dir = ji->work_dir;
    }
    if (!state)
        state = code || sig ? "FAILED" : "COMPLETED";
    json_object_object_add(job, "state", json_object_new_string(state));
    parts = tbm_store_parts(&c->store, c->job, &merged);
    merge_parts(c, rec, parts);
    results = tbm_record_obj(rec, "results");
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
    if (tbm_record_validate(rec, &err) < 0)
        slurm_error("tbmesh: job %u: the end record does not hold together: %s", c->job, err.msg);
    else if (store_it(c, rec, "end", 1) == 0) {
        tbm_store_parts_remove(&c->store, c->job, merged);   /* one that came since stays */
        slurm_info("tbmesh: job %u: reproducibility record stored (%s)", c->job, state);
    }
    json_object_put(user);
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
    uint32_t step = 0;
    job_ctx_t c;
    pid_t pid;

    if (spank_context() != S_CTX_REMOTE || geteuid() != 0 ||
        spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS || step != SLURM_BATCH_SCRIPT)
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
        long long waited = c.step == SLURM_BATCH_SCRIPT ? wait_start_worker() : 0;
        if (c.step == SLURM_BATCH_SCRIPT)
            batch_end(sp, &c);
        else if (c.step != SLURM_INTERACTIVE_STEP)
            step_end(sp, &c);
        slurm_info("tbmesh: job %u: record %s work took %lld us (%lld us of it waiting for the start work)", c.job,
                   c.step == SLURM_BATCH_SCRIPT ? "end" : "step", tbm_now_us() - t0, waited);
    }
    ctx_free(&c);
    return 0;
}
