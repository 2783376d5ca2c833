/* spank_tbmesh.h: what the per-context files of spank_tbmesh.so share. */
#ifndef SPANK_TBMESH_H
#define SPANK_TBMESH_H

#include <stddef.h>
#include <stdint.h>
#include <slurm/spank.h>

#include "tbmesh.h"

#define TBM_SPANK_NAME "tbmesh"
#define TBM_BACKEND_ENV "TBMESH_MLX_BACKEND"   /* job control env: reaches job_submit and the prolog */

/* Submit side (srun, salloc, sbatch): options and what they tell the controller. */
int tbm_spank_submit_init(spank_t sp, int ac, char **av);
int tbm_spank_submit_post_opt(spank_t sp, int ac, char **av);

/* The --mlx-backend given to this command or step, if any: 1 and the name in buf, else 0. */
int tbm_spank_backend(char *buf, size_t len);

/* Nodes (slurmstepd): plug-in arguments (conf=PATH) and each step's MLX environment. */
void tbm_spank_remote_args(int ac, char **av);
int tbm_spank_remote_user_init(spank_t sp, int ac, char **av);
void tbm_spank_remote_exit(void);   /* removes what the step wrote */

/* tbmesh.conf, from the plug-in's conf= argument or beside slurm.conf. */
int tbm_spank_load_conf(tbm_conf_t *conf, tbm_err_t *err);

/* The step's nodes in Slurm's order (Slurm's hostlist); free with tbm_spank_free_nodes. */
char **tbm_spank_step_nodes(spank_t sp, size_t *n, tbm_err_t *err);
void tbm_spank_free_nodes(char **names, size_t n);

/* Bridge mode (spank_bridge.c): arguments (macnode=, munge_socket=, jobs_dir=), the agent's job folder,
 * the step's files staged for `macnode prepare`, the grants (as root) and the forwarder (as the user). */
void tbm_spank_bridge_args(int ac, char **av);
void tbm_spank_bridge_job_dir(uint32_t job_id, char *buf, size_t len);
int tbm_spank_bridge_stage(const tbm_envplan_t *plan, tbm_err_t *err);
int tbm_spank_bridge_task_privileged(spank_t sp);
int tbm_spank_bridge_task_init(spank_t sp);
void tbm_spank_bridge_exit(void);
int tbm_spank_bridge_epilog(spank_t sp, int ac, char **av);   /* job epilog: macnode cleanup */

/* Reproducibility records (spank_repro.c): --repro-* options and the submit half (init, post_opt: submit
 * side); the batch step's start (root), each task's exit status, and each step's end (root; the batch step's
 * end completes the record). */
int tbm_spank_repro_init(spank_t sp, int ac, char **av);
int tbm_spank_repro_post_opt(spank_t sp);
int tbm_spank_repro_start(spank_t sp);
int tbm_spank_repro_task_exit(spank_t sp);
int tbm_spank_repro_exit(spank_t sp);

#endif
