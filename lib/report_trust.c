/* report_trust.c: which Mac jobs' CPU use, as their records give it, the report's efficiency tables count (see
 * report.h): a record that verified, whose use fits what the job's CPUs could give while it ran; and the note
 * that says how many were left out and why, so that no figure is shown without its reason. */
#include "report.h"

#include <stdio.h>

double tbm_rtrust_cpu(tbm_rtrust_t *t, const tbm_rjob_t *j, double whole_s)
{
    double could = (whole_s + TBM_RTRUST_SLACK_S) * j->alloc_cpus;

    if (j->rec_cpu_used_s < 0 || !j->alloc_nodes || !j->start)
        return -1;
    if (j->coverage != TBM_COV_VERIFIED) {
        t->unverified++;
        return -1;
    }
    if (j->rec_cpu_used_s > could) {
        if (!t->over++) {
            t->over_job = j->id;
            t->over_pct = whole_s * j->alloc_cpus > 0 ? 100.0 * j->rec_cpu_used_s / (whole_s * j->alloc_cpus) : 0;
        }
        return -1;
    }
    return j->rec_cpu_used_s;
}

int tbm_rtrust_note(const tbm_rtrust_t *t, char *buf, size_t len)
{
    char unverified[200] = "", over[480] = "", pct[32] = "";

    buf[0] = '\0';
    if (!t->unverified && !t->over)
        return 0;
    if (t->unverified)
        snprintf(unverified, sizeof(unverified), "%llu whose record does not verify (anyone may have written its "
                 "CPU use: see tbmesh repro verify)", (unsigned long long)t->unverified);
    if (t->over_pct > 0)
        snprintf(pct, sizeof(pct), ", %.0f%%", t->over_pct);
    if (t->over)
        snprintf(over, sizeof(over),
                 "%s%llu whose record shows more CPU time than the job's CPUs could give while it ran (the first: "
                 "job %u%s of its allocated CPU time): used above allocated is not a figure to trust; look at the "
                 "job with tbmesh repro show, and check that slurm.conf gives the Mac all its CPUs",
                 t->unverified ? "; " : "", (unsigned long long)t->over, (unsigned)t->over_job, pct);
    snprintf(buf, len, "Mac jobs' CPU efficiency from their records (mac_record_alloc_h, mac_record_used_h, "
             "mac_record_eff_pct) counts only records that verify and whose CPU use fits the job's allocation; "
             "left out: %s%s", unverified, over);
    return 1;
}

void tbm_rtrust_gpu(tbm_rtrust_t *t, const tbm_rjob_t *j, double *gpu_s, double *energy_j)
{
    *gpu_s = *energy_j = -1;
    if ((!j->rec_gpu && !j->rec_energy) || !j->alloc_nodes || !j->start)
        return;
    if (j->coverage != TBM_COV_VERIFIED) {
        t->gpu_unverified++;
        return;
    }
    if (j->rec_gpu && j->rec_gpu_s >= 0)
        *gpu_s = j->rec_gpu_s;
    if (j->rec_energy && j->rec_energy_j >= 0)
        *energy_j = j->rec_energy_j;
}

int tbm_rtrust_gpu_note(const tbm_rtrust_t *t, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!t->gpu_unverified)
        return 0;
    snprintf(buf, len, "Mac jobs' GPU-hours and energy from their records (gpu-user, gpu-group: gpu_h, energy_kwh) "
             "count only records that verify; left out: %llu whose record does not verify (anyone may have written "
             "its figures: see tbmesh repro verify)", (unsigned long long)t->gpu_unverified);
    return 1;
}
