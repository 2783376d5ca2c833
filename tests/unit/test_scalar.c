/* test_scalar.c: unit tests of lib/scalar.c and lib/clock.c. */
#include "tbm_check.h"
#include <stdint.h>
#include <string.h>

#include "clock.h"
#include "scalar.h"

START_TEST(parse_ll_takes_whole_numbers_in_range)
{
    long long v = 0;
    ck_assert_int_eq(tbm_parse_ll("42", 10, 0, 100, &v), 0);
    ck_assert_int_eq(v, 42);
    ck_assert_int_eq(tbm_parse_ll("-5", 10, -10, 10, &v), 0);
    ck_assert_int_eq(v, -5);
    ck_assert_int_eq(tbm_parse_ll("0700", 8, 0, 07777, &v), 0);
    ck_assert_int_eq(v, 0700);
    ck_assert_int_eq(tbm_parse_ll("ff", 16, 0, 255, &v), 0);
    ck_assert_int_eq(v, 255);
    ck_assert_int_eq(tbm_parse_ll("9223372036854775807", 10, 0, INT64_MAX, &v), 0);
}
END_TEST

START_TEST(parse_ll_refuses_everything_else)
{
    long long v = 7;
    const char *bad[] = { "", " 1", "1 ", "+1", "1x", "0x10", "-1", "101", "9223372036854775808", "1.5", NULL };
    int i;
    for (i = 0; bad[i]; i++)
        ck_assert_msg(tbm_parse_ll(bad[i], 10, 0, 100, &v) == -1, "accepted '%s'", bad[i]);
    ck_assert_int_eq(tbm_parse_ll("8", 8, 0, 100, &v), -1);
    ck_assert_int_eq(tbm_parse_ll("--1", 10, -10, 10, &v), -1);
    ck_assert_int_eq(tbm_parse_ll("1", 7, 0, 10, &v), -1);
    ck_assert_int_eq(tbm_parse_ll(NULL, 10, 0, 10, &v), -1);
    ck_assert_int_eq(v, 7);
}
END_TEST

START_TEST(parse_ll_span_reads_a_piece_of_a_string)
{
    const char *s = "gres:tbmesh:12,x";
    long long v = 0;
    ck_assert_int_eq(tbm_parse_ll_span(s + 12, 2, 10, 0, 100, &v), 0);
    ck_assert_int_eq(v, 12);
    ck_assert_int_eq(tbm_parse_ll_span(s + 12, 3, 10, 0, 100, &v), -1);   /* "12," */
    ck_assert_int_eq(tbm_parse_ll_span(s + 12, 0, 10, 0, 100, &v), -1);   /* empty */
    ck_assert_int_eq(tbm_parse_ll_span("7\0", 2, 10, 0, 100, &v), -1);   /* a NUL inside */
    ck_assert_int_eq(tbm_parse_ll_span("-3", 2, 10, -5, 5, &v), 0);
    ck_assert_int_eq(v, -3);
    ck_assert_int_eq(tbm_parse_ll_span("111111111111111111111111111111111", 33, 10, 0, 1, &v), -1);
    ck_assert_int_eq(tbm_parse_ll_span(NULL, 1, 10, 0, 1, &v), -1);
    ck_assert_int_eq(v, -3);
}
END_TEST

START_TEST(parse_u64_takes_the_full_range)
{
    uint64_t v = 0;
    ck_assert_int_eq(tbm_parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
    ck_assert(v == UINT64_MAX);
    ck_assert_int_eq(tbm_parse_u64("18446744073709551616", UINT64_MAX, &v), -1);
    ck_assert_int_eq(tbm_parse_u64("-1", UINT64_MAX, &v), -1);
    ck_assert_int_eq(tbm_parse_u64("11", 10, &v), -1);
    ck_assert_int_eq(tbm_parse_u64("", 10, &v), -1);
}
END_TEST

START_TEST(parse_uint_is_one_to_max)
{
    int v = 0;
    ck_assert_int_eq(tbm_parse_uint("8", 8, &v), 0);
    ck_assert_int_eq(v, 8);
    ck_assert_int_eq(tbm_parse_uint("0", 8, &v), -1);
    ck_assert_int_eq(tbm_parse_uint("9", 8, &v), -1);
    ck_assert_int_eq(tbm_parse_uint("0008", 8, &v), 0);
    ck_assert_int_eq(v, 8);
    ck_assert_int_eq(tbm_parse_uint("0000000008", 8, &v), -1);   /* more than 9 digits */
    ck_assert_int_eq(tbm_parse_uint("+8", 8, &v), -1);
    ck_assert_int_eq(tbm_parse_uint("-1", 8, &v), -1);
    ck_assert_int_eq(tbm_parse_uint("", 8, &v), -1);
}
END_TEST

START_TEST(mlx_version_is_three_short_numbers)
{
    const char *bad[] = { "", "0.31", "0.31.2.1", "0.31.x", ".1.2", "0..2", "0.1.2.", "0.12345.2", "10000.1.1",
                          "0.1000.1", "0.1.1000", "0.1.+1", "0.1.1 ", " 0.1.1", NULL };
    int i;

    ck_assert_int_eq(tbm_mlx_version_parse("0.31.2"), 31002);
    ck_assert_int_eq(tbm_mlx_version_parse("0.30.3"), 30003);
    ck_assert_int_eq(tbm_mlx_version_parse("1.2.3"), 1002003);
    ck_assert_int_eq(tbm_mlx_version_parse("9999.999.999"), TBM_MLX_VERSION(9999, 999, 999));
    for (i = 0; bad[i]; i++)
        ck_assert_msg(tbm_mlx_version_parse(bad[i]) == -1, "accepted '%s'", bad[i]);
    ck_assert_int_eq(tbm_mlx_version_parse(NULL), -1);
}
END_TEST

START_TEST(list_next_walks_every_item)
{
    const char *list = "a,,bc;d,", *item;
    size_t n = 0;

    item = tbm_list_next(&list, ",;", &n);
    ck_assert(item && n == 1 && item[0] == 'a');
    item = tbm_list_next(&list, ",;", &n);
    ck_assert(item && n == 0);
    item = tbm_list_next(&list, ",;", &n);
    ck_assert(item && n == 2 && !strncmp(item, "bc", 2));
    item = tbm_list_next(&list, ",;", &n);
    ck_assert(item && n == 1 && item[0] == 'd');
    ck_assert_ptr_null(tbm_list_next(&list, ",;", &n));
    list = NULL;
    ck_assert_ptr_null(tbm_list_next(&list, ",", &n));
}
END_TEST

START_TEST(clock_moves_forward)
{
    long long a = tbm_now_us(), b = tbm_now_us();
    ck_assert(b >= a);
    ck_assert(tbm_now_ms() >= a / 1000);
}
END_TEST

static Suite *values_suite(void)
{
    Suite *s = suite_create("values");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, parse_ll_takes_whole_numbers_in_range);
    tcase_add_test(tc, parse_ll_refuses_everything_else);
    tcase_add_test(tc, parse_ll_span_reads_a_piece_of_a_string);
    tcase_add_test(tc, parse_u64_takes_the_full_range);
    tcase_add_test(tc, parse_uint_is_one_to_max);
    tcase_add_test(tc, mlx_version_is_three_short_numbers);
    tcase_add_test(tc, list_next_walks_every_item);
    tcase_add_test(tc, clock_moves_forward);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(values_suite)
