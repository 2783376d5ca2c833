/* spank_submit.h: spank_tbmesh on the submit side (spank_submit.c): --mlx-backend. */
#ifndef SPANK_SUBMIT_H
#define SPANK_SUBMIT_H

#include <stddef.h>
#include <slurm/spank.h>

/* Submit side (srun, salloc, sbatch): options and what they tell the controller. */
int tbm_spank_submit_init(spank_t sp, int ac, char **av);
int tbm_spank_submit_post_opt(spank_t sp, int ac, char **av);

/* The --mlx-backend given to this command or step, if any: 1 and the name in buf, else 0. */
int tbm_spank_backend(char *buf, size_t len);

#endif
