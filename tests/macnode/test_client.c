/* test_client.c: the client's side (common/client.c): the forwarder's launch times (the SPANK plug-in's stamps
 * as macnode exec reads them from $TBMESH_LAUNCH_STAMPS, and the line of parts --verbose prints), which Mac's
 * agent must prove itself at an address, and what failed when no agent proves itself (client_fault_t). */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"

#include "client.h"
#include "tbm_check.h"

START_TEST(stamps_are_three_rising_numbers)
{
    client_launch_t l = { 0 };

    ck_assert_int_eq(client_launch_stamps("1000 1800 2500", &l), 0);
    ck_assert(l.grant_start == 1000 && l.grant_end == 1800 && l.exec == 2500);
}
END_TEST

START_TEST(bad_stamps_are_left_out)
{
    static const char *const bad[] = { "", "1000", "1000 1800", "1000 1800 2500 3000", "1000 900 2500",
                                       "1000 1800 1700", "0 1 2", "-5 1 2", "1000 1800 2500x", "a b c" };
    client_launch_t l = { 0 };
    size_t i;

    ck_assert_int_eq(client_launch_stamps(NULL, &l), -1);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(client_launch_stamps(bad[i], &l) == -1, "'%s' was taken", bad[i]);
        ck_assert(l.grant_start == 0 && l.grant_end == 0 && l.exec == 0);
    }
}
END_TEST

START_TEST(the_line_names_every_part_in_ms)
{
    client_launch_t l = { .grant_start = 1000, .grant_end = 1840, .exec = 2000, .main = 4100,
                          .open = { .cred = 4610, .connect = 4730, .proof = 5130, .welcome = 6660 }, .started = 9680,
                          .first_output = 10120, .exit = 10920 };
    char line[512];

    client_launch_line(&l, line, sizeof(line));
    ck_assert_str_eq(line, "grant=0.84 stepd=0.16 exec=2.10 credential=0.51 connect=0.12 proof=0.40 authenticate=1.53 "
                           "spawn=3.02 first_output=0.44 total=9.12 end=0.80");
}
END_TEST

START_TEST(missing_stamps_give_dashes)
{
    /* run by hand: no plug-in stamps; a task without output */
    client_launch_t l = { .main = 4100, .open = { .cred = 4610, .connect = 4730, .welcome = 6660 },
                          .started = 9680, .exit = 9900 };
    char line[512], small[20];

    client_launch_line(&l, line, sizeof(line));
    ck_assert_str_eq(line, "grant=- stepd=- exec=- credential=0.51 connect=0.12 proof=- authenticate=1.93 spawn=3.02 "
                           "first_output=- total=5.58 end=0.22");
    memset(&l, 0, sizeof(l));
    client_launch_line(&l, line, sizeof(line));
    ck_assert_str_eq(line, "grant=- stepd=- exec=- credential=- connect=- proof=- authenticate=- spawn=- "
                           "first_output=- total=- end=-");
    client_launch_line(&l, small, sizeof(small));   /* cut, still a string */
    ck_assert_uint_lt(strlen(small), sizeof(small));
}
END_TEST

/* The Mac whose agent must prove itself: --node, else tbmesh.conf's at that address, else $SLURMD_NODENAME's,
 * else the address's host name; an address alone is refused, saying how to name the Mac. */
START_TEST(the_expected_mac)
{
    char dir[64], path[128], node[TBM_NODE_MAX];
    client_t c = { .agent = "10.0.0.12:7000", .fd = -1 };
    tbm_err_t err = { { 0 } };

    tbm_scratch_make(dir, sizeof(dir), "test_client");
    tbm_scratch_put(dir, "tbmesh.conf", "AgentPort=7000\nGroup=a Nodes=m[1-2] Topology=mesh Link=tb5 Rdma=yes "
                    "Backends=mpi\nNodeName=m1 AgentAddr=10.0.0.11\nNodeName=m2 AgentAddr=10.0.0.12\n");
    snprintf(path, sizeof(path), "%s/tbmesh.conf", dir);
    setenv("TBMESH_CONF", path, 1);
    ck_assert_int_eq(client_expected_node(&c, node, sizeof(node), &err), 0);
    ck_assert_str_eq(node, "m2");
    c.mac = "m1";                          /* $SLURMD_NODENAME does not override what tbmesh.conf says */
    ck_assert_int_eq(client_expected_node(&c, node, sizeof(node), &err), 0);
    ck_assert_str_eq(node, "m2");
    c.want = "m9";                         /* --node does */
    ck_assert_int_eq(client_expected_node(&c, node, sizeof(node), &err), 0);
    ck_assert_str_eq(node, "m9");
    c.want = NULL;
    c.agent = "10.0.0.13:7000";            /* no Mac of tbmesh.conf there: $SLURMD_NODENAME's */
    ck_assert_int_eq(client_expected_node(&c, node, sizeof(node), &err), 0);
    ck_assert_str_eq(node, "m1");
    c.mac = NULL;
    ck_assert_int_eq(client_expected_node(&c, node, sizeof(node), &err), -1);
    ck_assert_str_eq(err.msg, "cannot tell which Mac's agent 10.0.0.13:7000 should be, so it cannot prove itself: "
                              "give --node NAME (the Mac's name in tbmesh.conf), or list the Mac with AgentAddr in "
                              "tbmesh.conf ($TBMESH_CONF)");
    c.agent = "mac05.lab.example:7000";    /* a name: its first label */
    ck_assert_int_eq(client_expected_node(&c, node, sizeof(node), &err), 0);
    ck_assert_str_eq(node, "mac05");
    c.agent = "fe80::1";                   /* an IPv6 address is no name */
    ck_assert_int_eq(client_expected_node(&c, node, sizeof(node), &err), -1);
    unsetenv("TBMESH_CONF");
    tbm_scratch_remove(dir);
}
END_TEST

