/* test_health.c: unit tests of lib/health.c (one Mac's facts against tbmesh.conf, and the drain reason). */
#include "tbm_check.h"

#include <stdio.h>
#include <string.h>

#include "health.h"

static const char *lab =
    "Group=studio Nodes=mac[01-03] Topology=mesh Link=tb5 Rdma=yes Mode=bridge Backends=jaccl,ring,mpi\n"
    "Cable=mac01:en2,mac02:en2 Addr=169.254.1.1/30,169.254.1.2/30 Rdma=rdma_en2,rdma_en2 Speed=80\n"
    "Cable=mac01:en3,mac03:en2 Addr=169.254.2.1/30,169.254.2.2/30 Rdma=rdma_en3,rdma_en2 Speed=80\n"
    "Cable=mac02:en3,mac03:en3 Addr=169.254.3.1/30,169.254.3.2/30 Rdma=rdma_en3,rdma_en3 Speed=80\n";

static tbm_conf_t conf;
static tbm_host_facts_t f;

/* mac01 as it should be: two ports with a Mac at the other end at 80 Gb/s, en2 and en3 up with the planned
 * addresses, RDMA on with both devices, bridge0 down. */
static void setup(void)
{
    tbm_err_t err = { { 0 } };
    tbm_iface_t *i;
    int k;

    ck_assert_msg(tbm_conf_parse(lab, strlen(lab), "t.conf", &conf, NULL, &err) == 0, "%s", err.msg);
    tbm_facts_init(&f);
    snprintf(f.hostname, sizeof(f.hostname), "mac01");
    for (k = 0; k < 2; k++) {
        tbm_tb_port_t *p = &f.ports[f.n_ports++];
        p->receptacle = k + 1;
        p->connected = 1;
        p->speed_gbps = 80;
        snprintf(p->peer_uuid, sizeof(p->peer_uuid), "PEER-%d", k);
        snprintf(p->iface, sizeof(p->iface), "en%d", k + 2);
        i = &f.ifaces[f.n_ifaces++];
        snprintf(i->name, sizeof(i->name), "en%d", k + 2);
        snprintf(i->ipv4, sizeof(i->ipv4), "169.254.%d.1", k + 1);
        i->prefix_len = 30;
        i->up = i->active = 1;
    }
    i = &f.ifaces[f.n_ifaces++];
    snprintf(i->name, sizeof(i->name), "bridge0");
    f.rdma_enabled = 1;
    f.n_rdma = 2;
    snprintf(f.rdma_devices[0], sizeof(f.rdma_devices[0]), "rdma_en2");
    snprintf(f.rdma_devices[1], sizeof(f.rdma_devices[1]), "rdma_en3");
}

static void teardown(void)
{
    tbm_conf_free(&conf);
}

static size_t check(tbm_findings_t *fs, const char *node)
{
    tbm_findings_init(fs);
    return tbm_health_check(&conf, node, &f, fs);
}

START_TEST(a_mac_as_planned_is_healthy)
{
    tbm_findings_t fs;
    char reason[128] = "x";

    ck_assert_uint_eq(check(&fs, "mac01"), 0);
    ck_assert_uint_eq(fs.n, 0);
    tbm_health_reason(&fs, reason, sizeof(reason));
    ck_assert_str_eq(reason, "");
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(a_pulled_cable_is_named_with_both_ends)
{
    tbm_findings_t fs;
    const tbm_finding_t *x;
    char reason[128];

    f.ports[0].connected = 0;
    f.ports[0].peer_uuid[0] = '\0';
    ck_assert_uint_eq(check(&fs, "mac01"), 1);
    x = tbm_findings_find(&fs, "cable-missing");
    ck_assert_ptr_nonnull(x);
    ck_assert_str_eq(x->where, "mac01:en2 <-> mac02:en2");
    ck_assert_str_eq(x->what, "nothing is at the other end of Thunderbolt 1");
    tbm_health_reason(&fs, reason, sizeof(reason));
    ck_assert_str_eq(reason, "tbmesh: cable-missing at mac01:en2 <-> mac02:en2: nothing is at the other end of "
                             "Thunderbolt 1");
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(interfaces_addresses_rdma_and_bridge0)
{
    tbm_findings_t fs;
    char reason[128];

    f.ifaces[0].up = 0;                                   /* en2 down */
    snprintf(f.ifaces[1].ipv4, sizeof(f.ifaces[1].ipv4), "169.254.9.9");   /* en3 renumbered */
    f.n_rdma = 1;                                         /* rdma_en3 gone */
    f.ifaces[2].up = 1;                                   /* bridge0 up */
    ck_assert_uint_eq(check(&fs, "mac01"), 4);
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "iface-down"));
    ck_assert_str_eq(tbm_findings_find(&fs, "addr-wrong")->what, "en3 has 169.254.9.9, tbmesh.conf plans 169.254.2.1");
    ck_assert_str_eq(tbm_findings_find(&fs, "rdma-missing")->what, "RDMA device rdma_en3 is missing");
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "bridge0-up"));
    tbm_health_reason(&fs, reason, sizeof(reason));
    ck_assert_str_eq(reason, "tbmesh: iface-down at mac01:en2 <-> mac02:en2: interface en2 is down (and 3 more)");
    /* cut to fit, the count kept */
    tbm_health_reason(&fs, reason, 48);
    ck_assert_uint_eq(strlen(reason), 47);
    ck_assert_str_eq(reason + strlen(reason) - strlen(" (and 3 more)"), " (and 3 more)");
    ck_assert_int_eq(strncmp(reason, "tbmesh: iface-down at mac01:en2", 31), 0);
    tbm_findings_free(&fs);
    f.ifaces[0].up = 1;
    f.n_rdma = 2;
    f.ifaces[2].up = 0;
    snprintf(f.ifaces[1].ipv4, sizeof(f.ifaces[1].ipv4), "169.254.2.1");
    f.rdma_enabled = 0;
    ck_assert_uint_eq(check(&fs, "mac01"), 2);            /* both RDMA cables */
    ck_assert_str_eq(tbm_findings_find(&fs, "rdma-disabled")->fix, "enable it from Recovery: rdma_ctl enable");
    tbm_findings_free(&fs);
}
END_TEST

