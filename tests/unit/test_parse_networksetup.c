/* test_parse_networksetup.c: unit tests of lib/parse_networksetup.c. */
#include "tbm_fixture.h"

static void assert_iface(const tbm_iface_t *i, const char *name, const char *hwport, const char *mac)
{
    ck_assert_str_eq(i->name, name);
    ck_assert_str_eq(i->hwport, hwport);
    ck_assert_str_eq(i->mac, mac);
    ck_assert_str_eq(i->ipv4, "");
    ck_assert_int_eq(i->prefix_len, -1);
}

START_TEST(studio_ports)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/studio-a1/networksetup_listallhardwareports.txt",
                                       tbm_parse_networksetup, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_int_eq(f.n_ifaces, 9);
    assert_iface(&f.ifaces[0], "en0", "Ethernet", "3c:a6:f6:4b:10:01");
    assert_iface(&f.ifaces[1], "en1", "Wi-Fi", "3c:a6:f6:4b:10:02");
    assert_iface(&f.ifaces[2], "bridge0", "Thunderbolt Bridge", "36:a4:c1:2e:00:00");
    assert_iface(&f.ifaces[3], "en3", "Thunderbolt 1", "36:a4:c1:2e:00:01");
    assert_iface(&f.ifaces[4], "en2", "Thunderbolt 2", "36:a4:c1:2e:00:02");
    assert_iface(&f.ifaces[8], "en7", "Thunderbolt 6", "36:a4:c1:2e:00:06");
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(binds_ports_by_receptacle)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;
    size_t len;
    char *text = tbm_fixture("macos/studio-a1/networksetup_listallhardwareports.txt", &len);

    tbm_facts_init(&f);
    tbm_findings_init(&fs);
    f.n_ports = 3;
    f.ports[0].receptacle = 2;
    f.ports[1].receptacle = 1;
    f.ports[2].receptacle = 9;    /* no "Thunderbolt 9": stays unbound */
    ck_assert_int_eq(tbm_parse_networksetup(text, len, &f, &fs), 0);
    ck_assert_str_eq(f.ports[0].iface, "en2");
    ck_assert_str_eq(f.ports[1].iface, "en3");
    ck_assert_str_eq(f.ports[2].iface, "");
    free(text);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(garbage)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/networksetup_garbage.txt", tbm_parse_networksetup, &f, &fs),
                     0);
    ck_assert_str_eq(tbm_findings_find(&fs, "ns-orphan-line")->where, "networksetup -listallhardwareports line 1");
    ck_assert_str_eq(tbm_findings_find(&fs, "ns-bad-device")->what, "\"en2; rm -rf /\" is not an interface name");
    ck_assert_str_eq(tbm_findings_find(&fs, "ns-bad-mac")->what, "\"zz:zz:zz:zz:zz:zz\" is not a MAC address");
    ck_assert_str_eq(tbm_findings_find(&fs, "ns-no-device")->what,
                     "hardware port \"Thunderbolt 1\" has no usable Device line");
    ck_assert_str_eq(tbm_findings_find(&fs, "ns-unknown-key")->what, "unknown key \"Colour\"; ignored");
    ck_assert_str_eq(tbm_findings_find(&fs, "ns-garbage-line")->where, "networksetup -listallhardwareports line 10");
    ck_assert_str_eq(tbm_findings_find(&fs, "ns-duplicate-device")->what,
                     "device en3 appears again (as \"Thunderbolt 3\"); the first, \"Thunderbolt 2\", is kept");
    /* only en3 survives, its MAC normalised from "36:A4:C1:2E:0:2" */
    ck_assert_int_eq(f.n_ifaces, 1);
    ck_assert_str_eq(f.ifaces[0].name, "en3");
    ck_assert_str_eq(f.ifaces[0].hwport, "Thunderbolt 2");
    ck_assert_str_eq(f.ifaces[0].mac, "36:a4:c1:2e:00:02");
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(bad_hwport)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_text_parse("Hardware Port: Thunder\tbolt 1\nDevice: en2\n\nHardware Port:\nDevice: en3\n",
                                    tbm_parse_networksetup, &f, &fs), 0);
    ck_assert_int_eq(f.n_ifaces, 2);
    ck_assert_str_eq(f.ifaces[0].hwport, "");
    ck_assert_str_eq(f.ifaces[1].hwport, "");
    ck_assert_uint_eq(fs.n, 2);
    ck_assert_str_eq(fs.items[0].code, "ns-bad-hwport");
    ck_assert_str_eq(fs.items[0].what,
                     "hardware port name is empty, longer than 63 bytes or holds control characters");
    ck_assert_str_eq(fs.items[1].where, "networksetup -listallhardwareports line 4");
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(findings_are_capped)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;
    size_t i, n = 1000, len = 0;
    char *text = malloc(n * 8 + 1);

    for (i = 0; i < n; i++)
        len += (size_t)sprintf(text + len, "junk %zu\n", i % 100);
    ck_assert_int_eq(tbm_text_parse(text, tbm_parse_networksetup, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 9);   /* 8 line findings, then one that counts the rest */
    ck_assert_str_eq(fs.items[8].code, "output-more-problems");
    ck_assert_str_eq(fs.items[8].what, "992 more line problems not shown");
    ck_assert_int_eq(fs.items[8].severity, TBM_SEV_WARNING);   /* the worst of those hidden */
    tbm_findings_free(&fs);
    /* notes only (keys it does not read): the rest counted as notes, with nothing to fix */
    len = (size_t)sprintf(text, "Hardware Port: Ethernet\nDevice: en0\n");
    for (i = 0; i < 20; i++)
        len += (size_t)sprintf(text + len, "Key%zu: x\n", i);
    ck_assert_int_eq(tbm_text_parse(text, tbm_parse_networksetup, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 9);
    ck_assert_str_eq(fs.items[8].code, "output-more-notes");
    ck_assert_str_eq(fs.items[8].what, "12 more notes not shown");
    ck_assert_str_eq(fs.items[8].fix, "nothing to do: they are information, not problems");
    ck_assert_int_eq(fs.items[8].severity, TBM_SEV_INFO);
    ck_assert_ptr_null(tbm_findings_find(&fs, "output-more-problems"));
    free(text);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(too_many_interfaces)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;
    char *text = malloc(100 * 80), *p = text;
    int i;

    for (i = 0; i < TBM_MAX_IFACES + 2; i++)
        p += sprintf(p, "Hardware Port: Port %d\r\nDevice: en%d\r\nEthernet Address: N/A\r\n\r\n", i, i);
    ck_assert_int_eq(tbm_text_parse(text, tbm_parse_networksetup, &f, &fs), 0);
    ck_assert_int_eq(f.n_ifaces, TBM_MAX_IFACES);
    ck_assert_str_eq(f.ifaces[63].hwport, "Port 63");
    ck_assert_str_eq(f.ifaces[63].mac, "");
    ck_assert_str_eq(tbm_findings_find(&fs, "ns-too-many-ifaces")->what, "more than 64 interfaces; en64 is ignored");
    ck_assert_uint_eq(fs.n, 2);
    free(text);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(empty_and_missing)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_text_parse("", tbm_parse_networksetup, &f, &fs), -1);
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "output-empty"));
    tbm_findings_free(&fs);
    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_parse_networksetup(NULL, 0, &f, &fs), -1);
    ck_assert_str_eq(tbm_findings_find(&fs, "output-missing")->what,
                     "no output of networksetup -listallhardwareports was given");
    tbm_findings_free(&fs);
}
END_TEST

static Suite *networksetup_suite(void)
{
    Suite *s = suite_create("parse_networksetup");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, studio_ports);
    tcase_add_test(tc, binds_ports_by_receptacle);
    tcase_add_test(tc, garbage);
    tcase_add_test(tc, bad_hwport);
    tcase_add_test(tc, findings_are_capped);
    tcase_add_test(tc, too_many_interfaces);
    tcase_add_test(tc, empty_and_missing);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(networksetup_suite)
