/* report_records.h: what `tbmesh report` asks of the reproducibility record store (acct/store.h): is it in
 * use, and for one Mac job, is its record absent, present or complete and verified (and the per-task CPU use,
 * GPU-hours and energy it holds). One look-up of the job's file per Mac job: no listing, nothing kept per job. */
#ifndef TBM_REPORT_RECORDS_H
#define TBM_REPORT_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "store.h"

typedef struct report_records {
    int in_use;                   /* a record store is configured (Records=yes) and its cluster folder exists */
    char why_not[512];            /* when not in use: the note the report shows */
    tbm_store_t st;
    char cluster_dir[TBM_RECORD_PATH_MAX + 80];
    /* what the look-ups found */
    uint64_t looked, absent, unreadable, incomplete, unsealed, verified;
    char first_unsealed[320];     /* why the first record that did not verify did not */
} report_records_t;

/* Open the store named by tbmesh.conf (tbmesh_conf) and slurm.conf (its ClusterName, munged's socket);
 * cluster, when given, names the cluster whose records are read instead. Never fails: when records are
 * off or there is no store, in_use is 0 and why_not says so ("records are not in use: ..."). */
void report_records_open(report_records_t *rr, const char *tbmesh_conf, const char *slurm_conf,
                         const char *cluster);

/* Coverage of Mac job `jobid` (a tbm_coverage_fn; ctx is the report_records_t): TBM_COV_ABSENT without a
 * record, TBM_COV_VERIFIED for a complete record (phase end or sync) whose seal checks, TBM_COV_PRESENT for
 * any other record (incomplete, unsealed, changed, or not readable by the caller). use->cpu_used_s gets the
 * record's per-task CPU use (user + system) summed, or -1 when it does not hold it; use->gpu_s and
 * use->energy_j the job's GPU-seconds and energy when its tasks reported them (use->gpu, use->energy; per node
 * and step the largest task's, lib/record.h). The report counts them only for a verified record (and the CPU
 * use only when it fits the job's allocation; lib/report_trust.c). */
tbm_coverage_t report_records_coverage(void *ctx, uint32_t jobid, tbm_ruse_t *use);

/* The notes the report should carry about what the look-ups found (records the caller may not read,
 * records that did not verify and why); none when every record read and verified. */
void report_records_notes(const report_records_t *rr, tbm_report_t *r);

#endif
