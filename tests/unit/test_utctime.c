/* test_utctime.c: lib/utctime.c, a time of day as ISO 8601 text in UTC. */
#include "tbm_check.h"

#include "utctime.h"

START_TEST(extended_and_basic_forms)
{
    char buf[32];

    ck_assert_int_eq(tbm_utc_iso(1796426306, TBM_UTC_EXTENDED, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "2026-12-04T23:18:26Z");
    ck_assert_int_eq(tbm_utc_iso(1796426306, TBM_UTC_BASIC, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "20261204T231826Z");
}
END_TEST

START_TEST(no_time_or_no_room_gives_empty_text)
{
    char buf[32] = "x", small[8] = "x";

    ck_assert_int_eq(tbm_utc_iso(0, TBM_UTC_EXTENDED, buf, sizeof(buf)), -1);
    ck_assert_str_eq(buf, "");
    ck_assert_int_eq(tbm_utc_iso(-5, TBM_UTC_BASIC, buf, sizeof(buf)), -1);
    ck_assert_int_eq(tbm_utc_iso(1796426306, TBM_UTC_EXTENDED, small, sizeof(small)), -1);
    ck_assert_str_eq(small, "");
    ck_assert_int_eq(tbm_utc_iso(1796426306, TBM_UTC_EXTENDED, small, 0), -1);
}
END_TEST

static Suite *utctime_suite(void)
{
    Suite *s = suite_create("utctime");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, extended_and_basic_forms);
    tcase_add_test(tc, no_time_or_no_room_gives_empty_text);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(utctime_suite)
