/* test_agent_pool.c: macnoded's servers (agent_pool.c) with a stand-in for agent_serve: a connection goes to
 * a server with its socket, the bytes after its hello, its uid, peer and times; an idle server takes the next
 * connection (the same process); a busy one does not; the limits refuse what is over them; idle servers beyond
 * the kept ones end; a server that died or was told to end is replaced; a server ends after its quota. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_pool.h"
#include "clock.h"
#include "tbm_check.h"

static agent_pool_t *pool;

/* The stand-in server: one line saying who serves what it was handed, then it stays busy until the client
 * closes its end. */
static void stand_in(void *ctx, agent_conn_t *c)
{
    char line[640], b[160];
    size_t n = tbm_fdec_pending(&c->dec);
    int len;

    (void)ctx;
    if (c->granted)
        snprintf(b, sizeof(b), " granted %u.%u %s %u %.8s", c->grant.job, c->grant.step, c->grant.node,
                 c->grant.uid, c->grant_sum);
    else
        snprintf(b, sizeof(b), " not granted");
    len = snprintf(line, sizeof(line), "%ld %u [%s] %lld %lld %lld%s %zu:%.*s\n", (long)getpid(), (unsigned)c->uid,
                   c->peer, c->accepted, c->checking, c->admitted, b, n, (int)n, (char *)c->dec.buf + c->dec.start);
    if (len < 0 || (size_t)len >= sizeof(line))
        _exit(4);
    if (write(c->fd, line, (size_t)len) != len)
        _exit(3);
    while (read(c->fd, b, sizeof(b)) > 0)
        ;
    tbm_fdec_free(&c->dec);
}

/* The clients' ends, which a server forked while they are open must not keep (as macnoded's new servers
 * close the connections waiting at the gate). */
static int ends[64];   /* indexed by the descriptor */

