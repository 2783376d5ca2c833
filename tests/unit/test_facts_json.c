/* test_facts_json.c: unit tests of lib/facts_json.c: the facts document written, read back, and refused
 * with a clear message when a member is missing, mistyped or out of bounds. */
#include "tbm_fixture.h"

#include "facts_json.h"

#include <json-c/json.h>

static void parse_host(const char *dir, const char *name, tbm_host_facts_t *f)
{
    tbm_raw_outputs_t raw;
    tbm_findings_t fs;

    tbm_fixture_host(dir, &raw);
    raw.hostname = name;
    tbm_findings_init(&fs);
    tbm_facts_parse_all(&raw, f, &fs);
    tbm_fixture_host_free(&raw);
    tbm_findings_free(&fs);
}

START_TEST(round_trip)
{
    static const char *const hosts[][2] = { { "macos/studio-a1", "studio-a1" }, { "macos/mini-b1", "mini-b1" } };
    tbm_host_facts_t f, back;
    tbm_err_t err;
    char *text, *again;
    size_t i;

    for (i = 0; i < 2; i++) {
        parse_host(hosts[i][0], hosts[i][1], &f);
        text = tbm_facts_to_json_string(&f, 1);
        ck_assert_ptr_nonnull(text);
        tbm_errclear(&err);
        ck_assert_msg(tbm_facts_from_json(text, strlen(text), &back, &err) == 0, "%s", err.msg);
        for (size_t k = 0; k < sizeof(f); k++)
            if (((char *)&f)[k] != ((char *)&back)[k])
                ck_abort_msg("byte %zu differs", k);
        again = tbm_facts_to_json_string(&back, 1);
        ck_assert_str_eq(text, again);
        free(text);
        free(again);
    }
}
END_TEST

START_TEST(layout)
{
    tbm_host_facts_t f;
    char *text;

    parse_host("macos/mini-b1", "mini-b1", &f);
    f.n_ifaces = 1;
    f.n_ports = 1;
    text = tbm_facts_to_json_string(&f, 0);
    ck_assert_str_eq(text,
        "{\"tbmesh_facts\":1,\"hostname\":\"mini-b1\","
        "\"hardware\":{\"model_name\":\"Mac mini\",\"model_id\":\"Mac16,10\",\"chip\":\"Apple M4\","
        "\"memory_bytes\":17179869184,\"cores_performance\":4,\"cores_efficiency\":6},"
        "\"os\":{\"name\":\"macOS\",\"version\":\"26.1\",\"build\":\"25B78\"},"
        "\"rdma\":{\"enabled\":true,\"devices\":[]},"
        "\"thunderbolt\":[{\"receptacle\":1,\"bus\":\"thunderboltusb4_bus_0\","
        "\"domain_uuid\":\"7D2E4A10-9C3B-4E51-8F6A-1B2C3D4E5F60\",\"speed_gbps\":40,\"connected\":true,"
        "\"peer_uuid\":\"A8B9C0D1-E2F3-4A5B-9C6D-7E8F90A1B2C3\",\"peer_name\":\"Mac mini\",\"iface\":\"en2\"}],"
        "\"interfaces\":[{\"name\":\"en0\",\"hwport\":\"Ethernet\",\"mac\":\"1c:57:dc:5a:20:01\","
        "\"ipv4\":\"10.20.0.21\",\"prefix_len\":24,\"up\":true,\"active\":true}]}");
    free(text);
    f.rdma_enabled = -1;
    text = tbm_facts_to_json_string(&f, 0);
    ck_assert_ptr_nonnull(strstr(text, "\"rdma\":{\"enabled\":null,"));
    free(text);
}
END_TEST

/* want and got hold the same JSON document: the same members and values, however json-c lays them out
 * (its releases differ: an empty list is "[ ]" over two lines in 0.16, "[]" in 0.18). */
static void same_document(const char *want, const char *got)
{
    json_object *a = json_tokener_parse(want), *b = json_tokener_parse(got);

    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    if (!json_object_equal(a, b))
        ck_abort_msg("the fixture differs from what the writer makes now:\n%s\n---\n%s", want, got);
    json_object_put(a);
    json_object_put(b);
}

