/* agent_gate.c: connections wait for their MUNGE hello in macnoded's main process, bounded and with a
 * deadline (see agent_gate.h). */
#include "config.h"
#include "agent_gate.h"
#include "agent_log.h"
#include "clock.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct agent_gate {
    const agent_conf_t *conf;
    int lfd;
    int n;                                   /* waiting connections */
    agent_conn_t conn[GATE_WAITING_MAX];
    agent_waiting_t wait[GATE_WAITING_MAX];
    struct pollfd pfd[GATE_WAITING_MAX + 1];
};

int agent_gate_victim(const agent_waiting_t *w, int n, const char *addr, int per_peer, int total)
{
    int i, mine = 0, oldest_mine = -1, oldest = -1;

    for (i = 0; i < n; i++) {
        if (oldest < 0 || w[i].since < w[oldest].since)
            oldest = i;
        if (strcmp(w[i].addr, addr) != 0)
            continue;
        mine++;
        if (oldest_mine < 0 || w[i].since < w[oldest_mine].since)
            oldest_mine = i;
    }
    if (mine >= per_peer)
        return oldest_mine;
    return n >= total ? oldest : -1;
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

agent_gate_t *agent_gate_new(const agent_conf_t *conf, int lfd, tbm_err_t *err)
{
    agent_gate_t *g = calloc(1, sizeof(*g));

    if (!g)
        return tbm_errprintf(err, "out of memory for the connection gate"), NULL;
    g->conf = conf;
    g->lfd = lfd;
    set_nonblock(lfd);
    return g;
}

/* Forget entry i (its socket closed, or handed on), keeping the others. */
static void remove_at(agent_gate_t *g, int i, int close_it)
{
    if (close_it) {
        close(g->conn[i].fd);
        tbm_fdec_free(&g->conn[i].dec);
    }
    g->n--;
    if (i != g->n) {
        g->conn[i] = g->conn[g->n];
        g->wait[i] = g->wait[g->n];
    }
}

/* Close entry i with an error frame for the client (when it still listens) and a line in the log, under
 * the rate limit. */
static void turn_away(agent_gate_t *g, int i, agent_noise_t kind, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void turn_away(agent_gate_t *g, int i, agent_noise_t kind, const char *code, const char *fmt, ...)
{
    char msg[TBM_ERR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    agent_log_noisy(kind, tbm_now_ms(), "%s: refused (%s): %s", g->conn[i].peer, code, msg);
    if (code)
        wire_send_error(g->conn[i].fd, code, msg);   /* non-blocking: a full socket just misses it */
    remove_at(g, i, 1);
}

/* A hello whose credential root made with a payload: a job grant made to be a hello (the SPANK plug-in greets
 * a task's connection with the task's grant), good on this node now. The connection is then the grant's
 * user's, never root's for root's own requests, and its spawn may use the grant without a second check
 * (agent_conn.c). 0, or -1 with err and *code. */
static int hello_grant(agent_gate_t *g, agent_conn_t *c, const char *text, const auth_cred_t *cred,
                       const char **code, tbm_err_t *err)
{
    *code = "grant";
    if (tbm_grant_hello(cred->payload, cred->len, cred->uid, g->conf->node, (int64_t)time(NULL), &c->grant,
                        err) < 0)
        return -1;
    if (agent_cred_digest(text, c->grant_sum) < 0) {
        *code = "internal";
        return tbm_errprintf(err, "cannot digest a credential (libcrypto)");
    }
    c->by_grant = c->granted = 1;
    c->uid = c->grant.uid;
    return 0;
}

/* Refuse a hello MUNGE says root made: logged whole, as the refusals of requests are (not a stranger's noise,
 * which is rate-limited). */
static void refuse_root(agent_gate_t *g, int i, const char *code, const char *msg)
{
    agent_log("%s: refused (%s): %s", g->conn[i].peer, code, msg);
    wire_send_error(g->conn[i].fd, code, msg);
    remove_at(g, i, 1);
}

/* The first frame came whole: a hello whose credential checks out goes on, anything else is refused. Its
 * credential is a user's (or root's) without a payload, or a job grant (hello_grant). */
static void hello(agent_gate_t *g, int i, const tbm_frame_t *f, void (*admit)(void *, agent_conn_t *),
                  void *ctx)
{
    agent_conn_t *c = &g->conn[i], handed;
    tbm_err_t err = { { 0 } };
    const char *code = "auth";
    auth_cred_t cred;
    tbm_msg_t m;

    if (tbm_msg_parse(f, &m, &err) < 0) {
        turn_away(g, i, AGENT_NOISE_REFUSED, "frame", "malformed first frame: %s", err.msg);
        return;
    }
    if (m.type != TBM_MSG_HELLO) {
        turn_away(g, i, AGENT_NOISE_REFUSED, "auth", "the first frame must be hello with a MUNGE credential, "
                  "not %s", tbm_msg_type_name(m.type));
        tbm_msg_free(&m);
        return;
    }
    c->checking = tbm_now_us();
    if (agent_cred_once(g->conf, "hello", m.cred, &cred, &code, &err) < 0) {
        tbm_msg_free(&m);
        turn_away(g, i, AGENT_NOISE_REFUSED, code, "%s", err.msg);
        return;
    }
    c->uid = cred.uid;
    c->by_grant = c->granted = 0;
    if (cred.uid == 0 && cred.len > 0 && hello_grant(g, c, m.cred, &cred, &code, &err) < 0) {
        tbm_msg_free(&m);
        auth_cred_free(&cred);
        refuse_root(g, i, code, err.msg);
        return;
    }
    tbm_msg_free(&m);
    auth_cred_free(&cred);
    c->admitted = tbm_now_us();
    snprintf(c->peer + strlen(c->peer), sizeof(c->peer) - strlen(c->peer),
             c->by_grant ? " uid %u (granted)" : " uid %u", (unsigned)c->uid);
    handed = *c;
    remove_at(g, i, 0);
    admit(ctx, &handed);
}

/* Read what entry i sent. A whole frame is judged at once; a closed or failed connection goes. */
static void read_waiting(agent_gate_t *g, int i, void (*admit)(void *, agent_conn_t *), void *ctx)
{
    agent_conn_t *c = &g->conn[i];
    tbm_err_t err = { { 0 } };
    tbm_frame_t f;
    ssize_t n = wire_fill(c->fd, &c->dec);
    int rc;

    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        agent_log_noisy(AGENT_NOISE_CLOSED, tbm_now_ms(), "%s: refused (auth): the connection %s before its "
                        "hello", c->peer, n == 0 ? "closed" : "failed");
        remove_at(g, i, 1);
        return;
    }
    rc = tbm_fdec_next(&c->dec, &f, &err);
    if (rc < 0)
        turn_away(g, i, AGENT_NOISE_REFUSED, "frame", "malformed first frame: %s", err.msg);
    else if (rc > 0)
        hello(g, i, &f, admit, ctx);
}

/* Take one new connection; make room for it first when a limit is reached. */
static int accept_one(agent_gate_t *g, void (*admit)(void *, agent_conn_t *), void *ctx)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);
    tbm_err_t err = { { 0 } };
    int fd = accept(g->lfd, (struct sockaddr *)&sa, &len), victim, one = 1;
    agent_conn_t c = { .conf = g->conf, .fd = fd, .accepted = tbm_now_us() };
    agent_waiting_t w = { .since = tbm_now_ms() };
    const char *colon;

    if (fd < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
            agent_log_noisy(AGENT_NOISE_SHED, tbm_now_ms(), "cannot accept a connection: %s", strerror(errno));
        return -1;
    }
    set_nonblock(fd);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    /* the replies are small frames (welcome, started, a line of output, the exit): none waits for an ACK */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    wire_peer_name((struct sockaddr *)&sa, len, c.peer, sizeof(c.peer));
    colon = strrchr(c.peer, ':');
    snprintf(w.addr, sizeof(w.addr), "%.*s", colon ? (int)(colon - c.peer) : (int)strlen(c.peer), c.peer);
    if (tbm_fdec_init(&c.dec, TBM_HELLO_MAX, &err) < 0) {
        agent_log("%s: %s", c.peer, err.msg);
        close(fd);
        return 0;
    }
    victim = agent_gate_victim(g->wait, g->n, w.addr, GATE_WAITING_PER_PEER, GATE_WAITING_MAX);
    if (victim >= 0) {
        agent_log_noisy(AGENT_NOISE_SHED, w.since, "%s: closed without a hello after %lld ms, to make room (at "
                        "most %d connections wait for their hello, %d from one address)", g->conn[victim].peer,
                        w.since - g->wait[victim].since, GATE_WAITING_MAX, GATE_WAITING_PER_PEER);
        remove_at(g, victim, 1);
    }
    g->conn[g->n] = c;
    g->wait[g->n] = w;
    g->n++;
    read_waiting(g, g->n - 1, admit, ctx);   /* a client that sent its hello with the connection gets in now */
    return 0;
}

