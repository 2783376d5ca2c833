/* test_errbuf.c: unit tests of lib/errbuf.c. */
#include "tbm_check.h"
#include <string.h>

#include "errbuf.h"

START_TEST(printf_sets_message_and_returns_minus_one)
{
    tbm_err_t err = { { 0 } };
    ck_assert_int_eq(tbm_errprintf(&err, "mesh %s has %d Macs", "studio-a", 4), -1);
    ck_assert_str_eq(err.msg, "mesh studio-a has 4 Macs");
    ck_assert(tbm_erris(&err));
}
END_TEST

START_TEST(prefix_adds_context)
{
    tbm_err_t err;
    tbm_errprintf(&err, "unknown key 'Foo'");
    ck_assert_int_eq(tbm_errprefix(&err, "%s:%d: ", "tbmesh.conf", 12), -1);
    ck_assert_str_eq(err.msg, "tbmesh.conf:12: unknown key 'Foo'");
}
END_TEST

START_TEST(long_message_is_cut_with_ellipsis)
{
    tbm_err_t err;
    char big[3000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    tbm_errprintf(&err, "%s", big);
    ck_assert_uint_eq(strlen(err.msg), TBM_ERR_MAX - 1);
    ck_assert_str_eq(err.msg + TBM_ERR_MAX - 4, "...");
    tbm_errprefix(&err, "ctx: ");
    ck_assert_uint_eq(strlen(err.msg), TBM_ERR_MAX - 1);
    ck_assert(strncmp(err.msg, "ctx: xxx", 8) == 0);
}
END_TEST

START_TEST(null_and_clear_are_safe)
{
    tbm_err_t err;
    ck_assert_int_eq(tbm_errprintf(NULL, "x"), -1);
    ck_assert_int_eq(tbm_errprefix(NULL, "x"), -1);
    ck_assert(!tbm_erris(NULL));
    tbm_errprintf(&err, "x");
    tbm_errclear(&err);
    ck_assert(!tbm_erris(&err));
    tbm_errclear(NULL);
}
END_TEST

static Suite *errbuf_suite(void)
{
    Suite *s = suite_create("errbuf");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, printf_sets_message_and_returns_minus_one);
    tcase_add_test(tc, prefix_adds_context);
    tcase_add_test(tc, long_message_is_cut_with_ellipsis);
    tcase_add_test(tc, null_and_clear_are_safe);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(errbuf_suite)
