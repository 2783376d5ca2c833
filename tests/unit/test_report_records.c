/* test_report_records.c: unit tests of acct/report_records.c, the usage report's look-ups in a real record
 * store folder: records off, no store, a job without a record, an incomplete record, a record that does not
 * read, a complete record whose seal does not check (no munged here: a complete, sealed record is the lab's
 * test 0130), the per-task CPU use, GPU-hours and energy a record holds, and the notes the report gets. */
#include "tbm_check.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "report_records.h"
#include "tbm_fixture.h"

static char dir[128], conf[320], slurm[320];

static void setup(void)
{
    char text[400];

    tbm_scratch_make(dir, sizeof(dir), "tbm-report-records");
    snprintf(conf, sizeof(conf), "%s/tbmesh.conf", dir);
    snprintf(slurm, sizeof(slurm), "%s/slurm.conf", dir);
    snprintf(text, sizeof(text), "RecordDir=%s/records\n", dir);
    tbm_scratch_put(dir, "tbmesh.conf", text);
    /* a munged that is not there: seals cannot check */
    snprintf(text, sizeof(text), "ClusterName=tbmlab\nAuthInfo=socket=%s/no-munged.socket\n", dir);
    tbm_scratch_put(dir, "slurm.conf", text);
}

static void teardown(void)
{
    tbm_scratch_remove(dir);
}

static void make_store(void)
{
    char path[400];

    snprintf(path, sizeof(path), "%s/records", dir);
    ck_assert_int_eq(mkdir(path, 0711), 0);
    snprintf(path, sizeof(path), "%s/records/tbmlab", dir);
    ck_assert_int_eq(mkdir(path, 0711), 0);
}

/* The fixture's text with every `from` replaced by `to`, written as records/tbmlab/NAME. */
static void put_record(const char *fixture, const char *name, const char *from, const char *to)
{
    char rel[200], *text, *out, *p, *o;
    size_t len;

    snprintf(rel, sizeof(rel), "records/%s", fixture);
    text = tbm_fixture(rel, &len);
    out = calloc(1, len * 2 + 1);
    ck_assert_ptr_nonnull(out);
    for (p = text, o = out; *p;) {
        if (from && !strncmp(p, from, strlen(from))) {
            o += sprintf(o, "%s", to);
            p += strlen(from);
        } else {
            *o++ = *p++;
        }
    }
    snprintf(rel, sizeof(rel), "records/tbmlab/%s", name);
    tbm_scratch_put(dir, rel, out);
    free(text);
    free(out);
}

START_TEST(no_store_means_not_in_use)
{
    report_records_t rr;
    tbm_ruse_t use;

    report_records_open(&rr, conf, slurm, NULL);
    ck_assert_int_eq(rr.in_use, 0);
    ck_assert_msg(strstr(rr.why_not, "records are not in use: there is no record store at ") == rr.why_not, "%s",
                  rr.why_not);
    ck_assert_ptr_nonnull(strstr(rr.why_not, "/records/tbmlab (RecordDir in tbmesh.conf"));
    ck_assert_int_eq(report_records_coverage(&rr, 1, &use), TBM_COV_UNKNOWN);
    ck_assert_double_eq(use.cpu_used_s, -1);
}
END_TEST

START_TEST(records_off_means_not_in_use)
{
    char text[400];
    report_records_t rr;

    make_store();
    snprintf(text, sizeof(text), "RecordDir=%s/records\nRecords=no\n", dir);
    tbm_scratch_put(dir, "tbmesh.conf", text);
    report_records_open(&rr, conf, slurm, NULL);
    ck_assert_int_eq(rr.in_use, 0);
    ck_assert_msg(strstr(rr.why_not, "records are not in use (Records=no in tbmesh.conf)") == rr.why_not, "%s",
                  rr.why_not);
}
END_TEST

