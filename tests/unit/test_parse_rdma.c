/* test_parse_rdma.c: unit tests of lib/parse_rdma.c (ibv_devices, rdma_ctl status). */
#include "tbm_fixture.h"

START_TEST(studio_devices)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/studio-a1/ibv_devices.txt", tbm_parse_ibv_devices, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_int_eq(f.n_rdma, 6);
    ck_assert_str_eq(f.rdma_devices[0], "rdma_en2");
    ck_assert_str_eq(f.rdma_devices[5], "rdma_en7");
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(mini_header_only)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/mini-b1/ibv_devices.txt", tbm_parse_ibv_devices, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_int_eq(f.n_rdma, 0);
    tbm_findings_free(&fs);
    /* no output at all is also "no devices" */
    ck_assert_int_eq(tbm_text_parse("", tbm_parse_ibv_devices, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(garbage)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/ibv_devices_garbage.txt", tbm_parse_ibv_devices, &f, &fs), 0);
    ck_assert_int_eq(f.n_rdma, 2);
    ck_assert_str_eq(f.rdma_devices[0], "rdma_en2");
    ck_assert_str_eq(f.rdma_devices[1], "rdma_en5");
    ck_assert_str_eq(tbm_findings_find(&fs, "ibv-no-header")->what,
                     "\"Failed to get IB devices list: Function \" comes before the \"device node GUID\" header; "
                     "ignored");
    ck_assert_str_eq(tbm_findings_find(&fs, "ibv-duplicate")->where, "ibv_devices line 5");
    ck_assert_str_eq(tbm_findings_find(&fs, "ibv-bad-row")->where, "ibv_devices line 6");
    ck_assert_uint_eq(fs.n, 4);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(too_many_devices)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;
    char text[4096], *p = text;
    int i;

    p += sprintf(p, "    device          \t   node GUID\n    ------          \t----------------\n");
    for (i = 0; i < TBM_MAX_RDMA + 1; i++)
        p += sprintf(p, "    rdma_en%d\t0000000000000000\n", i);
    ck_assert_int_eq(tbm_text_parse(text, tbm_parse_ibv_devices, &f, &fs), 0);
    ck_assert_int_eq(f.n_rdma, TBM_MAX_RDMA);
    ck_assert_str_eq(tbm_findings_find(&fs, "ibv-too-many")->what, "more than 16 RDMA devices; rdma_en16 is ignored");
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(rdma_ctl_states)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/studio-a1/rdma_ctl_status.txt", tbm_parse_rdma_ctl, &f, &fs), 0);
    ck_assert_int_eq(f.rdma_enabled, 1);
    ck_assert_uint_eq(fs.n, 0);
    tbm_findings_free(&fs);
    ck_assert_int_eq(tbm_text_parse("  disabled\r\n", tbm_parse_rdma_ctl, &f, &fs), 0);
    ck_assert_int_eq(f.rdma_enabled, 0);
    tbm_findings_free(&fs);
    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/rdma_ctl_weird.txt", tbm_parse_rdma_ctl, &f, &fs), -1);
    ck_assert_int_eq(f.rdma_enabled, -1);
    ck_assert_str_eq(tbm_findings_find(&fs, "rdma-ctl-unknown")->what,
                     "rdma_ctl status said \"rdma_ctl: Operation not permitted (SIP i\", not \"enabled\" or "
                     "\"disabled\"");
    ck_assert_int_eq(tbm_findings_find(&fs, "rdma-ctl-unknown")->severity, TBM_SEV_ERROR);
    tbm_findings_free(&fs);
    ck_assert_int_eq(tbm_text_parse("enabledx", tbm_parse_rdma_ctl, &f, &fs), -1);
    tbm_findings_free(&fs);
    ck_assert_int_eq(tbm_text_parse("", tbm_parse_rdma_ctl, &f, &fs), -1);
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "output-empty"));
    tbm_findings_free(&fs);
}
END_TEST

static Suite *rdma_suite(void)
{
    Suite *s = suite_create("parse_rdma");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, studio_devices);
    tcase_add_test(tc, mini_header_only);
    tcase_add_test(tc, garbage);
    tcase_add_test(tc, too_many_devices);
    tcase_add_test(tc, rdma_ctl_states);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(rdma_suite)
