/* test_facts_parse.c: unit tests of lib/facts_parse.c: all outputs of one Mac parsed together, cross-checks,
 * and every parser fed outputs that are missing, empty, huge, binary or not UTF-8. */
#include "tbm_fixture.h"

#include "facts_json.h"

START_TEST(studio_all)
{
    tbm_raw_outputs_t raw;
    tbm_host_facts_t f;
    tbm_findings_t fs;
    tbm_iface_t *en3;

    tbm_fixture_host("macos/studio-a1", &raw);
    raw.hostname = "studio-a1";
    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_facts_parse_all(&raw, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_str_eq(f.hostname, "studio-a1");
    ck_assert_str_eq(f.model_name, "Mac Studio");
    ck_assert_str_eq(f.model_id, "Mac15,14");
    ck_assert_str_eq(f.chip, "Apple M3 Ultra");
    ck_assert_uint_eq(f.memory_bytes, 274877906944ull);
    ck_assert_int_eq(f.cores_performance, 24);
    ck_assert_int_eq(f.cores_efficiency, 8);
    ck_assert_str_eq(f.os_version, "26.2");
    ck_assert_int_eq(f.rdma_enabled, 1);
    ck_assert_int_eq(f.n_rdma, 6);
    ck_assert_int_eq(f.n_ports, 6);
    /* "Thunderbolt 1" is en3 and "Thunderbolt 2" is en2: binding follows networksetup, not order */
    ck_assert_str_eq(f.ports[0].iface, "en3");
    ck_assert_str_eq(f.ports[1].iface, "en2");
    ck_assert_str_eq(f.ports[2].iface, "en4");
    ck_assert_str_eq(f.ports[5].iface, "en7");
    en3 = tbm_facts_find_iface(&f, "en3");
    ck_assert_str_eq(en3->hwport, "Thunderbolt 1");
    ck_assert_str_eq(en3->ipv4, "192.168.200.5");
    ck_assert_int_eq(en3->prefix_len, 30);
    ck_assert_int_eq(en3->active, 1);
    ck_assert_int_eq(tbm_facts_find_iface(&f, "bridge0")->up, 0);
    /* networksetup's 9 interfaces first, then those only ifconfig lists */
    ck_assert_int_eq(f.n_ifaces, 14);
    ck_assert_str_eq(f.ifaces[9].name, "lo0");
    tbm_fixture_host_free(&raw);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(mini_rdma_enabled_without_devices)
{
    tbm_raw_outputs_t raw;
    tbm_host_facts_t f;
    tbm_findings_t fs;

    tbm_fixture_host("macos/mini-b1", &raw);
    raw.hostname = "mini-b1";
    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_facts_parse_all(&raw, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 1);
    ck_assert_str_eq(fs.items[0].code, "rdma-enabled-no-devices");
    ck_assert_str_eq(fs.items[0].where, "mini-b1");
    ck_assert_str_eq(fs.items[0].what, "rdma_ctl says enabled but ibv_devices lists no device");
    /* not "enable RDMA": it is; the real causes, with this Mac's link speed and macOS version */
    ck_assert_str_eq(fs.items[0].fix, "RDMA is already enabled, so rdma_ctl enable is not the fix. Causes left: a "
                                      "Thunderbolt 4 port or Mac: the link runs at 40 Gb/s, RDMA needs Thunderbolt 5 "
                                      "(above 40) on both ends; the cable (Thunderbolt 5, seated); macOS 26.1, older "
                                      "than 26.2: update it. Then check ibv_devices");
    ck_assert_str_eq(f.model_name, "Mac mini");
    ck_assert_str_eq(f.model_id, "Mac16,10");
    ck_assert_str_eq(f.chip, "Apple M4");
    ck_assert_int_eq(f.cores_performance, 4);
    ck_assert_int_eq(f.cores_efficiency, 6);
    ck_assert_str_eq(f.os_version, "26.1");
    ck_assert_int_eq(f.ports[0].speed_gbps, 40);
    ck_assert_str_eq(f.ports[0].iface, "en2");
    ck_assert_str_eq(f.ports[1].iface, "en3");
    ck_assert_str_eq(f.ports[2].iface, "en4");
    ck_assert_str_eq(tbm_facts_find_iface(&f, "en3")->ipv4, "169.254.41.1");
    tbm_fixture_host_free(&raw);
    tbm_findings_free(&fs);
}
END_TEST

/* Enabled without devices and without a Mac cabled directly (behind a dock here): said so; the speed is to
 * be checked, and a macOS that is recent enough is not named. */
START_TEST(rdma_enabled_nothing_cabled)
{
    tbm_raw_outputs_t raw;
    tbm_host_facts_t f;
    tbm_findings_t fs;
    const tbm_finding_t *x;

    tbm_fixture_host("macos/studio-a1", &raw);
    free((void *)raw.thunderbolt.data);
    raw.thunderbolt.data = tbm_fixture("macos/studio-hub/system_profiler_SPThunderboltDataType.json",
                                       &raw.thunderbolt.len);
    free((void *)raw.ibv_devices.data);
    raw.ibv_devices.data = tbm_fixture("macos/mini-b1/ibv_devices.txt", &raw.ibv_devices.len);   /* none */
    raw.hostname = "studio-hub";
    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_facts_parse_all(&raw, &f, &fs), 0);
    ck_assert_int_eq(f.n_rdma, 0);
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "tb-peer-behind-hub"));
    x = tbm_findings_find(&fs, "rdma-enabled-no-devices");
    ck_assert_ptr_nonnull(x);
    ck_assert_str_eq(x->what, "rdma_ctl says enabled but ibv_devices lists no device (and no Mac is cabled directly "
                              "to this one)");
    ck_assert_str_eq(x->fix, "RDMA is already enabled, so rdma_ctl enable is not the fix. Causes left: a Thunderbolt 4 "
                             "port or Mac (check the link speed: RDMA needs above 40 Gb/s on both ends); the cable "
                             "(Thunderbolt 5, seated). Then check ibv_devices");
    tbm_fixture_host_free(&raw);
    tbm_findings_free(&fs);
}
END_TEST

