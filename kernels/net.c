/* net.c: libtbmcoll's sockets: listen, dial with bounded retries, accept, exact reads and writes with
 * deadlines, and the poll-driven transfer engine that moves a batch of sends and receives at once. */
#include "coll.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0     /* macOS: SO_NOSIGPIPE is set on the socket instead */
#endif

#define DIAL_RETRY_MS 50

int64_t tbmcoll_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int ms_left(int64_t deadline_ms)
{
    int64_t left = deadline_ms - tbmcoll_now_ms();
    return left < 0 ? 0 : left > 1000000 ? 1000000 : (int)left;
}

void tbmcoll_addr_text(const tbm_mlx_addr_t *a, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s:%u", a->ip, (unsigned)a->port);
}

static void to_sockaddr(const tbm_mlx_addr_t *a, struct sockaddr_in *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_port = htons(a->port);
    memcpy(&sa->sin_addr.s_addr, &a->ip_be, 4);
}

static void set_nosigpipe(int fd)
{
#ifdef SO_NOSIGPIPE
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#else
    (void)fd;
#endif
}

/* Buffer sizes must be set before connect/listen to take effect on the window. */
static void set_buffers(int fd, const tbmcoll_opts_t *o)
{
    int sz = o->sockbuf_bytes;

    if (sz < 0)
        return;   /* the kernel's own sizes, which it tunes as the connection goes */
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
}

static int new_socket(const tbmcoll_opts_t *o, tbm_err_t *err)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0)
        return tbm_errprintf(err, "cannot create a TCP socket: %s", strerror(errno));
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    set_nosigpipe(fd);
    set_buffers(fd, o);
    return fd;
}

static int set_nonblocking(int fd, int on)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0)
        return -1;
    return fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

int tbmcoll_tune(int fd, const tbmcoll_opts_t *o, tbm_err_t *err)
{
    int one = 1;

    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
        return tbm_errprintf(err, "cannot set TCP_NODELAY: %s", strerror(errno));
    set_buffers(fd, o);
    set_nosigpipe(fd);
    if (set_nonblocking(fd, 1) < 0)
        return tbm_errprintf(err, "cannot make a socket non-blocking: %s", strerror(errno));
    return 0;
}

int tbmcoll_listen(const tbmcoll_opts_t *o, tbm_mlx_addr_t *addr, tbm_err_t *err)
{
    struct sockaddr_in sa;
    socklen_t salen = sizeof(sa);
    char text[TBMCOLL_ADDR_MAX];
    int one = 1, fd = new_socket(o, err);

    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    to_sockaddr(addr, &sa);
    tbmcoll_addr_text(addr, text, sizeof(text));
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 128) < 0) {
        tbm_errprintf(err, "cannot listen on %s: %s (is the address local to this host and the port free?)",
                      text, strerror(errno));
        close(fd);
        return -1;
    }
    if (getsockname(fd, (struct sockaddr *)&sa, &salen) == 0)
        addr->port = ntohs(sa.sin_port);
    set_nonblocking(fd, 1);
    return fd;
}

/* Wait for fd to become ready for `events` until the deadline. 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, int64_t deadline_ms)
{
    struct pollfd p = { .fd = fd, .events = events, .revents = 0 };
    int rc;

    do
        rc = poll(&p, 1, ms_left(deadline_ms));
    while (rc < 0 && errno == EINTR);
    return rc;
}

/* One connect attempt: 1 connected, 0 refused or unreachable (retry), -1 other error. */
static int dial_once(int fd, const struct sockaddr_in *sa, int64_t deadline_ms, int *soerr)
{
    socklen_t len = sizeof(*soerr);

    set_nonblocking(fd, 1);
    *soerr = 0;
    if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
        if (errno != EINPROGRESS) {
            *soerr = errno;
        } else if (wait_fd(fd, POLLOUT, deadline_ms) <= 0) {
            *soerr = ETIMEDOUT;
        } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, soerr, &len) < 0) {
            *soerr = errno;
        }
    }
    if (*soerr == 0)
        return set_nonblocking(fd, 0) < 0 ? -1 : 1;
    return (*soerr == ECONNREFUSED || *soerr == ETIMEDOUT || *soerr == EHOSTUNREACH || *soerr == ENETUNREACH ||
            *soerr == ECONNRESET || *soerr == EAGAIN) ? 0 : -1;
}

