/* test_report_trust.c: unit tests of lib/report_trust.c: a Mac job's CPU use from its record counts in the
 * efficiency tables only when the record verified and the use fits the allocation; the report says how many
 * it left out and why, in every format. */
#include "tbm_check.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static const char *conf_text =
    "Group=mini-b Nodes=mac[05-08] Topology=ring Link=tb4 Rdma=no Mode=direct Backends=ring,mpi\n"
    "Cable=mac05:en3,mac06:en2 Addr=10.20.0.1/30,10.20.0.2/30 Speed=40\n"
    "Cable=mac06:en3,mac07:en2 Addr=10.20.0.5/30,10.20.0.6/30 Speed=40\n"
    "Cable=mac07:en3,mac08:en2 Addr=10.20.0.9/30,10.20.0.10/30 Speed=40\n"
    "Cable=mac08:en3,mac05:en2 Addr=10.20.0.13/30,10.20.0.14/30 Speed=40\n";

#define T0 ((time_t)1793491200)   /* 2026-11-01T00:00:00 UTC */
#define H 3600

static tbm_conf_t conf;
static tbm_report_t *rep;

static void setup(void)
{
    tbm_err_t err = { { 0 } };
    tbm_report_opts_t o;

    tbm_conf_init(&conf);
    ck_assert_msg(tbm_conf_parse(conf_text, strlen(conf_text), "t.conf", &conf, NULL, &err) == 0, "%s", err.msg);
    memset(&o, 0, sizeof(o));
    o.period.since = T0;
    o.period.until = T0 + 10 * 86400;
    o.now = T0 + 20 * 86400;
    o.conf = &conf;
    o.records_in_use = 1;
    rep = tbm_report_new(&o, &err);
    ck_assert_msg(rep != NULL, "%s", err.msg);
}

static void teardown(void)
{
    tbm_report_free(rep);
    tbm_conf_free(&conf);
}

/* A Mac job on mac05 that ran `hours` with `cpus` CPUs; its record says `used` seconds. */
static void mac_job(uint32_t id, double hours, uint32_t cpus, double used, tbm_coverage_t cov)
{
    tbm_rjob_t j = { id, "tbm-alice", "lab-ml", "mac", "COMPLETED", "mac05", NULL, T0, T0 + H,
                     T0 + H + (time_t)(hours * H), 1, cpus, 1, 0, cov, used, 0, 0, 0, 0 };
    tbm_err_t err = { { 0 } };

    ck_assert_msg(tbm_report_add_job(rep, &j, &err) == 0, "%s", err.msg);
}

static const char *the_note(void)
{
    const char *const *notes;
    size_t n = tbm_report_notes(rep, &notes), i;

    for (i = 0; i < n; i++)
        if (strstr(notes[i], "Mac jobs' CPU efficiency from their records"))
            return notes[i];
    return NULL;
}

START_TEST(only_verified_records_within_the_allocation_count)
{
    const tbm_ragg_t *a;

    mac_job(1, 1, 4, 2 * H, TBM_COV_VERIFIED);            /* counted: 2 of 4 CPU-hours */
    mac_job(2, 1, 2, 2 * H + 2, TBM_COV_VERIFIED);        /* counted: Slurm's whole seconds allow 2 s per CPU */
    mac_job(3, 1, 4, 3 * H, TBM_COV_PRESENT);             /* left out: the record did not verify */
    mac_job(4, 1, 1, 3.25 * H, TBM_COV_VERIFIED);         /* left out: 325% of its one CPU */
    mac_job(5, 1, 1, 9 * H, TBM_COV_VERIFIED);            /* left out too; the note names the first */
    mac_job(6, 1, 4, -1, TBM_COV_VERIFIED);               /* no CPU use in the record: nothing to leave out */
    a = tbm_report_group(rep, TBM_RDIM_KIND, "mac");
    ck_assert_ptr_nonnull(a);
    ck_assert_double_eq(a->rec_alloc_s, 6 * H);
    ck_assert_double_eq(a->rec_used_s, 4 * H + 2);
    ck_assert_uint_eq(a->rec_verified, 5);
    ck_assert_uint_eq(a->rec_present, 6);
    ck_assert_ptr_nonnull(the_note());
    ck_assert_str_eq(the_note(),
                     "Mac jobs' CPU efficiency from their records (mac_record_alloc_h, mac_record_used_h, "
                     "mac_record_eff_pct) counts only records that verify and whose CPU use fits the job's "
                     "allocation; left out: 1 whose record does not verify (anyone may have written its CPU use: "
                     "see tbmesh repro verify); 2 whose record shows more CPU time than the job's CPUs could give "
                     "while it ran (the first: job 4, 325% of its allocated CPU time): used above allocated is not "
                     "a figure to trust; look at the job with tbmesh repro show, and check that slurm.conf gives "
                     "the Mac all its CPUs");
}
END_TEST

START_TEST(no_note_when_nothing_is_left_out)
{
    mac_job(1, 1, 4, 2 * H, TBM_COV_VERIFIED);
    mac_job(2, 1, 4, -1, TBM_COV_PRESENT);                /* no figure to leave out */
    mac_job(3, 0, 4, 1, TBM_COV_VERIFIED);                /* ended at once: 1 s fits the 2 s slack */
    ck_assert_ptr_null(the_note());
}
END_TEST

