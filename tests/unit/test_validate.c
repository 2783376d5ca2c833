/* test_validate.c: unit tests of lib/validate.c: every checklist finding, group verdicts, placement. */
#include "tbm_check.h"
#include <string.h>

#include "tbm_labfacts.h"
#include "validate.h"

static tbm_host_facts_t lab[80];
static tbm_topology_t topo;
static tbm_validation_t val;

static void run(size_t n)
{
    tbm_err_t err = {{0}};

    ck_assert_int_eq(tbm_topology_build(&topo, lab, n, &err), 0);
    ck_assert_int_eq(tbm_validate(&topo, &val, &err), 0);
}

static void done(void)
{
    tbm_validation_free(&val);
    tbm_topology_free(&topo);
}

static const char *backends_of(size_t g)
{
    static char buf[64];
    tbm_backends_format(val.groups[g].caps.backends, buf, sizeof(buf));
    return buf;
}

static const tbm_finding_t *must_find(const char *code)
{
    const tbm_finding_t *f = tbm_findings_find(&val.findings, code);
    ck_assert_msg(f != NULL, "no finding %s", code);
    return f;
}

START_TEST(embedded_lab)
{
    const tbm_finding_t *f;

    lab_embedded(lab);
    run(8);
    ck_assert_int_eq(tbm_validation_fit(&val), 1);
    ck_assert_uint_eq(val.n_groups, 2);
    ck_assert_str_eq(backends_of(0), "jaccl,jaccl-ring,ring,mpi");
    ck_assert_int_eq(val.groups[0].caps.rdma, 1);
    ck_assert_int_eq(val.groups[0].link, TBM_LINK_TB5);
    ck_assert_int_eq(val.groups[0].caps.topology, TBM_TOPO_MESH);
    ck_assert_uint_eq(val.groups[0].caps.n_nodes, 4);
    ck_assert_str_eq(backends_of(1), "ring,mpi");
    ck_assert_int_eq(val.groups[1].caps.rdma, 0);
    ck_assert_int_eq(val.groups[1].link, TBM_LINK_TB4);
    ck_assert_uint_eq(val.findings.n, 1);
    f = must_find("rdma-unavailable");
    ck_assert_int_eq(f->severity, TBM_SEV_INFO);
    ck_assert_str_eq(f->where, "mac[05-08]");
    /* the minis say RDMA is enabled: the fix names what enabling cannot fix, never "enable RDMA" */
    ck_assert_str_eq(f->what, "no Mac of the group lists an RDMA device although rdma_ctl says enabled on mac05 and "
                              "others, and its links run at 40 Gb/s or less: JACCL is not available (ring and mpi "
                              "work without)");
    ck_assert_str_eq(f->fix, "RDMA is already enabled, so rdma_ctl enable is not the fix. Causes left: a Thunderbolt "
                             "4 port or Mac: the link runs at 40 Gb/s, RDMA needs Thunderbolt 5 (above 40) on both "
                             "ends; the cable (Thunderbolt 5, seated). Then check ibv_devices");
    ck_assert_str_eq(val.groups[1].why[TBM_BACKEND_JACCL], "rdma-unavailable: no Mac of the group lists an RDMA "
                     "device although rdma_ctl says enabled on mac05 and others, and its links run at 40 Gb/s or less: "
                     "JACCL is not available (ring and mpi work without)");
    done();
}
END_TEST

START_TEST(rdma_ring_of_four)
{
    lab_hosts(lab, 4, "mac", 1);
    lab_ring(lab, 0, 4, 0, 80, 1, 1);
    run(4);
    ck_assert_int_eq(tbm_validation_fit(&val), 1);
    ck_assert_str_eq(backends_of(0), "jaccl-ring,ring,mpi");
    ck_assert_uint_eq(val.findings.n, 0);
    done();
}
END_TEST

START_TEST(meshes_of_eight_and_nine)
{
    const tbm_finding_t *f;
    tbm_err_t why = {{0}};

    lab_hosts(lab, 8, "mac", 1);
    lab_mesh(lab, 0, 8, 0, 80, 1);
    run(8);
    ck_assert_uint_eq(val.findings.n, 0);
    ck_assert_int_eq(tbm_group_supports(&val.groups[0].caps, TBM_BACKEND_JACCL, 8, &why), 1);
    done();

    lab_hosts(lab, 9, "mac", 1);
    lab_mesh(lab, 0, 9, 0, 80, 1);
    run(9);
    ck_assert_int_eq(tbm_validation_fit(&val), 1);
    f = must_find("mesh-too-large");
    ck_assert_int_eq(f->severity, TBM_SEV_WARNING);
    ck_assert_str_eq(f->where, "mac[01-09]");
    ck_assert_str_eq(f->what, "a full mesh of 9 Macs: a JACCL mesh takes at most 8 of them");
    ck_assert_str_eq(f->fix, "run JACCL mesh jobs on 8 Macs or fewer; jobs on more use jaccl-ring or ring");
    ck_assert_str_eq(backends_of(0), "jaccl,jaccl-ring,ring,mpi");
    snprintf(val.groups[0].caps.name, TBM_GROUP_NAME_MAX, "big");
    ck_assert_int_eq(tbm_group_supports(&val.groups[0].caps, TBM_BACKEND_JACCL, 9, &why), 0);
    ck_assert_str_eq(why.msg, "a JACCL mesh has at most 8 Macs; you asked for 9: use --mlx-backend=jaccl-ring or ring");
    ck_assert_int_eq(tbm_group_supports(&val.groups[0].caps, TBM_BACKEND_JACCL, 8, &why), 1);
    ck_assert_int_eq(tbm_group_supports(&val.groups[0].caps, TBM_BACKEND_JACCL_RING, 9, &why), 1);
    ck_assert_int_eq(tbm_group_supports(&val.groups[0].caps, TBM_BACKEND_AUTO, 9, &why), 1);
    done();
}
END_TEST

