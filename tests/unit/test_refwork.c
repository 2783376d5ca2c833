/* test_refwork.c: unit tests of lib/refwork.c (the reference workload's arithmetic). */
#include "tbm_check.h"

#include <math.h>
#include <string.h>

#include "refwork.h"

START_TEST(fill_is_deterministic_and_bounded)
{
    float a[1000], b[1000];
    size_t i;

    tbm_rw_fill(42, 3, a, 1000, 0.5f);
    tbm_rw_fill(42, 3, b, 1000, 0.5f);
    ck_assert_int_eq(memcmp(a, b, sizeof(a)), 0);
    for (i = 0; i < 1000; i++)
        ck_assert(a[i] >= -0.5f && a[i] < 0.5f);
    tbm_rw_fill(42, 4, b, 1000, 0.5f);
    ck_assert_int_ne(memcmp(a, b, sizeof(a)), 0);
    ck_assert_float_eq(a[0], a[0]);
}
END_TEST

START_TEST(shards_cover_the_rows_once)
{
    int row0, nrows, r, next = 0;

    for (r = 0; r < 3; r++) {
        tbm_rw_shard(10, r, 3, &row0, &nrows);
        ck_assert_int_eq(row0, next);
        next += nrows;
    }
    ck_assert_int_eq(next, 10);
    tbm_rw_shard(10, 0, 3, &row0, &nrows);
    ck_assert_int_eq(nrows, 4);
    tbm_rw_shard(2, 3, 4, &row0, &nrows);   /* more ranks than rows: an empty shard */
    ck_assert_int_eq(nrows, 0);
}
END_TEST

START_TEST(shard_partials_add_up_to_the_whole)
{
    tbm_refwork_t w = { 5, 1, 9, 2 };
    float x[18], whole_w[81], part_w[81], whole[18], p0[18], p1[18];
    int row0, nrows, i;

    tbm_rw_input(&w, x);
    tbm_rw_weights(&w, 0, 0, 9, whole_w);
    tbm_rw_partial(&w, x, whole_w, 0, 9, whole);
    tbm_rw_shard(9, 0, 2, &row0, &nrows);
    tbm_rw_weights(&w, 0, row0, nrows, part_w);
    ck_assert_int_eq(memcmp(part_w, whole_w, sizeof(float) * 9 * (size_t)nrows), 0);   /* a shard = its rows */
    tbm_rw_partial(&w, x, part_w, row0, nrows, p0);
    tbm_rw_shard(9, 1, 2, &row0, &nrows);
    tbm_rw_weights(&w, 0, row0, nrows, part_w);
    ck_assert_int_eq(memcmp(part_w, whole_w + 9 * row0, sizeof(float) * 9 * (size_t)nrows), 0);
    tbm_rw_partial(&w, x, part_w, row0, nrows, p1);
    for (i = 0; i < 18; i++)
        ck_assert(fabsf(p0[i] + p1[i] - whole[i]) <= 1e-5f);
}
END_TEST

START_TEST(compare_finds_the_largest_error)
{
    float a[4] = { 1.0f, 2.0f, 3.0f, 0.0f }, b[4] = { 1.0f, 2.0001f, 3.5f, 0.0f };
    tbm_rw_diff_t d;

    tbm_rw_compare(a, a, 4, 0, 0, &d);
    ck_assert(d.bitwise);
    ck_assert_uint_eq(d.n_differ, 0);
    tbm_rw_compare(a, b, 4, 1e-3, 0, &d);
    ck_assert(!d.bitwise);
    ck_assert_uint_eq(d.n_differ, 2);
    ck_assert_uint_eq(d.n_beyond, 1);          /* 3 vs 3.5 */
    ck_assert_uint_eq(d.where, 2);
    ck_assert(fabs(d.max_abs - 0.5) < 1e-9);
    b[3] = NAN;
    tbm_rw_compare(a, b, 4, 1.0, 1.0, &d);
    ck_assert(d.nonfinite);
    ck_assert_uint_eq(d.n_beyond, 1);
    a[0] = 0.0f;
    b[0] = -0.0f;                              /* different bits, equal values */
    tbm_rw_relu(b, 1);
    ck_assert_int_eq(memcmp(&a[0], &b[0], sizeof(float)), 0);
}
END_TEST

static Suite *refwork_suite(void)
{
    Suite *s = suite_create("refwork");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, fill_is_deterministic_and_bounded);
    tcase_add_test(tc, shards_cover_the_rows_once);
    tcase_add_test(tc, shard_partials_add_up_to_the_whole);
    tcase_add_test(tc, compare_finds_the_largest_error);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(refwork_suite)
