/* test_topology.c: unit tests of lib/topology.c: cables by UUID, groups, classes, multi-rail, findings. */
#include "tbm_check.h"
#include <string.h>

#include "tbm_labfacts.h"
#include "topology.h"

static tbm_host_facts_t lab[80];

static void build(tbm_topology_t *t, size_t n)
{
    tbm_err_t err = {{0}};
    ck_assert_int_eq(tbm_topology_build(t, lab, n, &err), 0);
}

START_TEST(mesh_of_four)
{
    tbm_topology_t t;
    char buf[128];

    lab_hosts(lab, 4, "mac", 1);
    lab_mesh(lab, 0, 4, 0, 80, 1);
    build(&t, 4);
    ck_assert_uint_eq(t.n_ports, 12);
    ck_assert_uint_eq(t.n_cables, 6);
    ck_assert_uint_eq(t.n_pairs, 6);
    ck_assert_uint_eq(t.n_groups, 1);
    ck_assert_uint_eq(t.groups[0].n_hosts, 4);
    ck_assert_uint_eq(t.groups[0].n_cables, 6);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_MESH);
    ck_assert_uint_eq(t.findings.n, 0);
    tbm_cable_label(&t, 0, buf, sizeof(buf));
    ck_assert_str_eq(buf, "mac01:en2 <-> mac02:en2");
    tbm_cable_label(&t, 5, buf, sizeof(buf));
    ck_assert_str_eq(buf, "mac03:en4 <-> mac04:en4");
    ck_assert_int_eq(t.cables[0].speed_gbps, 80);
    ck_assert_str_eq(t.ports[0].ipv4, "10.0.0.1");
    ck_assert_int_eq(t.ports[0].prefix_len, 30);
    ck_assert_ptr_nonnull(tbm_topology_pair(&t, 3, 0));
    tbm_topology_free(&t);
}
END_TEST

START_TEST(ring_of_four_and_chain)
{
    tbm_topology_t t;

    lab_hosts(lab, 4, "mac", 5);
    lab_ring(lab, 0, 4, 0, 40, 0, 1);
    build(&t, 4);
    ck_assert_uint_eq(t.n_groups, 1);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_RING);
    ck_assert_ptr_null(tbm_topology_pair(&t, 0, 2));
    tbm_topology_free(&t);

    lab_hosts(lab, 4, "mac", 5);
    lab_ring(lab, 0, 4, 0, 40, 0, 0);
    build(&t, 4);
    ck_assert_uint_eq(t.n_groups, 1);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_OTHER);
    tbm_topology_free(&t);

    /* three in a ring are also a full mesh */
    lab_hosts(lab, 3, "mac", 1);
    lab_ring(lab, 0, 3, 0, 80, 1, 1);
    build(&t, 3);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_MESH);
    tbm_topology_free(&t);
}
END_TEST

START_TEST(meshes_of_eight_and_nine)
{
    tbm_topology_t t;

    lab_hosts(lab, 9, "mac", 1);
    lab_mesh(lab, 0, 8, 0, 80, 1);
    build(&t, 8);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_MESH);
    ck_assert_uint_eq(t.n_cables, 28);
    tbm_topology_free(&t);

    lab_hosts(lab, 9, "mac", 1);
    lab_mesh(lab, 0, 9, 0, 80, 1);
    build(&t, 9);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_MESH);
    ck_assert_uint_eq(t.n_cables, 36);
    ck_assert_uint_eq(t.groups[0].n_hosts, 9);
    tbm_topology_free(&t);
}
END_TEST

