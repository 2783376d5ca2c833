/* httpd.c: the small HTTP/1.x server of the metrics endpoints: one request per connection, bounded, with
 * deadlines, closing the connection that stood still the longest under a flood (see httpd.h). */
#include "config.h"
#include "httpd.h"
#include "clock.h"
#include "httpreq.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define DEFAULT_TYPE "text/plain; charset=utf-8"
#define ACCEPT_PAUSE_MS 100   /* out of file descriptors: accept again after this long */

typedef enum conn_state {
    CONN_READ = 0,    /* reading the request's head */
    CONN_WRITE,       /* sending the reply */
    CONN_LINGER,      /* reply sent, our side shut: reading away what the client still sends */
} conn_state_t;

typedef struct conn {
    int fd;
    conn_state_t state;
    char peer[64];
    long long since, moved, linger_until;
    char in[TBM_HTTP_HEAD_MAX];
    size_t in_len;
    char *out;
    size_t out_len, out_off;
} conn_t;

/* The noisy events, logged under the rate limit. */
enum { NOISE_REFUSED, NOISE_TIMEOUT, NOISE_SHED, NOISE_KINDS };

struct httpd {
    httpd_opts_t o;
    int lfd, port, n;
    conn_t *conn;
    struct pollfd *pfd;
    long long *moved;                    /* scratch for httpd_victim */
    httpd_stats_t st;
    long long accept_paused_until;
    long long log_since;                 /* start of the log interval */
    unsigned logged[NOISE_KINDS], left_out[NOISE_KINDS];
};

static void say(httpd_t *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(httpd_t *h, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (h->o.log)
        h->o.log(h->o.log_arg, line);
    else
        fprintf(stderr, "%s\n", line);
}

/* The summary of the interval that ended, when something was left out; then a new interval. */
static void log_tick(httpd_t *h, long long now)
{
    static const char *const names[NOISE_KINDS] = { "requests refused", "connections timed out",
                                                    "connections closed to make room" };
    char line[256] = "";
    size_t used = 0;
    int k;

    if (now - h->log_since < HTTPD_LOG_INTERVAL_MS)
        return;
    for (k = 0; k < NOISE_KINDS; k++)
        if (h->left_out[k])
            used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%u %s", used ? ", " : "", h->left_out[k],
                                     names[k]);
    if (used)
        say(h, "in the last %d s, also: %s (not logged one by one)", HTTPD_LOG_INTERVAL_MS / 1000, line);
    memset(h->logged, 0, sizeof(h->logged));
    memset(h->left_out, 0, sizeof(h->left_out));
    h->log_since = now;
}

static void noisy(httpd_t *h, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void noisy(httpd_t *h, int kind, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    if (h->logged[kind] >= HTTPD_LOG_BURST) {
        h->left_out[kind]++;
        return;
    }
    h->logged[kind]++;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    say(h, "%s", line);
}

int httpd_victim(const long long *moved, int n, int max)
{
    int i, oldest = 0;

    if (n < max || n <= 0)
        return -1;
    for (i = 1; i < n; i++)
        if (moved[i] < moved[oldest])
            oldest = i;
    return oldest;
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
}

httpd_t *httpd_new(int lfd, const httpd_opts_t *o, tbm_err_t *err)
{
    httpd_t *h = calloc(1, sizeof(*h));
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);

    if (h) {
        h->o = *o;
        if (h->o.max_conns <= 0)
            h->o.max_conns = HTTPD_CONNS_DEFAULT;
        if (h->o.timeout_ms <= 0)
            h->o.timeout_ms = HTTPD_TIMEOUT_DEFAULT;
        h->conn = calloc((size_t)h->o.max_conns, sizeof(*h->conn));
        h->pfd = calloc((size_t)h->o.max_conns + 1, sizeof(*h->pfd));
        h->moved = calloc((size_t)h->o.max_conns, sizeof(*h->moved));
    }
    if (!h || !h->conn || !h->pfd || !h->moved) {
        if (h) {
            free(h->conn);
            free(h->pfd);
            free(h->moved);
        }
        free(h);
        close(lfd);
        return tbm_errprintf(err, "out of memory for the HTTP server"), NULL;
    }
    h->lfd = lfd;
    set_nonblock(lfd);
    if (getsockname(lfd, (struct sockaddr *)&ss, &sl) == 0)
        h->port = ss.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&ss)->sin_port)
                  : ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port) : 0;
    h->log_since = tbm_now_ms();
    return h;
}

httpd_t *httpd_open(const char *spec, int default_port, const httpd_opts_t *o, tbm_err_t *err)
{
    int lfd = wire_listen(spec, default_port, err);

    return lfd < 0 ? NULL : httpd_new(lfd, o, err);
}

