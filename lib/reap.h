/* reap.h: whom to end on a Mac when a job has ended, whatever its processes did to leave their process group
 * (setsid, a double fork, nohup): decided from the Mac's process table (macnode/procs.h reads it) and what
 * the caller knows of the job. Pure.
 *
 * When the Macs are the jobs' own (ExclusiveMacs=yes) and the job's user has no other job on this Mac, every
 * process of that user goes: a Mac the next job gets whole keeps nothing of the last one. Otherwise (a shared
 * Mac, or another job of the same user here) only the job's own known processes go: those descended from
 * the roots the caller names (its tasks' servers, where the agent is their subreaper on Linux). Root's
 * processes and other users' never go, nor the caller and its ancestors, nor pid 1. */
#ifndef TBM_REAP_H
#define TBM_REAP_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

#define TBM_PROC_UID_MIXED UINT32_MAX   /* a process whose real and effective uids differ: nobody's to end */
#define TBM_REAP_DEPTH     4096         /* longest chain of parents followed */

/* One process of the table. */
typedef struct tbm_proc {
    long pid, ppid;
    uint32_t uid;        /* real and effective uid, or TBM_PROC_UID_MIXED */
    int stepd;           /* named slurmstepd: a live one at a job's end serves another job (direct mode), if
                          * it is root's (ruid 0): anyone may name a process so */
    uint32_t ruid;       /* real uid */
} tbm_proc_t;

/* What the caller knows of the job that ended. */
typedef struct tbm_reap_ask {
    uint32_t job, uid;   /* the job and its user */
    int exclusive;       /* ExclusiveMacs=yes: the Mac was the job's alone */
    int other_jobs;      /* other jobs of the same user the caller knows on this Mac (its records) */
    long self;           /* the caller: it and its ancestors are never named */
    const long *roots;   /* the job's known processes (tasks' servers or leaders) */
    size_t n_roots;
} tbm_reap_ask_t;

/* The decision: whom to end, and why (for the log). */
typedef struct tbm_reap {
    long *pids;          /* malloc'd; n of them */
    size_t n;
    int by_uid;          /* 1: every process of the user; 0: the job's known processes only */
    char why[TBM_ERR_MAX];
} tbm_reap_t;

/* Decide whom to end among the n processes of t. 0 with *out (tbm_reap_free it), or -1 with err (out of
 * memory). */
int tbm_reap_plan(const tbm_proc_t *t, size_t n, const tbm_reap_ask_t *ask, tbm_reap_t *out, tbm_err_t *err);

void tbm_reap_free(tbm_reap_t *r);

#endif