/* The system_profiler parser names a port "Thunderbolt N" (all it knows then); once networksetup binds the
 * ports, its findings name each port as the inventory does, by interface with the host ("studio-hub:en3"),
 * or by interface alone when the host's name is not given. A port networksetup does not bind keeps its
 * receptacle's name. */
START_TEST(parser_findings_name_ports_by_interface)
{
    static const char *const hosts[] = { "studio-hub", NULL };
    const char *tail = "the Mac 2F8A6B4C-0D1E-4F23-A456-7B8C9D0E1F23 (Mac16,9) is reached through the hub or dock "
                       "\"TS4\", not by a direct cable; it is not counted as a cable";
    char want[TBM_FINDING_TEXT_MAX];
    tbm_raw_outputs_t raw;
    tbm_host_facts_t f;
    tbm_findings_t fs;
    const tbm_finding_t *x;
    const char *ports;
    size_t i;

    for (i = 0; i < 3; i++) {
        tbm_fixture_host("macos/studio-a1", &raw);
        free((void *)raw.thunderbolt.data);
        raw.thunderbolt.data = tbm_fixture("macos/studio-hub/system_profiler_SPThunderboltDataType.json",
                                           &raw.thunderbolt.len);
        raw.hostname = hosts[i % 2];
        ports = raw.hardware_ports.data;
        if (i == 2)
            raw.hardware_ports.data = NULL;   /* networksetup not captured: no interface is known */
        tbm_findings_init(&fs);
        tbm_facts_parse_all(&raw, &f, &fs);
        x = tbm_findings_find(&fs, "tb-peer-behind-hub");
        ck_assert_ptr_nonnull(x);
        ck_assert_str_eq(x->where, "system_profiler SPThunderboltDataType");
        snprintf(want, sizeof(want), "%s: %s", i == 0 ? "studio-hub:en3" : i == 1 ? "en3" : "Thunderbolt 1", tail);
        ck_assert_str_eq(x->what, want);
        raw.hardware_ports.data = ports;
        tbm_fixture_host_free(&raw);
        tbm_findings_free(&fs);
    }

    /* two ports named in one finding: Thunderbolt 1 (en3) given the domain UUID of Thunderbolt 2 (en2) */
    tbm_fixture_host("macos/studio-a1", &raw);
    ck_assert_ptr_nonnull(strstr(raw.thunderbolt.data, "0B7C1E42-5D8A-4F13-9A6E-2C4D8F1B7E02"));
    strstr(raw.thunderbolt.data, "0B7C1E42-5D8A-4F13-9A6E-2C4D8F1B7E02")[35] = '1';
    raw.hostname = "s1";
    tbm_findings_init(&fs);
    tbm_facts_parse_all(&raw, &f, &fs);
    x = tbm_findings_find(&fs, "tb-duplicate-uuid");
    ck_assert_ptr_nonnull(x);
    ck_assert_str_eq(x->what, "s1:en3 and s1:en2 both have domain UUID 0B7C1E42-5D8A-4F13-9A6E-2C4D8F1B7E01");
    tbm_fixture_host_free(&raw);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(cross_checks)
{
    tbm_raw_outputs_t raw;
    tbm_host_facts_t f;
    tbm_findings_t fs;
    const char *ns = "Hardware Port: Thunderbolt 2\nDevice: en3\nEthernet Address: 36:a4:c1:2e:00:02\n";

    tbm_fixture_host("macos/studio-a1", &raw);
    free((void *)raw.hardware_ports.data);
    raw.hardware_ports.data = strdup(ns);
    raw.hardware_ports.len = strlen(ns);
    raw.hostname = "studio-a1";
    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_facts_parse_all(&raw, &f, &fs), 0);
    ck_assert_str_eq(f.ports[1].iface, "en3");
    /* five ports lack an interface; the first is named */
    ck_assert_str_eq(tbm_findings_find(&fs, "tb-port-no-iface")->where, "studio-a1:Thunderbolt 1");
    ck_assert_str_eq(tbm_findings_find(&fs, "tb-port-no-iface")->what,
                     "Thunderbolt 1 has no network interface in networksetup");
    ck_assert_uint_eq(fs.n, 5);
    tbm_fixture_host_free(&raw);
    tbm_findings_free(&fs);
}
END_TEST

