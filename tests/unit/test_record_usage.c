/* test_record_usage.c: unit tests of lib/record_usage.c (a record's resource use from the steps' parts; the
 * tasks' GPU and energy in it, added up per node and step, and for people). */
#include "tbm_check.h"
#include "json_read.h"
#include "record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the steps' ends left: direct mode from Slurm's step accounting; bridge mode per task from the agent,
 * a task still running, an agent that did not answer, or a step whose forwarder never spawned. */
START_TEST(usage_of_parts)
{
    static const char parts_text[] =
        "[{\"node\":\"mac05\",\"step\":0,\"bridge\":false,\"cpu_user_us\":7,\"cpu_system_us\":8,\"max_rss_kb\":9},"
        " {\"node\":\"mac01\",\"step\":0,\"bridge\":true,\"agent_usage\":[{\"job\":4,\"step\":0,\"task\":1,\"pid\":99,"
        "  \"status\":0,\"core\":false,\"rusage\":{\"utime_us\":1000000,\"stime_us\":2000,\"maxrss_kb\":3000,"
        "  \"wall_us\":1100000}}],\"agent_running\":1},"
        " {\"node\":\"mac02\",\"step\":1,\"bridge\":true,\"agent_usage_why\":\"macnode usage gave no answer\"},"
        " {\"node\":\"mac03\",\"step\":2,\"bridge\":true,\"agent_usage\":[]}]";
    tbm_err_t err = { { 0 } };
    json_object *parts = tbm_json_parse(parts_text, strlen(parts_text), &err), *u, *e, *rec;
    const char *why = NULL;

    ck_assert_msg(parts != NULL, "%s", err.msg);
    u = tbm_record_usage_of_parts(parts, 0);
    ck_assert_int_eq((int)json_object_array_length(u), 5);
    e = json_object_array_get_idx(u, 0);
    ck_assert_str_eq(tbm_json_str(e, "source"), "slurmstepd (Slurm's step accounting)");
    ck_assert_int_eq(json_object_get_int(json_object_object_get(e, "max_rss_kb")), 9);
    e = json_object_array_get_idx(u, 1);
    ck_assert_str_eq(tbm_json_str(e, "node"), "mac01");
    ck_assert_int_eq(json_object_get_int(json_object_object_get(e, "task")), 1);
    ck_assert_int_eq(json_object_get_int64(json_object_object_get(e, "cpu_user_us")), 1000000);
    ck_assert_int_eq(json_object_get_int64(json_object_object_get(e, "wall_us")), 1100000);
    ck_assert_ptr_nonnull(strstr(tbm_json_str(json_object_array_get_idx(u, 2), "why"), "1 task(s) still ran"));
    ck_assert_str_eq(tbm_json_str(json_object_array_get_idx(u, 3), "why"), "macnode usage gave no answer");
    ck_assert_str_eq(tbm_json_str(json_object_array_get_idx(u, 3), "step"), "1");
    ck_assert_ptr_nonnull(strstr(tbm_json_str(json_object_array_get_idx(u, 4), "why"), "no task of this step"));
    rec = tbm_record_new(4, "lab", "end", "COMPLETED");
    json_object_object_add(rec, "usage", u);
    ck_assert_msg(tbm_record_validate(rec, &err) == 0, "%s", err.msg);
    json_object_put(rec);
    json_object_put(parts);

    u = tbm_record_usage_of_parts(NULL, 1);
    ck_assert(tbm_record_is_absent(u, &why));
    ck_assert_ptr_nonnull(strstr(why, "no srun step ran on the Macs"));
    json_object_put(u);
}
END_TEST

#define TASK(task, rusage_rest) \
    "{\"job\":4,\"step\":0,\"task\":" #task ",\"pid\":9" #task ",\"status\":0,\"core\":false,\"rusage\":{" \
    "\"utime_us\":1000000,\"stime_us\":0,\"maxrss_kb\":1,\"wall_us\":3600000000" rusage_rest "}}"

/* A part's tasks with GPU figures and energy, with why not, and from an agent older than the figures: the
 * record's entries carry each as reported, the record validates, and its text reads back to the same bytes
 * (its seal is the SHA-256 of those bytes). */
