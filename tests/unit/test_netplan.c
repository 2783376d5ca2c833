/* test_netplan.c: unit tests of lib/netplan.c (per-cable /30 plan, routes, and its macOS and Linux commands). */
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
    cmds = tbm_netplan_commands(&p, "mac03", TBM_NETPLAN_MACOS, &err);
    ck_assert_ptr_nonnull(cmds);
    ck_assert_ptr_nonnull(strstr(cmds, "# on mac03\nifconfig bridge0 down\n"
                                       "ifconfig en2 inet 169.254.0.6 netmask 255.255.255.252 up\n"
                                       "route -n change -host 169.254.0.5 -interface en2 || route -n add -host "
                                       "169.254.0.5 -interface en2\n"
                                       "ifconfig en3 inet 169.254.0.14 netmask 255.255.255.252 up\n"));
    ck_assert_ptr_null(strstr(cmds, "# on mac01"));
    free(cmds);
    cmds = tbm_netplan_commands(&p, NULL, TBM_NETPLAN_MACOS, &err);
    ck_assert_ptr_nonnull(strstr(cmds, "# on mac01\n"));
    ck_assert_ptr_nonnull(strstr(cmds, "# on mac02\n"));
    ck_assert_ptr_nonnull(strstr(cmds, "# on mac03\n"));
    ck_assert_ptr_null(strstr(strstr(cmds, "# on mac01") + 1, "# on mac01"));
    free(cmds);
    ck_assert_ptr_null(tbm_netplan_commands(&p, "mac09", TBM_NETPLAN_MACOS, &err));
    ck_assert_str_eq(err.msg, "mac09 has no cable in tbmesh.conf: name a host of the lab (--host NAME)");
    tbm_netplan_free(&p);
    tbm_conf_free(&c);
}
END_TEST

/* A ring of 4 (a-b-c-d-a), addresses kept: the routes go the short way round and every host forwards. */
static const char *ring4 =
    "Group=r Nodes=m[1-4] Topology=ring Link=tb4 Rdma=no Mode=direct Backends=ring,mpi\n"
    "Cable=m1:en2,m2:en2 Addr=10.0.1.1/30,10.0.1.2/30\n"
    "Cable=m2:en3,m3:en2 Addr=10.0.2.1/30,10.0.2.2/30\n"
    "Cable=m3:en3,m4:en2 Addr=10.0.3.1/30,10.0.3.2/30\n"
    "Cable=m4:en3,m1:en3 Addr=10.0.4.1/30,10.0.4.2/30\n";

static void make_plan(const char *text, tbm_conf_t *c, tbm_netplan_t *p)
{
    tbm_err_t err = { { 0 } };

    ck_assert_msg(tbm_conf_parse(text, strlen(text), "t.conf", c, NULL, &err) == 0, "%s", err.msg);
    ck_assert_msg(tbm_netplan_make(c, "169.254.0.0/16", 0, p, &err) == 0, "%s", err.msg);
}

