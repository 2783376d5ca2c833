/* test_netplan.c: unit tests of lib/netplan.c (per-cable /30 plan and its macOS commands). */
#include "tbm_check.h"

#include <string.h>

#include "netplan.h"

static const char *lab =
    "Group=g Nodes=mac[01-03] Topology=mesh Link=tb5 Rdma=no Mode=direct Backends=mpi\n"
    "Cable=mac01:en2,mac02:en2\n"
    "Cable=mac01:en3,mac03:en2 Addr=169.254.0.5/30,169.254.0.6/30\n"
    "Cable=mac02:en3,mac03:en3\n";

static void parse(tbm_conf_t *c)
{
    tbm_err_t err = { { 0 } };
    ck_assert_msg(tbm_conf_parse(lab, strlen(lab), "t.conf", c, NULL, &err) == 0, "%s", err.msg);
}

START_TEST(new_cables_take_free_slash30s_and_kept_ones_stay)
{
    tbm_conf_t c;
    tbm_netplan_t p;
    tbm_err_t err = { { 0 } };
    char *table;

    parse(&c);
    ck_assert_int_eq(tbm_netplan_make(&c, "169.254.0.0/16", 0, &p, &err), 0);
    table = tbm_netplan_table(&p);
    ck_assert_str_eq(table, "mac01:en2 169.254.0.9/30 <-> mac02:en2 169.254.0.10/30\n"
                            "mac01:en3 169.254.0.5/30 <-> mac03:en2 169.254.0.6/30   (kept from tbmesh.conf)\n"
                            "mac02:en3 169.254.0.13/30 <-> mac03:en3 169.254.0.14/30\n");
    free(table);
    tbm_netplan_free(&p);
    ck_assert_int_eq(tbm_netplan_make(&c, "192.168.7.0/24", 1, &p, &err), 0);
    ck_assert_str_eq(p.cables[0].end[0].ipv4, "192.168.7.5");
    ck_assert_str_eq(p.cables[1].end[1].ipv4, "192.168.7.10");
    ck_assert_str_eq(p.cables[2].end[1].ipv4, "192.168.7.14");
    ck_assert_int_eq(p.cables[1].planned, 1);
    tbm_netplan_free(&p);
    tbm_conf_free(&c);
}
END_TEST

START_TEST(commands_for_one_host)
{
    tbm_conf_t c;
    tbm_netplan_t p;
    tbm_err_t err = { { 0 } };
    char *cmds;

    parse(&c);
    ck_assert_int_eq(tbm_netplan_make(&c, "169.254.0.0/16", 0, &p, &err), 0);
    cmds = tbm_netplan_commands(&p, "mac03", &err);
    ck_assert_ptr_nonnull(cmds);
    ck_assert_ptr_nonnull(strstr(cmds, "# on mac03\nifconfig bridge0 down\n"
                                       "ifconfig en2 inet 169.254.0.6 netmask 255.255.255.252 up\n"
                                       "route -n change -host 169.254.0.5 -interface en2 || route -n add -host "
                                       "169.254.0.5 -interface en2\n"
                                       "ifconfig en3 inet 169.254.0.14 netmask 255.255.255.252 up\n"));
    ck_assert_ptr_null(strstr(cmds, "# on mac01"));
    free(cmds);
    cmds = tbm_netplan_commands(&p, NULL, &err);
    ck_assert_ptr_nonnull(strstr(cmds, "# on mac01\n"));
    ck_assert_ptr_nonnull(strstr(cmds, "# on mac02\n"));
    ck_assert_ptr_nonnull(strstr(cmds, "# on mac03\n"));
    ck_assert_ptr_null(strstr(strstr(cmds, "# on mac01") + 1, "# on mac01"));
    free(cmds);
    ck_assert_ptr_null(tbm_netplan_commands(&p, "mac09", &err));
    ck_assert_str_eq(err.msg, "mac09 has no cable in tbmesh.conf: name a host of the lab (--host NAME)");
    tbm_netplan_free(&p);
    tbm_conf_free(&c);
}
END_TEST

START_TEST(bad_bases)
{
    tbm_conf_t c;
    tbm_netplan_t p;
    tbm_err_t err = { { 0 } };

    parse(&c);
    ck_assert_int_eq(tbm_netplan_make(&c, "169.254.0.0", 0, &p, &err), -1);
    ck_assert_str_eq(err.msg, "--base 169.254.0.0 is not a network: write it as address/prefix, e.g. 169.254.0.0/16");
    ck_assert_int_eq(tbm_netplan_make(&c, "169.254.0.0/30", 0, &p, &err), -1);
    ck_assert_str_eq(err.msg, "--base 169.254.0.0/30 is not a network with room for /30 cables: write "
                              "address/prefix with a prefix from 8 to 29, e.g. 169.254.0.0/16");
    ck_assert_int_eq(tbm_netplan_make(&c, "10.0.0.0/29", 1, &p, &err), -1);
    ck_assert_str_eq(err.msg, "the base network has room for 1 cables, fewer than the lab needs: give a larger one "
                              "(a smaller prefix)");
    tbm_conf_free(&c);
}
END_TEST

static Suite *netplan_suite(void)
{
    Suite *s = suite_create("netplan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, new_cables_take_free_slash30s_and_kept_ones_stay);
    tcase_add_test(tc, commands_for_one_host);
    tcase_add_test(tc, bad_bases);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(netplan_suite)
