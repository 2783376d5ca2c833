/* report_records.c: the report's view of the reproducibility record store. The store is opened as
 * `tbmesh repro` opens it (RecordDir and Records= from tbmesh.conf, the cluster from slurm.conf); each Mac
 * job of the period is then looked up by its id (DIR/CLUSTER/JOB.json: one open, which fails at once for a
 * job without a record), read, checked against the schema and its MUNGE seal checked, as `tbmesh repro
 * verify` does. The store's folders are not listable by users (0711), so nothing is listed. */
#include "config.h"
#include "report_records.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "json_read.h"
#include "record.h"

void report_records_open(report_records_t *rr, const char *tbmesh_conf, const char *slurm_conf,
                         const char *cluster)
{
    tbm_err_t err = { { 0 } };
    struct stat s;

    memset(rr, 0, sizeof(*rr));
    if (tbm_store_open(&rr->st, tbmesh_conf, slurm_conf, NULL, &err) < 0) {
        tbm_record_fmt(rr->why_not, sizeof(rr->why_not),
                       "records are not in use: the record store's settings do not read (%s), so "
                       "reproducibility coverage is left out", err.msg);
        return;
    }
    if (cluster && *cluster)
        tbm_record_fmt(rr->st.cluster, sizeof(rr->st.cluster), "%s", cluster);
    tbm_record_fmt(rr->cluster_dir, sizeof(rr->cluster_dir), "%s/%s", rr->st.set.dir, rr->st.cluster);
    if (!rr->st.set.records) {
        tbm_record_fmt(rr->why_not, sizeof(rr->why_not),
                       "records are not in use (Records=no in tbmesh.conf): reproducibility coverage is left out, "
                       "and Mac jobs' CPU efficiency is Slurm's own figure, which in bridge mode describes the "
                       "forwarder on the bridge host, not the work on the Mac");
        return;
    }
    if (stat(rr->cluster_dir, &s) < 0 || !S_ISDIR(s.st_mode)) {
        tbm_record_fmt(rr->why_not, sizeof(rr->why_not),
                       "records are not in use: there is no record store at %s (RecordDir in tbmesh.conf; it is "
                       "made by the first Mac job's record), so reproducibility coverage is left out",
                       rr->cluster_dir);
        return;
    }
    rr->in_use = 1;
}

/* What the record says the job used: its per-task CPU use summed (-1 when it holds none: absent in bridge
 * mode), its GPU-seconds and energy when its tasks reported them (lib/record.h tbm_usage_totals_t). */
static void record_use(json_object *rec, tbm_ruse_t *use)
{
    tbm_usage_totals_t t;

    tbm_record_usage_totals(rec, &t);
    use->cpu_used_s = t.cpu_s;
    use->gpu = t.gpu_parts > 0, use->gpu_s = t.gpu_s;
    use->energy = t.energy_parts > 0, use->energy_j = t.energy_j;
}

static void unsealed(report_records_t *rr, const char *why)
{
    if (!rr->unsealed++)
        tbm_record_fmt(rr->first_unsealed, sizeof(rr->first_unsealed), "%s", why);
}

tbm_coverage_t report_records_coverage(void *ctx, uint32_t jobid, tbm_ruse_t *use)
{
    report_records_t *rr = ctx;
    char path[TBM_RECORD_PATH_MAX + 128], sha[TBM_SHA256_HEX];
    tbm_err_t err = { { 0 } };
    size_t len, slen;
    char *text, *seal;
    json_object *rec;
    const char *phase;
    int complete;

    use->cpu_used_s = -1;
    if (!rr->in_use)
        return TBM_COV_UNKNOWN;
    rr->looked++;
    tbm_store_path(&rr->st, jobid, "json", path, sizeof(path));
    if (!(text = tbm_read_file(path, TBM_RECORD_MAX, &len, &err))) {
        if (errno == ENOENT) {
            rr->absent++;
            return TBM_COV_ABSENT;
        }
        rr->unreadable++;               /* there, but not the caller's to read */
        return TBM_COV_PRESENT;
    }
    tbm_sha256_hex(text, len, sha);
    rec = tbm_record_parse(text, len, &err);
    free(text);
    if (!rec) {
        char why[300];
        tbm_record_fmt(why, sizeof(why), "job %u: %s", jobid, err.msg);
        unsealed(rr, why);
        return TBM_COV_PRESENT;
    }
    record_use(rec, use);
    phase = tbm_json_str(tbm_json_typed(rec, "job", json_type_object), "phase");
    complete = tbm_record_phase_complete(phase);
    json_object_put(rec);
    if (!complete) {
        rr->incomplete++;
        return TBM_COV_PRESENT;
    }
    tbm_store_path(&rr->st, jobid, "seal", path, sizeof(path));
    if (!(seal = tbm_read_file(path, 64 * 1024, &slen, &err))) {
        char why[300];
        tbm_record_fmt(why, sizeof(why), "job %u has a record but no seal it may read (%s)", jobid, err.msg);
        unsealed(rr, why);
        return TBM_COV_PRESENT;
    }
    while (slen > 0 && (seal[slen - 1] == '\n' || seal[slen - 1] == ' '))
        seal[--slen] = '\0';
    if (tbm_seal_check(&rr->st, seal, jobid, sha, NULL, &err) < 0) {
        free(seal);
        unsealed(rr, err.msg);
        return TBM_COV_PRESENT;
    }
    free(seal);
    rr->verified++;
    return TBM_COV_VERIFIED;
}

void report_records_notes(const report_records_t *rr, tbm_report_t *r)
{
    char note[768];

    if (!rr->in_use)
        return;
    if (rr->unreadable) {
        tbm_record_fmt(note, sizeof(note),
                       "%llu Mac jobs have a record you may not read (only the job's user, root and the "
                       "RecordReaders group of tbmesh.conf may): counted as with a record, not verified; run "
                       "the report as root or as a member of RecordReaders", (unsigned long long)rr->unreadable);
        tbm_report_note(r, note, NULL);
    }
    if (rr->incomplete) {
        tbm_record_fmt(note, sizeof(note),
                       "%llu Mac jobs have an incomplete record (the job has not ended, or its end was not "
                       "recorded: `tbmesh repro sync` completes them): counted as with a record, not verified",
                       (unsigned long long)rr->incomplete);
        tbm_report_note(r, note, NULL);
    }
    if (rr->unsealed) {
        tbm_record_fmt(note, sizeof(note),
                       "%llu Mac jobs have a record that does not verify (see tbmesh repro verify); the "
                       "first: %s", (unsigned long long)rr->unsealed, rr->first_unsealed);
        tbm_report_note(r, note, NULL);
    }
}