/* In a group without RDMA, the RDMA devices of the cables between Macs of its RdmaSubset= are checked (JACCL
 * may run there), and those of no other cable. */
START_TEST(rdma_subset_devices_are_checked)
{
    static const char *wide =
        "Group=studio Nodes=mac[01-03] Topology=mesh Link=tb4 Rdma=no Mode=bridge Backends=ring,mpi "
        "RdmaSubset=mac[01-02]\n"
        "Cable=mac01:en2,mac02:en2 Addr=169.254.1.1/30,169.254.1.2/30 Rdma=rdma_en2,rdma_en2 Speed=80\n"
        "Cable=mac01:en3,mac03:en2 Addr=169.254.2.1/30,169.254.2.2/30 Speed=80\n"
        "Cable=mac02:en3,mac03:en3 Addr=169.254.3.1/30,169.254.3.2/30 Speed=40\n";
    tbm_err_t err = { { 0 } };
    tbm_findings_t fs;

    tbm_conf_free(&conf);
    ck_assert_msg(tbm_conf_parse(wide, strlen(wide), "t.conf", &conf, NULL, &err) == 0, "%s", err.msg);
    f.n_rdma = 0;                                         /* no device at all */
    ck_assert_uint_eq(check(&fs, "mac01"), 1);
    ck_assert_str_eq(tbm_findings_find(&fs, "rdma-missing")->where, "mac01:en2 <-> mac02:en2");
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(unknown_nodes_missing_ports_and_slow_links)
{
    tbm_findings_t fs;

    ck_assert_uint_eq(check(&fs, "mac09"), 1);
    ck_assert_str_eq(tbm_findings_find(&fs, "node-unknown")->what, "mac09 is not a node of tbmesh.conf");
    tbm_findings_free(&fs);
    f.ports[1].iface[0] = '\0';                           /* networksetup lost en3's port */
    f.ports[0].speed_gbps = 40;                           /* a TB4 cable on a TB5 link: a warning only */
    ck_assert_uint_eq(check(&fs, "mac01"), 1);
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "port-missing"));
    ck_assert_str_eq(tbm_findings_find(&fs, "link-slow")->what, "the link runs at 40 Gb/s; tbmesh.conf says 80");
    ck_assert_int_eq(tbm_findings_find(&fs, "link-slow")->severity, TBM_SEV_WARNING);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(drain_state_from_scontrol)
{
    ck_assert_int_eq(tbm_health_drain_state("NodeName=mac01 Arch=arm64 State=IDLE ThreadsPerCore=1"), TBM_DRAIN_NONE);
    ck_assert_int_eq(tbm_health_drain_state("NodeName=mac01 State=IDLE+DRAIN ThreadsPerCore=1 Reason=tbmesh: "
                                            "cable-missing at mac01:en2 <-> mac02:en2 [root@2026-11-30T08:00:00]"),
                     TBM_DRAIN_OURS);
    ck_assert_int_eq(tbm_health_drain_state("NodeName=mac01 State=MIXED+DRAIN Reason=swap the PSU [root@x]"),
                     TBM_DRAIN_OTHER);
    ck_assert_int_eq(tbm_health_drain_state("NodeName=mac01 State=DRAINING Reason=tbmesh: x\n"), TBM_DRAIN_OURS);
    /* DRAIN in the reason is not a drained state; a drain without a reason is not ours */
    ck_assert_int_eq(tbm_health_drain_state("NodeName=mac01 State=IDLE Reason=DRAIN later"), TBM_DRAIN_NONE);
    ck_assert_int_eq(tbm_health_drain_state("NodeName=mac01 State=IDLE+DRAIN ThreadsPerCore=1"), TBM_DRAIN_OTHER);
    ck_assert_int_eq(tbm_health_drain_state("Node mac09 not found"), TBM_DRAIN_UNKNOWN);
    ck_assert_int_eq(tbm_health_drain_state(NULL), TBM_DRAIN_UNKNOWN);
}
END_TEST

static Suite *health_suite(void)
{
    Suite *s = suite_create("health");
    TCase *tc = tcase_create("health");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_mac_as_planned_is_healthy);
    tcase_add_test(tc, a_pulled_cable_is_named_with_both_ends);
    tcase_add_test(tc, interfaces_addresses_rdma_and_bridge0);
    tcase_add_test(tc, rdma_subset_devices_are_checked);
    tcase_add_test(tc, unknown_nodes_missing_ports_and_slow_links);
    tcase_add_test(tc, drain_state_from_scontrol);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(health_suite)
