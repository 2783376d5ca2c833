/* spank_tbmesh.h: what the per-context files of spank_tbmesh.so share. */
#ifndef SPANK_TBMESH_H
#define SPANK_TBMESH_H

#include <slurm/spank.h>

#define TBM_SPANK_NAME "tbmesh"
#define TBM_BACKEND_ENV "TBMESH_MLX_BACKEND"   /* job control env: reaches job_submit and the prolog */

/* Submit side (srun, salloc, sbatch): options and what they tell the controller. */
int tbm_spank_submit_init(spank_t sp, int ac, char **av);
int tbm_spank_submit_post_opt(spank_t sp, int ac, char **av);

#endif
