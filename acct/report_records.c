/* report_records.c: the report's view of the reproducibility record store. tbmesh.conf names no record
 * store yet (the records are not part of this build), so every report says "records are not in use" and
 * omits the coverage column; once the store exists, report_records_open finds its folder in the
 * configuration and report_records_coverage reads and verifies a job's record through the records' own
 * reader. Nothing else in the report changes. */
#include "config.h"
#include "report_records.h"

#include <stdio.h>

void report_records_open(report_records_t *rr, const tbm_conf_t *conf)
{
    (void)conf;
    rr->in_use = 0;
    rr->dir[0] = 0;
    snprintf(rr->why_not, sizeof(rr->why_not),
             "records are not in use: reproducibility coverage is left out, and Mac jobs' CPU efficiency is "
             "Slurm's own figure, which in bridge mode describes the forwarder on the bridge host, not the work "
             "on the Mac");
}

tbm_coverage_t report_records_coverage(const report_records_t *rr, uint32_t jobid, double *cpu_used_s)
{
    (void)jobid;
    *cpu_used_s = -1;
    return rr->in_use ? TBM_COV_ABSENT : TBM_COV_UNKNOWN;
}