int tbmcoll_dial(const tbmcoll_opts_t *o, const tbm_mlx_addr_t *addr, int64_t deadline_ms, const char *who,
                 tbm_err_t *err)
{
    struct sockaddr_in sa;
    char text[TBMCOLL_ADDR_MAX];
    int fd, rc, soerr = 0;

    to_sockaddr(addr, &sa);
    tbmcoll_addr_text(addr, text, sizeof(text));
    for (;;) {
        fd = new_socket(o, err);
        if (fd < 0)
            return -1;
        rc = dial_once(fd, &sa, deadline_ms, &soerr);
        if (rc > 0)
            return fd;
        close(fd);
        if (rc < 0 || ms_left(deadline_ms) == 0)
            break;
        usleep(DIAL_RETRY_MS * 1000);
    }
    return tbm_errprintf(err, "cannot connect to %s at %s: %s (gave up after the %s; is it running and "
                         "listening there?)", who, text, strerror(soerr ? soerr : ETIMEDOUT),
                         rc < 0 ? "first error" : "connect timeout");
}

int tbmcoll_accept(const int *lfds, int nl, int64_t deadline_ms, char *peer_text, size_t ptsz, tbm_err_t *err)
{
    struct pollfd p[TBM_MLX_MATRIX_MAX + 1];
    struct sockaddr_in sa;
    socklen_t salen;
    int i, rc, fd;

    if (nl > TBM_MLX_MATRIX_MAX + 1)
        nl = TBM_MLX_MATRIX_MAX + 1;
    for (;;) {
        for (i = 0; i < nl; i++)
            p[i] = (struct pollfd){ .fd = lfds[i], .events = POLLIN, .revents = 0 };
        rc = poll(p, (nfds_t)nl, ms_left(deadline_ms));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            return tbm_errprintf(err, "%s", rc == 0 ? "timed out" : strerror(errno));
        for (i = 0; i < nl; i++) {
            if (!(p[i].revents & POLLIN))
                continue;
            salen = sizeof(sa);
            fd = accept(lfds[i], (struct sockaddr *)&sa, &salen);
            if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
                tbm_errprintf(err, "cannot accept a connection: %s (each pair of ranks takes `streams` "
                              "connections: raise ulimit -n, or give fewer streams)", strerror(errno));
                return -2;
            }
            if (fd < 0)
                continue;   /* the client went away already (or EAGAIN): keep waiting */
            fcntl(fd, F_SETFD, FD_CLOEXEC);
            set_nonblocking(fd, 0);
            snprintf(peer_text, ptsz, "%s:%u", inet_ntoa(sa.sin_addr), (unsigned)ntohs(sa.sin_port));
            return fd;
        }
    }
}

/* Blocking-style exact I/O on a socket of either mode, bounded by the deadline. */
static int io_full(int fd, void *buf, size_t len, int64_t deadline_ms, int is_write, const char *who,
                   tbm_err_t *err)
{
    unsigned char *p = buf;
    size_t done = 0;
    ssize_t n;

    while (done < len) {
        if (wait_fd(fd, is_write ? POLLOUT : POLLIN, deadline_ms) <= 0)
            return tbm_errprintf(err, "%s: timed out %s", who, is_write ? "sending" : "waiting for data");
        n = is_write ? send(fd, p + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT)
                     : recv(fd, p + done, len - done, MSG_DONTWAIT);
        if (n > 0)
            done += (size_t)n;
        else if (n == 0)
            return tbm_errprintf(err, "%s: the connection was closed", who);
        else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            return tbm_errprintf(err, "%s: %s", who, strerror(errno));
    }
    return 0;
}

int tbmcoll_read_full(int fd, void *buf, size_t len, int64_t deadline_ms, const char *who, tbm_err_t *err)
{
    return io_full(fd, buf, len, deadline_ms, 0, who, err);
}

int tbmcoll_write_full(int fd, const void *buf, size_t len, int64_t deadline_ms, const char *who,
                       tbm_err_t *err)
{
    return io_full(fd, (void *)buf, len, deadline_ms, 1, who, err);
}

/* ---- the transfer engine ---- */

/* "rank 1 (10.0.1.2:32324), rank 3 (10.0.3.2:32326)": the distinct peers of some transfers. */
static void name_peers(tbmcoll_xfer_t *const *xs, int n, char *out, size_t outsz)
{
    size_t len = 0;
    int i, k;

    out[0] = '\0';
    for (i = 0; i < n && len < outsz; i++) {
        for (k = 0; k < i && xs[k]->link->peer != xs[i]->link->peer; k++)
            ;
        if (k < i)
            continue;
        len += (size_t)snprintf(out + len, outsz - len, "%srank %d (%s)", len ? ", " : "", xs[i]->link->peer,
                                xs[i]->link->addr);
    }
}

static int peer_among(tbmcoll_xfer_t *const *xs, int n, int peer);

/* "; rank 2 (10.0.2.2:32325) has closed its connection too": the other peers whose connections are closed
 * already. A peer that failed first may not be the one this rank was waiting on when it noticed; naming them
 * all points at the first cause (a rank killed in the middle of a collective) from every rank. */
