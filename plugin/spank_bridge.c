/* spank_bridge.c: spank_tbmesh in bridge mode: slurmstepd runs on the bridge host, so each task of a step on
 * a bridge-mode Mac becomes the forwarder (`macnode exec`), which has the Mac's agent run the real command
 * there. As root (task_init_privileged) it makes the job grant, a MUNGE credential of uid 0 naming job, step,
 * node, user and expiry; as the user (task_init) it execs the forwarder with the task's argv and env. */
#include "config.h"
#include "spank_tbmesh.h"

#include <errno.h>
#include <fcntl.h>
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "tbmesh.h"

#define GRANT_TTL 300   /* seconds: long enough for the spawn, not for reuse */

#define MAX_FILES 8

static char *grant[2];             /* made as root: [0] for prepare (when there are files), [1] for exec */
static char agent[TBM_HOSTNAME_MAX + 8];
static char macnode_path[4096] = TBM_BINDIR "/macnode";
static char munge_socket[4096];
static char jobs_dir[1024] = "/private/var/tmp/tbmesh-jobs";   /* macnoded's default on macOS */
static char stage_dir[64];         /* the step's files, staged on the bridge host for `macnode prepare` */
static char *staged[MAX_FILES];    /* "NAME=PATH" for --file */
static size_t n_staged;

void tbm_spank_bridge_args(int ac, char **av)
{
    int i;

    for (i = 0; i < ac; i++) {
        if (!strncmp(av[i], "macnode=", 8))
            snprintf(macnode_path, sizeof(macnode_path), "%s", av[i] + 8);
        else if (!strncmp(av[i], "munge_socket=", 13))
            snprintf(munge_socket, sizeof(munge_socket), "%s", av[i] + 13);
        else if (!strncmp(av[i], "jobs_dir=", 9))
            snprintf(jobs_dir, sizeof(jobs_dir), "%s", av[i] + 9);
    }
}

void tbm_spank_bridge_job_dir(uint32_t job_id, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%u", jobs_dir, job_id);
}

int tbm_spank_bridge_stage(const tbm_envplan_t *plan, tbm_err_t *err)
{
    char path[sizeof(stage_dir) + 256], entry[sizeof(path) + 128];
    const char *name;
    size_t i;

    if (plan->n_files == 0)
        return 0;
    snprintf(stage_dir, sizeof(stage_dir), "/tmp/tbmesh-stage-XXXXXX");
    if (!mkdtemp(stage_dir))
        return tbm_errprintf(err, "cannot make a staging folder in /tmp: %s", strerror(errno));
    for (i = 0; i < plan->n_files && i < MAX_FILES; i++) {
        name = strrchr(plan->files[i].path, '/') ? strrchr(plan->files[i].path, '/') + 1 : plan->files[i].path;
        snprintf(path, sizeof(path), "%s/%s", stage_dir, name);
        if (tbm_write_file_atomic(path, plan->files[i].data, plan->files[i].len, 0600, err) < 0)
            return -1;
        snprintf(entry, sizeof(entry), "%s=%s", name, path);
        staged[n_staged++] = strdup(entry);
    }
    return 0;
}

void tbm_spank_bridge_exit(void)
{
    char *eq;

    while (n_staged > 0) {
        n_staged--;
        if (staged[n_staged] && (eq = strchr(staged[n_staged], '=')))
            unlink(eq + 1);
        free(staged[n_staged]);
    }
    if (stage_dir[0])
        rmdir(stage_dir);
    stage_dir[0] = '\0';
}

/* If `name` is a bridge-mode Mac of tbmesh.conf: 1, with its agent's address:port in `agent`; else 0. */
static int agent_of(const tbm_conf_t *conf, const char *name)
{
    int idx = tbm_conf_node(conf, name);
    const tbm_conf_node_t *n;

    if (idx < 0 || conf->groups[conf->nodes[idx].group].mode != TBM_MODE_BRIDGE)
        return 0;
    n = &conf->nodes[idx];
    snprintf(agent, sizeof(agent), "%s:%d", n->agent_addr[0] ? n->agent_addr : n->name,
             n->agent_port ? n->agent_port : conf->agent_port);
    return 1;
}