START_TEST(gpu_and_energy_into_the_record)
{
    static const char parts_text[] =
        "[{\"node\":\"mac01\",\"step\":0,\"bridge\":true,\"agent_usage\":["
        TASK(0, ",\"gpu_samples\":360,\"gpu_mean\":0.4200,\"gpu_peak\":0.9700,\"power_samples\":360,"
                "\"energy_j\":540000.0") ","
        TASK(1, ",\"gpu_samples\":360,\"gpu_mean\":0.4100,\"gpu_peak\":0.9700,\"energy_why\":\"no-samples\"") ","
        TASK(2, ",\"gpu_why\":\"short\",\"energy_why\":\"short\"") ","
        TASK(3, "") ","
        TASK(4, ",\"gpu_samples\":3,\"gpu_mean\":7,\"gpu_peak\":7") "]}]";
    tbm_err_t err = { { 0 } };
    json_object *parts = tbm_json_parse(parts_text, strlen(parts_text), &err), *u, *e, *rec, *back;
    char *text, *again;
    size_t len, len2;

    ck_assert_msg(parts != NULL, "%s", err.msg);
    u = tbm_record_usage_of_parts(parts, 0);
    ck_assert_int_eq((int)json_object_array_length(u), 5);
    e = json_object_array_get_idx(u, 0);
    ck_assert_int_eq(json_object_get_int(json_object_object_get(e, "gpu_samples")), 360);
    ck_assert_double_eq(json_object_get_double(json_object_object_get(e, "gpu_mean")), 0.42);
    ck_assert_double_eq(json_object_get_double(json_object_object_get(e, "gpu_peak")), 0.97);
    ck_assert_int_eq(json_object_get_int(json_object_object_get(e, "power_samples")), 360);
    ck_assert_double_eq(json_object_get_double(json_object_object_get(e, "energy_j")), 540000);
    ck_assert(!json_object_object_get_ex(e, "gpu_why", NULL) && !json_object_object_get_ex(e, "energy_why", NULL));
    e = json_object_array_get_idx(u, 1);
    ck_assert_str_eq(tbm_json_str(e, "energy_why"), "no-samples");
    ck_assert(!json_object_object_get_ex(e, "energy_j", NULL) && !json_object_object_get_ex(e, "gpu_why", NULL));
    e = json_object_array_get_idx(u, 2);
    ck_assert_str_eq(tbm_json_str(e, "gpu_why"), "short");
    ck_assert_str_eq(tbm_json_str(e, "energy_why"), "short");
    ck_assert(!json_object_object_get_ex(e, "gpu_mean", NULL));
    e = json_object_array_get_idx(u, 3);                    /* an older agent: nothing, not a 0 */
    ck_assert(!json_object_object_get_ex(e, "gpu_mean", NULL) && !json_object_object_get_ex(e, "gpu_why", NULL));
    ck_assert(!json_object_object_get_ex(e, "energy_j", NULL) && !json_object_object_get_ex(e, "energy_why", NULL));
    e = json_object_array_get_idx(u, 4);                    /* a part with garbage: its figures are left out */
    ck_assert(!json_object_object_get_ex(e, "gpu_mean", NULL) && !json_object_object_get_ex(e, "gpu_samples", NULL));
    ck_assert_int_eq(json_object_get_int64(json_object_object_get(e, "cpu_user_us")), 1000000);

    rec = tbm_record_new(4, "lab", "end", "COMPLETED");
    json_object_object_add(rec, "usage", u);
    text = tbm_record_text(rec, &len, &err);
    ck_assert_msg(text != NULL, "%s", err.msg);
    ck_assert_ptr_nonnull(strstr(text, "\"gpu_mean\": 0.4200,"));
    ck_assert_ptr_nonnull(strstr(text, "\"energy_j\": 540000.0"));
    back = tbm_record_parse(text, len, &err);
    ck_assert_msg(back != NULL, "%s", err.msg);
    again = tbm_record_text(back, &len2, &err);
    ck_assert_uint_eq(len2, len);
    ck_assert_str_eq(again, text);
    free(again);
    free(text);
    json_object_put(back);
    json_object_put(rec);
    json_object_put(parts);
}
END_TEST

/* A record's usage adds up per node and step: the tasks of a step on one Mac share it (each got the whole
 * Mac's figures), so the largest counts; steps and nodes add. */
static json_object *record_of(const char *usage)
{
    char text[4096];
    tbm_err_t err = { { 0 } };
    json_object *rec;

    snprintf(text, sizeof(text), "{\"schema\":\"tbmesh-record\",\"version\":1,\"job\":{\"id\":4,\"phase\":\"end\","
             "\"state\":\"COMPLETED\"},\"usage\":%s}", usage);
    rec = tbm_record_parse(text, strlen(text), &err);
    ck_assert_msg(rec != NULL, "%s", err.msg);
    return rec;
}

#define AGENT "\"source\":\"macnoded (the Mac's agent: wait4 of the task, and its wall time)\""
#define ENTRY(node, step, task, wall_s, rest) \
    "{\"node\":\"" node "\",\"step\":\"" #step "\",\"task\":" #task "," AGENT ",\"cpu_user_us\":2000000," \
    "\"cpu_system_us\":500000,\"max_rss_kb\":1,\"wall_us\":" #wall_s "000000" rest "}"