START_TEST(chain_is_not_mesh_or_ring)
{
    const tbm_finding_t *f;

    lab_hosts(lab, 4, "mac", 1);
    lab_ring(lab, 0, 4, 0, 80, 1, 0);
    run(4);
    ck_assert_int_eq(tbm_validation_fit(&val), 0);
    f = must_find("not-mesh-or-ring");
    ck_assert_int_eq(f->severity, TBM_SEV_ERROR);
    ck_assert_str_eq(f->where, "mac[01-04]");
    ck_assert_str_eq(f->what, "4 Macs with 3 joined pairs are neither a full mesh nor a ring; pairs not joined: "
                              "mac01-mac03, mac01-mac04, mac02-mac04");
    ck_assert_str_eq(f->fix, "cable every pair (a full mesh of at most 8) or one closed cycle through all (a ring)");
    ck_assert_str_eq(backends_of(0), "mpi");
    done();
}
END_TEST

START_TEST(cut_cable_names_it)
{
    const tbm_finding_t *f;

    lab_embedded(lab);
    /* cut mac02 <-> mac04: both ends report nothing any more; mac02 still hears mac04 (one-sided) */
    lab[3].ports[1].peer_uuid[0] = '\0';
    lab[3].ports[1].connected = 0;
    run(8);
    ck_assert_int_eq(tbm_validation_fit(&val), 0);
    f = must_find("cable-one-sided");
    ck_assert_str_eq(f->where, "mac02:en4 <-> mac04:?");
    f = must_find("not-mesh-or-ring");
    ck_assert_str_eq(f->where, "mac[01-04]");
    ck_assert_str_eq(f->what, "4 Macs with 5 joined pairs are neither a full mesh nor a ring; pairs not joined: "
                              "mac02-mac04");
    ck_assert_int_eq(val.cable_severity[4], TBM_SEV_ERROR + 1);
    ck_assert_int_eq(val.cable_severity[0], 0);
    ck_assert_str_eq(backends_of(0), "mpi");
    ck_assert_str_eq(backends_of(1), "ring,mpi");
    ck_assert_uint_eq(tbm_findings_count(&val.findings, TBM_SEV_ERROR), 2);
    done();
}
END_TEST

START_TEST(multi_rail_mesh_is_fit)
{
    lab_hosts(lab, 3, "mac", 1);
    lab_mesh(lab, 0, 3, 0, 80, 1);
    lab_cable(lab, 0, 1, 3, 80, 1);
    run(3);
    ck_assert_int_eq(tbm_validation_fit(&val), 1);
    ck_assert_str_eq(backends_of(0), "jaccl,jaccl-ring,ring,mpi");
    ck_assert_ptr_nonnull(tbm_findings_find(&val.findings, "multi-rail"));
    done();
}
END_TEST

START_TEST(duplicate_uuid_blocks_group)
{
    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    lab_cable(lab, 0, 1, 1, 80, 1);
    snprintf(lab[1].ports[1].domain_uuid, TBM_UUID_MAX, "%s", lab[1].ports[0].domain_uuid);
    run(2);
    ck_assert_int_eq(tbm_validation_fit(&val), 0);
    must_find("uuid-duplicate");
    ck_assert_str_eq(backends_of(0), "mpi");
    ck_assert_int_eq(val.host_severity[1], TBM_SEV_ERROR + 1);
    done();
}
END_TEST

START_TEST(tb4_with_devices_listed)
{
    const tbm_finding_t *f;

    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 40, 1);
    run(2);
    ck_assert_int_eq(tbm_validation_fit(&val), 0);
    f = must_find("link-not-tb5");
    ck_assert_int_eq(f->severity, TBM_SEV_ERROR);
    ck_assert_str_eq(f->where, "mac01:en2 <-> mac02:en2");
    ck_assert_str_eq(f->what, "the link runs at 40 Gb/s; RDMA needs Thunderbolt 5 (above 40 Gb/s) on both ends, "
                              "whatever ibv_devices lists");
    ck_assert_str_eq(backends_of(0), "ring,mpi");
    ck_assert_int_eq(val.groups[0].caps.rdma, 0);
    ck_assert_int_eq(val.groups[0].link, TBM_LINK_TB4);
    done();
}
END_TEST

/* Two Macs on a Thunderbolt 5 cable; mac02 lists no RDMA device, with this rdma_ctl state and macOS. */
static void missing_on_mac02(int rdma_enabled, const char *os)
{
    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    lab[1].n_rdma = 0;
    lab[1].rdma_enabled = rdma_enabled;
    snprintf(lab[1].os_version, sizeof(lab[1].os_version), "%s", os);
    run(2);
}

START_TEST(rdma_device_missing_one_end)
{
    const tbm_finding_t *f;

    missing_on_mac02(1, "26.2");
    f = must_find("rdma-missing");
    ck_assert_str_eq(f->where, "mac01:en2 <-> mac02:en2");
    ck_assert_str_eq(f->what, "mac02 lists no RDMA device rdma_en2 (ibv_devices; rdma_ctl says enabled)");
    /* enabled already: the link is Thunderbolt 5, so the port, the cable or macOS */
    ck_assert_str_eq(f->fix, "RDMA is already enabled, so rdma_ctl enable is not the fix. Causes left: the port (on "
                             "Mac Studio the one beside Ethernet has no RDMA); the cable (Thunderbolt 5, seated). Then "
                             "check ibv_devices");
    ck_assert_str_eq(backends_of(0), "ring,mpi");
    done();
}
END_TEST