/* This task's node, if it is a bridge-mode Mac: 1 with its name in `node` and its agent in `agent`. */
static int bridge_node(spank_t sp, char *node, size_t len, tbm_err_t *err)
{
    tbm_err_t ignored = { { 0 } };
    uint32_t node_id = 0;
    tbm_conf_t conf;
    char **nodes;
    size_t n = 0;
    int rc = 0;

    if (spank_get_item(sp, S_JOB_NODEID, &node_id) != ESPANK_SUCCESS ||
        !(nodes = tbm_spank_step_nodes(sp, &n, &ignored)))
        return 0;   /* no step node list: nothing to forward */
    if (node_id < n) {
        if (tbm_spank_load_conf(&conf, err) < 0) {
            rc = -1;
        } else {
            rc = agent_of(&conf, nodes[node_id]);
            if (rc)
                snprintf(node, len, "%s", nodes[node_id]);
            tbm_conf_free(&conf);
        }
    }
    tbm_spank_free_nodes(nodes, n);
    return rc;
}

/* Run macnode with argv (as this process's user) and wait; `grant` goes in its environment when given, its
 * stdout to /dev/null when `quiet`. Returns 0 when it exited 0. */
static int run_macnode(char *const argv[], const char *grant_cred, int quiet)
{
    int status, devnull;
    pid_t pid = fork();

    if (pid == 0) {
        if (quiet && (devnull = open("/dev/null", O_WRONLY)) >= 0)
            dup2(devnull, STDOUT_FILENO);
        if (grant_cred)
            setenv("TBMESH_GRANT", grant_cred, 1);
        if (munge_socket[0])
            setenv("TBMESH_MUNGE_SOCKET", munge_socket, 1);
        setenv("TBMESH_AGENT", agent, 1);
        execv(macnode_path, argv);
        _exit(127);
    }
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int make_grant(spank_t sp, const char *node, char **out, tbm_err_t *err)
{
    tbm_grant_t g;
    munge_ctx_t ctx;
    munge_err_t mrc;
    char *payload;

    memset(&g, 0, sizeof(g));
    if (spank_get_item(sp, S_JOB_ID, &g.job) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &g.step) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &g.uid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_GID, &g.gid) != ESPANK_SUCCESS)
        return tbm_errprintf(err, "slurmstepd gave no job, step or user");
    snprintf(g.node, sizeof(g.node), "%s", node);
    g.expires = (int64_t)time(NULL) + GRANT_TTL;
    if (!(payload = tbm_grant_payload(&g, err)))
        return -1;
    ctx = munge_ctx_create();
    if (!ctx || (munge_socket[0] && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munge_socket) != EMUNGE_SUCCESS)) {
        free(payload);
        if (ctx)
            munge_ctx_destroy(ctx);
        return tbm_errprintf(err, "munge: cannot use the socket %s", munge_socket);
    }
    mrc = munge_encode(out, ctx, payload, (int)strlen(payload));
    free(payload);
    if (mrc != EMUNGE_SUCCESS)
        tbm_errprintf(err, "munge: cannot make the job grant: %s (is munged running?)", munge_ctx_strerror(ctx));
    munge_ctx_destroy(ctx);
    return mrc == EMUNGE_SUCCESS ? 0 : -1;
}

/* srun --mpi=pmix (or pmi2) in bridge mode: the PMI server is slurmstepd's, on the bridge host, where an MPI
 * rank on the Mac cannot reach it, so MPI_Init would fail there. Said once per step (task 0); the tasks still
 * run (a program that does not call MPI_Init does not mind). */
static void warn_pmi(spank_t sp)
{
    char type[32] = "";
    uint32_t task = 1;

    if (spank_get_item(sp, S_TASK_GLOBAL_ID, &task) != ESPANK_SUCCESS || task != 0 ||
        spank_getenv(sp, "SLURM_MPI_TYPE", type, sizeof(type)) != ESPANK_SUCCESS || strncmp(type, "pmi", 3) != 0)
        return;
    slurm_spank_log("tbmesh: srun --mpi=%s on a bridge-mode Mac: its PMI server runs on the bridge host, which "
                    "MPI on the Mac cannot reach, so MPI_Init will fail; run mpirun inside the job instead (it "
                    "starts its daemons on the Macs through srun)", type);
}