static void closed_too(tbmcoll_comm_t *c, tbmcoll_xfer_t *const *named, int nn, char *out, size_t outsz)
{
    tbmcoll_link_t *ls[TBM_MLX_RING_MAX + 2];
    size_t len = 0;
    int j, k, nl = 0, found = 0;

    out[0] = '\0';
    for (j = 0; c->links && j < c->size; j++)
        if (j != c->rank)
            ls[nl++] = &c->links[j];
    if (!c->links) {
        ls[nl++] = &c->left;
        ls[nl++] = &c->right;
    }
    for (j = 0; j < nl && len < outsz; j++) {
        if (ls[j]->fd < 0 || peer_among(named, nn, ls[j]->peer) || !tbmcoll_peer_closed(ls[j]->fd))
            continue;
        for (k = 0; k < j && ls[k]->peer != ls[j]->peer; k++)
            ;
        if (k < j)
            continue;   /* a ring of two: both links lead to the same rank */
        len += (size_t)snprintf(out + len, outsz - len, "%s rank %d (%s)", found++ ? "," : "; and", ls[j]->peer,
                                ls[j]->addr);
    }
    if (found && len < outsz)
        snprintf(out + len, outsz - len, " closed %s connection%s too", found > 1 ? "their" : "its",
                 found > 1 ? "s" : "");
}

int tbmcoll_fail_xfers(tbmcoll_comm_t *c, tbmcoll_xfer_t *const *xs, const int *codes, int n,
                       tbmcoll_xfer_t *const *waiting, int nw, const char *what)
{
    char peers[512], still[512] = "", too[512];
    int i;

    name_peers(xs, n, peers, sizeof(peers));
    if (nw > 0) {
        size_t len = (size_t)snprintf(still, sizeof(still), "; still waiting on ");
        name_peers(waiting, nw, still + len, sizeof(still) - len);
    }
    closed_too(c, xs, n, too, sizeof(too));
    for (i = 0; i < n; i++)
        if (codes[i] != EPIPE && codes[i] != ECONNRESET)
            return tbmcoll_fail(c, "%s: %s %s failed: %s%s%s", what, xs[i]->is_send ? "sending to" : "receiving from",
                                peers, strerror(codes[i]), still, too);
    return tbmcoll_fail(c, "%s: %s closed the connection: it exited or was killed; see its output%s%s", what, peers,
                        still, too);
}

int tbmcoll_fail_stalled(tbmcoll_comm_t *c, tbmcoll_xfer_t *const *xs, int n, const char *what)
{
    char peers[512];

    name_peers(xs, n, peers, sizeof(peers));
    return tbmcoll_fail(c, "%s: no progress with %s for %d ms: it hangs, or the link is down", what, peers,
                        c->opts.io_timeout_ms);
}

int tbmcoll_xfer_step(tbmcoll_xfer_t *x)
{
    ssize_t n;

    if (x->done >= x->len)
        return 0;
    if (x->is_send)
        n = send(tbmcoll_xfer_fd(x), x->buf + x->done, x->len - x->done, MSG_NOSIGNAL);
    else
        n = recv(tbmcoll_xfer_fd(x), x->buf + x->done, x->len - x->done, 0);
    if (n > 0) {
        x->done += (size_t)n;
        return 0;
    }
    if (n == 0)
        return EPIPE;          /* the peer closed its end */
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return 0;
    return errno;
}

int tbmcoll_peer_closed(int fd)
{
    char b;
    ssize_t n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

    if (n == 0)
        return EPIPE;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return errno;
    return 0;
}

static int64_t now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int tbmcoll_idle(const tbmcoll_comm_t *c, tbmcoll_idle_t *st)
{
    if (st->rounds++ == 0)
        st->since_us = now_us();
    if (st->rounds <= TBMCOLL_SPINS) {
        sched_yield();
        return 1;
    }
    if (c->opts.spin_us > 0 && now_us() - st->since_us < c->opts.spin_us) {
        sched_yield();   /* at once when this core has nothing else to run; the peers' turn when it has */
        return 1;
    }
    st->rounds = 0;
    return 0;
}

static int peer_among(tbmcoll_xfer_t *const *xs, int n, int peer)
{
    int i;

    for (i = 0; i < n; i++)
        if (xs[i]->link->peer == peer)
            return 1;
    return 0;
}

/* Move what the socket takes (or has) now: until the transfer is done or the socket would block
 * (*would_block = 1). Returns 0, or an error code as tbmcoll_xfer_step(). One call drains as much as it can,
 * so that each wake-up of poll costs few system calls (they are dear under a sandboxing kernel). */