START_TEST(totals_per_node_and_step)
{
    tbm_usage_totals_t t;
    json_object *rec;
    char text[512];

    rec = record_of("[" ENTRY("mac01", 0, 0, 3600, ",\"gpu_samples\":9,\"gpu_mean\":0.5,\"gpu_peak\":1,"
                                                  "\"power_samples\":9,\"energy_j\":700000.0")
                    "," ENTRY("mac01", 0, 1, 3000, ",\"gpu_samples\":9,\"gpu_mean\":0.7,\"gpu_peak\":1,"
                                                   "\"power_samples\":9,\"energy_j\":650000.0")
                    "," ENTRY("mac01", 1, 0, 600, ",\"gpu_samples\":9,\"gpu_mean\":0.25,\"gpu_peak\":0.5,"
                                                  "\"power_samples\":9,\"energy_j\":100000")
                    "," ENTRY("mac02", 0, 2, 3600, ",\"gpu_samples\":9,\"gpu_mean\":0.5,\"gpu_peak\":1,"
                                                   "\"energy_why\":\"no-samples\"")
                    "," ENTRY("mac03", 0, 3, 3600, ",\"gpu_why\":\"metrics-off\",\"energy_why\":\"metrics-off\"")
                    "," "{\"node\":\"mac04\",\"step\":\"0\",\"source\":\"slurmstepd (Slurm's step accounting)\","
                        "\"cpu_user_us\":1000000,\"cpu_system_us\":0,\"max_rss_kb\":1}"
                    "," "{\"node\":\"mac05\",\"step\":\"0\"," AGENT ",\"why\":\"macnode usage gave no answer\"}]");
    tbm_record_usage_totals(rec, &t);
    ck_assert_double_eq_tol(t.cpu_s, 5 * 2.5 + 1, 1e-9);
    ck_assert_int_eq(t.tasks, 5);                       /* the agent's tasks, not Slurm's entry nor a why */
    ck_assert_int_eq(t.gpu_tasks, 4);
    ck_assert_int_eq(t.energy_tasks, 3);
    ck_assert_int_eq(t.gpu_parts, 3);                   /* mac01 step 0, mac01 step 1, mac02 step 0 */
    ck_assert_int_eq(t.energy_parts, 2);
    /* mac01 step 0: max(0.5 x 3600, 0.7 x 3000) = 2100; step 1: 150; mac02: 1800 */
    ck_assert_double_eq_tol(t.gpu_s, 2100 + 150 + 1800, 1e-6);
    ck_assert_double_eq_tol(t.energy_j, 700000 + 100000, 1e-6);
    tbm_usage_totals_text(&t, text, sizeof(text));
    ck_assert_str_eq(text, "energy 800.0 kJ (222.22 Wh) from 3 of 5 tasks, GPU 1.1250 GPU-hours from 4 of 5 tasks; per "
                           "node and step the largest task's figure (a step's tasks share their Mac)");
    json_object_put(rec);

    /* an old record, without the figures, verifies and adds up to none */
    rec = record_of("[" ENTRY("mac01", 0, 0, 60, "") "]");
    tbm_record_usage_totals(rec, &t);
    ck_assert(t.tasks == 1 && t.gpu_tasks == 0 && t.energy_tasks == 0 && t.gpu_parts == 0 && t.energy_parts == 0);
    ck_assert(t.gpu_s == 0 && t.energy_j == 0);
    tbm_usage_totals_text(&t, text, sizeof(text));
    ck_assert_str_eq(text, "GPU and energy not reported by any of the 1 tasks");
    json_object_put(rec);
    rec = record_of("{\"absent\":\"the job never ran\"}");
    tbm_record_usage_totals(rec, &t);
    ck_assert(t.cpu_s == -1 && t.tasks == 0);
    tbm_usage_totals_text(&t, text, sizeof(text));
    ck_assert_str_eq(text, "no task measured by a Mac's agent");
    json_object_put(rec);
    rec = record_of("[" ENTRY("mac01", 0, 0, 60, ",\"gpu_samples\":9,\"gpu_mean\":0.5,\"gpu_peak\":1") "]");
    tbm_record_usage_totals(rec, &t);
    tbm_usage_totals_text(&t, text, sizeof(text));
    ck_assert_str_eq(text, "energy not reported by any task, GPU 0.0083 GPU-hours from 1 of 1 tasks; per node and "
                           "step the largest task's figure (a step's tasks share their Mac)");
    json_object_put(rec);
}
END_TEST

