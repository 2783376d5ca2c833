/* test_jobmodify.c: unit tests of lib/jobmodify.c, the rules job_submit/tbmesh holds a pending job's changes
 * to, on the lab's two groups (etc/tbmesh.conf.example) with partitions mac (Macs), all (shared), linux. */
#include "tbm_check.h"
#include "tbm_fixture.h"

#include <stdio.h>
#include <string.h>

#include "fileio.h"
#include "jobmodify.h"

static tbm_conf_t conf;
static tbm_sched_t sched = { "mac", "all", "all", NULL, NULL };

static void load_conf(void)
{
    tbm_example_conf(&conf);
}

static void free_conf(void)
{
    tbm_conf_free(&conf);
}

static const tbm_jobfields_t none = { NULL, NULL, NULL, NULL, NULL, TBM_NODES_UNSET, TBM_NODES_UNSET };

/* A Mac job as job_submit/tbmesh left it, and a Linux job in the shared partition. */
static const tbm_jobfields_t mac_job = { "gres:tbmesh:1", "[tbmesh_studio_a|tbmesh_mini_b]", "mac", NULL, NULL,
                                         TBM_NODES_UNSET, TBM_NODES_UNSET };
static const tbm_jobfields_t shared_job = { NULL, NULL, "all", NULL, "mac[01-08]", TBM_NODES_UNSET,
                                            TBM_NODES_UNSET };
static const tbm_jobfields_t linux_job = { NULL, NULL, "linux", NULL, NULL, TBM_NODES_UNSET, TBM_NODES_UNSET };

static int check(const tbm_jobfields_t *now, tbm_jobfields_t chg, int admin, tbm_jobmodify_t *out, tbm_err_t *err)
{
    memset(err, 0, sizeof(*err));
    return tbm_jobmodify_check(&conf, &sched, 42, now, &chg, admin, out, err);
}

START_TEST(no_placement_change_passes)
{
    tbm_jobmodify_t out;
    tbm_err_t err;

    ck_assert_int_eq(check(&mac_job, none, 0, &out, &err), 0);
    ck_assert_int_eq(out.touches_placement, 0);
    ck_assert_int_eq(check(NULL, none, 0, &out, &err), 0);
}
END_TEST

START_TEST(mac_job_placement_is_fixed)
{
    tbm_jobmodify_t out;
    tbm_err_t err;
    tbm_jobfields_t c = none;

    c.features = "tbmesh";
    c.req_nodes = "mac01,mac02,mac05,mac06";
    ck_assert_int_eq(check(&mac_job, c, 0, &out, &err), -1);
    ck_assert(strstr(err.msg, "job 42 is a Mac job") && strstr(err.msg, "scancel 42"));
    c = none;
    c.partition = "all";
    ck_assert_int_eq(check(&mac_job, c, 0, &out, &err), -1);
    c = none;
    c.min_nodes = 2;
    ck_assert_int_eq(check(&mac_job, c, 0, &out, &err), -1);
    c = none;
    c.features = "tbmesh_studio_a|tbmesh_mini_b";
    ck_assert_int_eq(check(&mac_job, c, 0, &out, &err), -1);
}
END_TEST

START_TEST(admin_overrides_and_it_is_said)
{
    tbm_jobmodify_t out;
    tbm_err_t err;
    tbm_jobfields_t c = none;

    c.req_nodes = "mac01,mac05";
    ck_assert_int_eq(check(&mac_job, c, 1, &out, &err), 0);
    ck_assert_int_eq(out.overridden, 1);
    ck_assert(strstr(out.refusal, "Mac job") != NULL);
    tbm_jobmodify_free(&out);
}
END_TEST

START_TEST(plain_job_stays_off_shared_macs)
{
    tbm_jobmodify_t out;
    tbm_err_t err;
    tbm_jobfields_t c = none;

    /* ExcNodeList= and ReqNodeList=mac01 in the shared partition */
    c.exc_nodes = "";
    c.req_nodes = "mac01";
    ck_assert_int_eq(check(&shared_job, c, 0, &out, &err), -1);
    ck_assert(strstr(err.msg, "cannot run on mac01") != NULL);
    /* ExcNodeList=lnx01: accepted, with the Macs excluded again */
    c = none;
    c.exc_nodes = "lnx01";
    ck_assert_int_eq(check(&shared_job, c, 0, &out, &err), 0);
    ck_assert_ptr_nonnull(out.exc_nodes);
    ck_assert(strncmp(out.exc_nodes, "lnx01,", 6) == 0 && strstr(out.exc_nodes, "mac") != NULL);
    tbm_jobmodify_free(&out);
    /* -p linux moved to Partition=all ReqNodeList=mac05 */
    c = none;
    c.partition = "all";
    c.req_nodes = "mac05";
    ck_assert_int_eq(check(&linux_job, c, 0, &out, &err), -1);
    /* -p linux moved to all alone: the Macs are excluded */
    c = none;
    c.partition = "all";
    ck_assert_int_eq(check(&linux_job, c, 0, &out, &err), 0);
    ck_assert_ptr_nonnull(out.exc_nodes);
    tbm_jobmodify_free(&out);
    /* to the Mac partition with a Mac named: allowed, as at submit (-p mac -w mac05) */
    c = none;
    c.partition = "mac";
    c.req_nodes = "mac05";
    ck_assert_int_eq(check(&linux_job, c, 0, &out, &err), 0);
    ck_assert_ptr_null(out.exc_nodes);
}
END_TEST

START_TEST(plain_job_cannot_take_mac_features_or_gres)
{
    tbm_jobmodify_t out;
    tbm_err_t err;
    tbm_jobfields_t c = none;

    c.features = "tbmesh_studio_a";
    ck_assert_int_eq(check(&linux_job, c, 0, &out, &err), -1);
    ck_assert(strstr(err.msg, "--gres=tbmesh:N") != NULL);
    c = none;
    c.tres_per_node = "gres:tbmesh:4";
    ck_assert_int_eq(check(&linux_job, c, 0, &out, &err), -1);
    ck_assert(strstr(err.msg, "cannot become a Mac job") != NULL);
}
END_TEST

START_TEST(unknown_job_is_asked_to_wait)
{
    tbm_jobmodify_t out;
    tbm_err_t err;
    tbm_jobfields_t c = none;

    c.req_nodes = "lnx01";
    ck_assert_int_eq(check(NULL, c, 0, &out, &err), -1);
    ck_assert(strstr(err.msg, "try again") != NULL);
    ck_assert_int_eq(check(NULL, c, 1, &out, &err), 0);
}
END_TEST

static Suite *jobmodify_suite(void)
{
    Suite *s = suite_create("jobmodify");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, load_conf, free_conf);
    tcase_add_test(tc, no_placement_change_passes);
    tcase_add_test(tc, mac_job_placement_is_fixed);
    tcase_add_test(tc, admin_overrides_and_it_is_said);
    tcase_add_test(tc, plain_job_stays_off_shared_macs);
    tcase_add_test(tc, plain_job_cannot_take_mac_features_or_gres);
    tcase_add_test(tc, unknown_job_is_asked_to_wait);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(jobmodify_suite)
