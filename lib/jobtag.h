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

/* Is this entry of a job's SPANK environment ("NAME=value") a tag, under either name the job's prolog could
 * read it by: TBMESH_JOB (Slurm gives it to the prolog as SPANK_TBMESH_JOB) or SPANK_TBMESH_JOB itself (Slurm
 * passes a name that already starts with SPANK_ as it is)? job_submit removes every such entry a request
 * brings before it gives the job its own. */
int tbm_jobtag_env_is_tag(const char *entry);

/* "v1 macs=4 backend=jaccl" into buf. Returns 0, or -1 when it does not fit. */
int tbm_jobtag_format(const tbm_jobtag_t *t, char *buf, size_t len);

/* Read a tag. Returns 0, or -1 with err naming what is wrong (unknown version, missing or bad field). */
int tbm_jobtag_parse(const char *s, tbm_jobtag_t *t, tbm_err_t *err);

/* The tag as a job's prolog keeps it on a node: the tag on its first line, then "run=N" with the job's run
 * (Slurm's restart count, SLURM_JOB_RESTART_COUNT in the prolog's and epilog's environment) when known. A
 * requeued job keeps its id, and the epilog of one run may come after the prolog of the next on a node; the
 * run tells the epilog whether the kept tag is its own run's (or an earlier one's) to remove, or a later
 * run's to leave. Runs are 0 to 65535; -1: not known. */
#define TBM_JOBTAG_KEPT_MAX (TBM_JOBTAG_MAX + 16)
#define TBM_JOBTAG_RUN_MAX  65535

/* Into buf. Returns 0, or -1 when it does not fit or run is out of range. */
int tbm_jobtag_kept_format(const char *tag, long run, char *buf, size_t len);

/* Split a kept text into its tag (copied into tag) and run (-1 when it names none). Returns 0, or -1 with err
 * (a tag that does not fit, a bad run line). */
int tbm_jobtag_kept_parse(const char *text, char *tag, size_t tag_len, long *run, tbm_err_t *err);

/* Does the epilog of run epilog_run (-1: not known) remove this kept text? Yes unless the text is a later
 * run's; a text that cannot be read goes too. */
int tbm_jobtag_kept_drop(const char *text, long epilog_run);

/* A run as Slurm gives it in the environment ("0".."65535"): the number, or -1 for NULL, empty or anything
 * else. */
long tbm_jobtag_run_parse(const char *s);

#endif