int tbm_spank_bridge_task_privileged(spank_t sp)
{
    char node[TBM_HOSTNAME_MAX];
    tbm_err_t err = { { 0 } };
    uint32_t step = 0;
    int rc;

    if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS || step == SLURM_BATCH_SCRIPT ||
        step == SLURM_EXTERN_CONT)
        return 0;
    rc = bridge_node(sp, node, sizeof(node), &err);
    if (rc > 0)
        warn_pmi(sp);
    if (rc > 0)
        rc = (n_staged && make_grant(sp, node, &grant[0], &err) < 0) ? -1 : make_grant(sp, node, &grant[1], &err);
    if (rc < 0) {
        slurm_error("tbmesh: cannot forward this task to its Mac: %s", err.msg);
        return -1;
    }
    return 0;
}

/* `macnode prepare`: the staged files into the job's folder on the Mac (it prints the folder; the task's
 * stdout is not for that). */
static int prepare(void)
{
    char *argv[4 + 2 * MAX_FILES];
    int n = 0;
    size_t i;

    argv[n++] = "macnode";
    argv[n++] = "prepare";
    for (i = 0; i < n_staged; i++) {
        argv[n++] = "--file";
        argv[n++] = staged[i];
    }
    argv[n] = NULL;
    if (run_macnode(argv, grant[0], 1) < 0) {
        slurm_error("tbmesh: cannot write the job's MLX files on the Mac (macnode prepare failed; see above)");
        return -1;
    }
    return 0;
}

/* As the user, just before the task would exec: exec the forwarder instead. */
int tbm_spank_bridge_task_init(spank_t sp)
{
    char **argv = NULL, **env = NULL, **fwd, pty[16];
    int argc = 0, i, n = 0;

    if (!grant[1])
        return 0;
    if (spank_setenv(sp, "TBMESH_AGENT", agent, 1) != ESPANK_SUCCESS ||
        (munge_socket[0] && spank_setenv(sp, "TBMESH_MUNGE_SOCKET", munge_socket, 1) != ESPANK_SUCCESS)) {
        slurm_error("tbmesh: cannot prepare the forwarder of this task");
        return -1;
    }
    if (n_staged && prepare() < 0)
        return -1;
    if (spank_setenv(sp, "TBMESH_GRANT", grant[1], 1) != ESPANK_SUCCESS ||
        spank_setenv(sp, "TBMESH_AGENT", agent, 1) != ESPANK_SUCCESS ||
        (munge_socket[0] && spank_setenv(sp, "TBMESH_MUNGE_SOCKET", munge_socket, 1) != ESPANK_SUCCESS) ||
        spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS) {
        slurm_error("tbmesh: cannot prepare the forwarder of this task");
        return -1;
    }
    fwd = calloc((size_t)argc + 5, sizeof(*fwd));
    if (!fwd)
        return -1;
    fwd[n++] = "macnode";
    fwd[n++] = "exec";
    if (spank_getenv(sp, "SLURM_PTY_PORT", pty, sizeof(pty)) == ESPANK_SUCCESS)
        fwd[n++] = "--pty";
    fwd[n++] = "--";
    for (i = 0; i < argc; i++)
        fwd[n++] = argv[i];
    execve(macnode_path, fwd, env);
    slurm_error("tbmesh: cannot start the forwarder %s: %m", macnode_path);
    free(fwd);
    return -1;
}

/* Job epilog (slurmd, root), bridge mode: the agent ends what is left of the job on the Mac and removes the
 * job's folder there (`macnode cleanup`). Direct-mode Macs clean up after each step themselves. */
int tbm_spank_bridge_epilog(spank_t sp, int ac, char **av)
{
    const char *node = getenv("SLURMD_NODENAME");
    char jobarg[16], *argv[] = { "macnode", "cleanup", "--agent", agent, "--job", jobarg, NULL };
    tbm_conf_t conf;
    tbm_err_t err = { { 0 } };
    uint32_t job = 0;
    int bridge;

    tbm_spank_remote_args(ac, av);
    tbm_spank_bridge_args(ac, av);
    if (!node || spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS || tbm_spank_load_conf(&conf, &err) < 0)
        return 0;
    bridge = agent_of(&conf, node);
    tbm_conf_free(&conf);
    if (!bridge)
        return 0;
    snprintf(jobarg, sizeof(jobarg), "%u", job);
    if (run_macnode(argv, NULL, 0) < 0)
        slurm_error("tbmesh: job %u: macnode cleanup on %s (%s) failed; the agent sweeps leftovers itself", job,
                    node, agent);
    return 0;
}
