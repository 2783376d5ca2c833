/* agent_gate.c: connections wait in macnoded's main process, bounded and with a deadline, for the agent's
 * proof (made at a bounded rate) and their MUNGE hello (see agent_gate.h). */
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
    agent_bucket_t proofs;                   /* the proofs' rate limit */
    int token_ms;                            /* with a proof due and no token: when the next comes */
};

int agent_gate_victim(const agent_waiting_t *w, int n, const char *addr, int kind, int per_peer, int total)
{
    int i, mine = 0, oldest_mine = -1, lowest = -1;

    for (i = 0; i < n; i++) {
        /* of all, the one of the lowest kind (a user's, then a task's, then root's), the longest still of those */
        if (lowest < 0 || w[i].kind < w[lowest].kind ||
            (w[i].kind == w[lowest].kind && w[i].moved < w[lowest].moved))
            lowest = i;
        if (strcmp(w[i].addr, addr) != 0 || w[i].kind != kind)
            continue;
        mine++;
        if (oldest_mine < 0 || w[i].moved < w[oldest_mine].moved)
            oldest_mine = i;
    }
    if (mine >= per_peer)
        return oldest_mine;
    return n < total ? -1 : lowest;
}

/* Whether waiting connections i and j come from the same peer: the same address and kind. */
static int same_peer(const agent_waiting_t *w, int i, int j)
{
    return w[i].kind == w[j].kind && strcmp(w[i].addr, w[j].addr) == 0;
}

int agent_gate_next_proof(const agent_waiting_t *w, int n)
{
    int i, j, best = -1, best_open = 0, open;

    for (i = 0; i < n; i++) {
        if (w[i].phase != GATE_PROOF_DUE || (best >= 0 && w[i].kind < w[best].kind))
            continue;
        for (j = open = 0; j < n; j++)
            open += w[j].phase == GATE_PROVED && same_peer(w, i, j);
        if (best < 0 || w[i].kind > w[best].kind || open < best_open ||
            (open == best_open && w[i].since < w[best].since))
            best = i, best_open = open;
    }
    return best;
}

