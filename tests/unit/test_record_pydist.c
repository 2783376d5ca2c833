/* test_record_pydist.c: unit tests of lib/record_pydist.c (dist-info METADATA). */
#include "tbm_check.h"

#include <string.h>

#include "record.h"

START_TEST(name_and_version_from_the_header)
{
    const char *meta = "Metadata-Version: 2.1\r\nName: mlx_lm\nVersion:   0.28.0  \nSummary: x\n\n"
                       "Name: not-this\nVersion: 9\n";
    char name[64], version[64];
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_pydist_metadata(meta, strlen(meta), name, sizeof(name), version, sizeof(version), &err), 0);
    ck_assert_str_eq(name, "mlx_lm");
    ck_assert_str_eq(version, "0.28.0");
    tbm_pydist_normalize(name);
    ck_assert_str_eq(name, "mlx-lm");
    strcpy(name, "Foo.__Bar--baz_");
    tbm_pydist_normalize(name);
    ck_assert_str_eq(name, "foo-bar-baz");
}
END_TEST

START_TEST(broken_metadata_is_refused)
{
    char name[8], version[64];
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_pydist_metadata("Summary: x\n", 11, name, sizeof(name), version, sizeof(version), &err), -1);
    ck_assert_str_eq(err.msg, "METADATA has no usable Name: header (a broken install? reinstall it)");
    ck_assert_int_eq(tbm_pydist_metadata("Name: x\n\nVersion: 1\n", 20, name, sizeof(name), version, sizeof(version),
                                         &err), -1);
    ck_assert_str_eq(err.msg, "METADATA of x has no usable Version: header (reinstall it)");
    ck_assert_int_eq(tbm_pydist_metadata("Name: a-very-long-name\n", 23, name, sizeof(name), version,
                                         sizeof(version), &err), -1);
    ck_assert_int_eq(tbm_pydist_metadata("Name: a\0b\n", 10, name, sizeof(name), version, sizeof(version), &err), -1);
    ck_assert_str_eq(err.msg, "METADATA is not text");
}
END_TEST

static Suite *pydist_suite(void)
{
    Suite *s = suite_create("record_pydist");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, name_and_version_from_the_header);
    tcase_add_test(tc, broken_metadata_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(pydist_suite)
