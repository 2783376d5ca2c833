/* test_record_diff.c: unit tests of lib/record_diff.c (differences, classes, verdict). */
#include "tbm_record_fixture.h"

static const tbm_diff_item_t *find(const tbm_diff_t *d, const char *path)
{
    size_t i;

    for (i = 0; i < d->n; i++)
        if (!strcmp(d->items[i].path, path))
            return &d->items[i];
    return NULL;
}

START_TEST(one_mac_against_four_names_node_count_and_backend)
{
    json_object *a = tbm_record_fixture("one-mac.json"), *b = tbm_record_fixture("four-mac.json");
    tbm_err_t err = { { 0 } };
    tbm_diff_t d;
    const tbm_diff_item_t *it;
    size_t i;

    ck_assert_int_eq(tbm_record_diff(a, b, &d, &err), 0);
    ck_assert_int_eq(d.verdict, TBM_COMPARABLE_WITH_DIFFERENCES);
    ck_assert_msg(strstr(d.why, "node count 1 vs 4") && strstr(d.why, "backend none vs ring"), "%s", d.why);
    it = find(&d, "node_count");
    ck_assert_ptr_nonnull(it);
    ck_assert_int_eq(it->cls, TBM_DIFF_HOSTS);
    it = find(&d, "job.nodes");
    ck_assert_str_eq(it->a, "mac05");
    ck_assert_str_eq(it->b, "mac05,mac06,mac07,mac08");
    ck_assert_int_eq(find(&d, "submit.sbatch_line")->cls, TBM_DIFF_PARAMS);
    ck_assert_int_eq(find(&d, "job.steps[0].command")->cls, TBM_DIFF_PARAMS);
    ck_assert_int_eq(find(&d, "nodes[*].backend_env.MLX_RANK")->cls, TBM_DIFF_HOSTS);
    ck_assert_ptr_null(find(&d, "job.id"));            /* ids and times are not differences */
    ck_assert_ptr_null(find(&d, "nodes[*].python.mlx"));
    for (i = 1; i < d.n; i++)   /* ordered by class, then path */
        ck_assert(d.items[i - 1].cls < d.items[i].cls ||
                  (d.items[i - 1].cls == d.items[i].cls && strcmp(d.items[i - 1].path, d.items[i].path) < 0));
    tbm_diff_free(&d);
    json_object_put(a);
    json_object_put(b);
}
END_TEST

START_TEST(same_record_is_comparable)
{
    json_object *a = tbm_record_fixture("one-mac.json"), *b = tbm_record_fixture("one-mac.json");
    tbm_err_t err = { { 0 } };
    tbm_diff_t d;

    json_object_object_add(json_object_object_get(b, "job"), "id", json_object_new_int(999));
    ck_assert_int_eq(tbm_record_diff(a, b, &d, &err), 0);
    ck_assert_uint_eq(d.n, 0);
    ck_assert_int_eq(d.verdict, TBM_COMPARABLE);
    ck_assert_str_eq(d.why, "same data, code, versions, hosts, backend and parameters");
    tbm_diff_free(&d);
    json_object_put(a);
    json_object_put(b);
}
END_TEST

START_TEST(other_data_or_code_is_not_comparable)
{
    json_object *a = tbm_record_fixture("one-mac.json"), *b = tbm_record_fixture("one-mac.json"), *d0, *git, *py;
    tbm_err_t err = { { 0 } };
    tbm_diff_t d;
    const tbm_diff_item_t *it;

    d0 = json_object_array_get_idx(json_object_object_get(json_object_object_get(b, "declared"), "data"), 0);
    json_object_object_add(d0, "sha256", json_object_new_string("dd"));
    git = json_object_object_get(json_object_object_get(b, "submit"), "git");
    json_object_object_add(git, "dirty", json_object_new_boolean(1));
    py = json_object_object_get(json_object_array_get_idx(json_object_object_get(b, "nodes"), 0), "python");
    json_object_object_add(py, "mlx", json_object_new_string("0.30.3"));
    ck_assert_int_eq(tbm_record_diff(a, b, &d, &err), 0);
    ck_assert_int_eq(d.verdict, TBM_NOT_COMPARABLE);
    ck_assert_msg(strstr(d.why, "different data or inputs and code"), "%s", d.why);
    it = find(&d, "declared.data[/data/train.jsonl].sha256");
    ck_assert_ptr_nonnull(it);
    ck_assert_int_eq(it->cls, TBM_DIFF_DATA);
    ck_assert_int_eq(find(&d, "submit.git.dirty")->cls, TBM_DIFF_CODE);
    it = find(&d, "nodes[*].python.mlx");
    ck_assert_int_eq(it->cls, TBM_DIFF_VERSIONS);
    ck_assert_str_eq(it->a, "0.31.2");
    ck_assert_str_eq(it->b, "0.30.3");
    ck_assert_str_eq(tbm_diff_class_name(it->cls), "versions and environment");
    tbm_diff_free(&d);
    json_object_put(a);
    json_object_put(b);
}
END_TEST

START_TEST(a_run_that_did_not_complete_is_not_comparable)
{
    json_object *a = tbm_record_fixture("one-mac.json"), *b = tbm_record_fixture("one-mac.json");
    tbm_err_t err = { { 0 } };
    tbm_diff_t d;

    json_object_object_add(json_object_object_get(b, "job"), "state", json_object_new_string("TIMEOUT"));
    ck_assert_int_eq(tbm_record_diff(a, b, &d, &err), 0);
    ck_assert_int_eq(d.verdict, TBM_NOT_COMPARABLE);
    ck_assert_msg(strstr(d.why, "a run did not complete (COMPLETED vs TIMEOUT)"), "%s", d.why);
    ck_assert_int_eq(find(&d, "job.state")->cls, TBM_DIFF_RESULTS);
    ck_assert_str_eq(tbm_verdict_name(d.verdict), "not comparable");
    tbm_diff_free(&d);
    json_object_put(a);
    json_object_put(b);
}
END_TEST

static Suite *diff_suite(void)
{
    Suite *s = suite_create("record_diff");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, one_mac_against_four_names_node_count_and_backend);
    tcase_add_test(tc, same_record_is_comparable);
    tcase_add_test(tc, other_data_or_code_is_not_comparable);
    tcase_add_test(tc, a_run_that_did_not_complete_is_not_comparable);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(diff_suite)
