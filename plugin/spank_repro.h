/* spank_repro.h: reproducibility records' hooks (spank_repro.c). */
#ifndef SPANK_REPRO_H
#define SPANK_REPRO_H

#include <slurm/spank.h>

/* Reproducibility records: --repro-* options and the submit half (init, post_opt: submit
 * side); the batch step's start (root), each task's exit status, and each step's end (root; the batch step's
 * end completes the record). */
int tbm_spank_repro_init(spank_t sp, int ac, char **av);
int tbm_spank_repro_post_opt(spank_t sp);
int tbm_spank_repro_start(spank_t sp);
int tbm_spank_repro_task_exit(spank_t sp);
int tbm_spank_repro_exit(spank_t sp);

#endif
