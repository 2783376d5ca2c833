/* test_parse_thunderbolt.c: unit tests of lib/parse_thunderbolt.c over captured and malformed outputs. */
#include "tbm_fixture.h"

#define TB_FILE "system_profiler_SPThunderboltDataType.json"

static void assert_port(const tbm_tb_port_t *p, int receptacle, const char *bus, const char *uuid, int gbps,
                        int connected, const char *peer_uuid, const char *peer_name)
{
    ck_assert_int_eq(p->receptacle, receptacle);
    ck_assert_str_eq(p->bus, bus);
    ck_assert_str_eq(p->domain_uuid, uuid);
    ck_assert_int_eq(p->speed_gbps, gbps);
    ck_assert_int_eq(p->connected, connected);
    ck_assert_str_eq(p->peer_uuid, peer_uuid);
    ck_assert_str_eq(p->peer_name, peer_name);
    ck_assert_str_eq(p->iface, "");
}

START_TEST(studio_mesh_three_cables)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/studio-a1/" TB_FILE, tbm_parse_thunderbolt, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_str_eq(f.model_name, "Mac Studio");
    ck_assert_int_eq(f.n_ports, 6);
    /* sorted by receptacle although buses come in another order; "80 Gb/s" and "Up to 80 Gb/s" alike */
    assert_port(&f.ports[0], 1, "thunderboltusb4_bus_1", "0B7C1E42-5D8A-4F13-9A6E-2C4D8F1B7E02", 80, 1,
                "9F44D1B3-7A20-4C8E-B51D-6E0F2A9C4B21", "Mac15,14");
    assert_port(&f.ports[1], 2, "thunderboltusb4_bus_0", "0B7C1E42-5D8A-4F13-9A6E-2C4D8F1B7E01", 80, 1,
                "5E21A9C0-3B64-4D7F-8E12-90AB3C5D2F10", "Mac Studio");
    assert_port(&f.ports[2], 3, "thunderboltusb4_bus_2", "0B7C1E42-5D8A-4F13-9A6E-2C4D8F1B7E03", 80, 1,
                "C3D58E7A-1F96-4B02-A7C4-8D31E6F05A32", "Mac Studio");
    assert_port(&f.ports[3], 4, "thunderboltusb4_bus_3", "0B7C1E42-5D8A-4F13-9A6E-2C4D8F1B7E04", 120, 0, "", "");
    /* an SSD is attached: the port is connected, but no Mac is there */
    assert_port(&f.ports[4], 5, "thunderboltusb4_bus_4", "0B7C1E42-5D8A-4F13-9A6E-2C4D8F1B7E05", 40, 1, "", "");
    assert_port(&f.ports[5], 6, "thunderboltusb4_bus_5", "0B7C1E42-5D8A-4F13-9A6E-2C4D8F1B7E06", 120, 0, "", "");
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(mini_tb4_ring_and_display)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/mini-b1/" TB_FILE, tbm_parse_thunderbolt, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_str_eq(f.model_name, "Mac mini");
    ck_assert_int_eq(f.n_ports, 3);
    assert_port(&f.ports[0], 1, "thunderboltusb4_bus_0", "7D2E4A10-9C3B-4E51-8F6A-1B2C3D4E5F60", 40, 1,
                "A8B9C0D1-E2F3-4A5B-9C6D-7E8F90A1B2C3", "Mac mini");
    assert_port(&f.ports[1], 2, "thunderboltusb4_bus_1", "7D2E4A10-9C3B-4E51-8F6A-1B2C3D4E5F61", 40, 1,
                "D4C3B2A1-0F9E-4D8C-B7A6-958473625140", "Mac16,10");
    assert_port(&f.ports[2], 3, "thunderboltusb4_bus_2", "7D2E4A10-9C3B-4E51-8F6A-1B2C3D4E5F62", 40, 1, "", "");
    tbm_findings_free(&fs);
}
END_TEST