START_TEST(star_and_partial_mesh_are_other)
{
    tbm_topology_t t;

    lab_hosts(lab, 4, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    lab_cable(lab, 0, 2, 1, 80, 1);
    lab_cable(lab, 0, 3, 2, 80, 1);
    build(&t, 4);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_OTHER);
    tbm_topology_free(&t);

    /* a 4-mesh missing one cable */
    lab_hosts(lab, 4, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    lab_cable(lab, 0, 2, 1, 80, 1);
    lab_cable(lab, 0, 3, 2, 80, 1);
    lab_cable(lab, 1, 2, 3, 80, 1);
    lab_cable(lab, 2, 3, 4, 80, 1);
    build(&t, 4);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_OTHER);
    tbm_topology_free(&t);

    /* two triangles joined at one host: every degree is not 2 -> other */
    lab_hosts(lab, 5, "mac", 1);
    lab_ring(lab, 0, 3, 0, 80, 1, 1);
    lab_cable(lab, 2, 3, 3, 80, 1);
    lab_cable(lab, 3, 4, 4, 80, 1);
    lab_cable(lab, 4, 2, 5, 80, 1);
    build(&t, 5);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_OTHER);
    tbm_topology_free(&t);
}
END_TEST

START_TEST(classify_direct)
{
    const int two_triangles[6][2] = {{0, 1}, {1, 2}, {2, 0}, {3, 4}, {4, 5}, {5, 3}};
    const int ring4[5][2] = {{0, 1}, {1, 2}, {3, 2}, {3, 0}, {1, 0}};
    const int odd[4][2] = {{0, 0}, {0, 9}, {-1, 1}, {0, 1}};
    const int mesh3[3][2] = {{0, 1}, {0, 2}, {1, 2}};

    ck_assert_int_eq(tbm_topo_classify(6, two_triangles, 6), TBM_TOPO_OTHER);  /* degree 2 but two cycles */
    ck_assert_int_eq(tbm_topo_classify(4, ring4, 5), TBM_TOPO_RING);            /* a repeated pair counts once */
    ck_assert_int_eq(tbm_topo_classify(4, ring4, 3), TBM_TOPO_OTHER);           /* a chain */
    ck_assert_int_eq(tbm_topo_classify(2, odd, 4), TBM_TOPO_MESH);              /* self and outside pairs ignored */
    ck_assert_int_eq(tbm_topo_classify(3, mesh3, 3), TBM_TOPO_MESH);
    ck_assert_int_eq(tbm_topo_classify(3, mesh3, 0), TBM_TOPO_OTHER);
    ck_assert_int_eq(tbm_topo_classify(1, NULL, 0), TBM_TOPO_SINGLE);
    ck_assert_str_eq(tbm_topo_class_name(TBM_TOPO_RING), "ring");
    ck_assert_str_eq(tbm_topo_class_name((tbm_topo_class_t)9), "unknown");
    {
        tbm_topo_class_t c;
        ck_assert_int_eq(tbm_topo_class_parse("mesh", &c), 0);
        ck_assert_int_eq(c, TBM_TOPO_MESH);
        ck_assert_int_eq(tbm_topo_class_parse("torus", &c), -1);
    }
}
END_TEST

START_TEST(one_sided_cable)
{
    tbm_topology_t t;
    const tbm_finding_t *f;

    lab_hosts(lab, 4, "mac", 1);
    lab_mesh(lab, 0, 4, 0, 80, 1);
    /* mac02 no longer sees mac01 on its first port (the cable mac01:en2 <-> mac02:en2) */
    lab[1].ports[0].peer_uuid[0] = '\0';
    build(&t, 4);
    ck_assert_uint_eq(t.n_cables, 6);
    ck_assert_uint_eq(t.n_groups, 1);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_OTHER);
    f = tbm_findings_find(&t.findings, "cable-one-sided");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->where, "mac01:en2 <-> mac02:?");
    ck_assert_str_eq(f->what, "the cable is seen from mac01:en2 only: mac02 does not see mac01 back");
    ck_assert_str_eq(f->fix, "reseat or replace the cable, then probe both Macs again");
    ck_assert_int_eq(f->severity, TBM_SEV_ERROR);
    ck_assert_uint_eq(tbm_findings_count(&t.findings, TBM_SEV_ERROR), 1);
    tbm_topology_free(&t);

    /* the peer is not in the inventory at all */
    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    build(&t, 1);
    ck_assert_uint_eq(t.n_groups, 1);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_SINGLE);
    f = tbm_findings_find(&t.findings, "cable-one-sided");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->where, "mac01:en2 <-> ?");
    ck_assert_str_eq(f->what, "mac01:en2 sees a Mac with domain UUID UUID-0001-00, but no host in the "
                              "inventory reports that UUID");
    tbm_topology_free(&t);
}
END_TEST

