/* test_record.c: unit tests of lib/record.c (the schema, strict reading and writing). */
#include "tbm_record_fixture.h"
#include "json_read.h"

static json_object *edited(const char *from, const char *to)
{
    size_t len;
    char *text = tbm_fixture("records/one-mac.json", &len), *at = strstr(text, from), *out;
    json_object *rec;
    tbm_err_t err = { { 0 } };

    ck_assert_ptr_nonnull(at);
    out = malloc(len + strlen(to) + 1);
    memcpy(out, text, (size_t)(at - text));
    strcpy(out + (at - text), to);
    strcat(out, at + strlen(from));
    rec = tbm_record_parse(out, strlen(out), &err);
    free(text);
    free(out);
    return rec;
}

static void refused(const char *from, const char *to, const char *msg)
{
    size_t len;
    char *text = tbm_fixture("records/one-mac.json", &len), *at = strstr(text, from), *out;
    tbm_err_t err = { { 0 } };

    ck_assert_ptr_nonnull(at);
    out = malloc(len + strlen(to) + 1);
    memcpy(out, text, (size_t)(at - text));
    strcpy(out + (at - text), to);
    strcat(out, at + strlen(from));
    ck_assert_ptr_null(tbm_record_parse(out, strlen(out), &err));
    ck_assert_msg(strstr(err.msg, msg) != NULL, "expected '%s' in '%s'", msg, err.msg);
    free(text);
    free(out);
}

START_TEST(fixture_reads_and_writes_back_the_same)
{
    json_object *rec = tbm_record_fixture("one-mac.json"), *back;
    tbm_err_t err = { { 0 } };
    size_t len, len2;
    char *one = tbm_record_text(rec, &len, &err), *two;

    ck_assert_ptr_nonnull(one);
    ck_assert_int_eq(one[len - 1], '\n');
    back = tbm_record_parse(one, len, &err);
    ck_assert_ptr_nonnull(back);
    two = tbm_record_text(back, &len2, &err);
    ck_assert_str_eq(one, two);
    free(one);
    free(two);
    json_object_put(rec);
    json_object_put(back);
}
END_TEST

START_TEST(absent_facts_are_kept_with_why)
{
    json_object *rec = tbm_record_fixture("one-mac.json"), *node, *py, *v;
    const char *why = NULL;

    node = json_object_array_get_idx(json_object_object_get(rec, "nodes"), 0);
    py = json_object_object_get(node, "python");
    v = json_object_object_get(py, "mlx_metal");
    ck_assert(tbm_record_is_absent(v, &why));
    ck_assert_str_eq(why, "mlx-metal is not installed in /opt/venv");
    ck_assert(!tbm_record_is_absent(json_object_object_get(py, "mlx"), NULL));
    json_object_put(rec);
}
END_TEST

START_TEST(a_fact_may_be_absent_but_a_plain_member_may_not)
{
    json_object *rec = edited("\"chip\": \"Apple M4 Pro\"", "\"chip\": { \"absent\": \"the agent did not answer\" }");
    ck_assert_ptr_nonnull(rec);
    json_object_put(rec);
    refused("\"partition\": \"mac\"", "\"partition\": { \"absent\": \"x\" }",
            "record: job.partition is an object, not a string");
}
END_TEST

/* Bridge mode: the Mac's agent reports each task's usage with its wall time; a node that could not report
 * keeps an entry that says why. */
