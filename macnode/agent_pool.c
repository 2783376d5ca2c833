/* agent_pool.c: macnoded's servers, each serving one connection at a time and then the next (see
 * agent_pool.h). */
#include "config.h"
#include "agent_pool.h"
#include "agent_log.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0   /* macOS: the channel has SO_NOSIGPIPE instead */
#endif

#define CHANNEL_BUF (32 * 1024)   /* a handoff is at most 4 KiB and some; macOS's default is 8 KiB */

typedef struct server {
    pid_t pid;
    uid_t uid;             /* whose connection it serves (when busy) */
    int ch;                /* the main process's end of its channel; -1 once closed (it ends) */
    int busy;
    long long idle_since;  /* tbm_now_ms */
} server_t;

struct agent_pool {
    agent_pool_limits_t lim;
    void (*serve)(void *ctx, agent_conn_t *c);
    void (*in_new)(void *ctx);
    void *ctx;
    long long collected;   /* when the idle notes were last read */
    int n, cap;
    server_t *sv;
};

/* What goes with a connection's socket to its server. */
typedef struct handoff {
    uint32_t magic;
    uint32_t uid;
    uint32_t nbuf;         /* the bytes read after the hello, which follow */
    uint32_t granted;      /* the hello was a job grant: grant, grant_sum */
    long long accepted, proved, checking, admitted;
    char peer[96];
    tbm_grant_t grant;
    char grant_sum[65];
} handoff_t;

/* Room for one descriptor's control message, aligned for it. */
typedef union fd_control {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int))];
} fd_control_t;

#define HANDOFF_MAGIC 0x74626d68u
#define IDLE_NOTE     "i"

agent_pool_t *agent_pool_new(const agent_pool_limits_t *lim, void (*serve)(void *ctx, agent_conn_t *c),
                             void (*in_new)(void *ctx), void *ctx, tbm_err_t *err)
{
    agent_pool_t *p = calloc(1, sizeof(*p));

    if (p) {
        p->lim = *lim;
        p->cap = 2 * lim->max + 8;   /* the busy, the idle, and those ended but not reaped yet */
        p->sv = calloc((size_t)p->cap, sizeof(*p->sv));
    }
    if (!p || !p->sv) {
        free(p);
        return tbm_errprintf(err, "out of memory for the servers' table"), NULL;
    }
    p->serve = serve, p->in_new = in_new, p->ctx = ctx;
    return p;
}

/* The main process -------------------------------------------------------------------------------------- */

/* Close a server's channel: it ends when it next reads it (at once when idle). */
static void let_go(server_t *s)
{
    if (s->ch >= 0)
        close(s->ch);
    s->ch = -1;
    s->busy = 0;
}

/* Read the idle notes the busy servers wrote since; a closed channel is a server that ended. */
static void collect(agent_pool_t *p, long long now)
{
    char b[16];
    ssize_t n;
    int i;

    for (i = 0; i < p->n; i++) {
        server_t *s = &p->sv[i];

        if (!s->busy || s->ch < 0)
            continue;
        n = recv(s->ch, b, sizeof(b), MSG_DONTWAIT);
        if (n > 0) {
            s->busy = 0;
            s->idle_since = now;
        } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            let_go(s);
        }
    }
    p->collected = now;
}

static int busy_of(const agent_pool_t *p, uid_t uid, int *all)
{
    int i, mine = 0;

    *all = 0;
    for (i = 0; i < p->n; i++) {
        *all += p->sv[i].busy;
        mine += p->sv[i].busy && p->sv[i].uid == uid;
    }
    return mine;
}

/* The idle server that was busy last (its pages are the warmest), or NULL. */
static server_t *idle_one(agent_pool_t *p)
{
    server_t *best = NULL;
    int i;

    for (i = 0; i < p->n; i++)
        if (!p->sv[i].busy && p->sv[i].ch >= 0 && (!best || p->sv[i].idle_since > best->idle_since))
            best = &p->sv[i];
    return best;
}

/* Send c's socket, what came after its hello and what the gate knows of it; the whole of it or nothing
 * usable (the server then reads a short handoff and ends). 0, or -1 with errno. */
