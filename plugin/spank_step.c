/* spank_step.c: the one description of a step on a node. The plug-in's arguments are read here, and once
 * per step (slurm_spank_init_post_opt, as root) this node's facts and every decision about the step: is the
 * node a Mac and in which mode, did the job ask for Macs (as job_submit/tbmesh decided: the job's tag),
 * this rank's MLX environment, the job's folder on a direct-mode Mac. spank_remote.c and spank_bridge.c
 * only read what is decided here. */
#include "config.h"
#include "spank_tbmesh.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbm_slurm.h"

void tbm_spank_say(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

tbm_spank_args_t tbm_spank_args = { "", TBM_BINDIR "/macnode", "", "", "/private/var/tmp/tbmesh-jobs",
                                     "/run/slurm-tbmesh" };
tbm_spank_step_t tbm_spank_step;

static void arg(const char *av, const char *key, char *dst, size_t len)
{
    size_t k = strlen(key);

    if (!strncmp(av, key, k) && av[k] == '=')
        snprintf(dst, len, "%s", av + k + 1);
}

void tbm_spank_read_args(int ac, char **av)
{
    tbm_spank_args_t *a = &tbm_spank_args;
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

/* tbmesh.conf: the plugstack argument conf=, else beside slurm.conf. */
int tbm_spank_load_conf(tbm_conf_t *conf, tbm_err_t *err)
{
    char path[4096];
    size_t len;
    char *text;
    int rc;

    if (tbm_spank_args.conf[0])
        snprintf(path, sizeof(path), "%s", tbm_spank_args.conf);
    else
        tbm_conf_default_path(getenv("SLURM_CONF"), path, sizeof(path));
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
 * are the job's nodes, this node being the job's batch host. Asked once per step and kept: the step's start
 * and end in this slurmstepd read the same answer. */
static struct {
    uint32_t job, step;
    char **names;
    size_t n;
    char self[TBM_HOSTNAME_MAX];
} known;

static int split_nodes(const char *list, tbm_err_t *err)
{
    char *host, **grown;
    tbm_slurm_hostlist_t hl;

    if (!list || !*list)
        return tbm_errprintf(err, "slurmctld names no node for it");
    if (!(hl = slurm_hostlist_create(list)))
        return tbm_errprintf(err, "cannot read slurmctld's node list '%s'", list);
    while ((host = slurm_hostlist_shift(hl))) {
        grown = realloc(known.names, (known.n + 1) * sizeof(*known.names));
        if (!grown || !(grown[known.n] = strdup(host))) {
            free(host);
            known.names = grown ? grown : known.names;
            slurm_hostlist_destroy(hl);
            return tbm_errprintf(err, "out of memory reading the node list");
        }
        known.names = grown;
        known.n++;
        free(host);
    }
    slurm_hostlist_destroy(hl);
    return 0;
}

static void forget_nodes(void)
{
    tbm_spank_free_nodes(known.names, known.n);
    memset(&known, 0, sizeof(known));
}

/* Ask slurmctld for job's step (or the batch step's job). 0, or -1 with err. */
static int ask_nodes(uint32_t job, uint32_t step, uint32_t node_id, tbm_err_t *err)
{
    job_step_info_response_msg_t *steps = NULL;
    job_info_msg_t *msg = NULL;
    int rc = -1;

    forget_nodes();
    known.job = job;
    known.step = step;
    if (step == SLURM_BATCH_SCRIPT) {
        if (slurm_load_job(&msg, job, SHOW_DETAIL) != SLURM_SUCCESS || !msg || msg->record_count < 1)
            tbm_errprintf(err, "slurmctld cannot say where job %u runs: %s", job, tbm_slurm_errstr());
        else if (split_nodes(msg->job_array[0].nodes, err) == 0 && msg->job_array[0].batch_host)
            rc = 0, tbm_spank_say(known.self, sizeof(known.self), "%s", msg->job_array[0].batch_host);
        else if (!tbm_erris(err))
            tbm_errprintf(err, "slurmctld names no batch host for job %u", job);
        if (msg)
            slurm_free_job_info_msg(msg);
    } else {
        if (slurm_get_job_steps(0, job, step, &steps, SHOW_ALL) != SLURM_SUCCESS || !steps ||
            steps->job_step_count < 1)
            tbm_errprintf(err, "slurmctld cannot say where step %u.%u runs: %s", job, step,
                          tbm_slurm_errstr());
        else if (split_nodes(steps->job_steps[0].nodes, err) == 0 && node_id < known.n)
            rc = 0, tbm_spank_say(known.self, sizeof(known.self), "%s", known.names[node_id]);
        else if (!tbm_erris(err))
            tbm_errprintf(err, "this node (%u) is not among the %zu nodes slurmctld gives step %u.%u", node_id,
                          known.n, job, step);
        if (steps)
            slurm_free_job_step_info_response_msg(steps);
    }
    if (rc < 0)
        forget_nodes();
    return rc;
}

char **tbm_spank_step_nodes(spank_t sp, size_t *n, char *self, size_t len, tbm_err_t *err)
{
    uint32_t job, step, node_id = 0;
    char **copy;
    size_t i;

    *n = 0;
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS || spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
        return tbm_errprintf(err, "slurmstepd gave no job or step id"), NULL;
    if (spank_get_item(sp, S_JOB_NODEID, &node_id) != ESPANK_SUCCESS)
        node_id = 0;
    if ((!known.names || known.job != job || known.step != step) && ask_nodes(job, step, node_id, err) < 0)
        return NULL;
    if (!(copy = calloc(known.n, sizeof(*copy))))
        return tbm_errprintf(err, "out of memory"), NULL;
    for (i = 0; i < known.n; i++)
        if (!(copy[i] = strdup(known.names[i]))) {
            tbm_spank_free_nodes(copy, i);
            return tbm_errprintf(err, "out of memory"), NULL;
        }
    *n = known.n;
    if (self)
        tbm_spank_say(self, len, "%s", known.self);
    return copy;
}

void tbm_spank_free_nodes(char **names, size_t n)
{
    while (n--)
        free(names[n]);
    free(names);
}

static void tag_path(uint32_t job, char *buf, size_t len)
{
    tbm_spank_say(buf, len, "%s/%u.tag", tbm_spank_args.state_dir, job);
}

/* The job's prolog, as root: job_submit's tag reaches the prolog's environment (SPANK_TBMESH_JOB) but not
 * the steps', so it is kept for them in root's state folder (which no user may write). */
void tbm_spank_tag_keep(uint32_t job)
{
    const char *tag = getenv("SPANK_" TBM_JOBTAG_ENV);
    tbm_err_t err = { { 0 } };
    char path[1100];

    if (!tag)
        return;
    tag_path(job, path, sizeof(path));
    if (tbm_jobdir_base(tbm_spank_args.state_dir, NULL, 0, &err) < 0 ||
        tbm_write_file_atomic(path, tag, strlen(tag), 0644, &err) < 0)
        slurm_error("tbmesh: job %u: cannot keep its tag for the steps (%s); they ask slurmctld instead", job,
                    err.msg);
}

void tbm_spank_tag_drop(uint32_t job)
{
    char path[1100];

    tag_path(job, path, sizeof(path));
    unlink(path);
}

/* Did the job ask for Macs? As job_submit/tbmesh decided: its tag, kept by the job's prolog. A job without
 * a tag was submitted before this release's job_submit/tbmesh (or the prolog could not keep it): its request
 * is read from slurmctld once, with lib/jobreq's parser. 1 with the tag, 0 no, -1 with err. */
int tbm_spank_read_tag(uint32_t job, tbm_jobtag_t *tag, tbm_err_t *err)
{
    char path[1100], group[TBM_GROUP_NAME_MAX], *text;
    tbm_err_t ignored = { { 0 } };
    job_info_msg_t *msg = NULL;
    long long count = 0;
    size_t len;
    int mac;

    tag_path(job, path, sizeof(path));
    if ((text = tbm_read_file(path, TBM_JOBTAG_MAX, &len, &ignored)) != NULL) {
        mac = tbm_jobtag_parse(text, tag, err) < 0 ? -1 : 1;
        free(text);
        return mac;
    }
    if (slurm_load_job(&msg, job, SHOW_DETAIL) != SLURM_SUCCESS || !msg || msg->record_count < 1) {
        if (msg)
            slurm_free_job_info_msg(msg);
        return tbm_errprintf(err, "the job has no tbmesh tag and slurmctld cannot say what it asked for: %s",
                             tbm_slurm_errstr());
    }
    mac = tbm_gres_tbmesh(msg->job_array[0].tres_per_node, group, sizeof(group), &count, err);
    slurm_free_job_info_msg(msg);
    tag->macs = mac > 0 ? (unsigned)count : 0;
    tag->backend = TBM_BACKEND_AUTO;
    return mac;
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
    tbm_spank_step_t *s = &tbm_spank_step;
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
    tbm_spank_step_t *s = &tbm_spank_step;
    tbm_err_t err = { { 0 } };
    char note[600], dir[sizeof(s->job_dir)];

    if (tbm_jobdir_base(tbm_spank_args.jobs_dir, note, sizeof(note), &err) == 0 && note[0])
        slurm_error("tbmesh: %s", note);
    if (tbm_erris(&err) ||
        tbm_jobdir_make(tbm_spank_args.jobs_dir, s->job, s->uid, s->gid, dir, sizeof(dir), &err) < 0)
        tbm_spank_say(s->refusal, sizeof(s->refusal), "cannot make the job's folder on %s: %s", s->node, err.msg);
}

int tbm_spank_step_init(spank_t sp)
{
    tbm_spank_step_t *s = &tbm_spank_step;
    tbm_err_t err = { { 0 } };
    tbm_jobtag_t tag = { 0, TBM_BACKEND_AUTO };
    tbm_conf_t conf;
    char **nodes = NULL;
    size_t n = 0;
    int kind, mac;

    memset(s, 0, sizeof(*s));
    if (spank_get_item(sp, S_JOB_STEPID, &s->step) != ESPANK_SUCCESS || s->step == SLURM_BATCH_SCRIPT ||
        s->step == SLURM_EXTERN_CONT || s->step == SLURM_INTERACTIVE_STEP)
        return 0;
    if (spank_get_item(sp, S_JOB_ID, &s->job) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_NODEID, &s->node_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &s->uid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_GID, &s->gid) != ESPANK_SUCCESS) {
        slurm_error("tbmesh: slurmstepd gave no job, step, node or user: the step runs as Slurm starts it");
        return 0;
    }
    if (tbm_spank_load_conf(&conf, &err) < 0) {
        slurm_error("tbmesh: %s: steps run without tbmesh until tbmesh.conf can be read", err.msg);
        return 0;
    }
    nodes = tbm_spank_step_nodes(sp, &n, s->node, sizeof(s->node), &err);
    if (!nodes) {   /* cannot tell whether this is a Mac: run nothing rather than the wrong way */
        s->active = 1;
        tbm_spank_say(s->refusal, sizeof(s->refusal), "%s", err.msg);
        goto out;
    }
    kind = tbm_spank_node_kind(&conf, s->node, s->agent, sizeof(s->agent));
    if (kind == TBM_SPANK_NOT_A_MAC)
        goto out;
    s->active = 1;
    s->bridge = kind == TBM_SPANK_BRIDGE_MAC;
    snprintf(s->job_dir, sizeof(s->job_dir), "%s/%u", tbm_spank_args.jobs_dir, s->job);
    mac = tbm_spank_read_tag(s->job, &tag, &err);
    if (mac < 0) {
        tbm_spank_say(s->refusal, sizeof(s->refusal), "%s", err.msg);
        goto out;
    }
    s->mac_job = mac;
    if (mac)
        plan(sp, &conf, nodes, n, &tag);
    if (!s->bridge && s->planned && s->plan.n_files > 0 && !s->refusal[0])
        make_job_dir();
out:
    tbm_spank_free_nodes(nodes, n);
    tbm_conf_free(&conf);
    return 0;
}

void tbm_spank_step_fini(void)
{
    if (tbm_spank_step.planned)
        tbm_envplan_free(&tbm_spank_step.plan);
    memset(&tbm_spank_step, 0, sizeof(tbm_spank_step));
}