/* The facts documents kept in tests/fixtures/facts (inputs of the topology and inventory tests) are exactly
 * what the parsers and the writer make of the macOS captures. */
START_TEST(fixture_documents_current)
{
    static const char *const hosts[][2] = {
        { "studio-a1", "studio-a1" }, { "mini-b1", "mini-b1" }, { "capture-no-ifconfig", "k1" },
        { "capture-tb-truncated", "k2" },
    };
    char dir[64], rel[64], *want, *got;
    tbm_host_facts_t f, back;
    tbm_err_t err;
    size_t i, len;
    int k;

    for (i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
        snprintf(dir, sizeof(dir), "macos/%s", hosts[i][0]);
        snprintf(rel, sizeof(rel), "facts/%s.json", hosts[i][0]);
        parse_host(dir, hosts[i][1], &f);
        want = tbm_fixture(rel, &len);
        got = tbm_facts_to_json_string(&f, 1);
        same_document(want, got);
        ck_assert_int_eq(tbm_facts_from_json(want, len, &back, &err), 0);
        ck_assert_str_eq(back.hostname, hosts[i][1]);
        for (k = 0; k < TBM_PART_COUNT; k++)   /* what is unknown stays unknown */
            ck_assert_str_eq(back.unknown[k], f.unknown[k]);
        free(want);
        free(got);
    }
}
END_TEST

/* A valid document with one piece replaced: `from` (the first occurrence) becomes `to`. */
static char *mutate(const char *from, const char *to)
{
    tbm_host_facts_t f;
    char *text, *at, *out;
    size_t n;

    parse_host("macos/studio-a1", "studio-a1", &f);
    text = tbm_facts_to_json_string(&f, 0);
    at = strstr(text, from);
    ck_assert_msg(at != NULL, "no \"%s\" in the document", from);
    n = strlen(text) - strlen(from) + strlen(to) + 1;
    out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    free(text);
    return out;
}

static void refused(const char *from, const char *to, const char *message)
{
    char *text = mutate(from, to);
    tbm_host_facts_t f;
    tbm_err_t err;
    char want[TBM_ERR_MAX];

    tbm_errclear(&err);
    ck_assert_int_eq(tbm_facts_from_json(text, strlen(text), &f, &err), -1);
    snprintf(want, sizeof(want), "facts: %s; produce the document again with `macnode probe` of this release",
             message);
    ck_assert_str_eq(err.msg, want);
    ck_assert_int_eq(f.n_ports + f.n_ifaces + f.n_rdma, 0);   /* left empty */
    ck_assert_str_eq(f.hostname, "");
    free(text);
}