/* A Mac behind a Thunderbolt dock is no cable: kept apart (hub_*), with a finding saying what to do. */
START_TEST(peer_behind_hub_beside_display)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;
    const tbm_finding_t *x;

    ck_assert_int_eq(tbm_fixture_parse("macos/studio-hub/" TB_FILE, tbm_parse_thunderbolt, &f, &fs), 0);
    ck_assert_int_eq(f.n_ports, 2);
    assert_port(&f.ports[0], 1, "thunderboltusb4_bus_0", "61E0C5A2-44B1-4C7D-9D08-3A5F7E2B1C01", 40, 1, "", "");
    ck_assert_str_eq(f.ports[0].hub_peer_uuid, "2F8A6B4C-0D1E-4F23-A456-7B8C9D0E1F23");
    ck_assert_str_eq(f.ports[0].hub_peer_name, "Mac16,9");
    ck_assert_str_eq(f.ports[0].hub, "TS4");
    assert_port(&f.ports[1], 2, "thunderboltusb4_bus_1", "61E0C5A2-44B1-4C7D-9D08-3A5F7E2B1C02", 40, 0, "", "");
    ck_assert_str_eq(f.ports[1].hub_peer_uuid, "");
    ck_assert_uint_eq(fs.n, 1);
    x = tbm_findings_find(&fs, "tb-peer-behind-hub");
    ck_assert_ptr_nonnull(x);
    ck_assert_int_eq(x->severity, TBM_SEV_WARNING);
    ck_assert_str_eq(x->where, "system_profiler SPThunderboltDataType");
    ck_assert_str_eq(x->what, "Thunderbolt 1: the Mac 2F8A6B4C-0D1E-4F23-A456-7B8C9D0E1F23 (Mac16,9) is "
                              "reached through the hub or dock \"TS4\", not by a direct cable; it is not counted as "
                              "a cable");
    ck_assert_str_eq(x->fix, "cable the two Macs directly, port to port, with no hub, dock or daisy chain between "
                             "them: JACCL's RDMA needs direct cables");
    tbm_findings_free(&fs);
}
END_TEST

/* The other Mac on the dock sees the first behind it too; its other port has a direct cable. */
START_TEST(hub_and_direct_cable_on_one_mac)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/hub-peer/" TB_FILE, tbm_parse_thunderbolt, &f, &fs), 0);
    ck_assert_int_eq(f.n_ports, 2);
    assert_port(&f.ports[0], 1, "thunderboltusb4_bus_0", "2F8A6B4C-0D1E-4F23-A456-7B8C9D0E1F23", 40, 1, "", "");
    ck_assert_str_eq(f.ports[0].hub_peer_uuid, "61E0C5A2-44B1-4C7D-9D08-3A5F7E2B1C01");
    ck_assert_str_eq(f.ports[0].hub, "TS4");
    assert_port(&f.ports[1], 2, "thunderboltusb4_bus_1", "2F8A6B4C-0D1E-4F23-A456-7B8C9D0E1F24", 40, 1,
                "9A0B1C2D-3E4F-4A5B-8C6D-7E8F9A0B1C2D", "Mac mini");
    ck_assert_str_eq(f.ports[1].hub_peer_uuid, "");
    ck_assert_str_eq(f.ports[1].hub, "");
    ck_assert_uint_eq(fs.n, 1);
    ck_assert_ptr_nonnull(strstr(tbm_findings_find(&fs, "tb-peer-behind-hub")->what, "Thunderbolt 1: "));
    tbm_findings_free(&fs);
}
END_TEST

