/* test_httpd.c: common/httpd.c on 127.0.0.1 (a port the system picks), served by a thread: GET, HEAD, 404,
 * 405 and garbage answered; a request sent in pieces, or followed by the client's half-close; a flood of idle
 * connections that ages out while a real request is served; the time limit; the log's rate limit; the choice
 * of the connection to close. */
#include "tbm_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "clock.h"
#include "httpd.h"
#include "wire.h"

typedef struct server {
    httpd_t *h;
    pthread_t thread;
    volatile sig_atomic_t stop;
    int port;
    int log_lines;
    char last_log[512];
    httpd_stats_t st;
} server_t;

static void handler(void *arg, const char *path, httpd_reply_t *r)
{
    (void)arg;
    if (!strcmp(path, "/metrics")) {
        r->body = strdup("tbmesh_up 1\n");
        r->len = strlen(r->body);
        r->content_type = "text/plain; version=0.0.4; charset=utf-8";
    } else if (!strcmp(path, "/teapot")) {
        r->status = 503;
        r->body = strdup("busy\n");
        r->len = 5;
    }
}

static void log_line(void *arg, const char *line)
{
    server_t *s = arg;

    s->log_lines++;
    snprintf(s->last_log, sizeof(s->last_log), "%s", line);
}

static void *serve(void *arg)
{
    server_t *s = arg;

    while (!s->stop)
        httpd_turn(s->h, 20);
    return NULL;
}