START_TEST(multi_rail_pairs)
{
    tbm_topology_t t;
    const tbm_finding_t *f;

    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    lab_cable(lab, 0, 1, 1, 80, 1);
    build(&t, 2);
    ck_assert_uint_eq(t.n_cables, 2);
    ck_assert_uint_eq(t.n_pairs, 1);
    ck_assert_int_eq(t.pairs[0].n_cables, 2);
    ck_assert_uint_eq(t.groups[0].n_multi_rail, 1);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_MESH);
    f = tbm_findings_find(&t.findings, "multi-rail");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->where, "mac01 <-> mac02");
    ck_assert_str_eq(f->what, "mac01 and mac02 are joined by 2 cables");
    ck_assert_int_eq(f->severity, TBM_SEV_INFO);
    tbm_topology_free(&t);

    /* a 4-ring with a doubled link is still a ring */
    lab_hosts(lab, 4, "mac", 1);
    lab_ring(lab, 0, 4, 0, 80, 1, 1);
    lab_cable(lab, 0, 1, 4, 80, 1);
    build(&t, 4);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_RING);
    ck_assert_uint_eq(t.n_cables, 5);
    ck_assert_uint_eq(t.n_pairs, 4);
    tbm_topology_free(&t);
}
END_TEST

START_TEST(duplicate_uuids)
{
    tbm_topology_t t;
    const tbm_finding_t *f;

    lab_hosts(lab, 4, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    lab_cable(lab, 2, 3, 1, 80, 1);
    /* mac03 reports the UUID of mac01's port (a copied capture) */
    snprintf(lab[2].ports[0].domain_uuid, TBM_UUID_MAX, "%s", lab[0].ports[0].domain_uuid);
    build(&t, 4);
    f = tbm_findings_find(&t.findings, "uuid-duplicate");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->where, "mac01:en2, mac03:en2");
    ck_assert_str_eq(f->what, "Thunderbolt domain UUID UUID-0000-00 is reported by 2 ports");
    ck_assert_int_eq(t.ports[0].duplicate_uuid, 1);
    /* neither cable can be trusted: mac02 and mac04 see a UUID two ports claim */
    ck_assert_uint_eq(tbm_findings_count(&t.findings, TBM_SEV_ERROR), 3);
    tbm_topology_free(&t);
}
END_TEST

START_TEST(embedded_lab_and_lone_host)
{
    tbm_topology_t t;

    lab_embedded(lab);
    lab_host(&lab[8], "mac09");
    build(&t, 9);
    ck_assert_uint_eq(t.n_groups, 3);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_MESH);
    ck_assert_int_eq(t.groups[1].cls, TBM_TOPO_RING);
    ck_assert_int_eq(t.groups[2].cls, TBM_TOPO_SINGLE);
    ck_assert_int_eq(t.groups[1].hosts[0], 4);
    ck_assert_int_eq(t.host_group[7], 1);
    ck_assert_int_eq(t.cables[6].speed_gbps, 40);
    ck_assert_uint_eq(t.findings.n, 0);
    tbm_topology_free(&t);
}
END_TEST

START_TEST(lab_of_64)
{
    static tbm_host_facts_t big[64];
    tbm_topology_t t;
    tbm_err_t err = {{0}};
    int g, c = 0;

    lab_hosts(big, 64, "mac", 1);
    for (g = 0; g < 8; g++)
        c = lab_mesh(big, g * 8, 8, c, 80, 1);
    ck_assert_int_eq(tbm_topology_build(&t, big, 64, &err), 0);
    ck_assert_uint_eq(t.n_groups, 8);
    ck_assert_uint_eq(t.n_cables, 224);
    for (g = 0; g < 8; g++) {
        ck_assert_int_eq(t.groups[g].cls, TBM_TOPO_MESH);
        ck_assert_uint_eq(t.groups[g].n_hosts, 8);
    }
    ck_assert_uint_eq(t.findings.n, 0);
    tbm_topology_free(&t);
}
END_TEST

