/* test_record_node.c: unit tests of lib/record_node.c (a node's facts in its record). */
#include "tbm_check.h"

#include <string.h>

#include "facts.h"
#include "json_read.h"
#include "record.h"

START_TEST(facts_become_the_node_part)
{
    tbm_host_facts_t f;
    json_object *node = json_object_new_object(), *rec = tbm_record_new(1, "c", "start", "RUNNING"), *l, *a;
    tbm_err_t err = { { 0 } };

    tbm_facts_init(&f);
    strcpy(f.os_version, "26.2");
    strcpy(f.os_build, "25C56");
    strcpy(f.chip, "Apple M3 Ultra");
    f.rdma_enabled = 1;
    f.n_rdma = 1;
    strcpy(f.rdma_devices[0], "rdma_en2");
    f.n_ports = 1;
    f.ports[0].receptacle = 2;
    f.ports[0].speed_gbps = 120;
    strcpy(f.ports[0].iface, "en2");
    strcpy(f.ports[0].peer_uuid, "AAAA-1");
    f.n_ifaces = 1;
    strcpy(f.ifaces[0].name, "en2");
    strcpy(f.ifaces[0].ipv4, "169.254.1.1");
    f.ifaces[0].up = f.ifaces[0].active = 1;
    json_object_object_add(node, "name", json_object_new_string("mac01"));
    tbm_record_node_facts(node, &f);
    ck_assert_str_eq(tbm_json_str(tbm_json_typed(node, "macos", json_type_object), "build"), "25C56");
    ck_assert_str_eq(tbm_json_str(node, "rdma"), "enabled: rdma_en2");
    ck_assert(tbm_record_is_absent(json_object_object_get(node, "memory_bytes"), NULL));
    l = json_object_array_get_idx(json_object_object_get(node, "links"), 0);
    ck_assert_int_eq(json_object_get_int(json_object_object_get(l, "speed_gbps")), 120);
    ck_assert_str_eq(tbm_json_str(l, "ipv4"), "169.254.1.1");
    a = json_object_new_array();
    json_object_array_add(a, node);
    json_object_object_add(rec, "nodes", a);
    ck_assert_msg(tbm_record_validate(rec, &err) == 0, "%s", err.msg);
    node = json_object_new_object();
    json_object_object_add(node, "name", json_object_new_string("mac02"));
    tbm_record_node_absent(node, "the agent of mac02 did not answer: Connection refused");
    json_object_array_add(a, node);
    ck_assert_msg(tbm_record_validate(rec, &err) == 0, "%s", err.msg);
    json_object_put(rec);
}
END_TEST

static Suite *node_suite(void)
{
    Suite *s = suite_create("record_node");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, facts_become_the_node_part);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(node_suite)
