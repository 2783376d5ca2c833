/* spank_remote.h: a Mac job's MLX environment on each node (spank_remote.c). */
#ifndef SPANK_REMOTE_H
#define SPANK_REMOTE_H

#include <stdint.h>
#include <sys/types.h>
#include <slurm/spank.h>

int tbm_spank_remote_user_init(spank_t sp);    /* export, write direct-mode files (as the user) */
int tbm_spank_remote_task_init(spank_t sp);    /* a refused step: its task fails, saying why */
void tbm_spank_remote_exit(void);              /* removes what the step wrote */
/* Direct mode: what the job left outside Slurm's process groups ends (`macnode cleanup --local`: every process
 * of uid when exclusive and the user has no other job here), then the job's folder goes. */
void tbm_spank_remote_epilog(uint32_t job, const char *node, uid_t uid, int exclusive);

#endif
