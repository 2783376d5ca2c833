/* spank_tbmesh.c: spank_tbmesh.so, the SPANK plug-in of slurm-tbmesh: a dispatcher on the SPANK context;
 * each context's work lives in its own file (spank_submit.c: srun, salloc and sbatch; spank_remote.c:
 * slurmstepd on the nodes). */
#include "config.h"
#include "spank_tbmesh.h"

SPANK_PLUGIN(tbmesh, 1)

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    switch (spank_context()) {
    case S_CTX_REMOTE:
        tbm_spank_remote_args(ac, av);
        tbm_spank_bridge_args(ac, av);
        if (tbm_spank_submit_init(sp, ac, av) < 0 || tbm_spank_repro_init(sp, ac, av) < 0)
            return -1;   /* the step's --mlx-backend is read back here */
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
    default:
        return 0;
    }
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    return spank_context() == S_CTX_REMOTE ? tbm_spank_remote_user_init(sp, ac, av) : 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)sp;
    (void)ac;
    (void)av;
    if (spank_context() == S_CTX_REMOTE) {
        tbm_spank_repro_exit(sp);   /* before the step's files go */
        tbm_spank_remote_exit();
        tbm_spank_bridge_exit();
    }
    return 0;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    return tbm_spank_repro_task_exit(sp);
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
    return spank_context() == S_CTX_REMOTE ? tbm_spank_bridge_task_init(sp) : 0;
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
    return spank_context() == S_CTX_JOB_SCRIPT ? tbm_spank_bridge_epilog(sp, ac, av) : 0;
}
