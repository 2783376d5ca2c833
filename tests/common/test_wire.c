/* test_wire.c: common/wire.c's connections from a reserved port: root's leave from a port below 1024 that the
 * services database does not name, a user's from any port, and a connection is made when every reserved port is
 * taken. */
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

    if (geteuid() != 0)
        return;   /* the unit tests run as root in CI; a user's run checks the other case below */
    lfd = listener(spec, sizeof(spec));
    for (i = 0; i < 20; i++) {
        fd = wire_connect(spec, 1, &err);
        ck_assert_msg(fd >= 0, "%s", err.msg);
        port = accepted_port(lfd);
        ck_assert_int_ge(port, WIRE_RESERVED_FIRST);
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

START_TEST(every_reserved_port_taken_still_connects)
{
    tbm_err_t err = { { 0 } };
    struct sockaddr_in sa = { .sin_family = AF_INET };
    int held[WIRE_RESERVED_PORTS], lfd, fd, i, n = 0;
    char spec[64];

    if (geteuid() != 0)
        return;
    for (i = 0; i < WIRE_RESERVED_PORTS; i++) {   /* the wildcard address on each: no other bind may take it */
        held[n] = socket(AF_INET, SOCK_STREAM, 0);
        sa.sin_port = htons((uint16_t)(WIRE_RESERVED_FIRST + i));
        if (held[n] >= 0 && bind(held[n], (struct sockaddr *)&sa, sizeof(sa)) == 0)
            n++;
        else if (held[n] >= 0)
            close(held[n]);
    }
    lfd = listener(spec, sizeof(spec));
    fd = wire_connect(spec, 1, &err);
    ck_assert_msg(fd >= 0, "%s", err.msg);
    ck_assert_int_ge(accepted_port(lfd), 1024);
    close(fd);
    close(lfd);
    for (i = 0; i < n; i++)
        close(held[i]);
}
END_TEST

static Suite *wire_suite(void)
{
    Suite *s = suite_create("wire");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, roots_connection_leaves_from_a_reserved_port);
    tcase_add_test(tc, a_users_connection_leaves_from_any_port);
    tcase_add_test(tc, every_reserved_port_taken_still_connects);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(wire_suite)
