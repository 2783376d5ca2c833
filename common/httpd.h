/* httpd.h: a small HTTP/1.x server for the metrics endpoints (`tbmesh metrics`; the agent's later): one
 * request per connection, answered with what a callback gives for its path, then closed. One thread, poll(),
 * non-blocking sockets; bounded everywhere: at most max_conns connections (a new one is always taken, and
 * the one that has stood still the longest is closed to make room, so a flood of idle connections ages
 * out while a client that sends its request at once is served), a request head of TBM_HTTP_HEAD_MAX bytes
 * (lib/httpreq.c reads it), timeout_ms from accept to the last byte of the reply. GET and HEAD are served;
 * other methods get 405, garbage 400 (or 414, 431, 505) with the reason in one line. What strangers can
 * cause by the thousand (refusals, timeouts, connections closed to make room) is logged under a rate limit:
 * the first few of each kind per minute in full, then one line with the counts. */
#ifndef TBM_COMMON_HTTPD_H
#define TBM_COMMON_HTTPD_H

#include <signal.h>
#include <stddef.h>

#include "errbuf.h"

#define HTTPD_CONNS_DEFAULT   64      /* open connections at most */
#define HTTPD_TIMEOUT_DEFAULT 10000   /* ms from accept to the reply's last byte */
#define HTTPD_ACCEPT_BATCH    32      /* connections accepted per turn before the open ones are served again */
#define HTTPD_LINGER_MS       1000    /* after the reply: how long what the client still sends is read away */
#define HTTPD_LOG_INTERVAL_MS 60000   /* one summary line per interval at most */
#define HTTPD_LOG_BURST       3       /* lines of each kind logged in full per interval */

/* The answer to one GET (or HEAD) of `path` (the request's path, its query left out), filled by the callback:
 * status 0 means 200 when a body is given and 404 when not; body is malloc'd and freed by the server (NULL:
 * empty, or the server's own "not found" for a 404); content_type NULL means text/plain. */
typedef struct httpd_reply {
    int status;
    const char *content_type;
    char *body;
    size_t len;
} httpd_reply_t;

typedef void (*httpd_handler_t)(void *arg, const char *path, httpd_reply_t *reply);

/* One line to log (no line end). */
typedef void (*httpd_log_t)(void *arg, const char *line);

typedef struct httpd_opts {
    httpd_handler_t handler;
    void *arg;
    httpd_log_t log;          /* NULL: stderr */
    void *log_arg;
    int max_conns;            /* 0: HTTPD_CONNS_DEFAULT */
    int timeout_ms;           /* 0: HTTPD_TIMEOUT_DEFAULT */
} httpd_opts_t;

/* What the server did since it started. */
typedef struct httpd_stats {
    unsigned long long served;      /* replies sent in full (any status) */
    unsigned long long refused;     /* requests answered 4xx/5xx by the server itself (garbage, 405) */
    unsigned long long timed_out;   /* connections closed at their time limit */
    unsigned long long shed;        /* connections closed to make room for a new one */
} httpd_stats_t;

typedef struct httpd httpd_t;

/* A server listening on spec (ADDR[:PORT], default_port when no port is given). NULL with err. */
httpd_t *httpd_open(const char *spec, int default_port, const httpd_opts_t *o, tbm_err_t *err);

/* The same over a listening socket the caller made (the server owns it from then on, and closes it). */
httpd_t *httpd_new(int lfd, const httpd_opts_t *o, tbm_err_t *err);

/* The port it listens on (0 when not known). */
int httpd_port(const httpd_t *h);

/* One turn: wait at most timeout_ms for a connection or a socket that is ready; accept, read, answer, close;
 * close what passed its time limit. Calls the handler for each whole GET or HEAD request. */
void httpd_turn(httpd_t *h, int timeout_ms);

/* Turns until *stop is set (a signal handler sets it: poll is woken by the signal). */
void httpd_serve(httpd_t *h, volatile sig_atomic_t *stop);

void httpd_stats(const httpd_t *h, httpd_stats_t *st);

/* Connections open now. */
int httpd_conns(const httpd_t *h);

/* Close every connection and the listening socket; free h (NULL is fine). */
void httpd_close(httpd_t *h);

/* Which connection to close so a new one fits, given when each last moved on (read or sent a byte, or was
 * accepted): the one that stood still the longest, or -1 when n < max. Apart so that it can be tested. */
int httpd_victim(const long long *moved, int n, int max);

#endif