START_TEST(mesh_routes_reach_every_address_over_the_direct_cable)
{
    tbm_conf_t c;
    tbm_netplan_t p;
    tbm_err_t err = { { 0 } };
    tbm_netplan_route_t *r;
    size_t n;
    int fwd = -1;

    make_plan(lab, &c, &p);
    /* mac03's own cables reach 169.254.0.5 (mac01) and .13 (mac02); the cable mac01-mac02 is not its own:
     * both ends are routed, each over the cable to its owner */
    ck_assert_int_eq(tbm_netplan_routes(&p, "mac03", &r, &n, &fwd, &err), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(fwd, 0);
    ck_assert_str_eq(r[0].dest, "169.254.0.9");
    ck_assert_str_eq(r[0].owner, "mac01");
    ck_assert_str_eq(r[0].via, "169.254.0.5");
    ck_assert_str_eq(r[0].iface, "en2");
    ck_assert_int_eq(r[0].hops, 1);
    ck_assert_str_eq(r[1].dest, "169.254.0.10");
    ck_assert_str_eq(r[1].owner, "mac02");
    ck_assert_str_eq(r[1].via, "169.254.0.13");
    ck_assert_str_eq(r[1].iface, "en3");
    free(r);
    ck_assert_int_eq(tbm_netplan_routes(&p, "nosuch", &r, &n, &fwd, &err), 0);
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_null(r);
    tbm_netplan_free(&p);
    tbm_conf_free(&c);
}
END_TEST

START_TEST(ring_routes_go_the_short_way_and_hosts_forward)
{
    tbm_conf_t c;
    tbm_netplan_t p;
    tbm_err_t err = { { 0 } };
    tbm_netplan_route_t *r;
    size_t n, i;
    int fwd = 0;

    make_plan(ring4, &c, &p);
    ck_assert_int_eq(tbm_netplan_routes(&p, "m1", &r, &n, &fwd, &err), 0);
    ck_assert_int_eq(fwd, 1);
    ck_assert_uint_eq(n, 4);   /* both ends of m2-m3 and of m3-m4 */
    for (i = 0; i < n; i++) {
        /* m2's and m4's far addresses: one hop, straight over the cable to them; m3's: two hops, via m2
         * (found first in file order) */
        if (!strcmp(r[i].owner, "m3")) {
            ck_assert_int_eq(r[i].hops, 2);
            ck_assert_str_eq(r[i].via, "10.0.1.2");
            ck_assert_str_eq(r[i].iface, "en2");
        } else if (!strcmp(r[i].owner, "m4")) {
            ck_assert_int_eq(r[i].hops, 1);
            ck_assert_str_eq(r[i].dest, "10.0.3.2");
            ck_assert_str_eq(r[i].via, "10.0.4.1");
            ck_assert_str_eq(r[i].iface, "en3");
        } else {
            ck_assert_str_eq(r[i].owner, "m2");
            ck_assert_str_eq(r[i].dest, "10.0.2.1");
            ck_assert_str_eq(r[i].via, "10.0.1.2");
        }
    }
    free(r);
    tbm_netplan_free(&p);
    tbm_conf_free(&c);
}
END_TEST

START_TEST(route_and_forwarding_commands_for_macos_and_linux)
{
    tbm_conf_t c;
    tbm_netplan_t p;
    tbm_err_t err = { { 0 } };
    char *cmds;

    make_plan(ring4, &c, &p);
    cmds = tbm_netplan_commands(&p, "m1", TBM_NETPLAN_MACOS, &err);
    ck_assert_ptr_nonnull(cmds);
    ck_assert_ptr_nonnull(strstr(cmds, "route -n change -host 10.0.2.2 10.0.1.2 || route -n add -host 10.0.2.2 "
                                       "10.0.1.2\n"));
    ck_assert_ptr_nonnull(strstr(cmds, "\nsysctl -w net.inet.ip.forwarding=1\n"));
    ck_assert_ptr_null(strstr(cmds, "net.ipv4"));   /* no Linux command in a Mac's script */
    ck_assert_ptr_null(strstr(cmds, "-qw"));
    free(cmds);
    cmds = tbm_netplan_commands(&p, "m1", TBM_NETPLAN_LINUX, &err);
    ck_assert_ptr_nonnull(cmds);
    ck_assert_ptr_null(strstr(cmds, "ifconfig"));
    ck_assert_ptr_null(strstr(cmds, " up\n"));
    ck_assert_ptr_nonnull(strstr(cmds, "# on m1\nip addr replace 10.0.1.1/30 dev en2\n"));
    ck_assert_ptr_nonnull(strstr(cmds, "ip addr replace 10.0.4.2/30 dev en3\n"));
    ck_assert_ptr_nonnull(strstr(cmds, "ip route replace 10.0.2.2/32 via 10.0.1.2 dev en2\n"));
    ck_assert_ptr_nonnull(strstr(cmds, "\nsysctl -qw net.ipv4.ip_forward=1\n"));
    ck_assert_ptr_nonnull(strstr(cmds, "\nsysctl -qw net.ipv4.conf.all.rp_filter=2\n"));
    free(cmds);
    tbm_netplan_free(&p);
    tbm_conf_free(&c);
    /* a full mesh needs no forwarding; a Mac's script of a mesh of three holds macOS commands only */
    make_plan(lab, &c, &p);
    cmds = tbm_netplan_commands(&p, NULL, TBM_NETPLAN_MACOS, &err);
    ck_assert_ptr_null(strstr(cmds, "net.ipv4"));
    ck_assert_ptr_null(strstr(cmds, "sysctl"));
    free(cmds);
    cmds = tbm_netplan_commands(&p, "mac01", TBM_NETPLAN_LINUX, &err);
    ck_assert_ptr_nonnull(cmds);
    ck_assert_ptr_null(strstr(cmds, "forward"));
    ck_assert_ptr_null(strstr(cmds, "rp_filter"));
    ck_assert_ptr_nonnull(strstr(cmds, "ip route replace 169.254.0.14/32 via 169.254.0.6 dev en3\n"));
    free(cmds);
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

/* Kept cables whose ends are not one link: marked in the table, an error finding each saying what to run. */
static const char *broken =
    "Group=g Nodes=mac[01-04] Topology=mesh Link=tb5 Rdma=no Mode=direct Backends=mpi\n"
    "Cable=mac01:en2,mac02:en2 Addr=169.254.0.5/30,169.254.0.10/30\n"
    "Cable=mac01:en3,mac03:en2 Addr=169.254.0.13/30,169.254.0.14/30\n"
    "Cable=mac02:en3,mac03:en3 Addr=10.1.0.1,10.1.0.2\n"
    "Cable=mac03:en4,mac04:en2 Addr=10.2.0.1/24,10.2.0.1/24\n"
    "Cable=mac01:en4,mac04:en3 Addr=10.3.0.1/16,10.3.9.2/16\n"
    "Cable=mac02:en4,mac04:en4\n";

START_TEST(broken_kept_pairs_are_named)
{
    tbm_conf_t c;
    tbm_netplan_t p;
    tbm_findings_t fs;
    tbm_err_t err = { { 0 } };
    char *table, *cmds;

    ck_assert_msg(tbm_conf_parse(broken, strlen(broken), "t.conf", &c, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(tbm_netplan_make(&c, "169.254.0.0/16", 0, &p, &err), 0);
    ck_assert_int_eq(p.cables[0].broken, 1);
    ck_assert_int_eq(p.cables[1].broken, 0);
    ck_assert_int_eq(p.cables[2].broken, 0);    /* no prefix given: one /30, planned as a /30 */
    ck_assert_int_eq(p.cables[2].prefix_len, 30);
    ck_assert_int_eq(p.cables[3].broken, 1);    /* the same address twice */
    ck_assert_int_eq(p.cables[4].broken, 0);    /* one /16 both ends give */
    ck_assert_int_eq(p.cables[5].broken, 0);
    table = tbm_netplan_table(&p);
    ck_assert_str_eq(table,
                     "mac01:en2 169.254.0.5/30 <-> mac02:en2 169.254.0.10/30   (kept from tbmesh.conf, BROKEN: not "
                     "one link; run `macnode netplan --renumber`)\n"
                     "mac01:en3 169.254.0.13/30 <-> mac03:en2 169.254.0.14/30   (kept from tbmesh.conf)\n"
                     "mac02:en3 10.1.0.1/30 <-> mac03:en3 10.1.0.2/30   (kept from tbmesh.conf)\n"
                     "mac03:en4 10.2.0.1/24 <-> mac04:en2 10.2.0.1/24   (kept from tbmesh.conf, BROKEN: not one "
                     "link; run `macnode netplan --renumber`)\n"
                     "mac01:en4 10.3.0.1/16 <-> mac04:en3 10.3.9.2/16   (kept from tbmesh.conf)\n"
                     "mac02:en4 169.254.0.17/30 <-> mac04:en4 169.254.0.18/30\n");
    free(table);
    cmds = tbm_netplan_commands(&p, "mac02", TBM_NETPLAN_MACOS, &err);
    ck_assert_ptr_nonnull(strstr(cmds, "ifconfig en3 inet 10.1.0.1 netmask 255.255.255.252 up\n"));
    free(cmds);
    tbm_findings_init(&fs);
    ck_assert_uint_eq(tbm_netplan_broken(&p, &fs), 2);
    ck_assert_uint_eq(fs.n, 2);
    ck_assert_int_eq(fs.items[0].severity, TBM_SEV_ERROR);
    ck_assert_str_eq(fs.items[0].code, "netplan-pair-broken");
    ck_assert_str_eq(fs.items[0].where, "mac01:en2 <-> mac02:en2");
    ck_assert_str_eq(fs.items[0].what, "tbmesh.conf gives the two ends 169.254.0.5 and 169.254.0.10, not on one /30 "
                                       "nor on one common network: the cable cannot carry traffic with them");
    ck_assert_str_eq(fs.items[0].fix, "run `macnode netplan --renumber` (every cable gets a /30 of its own; apply it "
                                      "on every Mac, then run tbmesh inventory again), or drop this cable's Addr= "
                                      "from tbmesh.conf so that only it is numbered afresh");
    ck_assert_str_eq(fs.items[1].what, "tbmesh.conf gives the two ends 10.2.0.1 and 10.2.0.1, the same address: the "
                                       "cable cannot carry traffic with them");
    tbm_findings_free(&fs);
    tbm_netplan_free(&p);
    /* --renumber: nothing kept, nothing broken */
    ck_assert_int_eq(tbm_netplan_make(&c, "169.254.0.0/16", 1, &p, &err), 0);
    tbm_findings_init(&fs);
    ck_assert_uint_eq(tbm_netplan_broken(&p, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    tbm_netplan_free(&p);
    tbm_conf_free(&c);
}
END_TEST

/* tbmesh inventory's side: such a pair is left out of the tbmesh.conf it writes, with a warning. */
START_TEST(broken_pairs_left_out)
{
    tbm_conf_t c;
    tbm_netplan_t p;
    tbm_findings_t fs;
    tbm_err_t err = { { 0 } };

    ck_assert_msg(tbm_conf_parse(broken, strlen(broken), "t.conf", &c, NULL, &err) == 0, "%s", err.msg);
    tbm_findings_init(&fs);
    ck_assert_uint_eq(tbm_netplan_drop_broken(&c, &fs), 2);
    ck_assert_str_eq(c.cables[0].end[0].ipv4, "");
    ck_assert_str_eq(c.cables[0].end[1].ipv4, "");
    ck_assert_int_eq(c.cables[0].end[1].prefix_len, -1);
    ck_assert_str_eq(c.cables[1].end[0].ipv4, "169.254.0.13");
    ck_assert_str_eq(c.cables[3].end[0].ipv4, "");
    ck_assert_int_eq(fs.items[0].severity, TBM_SEV_WARNING);
    ck_assert_str_eq(fs.items[0].code, "addr-left-out");
    ck_assert_str_eq(fs.items[0].where, "mac01:en2 <-> mac02:en2");
    ck_assert_str_eq(fs.items[0].what, "tbmesh.conf leaves out this cable's addresses 169.254.0.5 and 169.254.0.10: "
                                       "they are not one link, and macnode netplan would keep them");
    ck_assert_str_eq(fs.items[0].fix, "run `macnode netplan` on the two Macs (--apply): it gives this cable a /30 of "
                                      "its own; then probe them and run tbmesh inventory again");
    tbm_findings_free(&fs);
    /* what netplan then makes of it: the cable is numbered afresh on a free /30 */
    ck_assert_int_eq(tbm_netplan_make(&c, "169.254.0.0/16", 0, &p, &err), 0);
    ck_assert_int_eq(p.cables[0].planned, 1);
    ck_assert_str_eq(p.cables[0].end[0].ipv4, "169.254.0.5");
    ck_assert_str_eq(p.cables[0].end[1].ipv4, "169.254.0.6");
    tbm_findings_init(&fs);
    ck_assert_uint_eq(tbm_netplan_broken(&p, &fs), 0);
    tbm_findings_free(&fs);
    tbm_netplan_free(&p);
    tbm_findings_init(&fs);
    ck_assert_uint_eq(tbm_netplan_drop_broken(&c, &fs), 0);   /* nothing left to drop */
    ck_assert_uint_eq(fs.n, 0);
    tbm_findings_free(&fs);
    tbm_conf_free(&c);
}
END_TEST

/* Two kept cables in one subnet (or overlapping ones): the later is broken, named with the earlier and the
 * subnet; netplan gives no commands for it; the inventory leaves its addresses out. */
static const char *colliding =
    "Group=g Nodes=mac[01-04] Topology=mesh Link=tb5 Rdma=no Mode=direct Backends=mpi\n"
    "Cable=mac01:en2,mac02:en2 Addr=169.254.0.5/30,169.254.0.6/30\n"
    "Cable=mac03:en2,mac04:en2 Addr=169.254.0.5/30,169.254.0.6/30\n"
    "Cable=mac01:en3,mac03:en3 Addr=10.0.0.1/29,10.0.0.2/29\n"
    "Cable=mac02:en3,mac04:en3 Addr=10.0.0.5/30,10.0.0.6/30\n"
    "Cable=mac01:en4,mac04:en4\n"
    "Cable=mac02:en4,mac03:en4\n";

START_TEST(colliding_kept_cables_are_named)
{
    tbm_conf_t c;
    tbm_netplan_t p;
    tbm_findings_t fs;
    tbm_err_t err = { { 0 } };
    char *table;

    ck_assert_msg(tbm_conf_parse(colliding, strlen(colliding), "t.conf", &c, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(tbm_netplan_make(&c, "169.254.0.0/16", 0, &p, &err), 0);
    ck_assert_int_eq(p.cables[0].broken, 0);
    ck_assert_int_eq(p.cables[1].broken, 1);
    ck_assert_int_eq(p.cables[1].collides, 1);
    ck_assert_int_eq(p.cables[2].broken, 0);
    ck_assert_int_eq(p.cables[3].collides, 3);
    ck_assert_str_eq(p.cables[4].end[0].ipv4, "169.254.0.9");   /* the planned one stays off the kept /30 */
    table = tbm_netplan_table(&p);
    ck_assert_ptr_nonnull(strstr(table, "mac03:en2 169.254.0.5/30 <-> mac04:en2 169.254.0.6/30   (kept from "
                                        "tbmesh.conf, BROKEN: its subnet collides with mac01:en2 <-> mac02:en2; run "
                                        "`macnode netplan --renumber`)\n"));
    free(table);
    tbm_findings_init(&fs);
    ck_assert_uint_eq(tbm_netplan_broken(&p, &fs), 2);
    ck_assert_str_eq(fs.items[0].code, "netplan-addr-collision");
    ck_assert_int_eq(fs.items[0].severity, TBM_SEV_ERROR);
    ck_assert_str_eq(fs.items[0].where, "mac01:en2 <-> mac02:en2, mac03:en2 <-> mac04:en2");
    ck_assert_str_eq(fs.items[0].what, "tbmesh.conf gives the cable mac03:en2 <-> mac04:en2 the addresses "
                                       "169.254.0.5 and 169.254.0.6, in 169.254.0.4/30, which the cable mac01:en2 <-> "
                                       "mac02:en2 uses too: traffic for one would leave through the other");
    ck_assert_str_eq(fs.items[1].what, "tbmesh.conf gives the cable mac02:en3 <-> mac04:en3 the addresses 10.0.0.5 "
                                       "and 10.0.0.6, in 10.0.0.4/30 (overlapping 10.0.0.0/29), which the cable "
                                       "mac01:en3 <-> mac03:en3 uses too: traffic for one would leave through the other");
    ck_assert_ptr_nonnull(strstr(fs.items[0].fix, "--renumber"));
    tbm_findings_free(&fs);
    tbm_netplan_free(&p);
    /* --renumber: nothing collides */
    ck_assert_int_eq(tbm_netplan_make(&c, "169.254.0.0/16", 1, &p, &err), 0);
    tbm_findings_init(&fs);
    ck_assert_uint_eq(tbm_netplan_broken(&p, &fs), 0);
    tbm_findings_free(&fs);
    tbm_netplan_free(&p);
    /* the inventory's side: the later cable's addresses are left out, saying with which they collide */
    tbm_findings_init(&fs);
    ck_assert_uint_eq(tbm_netplan_drop_broken(&c, &fs), 2);
    ck_assert_str_eq(c.cables[0].end[0].ipv4, "169.254.0.5");
    ck_assert_str_eq(c.cables[1].end[0].ipv4, "");
    ck_assert_str_eq(c.cables[3].end[1].ipv4, "");
    ck_assert_str_eq(fs.items[0].where, "mac03:en2 <-> mac04:en2");
    ck_assert_str_eq(fs.items[0].what, "tbmesh.conf leaves out this cable's addresses 169.254.0.5 and 169.254.0.6: "
                                       "they collide with those of mac01:en2 <-> mac02:en2, and macnode netplan would "
                                       "keep them");
    tbm_findings_free(&fs);
    ck_assert_int_eq(tbm_netplan_make(&c, "169.254.0.0/16", 0, &p, &err), 0);
    tbm_findings_init(&fs);
    ck_assert_uint_eq(tbm_netplan_broken(&p, &fs), 0);
    tbm_findings_free(&fs);
    tbm_netplan_free(&p);
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
    tcase_add_test(tc, mesh_routes_reach_every_address_over_the_direct_cable);
    tcase_add_test(tc, ring_routes_go_the_short_way_and_hosts_forward);
    tcase_add_test(tc, route_and_forwarding_commands_for_macos_and_linux);
    tcase_add_test(tc, broken_kept_pairs_are_named);
    tcase_add_test(tc, broken_pairs_left_out);
    tcase_add_test(tc, colliding_kept_cables_are_named);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(netplan_suite)
