/* spank_tbmesh.c: spank_tbmesh.so, the SPANK plug-in of slurm-tbmesh: a dispatcher on the SPANK context;
 * each context's work lives in its own file (spank_submit.c: srun, salloc and sbatch). */
#include "config.h"
#include "spank_tbmesh.h"

SPANK_PLUGIN(tbmesh, 1)

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    switch (spank_context()) {
    case S_CTX_LOCAL:
    case S_CTX_ALLOCATOR:
    case S_CTX_REMOTE:   /* options must be known wherever they are read back */
        return tbm_spank_submit_init(sp, ac, av);
    default:
        return 0;
    }
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    switch (spank_context()) {
    case S_CTX_LOCAL:
    case S_CTX_ALLOCATOR:
        return tbm_spank_submit_post_opt(sp, ac, av);
    default:
        return 0;
    }
}
