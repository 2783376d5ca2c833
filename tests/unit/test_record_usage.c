/* test_record_usage.c: unit tests of lib/record_usage.c (a record's resource use from the steps' parts). */
#include "tbm_check.h"
#include "json_read.h"
#include "record.h"

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

static Suite *usage_suite(void)
{
    Suite *s = suite_create("record_usage");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, usage_of_parts);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(usage_suite)
