/* test_slurmconf.c: unit tests of lib/slurmconf.c: slurm.conf node lines, gres.conf lines, the DOT drawing. */
#include "tbm_check.h"
#include <stdio.h>
#include <string.h>

#include "slurmconf.h"
#include "tbm_labfacts.h"

static tbm_host_facts_t lab[16];
static tbm_topology_t topo;
static tbm_validation_t val;
static tbm_conf_t conf;

static const char *hint_text =
    "SlurmdBasePort=6900\n"
    "Group=studio-a Nodes=mac[01-04] Topology=mesh Link=tb5 Rdma=yes Mode=bridge Backends=mpi\n"
    "Group=mini-b Nodes=mac[05-08] Topology=ring Link=tb4 Mode=direct Backends=mpi\n"
    "NodeName=mac03 SlurmdPort=7003\n";

static void model(size_t n)
{
    tbm_err_t err = {{0}};
    tbm_conf_t hint;

    ck_assert_int_eq(tbm_conf_parse(hint_text, strlen(hint_text), "hint", &hint, NULL, &err), 0);
    ck_assert_int_eq(tbm_topology_build(&topo, lab, n, &err), 0);
    ck_assert_int_eq(tbm_validate(&topo, &val, &err), 0);
    ck_assert_int_eq(tbm_conf_from_topology(&topo, &val, &hint, &conf, &err), 0);
    tbm_conf_free(&hint);
}

static void done(void)
{
    tbm_conf_free(&conf);
    tbm_validation_free(&val);
    tbm_topology_free(&topo);
}

START_TEST(node_lines)
{
    tbm_err_t err = {{0}};
    char *s;

    lab_embedded(lab);
    model(8);
    s = tbm_slurm_node_lines(&topo, &conf, &err);
    ck_assert_str_eq(s,
        "# slurm.conf node lines written by tbmesh inventory (bridge-mode Macs carry their slurmd Port=).\n"
        "NodeName=mac01 CPUs=28 RealMemory=95232 Gres=tbmesh:1 Features=tbmesh,tbmesh_studio_a,rdma,macos_26_2,m3_ultra Port=6900\n"
        "NodeName=mac02 CPUs=28 RealMemory=95232 Gres=tbmesh:1 Features=tbmesh,tbmesh_studio_a,rdma,macos_26_2,m3_ultra Port=6901\n"
        "NodeName=mac03 CPUs=28 RealMemory=95232 Gres=tbmesh:1 Features=tbmesh,tbmesh_studio_a,rdma,macos_26_2,m3_ultra Port=7003\n"
        "NodeName=mac04 CPUs=28 RealMemory=95232 Gres=tbmesh:1 Features=tbmesh,tbmesh_studio_a,rdma,macos_26_2,m3_ultra Port=6902\n"
        "NodeName=mac05 CPUs=10 RealMemory=15872 Gres=tbmesh:1 Features=tbmesh,tbmesh_mini_b,macos_26_2,m4\n"
        "NodeName=mac06 CPUs=10 RealMemory=15872 Gres=tbmesh:1 Features=tbmesh,tbmesh_mini_b,macos_26_2,m4\n"
        "NodeName=mac07 CPUs=10 RealMemory=15872 Gres=tbmesh:1 Features=tbmesh,tbmesh_mini_b,macos_26_2,m4\n"
        "NodeName=mac08 CPUs=10 RealMemory=15872 Gres=tbmesh:1 Features=tbmesh,tbmesh_mini_b,macos_26_2,m4\n");
    free(s);
    s = tbm_gres_conf_lines(&conf);
    ck_assert_str_eq(s, "# gres.conf lines written by tbmesh inventory: one tbmesh unit per Mac.\n"
                        "NodeName=mac[01-04] Name=tbmesh Count=1\n"
                        "NodeName=mac[05-08] Name=tbmesh Count=1\n");
    free(s);
    done();
}
END_TEST