/* What each state of rdma_ctl makes of a missing device: enable it only where it is not enabled. */
START_TEST(rdma_missing_fix_follows_rdma_ctl)
{
    const tbm_finding_t *f;

    missing_on_mac02(0, "26.2");
    f = must_find("rdma-missing");
    ck_assert_str_eq(f->what, "mac02 lists no RDMA device rdma_en2 (ibv_devices; rdma_ctl says disabled)");
    ck_assert_str_eq(f->fix, "enable RDMA from Recovery (rdma_ctl enable) on that Mac, reboot, and check ibv_devices");
    done();
    missing_on_mac02(-1, "26.2");
    ck_assert_str_eq(must_find("rdma-missing")->fix, "run `rdma_ctl status` on that Mac; if disabled, enable RDMA "
                     "from Recovery (rdma_ctl enable) and reboot; then check ibv_devices");
    done();
    /* enabled on macOS 26.1: that is named, with its version */
    missing_on_mac02(1, "26.1");
    ck_assert_str_eq(must_find("rdma-missing")->fix, "RDMA is already enabled, so rdma_ctl enable is not the fix. "
                     "Causes left: the port (on Mac Studio the one beside Ethernet has no RDMA); the cable "
                     "(Thunderbolt 5, seated); macOS 26.1, older than 26.2: update it. Then check ibv_devices");
    ck_assert_ptr_nonnull(tbm_findings_find(&val.findings, "os-too-old"));
    done();
}
END_TEST

/* A group without devices whose Macs say RDMA is disabled keeps the advice to enable it. */
START_TEST(rdma_unavailable_disabled)
{
    const tbm_finding_t *f;

    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 0);
    lab[0].rdma_enabled = lab[1].rdma_enabled = 0;
    run(2);
    f = must_find("rdma-unavailable");
    ck_assert_str_eq(f->what, "no Mac of the group lists an RDMA device: JACCL is not available");
    ck_assert_str_eq(f->fix, "for JACCL, cable Thunderbolt 5 Macs and enable RDMA from Recovery (rdma_ctl enable); "
                             "ring and mpi work without");
    done();
    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 0);
    lab[0].rdma_enabled = 0;
    snprintf(lab[1].os_version, sizeof(lab[1].os_version), "26.1");
    run(2);
    f = must_find("rdma-unavailable");
    ck_assert_str_eq(f->what, "no Mac of the group lists an RDMA device although rdma_ctl says enabled on mac02: "
                              "JACCL is not available (ring and mpi work without)");
    ck_assert_ptr_nonnull(strstr(f->fix, "macOS 26.1, older than 26.2: update it"));
    done();
}
END_TEST

START_TEST(ipv4_missing_and_iface_problems)
{
    const tbm_finding_t *f;

    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    lab[1].ifaces[1].ipv4[0] = '\0';
    lab[1].ifaces[1].prefix_len = -1;
    run(2);
    f = must_find("ipv4-missing");
    ck_assert_str_eq(f->where, "mac01:en2 <-> mac02:en2");
    ck_assert_str_eq(f->what, "mac02:en2 has no IPv4 address (JACCL and ring need one on every Thunderbolt "
                              "interface)");
    ck_assert_str_eq(backends_of(0), "mpi");
    ck_assert_int_eq(tbm_validation_fit(&val), 0);
    done();

    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    snprintf(lab[1].ifaces[1].ipv4, TBM_IPV4_MAX, "10.0.0.300");
    run(2);
    ck_assert_str_eq(must_find("ipv4-missing")->what, "mac02:en2 has no valid IPv4 address ('10.0.0.300') (JACCL "
                                                      "and ring need one on every Thunderbolt interface)");
    done();

    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    lab[0].ifaces[1].up = 0;
    run(2);
    ck_assert_str_eq(must_find("iface-down")->what, "mac01:en2 is down");
    done();

    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    snprintf(lab[0].ports[0].iface, TBM_IFNAME_MAX, "en9");
    run(2);
    ck_assert_str_eq(must_find("iface-unknown")->what,
                     "mac01: Thunderbolt 1 is bound to no known network interface (not in ifconfig)");
    done();
}
END_TEST

START_TEST(subnets)
{
    const tbm_finding_t *f;

    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    snprintf(lab[1].ifaces[1].ipv4, TBM_IPV4_MAX, "10.0.0.6");
    run(2);
    f = must_find("subnet-mismatch");
    ck_assert_str_eq(f->where, "mac01:en2 <-> mac02:en2");
    ck_assert_str_eq(f->what, "mac01:en2 has 10.0.0.1/30 and mac02:en2 has 10.0.0.6/30: not on one /30 nor on "
                              "one common prefix");
    ck_assert_str_eq(f->fix, "put both ends on one /30 of their own: macnode netplan prints a plan");
    ck_assert_str_eq(backends_of(0), "mpi");
    done();

    /* the same address at both ends */
    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    snprintf(lab[1].ifaces[1].ipv4, TBM_IPV4_MAX, "10.0.0.1");
    run(2);
    ck_assert_str_eq(must_find("subnet-mismatch")->what, "mac01:en2 has 10.0.0.1/30 and mac02:en2 has 10.0.0.1/30: "
                                                         "the same address");
    done();

    /* the network address of the /30 is not a host address */
    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    snprintf(lab[1].ifaces[1].ipv4, TBM_IPV4_MAX, "10.0.0.0");
    run(2);
    must_find("subnet-mismatch");
    done();

    /* link-local /16 on both ends (DHCP without server) is one common prefix */
    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    snprintf(lab[0].ifaces[1].ipv4, TBM_IPV4_MAX, "169.254.10.7");
    snprintf(lab[1].ifaces[1].ipv4, TBM_IPV4_MAX, "169.254.200.9");
    lab[0].ifaces[1].prefix_len = lab[1].ifaces[1].prefix_len = 16;
    run(2);
    ck_assert_uint_eq(val.findings.n, 0);
    done();

    /* different stated prefixes, yet one /30 */
    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    lab[0].ifaces[1].prefix_len = 24;
    run(2);
    ck_assert_uint_eq(val.findings.n, 0);
    done();
}
END_TEST

