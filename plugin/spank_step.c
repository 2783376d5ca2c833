/* spank_step.c: the one description of a step on a node. The plug-in's arguments are read here, and once
 * per step, as root, this node's facts and every decision about the step: at slurm_spank_init the job, the
 * step's nodes as slurmctld knows them, tbmesh.conf, whether the node is a Mac and in which mode, whether
 * the job asked for Macs (the tag job_submit/tbmesh gave it, kept by its prolog); at init_post_opt, once the
 * step's own options are read, this rank's MLX environment and the job's folder on a direct-mode Mac.
 * spank_remote.c, spank_bridge.c and spank_repro.c only read what is decided here. */
#include "config.h"
#include "spank_step.h"
#include "spank_submit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <fcntl.h>
#include <unistd.h>

#include "tbm_slurm.h"

void tbm_spank_say(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

static tbm_spank_args_t spank_args = { "", TBM_BINDIR "/macnode", "", "", "/private/var/tmp/tbmesh-jobs",
                                     "/run/slurm-tbmesh" };
static tbm_spank_step_t spank_step;

const tbm_spank_args_t *tbm_spank_args(void)
{
    return &spank_args;
}

const tbm_spank_step_t *tbm_spank_step(void)
{
    return &spank_step;
}

static void arg(const char *av, const char *key, char *dst, size_t len)
{
    size_t k = strlen(key);

    if (!strncmp(av, key, k) && av[k] == '=')
        snprintf(dst, len, "%s", av + k + 1);
}

void tbm_spank_read_args(int ac, char **av)
{
    tbm_spank_args_t *a = &spank_args;
    int i;

    for (i = 0; i < ac; i++) {
        arg(av[i], "conf", a->conf, sizeof(a->conf));
        arg(av[i], "macnode", a->macnode, sizeof(a->macnode));
        arg(av[i], "forwarder", a->forwarder, sizeof(a->forwarder));
        arg(av[i], "munge_socket", a->munge_socket, sizeof(a->munge_socket));
        arg(av[i], "jobs_dir", a->jobs_dir, sizeof(a->jobs_dir));
        arg(av[i], "state_dir", a->state_dir, sizeof(a->state_dir));
    }
}

void tbm_spank_conf_path(char *path, size_t len)
{
    if (spank_args.conf[0])
        snprintf(path, len, "%s", spank_args.conf);
    else
        tbm_conf_default_path(getenv("SLURM_CONF"), path, len);
}

/* tbmesh.conf: the plugstack argument conf=, else beside slurm.conf. */
int tbm_spank_load_conf(tbm_conf_t *conf, tbm_err_t *err)
{
    char path[4096];
    size_t len;
    char *text;
    int rc;

    tbm_spank_conf_path(path, sizeof(path));
    text = tbm_read_file(path, TBM_CONF_MAX_BYTES, &len, err);
    if (!text)
        return -1;
    rc = tbm_conf_parse(text, len, path, conf, NULL, err);
    free(text);
    return rc;
}

int tbm_spank_node_kind(const tbm_conf_t *conf, const char *name, char *agent, size_t len)
{
    int idx = tbm_conf_node(conf, name);

    if (idx < 0)
        return TBM_SPANK_NOT_A_MAC;
    if (conf->groups[conf->nodes[idx].group].mode != TBM_MODE_BRIDGE)
        return TBM_SPANK_DIRECT_MAC;
    tbm_conf_agent_of(conf, idx, agent, len);
    return TBM_SPANK_BRIDGE_MAC;
}

/* The step's nodes in Slurm's order and this node's name, as slurmctld knows them: never from the job's
 * environment, which its user writes (SLURM_STEP_NODELIST, SLURM_JOB_NODELIST). A job step's nodes come from
 * its step record, this node being the step's node S_JOB_NODEID (slurmstepd's own fact); the batch step's
 * are the job's nodes, this node being the job's batch host. Asked once per step, into the description. */
static int split_nodes(tbm_spank_step_t *s, const char *list, tbm_err_t *err)
{
    char *host, **grown;
    tbm_slurm_hostlist_t hl;

    if (!list || !*list)
        return tbm_errprintf(err, "slurmctld names no node for it");
    if (!(hl = slurm_hostlist_create(list)))
        return tbm_errprintf(err, "cannot read slurmctld's node list '%s'", list);
    while ((host = slurm_hostlist_shift(hl))) {
        grown = realloc(s->nodes, (s->n_nodes + 1) * sizeof(*s->nodes));
        if (!grown || !(grown[s->n_nodes] = strdup(host))) {
            free(host);
            s->nodes = grown ? grown : s->nodes;
            slurm_hostlist_destroy(hl);
            return tbm_errprintf(err, "out of memory reading the node list");
        }
        s->nodes = grown;
        s->n_nodes++;
        free(host);
    }
    slurm_hostlist_destroy(hl);
    return 0;
}

static void forget_nodes(tbm_spank_step_t *s)
{
    while (s->n_nodes)
        free(s->nodes[--s->n_nodes]);
    free(s->nodes);
    s->nodes = NULL;
}

/* Ask slurmctld for the step's nodes (the batch step: the job's) and this node's name. 0, or -1 with err. */
static int ask_nodes(tbm_spank_step_t *s, tbm_err_t *err)
{
    job_step_info_response_msg_t *steps = NULL;
    job_info_msg_t *msg = NULL;
    int rc = -1;

    if (s->step == SLURM_BATCH_SCRIPT) {
        if (slurm_load_job(&msg, s->job, SHOW_DETAIL) != SLURM_SUCCESS || !msg || msg->record_count < 1)
            tbm_errprintf(err, "slurmctld cannot say where job %u runs: %s", s->job, tbm_slurm_errstr());
        else if (split_nodes(s, msg->job_array[0].nodes, err) == 0 && msg->job_array[0].batch_host)
            rc = 0, tbm_spank_say(s->node, sizeof(s->node), "%s", msg->job_array[0].batch_host);
        else if (!tbm_erris(err))
            tbm_errprintf(err, "slurmctld names no batch host for job %u", s->job);
        if (msg)
            slurm_free_job_info_msg(msg);
    } else {
        if (slurm_get_job_steps(0, s->job, s->step, &steps, SHOW_ALL) != SLURM_SUCCESS || !steps ||
            steps->job_step_count < 1)
            tbm_errprintf(err, "slurmctld cannot say where step %u.%u runs: %s", s->job, s->step,
                          tbm_slurm_errstr());
        else if (split_nodes(s, steps->job_steps[0].nodes, err) == 0 && s->node_id < s->n_nodes)
            rc = 0, tbm_spank_say(s->node, sizeof(s->node), "%s", s->nodes[s->node_id]);
        else if (!tbm_erris(err))
            tbm_errprintf(err, "this node (%u) is not among the %zu nodes slurmctld gives step %u.%u", s->node_id,
                          s->n_nodes, s->job, s->step);
        if (steps)
            slurm_free_job_step_info_response_msg(steps);
    }
    if (rc < 0)
        forget_nodes(s);
    return rc;
}

static void tag_path(uint32_t job, char *buf, size_t len)
{
    tbm_spank_say(buf, len, "%s/%u.tag", spank_args.state_dir, job);
}

/* The job's run on this node as slurmd tells its prolog and epilog (from the job's credential): -1 when not
 * told. */
static long tag_run(void)
{
    return tbm_jobtag_run_parse(getenv("SLURM_JOB_RESTART_COUNT"));
}

/* The state folder, locked while a tag is kept or removed, so that an epilog's look and removal are one step
 * against a prolog's write. Returns the folder's descriptor (to tag_unlock), or -1 (then unlocked: logged). */
static int tag_lock(uint32_t job)
{
    int fd = open(spank_args.state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0 || flock(fd, LOCK_EX) < 0) {
        slurm_error("tbmesh: job %u: cannot lock %s (%m): its tag is kept or removed unlocked", job,
                    spank_args.state_dir);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static void tag_unlock(int fd)
{
    if (fd >= 0)
        close(fd);   /* the lock goes with it */
}

/* The job's prolog, as root: job_submit's tag reaches the prolog's environment (SPANK_TBMESH_JOB) but not
 * the steps', so it is kept for them in root's state folder (which no user may write), with the run it is for.
 * A job that carries no tag did not ask for Macs (job_submit/tbmesh tags every job it places on Macs and
 * removes any other): it is kept as "v1 macs=0 backend=auto", so that a step finding no file knows the prolog
 * did not keep it. */
void tbm_spank_tag_keep(uint32_t job)
{
    const char *tag = getenv("SPANK_" TBM_JOBTAG_ENV);
    tbm_jobtag_t none = { 0, TBM_BACKEND_AUTO };
    tbm_err_t err = { { 0 } };
    char path[1100], text[TBM_JOBTAG_MAX], kept[TBM_JOBTAG_KEPT_MAX];
    int lock;

    if (!tag || !*tag) {
        if (tbm_jobtag_format(&none, text, sizeof(text)) < 0)
            return;
        tag = text;
    }
    tag_path(job, path, sizeof(path));
    if (tbm_jobdir_base(spank_args.state_dir, NULL, 0, &err) < 0) {
        slurm_error("tbmesh: job %u: cannot keep its tag for the steps (%s); its steps on Macs will be refused",
                    job, err.msg);
        return;
    }
    if (tbm_jobtag_kept_format(tag, tag_run(), kept, sizeof(kept)) < 0) {
        /* kept as it came (its first line, cut to fit): the step names what is wrong with it */
        snprintf(kept, sizeof(kept), "%.*s", (int)strcspn(tag, "\n"), tag);
    }
    lock = tag_lock(job);
    if (tbm_write_file_atomic(path, kept, strlen(kept), 0644, &err) < 0)
        slurm_error("tbmesh: job %u: cannot keep its tag for the steps (%s); its steps on Macs will be refused",
                    job, err.msg);
    tag_unlock(lock);
}

/* The job's epilog, as root: its run's tag goes, or an earlier run's; a later run's (whose prolog came first,
 * the job having been queued again) stays for that run's steps. */
void tbm_spank_tag_drop(uint32_t job)
{
    char path[1100], *text;
    long run = tag_run();
    size_t len;
    int lock;

    tag_path(job, path, sizeof(path));
    lock = tag_lock(job);
    text = tbm_read_file(path, TBM_JOBTAG_KEPT_MAX, &len, NULL);
    if (!text || tbm_jobtag_kept_drop(text, run))
        unlink(path);
    else
        slurm_info("tbmesh: job %u: run %ld's epilog leaves the tag a later run kept", job, run);
    free(text);
    tag_unlock(lock);
}

/* Did the job ask for Macs? As job_submit/tbmesh decided: its tag, kept by the job's prolog, the only
 * route (no step asks slurmctld what the job asked for). 1 with the tag, 0 no, -1 with err. */
static int read_tag(uint32_t job, tbm_jobtag_t *tag, tbm_err_t *err)
{
    char path[1100], *text, line[TBM_JOBTAG_KEPT_MAX];
    tbm_err_t why = { { 0 } };
    size_t len;
    long run;
    int rc;

    tag_path(job, path, sizeof(path));
    if (!(text = tbm_read_file(path, TBM_JOBTAG_KEPT_MAX, &len, &why)))
        return tbm_errprintf(err, "job %u has no tbmesh tag on this node (%s): its prolog did not keep it, so "
                             "whether it asked for Macs is not known; resubmit the job, or ask the administrator to "
                             "check slurm.conf's PrologFlags=Alloc, slurmd's log here and %s", job, why.msg,
                             spank_args.state_dir);
    rc = tbm_jobtag_kept_parse(text, line, sizeof(line), &run, err);
    free(text);
    if (rc == 0)
        rc = tbm_jobtag_parse(line, tag, err);
    if (rc < 0)
        return tbm_errprefix(err, "the job's tbmesh tag: ");
    return tag->macs > 0;
}

/* The backend: this step's own --mlx-backend, else the job's (its tag; older jobs: the submit side's
 * variable). */
static int step_backend(spank_t sp, const tbm_jobtag_t *tag, tbm_backend_t *b, tbm_err_t *err)
{
    char name[32] = "";

    *b = tag->backend;
    if (!tbm_spank_backend(name, sizeof(name)) &&
        (tag->backend != TBM_BACKEND_AUTO ||
         spank_getenv(sp, TBM_SPANK_ENV_PREFIX TBM_MLX_BACKEND_ENV, name, sizeof(name)) != ESPANK_SUCCESS))
        return 0;
    if (tbm_backend_parse(name, b, err) < 0)
        return tbm_errprefix(err, "--mlx-backend=");
    return 0;
}

/* This rank's MLX environment. A step on part of the job's Macs that the backend cannot run there (Open
 * MPI's daemons on three Macs of a ring, say) runs without MLX's variables, and says so; a step on all of
 * them that cannot be planned is refused. */
static void plan(spank_t sp, const tbm_conf_t *conf, char **nodes, size_t n, const tbm_jobtag_t *tag)
{
    tbm_spank_step_t *s = &spank_step;
    tbm_envplan_opts_t opts = { s->job_dir, NULL, NULL };
    tbm_err_t err = { { 0 } };
    tbm_backend_t b;
    char job_nodes[16] = "";
    long long all = 0;

    if (step_backend(sp, tag, &b, &err) < 0) {
        tbm_spank_say(s->refusal, sizeof(s->refusal), "%s", err.msg);
        return;
    }
    if (tbm_envplan_make(conf, (const char *const *)nodes, n, s->node, b, s->job, &opts, &s->plan, &err) == 0) {
        s->planned = 1;
        tbm_spank_say(s->note, sizeof(s->note), "%s", s->plan.note);
        return;
    }
    if (spank_getenv(sp, "SLURM_JOB_NUM_NODES", job_nodes, sizeof(job_nodes)) == ESPANK_SUCCESS &&
        tbm_parse_ll(job_nodes, 10, 1, 1000000, &all) == 0 && (long long)n < all) {
        tbm_spank_say(s->note, sizeof(s->note), "tbmesh: this step runs on %zu of the job's %lld Macs without MLX's "
                 "distributed variables (%s); helpers such as Open MPI's daemons need none", n, all, err.msg);
        return;
    }
    tbm_spank_say(s->refusal, sizeof(s->refusal), "cannot set up MLX for this step: %s", err.msg);
}

/* Direct mode: the job's folder, made by root in the Macs' jobs folder, the user's, 0700. */
static void make_job_dir(void)
{
    tbm_spank_step_t *s = &spank_step;
    tbm_err_t err = { { 0 } };
    char note[600], dir[sizeof(s->job_dir)];

    if (tbm_jobdir_base(spank_args.jobs_dir, note, sizeof(note), &err) == 0 && note[0])
        slurm_error("tbmesh: %s", note);
    if (tbm_erris(&err) ||
        tbm_jobdir_make(spank_args.jobs_dir, s->job, s->uid, s->gid, dir, sizeof(dir), &err) < 0)
        tbm_spank_say(s->refusal, sizeof(s->refusal), "cannot make the job's folder on %s: %s", s->node, err.msg);
}

/* What every later callback of the step reads: job, step, node, user, tbmesh.conf, the step's nodes, the
 * node's kind, the job's tag. The extern step has none. */
int tbm_spank_step_describe(spank_t sp)
{
    tbm_spank_step_t *s = &spank_step;
    tbm_err_t err = { { 0 } };
    int kind, mac;

    tbm_spank_step_fini();
    if (spank_get_item(sp, S_JOB_STEPID, &s->step) != ESPANK_SUCCESS || s->step == SLURM_EXTERN_CONT)
        return 0;
    if (spank_get_item(sp, S_JOB_ID, &s->job) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &s->uid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_GID, &s->gid) != ESPANK_SUCCESS ||
        (spank_get_item(sp, S_JOB_NODEID, &s->node_id) != ESPANK_SUCCESS && s->step != SLURM_BATCH_SCRIPT)) {
        slurm_error("tbmesh: slurmstepd gave no job, step, node or user: the step runs as Slurm starts it");
        return 0;
    }
    s->task_step = s->step != SLURM_BATCH_SCRIPT && s->step != SLURM_INTERACTIVE_STEP;
    if (tbm_spank_load_conf(&s->conf, &err) < 0) {
        slurm_error("tbmesh: %s: steps run without tbmesh until tbmesh.conf can be read", err.msg);
        return 0;
    }
    s->have_conf = 1;
    if (ask_nodes(s, &err) < 0) {   /* cannot tell whether this is a Mac: run nothing rather than the wrong way */
        s->active = s->task_step;
        tbm_spank_say(s->refusal, sizeof(s->refusal), "%s", err.msg);
        if (!s->task_step)
            slurm_error("tbmesh: job %u: no reproducibility record from this step: %s", s->job, err.msg);
        return 0;
    }
    kind = tbm_spank_node_kind(&s->conf, s->node, s->agent, sizeof(s->agent));
    if (kind == TBM_SPANK_NOT_A_MAC)
        return 0;
    s->mac_node = 1;
    s->active = s->task_step;
    s->bridge = kind == TBM_SPANK_BRIDGE_MAC;
    snprintf(s->job_dir, sizeof(s->job_dir), "%s/%u", spank_args.jobs_dir, s->job);
    if ((mac = read_tag(s->job, &s->tag, &err)) < 0)
        tbm_spank_say(s->refusal, sizeof(s->refusal), "%s", err.msg);
    s->mac_job = mac > 0;
    return 0;
}

/* Once the step's options are read (its own --mlx-backend): this rank's plan, the direct-mode job folder. */
int tbm_spank_step_plan(spank_t sp)
{
    tbm_spank_step_t *s = &spank_step;

    if (!s->active || !s->mac_job || s->refusal[0])
        return 0;
    plan(sp, &s->conf, s->nodes, s->n_nodes, &s->tag);
    if (!s->bridge && s->planned && s->plan.n_files > 0 && !s->refusal[0])
        make_job_dir();
    return 0;
}

void tbm_spank_step_refuse(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(spank_step.refusal, sizeof(spank_step.refusal), fmt, ap);
    va_end(ap);
}

void tbm_spank_step_fini(void)
{
    tbm_spank_step_t *s = &spank_step;

    if (s->planned)
        tbm_envplan_free(&s->plan);
    if (s->have_conf)
        tbm_conf_free(&s->conf);
    forget_nodes(s);
    memset(s, 0, sizeof(*s));
}