static void expire(agent_gate_t *g, long long now)
{
    int i;

    for (i = g->n - 1; i >= 0; i--)
        if (now - g->wait[i].since >= GATE_DEADLINE_MS)
            turn_away(g, i, AGENT_NOISE_TIMEOUT, "auth", "no hello within %d ms; a client says hello with its MUNGE "
                      "credential at once", GATE_DEADLINE_MS);
}

static int wait_ms(const agent_gate_t *g, int timeout_ms, long long now)
{
    long long first = -1, left;
    int i;

    for (i = 0; i < g->n; i++)
        if (first < 0 || g->wait[i].since < first)
            first = g->wait[i].since;
    if (first < 0)
        return timeout_ms;
    left = first + GATE_DEADLINE_MS - now;
    return left < 0 ? 0 : left < timeout_ms ? (int)left : timeout_ms;
}

void agent_gate_turn(agent_gate_t *g, int timeout_ms, void (*admit)(void *ctx, agent_conn_t *c), void *ctx)
{
    int i, n = g->n, k;

    g->pfd[0] = (struct pollfd){ .fd = g->lfd, .events = POLLIN };
    for (i = 0; i < n; i++)
        g->pfd[i + 1] = (struct pollfd){ .fd = g->conn[i].fd, .events = POLLIN };
    if (poll(g->pfd, (nfds_t)n + 1, wait_ms(g, timeout_ms, tbm_now_ms())) <= 0) {
        expire(g, tbm_now_ms());
        return;
    }
    /* downwards: removing entry i moves the last one, already read, into its place */
    for (i = n - 1; i >= 0; i--)
        if (g->pfd[i + 1].revents)
            read_waiting(g, i, admit, ctx);
    expire(g, tbm_now_ms());
    for (k = 0; g->pfd[0].revents && k < GATE_ACCEPT_BATCH; k++)
        if (accept_one(g, admit, ctx) < 0)
            break;
}

static void close_all(agent_gate_t *g, int tell)
{
    while (g->n > 0) {
        if (tell)
            wire_send_error(g->conn[g->n - 1].fd, "auth", "the agent is stopping");
        remove_at(g, g->n - 1, 1);
    }
}

void agent_gate_free(agent_gate_t *g)
{
    if (!g)
        return;
    close_all(g, 1);
    free(g);
}

void agent_gate_drop(agent_gate_t *g)
{
    if (!g)
        return;
    close_all(g, 0);
    free(g);
}
