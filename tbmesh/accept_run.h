/* accept_run.h: what `tbmesh accept` runs: a program with its output captured and a time limit, and a step's
 * Slurm job (salloc from the login side, the work under srun on the Macs) with its job id. */
#ifndef GRES_ACCEPT_RUN_H
#define GRES_ACCEPT_RUN_H

#include <stddef.h>
#include <stdint.h>

#define ACCEPT_OUT_MAX (8u << 20)   /* output kept of one program */

typedef struct accept_out {
    char *out;                   /* stdout, NUL-terminated (malloc'd; "" when none) */
    char *err;                   /* stderr, the same */
    int status;                  /* exit status, 128+N when killed by signal N, -1 when it could not start */
    int timed_out;               /* killed at its time limit */
} accept_out_t;

/* Run argv (no shell; argv[0] looked up in PATH) with stdin from /dev/null, at most `seconds`. Returns the
 * exit status as in accept_out_t (the output in *o, free with accept_out_free). */
int accept_run(char *const argv[], int seconds, accept_out_t *o);
void accept_out_free(accept_out_t *o);

/* A step's job: `salloc` with these options (NULL-terminated, after the ones every step has) running
 * `sh -c SCRIPT`; waits at most wait_s for the Macs, runs at most run_min minutes. The job id comes from
 * salloc's own lines (0 when Slurm gave none). */
typedef struct accept_job {
    uint32_t id;
    accept_out_t o;
    int started;                 /* the allocation was granted */
} accept_job_t;

int accept_job_run(const char *name, const char *partition, char *const opts[], const char *script, int wait_s,
                   int run_min, accept_job_t *j);

/* The first line of salloc's error, for messages ("" when none). */
void accept_job_error(const accept_job_t *j, char *buf, size_t len);

#endif