START_TEST(usage_per_task_with_wall_time_or_why)
{
    static const char *const from = "\"source\": \"slurmstepd\", \"cpu_user_us\": 1200000";
    json_object *rec = edited(from, "\"task\": 0, \"source\": \"macnoded\", \"wall_us\": 1300000, "
                                    "\"cpu_user_us\": 1200000"), *u;

    ck_assert_ptr_nonnull(rec);
    u = json_object_array_get_idx(json_object_object_get(rec, "usage"), 0);
    ck_assert_int_eq(json_object_get_int64(json_object_object_get(u, "wall_us")), 1300000);
    ck_assert_int_eq(json_object_get_int(json_object_object_get(u, "task")), 0);
    json_object_put(rec);
    rec = edited("\"usage\": [ { \"node\": \"mac05\", \"step\": \"0\", \"source\": \"slurmstepd\", \"cpu_user_us\": "
                 "1200000, \"cpu_system_us\": 30000, \"max_rss_kb\": 51200 } ]",
                 "\"usage\": [ { \"node\": \"mac05\", \"step\": \"0\", \"source\": \"macnoded\", \"why\": \"no answer\" } ]");
    ck_assert_ptr_nonnull(rec);
    json_object_put(rec);
    refused(from, "\"source\": \"macnoded\", \"wall_us\": \"1.3 s\", \"cpu_user_us\": 1200000",
            "record: usage[0].wall_us is a string, not a whole number");
    refused(from, "\"source\": \"macnoded\", \"why\": 5, \"cpu_user_us\": 1200000",
            "record: usage[0].why is an integer, not a string");
}
END_TEST

START_TEST(malformed_records_are_refused_with_the_place)
{
    tbm_err_t err = { { 0 } };

    refused("\"version\": 1", "\"version\": 2", "version 2 is not known to this slurm-tbmesh (it reads version 1)");
    refused("\"schema\": \"tbmesh-record\"", "\"schema\": \"other\"", "this is not a tbmesh record");
    refused("\"name\": \"refwork\"", "\"name\": 5", "record: job.name is an integer, not a string");
    refused("\"node\": \"mac05\", \"step\"", "\"step\"", "record: usage[0].node is missing");
    refused("\"seed\": \"7\"", "\"seed\": \"7\", \"temperature\": 1", "declared.temperature is not a member of a version 1");
    refused("[ \"mac05\" ]", "[ 5 ]", "record: job.nodes[0] is an integer, not a string");
    refused("\"state\": \"COMPLETED\", \"exit_code\"", "\"exit_code\"", "record: job.state is missing");
    ck_assert_ptr_null(tbm_record_parse("{\"schema\": \"tbmesh-rec", 22, &err));
    ck_assert_msg(strstr(err.msg, "record: invalid JSON at line 1") && strstr(err.msg, "truncated"), "%s", err.msg);
    ck_assert_ptr_null(tbm_record_parse("[1]", 3, &err));
    ck_assert_msg(strstr(err.msg, "not an object; this is not a tbmesh record"), "%s", err.msg);
    ck_assert_ptr_null(tbm_record_parse("\x01\x02garbage", 9, &err));
    ck_assert_str_eq(err.msg, "record: invalid JSON at line 1 column 1: unexpected character; capture the output again in full");
}
END_TEST

START_TEST(a_new_record_is_valid_and_grows_by_path)
{
    json_object *rec = tbm_record_new(42, "tbmlab", "submit", "PENDING"), *git;
    tbm_err_t err = { { 0 } };
    char *text;

    ck_assert_int_eq(tbm_record_validate(rec, &err), 0);
    git = tbm_record_obj(rec, "submit.git");
    ck_assert_ptr_nonnull(git);
    ck_assert_int_eq(tbm_record_set(git, "commit", json_object_new_string("abc"), NULL), 0);
    ck_assert_int_eq(tbm_record_set(git, "remote", NULL, "no remote named origin"), 0);
    text = tbm_record_text(rec, NULL, &err);
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_nonnull(strstr(text, "\"absent\": \"no remote named origin\""));
    free(text);
    ck_assert_ptr_null(tbm_record_obj(rec, "job.id.x"));   /* job.id is a number */
    json_object_object_add(json_object_object_get(rec, "job"), "bogus", json_object_new_int(1));
    ck_assert_ptr_null(tbm_record_text(rec, NULL, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "job.bogus is not a member"));
    json_object_put(rec);
}
END_TEST