/* Each entry's line for `tbmesh repro show`. */
START_TEST(entry_text)
{
    json_object *rec = record_of("[" ENTRY("mac01", 0, 0, 60, ",\"gpu_samples\":6,\"gpu_mean\":0.4235,"
                                                              "\"gpu_peak\":0.97,\"power_samples\":6,"
                                                              "\"energy_j\":12345.6")
                                 "," ENTRY("mac01", 0, 1, 60, ",\"gpu_samples\":6,\"gpu_mean\":0,\"gpu_peak\":0,"
                                                              "\"energy_why\":\"no-samples\"")
                                 "," ENTRY("mac01", 0, 2, 5, ",\"gpu_why\":\"short\",\"energy_why\":\"short\"")
                                 "," ENTRY("mac01", 0, 3, 60, "")
                                 "," ENTRY("mac01", 0, 4, 60, ",\"gpu_why\":\"from-the-future\"")
                                 "," "{\"node\":\"mac04\",\"step\":\"0\",\"source\":\"slurmstepd\","
                                     "\"cpu_user_us\":1,\"cpu_system_us\":0,\"max_rss_kb\":1}]");
    json_object *u = json_object_object_get(rec, "usage");
    char buf[512];

    tbm_usage_gpu_text(json_object_array_get_idx(u, 0), buf, sizeof(buf));
    ck_assert_str_eq(buf, "GPU mean 42.4%, peak 97.0% (6 samples); energy 12.3 kJ (3.43 Wh)");
    tbm_usage_gpu_text(json_object_array_get_idx(u, 1), buf, sizeof(buf));
    ck_assert_str_eq(buf, "GPU mean 0.0%, peak 0.0% (6 samples); energy not reported (no-samples: no sample of the "
                          "task's time had the figure (the Mac does not report it, or its sampler did not run then))");
    tbm_usage_gpu_text(json_object_array_get_idx(u, 2), buf, sizeof(buf));
    ck_assert_str_eq(buf, "GPU and energy not reported (short: the task ran less than one sample interval)");
    tbm_usage_gpu_text(json_object_array_get_idx(u, 3), buf, sizeof(buf));
    ck_assert_str_eq(buf, "GPU and energy not reported (not-said: the Mac's agent did not say (it is older than "
                          "these figures))");
    tbm_usage_gpu_text(json_object_array_get_idx(u, 4), buf, sizeof(buf));
    ck_assert_str_eq(buf, "GPU not reported (from-the-future); energy not reported (not-said: the Mac's agent did "
                          "not say (it is older than these figures))");
    tbm_usage_gpu_text(json_object_array_get_idx(u, 5), buf, sizeof(buf));
    ck_assert_str_eq(buf, "");                           /* Slurm's step accounting measures no GPU */
    json_object_put(rec);
}
END_TEST

/* The schema: the figures are numbers, 0 or more, finite. */
START_TEST(schema_of_the_figures)
{
    static const char *const bad[] = {
        "[" ENTRY("mac01", 0, 0, 60, ",\"gpu_mean\":\"0.5\"") "]",
        "[" ENTRY("mac01", 0, 0, 60, ",\"energy_j\":-1") "]",
        "[" ENTRY("mac01", 0, 0, 60, ",\"gpu_peak\":true") "]",
        "[" ENTRY("mac01", 0, 0, 60, ",\"gpu_samples\":0.5") "]",
    };
    static const char *const why[] = {
        "record: usage[0].gpu_mean is a string, not a number, 0 or more",
        "record: usage[0].energy_j is -1, not a number, 0 or more",
        "record: usage[0].gpu_peak is a boolean, not a number, 0 or more",
        "record: usage[0].gpu_samples is a number with a fraction, not a whole number",
    };
    char text[1024];
    tbm_err_t err = { { 0 } };
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(text, sizeof(text), "{\"schema\":\"tbmesh-record\",\"version\":1,\"job\":{\"id\":4,\"phase\":"
                 "\"end\",\"state\":\"COMPLETED\"},\"usage\":%s}", bad[i]);
        ck_assert_ptr_null(tbm_record_parse(text, strlen(text), &err));
        ck_assert_str_eq(err.msg, why[i]);
    }
}
END_TEST

static Suite *usage_suite(void)
{
    Suite *s = suite_create("record_usage");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, usage_of_parts);
    tcase_add_test(tc, gpu_and_energy_into_the_record);
    tcase_add_test(tc, totals_per_node_and_step);
    tcase_add_test(tc, entry_text);
    tcase_add_test(tc, schema_of_the_figures);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(usage_suite)