/* The write end of a pipe the stand-in's child writes one byte to per connection it took (-1: none). */
static int taken_fd = -1;

/* A listening socket on 127.0.0.1 (its port in *port). says NULL: its connections are left in the backlog,
 * unanswered (*pid -1); else a child (*pid) accepts each, writes `says` ("": nothing) and closes it. */
static int stand_in(int *port, const char *says, pid_t *pid)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0), conn, k;

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(fd, 4), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    *pid = -1;
    if (says && (*pid = fork()) == 0) {
        for (k = 0; k < 8; k++) {
            conn = accept(fd, NULL, NULL);
            if (conn >= 0 && *says && write(conn, says, strlen(says)) < 0)
                _exit(1);
            if (taken_fd >= 0 && write(taken_fd, "c", 1) != 1)
                _exit(1);
            close(conn);
        }
        _exit(0);
    }
    return fd;
}

/* client_greet against the stand-in: its fault (the greeting fails). */
static client_fault_t greet_fault(int port, int *fault_errno)
{
    char agent[32];
    client_t c = { .agent = agent, .want = "mac01", .connect_ms = 1000, .reply_ms = 300, .fd = -1 };
    tbm_err_t err = { { 0 } };

    snprintf(agent, sizeof(agent), "127.0.0.1:%d", port);
    c.deadline = tbm_now_ms() + 2000;
    ck_assert_int_eq(client_greet(&c, "not-a-credential", &err), -1);
    ck_assert_msg(err.msg[0], "a failure says why");
    if (fault_errno)
        *fault_errno = c.fault_errno;
    return c.fault;
}

static void stand_in_gone(int fd, pid_t pid)
{
    close(fd);
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
}

START_TEST(no_agent_listening_is_unreachable)
{
    pid_t pid;
    int port, fd = stand_in(&port, NULL, &pid), why = 0;

    close(fd);   /* nothing listens there any more */
    ck_assert_int_eq(greet_fault(port, &why), CLIENT_UNREACHABLE);
    ck_assert_int_eq(why, ECONNREFUSED);
}
END_TEST

START_TEST(a_silent_port_is_silent_within_the_limit)
{
    pid_t pid;
    int port, fd = stand_in(&port, NULL, &pid);
    long long t0 = tbm_now_ms();

    ck_assert_int_eq(greet_fault(port, NULL), CLIENT_SILENT);
    ck_assert_int_lt(tbm_now_ms() - t0, 1500);
    stand_in_gone(fd, pid);
}
END_TEST

START_TEST(a_closed_connection_is_closed)
{
    pid_t pid;
    int port, fd = stand_in(&port, "", &pid);

    ck_assert_int_eq(greet_fault(port, NULL), CLIENT_CLOSED);
    stand_in_gone(fd, pid);
}
END_TEST

/* An agent that closed the connection before its proof (a flooded gate makes room so) is asked again on a new
 * connection, CLIENT_PROOF_TRIES times in all, and the message says how many. */
START_TEST(a_closed_connection_is_asked_again)
{
    char agent[32], got[16];
    client_t c = { .agent = agent, .want = "mac01", .connect_ms = 1000, .reply_ms = 300, .fd = -1 };
    tbm_err_t err = { { 0 } };
    pid_t pid;
    int p[2], port, fd;
    ssize_t n;

    ck_assert_int_eq(pipe(p), 0);
    taken_fd = p[1];
    fd = stand_in(&port, "", &pid);
    taken_fd = -1;
    close(p[1]);
    snprintf(agent, sizeof(agent), "127.0.0.1:%d", port);
    ck_assert_int_eq(client_greet(&c, "not-a-credential", &err), -1);
    ck_assert_int_eq(c.fault, CLIENT_CLOSED);
    ck_assert_msg(strstr(err.msg, "it did not prove itself, so nothing was sent to it (asked 3 times)") != NULL, "%s",
                  err.msg);
    stand_in_gone(fd, pid);
    n = read(p[0], got, sizeof(got));
    ck_assert_int_eq(n, CLIENT_PROOF_TRIES);
    close(p[0]);
}
END_TEST

START_TEST(bytes_that_are_no_proof_leave_it_unproved)
{
    pid_t pid;
    int port, fd = stand_in(&port, "\x7f\x7f\x7f\x7f{}", &pid);   /* a frame far too long */

    ck_assert_int_eq(greet_fault(port, NULL), CLIENT_UNPROVED);
    stand_in_gone(fd, pid);
}
END_TEST

static Suite *client_suite(void)
{
    Suite *s = suite_create("client");
    TCase *tc = tcase_create("launch");

    tcase_add_test(tc, stamps_are_three_rising_numbers);
    tcase_add_test(tc, bad_stamps_are_left_out);
    tcase_add_test(tc, the_line_names_every_part_in_ms);
    tcase_add_test(tc, missing_stamps_give_dashes);
    tcase_add_test(tc, the_expected_mac);
    suite_add_tcase(s, tc);
    tc = tcase_create("faults");
    tcase_add_test(tc, no_agent_listening_is_unreachable);
    tcase_add_test(tc, a_silent_port_is_silent_within_the_limit);
    tcase_add_test(tc, a_closed_connection_is_closed);
    tcase_add_test(tc, a_closed_connection_is_asked_again);
    tcase_add_test(tc, bytes_that_are_no_proof_leave_it_unproved);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(client_suite)