START_TEST(no_rdma_feature_when_unusable)
{
    tbm_err_t err = {{0}};
    char *s;

    lab_embedded(lab);
    lab[0].ifaces[0].up = 1;     /* bridge0 up on mac01 rules out JACCL for studio-a */
    lab[1].memory_bytes = 0;
    lab[1].cores_performance = lab[1].cores_efficiency = 0;
    lab[1].chip[0] = '\0';
    model(8);
    s = tbm_slurm_node_lines(&topo, &conf, &err);
    ck_assert_ptr_nonnull(strstr(s, "NodeName=mac01 CPUs=28 RealMemory=95232 Gres=tbmesh:1 "
                                    "Features=tbmesh,tbmesh_studio_a,macos_26_2,m3_ultra Port=6900\n"));
    ck_assert_ptr_nonnull(strstr(s, "NodeName=mac02 Gres=tbmesh:1 Features=tbmesh,tbmesh_studio_a,macos_26_2 Port=6901\n"));
    free(s);
    done();
}
END_TEST

/* A mesh of four with one cable at 40 Gb/s: the three Macs that still run JACCL carry the feature of the
 * group's RdmaSubset= (tbmesh_rdma_studio_a), the fourth does not, and none carries "rdma". */
START_TEST(rdma_subset_feature)
{
    tbm_err_t err = {{0}};
    char *s;
    int i, j, k = 0;

    lab_hosts(lab, 4, "mac", 1);
    for (i = 0; i < 4; i++)
        for (j = i + 1; j < 4; j++)
            lab_cable(lab, i, j, k++, i == 2 && j == 3 ? 40 : 80, 1);
    model(4);
    s = tbm_slurm_node_lines(&topo, &conf, &err);
    ck_assert_ptr_nonnull(strstr(s, "NodeName=mac01 CPUs=28 RealMemory=95232 Gres=tbmesh:1 "
                                    "Features=tbmesh,tbmesh_studio_a,tbmesh_rdma_studio_a,macos_26_2,m3_ultra Port=6900\n"));
    ck_assert_ptr_nonnull(strstr(s, "NodeName=mac03 CPUs=28 RealMemory=95232 Gres=tbmesh:1 "
                                    "Features=tbmesh,tbmesh_studio_a,tbmesh_rdma_studio_a,macos_26_2,m3_ultra Port=7003\n"));
    ck_assert_ptr_nonnull(strstr(s, "NodeName=mac04 CPUs=28 RealMemory=95232 Gres=tbmesh:1 "
                                    "Features=tbmesh,tbmesh_studio_a,macos_26_2,m3_ultra Port=6902\n"));
    free(s);
    done();
}
END_TEST

START_TEST(port_overflow)
{
    tbm_err_t err = {{0}};

    lab_embedded(lab);
    model(8);
    conf.slurmd_base_port = 65534;
    conf.nodes[2].slurmd_port = 0;
    ck_assert_ptr_null(tbm_slurm_node_lines(&topo, &conf, &err));
    ck_assert_str_eq(err.msg, "node mac03 would get slurmd port 65536: lower SlurmdBasePort in tbmesh.conf or give the "
                              "node SlurmdPort=");
    done();
}
END_TEST