/* A Mac cabled to the port wins over one found behind a device listed before it; a hub with no name. */
START_TEST(direct_peer_wins_over_hub)
{
    const char *text =
        "{\"SPThunderboltDataType\": ["
        " {\"_name\": \"b0\", \"domain_uuid_key\": \"AAAA-0001\", \"receptacle_1_tag\": {\"receptacle_id_key\": \"1\","
        "  \"current_speed_key\": \"80 Gb/s\", \"receptacle_status_key\": \"receptacle_connected\"},"
        "  \"_items\": [{\"_items\": [{\"domain_uuid_key\": \"CCCC-0001\"}]},"
        "   {\"domain_uuid_key\": \"BBBB-0001\", \"device_name_key\": \"Mac Studio\"}]},"
        " {\"_name\": \"b1\", \"domain_uuid_key\": \"AAAA-0002\", \"receptacle_1_tag\": {\"receptacle_id_key\": \"2\","
        "  \"current_speed_key\": \"80 Gb/s\", \"receptacle_status_key\": \"receptacle_connected\"},"
        "  \"_items\": [{\"device_id_key\": \"0x1\", \"_items\": [{\"_items\": [{\"domain_uuid_key\": \"DDDD-0001\"}]}]}]}]}";
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_text_parse(text, tbm_parse_thunderbolt, &f, &fs), 0);
    ck_assert_str_eq(f.ports[0].peer_uuid, "BBBB-0001");
    ck_assert_str_eq(f.ports[0].peer_name, "Mac Studio");
    ck_assert_str_eq(f.ports[0].hub_peer_uuid, "");
    ck_assert_str_eq(tbm_findings_find(&fs, "tb-peer-ambiguous")->what,
                     "Thunderbolt 1: 2 Macs found behind this port; only the first (BBBB-0001) is used");
    /* two devices deep, behind a device without a name */
    ck_assert_str_eq(f.ports[1].peer_uuid, "");
    ck_assert_str_eq(f.ports[1].hub_peer_uuid, "DDDD-0001");
    ck_assert_str_eq(f.ports[1].hub, "");
    ck_assert_str_eq(tbm_findings_find(&fs, "tb-peer-behind-hub")->what,
                     "Thunderbolt 2: the Mac DDDD-0001 (no name) is reached through a hub or dock, not by a direct "
                     "cable; it is not counted as a cable");
    ck_assert_uint_eq(fs.n, 2);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(speed_forms)
{
    ck_assert_int_eq(tbm_parse_tb_speed("Up to 80 Gb/s"), 80);
    ck_assert_int_eq(tbm_parse_tb_speed("80 Gb/s"), 80);
    ck_assert_int_eq(tbm_parse_tb_speed("Up to 120 Gb/s"), 120);
    ck_assert_int_eq(tbm_parse_tb_speed(" 40 Gb/s "), 40);
    ck_assert_int_eq(tbm_parse_tb_speed("Up to 2.5 Gb/s"), 2);
    ck_assert_int_eq(tbm_parse_tb_speed("fast"), -1);
    ck_assert_int_eq(tbm_parse_tb_speed("Gb/s"), -1);
    ck_assert_int_eq(tbm_parse_tb_speed("0 Gb/s"), -1);
    ck_assert_int_eq(tbm_parse_tb_speed("80 Mb/s"), -1);
    ck_assert_int_eq(tbm_parse_tb_speed("-80 Gb/s"), -1);
    ck_assert_int_eq(tbm_parse_tb_speed("99999999999999999999999 Gb/s"), -1);
    ck_assert_int_eq(tbm_parse_tb_speed("8.x Gb/s"), -1);
    ck_assert_int_eq(tbm_parse_tb_speed(""), -1);
}
END_TEST

/* The parser's result on a malformed fixture: rc, and the finding with that code must exist. */
static void expect(const char *rel, int rc, const char *code, const char *what_part)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;
    const tbm_finding_t *x;

    ck_assert_int_eq(tbm_fixture_parse(rel, tbm_parse_thunderbolt, &f, &fs), rc);
    x = tbm_findings_find(&fs, code);
    ck_assert_msg(x != NULL, "%s: no finding %s", rel, code);
    ck_assert_msg(strstr(x->what, what_part) != NULL, "%s: \"%s\" lacks \"%s\"", rel, x->what, what_part);
    ck_assert_str_ne(x->fix, "");
    ck_assert_str_eq(x->where, "system_profiler SPThunderboltDataType");
    tbm_findings_free(&fs);
}

START_TEST(truncated_json)
{
    expect("macos/malformed/tb_truncated.json", -1, "tb-json-invalid", "ends inside the document");
}
END_TEST

START_TEST(not_a_list)
{
    expect("macos/malformed/tb_not_a_list.json", -1, "tb-json-shape", "no SPThunderboltDataType array");
}
END_TEST

START_TEST(invalid_utf8)
{
    expect("macos/malformed/tb_invalid_utf8.json", -1, "output-invalid-utf8", "line 5");
}
END_TEST

START_TEST(empty_output)
{
    expect("macos/malformed/empty.txt", -1, "output-empty", "empty");
    expect("macos/malformed/blank.txt", -1, "output-empty", "empty");
}
END_TEST