int httpd_port(const httpd_t *h)
{
    return h->port;
}

int httpd_conns(const httpd_t *h)
{
    return h->n;
}

void httpd_stats(const httpd_t *h, httpd_stats_t *st)
{
    *st = h->st;
}

/* Close connection i; the last one takes its place. */
static void drop(httpd_t *h, int i)
{
    close(h->conn[i].fd);
    free(h->conn[i].out);
    h->n--;
    if (i != h->n)
        h->conn[i] = h->conn[h->n];
}

/* Send what is left of c's reply; at its end, shut our side and linger. 0, or -1 when c is to be closed. */
static int send_some(httpd_t *h, conn_t *c, long long now)
{
    ssize_t n;

    while (c->out_off < c->out_len) {
        n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0)
            return -1;
        c->out_off += (size_t)n;
        c->moved = now;
    }
    h->st.served++;
    free(c->out);
    c->out = NULL;
    shutdown(c->fd, SHUT_WR);
    c->state = CONN_LINGER;
    c->linger_until = now + HTTPD_LINGER_MS;
    return 0;
}

/* The reply's head and (unless head_only) body as c's output. 0, or -1 when out of memory. */
static int put_reply(conn_t *c, int status, const char *type, const char *extra, const char *body, size_t len,
                     int head_only)
{
    char head[512];
    int hl = tbm_http_reply_head(status, type, len, extra, head, sizeof(head));

    if (hl < 0)
        hl = tbm_http_reply_head(500, DEFAULT_TYPE, 0, NULL, head, sizeof(head)), len = 0;
    if (head_only)
        len = 0;
    c->out = malloc((size_t)hl + len);
    if (!c->out)
        return -1;
    memcpy(c->out, head, (size_t)hl);
    if (len)
        memcpy(c->out + hl, body, len);
    c->out_len = (size_t)hl + len;
    c->out_off = 0;
    c->state = CONN_WRITE;
    return 0;
}

/* The server's own answer (garbage, 405, 404 without a body): one line saying why. */
static int put_error(conn_t *c, int status, const char *why, const char *extra, int head_only)
{
    char body[TBM_ERR_MAX + 64];
    int n = snprintf(body, sizeof(body), "%d %s: %s\n", status, tbm_http_reason(status), why);

    return put_reply(c, status, DEFAULT_TYPE, extra, body, n < 0 ? 0 : (size_t)n < sizeof(body) ? (size_t)n
                     : sizeof(body) - 1, head_only);
}

/* A whole request: the handler's reply, or the server's 405. */
static int answer(httpd_t *h, conn_t *c, const tbm_http_request_t *req)
{
    httpd_reply_t r = { 0 };
    char why[TBM_HTTP_TARGET_MAX + 64];
    int rc;

    if (strcmp(req->method, "GET") && strcmp(req->method, "HEAD")) {
        h->st.refused++;
        snprintf(why, sizeof(why), "%s is not served here; use GET", req->method);
        noisy(h, NOISE_REFUSED, "refused a request from %s: 405 %s", c->peer, why);
        return put_error(c, 405, why, "Allow: GET, HEAD\r\n", 0);
    }
    h->o.handler(h->o.arg, req->path, &r);
    if (!r.status)
        r.status = r.body ? 200 : 404;
    if (r.status == 404 && !r.body) {
        snprintf(why, sizeof(why), "nothing at %s", req->path);
        rc = put_error(c, 404, why, NULL, req->head_only);
    } else {
        rc = put_reply(c, r.status, r.content_type ? r.content_type : DEFAULT_TYPE, NULL, r.body ? r.body : "",
                       r.body ? r.len : 0, req->head_only);
    }
    free(r.body);
    return rc;
}

/* Read what c's peer sent; answer once the head is whole or refused. 0, or -1 when c is to be closed. */
static int read_some(httpd_t *h, conn_t *c, long long now)
{
    tbm_http_request_t req;
    tbm_err_t err = { { 0 } };
    ssize_t n;
    int rc, status, ended = 0;

    while (c->in_len < sizeof(c->in)) {
        n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n < 0)
            return -1;
        if (n == 0) {   /* the client closed its side: what it sent may still be a whole request */
            ended = 1;
            break;
        }
        c->in_len += (size_t)n;
        c->moved = now;
    }
    rc = tbm_http_request_parse(c->in, c->in_len, &req, &status, &err);
    if (rc == 0)
        return ended ? -1 : 0;   /* closed before its request was whole: nobody to answer */
    if (rc < 0) {
        h->st.refused++;
        noisy(h, NOISE_REFUSED, "refused a request from %s: %d %s", c->peer, status, err.msg);
        rc = put_error(c, status, err.msg, NULL, 0);
    } else {
        rc = answer(h, c, &req);
    }
    return rc < 0 ? -1 : send_some(h, c, now);
}