/* A Mac as netplan leaves it (bridge0 destroyed) whose sysctl.txt was typed as `sysctl hw ...`: the core counts
 * are read from it, with no warning that the perflevels capture is missing; the names not read are one note;
 * bridge0 absent is one note saying it is as wanted. Nothing else is said. */
START_TEST(netplanned_mac_is_quiet)
{
    tbm_raw_outputs_t raw;
    tbm_host_facts_t f;
    tbm_findings_t fs;
    const tbm_finding_t *x;

    tbm_fixture_host("macos/studio-netplanned", &raw);
    ck_assert_ptr_null(raw.sysctl_perflevels.data);
    raw.hostname = "studio-a1";
    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_facts_parse_all(&raw, &f, &fs), 0);
    ck_assert_int_eq(f.cores_performance, 24);
    ck_assert_int_eq(f.cores_efficiency, 8);
    ck_assert_str_eq(f.model_id, "Mac15,14");
    x = tbm_findings_find(&fs, "sysctl-extra-line");
    ck_assert_str_eq(x->what, "hw.ncpu, hw.byteorder, hw.activecpu, hw.physicalcpu, hw.logicalcpu, hw.pagesize and 5 "
                              "more are not read here; ignored");
    ck_assert_str_eq(x->where, "sysctl -n hw.memsize machdep.cpu.brand_string hw.model");
    ck_assert_str_eq(x->fix, "nothing to do: only the names in the command above are read");
    x = tbm_findings_find(&fs, "bridge-absent");
    ck_assert_str_eq(x->what, "bridge0 (\"Thunderbolt Bridge\" in networksetup) is not in ifconfig: it was destroyed, "
                              "which keeps it off as JACCL wants");
    ck_assert_str_eq(x->fix, "nothing to do");
    ck_assert_uint_eq(fs.n, 2);
    ck_assert_uint_eq(tbm_findings_count(&fs, TBM_SEV_WARNING), 0);
    ck_assert_int_eq(tbm_facts_find_iface(&f, "bridge0")->up, 0);
    tbm_fixture_host_free(&raw);
    tbm_findings_free(&fs);

    /* an empty perflevels capture beside those counts says nothing either; without them it is an error */
    tbm_fixture_host("macos/studio-netplanned", &raw);
    raw.sysctl_perflevels.data = strdup("");
    raw.sysctl_perflevels.len = 0;
    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_facts_parse_all(&raw, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 2);
    tbm_fixture_host_free(&raw);
    tbm_findings_free(&fs);
    tbm_fixture_host("macos/studio-a1", &raw);
    free((void *)raw.sysctl_perflevels.data);
    raw.sysctl_perflevels.data = strdup("");
    raw.sysctl_perflevels.len = 0;
    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_facts_parse_all(&raw, &f, &fs), 1);
    ck_assert_str_eq(fs.items[0].code, "output-empty");
    ck_assert_int_eq(f.cores_performance, 0);
    tbm_fixture_host_free(&raw);
    tbm_findings_free(&fs);
}
END_TEST