START_TEST(refusals)
{
    refused("\"interfaces\":", "\"unknown\": {\"thunderbolt\": 3}, \"interfaces\":",
            "unknown.thunderbolt: expected a string, got an integer");
    refused("\"interfaces\":", "\"unknown\": [], \"interfaces\":", "unknown: expected an object, got an array");
    refused("\"tbmesh_facts\":1", "\"tbmesh_facts\":2", "tbmesh_facts: version 2 is not 1: use a probe of the same release");
    refused("\"tbmesh_facts\":1", "\"tbmesh\":1", "tbmesh_facts: missing or not an integer: this is not a facts document");
    refused("\"hostname\":\"studio-a1\"", "\"hostname\":\"\"", "hostname: empty");
    refused("\"hostname\":\"studio-a1\"", "\"hostname\":7", "hostname: expected a string, got an integer");
    refused("\"hostname\":\"studio-a1\"", "\"hostname\":\"a\\u0000b\"",
            "hostname: string of 3 bytes is longer than 63 or holds a NUL byte");
    refused("\"hostname\":\"studio-a1\"", "\"hostname\":\"tab\\there\"", "hostname: \"tab\there\" is not printable text");
    refused("\"memory_bytes\":274877906944", "\"memory_bytes\":-1", "hardware.memory_bytes: -1 is out of range 0..1125899906842624");
    refused("\"memory_bytes\":274877906944", "\"memory_bytes\":2.5e11",
            "hardware.memory_bytes: expected an integer 0..1125899906842624, got a number with a fraction");
    refused("\"cores_efficiency\":8", "\"cores_efficiency\":\"8\"",
            "hardware.cores_efficiency: expected an integer 0..4096, got a string");
    refused("\"hardware\":{", "\"hardware_\":{", "hardware: missing");
    refused("\"os\":{\"name\":\"macOS\",", "\"os\":{", "os.name: missing");
    refused("\"enabled\":true", "\"enabled\":1", "rdma.enabled: expected true, false or null, got an integer");
    refused("\"devices\":[\"rdma_en2\"", "\"devices\":[\"rdma en2\"",
            "rdma.devices[0]: \"rdma en2\" is not an interface name like \"en2\"");
    refused("\"devices\":[\"rdma_en2\"", "\"devices\":[\"\"", "rdma.devices[0]: empty device name");
    refused("\"devices\":[", "\"devices\":{},\"x\":[", "rdma.devices: expected an array, got an object");
    refused("\"rdma\":{", "\"rdma\":7,\"rdma_\":{", "rdma: missing or not an object");
    refused("\"speed_gbps\":80", "\"speed_gbps\":1000", "thunderbolt[0].speed_gbps: 1000 is out of range 0..999");
    refused("\"connected\":true", "\"connected\":\"yes\"",
            "thunderbolt[0].connected: expected true or false, got a string");
    refused("\"domain_uuid\":\"0B7C1E42", "\"domain_uuid\":\"ZZ7C1E42",
            "thunderbolt[0].domain_uuid: \"ZZ7C1E42-5D8A-4F13-9A6E-2C4D8F1B7E02\" is not a domain UUID "
            "(hex digits and '-')");
    refused("\"thunderbolt\":[{", "\"thunderbolt\":[7,{", "thunderbolt[0]: expected an object, got an integer");
    refused("\"thunderbolt\":[", "\"thunderbolt\":null,\"x\":[", "thunderbolt: expected an array, got null");
    refused("\"ipv4\":\"192.168.10.11\"", "\"ipv4\":\"192.168.010.11\"",
            "interfaces[0].ipv4: \"192.168.010.11\" is not an IPv4 address like \"169.254.1.1\"");
    refused("\"mac\":\"3c:a6:f6:4b:10:01\"", "\"mac\":\"3C:A6:F6:4B:10:01\"",
            "interfaces[0].mac: \"3C:A6:F6:4B:10:01\" is not a MAC address like \"36:a8:4b:01:02:03\"");
    refused("\"prefix_len\":24", "\"prefix_len\":33", "interfaces[0].prefix_len: 33 is out of range -1..32");
    refused("\"name\":\"en0\"", "\"name\":\"\"", "interfaces[0].name: empty");
    refused("\"name\":\"en0\"", "\"name\":\"en0-with-a-long-name\"",
            "interfaces[0].name: string of 20 bytes is longer than 15 or holds a NUL byte");
}
END_TEST

/* A Mac behind a hub: written only on the port that has one, read back the same; documents of earlier
 * probes (without these members) still read; a malformed one is refused. */