START_TEST(wrong_types)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/tb_wrong_types.json", tbm_parse_thunderbolt, &f, &fs), 0);
    /* bus 1 is a string: skipped; the other three are kept with what could be read */
    ck_assert_int_eq(f.n_ports, 3);
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "tb-bad-bus"));
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "tb-port-no-uuid"));
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "tb-receptacle-invalid"));
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "tb-no-receptacle"));
    ck_assert_str_eq(tbm_findings_find(&fs, "tb-speed-unknown")->what,
                     "bus 0 (thunderboltusb4_bus_0): current_speed_key \"(missing)\" is not a speed like "
                     "\"Up to 80 Gb/s\"");
    /* receptacle 0 (unknown) sorts first */
    ck_assert_int_eq(f.ports[0].receptacle, 0);
    ck_assert_str_eq(f.ports[0].domain_uuid, "");
    ck_assert_int_eq(f.ports[2].receptacle, 4);
    ck_assert_int_eq(f.ports[2].speed_gbps, 0);
    ck_assert_int_eq(f.ports[2].connected, 1);
    ck_assert_str_eq(f.ports[2].peer_uuid, "");   /* its "peer" UUID is an array: not a Mac */
    ck_assert_uint_eq(tbm_findings_count(&fs, TBM_SEV_ERROR), 0);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(duplicate_uuid_and_receptacle)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/tb_duplicate_uuid.json", tbm_parse_thunderbolt, &f, &fs),
                     0);
    ck_assert_int_eq(f.n_ports, 2);
    ck_assert_str_eq(tbm_findings_find(&fs, "tb-duplicate-uuid")->what,
                     "bus thunderboltusb4_bus_0 and bus thunderboltusb4_bus_1 both have domain UUID "
                     "0B7C1E42-5D8A-4F13-9A6E-2C4D8F1B7E01");
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "tb-duplicate-receptacle"));
    ck_assert_uint_eq(tbm_findings_count(&fs, TBM_SEV_ERROR), 2);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(cable_to_self_and_two_macs_on_a_hub)
{
    const char *text =
        "{\"SPThunderboltDataType\": ["
        " {\"_name\": \"b0\", \"domain_uuid_key\": \"AAAA-0001\", \"receptacle_1_tag\": {\"receptacle_id_key\": \"1\","
        "  \"current_speed_key\": \"80 Gb/s\", \"receptacle_status_key\": \"receptacle_connected\"},"
        "  \"_items\": [{\"domain_uuid_key\": \"AAAA-0002\", \"device_name_key\": \"Mac Studio\"}]},"
        " {\"_name\": \"b1\", \"domain_uuid_key\": \"AAAA-0002\", \"receptacle_1_tag\": {\"receptacle_id_key\": \"2\","
        "  \"current_speed_key\": \"80 Gb/s\", \"receptacle_status_key\": \"receptacle_connected\"},"
        "  \"_items\": [{\"_name\": \"hub\", \"_items\": [{\"domain_uuid_key\": \"BBBB-0001\"},"
        "   {\"domain_uuid_key\": \"CCCC-0001\"}]}]}]}";
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_text_parse(text, tbm_parse_thunderbolt, &f, &fs), 0);
    /* the cable from port 1 to port 2 is said once the ports have interfaces (test_facts_parse.c) */
    ck_assert_ptr_null(tbm_findings_find(&fs, "cable-to-self"));
    ck_assert_str_eq(f.ports[0].peer_uuid, "AAAA-0002");
    ck_assert_str_eq(tbm_findings_find(&fs, "tb-peer-ambiguous")->what,
                     "Thunderbolt 2: 2 Macs found behind this port; only the first (BBBB-0001) is used");
    ck_assert_str_eq(f.ports[1].peer_uuid, "");   /* behind a hub: no cable */
    ck_assert_str_eq(f.ports[1].hub_peer_uuid, "BBBB-0001");
    ck_assert_str_eq(f.ports[1].hub_peer_name, "");
    ck_assert_str_eq(f.ports[1].hub, "hub");
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "tb-peer-behind-hub"));
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(bad_values_dropped)
{
    const char *text =
        "{\"SPThunderboltDataType\": [{\"_name\": \"b0\", \"device_name_key\": \"Mac\\tStudio\","
        " \"domain_uuid_key\": \"not a uuid!\", \"receptacle_1_tag\": {\"receptacle_id_key\": \"100\"}},"
        " {\"_name\": \"b1\", \"device_name_key\": \"Mac mini\", \"domain_uuid_key\": \"A\\u0000B\"}]}";
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_text_parse(text, tbm_parse_thunderbolt, &f, &fs), 0);
    ck_assert_int_eq(f.n_ports, 2);
    ck_assert_str_eq(f.ports[0].domain_uuid, "");
    ck_assert_str_eq(f.ports[1].domain_uuid, "");   /* a NUL inside the string: not taken */
    ck_assert_str_eq(f.model_name, "Mac mini");     /* the tab made the first one unusable */
    ck_assert_str_eq(tbm_findings_find(&fs, "tb-bad-value")->what,
                     "bus 0 (b0): domain_uuid_key \"not a uuid!\" is too long or malformed; ignored");
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "tb-receptacle-invalid"));
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(model_differs)
{
    const char *text = "{\"SPThunderboltDataType\": [{\"_name\": \"b0\", \"device_name_key\": \"Mac Studio\"},"
                       " {\"_name\": \"b1\", \"device_name_key\": \"Mac mini\"}]}";
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_text_parse(text, tbm_parse_thunderbolt, &f, &fs), 0);
    ck_assert_str_eq(f.model_name, "Mac Studio");
    ck_assert_str_eq(tbm_findings_find(&fs, "tb-model-differs")->what,
                     "bus 1 (b1): device_name_key \"Mac mini\" differs from \"Mac Studio\" on another bus");
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(too_many_buses)
{
    char *text = malloc(64 * 1024), *p = text;
    tbm_host_facts_t f;
    tbm_findings_t fs;
    int i;

    p += sprintf(p, "{\"SPThunderboltDataType\": [");
    for (i = 0; i < TBM_MAX_PORTS + 3; i++)
        p += sprintf(p, "%s{\"_name\": \"b%d\", \"domain_uuid_key\": \"%04X\", \"receptacle_1_tag\":"
                        " {\"receptacle_id_key\": \"%d\", \"current_speed_key\": \"Up to 80 Gb/s\"}}",
                     i ? "," : "", i, i, i + 1);
    sprintf(p, "]}");
    ck_assert_int_eq(tbm_text_parse(text, tbm_parse_thunderbolt, &f, &fs), 0);
    ck_assert_int_eq(f.n_ports, TBM_MAX_PORTS);
    ck_assert_int_eq(f.ports[TBM_MAX_PORTS - 1].receptacle, TBM_MAX_PORTS);
    ck_assert_str_eq(tbm_findings_find(&fs, "tb-too-many-ports")->what,
                     "Thunderbolt 17: more than 16 Thunderbolt buses; the rest are ignored");
    free(text);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(json_edge_cases)
{
    static const char *const bad[] = {
        "{\"SPThunderboltDataType\": []} trailing",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        "{\"SPThunderboltDataType\": [1,]}",
        "nul",
    };
    tbm_host_facts_t f;
    tbm_findings_t fs;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(tbm_text_parse(bad[i], tbm_parse_thunderbolt, &f, &fs), -1);
        ck_assert_msg(tbm_findings_find(&fs, "tb-json-invalid") != NULL, "case %zu", i);
        tbm_findings_free(&fs);
    }
    ck_assert_int_eq(tbm_text_parse("{\"SPThunderboltDataType\": []}", tbm_parse_thunderbolt, &f, &fs), 0);
    ck_assert_int_eq(f.n_ports, 0);
    ck_assert_uint_eq(fs.n, 0);
    tbm_findings_free(&fs);
}
END_TEST

static Suite *thunderbolt_suite(void)
{
    Suite *s = suite_create("parse_thunderbolt");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, studio_mesh_three_cables);
    tcase_add_test(tc, mini_tb4_ring_and_display);
    tcase_add_test(tc, peer_behind_hub_beside_display);
    tcase_add_test(tc, hub_and_direct_cable_on_one_mac);
    tcase_add_test(tc, direct_peer_wins_over_hub);
    tcase_add_test(tc, speed_forms);
    tcase_add_test(tc, truncated_json);
    tcase_add_test(tc, not_a_list);
    tcase_add_test(tc, invalid_utf8);
    tcase_add_test(tc, empty_output);
    tcase_add_test(tc, wrong_types);
    tcase_add_test(tc, duplicate_uuid_and_receptacle);
    tcase_add_test(tc, cable_to_self_and_two_macs_on_a_hub);
    tcase_add_test(tc, bad_values_dropped);
    tcase_add_test(tc, model_differs);
    tcase_add_test(tc, too_many_buses);
    tcase_add_test(tc, json_edge_cases);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(thunderbolt_suite)