/* A cable from a Mac to itself: the probe says it as the inventory does (test_topology.c loopback_cable), an
 * error naming the ports by interface, once. */
START_TEST(cable_to_self_as_the_inventory_says_it)
{
    const char *ns = "Hardware Port: Thunderbolt 1\nDevice: en2\n\nHardware Port: Thunderbolt 2\nDevice: en3\n";
    tbm_raw_outputs_t raw;
    tbm_host_facts_t f;
    tbm_findings_t fs;
    const tbm_finding_t *x;

    memset(&raw, 0, sizeof(raw));
    raw.hostname = "mac01";
    raw.thunderbolt.data = tbm_fixture("macos/malformed/tb_cable_to_self.json", &raw.thunderbolt.len);
    raw.hardware_ports.data = ns;
    raw.hardware_ports.len = strlen(ns);
    tbm_findings_init(&fs);
    tbm_facts_parse_all(&raw, &f, &fs);
    x = tbm_findings_find(&fs, "cable-to-self");
    ck_assert_ptr_nonnull(x);
    ck_assert_int_eq(x->severity, TBM_SEV_ERROR);
    ck_assert_str_eq(x->where, "mac01:en2 <-> mac01:en3");
    ck_assert_str_eq(x->what, "a cable joins two ports of the same Mac (mac01:en2 and mac01:en3): it carries nothing "
                              "between Macs");
    ck_assert_str_eq(x->fix, "move one end of the cable to another Mac (or remove it), then probe again");
    ck_assert_uint_eq(tbm_findings_count(&fs, TBM_SEV_ERROR), 1);
    ck_assert_ptr_null(tbm_findings_find(&fs, "tb-port-no-iface"));
    free((void *)raw.thunderbolt.data);
    tbm_findings_free(&fs);
}
END_TEST

/* A capture that could not be read makes its part of the facts unknown, saying why; the rest is read. */
START_TEST(failed_captures_are_unknown)
{
    tbm_raw_outputs_t raw;
    tbm_host_facts_t f;
    tbm_findings_t fs;
    char why[TBM_UNKNOWN_MAX];

    tbm_fixture_host("macos/capture-no-ifconfig", &raw);
    tbm_findings_init(&fs);
    tbm_facts_parse_all(&raw, &f, &fs);
    ck_assert_str_eq(f.unknown[TBM_PART_NETWORK], "the capture failed (ifconfig: the output is empty)");
    ck_assert_str_eq(f.unknown[TBM_PART_THUNDERBOLT], "");
    ck_assert_str_eq(f.unknown[TBM_PART_RDMA], "");
    ck_assert_str_eq(f.unknown[TBM_PART_OS], "");
    ck_assert_int_gt(f.n_ports, 0);
    tbm_facts_unknown_why(&f, TBM_PART_NETWORK, why, sizeof(why));
    ck_assert_str_eq(why, "ifconfig: the output is empty");
    tbm_findings_free(&fs);
    tbm_fixture_host_free(&raw);

    tbm_fixture_host("macos/capture-tb-truncated", &raw);
    tbm_findings_init(&fs);
    tbm_facts_parse_all(&raw, &f, &fs);
    ck_assert_str_eq(f.unknown[TBM_PART_THUNDERBOLT], "the capture failed (system_profiler SPThunderboltDataType: "
                     "invalid JSON at line 75 column 32: the text ends inside the document (truncated?); capture the "
                     "output again in full)");
    ck_assert_str_eq(f.unknown[TBM_PART_NETWORK], "");
    ck_assert_int_eq(f.n_ports, 0);
    tbm_findings_free(&fs);
    tbm_fixture_host_free(&raw);

    /* nothing given: every part unknown */
    memset(&raw, 0, sizeof(raw));
    tbm_findings_init(&fs);
    tbm_facts_parse_all(&raw, &f, &fs);
    ck_assert_str_eq(f.unknown[TBM_PART_RDMA], "the capture failed (ibv_devices: no output of ibv_devices was given)");
    ck_assert_str_eq(f.unknown[TBM_PART_OS], "the capture failed (sw_vers: no output of sw_vers was given)");
    tbm_findings_free(&fs);
}
END_TEST