START_TEST(hub_members)
{
    tbm_host_facts_t f, back;
    tbm_err_t err;
    char *text, *again, *at;

    parse_host("macos/studio-a1", "studio-a1", &f);
    snprintf(f.ports[3].hub_peer_uuid, TBM_UUID_MAX, "2F8A6B4C-0D1E-4F23-A456-7B8C9D0E1F23");
    snprintf(f.ports[3].hub_peer_name, TBM_HOST_MAX, "Mac16,9");
    snprintf(f.ports[3].hub, TBM_HOST_MAX, "TS4");
    text = tbm_facts_to_json_string(&f, 0);
    at = strstr(text, "\"hub_peer_uuid\"");
    ck_assert_ptr_nonnull(at);
    ck_assert_ptr_null(strstr(at + 1, "\"hub_peer_uuid\""));   /* only that port */
    ck_assert_ptr_nonnull(strstr(text, "\"iface\":\"en5\",\"hub_peer_uuid\":\"2F8A6B4C-0D1E-4F23-A456-7B8C9D0E1F23\","
                                       "\"hub_peer_name\":\"Mac16,9\",\"hub\":\"TS4\"}"));
    ck_assert_int_eq(tbm_facts_from_json(text, strlen(text), &back, &err), 0);
    ck_assert_int_eq(memcmp(&f, &back, sizeof(f)), 0);
    again = tbm_facts_to_json_string(&back, 0);
    ck_assert_str_eq(text, again);
    free(text);
    free(again);
    text = mutate("\"iface\":\"en3\"", "\"iface\":\"en3\",\"hub_peer_uuid\":\"not a uuid\"");
    ck_assert_int_eq(tbm_facts_from_json(text, strlen(text), &back, &err), -1);
    ck_assert_str_eq(err.msg, "facts: thunderbolt[0].hub_peer_uuid: \"not a uuid\" is not a domain UUID (hex digits "
                              "and '-'); produce the document again with `macnode probe` of this release");
    free(text);
    text = mutate("\"iface\":\"en3\"", "\"iface\":\"en3\",\"hub\":7");
    ck_assert_int_eq(tbm_facts_from_json(text, strlen(text), &back, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "thunderbolt[0].hub: expected a string, got an integer"));
    free(text);
}
END_TEST

START_TEST(bounds_and_syntax)
{
    tbm_host_facts_t f;
    tbm_err_t err;
    char *text, *p;
    int i;

    text = malloc(64 * 1024);
    p = text + sprintf(text, "{\"tbmesh_facts\":1,\"hostname\":\"h\",\"hardware\":{\"model_name\":\"\",\"model_id\":\"\","
                             "\"chip\":\"\",\"memory_bytes\":0,\"cores_performance\":0,\"cores_efficiency\":0},"
                             "\"os\":{\"name\":\"\",\"version\":\"\",\"build\":\"\"},"
                             "\"rdma\":{\"enabled\":null,\"devices\":[]},\"interfaces\":[],\"thunderbolt\":[");
    for (i = 0; i < TBM_MAX_PORTS + 1; i++)
        p += sprintf(p, "%s{}", i ? "," : "");
    sprintf(p, "]}");
    ck_assert_int_eq(tbm_facts_from_json(text, strlen(text), &f, &err), -1);
    ck_assert_str_eq(err.msg, "facts: thunderbolt: 17 entries, more than the 16 allowed; produce the document again "
                              "with `macnode probe` of this release");
    sprintf(strstr(text, "\"thunderbolt\":["), "\"thunderbolt\":[]}");
    ck_assert_int_eq(tbm_facts_from_json(text, strlen(text), &f, &err), 0);
    ck_assert_str_eq(f.hostname, "h");
    ck_assert_int_eq(f.rdma_enabled, -1);
    ck_assert_int_eq(tbm_facts_from_json(text, strlen(text) - 1, &f, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "the text ends inside the document (truncated?)"));
    ck_assert_int_eq(tbm_facts_from_json("[1]", 3, &f, &err), -1);
    ck_assert_str_eq(err.msg, "facts: the document is an array, not an object; produce the document again with "
                              "`macnode probe` of this release");
    ck_assert_int_eq(tbm_facts_from_json(text, TBM_RAW_MAX + 1, &f, &err), -1);   /* length checked first */
    ck_assert_ptr_nonnull(strstr(err.msg, "JSON text of 4194305 bytes exceeds the limit of 4194304 bytes"));
    ck_assert_int_eq(tbm_facts_from_json("", 0, &f, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "empty JSON text"));
    ck_assert_int_eq(tbm_facts_from_json("{\"a\":\"\xff\"}", 8, &f, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "invalid JSON at line 1 column"));
    free(text);
}
END_TEST

static Suite *facts_json_suite(void)
{
    Suite *s = suite_create("facts_json");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, layout);
    tcase_add_test(tc, fixture_documents_current);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, hub_members);
    tcase_add_test(tc, bounds_and_syntax);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(facts_json_suite)