static int send_conn(int ch, const agent_conn_t *c)
{
    handoff_t h;
    size_t nbuf = tbm_fdec_pending(&c->dec);
    struct iovec iov[2];
    struct msghdr mh;
    fd_control_t cm;
    struct cmsghdr *cmsg;
    ssize_t n;

    memset(&h, 0, sizeof(h));
    h.magic = HANDOFF_MAGIC;
    h.uid = (uint32_t)c->uid;
    h.nbuf = (uint32_t)nbuf;
    h.accepted = c->accepted, h.proved = c->proved, h.checking = c->checking, h.admitted = c->admitted;
    snprintf(h.peer, sizeof(h.peer), "%s", c->peer);
    if (c->by_grant) {   /* handed before its spawn: the grant is unused */
        h.granted = 1;
        h.grant = c->grant;
        memcpy(h.grant_sum, c->grant_sum, sizeof(h.grant_sum));
    }
    iov[0].iov_base = &h, iov[0].iov_len = sizeof(h);
    iov[1].iov_base = nbuf ? c->dec.buf + c->dec.start : NULL, iov[1].iov_len = nbuf;
    memset(&mh, 0, sizeof(mh));
    memset(&cm, 0, sizeof(cm));
    mh.msg_iov = iov;
    mh.msg_iovlen = nbuf ? 2 : 1;
    mh.msg_control = cm.buf;
    mh.msg_controllen = sizeof(cm.buf);
    cmsg = CMSG_FIRSTHDR(&mh);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &c->fd, sizeof(int));
    do
        n = sendmsg(ch, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n >= 0 && (size_t)n != sizeof(h) + nbuf)
        errno = EAGAIN;
    return n >= 0 && (size_t)n == sizeof(h) + nbuf ? 0 : -1;
}

static void server_main(agent_pool_t *p, int ch) __attribute__((noreturn));

/* A new server, busy from the start (c is to be its first connection: the copy of c's socket the fork gives
 * it is closed, the server takes the one sent over its channel as any other). 0, or -1 with errno. */
static int fork_server(agent_pool_t *p, const agent_conn_t *c, server_t **out)
{
    int sv[2], i, size = CHANNEL_BUF;
    pid_t pid;

    if (p->n >= p->cap)
        return errno = EAGAIN, -1;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return -1;
    pid = fork();
    if (pid < 0) {
        close(sv[0]), close(sv[1]);
        return -1;
    }
    if (pid == 0) {
        close(sv[0]);
        close(c->fd);
        for (i = 0; i < p->n; i++)   /* the other servers' channels: theirs and the main process's alone */
            if (p->sv[i].ch >= 0)
                close(p->sv[i].ch);
        if (p->in_new)
            p->in_new(p->ctx);
        fcntl(sv[1], F_SETFD, FD_CLOEXEC);
        server_main(p, sv[1]);
    }
    close(sv[1]);
    fcntl(sv[0], F_SETFD, FD_CLOEXEC);
    fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
#ifdef SO_NOSIGPIPE
    setsockopt(sv[0], SOL_SOCKET, SO_NOSIGPIPE, &(int){ 1 }, sizeof(int));   /* macOS: no MSG_NOSIGNAL */
#endif
    p->sv[p->n] = (server_t){ .pid = pid, .ch = sv[0], .busy = 1 };
    *out = &p->sv[p->n++];
    return 0;
}

int agent_pool_give(agent_pool_t *p, agent_conn_t *c, char *why, size_t len)
{
    server_t *s;
    int all, mine, root = c->uid == 0, most = root ? p->lim.max : p->lim.max - p->lim.root_reserve;

    mine = busy_of(p, c->uid, &all);
    if (!idle_one(p) || all >= most || (!root && mine >= p->lim.max_per_uid)) {
        collect(p, tbm_now_ms());
        mine = busy_of(p, c->uid, &all);
    }
    if (all >= most && (root || !p->lim.root_reserve))
        return snprintf(why, len, "the agent is serving all the connections it may"), -1;
    if (all >= most)
        return snprintf(why, len, "the agent is serving all the connections users may have (the last %d are kept "
                        "for root's requests)", p->lim.root_reserve), -1;
    if (!root && mine >= p->lim.max_per_uid)
        return snprintf(why, len, "this user has all the connections to the agent a user may have"), -1;
    while ((s = idle_one(p))) {
        if (send_conn(s->ch, c) == 0) {
            s->busy = 1;
            s->uid = c->uid;
            return 0;
        }
        agent_log("%s: server %ld did not take the connection (%s): ending it", c->peer, (long)s->pid,
                  strerror(errno));
        let_go(s);
    }
    if (fork_server(p, c, &s) < 0)
        return snprintf(why, len, "cannot fork a server for the connection: %s", strerror(errno)), -2;
    s->uid = c->uid;
    if (send_conn(s->ch, c) < 0) {
        snprintf(why, len, "cannot hand the connection to its new server: %s", strerror(errno));
        let_go(s);
        return -2;
    }
    return 0;
}

int agent_pool_reaped(agent_pool_t *p, pid_t pid)
{
    int i;

    for (i = 0; i < p->n; i++)
        if (p->sv[i].pid == pid) {
            let_go(&p->sv[i]);
            p->sv[i] = p->sv[--p->n];
            return 1;
        }
    return 0;
}

void agent_pool_tick(agent_pool_t *p, long long now_ms)
{
    server_t *oldest;
    int i, idle;

    if (now_ms - p->collected < 1000 && now_ms >= p->collected)
        return;
    collect(p, now_ms);
    for (;;) {
        oldest = NULL;
        for (i = idle = 0; i < p->n; i++) {
            server_t *s = &p->sv[i];

            if (s->busy || s->ch < 0)
                continue;
            idle++;
            if (!oldest || s->idle_since < oldest->idle_since)
                oldest = s;
        }
        if (idle <= p->lim.idle_keep || now_ms - oldest->idle_since < p->lim.idle_ms)
            return;
        let_go(oldest);
    }
}

