/* test_slurmmetrics.c: unit tests of lib/slurmmetrics.c, the exposition of tbmesh metrics: the Macs and groups
 * of tbmesh.conf as Slurm 22.05 had them (tests/fixtures/slurm), with health verdicts; without a recent
 * reading; the classes a Mac counts in; a reason that needs escaping. */
#include "tbm_check.h"
#include "tbm_fixture.h"

#include <string.h>

#include "slurmmetrics.h"

static const char lab[] =
    "Group=studio-a Nodes=mac[01-04] Topology=mesh Link=tb5 Rdma=no Mode=bridge Backends=mpi\n"
    "Group=ring-b Nodes=mac[05-08] Topology=ring Link=tb4 Rdma=no Mode=direct Backends=mpi\n";

static tbm_conf_t conf;
static tbm_slurm_nodes_t nodes;
static tbm_slurm_jobs_t jobs;

static void setup(void)
{
    tbm_err_t err = { { 0 } };
    size_t len;
    char *text;

    ck_assert_msg(tbm_conf_parse(lab, strlen(lab), "t.conf", &conf, NULL, &err) == 0, "%s", err.msg);
    text = tbm_fixture("slurm/scontrol-22.05.txt", &len);
    ck_assert_int_eq(tbm_slurm_nodes_parse(text, len, &nodes, &err), 0);
    free(text);
    text = tbm_fixture("slurm/squeue-24.11.txt", &len);   /* jobs on mac01, mac04, Linux nodes, and both */
    ck_assert_int_eq(tbm_slurm_jobs_parse(text, len, &jobs, &err), 0);
    free(text);
}

static void teardown(void)
{
    tbm_conf_free(&conf);
    tbm_slurm_nodes_free(&nodes);
    tbm_slurm_jobs_free(&jobs);
}

static char *expose(const tbm_exporter_view_t *v)
{
    tbm_err_t err = { { 0 } };
    char *text = tbm_exporter_text(v, &err);

    ck_assert_msg(text != NULL, "%s", err.msg);
    return text;
}

static void has(const char *text, const char *line)
{
    char want[1024];

    snprintf(want, sizeof(want), "\n%s\n", line);
    ck_assert_msg(strstr(text, want) != NULL, "no line [%s] in:\n%s", line, text);
}

static void lacks(const char *text, const char *piece)
{
    ck_assert_msg(strstr(text, piece) == NULL, "[%s] should not be in:\n%s", piece, text);
}

START_TEST(macs_groups_and_verdicts)
{
    tbm_health_verdict_t well = { .node = "mac01", .verdict = TBM_HEALTH_WELL, .time = 1736850000 };
    tbm_health_verdict_t unwell = { .node = "mac03", .verdict = TBM_HEALTH_UNWELL, .time = 1736850067,
                                    .reason = "tbmesh: cable-missing" };
    const tbm_health_verdict_t *verdicts[8] = { &well, NULL, &unwell, NULL, NULL, NULL, NULL, NULL };
    tbm_exporter_view_t v = { &conf, "0.9.0", "caplab", 1, &nodes, &jobs, verdicts, 2 };
    char *text = expose(&v);

    has(text, "tbmesh_exporter_info{cluster=\"caplab\",version=\"0.9.0\"} 1");
    has(text, "tbmesh_slurm_up 1");
    has(text, "tbmesh_mac_state{group=\"studio-a\",node=\"mac01\",state=\"allocated\"} 1");
    has(text, "tbmesh_mac_state{group=\"studio-a\",node=\"mac03\",state=\"mixed\"} 1");
    has(text, "tbmesh_mac_state{group=\"studio-a\",node=\"mac04\",state=\"unknown\"} 1");
    has(text, "tbmesh_mac_state{group=\"ring-b\",node=\"mac05\",state=\"absent\"} 1");
    has(text, "tbmesh_mac_drained{group=\"studio-a\",node=\"mac01\"} 0");
    has(text, "tbmesh_mac_drained{group=\"studio-a\",node=\"mac03\"} 1");
    lacks(text, "tbmesh_mac_drained{group=\"ring-b\"");   /* Slurm does not know them */
    has(text, "tbmesh_mac_drain_info{group=\"studio-a\",node=\"mac03\",reason=\"tbmesh: cable-missing at mac03:en2 "
              "<-> mac04:en2: nothing is at the other end of Thunderbolt 1\"} 1");
    has(text, "tbmesh_mac_drain_info{group=\"studio-a\",node=\"mac04\",reason=\"swap the PSU [ticket 4711]\"} 1");
    lacks(text, "tbmesh_mac_drain_info{group=\"studio-a\",node=\"mac01\"");
    has(text, "tbmesh_health_ok{group=\"studio-a\",node=\"mac01\"} 1");
    has(text, "tbmesh_health_ok{group=\"studio-a\",node=\"mac03\"} 0");
    has(text, "tbmesh_health_check_time_seconds{group=\"studio-a\",node=\"mac03\"} 1736850067");
    lacks(text, "tbmesh_health_ok{group=\"studio-a\",node=\"mac02\"");
    /* studio-a: mac01, mac02 allocated; mac03 draining; mac04 never registered: down */
    has(text, "tbmesh_group_macs{group=\"studio-a\",state=\"allocated\"} 2");
    has(text, "tbmesh_group_macs{group=\"studio-a\",state=\"drained\"} 1");
    has(text, "tbmesh_group_macs{group=\"studio-a\",state=\"down\"} 1");
    has(text, "tbmesh_group_macs{group=\"studio-a\",state=\"up\"} 0");
    has(text, "tbmesh_group_macs{group=\"ring-b\",state=\"down\"} 4");
    /* jobs 41 (mac01), 42 (mac04) and 44 (lnx01, mac01, mac04) on studio-a; 43 on Linux nodes only */
    has(text, "tbmesh_group_jobs_running{group=\"studio-a\"} 3");
    has(text, "tbmesh_group_jobs_running{group=\"ring-b\"} 0");
    has(text, "# TYPE tbmesh_group_jobs_running gauge");
    has(text, "tbmesh_job_records_missing 2");
    free(text);
}
END_TEST