/* Control bytes of an output that is not understood are shown as '?' in the reason its part is unknown, so the
 * facts document holding that reason reads back. */
START_TEST(unknown_reason_is_printable)
{
    static const struct {
        const char *out, *why;
    } cases[] = {
        { "t\nt", "the capture failed (rdma_ctl status: rdma_ctl status said \"t?t\", not \"enabled\" or "
                  "\"disabled\")" },
        { "\x7f", "the capture failed (rdma_ctl status: rdma_ctl status said \"?\", not \"enabled\" or "
                  "\"disabled\")" },
        { "\x1e\x1e\x1e\x1et\nt", "the capture failed (rdma_ctl status: rdma_ctl status said \"????t?t\", not "
                                     "\"enabled\" or \"disabled\")" },
    };
    tbm_raw_outputs_t raw;
    tbm_host_facts_t f, back;
    tbm_findings_t fs;
    tbm_err_t err;
    char *text;
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tbm_fixture_host("macos/studio-a1", &raw);
        raw.hostname = "studio-a1";
        free((void *)raw.rdma_ctl.data);
        raw.rdma_ctl.data = strdup(cases[i].out);
        raw.rdma_ctl.len = strlen(cases[i].out);
        tbm_findings_init(&fs);
        tbm_facts_parse_all(&raw, &f, &fs);
        ck_assert_str_eq(f.unknown[TBM_PART_RDMA], cases[i].why);
        text = tbm_facts_to_json_string(&f, 0);
        ck_assert_ptr_nonnull(text);
        tbm_errclear(&err);
        ck_assert_msg(tbm_facts_from_json(text, strlen(text), &back, &err) == 0, "%s", err.msg);
        ck_assert_str_eq(back.unknown[TBM_PART_RDMA], cases[i].why);
        free(text);
        tbm_findings_free(&fs);
        tbm_fixture_host_free(&raw);
    }
}
END_TEST

START_TEST(nothing_given)
{
    tbm_raw_outputs_t raw;
    tbm_host_facts_t f;
    tbm_findings_t fs;

    memset(&raw, 0, sizeof(raw));
    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_facts_parse_all(&raw, &f, &fs), 0);
    /* every output is reported missing, each once */
    ck_assert_uint_eq(fs.n, tbm_raw_nsources);
    ck_assert_str_eq(fs.items[3].code, "output-missing");
    ck_assert_str_eq(fs.items[3].where, "ibv_devices");
    ck_assert_str_eq(fs.items[0].what, "no output of system_profiler SPThunderboltDataType was given");
    ck_assert_int_eq(f.rdma_enabled, -1);
    ck_assert_int_eq(f.n_ports, 0);
    tbm_findings_free(&fs);
}
END_TEST

/* Every slot gets the same buffer; each parser must refuse it with one error finding. */
static void all_slots(const char *buf, size_t len, const char *code)
{
    tbm_raw_outputs_t raw;
    tbm_host_facts_t f;
    tbm_findings_t fs;
    size_t i;

    memset(&raw, 0, sizeof(raw));
    for (i = 0; i < tbm_raw_nsources; i++) {
        tbm_raw_slot(&raw, i)->data = buf;
        tbm_raw_slot(&raw, i)->len = len;
    }
    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_facts_parse_all(&raw, &f, &fs), (int)tbm_raw_nsources);
    ck_assert_uint_eq(fs.n, tbm_raw_nsources);
    for (i = 0; i < fs.n; i++)
        ck_assert_str_eq(fs.items[i].code, code);
    ck_assert_int_eq(f.n_ports + f.n_ifaces + f.n_rdma, 0);
    tbm_findings_free(&fs);
}