static void start(server_t *s, int max_conns, int timeout_ms)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    httpd_opts_t o = { .handler = handler, .log = log_line, .log_arg = s, .max_conns = max_conns,
                       .timeout_ms = timeout_ms };
    tbm_err_t err = { { 0 } };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(s, 0, sizeof(*s));
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(listen(fd, 256), 0);
    s->h = httpd_new(fd, &o, &err);
    ck_assert_msg(s->h != NULL, "%s", err.msg);
    s->port = httpd_port(s->h);
    ck_assert_int_gt(s->port, 0);
    ck_assert_int_eq(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void stop(server_t *s)
{
    s->stop = 1;
    pthread_join(s->thread, NULL);
    httpd_stats(s->h, &s->st);
    httpd_close(s->h);
}

static int dial(const server_t *s)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)s->port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct timeval tv = { 5, 0 };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    ck_assert_int_ge(fd, 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

/* Everything the server sends on fd until it closes (5 s at most), into buf. */
static void read_all(int fd, char *buf, size_t size)
{
    size_t used = 0;
    ssize_t n;

    while (used + 1 < size && (n = recv(fd, buf + used, size - 1 - used, 0)) > 0)
        used += (size_t)n;
    buf[used] = '\0';
    close(fd);
}

/* The whole answer to `req`. */
static void ask(const server_t *s, const char *req, char *buf, size_t size)
{
    int fd = dial(s);

    ck_assert_int_eq(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    read_all(fd, buf, size);
}

#define HAS(buf, text) ck_assert_msg(strstr(buf, text) != NULL, "[%s] has no [%s]", buf, text)

START_TEST(requests_are_answered)
{
    server_t s;
    char buf[4096];

    start(&s, 0, 0);
    ask(&s, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n", buf, sizeof(buf));
    HAS(buf, "HTTP/1.1 200 OK\r\n");
    HAS(buf, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: 12\r\n");
    HAS(buf, "Connection: close\r\n\r\ntbmesh_up 1\n");
    ask(&s, "HEAD /metrics?x HTTP/1.0\r\n\r\n", buf, sizeof(buf));
    HAS(buf, "Content-Length: 12\r\n");
    ck_assert_ptr_null(strstr(buf, "tbmesh_up"));
    ask(&s, "GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n", buf, sizeof(buf));
    HAS(buf, "HTTP/1.1 404 Not Found\r\n");
    HAS(buf, "404 Not Found: nothing at /nothing\n");
    ask(&s, "GET /teapot HTTP/1.1\r\nHost: t\r\n\r\n", buf, sizeof(buf));
    HAS(buf, "HTTP/1.1 503 Service Unavailable\r\n");
    ask(&s, "DELETE /metrics HTTP/1.1\r\nHost: t\r\n\r\n", buf, sizeof(buf));
    HAS(buf, "HTTP/1.1 405 Method Not Allowed\r\n");
    HAS(buf, "Allow: GET, HEAD\r\n");
    HAS(buf, "DELETE is not served here; use GET");
    ask(&s, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", buf, sizeof(buf));
    HAS(buf, "HTTP/1.1 400 Bad Request\r\n");
    HAS(buf, "starts with byte 0x16");
    ask(&s, "GET / HTTP/1.1\r\n\r\n", buf, sizeof(buf));
    HAS(buf, "needs one Host field");
    ask(&s, "GET / HTTP/2.0\r\n\r\n", buf, sizeof(buf));
    HAS(buf, "HTTP/1.1 505 HTTP Version Not Supported\r\n");
    stop(&s);
    ck_assert_uint_eq(s.st.served, 8);
    ck_assert_uint_eq(s.st.refused, 4);
    ck_assert_int_eq(s.log_lines, 3);   /* the first 3 refusals in full; the 4th left for the summary */
}
END_TEST

START_TEST(pieces_and_half_close)
{
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n";
    server_t s;
    char buf[4096];
    size_t i;
    int fd;

    start(&s, 0, 0);
    fd = dial(&s);
    for (i = 0; i < sizeof(req) - 1; i++) {
        ck_assert_int_eq(send(fd, req + i, 1, MSG_NOSIGNAL), 1);
        usleep(1000);
    }
    read_all(fd, buf, sizeof(buf));
    HAS(buf, "tbmesh_up 1\n");
    fd = dial(&s);   /* the request, then the client's half-close at once */
    ck_assert_int_eq(send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(req) - 1);
    shutdown(fd, SHUT_WR);
    read_all(fd, buf, sizeof(buf));
    HAS(buf, "tbmesh_up 1\n");
    fd = dial(&s);   /* half a request, then the close: no answer, no crash */
    ck_assert_int_eq(send(fd, req, 10, MSG_NOSIGNAL), 10);
    shutdown(fd, SHUT_WR);
    read_all(fd, buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    stop(&s);
    ck_assert_uint_eq(s.st.served, 2);
}
END_TEST

/* 8 connections at most: 40 idle ones, then a real request, which is served; the idle ones were closed to
 * make room, and at most 8 were ever open. */
START_TEST(idle_flood_ages_out)
{
    int idle[40], i, closed = 0;
    server_t s;
    char buf[4096];

    start(&s, 8, 10000);
    for (i = 0; i < 40; i++)
        idle[i] = dial(&s);
    usleep(100000);
    ask(&s, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n", buf, sizeof(buf));
    HAS(buf, "tbmesh_up 1\n");
    for (i = 0; i < 40; i++) {
        char c;
        struct timeval tv = { 0, 200000 };
        setsockopt(idle[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        closed += recv(idle[i], &c, 1, 0) == 0;
        close(idle[i]);
    }
    stop(&s);
    ck_assert_int_ge(closed, 32);
    ck_assert_uint_ge(s.st.shed, 32);
    ck_assert_uint_eq(s.st.served, 1);
}
END_TEST

START_TEST(time_limit_closes)
{
    long long t0 = tbm_now_ms();
    server_t s;
    char buf[64];
    int fd;

    start(&s, 0, 300);
    fd = dial(&s);
    ck_assert_int_eq(send(fd, "GET /", 5, MSG_NOSIGNAL), 5);
    read_all(fd, buf, sizeof(buf));   /* closed by the server without an answer */
    ck_assert_str_eq(buf, "");
    ck_assert_int_lt(tbm_now_ms() - t0, 4000);
    stop(&s);
    ck_assert_uint_eq(s.st.timed_out, 1);
    HAS(s.last_log, "no whole request within 300 ms");
}
END_TEST

START_TEST(victim_is_the_stillest)
{
    long long moved[4] = { 50, 10, 30, 10 };

    ck_assert_int_eq(httpd_victim(moved, 3, 4), -1);
    ck_assert_int_eq(httpd_victim(moved, 4, 4), 1);
    ck_assert_int_eq(httpd_victim(moved, 1, 1), 0);
    ck_assert_int_eq(httpd_victim(moved, 0, 0), -1);
}
END_TEST

START_TEST(listen_spec_is_checked)
{
    httpd_opts_t o = { .handler = handler };
    tbm_err_t err = { { 0 } };

    char host[64];
    int port;

    ck_assert_ptr_null(httpd_open("127.0.0.1:99999", 9432, &o, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "port must be a number"));
    /* the forms of a listening address: IPv4 or a name with or without a port, IPv6 in brackets or bare */
    ck_assert_int_eq(wire_split_addr("10.0.0.1:9431", 1, host, sizeof(host), &port, &err), 0);
    ck_assert_str_eq(host, "10.0.0.1");
    ck_assert_int_eq(port, 9431);
    ck_assert_int_eq(wire_split_addr("mgmt-mac01", 9431, host, sizeof(host), &port, &err), 0);
    ck_assert_str_eq(host, "mgmt-mac01");
    ck_assert_int_eq(port, 9431);
    ck_assert_int_eq(wire_split_addr("[fd00::5]:9500", 9431, host, sizeof(host), &port, &err), 0);
    ck_assert_str_eq(host, "fd00::5");
    ck_assert_int_eq(port, 9500);
    ck_assert_int_eq(wire_split_addr("[::1]", 9431, host, sizeof(host), &port, &err), 0);
    ck_assert_str_eq(host, "::1");
    ck_assert_int_eq(port, 9431);
    ck_assert_int_eq(wire_split_addr("fe80::1:2", 9431, host, sizeof(host), &port, &err), 0);
    ck_assert_str_eq(host, "fe80::1:2");   /* bare: every colon is the address's */
    ck_assert_int_eq(port, 9431);
    ck_assert_int_eq(wire_split_addr("[::1", 9431, host, sizeof(host), &port, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "must be [IPV6] or [IPV6]:PORT"));
    ck_assert_int_eq(wire_split_addr("[::1]9431", 9431, host, sizeof(host), &port, &err), -1);
    ck_assert_int_eq(wire_split_addr("[]:80", 9431, host, sizeof(host), &port, &err), -1);
    ck_assert_int_eq(wire_split_addr(":80", 9431, host, sizeof(host), &port, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "must be HOST, HOST:PORT or [IPV6]:PORT"));
    ck_assert_int_eq(wire_split_addr("[::1]:0", 9431, host, sizeof(host), &port, &err), -1);
}
END_TEST

static Suite *httpd_suite(void)
{
    Suite *s = suite_create("httpd");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, requests_are_answered);
    tcase_add_test(tc, pieces_and_half_close);
    tcase_add_test(tc, idle_flood_ages_out);
    tcase_add_test(tc, time_limit_closes);
    tcase_add_test(tc, victim_is_the_stillest);
    tcase_add_test(tc, listen_spec_is_checked);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(httpd_suite)