/* No recent reading: Slurm's series are left out, the verdicts and the exporter's stay; no jobs: no jobs. */
START_TEST(without_a_reading)
{
    tbm_health_verdict_t well = { .node = "mac06", .verdict = TBM_HEALTH_WELL, .time = 5 };
    const tbm_health_verdict_t *verdicts[8] = { NULL, NULL, NULL, NULL, NULL, &well, NULL, NULL };
    tbm_exporter_view_t v = { &conf, "0.9.0", "", 0, NULL, &jobs, verdicts, -1 };
    char *text = expose(&v);

    has(text, "tbmesh_slurm_up 0");
    has(text, "tbmesh_exporter_info{cluster=\"\",version=\"0.9.0\"} 1");
    has(text, "tbmesh_health_ok{group=\"ring-b\",node=\"mac06\"} 1");
    lacks(text, "tbmesh_mac_state{");
    lacks(text, "tbmesh_mac_drained{");
    lacks(text, "tbmesh_group_macs{");
    lacks(text, "tbmesh_group_jobs_running{");
    lacks(text, "\ntbmesh_job_records_missing ");   /* not known */
    has(text, "# TYPE tbmesh_mac_state gauge");   /* declared all the same */
    has(text, "# TYPE tbmesh_job_records_missing gauge");
    free(text);
    v = (tbm_exporter_view_t){ &conf, "0.9.0", "caplab", 1, &nodes, NULL, NULL, 0 };
    text = expose(&v);
    has(text, "tbmesh_group_macs{group=\"ring-b\",state=\"up\"} 0");
    has(text, "tbmesh_job_records_missing 0");
    lacks(text, "tbmesh_group_jobs_running{");
    lacks(text, "tbmesh_health_ok{");
    free(text);
}
END_TEST

START_TEST(classes_and_escaping)
{
    tbm_slurm_node_t n = { .name = "mac01", .state = "idle" };
    tbm_slurm_nodes_t one = { &n, 1, 0, 0, "" };
    tbm_exporter_view_t v = { &conf, "0.9.0", "caplab", 1, &one, NULL, NULL, -1 };
    char *text;

    ck_assert_int_eq(tbm_mac_class(&n), TBM_MAC_UP);
    n.drain = 1;
    ck_assert_int_eq(tbm_mac_class(&n), TBM_MAC_DRAINED);
    snprintf(n.state, sizeof(n.state), "allocated");
    ck_assert_int_eq(tbm_mac_class(&n), TBM_MAC_DRAINED);   /* draining: drained before allocated */
    n.drain = 0;
    ck_assert_int_eq(tbm_mac_class(&n), TBM_MAC_ALLOCATED);
    n.not_responding = 1;
    ck_assert_int_eq(tbm_mac_class(&n), TBM_MAC_DOWN);
    n.not_responding = 0;
    snprintf(n.state, sizeof(n.state), "future");
    ck_assert_int_eq(tbm_mac_class(&n), TBM_MAC_DOWN);
    ck_assert_int_eq(tbm_mac_class(NULL), TBM_MAC_DOWN);
    ck_assert_str_eq(tbm_mac_class_name(TBM_MAC_ALLOCATED), "allocated");
    snprintf(n.state, sizeof(n.state), "idle");
    n.drain = 1;
    snprintf(n.reason, sizeof(n.reason), "a \"quoted\" \\ reason");
    text = expose(&v);
    has(text, "tbmesh_mac_drain_info{group=\"studio-a\",node=\"mac01\",reason=\"a \\\"quoted\\\" \\\\ reason\"} 1");
    has(text, "tbmesh_group_macs{group=\"studio-a\",state=\"drained\"} 1");
    has(text, "tbmesh_group_macs{group=\"studio-a\",state=\"down\"} 3");
    free(text);
}
END_TEST

static Suite *slurmmetrics_suite(void)
{
    Suite *s = suite_create("slurmmetrics");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, macs_groups_and_verdicts);
    tcase_add_test(tc, without_a_reading);
    tcase_add_test(tc, classes_and_escaping);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(slurmmetrics_suite)
