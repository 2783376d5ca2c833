/* test_cablediff.c: unit tests of lib/cablediff.c (cables of the last tbmesh.conf against those seen now). */
#include "tbm_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cablediff.h"

static const char *before_text =
    "Group=studio-a Nodes=mac[01-03] Topology=mesh Link=tb5 Rdma=no Mode=bridge Backends=mpi\n"
    "Cable=mac01:en2,mac02:en2 Speed=80\n"
    "Cable=mac01:en3,mac03:en2 Speed=80\n"
    "Cable=mac02:en3,mac03:en3 Speed=80\n";

static void parse(const char *text, tbm_conf_t *c)
{
    tbm_err_t err = { { 0 } };
    ck_assert_msg(tbm_conf_parse(text, strlen(text), "t.conf", c, NULL, &err) == 0, "%s", err.msg);
}

START_TEST(same_cabling_has_no_finding)
{
    tbm_conf_t a, b;
    tbm_findings_t fs;

    parse(before_text, &a);
    /* the same cables, written with their ends the other way round */
    parse("Group=g Nodes=mac[01-03] Topology=mesh Link=tb5 Rdma=no Mode=bridge Backends=mpi\n"
          "Cable=mac02:en2,mac01:en2\nCable=mac03:en2,mac01:en3\nCable=mac03:en3,mac02:en3\n", &b);
    tbm_findings_init(&fs);
    ck_assert_uint_eq(tbm_cables_diff(&a, &b, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    tbm_findings_free(&fs);
    tbm_conf_free(&a);
    tbm_conf_free(&b);
}
END_TEST

START_TEST(pulled_cable_is_named_and_moved_one_is_new)
{
    tbm_conf_t a, b;
    tbm_findings_t fs;
    const tbm_finding_t *f;

    parse(before_text, &a);
    parse("Group=g Nodes=mac[01-03] Topology=other Link=tb5 Rdma=no Mode=bridge Backends=mpi\n"
          "Cable=mac01:en3,mac03:en2\nCable=mac02:en4,mac03:en3\n", &b);
    tbm_findings_init(&fs);
    ck_assert_uint_eq(tbm_cables_diff(&a, &b, &fs), 2);
    f = tbm_findings_find(&fs, "cable-missing");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, TBM_SEV_ERROR);
    ck_assert_str_eq(f->where, "mac01:en2 <-> mac02:en2");
    ck_assert_str_eq(f->what, "cable mac01:en2 <-> mac02:en2 (in the last tbmesh.conf) is seen from neither end");
    ck_assert_str_eq(fs.items[1].where, "mac02:en3 <-> mac03:en3");
    f = tbm_findings_find(&fs, "cable-new");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->severity, TBM_SEV_INFO);
    ck_assert_str_eq(f->where, "mac02:en4 <-> mac03:en3");
    ck_assert_uint_eq(tbm_findings_count(&fs, TBM_SEV_ERROR), 2);
    tbm_findings_free(&fs);
    tbm_conf_free(&a);
    tbm_conf_free(&b);
}
END_TEST

/* Now mac03's Thunderbolt facts are unknown, and the inventory left it out: its cables are not concluded
 * missing, each is said to be unchecked; a cable between the other two still is. */
START_TEST(cables_of_a_mac_left_out_are_unchecked)
{
    tbm_conf_t a, b;
    tbm_findings_t fs;
    const tbm_finding_t *f;

    parse(before_text, &a);
    parse("Group=g Nodes=mac[01-02] Topology=mesh Link=tb5 Rdma=no Mode=bridge Backends=mpi\n", &b);
    b.left_out = calloc(1, sizeof(*b.left_out));
    ck_assert_ptr_nonnull(b.left_out);
    snprintf(b.left_out[0].name, sizeof(b.left_out[0].name), "mac03");
    b.n_left_out = 1;
    tbm_findings_init(&fs);
    ck_assert_uint_eq(tbm_cables_diff(&a, &b, &fs), 1);
    ck_assert_uint_eq(fs.n, 3);
    f = tbm_findings_find(&fs, "cable-missing");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->where, "mac01:en2 <-> mac02:en2");
    ck_assert_int_eq(fs.items[1].severity, TBM_SEV_INFO);
    ck_assert_str_eq(fs.items[1].code, "cable-unchecked");
    ck_assert_str_eq(fs.items[1].what, "cable mac01:en3 <-> mac03:en2 (in the last tbmesh.conf) is not checked: the "
                                       "Thunderbolt facts of mac03 are unknown");
    ck_assert_str_eq(fs.items[1].fix, "probe that Mac again, then run tbmesh inventory again");
    ck_assert_str_eq(fs.items[2].where, "mac02:en3 <-> mac03:en3");
    tbm_findings_free(&fs);
    tbm_conf_free(&a);
    tbm_conf_free(&b);
}
END_TEST

static Suite *cablediff_suite(void)
{
    Suite *s = suite_create("cablediff");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, same_cabling_has_no_finding);
    tcase_add_test(tc, pulled_cable_is_named_and_moved_one_is_new);
    tcase_add_test(tc, cables_of_a_mac_left_out_are_unchecked);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(cablediff_suite)
