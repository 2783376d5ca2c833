/* report_records.h: what `tbmesh report` asks of the reproducibility record store: is it in use, and for
 * one job, is its record absent, present or verified (and the per-task CPU use it holds). */
#ifndef TBM_REPORT_RECORDS_H
#define TBM_REPORT_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "report.h"

typedef struct report_records {
    int in_use;                   /* a record store is configured and readable */
    char why_not[256];            /* when not in use: the note the report shows */
    char dir[4096];               /* the store's folder */
} report_records_t;

/* Find the record store named by tbmesh.conf. Never fails: when there is none, in_use is 0 and why_not says
 * so ("records are not in use"). */
void report_records_open(report_records_t *rr, const tbm_conf_t *conf);

/* Coverage of job `jobid` (TBM_COV_UNKNOWN when not in use); *cpu_used_s gets the record's per-task CPU
 * use summed, or -1 when the record does not hold it. */
tbm_coverage_t report_records_coverage(const report_records_t *rr, uint32_t jobid, double *cpu_used_s);

#endif