/* Read away what the client still sends after the reply; -1 once it has closed (or failed). */
static int linger(conn_t *c)
{
    char sink[4096];
    ssize_t n;

    while ((n = recv(c->fd, sink, sizeof(sink), 0)) > 0)
        ;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
}

static void accept_some(httpd_t *h, long long now)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    int k, fd, v, i;

    for (k = 0; k < HTTPD_ACCEPT_BATCH; k++) {
        sl = sizeof(ss);
        fd = accept(h->lfd, (struct sockaddr *)&ss, &sl);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                noisy(h, NOISE_SHED, "cannot take connections for now: %s", strerror(errno));
                h->accept_paused_until = now + ACCEPT_PAUSE_MS;
            }
            return;
        }
        set_nonblock(fd);
        for (i = 0; i < h->n; i++)
            h->moved[i] = h->conn[i].moved;
        if ((v = httpd_victim(h->moved, h->n, h->o.max_conns)) >= 0) {
            h->st.shed++;
            noisy(h, NOISE_SHED, "closed the connection from %s to make room (%d open, the most)", h->conn[v].peer,
                  h->n);
            drop(h, v);
        }
        memset(&h->conn[h->n], 0, sizeof(h->conn[h->n]));
        h->conn[h->n].fd = fd;
        h->conn[h->n].since = h->conn[h->n].moved = now;
        wire_peer_name((struct sockaddr *)&ss, sl, h->conn[h->n].peer, sizeof(h->conn[h->n].peer));
        h->n++;
    }
}

/* The time left to the nearest deadline (ms), at most timeout_ms. */
static int next_wait(const httpd_t *h, int timeout_ms, long long now)
{
    long long wait = timeout_ms, left;
    int i;

    for (i = 0; i < h->n; i++) {
        left = h->conn[i].state == CONN_LINGER ? h->conn[i].linger_until - now
                                                : h->conn[i].since + h->o.timeout_ms - now;
        if (left < wait)
            wait = left < 0 ? 0 : left;
    }
    if (h->accept_paused_until > now && h->accept_paused_until - now < wait)
        wait = h->accept_paused_until - now;
    return wait < 0 ? -1 : (int)wait;
}

/* Close what passed its deadline. */
static void expire(httpd_t *h, long long now)
{
    int i = 0;

    while (i < h->n) {
        conn_t *c = &h->conn[i];
        if (c->state == CONN_LINGER ? now >= c->linger_until : now - c->since >= h->o.timeout_ms) {
            if (c->state != CONN_LINGER) {
                h->st.timed_out++;
                noisy(h, NOISE_TIMEOUT, "closed the connection from %s: no %s within %d ms", c->peer,
                      c->state == CONN_READ ? "whole request" : "reply taken", h->o.timeout_ms);
            }
            drop(h, i);
            continue;
        }
        i++;
    }
}

void httpd_turn(httpd_t *h, int timeout_ms)
{
    long long now = tbm_now_ms();
    int i, n, rc, accepting = h->accept_paused_until <= now;

    for (i = 0; i < h->n; i++) {
        h->pfd[i].fd = h->conn[i].fd;
        h->pfd[i].events = h->conn[i].state == CONN_WRITE ? POLLOUT : POLLIN;
        h->pfd[i].revents = 0;
    }
    h->pfd[h->n] = (struct pollfd){ .fd = accepting ? h->lfd : -1, .events = POLLIN };
    n = h->n;
    if (poll(h->pfd, (nfds_t)n + 1, next_wait(h, timeout_ms, now)) < 0) {
        if (errno != EINTR)
            say(h, "poll: %s", strerror(errno));
        return;
    }
    now = tbm_now_ms();
    /* from the last, so that closing one (the last takes its place) leaves those still to see in place */
    for (i = n - 1; i >= 0; i--) {
        conn_t *c = &h->conn[i];
        if (!h->pfd[i].revents)
            continue;
        rc = c->state == CONN_READ ? read_some(h, c, now) : c->state == CONN_WRITE ? send_some(h, c, now) : linger(c);
        if (rc < 0)
            drop(h, i);
    }
    expire(h, now);
    if (h->pfd[n].revents & POLLIN)
        accept_some(h, now);
    log_tick(h, now);
}

void httpd_serve(httpd_t *h, volatile sig_atomic_t *stop)
{
    while (!*stop)
        httpd_turn(h, 1000);
}

void httpd_close(httpd_t *h)
{
    if (!h)
        return;
    while (h->n > 0)
        drop(h, h->n - 1);
    close(h->lfd);
    free(h->conn);
    free(h->pfd);
    free(h->moved);
    free(h);
}
