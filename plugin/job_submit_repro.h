/* job_submit_repro.h: the submit half of a Mac job's reproducibility record, for job_submit/tbmesh. */
#ifndef JOB_SUBMIT_REPRO_H
#define JOB_SUBMIT_REPRO_H

#include <stddef.h>
#include <stdint.h>

/* The TBM1 summary to put in a Mac job's AdminComment at submit (malloc'd): the placement (backend asked for,
 * group constraint) and whether records are on, after checking the submit half that sbatch's spank_tbmesh put
 * in the job control env (it stays there: AdminComment is readable by every user). NULL with why set when
 * the details do not read (refuse the job then), or empty why when memory ran out. */
char *tbm_repro_submit_stamp(char **spank_env, uint32_t n_env, const char *backend, const char *group, char *why,
                             size_t why_len);

#endif