START_TEST(refusals_and_names)
{
    tbm_topology_t t;
    tbm_err_t err = {{0}};
    const tbm_finding_t *f;

    ck_assert_int_eq(tbm_topology_build(&t, lab, 0, &err), -1);
    ck_assert_str_eq(err.msg, "the inventory holds no host: give the facts of at least one Mac");
    ck_assert_int_eq(tbm_topology_build(&t, lab, TBM_TOPOLOGY_MAX_HOSTS + 1, &err), -1);
    ck_assert_str_eq(err.msg, "the inventory holds 65537 hosts; at most 65536 are supported: split the lab");

    lab_hosts(lab, 3, "mac", 1);
    snprintf(lab[2].hostname, TBM_HOST_MAX, "mac01");
    lab[1].hostname[0] = '\0';
    build(&t, 3);
    f = tbm_findings_find(&t.findings, "host-duplicate");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->what, "two hosts in the inventory are named mac01");
    f = tbm_findings_find(&t.findings, "host-unnamed");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->what, "host number 2 in the inventory has no usable host name");
    ck_assert_str_eq(tbm_topology_host_name(&t, 1), "(unnamed)");
    ck_assert_str_eq(tbm_topology_host_name(&t, 7), "?");
    tbm_topology_free(&t);
}
END_TEST

START_TEST(port_without_interface)
{
    tbm_topology_t t;
    char buf[64];

    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    lab[0].ports[0].iface[0] = '\0';
    build(&t, 2);
    tbm_port_label(&t, 0, buf, sizeof(buf));
    ck_assert_str_eq(buf, "mac01:Thunderbolt 1");   /* as the probe names it: by its receptacle */
    ck_assert_int_eq(t.ports[0].iface_found, 0);
    ck_assert_int_eq(t.ports[0].prefix_len, -1);
    tbm_topology_free(&t);
}
END_TEST

START_TEST(loopback_cable)
{
    tbm_topology_t t;
    const tbm_finding_t *f;

    lab_hosts(lab, 1, "mac", 1);
    lab_end(&lab[0], 0, 80, 1, "UUID-0000-01", "10.0.0.1");
    lab_end(&lab[0], 0, 80, 1, "UUID-0000-00", "10.0.0.2");
    build(&t, 1);
    ck_assert_uint_eq(t.n_cables, 0);
    /* once, an error, in the probe's words (tbm_cable_to_self) */
    f = tbm_findings_find(&t.findings, "cable-to-self");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(t.findings.n, 1);
    ck_assert_int_eq(f->severity, TBM_SEV_ERROR);
    ck_assert_str_eq(f->where, "mac01:en2 <-> mac01:en3");
    ck_assert_str_eq(f->what, "a cable joins two ports of the same Mac (mac01:en2 and mac01:en3): it carries nothing "
                              "between Macs");
    ck_assert_str_eq(f->fix, "move one end of the cable to another Mac (or remove it), then probe again");
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_SINGLE);
    tbm_topology_free(&t);
}
END_TEST

/* Move port k of host h from a direct cable to a Mac behind a hub. */
static void behind_hub(int h, int k, const char *hub)
{
    tbm_tb_port_t *p = &lab[h].ports[k];

    memcpy(p->hub_peer_uuid, p->peer_uuid, sizeof(p->hub_peer_uuid));
    memcpy(p->hub_peer_name, p->peer_name, sizeof(p->hub_peer_name));
    snprintf(p->hub, sizeof(p->hub), "%s", hub);
    p->peer_uuid[0] = p->peer_name[0] = '\0';
}