int agent_bucket_take(agent_bucket_t *b, long long now, int rate, int burst, int *wait_ms)
{
    double need;

    if (!b->at || now < b->at)
        b->tokens = burst;
    else
        b->tokens += (double)(now - b->at) * rate / 1000.0;
    if (b->tokens > burst)
        b->tokens = burst;
    b->at = now;
    if (b->tokens >= 1.0) {
        b->tokens -= 1.0;
        return 1;
    }
    need = (1.0 - b->tokens) * 1000.0 / rate;   /* ms until a whole token, rounded up, 1 at least */
    *wait_ms = (int)need < need ? (int)need + 1 : (int)need;
    if (*wait_ms < 1)
        *wait_ms = 1;
    return 0;
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
    g->token_ms = -1;
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
        turn_away(g, i, AGENT_NOISE_REFUSED, "frame", "malformed hello: %s", err.msg);
        return;
    }
    if (m.type != TBM_MSG_HELLO) {
        turn_away(g, i, AGENT_NOISE_REFUSED, "auth", "after the agent's proof the next frame must be hello with "
                  "a MUNGE credential, not %s", tbm_msg_type_name(m.type));
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

/* The first frame came whole: a prove (its nonce kept, its proof due), or a refusal. 0, or -1 (turned away). */
static int prove(agent_gate_t *g, int i, const tbm_frame_t *f)
{
    tbm_err_t err = { { 0 } };
    tbm_msg_t m;

    if (tbm_msg_parse(f, &m, &err) < 0)
        return turn_away(g, i, AGENT_NOISE_REFUSED, "frame", "malformed first frame: %s", err.msg), -1;
    if (m.type != TBM_MSG_PROVE) {
        turn_away(g, i, AGENT_NOISE_REFUSED, "auth", "the first frame must be prove: the agent proves itself before "
                  "any credential is sent (protocol version %d; install the same slurm-tbmesh release on the "
                  "bridge and the Macs), not %s", TBM_PROTO_VERSION, tbm_msg_type_name(m.type));
        tbm_msg_free(&m);
        return -1;
    }
    snprintf(g->wait[i].nonce, sizeof(g->wait[i].nonce), "%s", m.nonce);
    g->wait[i].phase = GATE_PROOF_DUE;
    g->wait[i].moved = tbm_now_ms();
    tbm_msg_free(&m);
    return 0;
}

/* Make entry i's proof and send it (one short frame on a new socket: its send buffer takes it at once). 0,
 * or -1 (turned away). */
static int send_proof(agent_gate_t *g, int i)
{
    agent_conn_t *c = &g->conn[i];
    tbm_err_t err = { { 0 } };
    tbm_msg_t m = { .type = TBM_MSG_PROOF, .version = TBM_PROTO_VERSION, .node = g->conf->node };
    char *cred = agent_proof(g->conf, g->wait[i].nonce, &err);
    int rc = -1;

    if (!cred)
        turn_away(g, i, AGENT_NOISE_REFUSED, "internal", "the agent cannot prove itself: %s", err.msg);
    else if (m.cred = cred, wire_send(c->fd, &m, &err) < 0)
        turn_away(g, i, AGENT_NOISE_CLOSED, "proof", "cannot send the proof: %s", err.msg);
    else
        rc = 0;
    free(cred);
    if (rc == 0) {
        g->wait[i].phase = GATE_PROVED;
        g->wait[i].moved = tbm_now_ms();
        c->proved = tbm_now_us();
    }
    return rc;
}

/* Make the proofs due, as many as the rate limit lets through now, fairly among peers. */
static void give_proofs(agent_gate_t *g)
{
    int i;

    g->token_ms = -1;
    while ((i = agent_gate_next_proof(g->wait, g->n)) >= 0) {
        if (!agent_bucket_take(&g->proofs, tbm_now_ms(), GATE_PROOF_RATE, GATE_PROOF_BURST, &g->token_ms))
            return;
        send_proof(g, i);
    }
    g->token_ms = -1;
}

/* Judge the whole frames entry i holds: its prove, then (proved) its hello. */
static void advance(agent_gate_t *g, int i, void (*admit)(void *, agent_conn_t *), void *ctx)
{
    agent_conn_t *c = &g->conn[i];
    tbm_err_t err = { { 0 } };
    tbm_frame_t f;
    int rc;

    while (g->wait[i].phase != GATE_PROOF_DUE) {
        rc = tbm_fdec_next(&c->dec, &f, &err);
        if (rc < 0)
            turn_away(g, i, AGENT_NOISE_REFUSED, "frame", "malformed %s: %s",
                      g->wait[i].phase == GATE_PROVED ? "hello" : "first frame", err.msg);
        if (rc <= 0)
            return;
        if (g->wait[i].phase == GATE_PROVED) {
            hello(g, i, &f, admit, ctx);
            return;
        }
        if (prove(g, i, &f) < 0)
            return;
    }
}

/* Read what entry i sent, and judge it; a closed or failed connection goes. */
static void read_waiting(agent_gate_t *g, int i, void (*admit)(void *, agent_conn_t *), void *ctx)
{
    agent_conn_t *c = &g->conn[i];
    ssize_t n = wire_fill(c->fd, &c->dec);

    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        agent_log_noisy(AGENT_NOISE_CLOSED, tbm_now_ms(), "%s: refused (auth): the connection %s before its "
                        "hello", c->peer, n == 0 ? "closed" : "failed");
        remove_at(g, i, 1);
        return;
    }
    advance(g, i, admit, ctx);
}

/* Entries proved this turn whose hello came with their prove (a client that did not wait for the proof): judged
 * now, as nothing more may come to wake them. */
static void proved_waiting(agent_gate_t *g, void (*admit)(void *, agent_conn_t *), void *ctx)
{
    int i;

    for (i = g->n - 1; i >= 0; i--)
        if (g->wait[i].phase == GATE_PROVED && tbm_fdec_pending(&g->conn[i].dec) > 0)
            advance(g, i, admit, ctx);
}

int agent_gate_port_kind(int port)
{
    if (port <= 0 || port >= 1024)
        return GATE_ANY;
    return port >= WIRE_LANE_FIRST(WIRE_LANE_ROOT) ? GATE_ROOT : GATE_TASK;
}

/* A peer address's port, 0 when it is not IP. */
static int peer_port(const struct sockaddr *sa)
{
    return sa->sa_family == AF_INET ? ntohs(((const struct sockaddr_in *)sa)->sin_port)
         : sa->sa_family == AF_INET6 ? ntohs(((const struct sockaddr_in6 *)sa)->sin6_port) : 0;
}

