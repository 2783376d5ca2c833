/* repro_sync.h: `tbmesh repro sync` (root): what jobs could not write themselves, from Slurm's accounting. */
#ifndef TBM_REPRO_SYNC_H
#define TBM_REPRO_SYNC_H

#include "store.h"

/* Jobs since `since` (sacct -S; NULL: sacct's default) or the comma list `jobs`: a Mac job (TBM1 in its
 * AdminComment) that ended without an end record gets one from its summary and Slurm's accounting
 * (cancelled while pending, node failure, a batch host lost; tbm_record_of_summary says what it holds); a record whose state Slurm saw end otherwise
 * is brought up to date. Prints one line per record written. Exit status: 0, or 1 when a job failed. */
int repro_sync(const tbm_store_t *st, const char *since, const char *jobs);

/* The job's state and AdminComment as Slurm's accounting holds them (sacct); the comment malloc'd. 0, or -1
 * when sacct cannot say (its reason on stderr) or does not know the job. */
int repro_acct_of(uint32_t job, char *state, size_t len, char **admin_comment);

#endif
