/* test_parse_sysinfo.c: unit tests of lib/parse_sysinfo.c (sw_vers, sysctl). */
#include "tbm_fixture.h"

START_TEST(studio)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/studio-a1/sw_vers.txt", tbm_parse_sw_vers, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_str_eq(f.os_name, "macOS");
    ck_assert_str_eq(f.os_version, "26.2");
    ck_assert_str_eq(f.os_build, "25C56");
    tbm_findings_free(&fs);
    ck_assert_int_eq(tbm_fixture_parse("macos/studio-a1/sysctl.txt", tbm_parse_sysctl, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_uint_eq(f.memory_bytes, 274877906944ull);
    ck_assert_str_eq(f.chip, "Apple M3 Ultra");
    ck_assert_str_eq(f.model_id, "Mac15,14");
    tbm_findings_free(&fs);
    ck_assert_int_eq(tbm_fixture_parse("macos/studio-a1/sysctl_perflevels.txt", tbm_parse_perflevels, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_int_eq(f.cores_performance, 24);
    ck_assert_int_eq(f.cores_efficiency, 8);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(sw_vers_partial)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/sw_vers_partial.txt", tbm_parse_sw_vers, &f, &fs), 0);
    ck_assert_str_eq(f.os_name, "macOS");
    ck_assert_str_eq(f.os_version, "");
    ck_assert_str_eq(tbm_findings_find(&fs, "sw-vers-bad-value")->what,
                     "ProductVersion \"\" is empty, too long or not printable");
    ck_assert_str_eq(tbm_findings_find(&fs, "sw-vers-garbage-line")->where, "sw_vers line 3");
    ck_assert_str_eq(tbm_findings_find(&fs, "sw-vers-missing")->what, "no usable ProductVersion line");
    ck_assert_uint_eq(fs.n, 4);   /* ProductVersion and BuildVersion both missing */
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(sysctl_bad)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/sysctl_bad.txt", tbm_parse_sysctl, &f, &fs), 0);
    ck_assert_uint_eq(f.memory_bytes, 0);
    ck_assert_str_eq(f.chip, "Apple M3 Ultra");
    ck_assert_str_eq(f.model_id, "");
    ck_assert_str_eq(tbm_findings_find(&fs, "sysctl-bad-value")->what, "hw.memsize \"lots\" is not a valid value");
    ck_assert_str_eq(tbm_findings_find(&fs, "sysctl-short")->what,
                     "only 2 of 3 lines (memsize, brand string, model)");
    tbm_findings_free(&fs);
    ck_assert_int_eq(tbm_text_parse("99999999999999999999\nM\nX\nextra\n", tbm_parse_sysctl, &f, &fs), 0);
    ck_assert_uint_eq(f.memory_bytes, 0);
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "sysctl-extra-line"));
    tbm_findings_free(&fs);
    ck_assert_int_eq(tbm_text_parse("1125899906842625\nM\nX\n", tbm_parse_sysctl, &f, &fs), 0);
    ck_assert_uint_eq(f.memory_bytes, 0);   /* above 1 PiB */
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(perflevels_bad)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/sysctl_perflevels_bad.txt", tbm_parse_perflevels, &f, &fs),
                     0);
    ck_assert_int_eq(f.cores_performance, 0);
    ck_assert_int_eq(f.cores_efficiency, 0);
    ck_assert_str_eq(tbm_findings_find(&fs, "sysctl-perflevel-bad-line")->what,
                     "\"hw.perflevel0.physicalcpu: many\" is not \"hw.perflevelN.physicalcpu: <count>\"; ignored");
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "sysctl-no-performance-cores"));
    ck_assert_uint_eq(fs.n, 3);
    tbm_findings_free(&fs);
    /* a Mac with one kind of core prints only perflevel0 */
    ck_assert_int_eq(tbm_text_parse("hw.perflevel0.physicalcpu: 8\n", tbm_parse_perflevels, &f, &fs), 0);
    ck_assert_int_eq(f.cores_performance, 8);
    ck_assert_uint_eq(fs.n, 0);
    tbm_findings_free(&fs);
}
END_TEST

static Suite *sysinfo_suite(void)
{
    Suite *s = suite_create("parse_sysinfo");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, studio);
    tcase_add_test(tc, sw_vers_partial);
    tcase_add_test(tc, sysctl_bad);
    tcase_add_test(tc, perflevels_bad);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(sysinfo_suite)
