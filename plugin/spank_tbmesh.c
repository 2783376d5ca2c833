/* spank_tbmesh.c: spank_tbmesh.so, the SPANK plug-in of slurm-tbmesh: a dispatcher on the SPANK context.
 * Each context's work lives in its own file, with its own header: spank_submit.c (srun, salloc, sbatch),
 * spank_step.c (the step on a node, described once; every other file reads that description and none writes
 * it), spank_remote.c (a Mac job's MLX environment), spank_bridge.c (forwarding a bridge-mode Mac's tasks to
 * its agent), spank_repro.c (the reproducibility record's hooks). Only this file calls into all of them, and
 * none calls back. */
#include "config.h"
#include "spank_bridge.h"
#include "spank_remote.h"
#include "spank_repro.h"
#include "spank_step.h"
#include "spank_submit.h"

#include <stdlib.h>

#include "tbm_slurm.h"

SPANK_PLUGIN(tbmesh, 1)

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    switch (spank_context()) {
    case S_CTX_REMOTE:
        tbm_spank_read_args(ac, av);
        if (tbm_spank_submit_init(sp, ac, av) < 0 || tbm_spank_repro_init(sp, ac, av) < 0)
            return -1;   /* the step's --mlx-backend and --repro-* are read back here */
        tbm_spank_step_describe(sp);
        return tbm_spank_repro_start(sp);
    case S_CTX_LOCAL:
    case S_CTX_ALLOCATOR:
        return tbm_spank_submit_init(sp, ac, av) < 0 ? -1 : tbm_spank_repro_init(sp, ac, av);
    default:
        return 0;
    }
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    switch (spank_context()) {
    case S_CTX_LOCAL:
    case S_CTX_ALLOCATOR:
        return tbm_spank_submit_post_opt(sp, ac, av) < 0 ? -1 : tbm_spank_repro_post_opt(sp);
    case S_CTX_REMOTE:
        return tbm_spank_step_plan(sp);
    default:
        return 0;
    }
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    return spank_context() == S_CTX_REMOTE ? tbm_spank_remote_user_init(sp) : 0;
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    return spank_context() == S_CTX_REMOTE ? tbm_spank_bridge_task_privileged(sp) : 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (spank_context() != S_CTX_REMOTE)
        return 0;
    tbm_spank_remote_task_init(sp);   /* a refused step's task ends here */
    return tbm_spank_bridge_task_init(sp);
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (spank_context() != S_CTX_REMOTE)
        return 0;
    tbm_spank_bridge_task_exit(sp);
    return tbm_spank_repro_task_exit(sp);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)sp;
    (void)ac;
    (void)av;
    if (spank_context() == S_CTX_REMOTE) {
        tbm_spank_repro_exit(sp);   /* before the step's files go */
        tbm_spank_remote_exit();
        tbm_spank_step_fini();
    }
    return 0;
}

/* Job prolog (slurmd, root): job_submit's tag, kept for the job's steps. Never fails the node. */
int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
    uint32_t job = 0;

    if (spank_context() != S_CTX_JOB_SCRIPT || spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS)
        return 0;
    tbm_spank_read_args(ac, av);
    tbm_spank_tag_keep(job);
    return 0;
}

/* Job epilog (slurmd, root): what the job left on a Mac goes, whatever its processes did to leave their
 * process groups. */
int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
    const char *node = getenv("SLURMD_NODENAME");
    char agent[TBM_HOSTNAME_MAX + 8];
    tbm_err_t err = { { 0 } };
    tbm_conf_t conf;
    uint32_t job = 0;
    uid_t uid = 0;
    int kind, exclusive;

    if (spank_context() != S_CTX_JOB_SCRIPT)
        return 0;
    tbm_spank_read_args(ac, av);
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS)
        return 0;
    if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
        uid = 0;   /* not known: nothing of the user's is looked for beyond the job's tasks */
    tbm_spank_tag_drop(job);
    if (!node)
        return 0;
    if (tbm_spank_load_conf(&conf, &err) < 0) {
        slurm_error("tbmesh: job %u: %s: nothing cleaned up on %s", job, err.msg, node);
        return 0;
    }
    kind = tbm_spank_node_kind(&conf, node, agent, sizeof(agent));
    exclusive = conf.exclusive_macs;
    tbm_conf_free(&conf);
    if (kind == TBM_SPANK_BRIDGE_MAC)
        tbm_spank_bridge_epilog(job, node, agent, uid, exclusive);
    else if (kind == TBM_SPANK_DIRECT_MAC)
        tbm_spank_remote_epilog(job, node, uid, exclusive);
    return 0;
}