static int xfer_drain(tbmcoll_xfer_t *x, int *would_block)
{
    ssize_t r;

    *would_block = 0;
    while (x->done < x->len) {
        if (x->is_send)
            r = send(tbmcoll_xfer_fd(x), x->buf + x->done, x->len - x->done, MSG_NOSIGNAL);
        else
            r = recv(tbmcoll_xfer_fd(x), x->buf + x->done, x->len - x->done, 0);
        if (r > 0) {
            x->done += (size_t)r;
            continue;
        }
        if (r == 0)
            return EPIPE;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            *would_block = 1;
            return 0;
        }
        return errno;
    }
    return 0;
}

/* The transfer engine: every transfer that may move is drained; when none may, poll says which can (after a
 * few yields with a zero-timeout poll, for peers sharing the cores, and opts.spin_us of them if asked).
 * A transfer is tried again only once poll has said it is ready. */
#define BATCH_MAX (2 * TBM_MLX_RING_MAX * TBMCOLL_STREAMS_MAX)

static int run_batch(tbmcoll_comm_t *c, tbmcoll_xfer_t *xs, int n, const char *what)
{
    tbmcoll_xfer_t *failed[BATCH_MAX], *waiting[BATCH_MAX], *pend[BATCH_MAX];
    struct pollfd p[BATCH_MAX];
    unsigned char ready[BATCH_MAX];
    int codes[BATCH_MAX];
    tbmcoll_idle_t idle = { 0, 0 };
    int i, k, nf, nw, rc, wb, timeout;

    memset(ready, 1, sizeof(ready));
    for (;;) {
        nf = 0;
        for (i = 0; i < n; i++) {
            if (xs[i].done >= xs[i].len || !ready[i])
                continue;
            if ((codes[nf] = xfer_drain(&xs[i], &wb)) != 0)
                failed[nf++] = &xs[i];
            ready[i] = 0;
        }
        if (nf) {
            for (i = 0, nw = 0; i < n; i++)
                if (xs[i].done < xs[i].len && !peer_among(failed, nf, xs[i].link->peer))
                    waiting[nw++] = &xs[i];
            return tbmcoll_fail_xfers(c, failed, codes, nf, waiting, nw, what);
        }
        for (i = 0, k = 0; i < n; i++) {
            if (xs[i].done >= xs[i].len)
                continue;
            p[k] = (struct pollfd){ .fd = tbmcoll_xfer_fd(&xs[i]), .events = xs[i].is_send ? POLLOUT : POLLIN };
            pend[k++] = &xs[i];
        }
        if (k == 0)
            return 0;
        for (;;) {
            timeout = tbmcoll_idle(c, &idle) ? 0 : c->opts.io_timeout_ms;
            do
                rc = poll(p, (nfds_t)k, timeout);
            while (rc < 0 && errno == EINTR);
            if (rc < 0)
                return tbmcoll_fail(c, "%s: poll failed: %s", what, strerror(errno));
            if (rc > 0)
                break;
            if (timeout > 0)
                return tbmcoll_fail_stalled(c, pend, k, what);
        }
        idle.rounds = 0;
        for (i = 0; i < k; i++)
            if (p[i].revents)
                ready[pend[i] - xs] = 1;
    }
}

int tbmcoll_xfer_run(tbmcoll_comm_t *c, tbmcoll_xfer_t *xs, int n, const char *what)
{
    tbmcoll_xfer_t sub[BATCH_MAX];
    size_t part;
    int i, k, ns, m = 0, striped = 0;

    if (n > 2 * TBM_MLX_RING_MAX)
        return tbmcoll_fail(c, "%s: %d transfers at once, at most %d", what, n, 2 * TBM_MLX_RING_MAX);
    for (i = 0; i < n; i++) {
        ns = xs[i].link->nfd;
        if (ns <= 1 || xs[i].done != 0 || xs[i].len < (size_t)ns * TBMCOLL_STRIPE_MIN) {
            sub[m++] = xs[i];
            continue;
        }
        /* equal parts, the last one takes the rest: the peer splits its side the same way */
        part = xs[i].len / (size_t)ns;
        for (k = 0; k < ns; k++) {
            sub[m] = xs[i];
            sub[m].buf = xs[i].buf + (size_t)k * part;
            sub[m].len = k == ns - 1 ? xs[i].len - (size_t)k * part : part;
            sub[m].stream = k;
            m++;
        }
        striped = 1;
    }
    if (!striped)
        return run_batch(c, xs, n, what);
    if (run_batch(c, sub, m, what) < 0)
        return -1;
    for (i = 0; i < n; i++)
        xs[i].done = xs[i].len;
    return 0;
}
