/* test_wire.c: common/wire.c's connections from a reserved port: root's leave from a port below 1024 that the
 * services database does not name, of their lane (root's own questions, greeted tasks), a user's from any port;
 * tasks holding every port of theirs leave root's lane free, and a connection is made when its lane is full. */
#include "tbm_check.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wire.h"

/* A listener on 127.0.0.1 (any port): its fd, its "127.0.0.1:PORT" in spec. */
static int listener(char *spec, size_t len)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(listen(fd, 16), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    snprintf(spec, len, "127.0.0.1:%d", ntohs(sa.sin_port));
    return fd;
}

/* The peer port of the connection lfd accepts next (closed then). */
static int accepted_port(int lfd)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    int fd = accept(lfd, (struct sockaddr *)&sa, &sl);

    ck_assert_int_ge(fd, 0);
    close(fd);
    return ntohs(sa.sin_port);
}

START_TEST(roots_connection_leaves_from_a_reserved_port)
{
    tbm_err_t err = { { 0 } };
    char spec[64];
    int lfd, fd, port, i;
    wire_lane_t lane;

    if (geteuid() != 0)
        return;   /* the unit tests run as root in CI; a user's run checks the other case below */
    lfd = listener(spec, sizeof(spec));
    for (i = 0; i < 40; i++) {
        lane = i % 2 ? WIRE_LANE_TASK : WIRE_LANE_ROOT;
        fd = i % 4 == 0 ? wire_connect(spec, 1, &err) : wire_connect_lane(spec, 1, 5000, lane, &err);
        ck_assert_msg(fd >= 0, "%s", err.msg);
        port = accepted_port(lfd);
        ck_assert_int_ge(port, WIRE_LANE_FIRST(lane));
        ck_assert_int_lt(port, WIRE_LANE_FIRST(lane) + WIRE_LANE_PORTS);
        ck_assert_int_lt(port, 1024);
        ck_assert_msg(getservbyport(htons((uint16_t)port), "tcp") == NULL, "port %d is a named service's", port);
        close(fd);
    }
    close(lfd);
}
END_TEST

START_TEST(a_users_connection_leaves_from_any_port)
{
    tbm_err_t err = { { 0 } };
    char spec[64];
    int lfd, fd, status;
    pid_t pid;

    lfd = listener(spec, sizeof(spec));
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {   /* as nobody, where the test runs as root */
        if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
            _exit(3);
        fd = wire_connect(spec, 1, &err);
        _exit(fd >= 0 ? 0 : 4);
    }
    ck_assert_int_ge(accepted_port(lfd), 1024);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    close(lfd);
}
END_TEST

/* Bind every port of lane on the wildcard address (no other bind may take them then): how many, in held. */
static int hold_lane(wire_lane_t lane, int *held)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    int i, n = 0;

    for (i = 0; i < WIRE_LANE_PORTS; i++) {
        held[n] = socket(AF_INET, SOCK_STREAM, 0);
        sa.sin_port = htons((uint16_t)(WIRE_LANE_FIRST(lane) + i));
        if (held[n] >= 0 && bind(held[n], (struct sockaddr *)&sa, sizeof(sa)) == 0)
            n++;
        else if (held[n] >= 0)
            close(held[n]);
    }
    return n;
}

/* With lane full: a connection of that lane is still made, from a port of 1024 up; then the listener lfd and
 * the n ports held are let go. */
static void from_any_port(int lfd, const char *spec, wire_lane_t lane, const int *held, int n)
{
    tbm_err_t err = { { 0 } };
    int fd = wire_connect_lane(spec, 1, 5000, lane, &err), i;

    ck_assert_msg(fd >= 0, "%s", err.msg);
    ck_assert_int_ge(accepted_port(lfd), 1024);
    close(fd);
    close(lfd);
    for (i = 0; i < n; i++)
        close(held[i]);
}

START_TEST(tasks_holding_their_lane_leave_roots_free)
{
    tbm_err_t err = { { 0 } };
    int held[WIRE_LANE_PORTS], lfd, fd, port, n;
    char spec[64];

    if (geteuid() != 0)
        return;
    n = hold_lane(WIRE_LANE_TASK, held);   /* as many greeted tasks as it has ports, running */
    lfd = listener(spec, sizeof(spec));
    fd = wire_connect(spec, 1, &err);
    ck_assert_msg(fd >= 0, "%s", err.msg);
    port = accepted_port(lfd);
    ck_assert_int_ge(port, WIRE_LANE_FIRST(WIRE_LANE_ROOT));
    ck_assert_int_lt(port, 1024);
    close(fd);
    from_any_port(lfd, spec, WIRE_LANE_TASK, held, n);   /* one more task */
}
END_TEST

START_TEST(every_reserved_port_taken_still_connects)
{
    int held[WIRE_LANE_PORTS], lfd, n;
    char spec[64];

    if (geteuid() != 0)
        return;
    n = hold_lane(WIRE_LANE_ROOT, held);
    lfd = listener(spec, sizeof(spec));
    from_any_port(lfd, spec, WIRE_LANE_ROOT, held, n);
}
END_TEST

static Suite *wire_suite(void)
{
    Suite *s = suite_create("wire");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, roots_connection_leaves_from_a_reserved_port);
    tcase_add_test(tc, a_users_connection_leaves_from_any_port);
    tcase_add_test(tc, tasks_holding_their_lane_leave_roots_free);
    tcase_add_test(tc, every_reserved_port_taken_still_connects);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(wire_suite)