int agent_pool_count(agent_pool_t *p, int *idle)
{
    int i, n = 0, k = 0;

    collect(p, tbm_now_ms());
    for (i = 0; i < p->n; i++) {
        n += p->sv[i].ch >= 0;
        k += p->sv[i].ch >= 0 && !p->sv[i].busy;
    }
    if (idle)
        *idle = k;
    return n;
}

void agent_pool_drop(agent_pool_t *p)
{
    int i;

    if (!p)
        return;
    for (i = 0; i < p->n; i++)
        let_go(&p->sv[i]);
    free(p->sv);
    free(p);
}

void agent_pool_free(agent_pool_t *p)
{
    agent_pool_drop(p);
}

/* A server ------------------------------------------------------------------------------------------------ */

/* read() until len bytes came; 0, or -1 (the channel closed or failed). */
static int read_full(int fd, void *buf, size_t len)
{
    size_t got = 0;
    ssize_t n;

    while (got < len) {
        n = read(fd, (char *)buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return 0;
}

/* The next connection from the main process. 1, 0 when the channel closed (the agent let this server go),
 * -1 with err. */
static int take_conn(int ch, agent_conn_t *c, tbm_err_t *err)
{
    handoff_t h;
    unsigned char after[TBM_FRAME_HDR + TBM_HELLO_MAX];
    struct iovec iov = { &h, sizeof(h) };
    struct msghdr mh;
    fd_control_t cm;
    struct cmsghdr *cmsg;
    ssize_t n;
    int fd = -1;

    memset(&mh, 0, sizeof(mh));
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = cm.buf;
    mh.msg_controllen = sizeof(cm.buf);
    do
        n = recvmsg(ch, &mh, MSG_WAITALL);
    while (n < 0 && errno == EINTR);
    if (n == 0 || (n < 0 && errno == ECONNRESET))   /* closed: with this server's idle note unread, a reset */
        return 0;
    if (n < 0)
        return tbm_errprintf(err, "cannot read the channel: %s", strerror(errno));
    for (cmsg = CMSG_FIRSTHDR(&mh); cmsg; cmsg = CMSG_NXTHDR(&mh, cmsg))
        if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS &&
            cmsg->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
    if (fd < 0 || (mh.msg_flags & MSG_CTRUNC))
        return tbm_errprintf(err, "a handoff without its connection");
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (((size_t)n < sizeof(h) && read_full(ch, (char *)&h + n, sizeof(h) - (size_t)n) < 0) ||
        h.magic != HANDOFF_MAGIC || h.nbuf > sizeof(after) || read_full(ch, after, h.nbuf) < 0 ||
        tbm_fdec_init(&c->dec, TBM_HELLO_MAX, err) < 0) {
        close(fd);
        return tbm_erris(err) ? -1 : tbm_errprintf(err, "a short or malformed handoff");
    }
    if (tbm_fdec_feed(&c->dec, after, h.nbuf) != h.nbuf) {
        close(fd);
        tbm_fdec_free(&c->dec);
        return tbm_errprintf(err, "a handoff of %u bytes does not fit a decoder", h.nbuf);
    }
    c->fd = fd;
    c->uid = (uid_t)h.uid;
    c->accepted = h.accepted, c->proved = h.proved, c->checking = h.checking, c->admitted = h.admitted;
    h.peer[sizeof(h.peer) - 1] = '\0';
    snprintf(c->peer, sizeof(c->peer), "%s", h.peer);
    c->by_grant = c->granted = h.granted == 1;
    if (c->granted) {
        c->grant = h.grant;
        c->grant.node[sizeof(c->grant.node) - 1] = '\0';
        memcpy(c->grant_sum, h.grant_sum, sizeof(c->grant_sum));
        c->grant_sum[sizeof(c->grant_sum) - 1] = '\0';
    }
    return 1;
}

/* Serve the connections the main process hands on, one at a time, saying after each that it is idle. */
static void server_main(agent_pool_t *p, int ch)
{
    tbm_err_t err = { { 0 } };
    agent_conn_t c;
    int served, rc;

    for (served = 0; served < p->lim.conns; served++) {
        /* between connections a SIGTERM ends the server; one while it served has been noted */
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        if (agent_task_stop_asked())
            break;
        if (served > 0 && write(ch, IDLE_NOTE, 1) != 1)
            break;
        memset(&c, 0, sizeof(c));
        c.main_ch = ch;
        if ((rc = take_conn(ch, &c, &err)) <= 0) {
            if (rc < 0)
                agent_log("server: %s; ending", err.msg);
            break;
        }
        p->serve(p->ctx, &c);
        close(c.fd);
    }
    _exit(0);
}