static void in_new(void *ctx)
{
    unsigned i;

    (void)ctx;
    for (i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
        if (ends[i] > 0)
            close(ends[i]);
}

static void reap(void)
{
    pid_t pid;

    while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
        agent_pool_reaped(pool, pid);
}

static void new_pool_reserving(int max, int per_uid, int idle_keep, int conns, int root_reserve)
{
    const agent_pool_limits_t lim = { max, per_uid, idle_keep, 0, conns, root_reserve };
    tbm_err_t err = { { 0 } };

    pool = agent_pool_new(&lim, stand_in, in_new, NULL, &err);
    ck_assert_ptr_nonnull(pool);
}

static void new_pool(int max, int per_uid, int idle_keep, int conns)
{
    new_pool_reserving(max, per_uid, idle_keep, conns, 0);
}

typedef struct client {
    int fd;           /* the client's end */
    long pid;         /* the server that took it */
    char line[512];
} client_t;

/* Hand the pool a connection of uid with `after` read behind its hello (uid 501's hello was a job grant). The
 * pool's answer; when 0, the server's line is read into cl. */
static int connect_as(unsigned uid, const char *after, client_t *cl, char *why, size_t len)
{
    agent_conn_t c = { .uid = uid, .accepted = 11, .checking = 22, .admitted = 33, .by_grant = uid == 501,
                       .granted = uid == 501,
                       .grant = { .job = 7, .step = 1, .node = "mac01", .uid = uid, .gid = 20, .expires = 99 } };
    tbm_err_t err = { { 0 } };
    int sp[2], rc;
    ssize_t n;
    size_t got = 0;

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
    snprintf(c.peer, sizeof(c.peer), "10.0.0.1:%u uid %u", 5000 + uid, uid);
    snprintf(c.grant_sum, sizeof(c.grant_sum), "%s%s", "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
             "0f1e2d3c4b5a69788796a5b4c3d2e1f0");
    c.fd = sp[1];
    ck_assert_int_lt(sp[0], 64);
    ends[sp[0]] = sp[0];
    ck_assert_int_eq(tbm_fdec_init(&c.dec, TBM_HELLO_MAX, &err), 0);
    ck_assert_uint_eq(tbm_fdec_feed(&c.dec, after, strlen(after)), strlen(after));
    rc = agent_pool_give(pool, &c, why, len);
    close(sp[1]);
    tbm_fdec_free(&c.dec);
    memset(cl, 0, sizeof(*cl));
    cl->fd = sp[0];
    if (rc != 0) {
        ends[sp[0]] = 0;
        close(sp[0]);
        cl->fd = -1;
        return rc;
    }
    while (got == 0 || cl->line[got - 1] != '\n') {
        n = read(sp[0], cl->line + got, sizeof(cl->line) - 1 - got);
        ck_assert_int_gt(n, 0);
        got += (size_t)n;
    }
    cl->line[got] = '\0';
    cl->pid = strtol(cl->line, NULL, 10);
    return 0;
}

/* Read until the other end closes; 0, or -1 when nothing ended within 10 s. */
static int read_until_eof(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    char b[64];

    while (poll(&p, 1, 10000) == 1)
        if (read(fd, b, sizeof(b)) <= 0)
            return 0;
    return -1;
}

static void hang_up(client_t *cl)
{
    ends[cl->fd] = 0;
    close(cl->fd);
    cl->fd = -1;
}

/* Until the pool has `want` idle servers (reaping what ended); fails after 10 s. */
static void until_idle(int want)
{
    long long end = tbm_now_ms() + 10000;
    int idle = -1;

    while (tbm_now_ms() < end) {
        reap();
        agent_pool_count(pool, &idle);
        if (idle == want)
            return;
        usleep(2000);
    }
    ck_abort_msg("%d idle servers, want %d", idle, want);
}

/* Until pid has ended (reaped); fails after 10 s. */
static void until_gone(long pid)
{
    long long end = tbm_now_ms() + 10000;

    while (tbm_now_ms() < end) {
        reap();
        if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
            return;
        usleep(2000);
    }
    ck_abort_msg("server %ld did not end", pid);
}

START_TEST(a_connection_reaches_its_server_whole)
{
    client_t a;
    char why[200], want[256];
    long pid;

    new_pool(8, 4, 8, 100);
    ck_assert_int_eq(connect_as(501, "{\"type\":\"spawn\"}", &a, why, sizeof(why)), 0);
    ck_assert_int_ne(a.pid, getpid());
    snprintf(want, sizeof(want),
             "%ld 501 [10.0.0.1:5501 uid 501] 11 22 33 granted 7.1 mac01 501 0f1e2d3c 16:{\"type\":\"spawn\"}\n",
             a.pid);
    ck_assert_str_eq(a.line, want);
    ck_assert_int_eq(agent_pool_count(pool, NULL), 1);
    /* the server's end closes once it has served it: it kept no other copy of the socket (the fork gave it
     * one), else this read would never end */
    ck_assert_int_eq(shutdown(a.fd, SHUT_WR), 0);
    ck_assert_int_eq(read_until_eof(a.fd), 0);
    hang_up(&a);
    until_idle(1);
    /* nothing after the hello; the same server keeps nothing of the grant before */
    pid = a.pid;
    ck_assert_int_eq(connect_as(0, "", &a, why, sizeof(why)), 0);
    ck_assert_int_eq(a.pid, pid);
    ck_assert_ptr_nonnull(strstr(a.line, " 0 [10.0.0.1:5000 uid 0] 11 22 33 not granted 0:\n"));
    hang_up(&a);
    agent_pool_free(pool);
}
END_TEST

START_TEST(an_idle_server_takes_the_next_and_a_busy_one_does_not)
{
    client_t a, b, c;
    char why[200];
    int idle;

    new_pool(8, 4, 8, 100);
    ck_assert_int_eq(connect_as(501, "x", &a, why, sizeof(why)), 0);
    hang_up(&a);
    until_idle(1);
    ck_assert_int_eq(connect_as(502, "y", &b, why, sizeof(why)), 0);
    ck_assert_int_eq(b.pid, a.pid);                 /* the same process, another user's connection */
    ck_assert_ptr_nonnull(strstr(b.line, " 502 [10.0.0.1:5502 uid 502] "));
    ck_assert_int_eq(connect_as(501, "z", &c, why, sizeof(why)), 0);
    ck_assert_int_ne(c.pid, b.pid);                 /* b's server is busy: a new one */
    ck_assert_int_eq(agent_pool_count(pool, &idle), 2);
    ck_assert_int_eq(idle, 0);
    hang_up(&b), hang_up(&c);
    until_idle(2);
    agent_pool_free(pool);
}
END_TEST

START_TEST(limits_count_the_busy_only)
{
    client_t a, b, c, d;
    char why[200];

    new_pool(2, 1, 8, 100);
    ck_assert_int_eq(connect_as(501, "", &a, why, sizeof(why)), 0);
    ck_assert_int_eq(connect_as(501, "", &b, why, sizeof(why)), -1);
    ck_assert_str_eq(why, "this user has all the connections to the agent a user may have");
    ck_assert_int_eq(connect_as(0, "", &c, why, sizeof(why)), 0);   /* root has no per-user limit */
    ck_assert_int_eq(connect_as(502, "", &d, why, sizeof(why)), -1);
    ck_assert_str_eq(why, "the agent is serving all the connections it may");
    hang_up(&a);
    until_idle(1);
    ck_assert_int_eq(connect_as(501, "", &b, why, sizeof(why)), 0);  /* a's server is free again: b gets it */
    ck_assert_int_eq(b.pid, a.pid);
    hang_up(&b), hang_up(&c);
    until_idle(2);
    agent_pool_free(pool);
}
END_TEST

/* Users together never take the connections kept for root: its health check, cleanup and usage get in
 * however many users hold theirs idle. */
START_TEST(users_leave_roots_reserve)
{
    client_t a, b, c, r1, r2, r3;
    char why[200];

    new_pool_reserving(4, 2, 8, 100, 2);
    ck_assert_int_eq(connect_as(501, "", &a, why, sizeof(why)), 0);
    ck_assert_int_eq(connect_as(502, "", &b, why, sizeof(why)), 0);
    ck_assert_int_eq(connect_as(503, "", &c, why, sizeof(why)), -1);   /* under its own limit, but users hold 2 */
    ck_assert_str_eq(why, "the agent is serving all the connections users may have (the last 2 are kept for root's "
                          "requests)");
    ck_assert_int_eq(connect_as(0, "", &r1, why, sizeof(why)), 0);
    ck_assert_int_eq(connect_as(0, "", &r2, why, sizeof(why)), 0);
    ck_assert_int_eq(connect_as(0, "", &r3, why, sizeof(why)), -1);    /* root too has max at most */
    ck_assert_str_eq(why, "the agent is serving all the connections it may");
    hang_up(&a), hang_up(&b), hang_up(&r1), hang_up(&r2);
    until_idle(4);
    agent_pool_free(pool);
}
END_TEST

START_TEST(idle_servers_beyond_the_kept_ones_end)
{
    client_t cl[4];
    char why[200];
    long long end;
    int i, idle, gone;

    new_pool(8, 8, 1, 100);
    for (i = 0; i < 4; i++)
        ck_assert_int_eq(connect_as(501, "", &cl[i], why, sizeof(why)), 0);
    for (i = 0; i < 4; i++)
        hang_up(&cl[i]);
    until_idle(4);
    agent_pool_tick(pool, tbm_now_ms() + 5000);   /* idle_ms 0: all but the one kept go */
    ck_assert_int_eq(agent_pool_count(pool, &idle), 1);
    ck_assert_int_eq(idle, 1);
    for (end = tbm_now_ms() + 10000, gone = 0; gone < 3 && tbm_now_ms() < end; usleep(2000)) {
        reap();
        for (i = gone = 0; i < 4; i++)
            gone += kill((pid_t)cl[i].pid, 0) < 0 && errno == ESRCH;
    }
    ck_assert_int_eq(gone, 3);                    /* three servers ended; the one kept still runs */
    ck_assert_int_eq(agent_pool_count(pool, NULL), 1);
    agent_pool_free(pool);
}
END_TEST

START_TEST(a_dead_or_stopped_server_is_replaced)
{
    client_t a, b, c;
    char why[200];
    siginfo_t dead;

    new_pool(8, 8, 8, 100);
    ck_assert_int_eq(connect_as(501, "", &a, why, sizeof(why)), 0);
    hang_up(&a);
    until_idle(1);
    kill((pid_t)a.pid, SIGKILL);                  /* dead, not reaped yet: the handoff fails, a new one serves */
    ck_assert_int_eq(waitid(P_PID, (id_t)a.pid, &dead, WEXITED | WNOWAIT), 0);   /* dead, left for reap() */
    ck_assert_int_eq(connect_as(501, "again", &b, why, sizeof(why)), 0);
    ck_assert_int_ne(b.pid, a.pid);
    ck_assert_ptr_nonnull(strstr(b.line, " 5:again\n"));
    hang_up(&b);
    until_idle(1);
    kill((pid_t)b.pid, SIGTERM);                  /* an idle server told to end, ends */
    until_gone(b.pid);
    ck_assert_int_eq(connect_as(501, "", &c, why, sizeof(why)), 0);
    ck_assert_int_ne(c.pid, b.pid);
    hang_up(&c);
    until_idle(1);
    agent_pool_free(pool);
}
END_TEST

START_TEST(a_server_ends_after_its_quota_and_at_the_agents_stop)
{
    client_t a, b, c;
    char why[200];
    tbm_err_t err = { { 0 } };

    new_pool(8, 8, 8, 2);
    ck_assert_int_eq(connect_as(501, "", &a, why, sizeof(why)), 0);
    hang_up(&a);
    until_idle(1);
    ck_assert_int_eq(connect_as(501, "", &b, why, sizeof(why)), 0);
    ck_assert_int_eq(b.pid, a.pid);
    hang_up(&b);
    until_gone(b.pid);                            /* its second connection was its last */
    ck_assert_int_eq(connect_as(501, "", &c, why, sizeof(why)), 0);
    ck_assert_int_ne(c.pid, b.pid);
    agent_pool_free(pool);                        /* the agent stops while c is served: c goes on */
    pool = agent_pool_new(&(agent_pool_limits_t){ 1, 1, 1, 0, 1, 0 }, stand_in, in_new, NULL, &err);
    ck_assert_int_eq(kill((pid_t)c.pid, 0), 0);
    ck_assert_int_eq(write(c.fd, "more", 4), 4);
    hang_up(&c);
    until_gone(c.pid);                            /* ... and its server ends after it */
    agent_pool_free(pool);
}
END_TEST

static Suite *agent_pool_suite(void)
{
    Suite *s = suite_create("agent_pool");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_connection_reaches_its_server_whole);
    tcase_add_test(tc, an_idle_server_takes_the_next_and_a_busy_one_does_not);
    tcase_add_test(tc, limits_count_the_busy_only);
    tcase_add_test(tc, users_leave_roots_reserve);
    tcase_add_test(tc, idle_servers_beyond_the_kept_ones_end);
    tcase_add_test(tc, a_dead_or_stopped_server_is_replaced);
    tcase_add_test(tc, a_server_ends_after_its_quota_and_at_the_agents_stop);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(agent_pool_suite)
