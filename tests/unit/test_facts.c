/* test_facts.c: unit tests of lib/facts.c: look-ups and the checks of single values. */
#include "tbm_check.h"
#include <stdio.h>
#include <string.h>

#include "facts.h"

START_TEST(mac_normalize)
{
    char out[TBM_MAC_MAX];

    ck_assert_int_eq(tbm_mac_normalize("36:A8:4B:1:2:3", 14, out), 0);
    ck_assert_str_eq(out, "36:a8:4b:01:02:03");
    ck_assert_int_eq(tbm_mac_normalize("3c:a6:f6:4b:10:01", 17, out), 0);
    ck_assert_str_eq(out, "3c:a6:f6:4b:10:01");
    /* a failure leaves nothing behind, however far it got */
    ck_assert_int_eq(tbm_mac_normalize("36:b1:09:7e:00:123", 18, out), -1);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(tbm_mac_normalize("36:b1:09:7e:00", 14, out), -1);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(tbm_mac_normalize("36:b1:09:7e:00:01:02", 20, out), -1);
    ck_assert_int_eq(tbm_mac_normalize("36:b1:09:7e:00:0g", 17, out), -1);
    ck_assert_int_eq(tbm_mac_normalize("", 0, out), -1);
    ck_assert_int_eq(tbm_mac_normalize("::::::", 6, out), -1);
    ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(validators)
{
    ck_assert(tbm_valid_ifname("en2"));
    ck_assert(tbm_valid_ifname("bridge0"));
    ck_assert(tbm_valid_ifname("rdma_en2"));
    ck_assert(!tbm_valid_ifname(""));
    ck_assert(!tbm_valid_ifname("2en"));
    ck_assert(!tbm_valid_ifname("en 2"));
    ck_assert(!tbm_valid_ifname("abcdefghijklmnop"));   /* 16 bytes */
    ck_assert(tbm_valid_ifname("abcdefghijklmno"));     /* 15 */
    ck_assert(tbm_valid_uuid("0B7C1E42-5D8A-4F13-9A6E-2C4D8F1B7E01"));
    ck_assert(!tbm_valid_uuid("0B7C1E42 5D8A"));
    ck_assert(!tbm_valid_uuid(""));
    ck_assert(tbm_valid_ipv4("169.254.1.1"));
    ck_assert(tbm_valid_ipv4("0.0.0.0"));
    ck_assert(tbm_valid_ipv4("255.255.255.255"));
    ck_assert(!tbm_valid_ipv4("256.1.1.1"));
    ck_assert(!tbm_valid_ipv4("1.1.1"));
    ck_assert(!tbm_valid_ipv4("1.1.1.1.1"));
    ck_assert(!tbm_valid_ipv4("01.1.1.1"));
    ck_assert(!tbm_valid_ipv4("1.1.1.1 "));
    ck_assert(!tbm_valid_ipv4("1111.1.1.1"));
    ck_assert(tbm_valid_mac("36:a8:4b:01:02:03"));
    ck_assert(!tbm_valid_mac("36:A8:4B:01:02:03"));
    ck_assert(!tbm_valid_mac("36:a8:4b:1:2:3"));
    ck_assert(tbm_valid_text("Mac Studio"));
    ck_assert(tbm_valid_text(""));
    ck_assert(!tbm_valid_text("a\tb"));
    ck_assert(!tbm_valid_text("a\x7f"));
}
END_TEST

START_TEST(lookups)
{
    tbm_host_facts_t f;
    tbm_iface_t *a;
    int i;

    tbm_facts_init(&f);
    ck_assert_int_eq(f.rdma_enabled, -1);
    ck_assert_ptr_null(tbm_facts_find_iface(&f, "en2"));
    a = tbm_facts_get_iface(&f, "en2");
    ck_assert_int_eq(a->prefix_len, -1);
    ck_assert_ptr_eq(tbm_facts_get_iface(&f, "en2"), a);
    ck_assert_int_eq(f.n_ifaces, 1);
    ck_assert_ptr_null(tbm_facts_get_iface(&f, "a-name-of-16-byt"));
    for (i = 1; i < TBM_MAX_IFACES; i++) {
        char name[TBM_IFNAME_MAX];
        snprintf(name, sizeof(name), "en%d", i + 10);
        ck_assert_ptr_nonnull(tbm_facts_get_iface(&f, name));
    }
    ck_assert_ptr_null(tbm_facts_get_iface(&f, "one_more"));
    f.n_ports = 2;
    f.ports[1].receptacle = 3;
    ck_assert_ptr_eq(tbm_facts_find_port(&f, 3), &f.ports[1]);
    ck_assert_ptr_null(tbm_facts_find_port(&f, 0));
    ck_assert_ptr_null(tbm_facts_find_port(&f, 4));
}
END_TEST

START_TEST(macos_with_rdma)
{
    ck_assert_int_eq(tbm_macos_has_rdma("26.2"), 1);
    ck_assert_int_eq(tbm_macos_has_rdma("26.10.1"), 1);
    ck_assert_int_eq(tbm_macos_has_rdma("27"), 1);
    ck_assert_int_eq(tbm_macos_has_rdma("26.1"), 0);
    ck_assert_int_eq(tbm_macos_has_rdma("15.7"), 0);
    ck_assert_int_eq(tbm_macos_has_rdma(""), -1);
    ck_assert_int_eq(tbm_macos_has_rdma("Tahoe"), -1);
}
END_TEST

/* The fix always fits a finding: the longest version and any speed. */
START_TEST(rdma_enabled_fix_fits)
{
    tbm_host_facts_t f;
    char fix[320];

    tbm_facts_init(&f);
    memset(f.os_version, '9', sizeof(f.os_version));   /* no NUL: read bounded */
    f.os_version[0] = '2';
    f.os_version[1] = '6';
    f.os_version[2] = '.';
    f.os_version[3] = '1';
    f.os_version[4] = '.';
    tbm_rdma_enabled_fix(&f, 40, fix, sizeof(fix));
    ck_assert_ptr_nonnull(strstr(fix, "the link runs at 40 Gb/s"));
    ck_assert_ptr_nonnull(strstr(fix, "; macOS 26.1.999999999999999, older than 26.2: update it. Then check "
                                      "ibv_devices"));
    snprintf(f.os_version, sizeof(f.os_version), "26.2");
    tbm_rdma_enabled_fix(&f, 120, fix, sizeof(fix));
    ck_assert_str_eq(fix, "RDMA is already enabled, so rdma_ctl enable is not the fix. Causes left: the port (on "
                          "Mac Studio the one beside Ethernet has no RDMA); the cable (Thunderbolt 5, seated). Then "
                          "check ibv_devices");
    f.os_version[0] = '\0';
    tbm_rdma_enabled_fix(&f, 0, fix, sizeof(fix));
    ck_assert_ptr_nonnull(strstr(fix, "(check the link speed: RDMA needs above 40 Gb/s on both ends)"));
    ck_assert_ptr_nonnull(strstr(fix, "; macOS older than 26.2 (its version is unknown). Then"));
}
END_TEST

static Suite *facts_suite(void)
{
    Suite *s = suite_create("facts");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, mac_normalize);
    tcase_add_test(tc, validators);
    tcase_add_test(tc, lookups);
    tcase_add_test(tc, macos_with_rdma);
    tcase_add_test(tc, rdma_enabled_fix_fits);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(facts_suite)