/* Two Macs of a mesh that reach each other through a dock: no cable, one finding, and no mesh. */
START_TEST(macs_through_a_hub)
{
    tbm_topology_t t;
    const tbm_finding_t *f;

    lab_hosts(lab, 4, "mac", 1);
    lab_mesh(lab, 0, 4, 0, 80, 1);
    behind_hub(0, 1, "TS4");     /* mac01:en3 <-> mac03:en2 */
    behind_hub(2, 0, "TS4");
    build(&t, 4);
    ck_assert_uint_eq(t.n_cables, 5);
    ck_assert_uint_eq(t.n_pairs, 5);
    ck_assert_ptr_null(tbm_topology_pair(&t, 0, 2));
    ck_assert_uint_eq(t.n_groups, 1);
    ck_assert_int_eq(t.groups[0].cls, TBM_TOPO_OTHER);
    ck_assert_uint_eq(t.findings.n, 1);
    f = tbm_findings_find(&t.findings, "cable-through-hub");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, TBM_SEV_WARNING);
    ck_assert_str_eq(f->where, "mac01:en3 <-> mac03:en2");
    ck_assert_str_eq(f->what, "mac01 and mac03 are joined through the hub or dock \"TS4\", not by a direct cable; it "
                              "is not counted as a cable of any group");
    ck_assert_str_eq(f->fix, "cable the two Macs directly, port to port, with no hub, dock or daisy chain between "
                             "them (JACCL's RDMA needs direct cables), then probe both again");
    tbm_topology_free(&t);

    /* seen from one side only, by a Mac outside the inventory, or without a hub name: still no cable */
    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 40, 0);
    lab_cable(lab, 0, 1, 1, 40, 0);
    behind_hub(0, 0, "");
    behind_hub(1, 1, "Dock");
    snprintf(lab[1].ports[1].hub_peer_uuid, TBM_UUID_MAX, "FFFF-0001");
    lab[1].ports[0].peer_uuid[0] = lab[0].ports[1].peer_uuid[0] = '\0';   /* the other ends see nothing */
    build(&t, 2);
    ck_assert_uint_eq(t.n_cables, 0);
    ck_assert_uint_eq(t.n_groups, 2);
    ck_assert_str_eq(t.findings.items[0].what, "mac01 and mac02 are joined through the hub or dock (unnamed), not by "
                                               "a direct cable; it is not counted as a cable of any group");
    ck_assert_str_eq(t.findings.items[1].where, "mac02:en3 <-> ?");
    ck_assert_str_eq(t.findings.items[1].what, "mac02:en3 reaches a Mac with domain UUID FFFF-0001 through the hub or "
                                               "dock \"Dock\", not by a direct cable; it is not counted as a cable");
    ck_assert_uint_eq(t.findings.n, 2);
    tbm_topology_free(&t);

    /* one end names the other as cabled directly, the other sees it behind the dock: the dock link, once; no
     * one-sided cable, no group of two without a pair */
    lab_hosts(lab, 3, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    lab_cable(lab, 1, 2, 1, 80, 1);
    behind_hub(1, 0, "TS4");     /* mac02 sees mac01 behind the dock; mac01 still names mac02 as its peer */
    build(&t, 3);
    ck_assert_uint_eq(t.n_cables, 1);
    ck_assert_uint_eq(t.n_groups, 2);
    ck_assert_int_eq(t.groups[t.host_group[1]].cls, TBM_TOPO_MESH);
    ck_assert_int_eq(t.groups[t.host_group[0]].cls, TBM_TOPO_SINGLE);
    ck_assert_uint_eq(t.findings.n, 1);
    ck_assert_str_eq(t.findings.items[0].code, "cable-through-hub");
    ck_assert_str_eq(t.findings.items[0].where, "mac02:en2 <-> mac01:en2");
    tbm_topology_free(&t);
}
END_TEST

static Suite *topology_suite(void)
{
    Suite *s = suite_create("topology");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, mesh_of_four);
    tcase_add_test(tc, ring_of_four_and_chain);
    tcase_add_test(tc, meshes_of_eight_and_nine);
    tcase_add_test(tc, star_and_partial_mesh_are_other);
    tcase_add_test(tc, classify_direct);
    tcase_add_test(tc, one_sided_cable);
    tcase_add_test(tc, multi_rail_pairs);
    tcase_add_test(tc, duplicate_uuids);
    tcase_add_test(tc, embedded_lab_and_lone_host);
    tcase_add_test(tc, lab_of_64);
    tcase_add_test(tc, refusals_and_names);
    tcase_add_test(tc, port_without_interface);
    tcase_add_test(tc, loopback_cable);
    tcase_add_test(tc, macs_through_a_hub);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(topology_suite)
