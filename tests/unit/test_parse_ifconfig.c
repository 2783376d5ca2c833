/* test_parse_ifconfig.c: unit tests of lib/parse_ifconfig.c. */
#include "tbm_fixture.h"

static void assert_iface(tbm_host_facts_t *f, const char *name, const char *ipv4, int prefix, int up, int active)
{
    tbm_iface_t *i = tbm_facts_find_iface(f, name);

    ck_assert_msg(i != NULL, "no interface %s", name);
    ck_assert_str_eq(i->ipv4, ipv4);
    ck_assert_int_eq(i->prefix_len, prefix);
    ck_assert_int_eq(i->up, up);
    ck_assert_int_eq(i->active, active);
}

START_TEST(studio_addresses)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/studio-a1/ifconfig.txt", tbm_parse_ifconfig, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_int_eq(f.n_ifaces, 14);
    assert_iface(&f, "lo0", "127.0.0.1", 8, 1, 0);
    assert_iface(&f, "gif0", "", -1, 0, 0);
    assert_iface(&f, "stf0", "", -1, 0, 0);
    assert_iface(&f, "en0", "192.168.10.11", 24, 1, 1);
    assert_iface(&f, "en1", "", -1, 1, 0);
    assert_iface(&f, "en2", "192.168.200.1", 30, 1, 1);
    assert_iface(&f, "en3", "192.168.200.5", 30, 1, 1);
    assert_iface(&f, "en4", "192.168.200.9", 30, 1, 1);
    assert_iface(&f, "en5", "", -1, 1, 0);
    assert_iface(&f, "bridge0", "", -1, 0, 0);
    assert_iface(&f, "utun0", "", -1, 1, 0);
    ck_assert_str_eq(tbm_facts_find_iface(&f, "en2")->mac, "36:a4:c1:2e:00:02");
    ck_assert_str_eq(tbm_facts_find_iface(&f, "bridge0")->mac, "36:a4:c1:2e:00:00");
    ck_assert_str_eq(tbm_facts_find_iface(&f, "en2")->hwport, "");
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(mini_link_local)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/mini-b1/ifconfig.txt", tbm_parse_ifconfig, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    assert_iface(&f, "en2", "169.254.12.1", 16, 1, 1);
    assert_iface(&f, "en3", "169.254.41.1", 16, 1, 1);
    assert_iface(&f, "en4", "", -1, 1, 0);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(garbage)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/ifconfig_garbage.txt", tbm_parse_ifconfig, &f, &fs), 0);
    ck_assert_str_eq(tbm_findings_find(&fs, "ifc-orphan-line")->where, "ifconfig line 1");
    ck_assert_str_eq(tbm_findings_find(&fs, "ifc-garbage-line")->what,
                     "\"en2 flags=8863<UP> mtu 1500\" is not an interface header (\"en2: flags=...\"); "
                     "its block is skipped");
    ck_assert_str_eq(tbm_findings_find(&fs, "ifc-bad-inet")->what,
                     "en3: cannot read address and netmask from \"inet 192.168.300.1 ...\"");
    ck_assert_str_eq(tbm_findings_find(&fs, "ifc-bad-status")->what,
                     "en3: status \"sleepy\" is neither active nor inactive");
    ck_assert_int_eq(f.n_ifaces, 3);
    assert_iface(&f, "en3", "", -1, 1, 0);
    assert_iface(&f, "en4", "", -1, 1, 0);     /* 0xfffffff5 is not a contiguous mask */
    assert_iface(&f, "en5", "192.168.200.9", 30, 0, 1);   /* dotted netmask; down */
    ck_assert_uint_eq(fs.n, 6);
    ck_assert_ptr_null(tbm_findings_find(&fs, "output-more-problems"));
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(missing_from_ifconfig)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;
    const char *text = "en2: flags=8863<UP,BROADCAST> mtu 1500\n\tstatus: active\n";

    tbm_facts_init(&f);
    tbm_findings_init(&fs);
    snprintf(tbm_facts_get_iface(&f, "en2")->hwport, TBM_HOST_MAX, "Thunderbolt 1");
    snprintf(tbm_facts_get_iface(&f, "en3")->hwport, TBM_HOST_MAX, "Thunderbolt 2");
    ck_assert_int_eq(tbm_parse_ifconfig(text, strlen(text), &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 1);
    ck_assert_str_eq(fs.items[0].code, "iface-missing-in-ifconfig");
    ck_assert_str_eq(fs.items[0].what, "en3 (\"Thunderbolt 2\" in networksetup) is not listed by ifconfig");
    ck_assert_int_eq(f.ifaces[0].active, 1);
    tbm_findings_free(&fs);
    /* bridge0 destroyed (as netplan leaves it): a note that it is as wanted, no warning */
    tbm_facts_init(&f);
    tbm_findings_init(&fs);
    snprintf(tbm_facts_get_iface(&f, "en2")->hwport, TBM_HOST_MAX, "Thunderbolt 1");
    snprintf(tbm_facts_get_iface(&f, "bridge0")->hwport, TBM_HOST_MAX, "Thunderbolt Bridge");
    ck_assert_int_eq(tbm_parse_ifconfig(text, strlen(text), &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 1);
    ck_assert_str_eq(fs.items[0].code, "bridge-absent");
    ck_assert_int_eq(fs.items[0].severity, TBM_SEV_INFO);
    ck_assert_str_eq(fs.items[0].what, "bridge0 (\"Thunderbolt Bridge\" in networksetup) is not in ifconfig: it was "
                                       "destroyed, which keeps it off as JACCL wants");
    ck_assert_int_eq(tbm_facts_find_iface(&f, "bridge0")->up, 0);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(details)
{
    const char *text =
        "utun3: flags=8051<UP,POINTOPOINT,RUNNING,MULTICAST> mtu 1380\n"
        "\tinet 10.8.0.2 --> 10.8.0.1 netmask 0xffffffff\n"
        "en9: flags=8863 mtu 1500\n"
        "\tinet 10.1.0.2 netmask 0xFFFF0000\n"
        "\tinet 10.1.0.3 netmask 0xffffff00\n"
        "en8: flags=8862 mtu 1500\n"
        "\tinet 10.2.0.2 netmask 0x00000000\n"
        "en9: flags=8862<BROADCAST,UPPER> mtu 1500\n";
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_text_parse(text, tbm_parse_ifconfig, &f, &fs), 0);
    assert_iface(&f, "utun3", "10.8.0.2", 32, 1, 0);
    assert_iface(&f, "en8", "10.2.0.2", 0, 0, 0);
    /* the second en9 block overrides the first wholly: it has no address */
    assert_iface(&f, "en9", "", -1, 0, 0);
    ck_assert_uint_eq(fs.n, 1);
    ck_assert_str_eq(fs.items[0].what, "interface en9 is listed twice; the later block overrides");
    tbm_findings_free(&fs);
}
END_TEST

/* An interface listed twice is what its later block says, nothing of the earlier one mixed in; a MAC that
 * networksetup gave stays. */
START_TEST(later_block_overrides_wholly)
{
    const char *text =
        "en2: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
        "\tether 36:a8:4b:01:02:03\n"
        "\tinet 10.0.0.1 netmask 0xffffff00 broadcast 10.0.0.255\n"
        "\tstatus: active\n"
        "en2: flags=8822<BROADCAST,SMART,SIMPLEX,MULTICAST> mtu 1500\n"
        "\tether 36:a8:4b:0a:0b:0c\n"
        "\tinet 10.9.9.9 netmask 0xfffffffc broadcast 10.9.9.11\n"
        "\tstatus: inactive\n"
        "en3: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
        "\tether 36:a8:4b:01:02:04\n"
        "\tstatus: active\n"
        "en3: flags=8822<BROADCAST,SMART,SIMPLEX,MULTICAST> mtu 1500\n";
    tbm_host_facts_t f;
    tbm_findings_t fs;
    tbm_iface_t *ns;

    ck_assert_int_eq(tbm_text_parse(text, tbm_parse_ifconfig, &f, &fs), 0);
    assert_iface(&f, "en2", "10.9.9.9", 30, 0, 0);
    ck_assert_str_eq(tbm_facts_find_iface(&f, "en2")->mac, "36:a8:4b:0a:0b:0c");
    assert_iface(&f, "en3", "", -1, 0, 0);
    ck_assert_str_eq(tbm_facts_find_iface(&f, "en3")->mac, "");
    ck_assert_uint_eq(fs.n, 2);
    ck_assert_str_eq(fs.items[0].what, "interface en2 is listed twice; the later block overrides");
    tbm_findings_free(&fs);

    /* the MAC networksetup gave is not the earlier block's to clear */
    tbm_facts_init(&f);
    tbm_findings_init(&fs);
    ns = tbm_facts_get_iface(&f, "en2");
    strcpy(ns->hwport, "Thunderbolt 1");
    strcpy(ns->mac, "36:a8:4b:99:99:99");
    ck_assert_int_eq(tbm_parse_ifconfig(text, strlen(text), &f, &fs), 0);
    assert_iface(&f, "en2", "10.9.9.9", 30, 0, 0);
    ck_assert_str_eq(ns->mac, "36:a8:4b:99:99:99");
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(too_many_interfaces)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;
    char *text = malloc(100 * 80), *p = text;
    int i;

    for (i = 0; i < TBM_MAX_IFACES + 10; i++)
        p += sprintf(p, "en%d: flags=8863<UP> mtu 1500\n\tstatus: active\n", i);
    ck_assert_int_eq(tbm_text_parse(text, tbm_parse_ifconfig, &f, &fs), 0);
    ck_assert_int_eq(f.n_ifaces, TBM_MAX_IFACES);
    ck_assert_str_eq(tbm_findings_find(&fs, "ifc-too-many-ifaces")->what, "more than 64 interfaces; en64 is ignored");
    /* 8 shown, the other 2 summed up as errors, since errors were among them */
    ck_assert_uint_eq(fs.n, 9);
    ck_assert_str_eq(fs.items[8].what, "2 more line problems not shown");
    ck_assert_int_eq(fs.items[8].severity, TBM_SEV_ERROR);
    free(text);
    tbm_findings_free(&fs);
}
END_TEST

static Suite *ifconfig_suite(void)
{
    Suite *s = suite_create("parse_ifconfig");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, studio_addresses);
    tcase_add_test(tc, mini_link_local);
    tcase_add_test(tc, garbage);
    tcase_add_test(tc, missing_from_ifconfig);
    tcase_add_test(tc, details);
    tcase_add_test(tc, later_block_overrides_wholly);
    tcase_add_test(tc, too_many_interfaces);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(ifconfig_suite)