START_TEST(each_job_looked_up)
{
    report_records_t rr;
    tbm_report_opts_t o;
    tbm_report_t *r;
    tbm_err_t err = { { 0 } };
    const char *const *notes;
    tbm_ruse_t use;

    make_store();
    put_record("one-mac.json", "101.json", NULL, NULL);
    tbm_scratch_put(dir, "records/tbmlab/101.seal", "MUNGE:not-a-credential\n");
    put_record("one-mac.json", "102.json", "\"phase\": \"end\"", "\"phase\": \"start\"");
    tbm_scratch_put(dir, "records/tbmlab/103.json", "{ \"schema\": \"tbmesh-record\"");
    put_record("one-mac.json", "104.json", NULL, NULL);          /* complete, never sealed */
    put_record("one-mac.json", "105.json", "\"usage\": [",      /* ... with two tasks of a Mac's agent */
               "\"usage\": [ { \"node\": \"mac05\", \"step\": \"1\", \"task\": 0, \"source\": \"macnoded\", "
               "\"cpu_user_us\": 1, \"cpu_system_us\": 1, \"max_rss_kb\": 1, \"wall_us\": 3600000000, "
               "\"gpu_samples\": 360, \"gpu_mean\": 0.5, \"gpu_peak\": 0.9, \"power_samples\": 360, "
               "\"energy_j\": 720000.0 }, { \"node\": \"mac05\", \"step\": \"1\", \"task\": 1, "
               "\"source\": \"macnoded\", \"cpu_user_us\": 1, \"cpu_system_us\": 1, \"max_rss_kb\": 1, "
               "\"wall_us\": 3600000000, \"gpu_samples\": 360, \"gpu_mean\": 0.25, \"gpu_peak\": 1, "
               "\"power_samples\": 360, \"energy_j\": 700000 },");
    report_records_open(&rr, conf, slurm, NULL);
    ck_assert_msg(rr.in_use == 1, "%s", rr.why_not);

    ck_assert_int_eq(report_records_coverage(&rr, 100, &use), TBM_COV_ABSENT);
    ck_assert_double_eq(use.cpu_used_s, -1);
    ck_assert_int_eq(report_records_coverage(&rr, 101, &use), TBM_COV_PRESENT);   /* the seal does not check */
    ck_assert_double_eq_tol(use.cpu_used_s, 1.23, 1e-9);                                      /* 1.2 s user + 0.03 s system */
    ck_assert_int_eq(report_records_coverage(&rr, 102, &use), TBM_COV_PRESENT);   /* incomplete */
    ck_assert_int_eq(report_records_coverage(&rr, 103, &use), TBM_COV_PRESENT);   /* does not read */
    ck_assert_double_eq(use.cpu_used_s, -1);
    ck_assert_int_eq(report_records_coverage(&rr, 104, &use), TBM_COV_PRESENT);   /* no seal */
    ck_assert(!use.gpu && !use.energy);                                            /* Slurm's figures only */
    /* two tasks of one step on one Mac, each with the whole Mac's figures: the larger counts, not the sum */
    ck_assert_int_eq(report_records_coverage(&rr, 105, &use), TBM_COV_PRESENT);
    ck_assert_double_eq_tol(use.cpu_used_s, 1.23 + 4e-6, 1e-9);
    ck_assert(use.gpu && use.energy);
    ck_assert_double_eq_tol(use.gpu_s, 1800, 1e-9);                               /* 0.5 x 1 h */
    ck_assert_double_eq_tol(use.energy_j, 720000, 1e-9);
    ck_assert_uint_eq(rr.looked, 6);
    ck_assert_uint_eq(rr.absent, 1);
    ck_assert_uint_eq(rr.incomplete, 1);
    ck_assert_uint_eq(rr.unsealed, 4);
    ck_assert_uint_eq(rr.verified, 0);
    ck_assert_msg(strstr(rr.first_unsealed, "the seal of job 101 is not a valid MUNGE credential") != NULL, "%s",
                  rr.first_unsealed);

    memset(&o, 0, sizeof(o));
    o.period.since = 1000;
    o.period.until = 2000;
    o.now = 3000;
    r = tbm_report_new(&o, &err);
    ck_assert_ptr_nonnull(r);
    report_records_notes(&rr, r);
    ck_assert_uint_eq(tbm_report_notes(r, &notes), 2);
    ck_assert_msg(strstr(notes[0], "1 Mac jobs have an incomplete record") == notes[0], "%s", notes[0]);
    ck_assert_msg(strstr(notes[1], "4 Mac jobs have a record that does not verify (see tbmesh repro verify); the "
                                   "first: the seal of job 101") == notes[1], "%s", notes[1]);
    tbm_report_free(r);
}
END_TEST

START_TEST(another_cluster_by_name)
{
    report_records_t rr;

    make_store();
    report_records_open(&rr, conf, slurm, "othercluster");
    ck_assert_int_eq(rr.in_use, 0);
    ck_assert_ptr_nonnull(strstr(rr.why_not, "/records/othercluster (RecordDir"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("report_records");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, no_store_means_not_in_use);
    tcase_add_test(tc, records_off_means_not_in_use);
    tcase_add_test(tc, each_job_looked_up);
    tcase_add_test(tc, another_cluster_by_name);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(suite)