/* Take one new connection; make room for it first when a limit is reached. */
static int accept_one(agent_gate_t *g, void (*admit)(void *, agent_conn_t *), void *ctx)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);
    tbm_err_t err = { { 0 } };
    int fd = accept(g->lfd, (struct sockaddr *)&sa, &len), victim, one = 1;
    agent_conn_t c = { .conf = g->conf, .fd = fd, .accepted = tbm_now_us(), .main_ch = -1 };
    agent_waiting_t w = { .since = tbm_now_ms(), .moved = tbm_now_ms() };
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
    /* a bridge host that lost its power or network closes nothing: its tasks end once it is found gone */
    wire_keepalive(fd, g->conf->peer_timeout_s);
    wire_peer_name((struct sockaddr *)&sa, len, c.peer, sizeof(c.peer));
    colon = strrchr(c.peer, ':');
    snprintf(w.addr, sizeof(w.addr), "%.*s", colon ? (int)(colon - c.peer) : (int)strlen(c.peer), c.peer);
    if (tbm_fdec_init(&c.dec, TBM_HELLO_MAX, &err) < 0) {
        agent_log("%s: %s", c.peer, err.msg);
        close(fd);
        return 0;
    }
    w.kind = agent_gate_port_kind(peer_port((struct sockaddr *)&sa));
    victim = agent_gate_victim(g->wait, g->n, w.addr, w.kind, GATE_WAITING_PER_PEER, GATE_WAITING_MAX);
    if (victim >= 0) {
        agent_log_noisy(AGENT_NOISE_SHED, w.since, "%s: closed without a hello after %lld ms, %lld ms since it last "
                        "moved on, to make room (at most %d connections wait for their hello, %d from one address)",
                        g->conn[victim].peer, w.since - g->wait[victim].since, w.since - g->wait[victim].moved,
                        GATE_WAITING_MAX, GATE_WAITING_PER_PEER);
        remove_at(g, victim, 1);
    }
    g->conn[g->n] = c;
    g->wait[g->n] = w;
    g->n++;
    read_waiting(g, g->n - 1, admit, ctx);   /* a client that sent its prove with the connection is answered now */
    give_proofs(g);
    return 0;
}

static void expire(agent_gate_t *g, long long now)
{
    int i;

    for (i = g->n - 1; i >= 0; i--)
        if (now - g->wait[i].since >= GATE_DEADLINE_MS)
            turn_away(g, i, AGENT_NOISE_TIMEOUT, "auth", "no %s within %d ms; a client sends prove at once, and its "
                      "hello as soon as the proof came%s", g->wait[i].phase == GATE_WANTS_PROVE ? "prove" : "hello",
                      GATE_DEADLINE_MS, g->wait[i].phase == GATE_PROOF_DUE ? " (its proof waited for the agent's "
                      "rate limit of proofs: it is flooded with proves)" : "");
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
    if (g->token_ms >= 0 && g->token_ms < left)
        left = g->token_ms;   /* a proof is due: the rate limit lets it through then */
    return left < 0 ? 0 : left < timeout_ms ? (int)left : timeout_ms;
}

void agent_gate_turn(agent_gate_t *g, int timeout_ms, void (*admit)(void *ctx, agent_conn_t *c), void *ctx)
{
    int i, n = g->n, k;

    g->pfd[0] = (struct pollfd){ .fd = g->lfd, .events = POLLIN };
    for (i = 0; i < n; i++)
        g->pfd[i + 1] = (struct pollfd){ .fd = g->conn[i].fd, .events = POLLIN };
    if (poll(g->pfd, (nfds_t)n + 1, wait_ms(g, timeout_ms, tbm_now_ms())) <= 0) {
        give_proofs(g);
        proved_waiting(g, admit, ctx);
        expire(g, tbm_now_ms());
        return;
    }
    /* downwards: removing entry i moves the last one, already read, into its place */
    for (i = n - 1; i >= 0; i--)
        if (g->pfd[i + 1].revents)
            read_waiting(g, i, admit, ctx);
    give_proofs(g);
    proved_waiting(g, admit, ctx);
    expire(g, tbm_now_ms());
    for (k = 0; g->pfd[0].revents && k < GATE_ACCEPT_BATCH; k++)
        if (accept_one(g, admit, ctx) < 0)
            break;
    proved_waiting(g, admit, ctx);
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