START_TEST(text_that_is_not_utf8_becomes_utf8)
{
    size_t n;
    char *s = tbm_utf8_clean("ok \xff\xfe caf\xc3\xa9 \xe2\x82 \xed\xa0\x80 \xf0\x9f\x98\x80", 23, &n);
    json_object *o = json_object_new_object(), *back;
    tbm_err_t err = { { 0 } };
    const char *text;

    ck_assert_str_eq(s, "ok \xef\xbf\xbd\xef\xbf\xbd caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd "
                        "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xf0\x9f\x98\x80");
    ck_assert_uint_eq(n, strlen(s));
    free(s);
    s = tbm_utf8_clean("a\0b", 3, &n);   /* a NUL inside is shown, not cut at */
    ck_assert_str_eq(s, "a\xef\xbf\xbd" "b");
    free(s);
    /* a command line with Latin-1 bytes: the whole tree reads back through the strict parser */
    json_object_object_add(o, "command", json_object_new_string("python3 train.py --name=caf\xe9"));
    json_object_object_add(o, "fine", json_object_new_string("caf\xc3\xa9"));
    ck_assert_int_eq(tbm_utf8_clean_tree(o), 1);
    text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    back = tbm_json_parse(text, strlen(text), &err);
    ck_assert_msg(back != NULL, "%s", err.msg);
    ck_assert_str_eq(tbm_json_str(back, "command"), "python3 train.py --name=caf\xef\xbf\xbd");
    ck_assert_str_eq(tbm_json_str(back, "fine"), "caf\xc3\xa9");
    ck_assert_int_eq(tbm_utf8_clean_tree(o), 0);
    json_object_put(back);
    json_object_put(o);
}
END_TEST

START_TEST(which_version_of_a_record)
{
    const char *a = "aa11", *b = "bb22";

    ck_assert_int_eq(tbm_record_version(a, "end", a), TBM_VERSION_CURRENT);
    ck_assert_int_eq(tbm_record_version(a, "sync", a), TBM_VERSION_CURRENT);
    ck_assert_int_eq(tbm_record_version(a, "sync", b), TBM_VERSION_SYNC_LATER);
    ck_assert_int_eq(tbm_record_version(a, "start", b), TBM_VERSION_EARLIER);   /* the start record put back */
    ck_assert_int_eq(tbm_record_version(a, "end", b), TBM_VERSION_EARLIER);
    ck_assert_int_eq(tbm_record_version(a, "", b), TBM_VERSION_EARLIER);       /* a seal that names no phase */
    ck_assert_int_eq(tbm_record_version(a, "start", NULL), TBM_VERSION_START);
    ck_assert_int_eq(tbm_record_version(a, "end", NULL), TBM_VERSION_UNNAMED);
    ck_assert_int_eq(tbm_record_version(a, NULL, NULL), TBM_VERSION_UNNAMED);
}
END_TEST

/* The end's record and sync's are complete; the submit's and the start's are not, nor an unknown word. */
START_TEST(which_phases_are_complete)
{
    ck_assert_int_eq(tbm_record_phase_complete("end"), 1);
    ck_assert_int_eq(tbm_record_phase_complete("sync"), 1);
    ck_assert_int_eq(tbm_record_phase_complete("start"), 0);
    ck_assert_int_eq(tbm_record_phase_complete("submit"), 0);
    ck_assert_int_eq(tbm_record_phase_complete("ended"), 0);
    ck_assert_int_eq(tbm_record_phase_complete(""), 0);
    ck_assert_int_eq(tbm_record_phase_complete(NULL), 0);
}
END_TEST

static Suite *record_suite(void)
{
    Suite *s = suite_create("record");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, fixture_reads_and_writes_back_the_same);
    tcase_add_test(tc, absent_facts_are_kept_with_why);
    tcase_add_test(tc, a_fact_may_be_absent_but_a_plain_member_may_not);
    tcase_add_test(tc, malformed_records_are_refused_with_the_place);
    tcase_add_test(tc, usage_per_task_with_wall_time_or_why);
    tcase_add_test(tc, a_new_record_is_valid_and_grows_by_path);
    tcase_add_test(tc, text_that_is_not_utf8_becomes_utf8);
    tcase_add_test(tc, which_version_of_a_record);
    tcase_add_test(tc, which_phases_are_complete);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(record_suite)