START_TEST(drawing)
{
    char *s;

    lab_embedded(lab);
    lab[3].ports[1].peer_uuid[0] = '\0';   /* cut mac02 <-> mac04 */
    lab[3].ports[1].connected = 0;
    model(8);
    s = tbm_cabling_dot(&topo, &val, &conf);
    ck_assert_ptr_nonnull(strstr(s, "graph tbmesh {\n"));
    ck_assert_ptr_nonnull(strstr(s, "  subgraph \"cluster_0\" {\n    label=\"studio-a: other, tb5, RDMA, bridge\";\n"
                                    "    \"mac01\" [color=black];\n"));
    ck_assert_ptr_nonnull(strstr(s, "    label=\"mini-b: ring, tb4, direct\";\n"));
    ck_assert_ptr_nonnull(strstr(s, "  \"mac01\" -- \"mac02\" [label=\"en2 - en2\\n80 Gb/s\", color=black];\n"));
    ck_assert_ptr_nonnull(strstr(s, "  \"mac02\" -- \"mac04\" [label=\"en4 - ?\\n80 Gb/s\", color=red, style=dashed];\n"));
    ck_assert_ptr_nonnull(strstr(s, "  \"mac05\" -- \"mac06\" [label=\"en2 - en2\\n40 Gb/s\", color=black];\n"));
    ck_assert_str_eq(s + strlen(s) - 2, "}\n");
    free(s);
    done();

    /* a peer outside the inventory, a name that needs quoting */
    lab_hosts(lab, 2, "mac", 1);
    lab_cable(lab, 0, 1, 0, 80, 1);
    snprintf(lab[0].hostname, TBM_HOST_MAX, "a\"b");
    {
        tbm_err_t err = {{0}};
        tbm_conf_t empty;
        tbm_conf_init(&empty);
        ck_assert_int_eq(tbm_topology_build(&topo, lab, 1, &err), 0);
        ck_assert_int_eq(tbm_validate(&topo, &val, &err), 0);
        s = tbm_cabling_dot(&topo, &val, &empty);
        ck_assert_ptr_nonnull(strstr(s, "label=\"in no group\";\n    \"a\\\"b\" [color=red];\n"));
        ck_assert_ptr_nonnull(strstr(s, "  \"a\\\"b\" -- \"?0\" [label=\"en2 - ?\\n80 Gb/s\", color=red, style=dashed];\n"));
        free(s);
        tbm_validation_free(&val);
        tbm_topology_free(&topo);
    }
}
END_TEST

START_TEST(feature_names)
{
    char buf[16];

    tbm_feature_name("Apple M3 Ultra", buf, sizeof(buf));
    ck_assert_str_eq(buf, "apple_m3_ultra");
    tbm_feature_name("26.2", buf, sizeof(buf));
    ck_assert_str_eq(buf, "26_2");
    tbm_feature_name("  --M4 Pro (14-core)--", buf, sizeof(buf));
    ck_assert_str_eq(buf, "m4_pro_14_core");
    tbm_feature_name("...", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    tbm_feature_name("abcdefghijklmnopqrstuvwxyz", buf, sizeof(buf));
    ck_assert_str_eq(buf, "abcdefghijklmno");
    tbm_feature_name("a b c d e f g h i j", buf, 6);
    ck_assert_str_eq(buf, "a_b_c");
}
END_TEST

START_TEST(real_memory)
{
    ck_assert_uint_eq(tbm_slurm_real_memory_mib(96ull << 30), 98304 - 3072);
    ck_assert_uint_eq(tbm_slurm_real_memory_mib(16ull << 30), 16384 - 512);
    ck_assert_uint_eq(tbm_slurm_real_memory_mib(512ull << 30), 524288 - 16384);
    ck_assert_uint_eq(tbm_slurm_real_memory_mib(1ull << 30), 512);
    ck_assert_uint_eq(tbm_slurm_real_memory_mib(2ull << 30), 2048 - 512);
    ck_assert_uint_eq(tbm_slurm_real_memory_mib(24ull << 30), 24576 - 768);
    ck_assert_uint_eq(tbm_slurm_real_memory_mib(0), 0);
    /* the inventory's node lines say the same (the 96 GiB studio of node_lines) */
    ck_assert_uint_eq(tbm_slurm_real_memory_mib(96ull << 30), 95232);
}
END_TEST

static Suite *slurmconf_suite(void)
{
    Suite *s = suite_create("slurmconf");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, node_lines);
    tcase_add_test(tc, no_rdma_feature_when_unusable);
    tcase_add_test(tc, rdma_subset_feature);
    tcase_add_test(tc, port_overflow);
    tcase_add_test(tc, drawing);
    tcase_add_test(tc, feature_names);
    tcase_add_test(tc, real_memory);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(slurmconf_suite)
