/* jobtag.h: what job_submit/tbmesh decided about a job, carried forward to the nodes. job_submit adds
 * TBMESH_JOB=<tag> to the SPANK environment of every job it places on Macs (and removes one a user gave any
 * other job); the job's prolog on each node (root) sees it as SPANK_TBMESH_JOB and keeps it in root's state
 * folder, "v1 macs=0 backend=auto" for a job without one; each step reads it there, and only there (the
 * steps' own environment, which the user writes, never carries it). */
#ifndef TBM_JOBTAG_H
#define TBM_JOBTAG_H

#include <stddef.h>

#include "errbuf.h"
#include "validate.h"

#define TBM_JOBTAG_ENV  "TBMESH_JOB"           /* the SPANK job environment name job_submit sets */
#define TBM_SPANK_ENV_PREFIX "SLURM_SPANK_"    /* how a SPANK job variable reaches the steps */
#define TBM_JOBTAG_MAX  64                     /* longest tag text, with its NUL */

typedef struct tbm_jobtag {
    unsigned macs;               /* Macs the job asked for (--gres=tbmesh:N); 0: none */
    tbm_backend_t backend;       /* as asked; auto: the nodes choose */
} tbm_jobtag_t;

/* "v1 macs=4 backend=jaccl" into buf. Returns 0, or -1 when it does not fit. */
int tbm_jobtag_format(const tbm_jobtag_t *t, char *buf, size_t len);

/* Read a tag. Returns 0, or -1 with err naming what is wrong (unknown version, missing or bad field). */
int tbm_jobtag_parse(const char *s, tbm_jobtag_t *t, tbm_err_t *err);

#endif