START_TEST(ten_megabytes)
{
    size_t len = 10u * 1024u * 1024u;
    char *big = malloc(len);

    memset(big, 'x', len);
    all_slots(big, len, "output-too-large");
    free(big);
}
END_TEST

START_TEST(not_text)
{
    static const char nul[] = "enabled\0junk";
    static const char latin1[] = "ProductName:\tmacOS \xe9t\xe9\n";
    static const char surrogate[] = "en2: \xed\xa0\x80\n";
    static const char overlong[] = "\xc0\xaf";

    all_slots(nul, sizeof(nul) - 1, "output-invalid-utf8");
    all_slots(latin1, sizeof(latin1) - 1, "output-invalid-utf8");
    all_slots(surrogate, sizeof(surrogate) - 1, "output-invalid-utf8");
    all_slots(overlong, sizeof(overlong) - 1, "output-invalid-utf8");
}
END_TEST

START_TEST(utf8_is_accepted)
{
    /* "Thunderbolt-Brücke" (German macOS) and a 4-byte character are valid text */
    const char *text = "Hardware Port: Thunderbolt-Br\xc3\xbc" "cke\nDevice: bridge0\nEthernet Address: N/A\n"
                       "\nHardware Port: \xf0\x9f\x94\x8c\nDevice: en9\n";
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_uint_eq(tbm_utf8_check(text, strlen(text)), strlen(text));
    /* messages cut long values before a whole character, never inside one */
    ck_assert_int_eq(tbm_show_len("abcd\xc3\xbc", 6, 5), 4);
    ck_assert_int_eq(tbm_show_len("abcd\xc3\xbc", 6, 6), 6);
    ck_assert_int_eq(tbm_show_len("\xf0\x9f\x94\x8cx", 5, 3), 0);
    ck_assert_int_eq(tbm_text_parse(text, tbm_parse_networksetup, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_str_eq(f.ifaces[0].hwport, "Thunderbolt-Br\xc3\xbc" "cke");
    ck_assert_str_eq(f.ifaces[1].hwport, "\xf0\x9f\x94\x8c");
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(sources_table)
{
    tbm_raw_outputs_t raw;

    ck_assert_uint_eq(tbm_raw_nsources, 8);
    ck_assert_str_eq(tbm_raw_sources[0].file, "system_profiler_SPThunderboltDataType.json");
    ck_assert_str_eq(tbm_raw_sources[0].argv[2], "-json");
    ck_assert_ptr_null(tbm_raw_sources[0].argv[3]);
    ck_assert_str_eq(tbm_raw_sources[7].file, "sysctl_perflevels.txt");
    ck_assert_ptr_eq(tbm_raw_slot(&raw, 2), &raw.ifconfig);
    ck_assert_ptr_eq(tbm_raw_slot(&raw, 7), &raw.sysctl_perflevels);
    ck_assert_ptr_null(tbm_raw_slot(&raw, 8));
}
END_TEST

static Suite *facts_parse_suite(void)
{
    Suite *s = suite_create("facts_parse");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, studio_all);
    tcase_add_test(tc, mini_rdma_enabled_without_devices);
    tcase_add_test(tc, rdma_enabled_nothing_cabled);
    tcase_add_test(tc, parser_findings_name_ports_by_interface);
    tcase_add_test(tc, cross_checks);
    tcase_add_test(tc, netplanned_mac_is_quiet);
    tcase_add_test(tc, cable_to_self_as_the_inventory_says_it);
    tcase_add_test(tc, failed_captures_are_unknown);
    tcase_add_test(tc, unknown_reason_is_printable);
    tcase_add_test(tc, nothing_given);
    tcase_add_test(tc, ten_megabytes);
    tcase_add_test(tc, not_text);
    tcase_add_test(tc, utf8_is_accepted);
    tcase_add_test(tc, sources_table);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(facts_parse_suite)