/* The note is in the table, JSON and HTML (CSV holds the cells only); no cell shows more than 100%. */
START_TEST(every_format_says_what_was_left_out)
{
    static const tbm_rdim_t dims[] = { TBM_RDIM_KIND };
    char *csv, *json, *table, *html;
    json_object *root, *notes;
    size_t i;
    int found = 0;

    mac_job(1, 1, 4, 2 * H, TBM_COV_VERIFIED);
    mac_job(2, 1, 1, 3.25 * H, TBM_COV_VERIFIED);
    csv = tbm_report_write(rep, TBM_RFMT_CSV, dims, 1);   /* job 2's 325% is in no cell: 2 of 4 CPU-hours */
    ck_assert_msg(strstr(csv, "\nefficiency-group,mini-b,0.0000,0.0000,,5.0000,0.0000,0.0,4.0000,2.0000,50.0,\n") != NULL,
                  "%s", csv);
    json = tbm_report_write(rep, TBM_RFMT_JSON, dims, 1);
    root = json_tokener_parse(json);
    ck_assert(json_object_object_get_ex(root, "notes", &notes));
    for (i = 0; i < json_object_array_length(notes); i++)
        found |= strstr(json_object_get_string(json_object_array_get_idx(notes, i)), "job 2, 325%") != NULL;
    ck_assert(found);
    table = tbm_report_write(rep, TBM_RFMT_TABLE, dims, 1);
    ck_assert_ptr_nonnull(strstr(table, "job 2, 325% of its allocated CPU time"));
    html = tbm_report_write(rep, TBM_RFMT_HTML, dims, 1);
    ck_assert_ptr_nonnull(strstr(html, "job 2, 325% of its allocated CPU time"));
    json_object_put(root);
    free(csv);
    free(json);
    free(table);
    free(html);
}
END_TEST

START_TEST(the_rule_itself)
{
    tbm_rtrust_t t = { 0 };
    tbm_rjob_t j = { 7, "u", "a", "mac", "COMPLETED", "mac05", NULL, T0, T0 + 10, T0 + 110, 1, 2, 1, 0,
                     TBM_COV_VERIFIED, 204, 0, 0, 0, 0 };
    char note[1024];

    ck_assert_double_eq(tbm_rtrust_cpu(&t, &j, 100), 204);     /* (100 + 2) s x 2 CPUs */
    j.rec_cpu_used_s = 204.5;
    ck_assert_double_eq(tbm_rtrust_cpu(&t, &j, 100), -1);
    ck_assert_uint_eq(t.over, 1);
    ck_assert_uint_eq(t.over_job, 7);
    ck_assert_double_eq_tol(t.over_pct, 102.25, 1e-9);
    j.coverage = TBM_COV_ABSENT;
    ck_assert_double_eq(tbm_rtrust_cpu(&t, &j, 100), -1);
    ck_assert_uint_eq(t.unverified, 1);
    j.start = 0;                                                 /* never ran: nothing counted either way */
    ck_assert_double_eq(tbm_rtrust_cpu(&t, &j, 0), -1);
    ck_assert_uint_eq(t.unverified + t.over, 2);
    ck_assert_int_eq(tbm_rtrust_note(&t, note, sizeof(note)), 1);
    memset(&t, 0, sizeof(t));
    ck_assert_int_eq(tbm_rtrust_note(&t, note, sizeof(note)), 0);
    ck_assert_str_eq(note, "");
}
END_TEST

/* GPU and energy figures count from a verified record only; a job without them counts nothing. */
START_TEST(the_gpu_rule)
{
    tbm_rtrust_t t = { 0 };
    tbm_rjob_t j = { 7, "u", "a", "mac", "COMPLETED", "mac05", NULL, T0, T0 + 10, T0 + 110, 1, 2, 1, 0,
                     TBM_COV_VERIFIED, -1, 1, 1, 50, 9000 };
    double gpu, energy;
    char note[1024];

    tbm_rtrust_gpu(&t, &j, &gpu, &energy);
    ck_assert(gpu == 50 && energy == 9000);
    j.rec_energy = 0;                                            /* GPU figures, no energy */
    tbm_rtrust_gpu(&t, &j, &gpu, &energy);
    ck_assert(gpu == 50 && energy == -1);
    j.rec_gpu = 0;                                               /* neither: nothing, nothing left out */
    tbm_rtrust_gpu(&t, &j, &gpu, &energy);
    ck_assert(gpu == -1 && energy == -1 && t.gpu_unverified == 0);
    ck_assert_int_eq(tbm_rtrust_gpu_note(&t, note, sizeof(note)), 0);
    ck_assert_str_eq(note, "");
    j.rec_gpu = j.rec_energy = 1;
    j.coverage = TBM_COV_PRESENT;
    tbm_rtrust_gpu(&t, &j, &gpu, &energy);
    ck_assert(gpu == -1 && energy == -1 && t.gpu_unverified == 1);
    ck_assert_int_eq(tbm_rtrust_gpu_note(&t, note, sizeof(note)), 1);
    ck_assert_ptr_nonnull(strstr(note, "left out: 1 whose record does not verify"));
    j.coverage = TBM_COV_VERIFIED;
    j.start = 0;                                                 /* never ran */
    tbm_rtrust_gpu(&t, &j, &gpu, &energy);
    ck_assert(gpu == -1 && energy == -1 && t.gpu_unverified == 1);
}
END_TEST

static Suite *trust_suite(void)
{
    Suite *s = suite_create("report_trust");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, only_verified_records_within_the_allocation_count);
    tcase_add_test(tc, no_note_when_nothing_is_left_out);
    tcase_add_test(tc, every_format_says_what_was_left_out);
    tcase_add_test(tc, the_rule_itself);
    tcase_add_test(tc, the_gpu_rule);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(trust_suite)