/* Two cables of one group on one /30: an error naming both cables and the subnet; the group keeps mpi only. */
START_TEST(address_collisions)
{
    const tbm_finding_t *f;

    lab_hosts(lab, 4, "mac", 1);
    lab_mesh(lab, 0, 4, 0, 80, 1);
    snprintf(lab[2].ifaces[3].ipv4, TBM_IPV4_MAX, "10.0.0.1");   /* mac03:en4 <-> mac04:en4 takes cable 0's /30 */
    snprintf(lab[3].ifaces[3].ipv4, TBM_IPV4_MAX, "10.0.0.2");
    run(4);
    f = must_find("addr-collision");
    ck_assert_uint_eq(tbm_findings_count(&val.findings, TBM_SEV_ERROR), 1);
    ck_assert_int_eq(f->severity, TBM_SEV_ERROR);
    ck_assert_str_eq(f->where, "mac01:en2 <-> mac02:en2, mac03:en4 <-> mac04:en4");
    ck_assert_str_eq(f->what, "the cables mac01:en2 <-> mac02:en2 and mac03:en4 <-> mac04:en4 use one subnet "
                              "10.0.0.0/30: traffic for one leaves through the other");
    ck_assert_str_eq(f->fix, "run `macnode netplan --renumber` (every cable gets a /30 of its own) and apply it on "
                             "every Mac (--apply), then probe them and run tbmesh inventory again");
    ck_assert_str_eq(backends_of(0), "mpi");
    ck_assert_int_eq(tbm_validation_fit(&val), 0);
    done();

    /* a /29 on one cable holds the /30 of another */
    lab_hosts(lab, 3, "mac", 1);
    lab_mesh(lab, 0, 3, 0, 80, 1);
    lab[0].ifaces[1].prefix_len = lab[1].ifaces[1].prefix_len = 29;
    run(3);
    ck_assert_str_eq(must_find("addr-collision")->what, "the cables mac01:en2 <-> mac02:en2 and mac01:en3 <-> "
                     "mac03:en2 use the overlapping subnets 10.0.0.0/29 and 10.0.0.4/30: traffic for one leaves "
                     "through the other");
    done();

    /* two groups holding one address; the same subnets with other addresses are no collision */
    lab_hosts(lab, 4, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    lab_cable(lab, 2, 3, 0, 80, 1);
    run(4);
    ck_assert_str_eq(must_find("addr-collision")->what, "the cables mac01:en2 <-> mac02:en2 and mac03:en2 <-> "
                     "mac04:en2 use one subnet 10.0.0.0/30: traffic for one leaves through the other");
    ck_assert_str_eq(backends_of(0), "mpi");
    ck_assert_str_eq(backends_of(1), "mpi");
    done();
    lab_hosts(lab, 4, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    lab_cable(lab, 2, 3, 0, 80, 1);
    lab[0].ifaces[1].prefix_len = lab[1].ifaces[1].prefix_len = 16;
    lab[2].ifaces[1].prefix_len = lab[3].ifaces[1].prefix_len = 16;
    snprintf(lab[2].ifaces[1].ipv4, TBM_IPV4_MAX, "10.0.9.1");
    snprintf(lab[3].ifaces[1].ipv4, TBM_IPV4_MAX, "10.0.9.2");
    run(4);
    ck_assert_ptr_null(tbm_findings_find(&val.findings, "addr-collision"));
    done();
}
END_TEST

/* A cable inside the management network; loopback, link-local and Thunderbolt interfaces are no management
 * network. */
START_TEST(address_in_management_network)
{
    tbm_iface_t *en0;

    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    en0 = &lab[1].ifaces[lab[1].n_ifaces++];
    snprintf(en0->name, TBM_IFNAME_MAX, "en0");
    snprintf(en0->hwport, TBM_HOST_MAX, "Ethernet");
    snprintf(en0->ipv4, TBM_IPV4_MAX, "10.0.0.77");
    en0->prefix_len = 24;
    en0->up = 1;
    run(2);
    ck_assert_str_eq(must_find("addr-collision")->where, "mac01:en2 <-> mac02:en2, mac02:en0");
    ck_assert_str_eq(must_find("addr-collision")->what, "the cable mac01:en2 <-> mac02:en2 uses 10.0.0.0/30, which "
                     "overlaps the management network 10.0.0.0/24 of mac02:en0: traffic for one leaves through the "
                     "other");
    ck_assert_str_eq(backends_of(0), "mpi");
    done();
    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    en0 = &lab[1].ifaces[lab[1].n_ifaces++];
    snprintf(en0->name, TBM_IFNAME_MAX, "en0");
    snprintf(en0->ipv4, TBM_IPV4_MAX, "10.9.0.77");
    en0->prefix_len = 24;
    en0->up = 1;
    en0 = &lab[1].ifaces[lab[1].n_ifaces++];
    snprintf(en0->name, TBM_IFNAME_MAX, "lo0");
    snprintf(en0->ipv4, TBM_IPV4_MAX, "127.0.0.1");
    en0->prefix_len = 8;
    en0->up = 1;
    run(2);
    ck_assert_uint_eq(val.findings.n, 0);
    done();
}
END_TEST

/* A Mac whose capture failed: one error saying which facts are unknown and why, and no conclusion drawn from
 * them (no one-sided cable, no missing address, no uncabled Mac). */
START_TEST(unknown_facts_draw_no_conclusion)
{
    const tbm_finding_t *f;
    size_t i;

    lab_hosts(lab, 3, "mac", 1);
    lab_mesh(lab, 0, 3, 0, 80, 1);
    lab[1].n_ports = 0;
    snprintf(lab[1].unknown[TBM_PART_THUNDERBOLT], TBM_UNKNOWN_MAX, "the capture failed (system_profiler "
             "SPThunderboltDataType: invalid JSON at line 75 column 32)");
    run(3);
    f = must_find("facts-unknown");
    ck_assert_int_eq(f->severity, TBM_SEV_ERROR);
    ck_assert_str_eq(f->where, "mac02");
    ck_assert_str_eq(f->what, "no Thunderbolt facts for mac02 (probe failed: system_profiler SPThunderboltDataType: "
                              "invalid JSON at line 75 column 32): nothing is concluded from them, and mac02 is "
                              "left out of every group");
    ck_assert_str_eq(f->fix, "probe it again (`macnode probe` on mac02 says which command failed and why), then run "
                             "tbmesh inventory again");
    ck_assert_str_eq(must_find("cable-end-unknown")->what, "mac01:en2 sees a Mac with domain UUID UUID-0001-00 that "
                     "no host of the inventory reports; the Thunderbolt facts of mac02 are unknown, so it may be there");
    ck_assert_int_eq(must_find("cable-end-unknown")->severity, TBM_SEV_INFO);
    ck_assert_ptr_null(tbm_findings_find(&val.findings, "cable-one-sided"));
    ck_assert_ptr_null(tbm_findings_find(&val.findings, "host-uncabled"));
    ck_assert_uint_eq(tbm_findings_count(&val.findings, TBM_SEV_ERROR), 1);
    for (i = 0; i < topo.n_groups; i++)
        if (topo.groups[i].n_hosts == 1 && topo.groups[i].hosts[0] == 1)
            ck_assert_str_eq(backends_of(i), "none");
    done();

    /* the network facts of one end unknown: no missing address, no unknown interface */
    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    lab[0].ifaces[1].ipv4[0] = '\0';
    lab[0].ifaces[1].prefix_len = -1;
    snprintf(lab[0].unknown[TBM_PART_NETWORK], TBM_UNKNOWN_MAX, "the capture failed (ifconfig: the output is empty)");
    run(2);
    ck_assert_str_eq(must_find("facts-unknown")->what, "no network facts for mac01 (probe failed: ifconfig: the "
                     "output is empty): nothing is concluded from them");
    ck_assert_uint_eq(val.findings.n, 1);
    ck_assert_str_eq(backends_of(0), "mpi");
    done();
}
END_TEST

/* Eight Macs in a Thunderbolt 5 mesh, one of its 28 cables at 40 Gb/s: the group stays without RDMA, and a
 * warning names the cable, the fix and the Macs that still run JACCL. */
START_TEST(one_slow_cable_in_eight)
{
    const tbm_finding_t *f;
    int i, j, c = 0;

    lab_hosts(lab, 8, "mac", 1);
    for (i = 0; i < 8; i++)
        for (j = i + 1; j < 8; j++)
            lab_cable(lab, i, j, c++, i == 2 && j == 7 ? 40 : 80, 1);
    run(8);
    ck_assert_str_eq(backends_of(0), "ring,mpi");
    f = must_find("rdma-subset");
    ck_assert_int_eq(f->severity, TBM_SEV_WARNING);
    ck_assert_str_eq(f->where, "mac[01-08]");
    ck_assert_str_eq(f->what, "1 cable keeps JACCL from the whole group: mac03:en8 <-> mac08:en4 at 40 Gb/s where "
                              "RDMA wants above 40 Gb/s (Thunderbolt 5); mac[01-07] form an RDMA mesh without mac08 "
                              "(jaccl); all of them form an RDMA ring (jaccl-ring, in the order mac01 mac02 mac03 "
                              "mac04 mac05 mac06 mac07 mac08)");
    ck_assert_ptr_nonnull(strstr(f->fix, "replace the cable with Thunderbolt 5 cables between Thunderbolt 5 ports"));
    ck_assert_str_eq(must_find("link-not-tb5")->where, "mac03:en8 <-> mac08:en4");
    ck_assert_uint_eq(tbm_findings_count(&val.findings, TBM_SEV_WARNING), 2);
    ck_assert_uint_eq(val.groups[0].rdma_subset, 0x7f);   /* mac[01-07]: RdmaSubset= in tbmesh.conf */
    done();
}
END_TEST

/* The Macs that still run JACCL leave out what any other finding rules RDMA out on: a Mac with bridge0 up, a
 * cable without an address; a finding on the whole group (macOS versions that differ) leaves no subset. */
START_TEST(rdma_subset_leaves_out_other_problems)
{
    const tbm_finding_t *f;
    int i, j, c = 0;

    lab_hosts(lab, 8, "mac", 1);
    for (i = 0; i < 8; i++)
        for (j = i + 1; j < 8; j++)
            lab_cable(lab, i, j, c++, i == 2 && j == 7 ? 40 : 80, 1);
    lab[1].ifaces[0].up = 1;   /* bridge0 on mac02 */
    run(8);
    ck_assert_str_eq(must_find("bridge0-up")->where, "mac02");
    f = must_find("rdma-subset");
    ck_assert_ptr_nonnull(strstr(f->what, "(Thunderbolt 5); mac[01,03-07] form an RDMA mesh without mac[02,08] (jaccl)"));
    ck_assert_uint_eq(val.groups[0].rdma_subset, 0x7d);
    done();

    lab_hosts(lab, 8, "mac", 1);
    for (i = 0, c = 0; i < 8; i++)
        for (j = i + 1; j < 8; j++)
            lab_cable(lab, i, j, c++, i == 2 && j == 7 ? 40 : 80, 1);
    for (i = 0; i < lab[3].n_ifaces; i++)   /* mac04's end of its cable to mac05 has no address */
        if (!strcmp(lab[3].ifaces[i].name, lab[3].ports[3].iface))
            lab[3].ifaces[i].ipv4[0] = '\0';
    run(8);
    ck_assert_ptr_nonnull(tbm_findings_find(&val.findings, "ipv4-missing"));
    ck_assert_ptr_nonnull(strstr(must_find("rdma-subset")->what, "1 cable keeps JACCL from the whole group: mac03:en8 "
                                                                 "<-> mac08:en4 at 40 Gb/s"));
    ck_assert_uint_eq(__builtin_popcount(val.groups[0].rdma_subset), 6);
    ck_assert_uint_eq(val.groups[0].rdma_subset & 0x18, 0x08);   /* mac04 or mac05, not both */
    done();

    lab_hosts(lab, 8, "mac", 1);
    for (i = 0, c = 0; i < 8; i++)
        for (j = i + 1; j < 8; j++)
            lab_cable(lab, i, j, c++, i == 2 && j == 7 ? 40 : 80, 1);
    snprintf(lab[4].os_version, TBM_HOST_MAX, "26.3");
    run(8);
    ck_assert_ptr_nonnull(tbm_findings_find(&val.findings, "os-mismatch"));
    f = must_find("rdma-subset");
    ck_assert_ptr_nonnull(strstr(f->what, "(jaccl-ring, in the order mac01 mac02 mac03 mac04 mac05 mac06 mac07 mac08), "
                                          "once the group's other problems that rule JACCL out are fixed"));
    ck_assert_uint_eq(val.groups[0].rdma_subset, 0);
    done();
}
END_TEST

START_TEST(bridge0_up)
{
    const tbm_finding_t *f;

    lab_embedded(lab);
    lab[2].ifaces[0].up = 1;   /* mac03 (studio-a, RDMA) */
    lab[6].ifaces[0].up = 1;   /* mac07 (mini-b, TB4) */
    run(8);
    f = &val.findings.items[0];
    ck_assert_str_eq(f->code, "bridge0-up");
    ck_assert_int_eq(f->severity, TBM_SEV_ERROR);
    ck_assert_str_eq(f->where, "mac03");
    ck_assert_str_eq(f->what, "bridge0 (Thunderbolt Bridge) is up on mac03; JACCL fails with 'No IPv4-mapped GID' "
                              "or RTR errno 22 while it is");
    ck_assert_str_eq(f->fix, "sudo ifconfig bridge0 down (and remove the Thunderbolt Bridge service so it stays down)");
    f = &val.findings.items[val.findings.n - 1];
    ck_assert_str_eq(f->code, "bridge0-up");
    ck_assert_str_eq(f->where, "mac07");
    ck_assert_int_eq(f->severity, TBM_SEV_WARNING);
    ck_assert_str_eq(backends_of(0), "ring,mpi");
    ck_assert_str_eq(backends_of(1), "ring,mpi");
    ck_assert_uint_eq(tbm_findings_count(&val.findings, TBM_SEV_ERROR), 1);
    ck_assert_int_eq(val.host_severity[2], TBM_SEV_ERROR + 1);
    done();
}
END_TEST

START_TEST(mixed_macos)
{
    const tbm_finding_t *f;

    lab_embedded(lab);
    snprintf(lab[3].os_version, TBM_HOST_MAX, "26.1");
    snprintf(lab[5].os_version, TBM_HOST_MAX, "15.6");
    run(8);
    f = must_find("os-too-old");
    ck_assert_str_eq(f->where, "mac04");
    ck_assert_str_eq(f->what, "mac04 runs macOS 26.1; JACCL needs 26.2 or later");
    f = must_find("os-mismatch");
    ck_assert_int_eq(f->severity, TBM_SEV_ERROR);
    ck_assert_str_eq(f->where, "mac[01-04]");
    ck_assert_str_eq(f->what, "macOS versions differ in the group: mac01 runs 26.2, mac04 runs 26.1");
    ck_assert_str_eq(backends_of(0), "ring,mpi");
    /* mini-b has no RDMA: a mismatch is a warning there and no age limit applies */
    f = &val.findings.items[val.findings.n - 1];
    ck_assert_str_eq(f->code, "os-mismatch");
    ck_assert_int_eq(f->severity, TBM_SEV_WARNING);
    ck_assert_str_eq(f->what, "macOS versions differ in the group: mac05 runs 26.2, mac06 runs 15.6");
    ck_assert_str_eq(backends_of(1), "ring,mpi");
    done();
}
END_TEST

START_TEST(lone_host_and_bad_name)
{
    const tbm_finding_t *f;

    lab_hosts(lab, 1, "mac", 1);
    snprintf(lab[0].hostname, TBM_HOST_MAX, "mac 01");
    run(1);
    f = must_find("host-uncabled");
    ck_assert_int_eq(f->severity, TBM_SEV_INFO);
    ck_assert_str_eq(f->what, "mac 01 has no Thunderbolt cable to another Mac of the inventory");
    f = must_find("hostname-invalid");
    ck_assert_str_eq(f->what, "host name 'mac 01' cannot be a Slurm node name");
    ck_assert_str_eq(backends_of(0), "none");
    done();

    lab_hosts(lab, 1, "mac", 1);
    run(1);
    ck_assert_str_eq(backends_of(0), "mpi");
    ck_assert_int_eq(tbm_validation_fit(&val), 1);
    done();
}
END_TEST

START_TEST(lab_of_64)
{
    static tbm_host_facts_t big[64];
    tbm_err_t err = {{0}};
    size_t g;
    int c = 0, i;

    lab_hosts(big, 64, "mac", 1);
    for (i = 0; i < 8; i++)
        c = lab_mesh(big, i * 8, 8, c, 80, 1);
    ck_assert_int_eq(tbm_topology_build(&topo, big, 64, &err), 0);
    ck_assert_int_eq(tbm_validate(&topo, &val, &err), 0);
    ck_assert_int_eq(tbm_validation_fit(&val), 1);
    ck_assert_uint_eq(val.findings.n, 0);
    for (g = 0; g < 8; g++)
        ck_assert_str_eq(backends_of(g), "jaccl,jaccl-ring,ring,mpi");
    done();
}
END_TEST

static tbm_group_caps_t caps(const char *name, size_t n, tbm_topo_class_t cls, unsigned backends, int rdma)
{
    tbm_group_caps_t g;

    memset(&g, 0, sizeof(g));
    snprintf(g.name, sizeof(g.name), "%s", name);
    g.n_nodes = n;
    g.topology = cls;
    g.backends = backends;
    g.rdma = rdma;
    return g;
}

#define SUPPORTS(g, b, n, want, text)                                         \
    do {                                                                     \
        tbm_err_t why_ = {{0}};                                              \
        ck_assert_int_eq(tbm_group_supports(&(g), (b), (n), &why_), (want)); \
        ck_assert_str_eq(why_.msg, (text));                                  \
    } while (0)

START_TEST(placement)
{
    tbm_group_caps_t a = caps("studio-a", 4, TBM_TOPO_MESH, TBM_BACKENDS_ALL, 1);
    tbm_group_caps_t b = caps("mini-b", 4, TBM_TOPO_RING, 0xc, 0);
    tbm_group_caps_t r = caps("ring-r", 4, TBM_TOPO_RING, 0xe, 1);
    tbm_group_caps_t o = caps("chain", 4, TBM_TOPO_OTHER, 0x8, 1);
    tbm_group_caps_t bad = caps("sick", 4, TBM_TOPO_MESH, 0xc, 1);

    SUPPORTS(a, TBM_BACKEND_JACCL, 4, 1, "");
    SUPPORTS(b, TBM_BACKEND_JACCL, 4, 0, "group mini-b is a ring, not a full mesh: JACCL mesh needs every pair of "
                                         "Macs cabled; use --mlx-backend=jaccl-ring or ring");
    SUPPORTS(b, TBM_BACKEND_JACCL_RING, 4, 0, "group mini-b has no working RDMA (JACCL needs Thunderbolt 5 and "
                                              "RDMA devices on both ends of every cable): use --mlx-backend=ring or mpi");
    SUPPORTS(a, TBM_BACKEND_RING, 3, 1, "");
    SUPPORTS(b, TBM_BACKEND_RING, 3, 0, "group mini-b is a ring of 4 Macs; a job on it must use all 4 (part of a "
                                        "ring is not a ring): ask for tbmesh:4");
    SUPPORTS(a, TBM_BACKEND_RING, 4, 1, "");
    SUPPORTS(b, TBM_BACKEND_RING, 4, 1, "");
    SUPPORTS(r, TBM_BACKEND_JACCL_RING, 4, 1, "");
    SUPPORTS(r, TBM_BACKEND_JACCL_RING, 2, 0, "group ring-r is a ring of 4 Macs; a job on it must use all 4 "
                                              "(part of a ring is not a ring): ask for tbmesh:4");
    SUPPORTS(a, TBM_BACKEND_JACCL, 6, 0, "group studio-a has 4 Macs; you asked for 6: ask for 4 or fewer");
    SUPPORTS(a, TBM_BACKEND_MPI, 0, 0, "ask for at least one Mac (tbmesh:N with N >= 1)");
    SUPPORTS(b, TBM_BACKEND_MPI, 2, 0, "group mini-b is a ring of 4 Macs; a job on it must use all 4 (part of a "
                                       "ring is not a ring): ask for tbmesh:4");
    SUPPORTS(b, TBM_BACKEND_MPI, 1, 1, "");
    SUPPORTS(o, TBM_BACKEND_MPI, 4, 1, "");
    SUPPORTS(o, TBM_BACKEND_MPI, 3, 0, "group chain is neither a full mesh nor a ring; only all 4 of its Macs are "
                                       "sure to be connected: ask for tbmesh:4");
    SUPPORTS(o, TBM_BACKEND_RING, 4, 0, "group chain is cabled as neither a full mesh nor a ring (other): ring "
                                        "needs one; use --mlx-backend=mpi");
    SUPPORTS(bad, TBM_BACKEND_JACCL, 4, 0, "tbmesh inventory found problems that rule out jaccl on group sick: see "
                                           "its report, or choose another --mlx-backend");
    SUPPORTS(b, TBM_BACKEND_AUTO, 4, 1, "");
    SUPPORTS(b, TBM_BACKEND_AUTO, 3, 0, "group mini-b is a ring of 4 Macs; a job on it must use all 4 (part of a "
                                        "ring is not a ring): ask for tbmesh:4");
    SUPPORTS(a, (tbm_backend_t)17, 2, 0, "unknown backend: use auto, jaccl, jaccl-ring, ring or mpi");
}
END_TEST

START_TEST(names)
{
    tbm_backend_t b;
    tbm_link_t l;
    unsigned m;
    tbm_err_t err = {{0}};
    char buf[64];

    ck_assert_int_eq(tbm_backend_parse("jaccl-ring", &b, &err), 0);
    ck_assert_int_eq(b, TBM_BACKEND_JACCL_RING);
    ck_assert_int_eq(tbm_backend_parse("auto", &b, &err), 0);
    ck_assert_int_eq(b, TBM_BACKEND_AUTO);
    ck_assert_int_eq(tbm_backend_parse("nccl", &b, &err), -1);
    ck_assert_str_eq(err.msg, "nccl is unknown: use auto, jaccl, jaccl-ring, ring or mpi");
    ck_assert_int_eq(tbm_backend_parse(NULL, &b, &err), -1);
    ck_assert_str_eq(err.msg, " is unknown: use auto, jaccl, jaccl-ring, ring or mpi");
    ck_assert_int_eq(tbm_backend_parse("mpi", &b, NULL), 0);
    ck_assert_int_eq(b, TBM_BACKEND_MPI);
    ck_assert_str_eq(tbm_backend_choices(buf, sizeof(buf)), "auto, jaccl, jaccl-ring, ring or mpi");
    ck_assert_str_eq(tbm_backends_choices(buf, sizeof(buf)), "jaccl, jaccl-ring, ring, mpi (comma-separated) or none");
    ck_assert_str_eq(tbm_backend_name(TBM_BACKEND_MPI), "mpi");
    ck_assert_str_eq(tbm_backend_name((tbm_backend_t)9), "unknown");
    ck_assert_int_eq(tbm_link_parse("tb4", &l), 0);
    ck_assert_int_eq(l, TBM_LINK_TB4);
    ck_assert_int_eq(tbm_link_parse("tb3", &l), -1);
    ck_assert_str_eq(tbm_link_name(TBM_LINK_TB5), "tb5");
    ck_assert_int_eq(tbm_backends_parse("ring,mpi", &m, &err), 0);
    ck_assert_uint_eq(m, 0xc);
    ck_assert_int_eq(tbm_backends_parse("none", &m, &err), 0);
    ck_assert_uint_eq(m, 0);
    ck_assert_int_eq(tbm_backends_parse("ring,auto", &m, &err), -1);
    ck_assert_str_eq(err.msg, "'auto' is not a backend: use jaccl, jaccl-ring, ring, mpi (comma-separated) or none");
    ck_assert_int_eq(tbm_backends_parse("ring,", &m, &err), -1);
    ck_assert_str_eq(err.msg, "'' is not a backend: use jaccl, jaccl-ring, ring, mpi (comma-separated) or none");
    ck_assert_int_eq(tbm_backends_parse("averyveryverylongname", &m, &err), -1);
    tbm_backends_format(0xb, buf, sizeof(buf));
    ck_assert_str_eq(buf, "jaccl,jaccl-ring,mpi");
    tbm_group_feature("studio-a", buf, sizeof(buf));
    ck_assert_str_eq(buf, "tbmesh_studio_a");
    ck_assert_int_eq(tbm_group_name_valid("studio-a"), 1);
    ck_assert_int_eq(tbm_group_name_valid("Studio"), 0);
    ck_assert_int_eq(tbm_group_name_valid("1st"), 0);
    ck_assert_int_eq(tbm_group_name_valid("a.b"), 0);
    ck_assert_int_eq(tbm_group_name_valid("abcdefghijabcdefghijabcdefghija"), 1);
    ck_assert_int_eq(tbm_group_name_valid("abcdefghijabcdefghijabcdefghijab"), 0);
}
END_TEST

static Suite *validate_suite(void)
{
    Suite *s = suite_create("validate");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, embedded_lab);
    tcase_add_test(tc, rdma_ring_of_four);
    tcase_add_test(tc, meshes_of_eight_and_nine);
    tcase_add_test(tc, chain_is_not_mesh_or_ring);
    tcase_add_test(tc, cut_cable_names_it);
    tcase_add_test(tc, multi_rail_mesh_is_fit);
    tcase_add_test(tc, duplicate_uuid_blocks_group);
    tcase_add_test(tc, tb4_with_devices_listed);
    tcase_add_test(tc, rdma_device_missing_one_end);
    tcase_add_test(tc, rdma_missing_fix_follows_rdma_ctl);
    tcase_add_test(tc, rdma_unavailable_disabled);
    tcase_add_test(tc, ipv4_missing_and_iface_problems);
    tcase_add_test(tc, subnets);
    tcase_add_test(tc, address_collisions);
    tcase_add_test(tc, address_in_management_network);
    tcase_add_test(tc, unknown_facts_draw_no_conclusion);
    tcase_add_test(tc, one_slow_cable_in_eight);
    tcase_add_test(tc, rdma_subset_leaves_out_other_problems);
    tcase_add_test(tc, bridge0_up);
    tcase_add_test(tc, mixed_macos);
    tcase_add_test(tc, lone_host_and_bad_name);
    tcase_add_test(tc, lab_of_64);
    tcase_add_test(tc, placement);
    tcase_add_test(tc, names);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(validate_suite)
