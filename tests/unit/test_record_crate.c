/* test_record_crate.c: unit tests of lib/record_crate.c (the Workflow Run RO-Crate of a record). */
#include "tbm_record_fixture.h"

#include "json_read.h"

static json_object *by_id(json_object *graph, const char *id)
{
    size_t i;

    for (i = 0; i < json_object_array_length(graph); i++)
        if (!strcmp(tbm_json_str(json_object_array_get_idx(graph, i), "@id"), id))
            return json_object_array_get_idx(graph, i);
    return NULL;
}

START_TEST(a_process_run_crate)
{
    json_object *rec = tbm_record_fixture("four-mac.json"), *crate, *graph, *action, *root, *e;
    tbm_err_t err = { { 0 } };
    char *text = tbm_record_crate(rec, "record.json", &err);

    ck_assert_msg(text != NULL, "%s", err.msg);
    crate = tbm_json_parse(text, strlen(text), &err);
    ck_assert_ptr_nonnull(crate);
    ck_assert_str_eq(tbm_json_str(crate, "@context"), "https://w3id.org/ro/crate/1.1/context");
    graph = json_object_object_get(crate, "@graph");
    root = by_id(graph, "./");
    ck_assert_str_eq(tbm_json_str(root, "@type"), "Dataset");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(
                         json_object_array_get_idx(json_object_object_get(root, "conformsTo"), 0), "@id")),
                     "https://w3id.org/ro/wfrun/process/0.5");
    action = by_id(graph, "#job-102");
    ck_assert_str_eq(tbm_json_str(action, "@type"), "CreateAction");
    ck_assert_str_eq(tbm_json_str(action, "startTime"), "2025-12-01T14:40:02Z");
    ck_assert_str_eq(tbm_json_str(json_object_object_get(action, "actionStatus"), "@id"),
                     "http://schema.org/CompletedActionStatus");
    ck_assert_str_eq(tbm_json_str(json_object_object_get(action, "instrument"), "@id"), "#batch-script");
    ck_assert_str_eq(tbm_json_str(json_object_object_get(action, "agent"), "@id"), "#user-tbm-alice");
    e = by_id(graph, "file:///data/train.jsonl");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(tbm_json_str(e, "@type"), "File");
    ck_assert_ptr_nonnull(by_id(graph, "file:///home/tbm-alice/run/mesh.bin"));
    ck_assert_uint_eq(json_object_array_length(json_object_object_get(action, "environment")), 12);
    ck_assert_ptr_nonnull(by_id(graph, "record.json"));
    json_object_put(crate);
    free(text);
    json_object_put(rec);
}
END_TEST

static Suite *crate_suite(void)
{
    Suite *s = suite_create("record_crate");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, a_process_run_crate);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(crate_suite)
