/* transfer.c: libtbmcoll's transfer engine: a batch of sends and receives on the links moved at once
 * (non-blocking I/O, poll, striping over a link's streams), point to point over it, the communicator's
 * scratch space, and the failure messages that name the peers at fault. Below the public calls (comm.c) and
 * above plain sockets (net.c). */
#include "coll.h"
#include "net.h"

#include "clock.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int tbmcoll_fail(tbmcoll_comm_t *c, const char *fmt, ...)
{
    char msg[TBM_ERR_MAX];
    va_list ap;

    if (c->broken)
        return -1;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tbm_errprintf(&c->err, "rank %d: %s", c->rank, msg);
    c->broken = 1;
    return -1;
}

unsigned char *tbmcoll_scratch(tbmcoll_comm_t *c, size_t bytes)
{
    unsigned char *p;

    if (bytes <= c->scratch_size)
        return c->scratch;
    free(c->scratch);
    c->scratch = NULL;
    c->scratch_size = 0;
    if (posix_memalign((void **)&p, TBM_STAGE_PAGE, bytes) != 0)
        p = NULL;
    if (!p) {
        tbmcoll_fail(c, "out of memory for %zu bytes of scratch space", bytes);
        return NULL;
    }
    c->scratch = p;
    c->scratch_size = bytes;
    return p;
}

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

static int peer_among(tbmcoll_xfer_t *const *xs, int n, int peer)
{
    int i;

    for (i = 0; i < n; i++)
        if (xs[i]->link->peer == peer)
            return 1;
    return 0;
}

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
    char peers[512], end[128] = "";

    name_peers(xs, n, peers, sizeof(peers));
    if (n > 0)
        tbmcoll_local_end(tbmcoll_xfer_fd(xs[0]), end, sizeof(end));
    return tbmcoll_fail(c, "%s: no progress with %s%s%s for %d ms: it hangs, or the link is down", what, peers,
                        end[0] ? " over " : "", end, c->opts.io_timeout_ms);
}

/* A receive into memory the kernel copies to slowly (opts.recv_staging): into the staging buffer, at the
 * place tbm_recv_staged() gives, then copied out. Returns what tbmcoll_sock_io() does, or -ENOMEM (its first
 * use allocates the buffer). */
static long staged_recv(tbmcoll_comm_t *c, int fd, unsigned char *dst, size_t len, size_t at)
{
    unsigned char *st;
    long n;

    if (!c->staging && posix_memalign((void **)&c->staging, TBM_STAGE_PAGE,
                                      TBMCOLL_STAGING_BYTES + TBM_STAGE_PAGE) != 0) {
        c->staging = NULL;
        return -ENOMEM;
    }
    st = c->staging + at;
    n = tbmcoll_sock_io(fd, 0, st, len < TBMCOLL_STAGING_BYTES ? len : TBMCOLL_STAGING_BYTES);
    if (n > 0)
        memcpy(dst, st, (size_t)n);
    return n;
}

#if defined(__x86_64__)
static void copy_movsb(void *dst, const void *src, size_t n)
{
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

static double ns_now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The best of 16 samples each, taken alternately (a slow spell of the machine hits both), of 8 copies of
 * 64 KiB from a page-aligned source, warm in cache: about 1 ms where the slow case is slow, far less
 * elsewhere. */
static void probe_copies(tbmcoll_copy_probe_t *out)
{
    enum { LEN = 64 << 10, SAMPLES = 16, COPIES = 8 };
    unsigned char *src = NULL, *dst = NULL;
    double best[2] = { 0, 0 }, t;
    int s, k, i;

    if (posix_memalign((void **)&src, TBM_STAGE_PAGE, LEN) != 0 ||
        posix_memalign((void **)&dst, TBM_STAGE_PAGE, LEN + TBM_STAGE_PAGE) != 0) {
        free(src);
        return;
    }
    memset(src, 0x5a, LEN);
    memset(dst, 0, LEN + TBM_STAGE_PAGE);
    for (s = 0; s < SAMPLES; s++)
        for (k = 0; k < 2; k++) {
            t = ns_now();
            for (i = 0; i < COPIES; i++)
                copy_movsb(dst + (k ? 16 : 0), src, LEN);
            t = ns_now() - t;
            if (s > 0 && (best[k] == 0 || t < best[k]))   /* the first round warms the caches */
                best[k] = t;
        }
    out->aligned_ns = best[0] / COPIES;
    out->past_ns = best[1] / COPIES;
    free(src);
    free(dst);
}
#endif

static tbmcoll_copy_probe_t probe_known;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

static void probe_run(void)
{
#if defined(__x86_64__)
    probe_copies(&probe_known);
#endif
    probe_known.stage = tbm_staging_pays(probe_known.aligned_ns, probe_known.past_ns);
}

void tbmcoll_copy_probe(tbmcoll_copy_probe_t *out)
{
    pthread_once(&probe_once, probe_run);
    *out = probe_known;
}

/* One send or receive on a transfer's socket, counted. */
static long xfer_io(tbmcoll_comm_t *c, tbmcoll_xfer_t *x)
{
    long long t0 = tbmcoll_tick(c);
    unsigned char *at = x->buf + x->done;
    size_t len = x->len - x->done, where;
    int staged = !x->is_send && c->opts.recv_staging > 0 &&
                 tbm_recv_staged((uintptr_t)x->buf, x->len, (uintptr_t)at, &where);
    long n = staged ? staged_recv(c, tbmcoll_xfer_fd(x), at, len, where)
                    : tbmcoll_sock_io(tbmcoll_xfer_fd(x), x->is_send, at, len);

    if (n > 0)
        *(x->is_send ? &x->link->sent : &x->link->received) += (uint64_t)n;
    if (c->stats_on) {
        tbmcoll_tock(c, &c->stats.io_us, t0);
        c->stats.io_calls++;
        c->stats.io_bytes += n > 0 ? (uint64_t)n : 0;
        c->stats.staged_bytes += staged && n > 0 ? (uint64_t)n : 0;
    }
    return n;
}

int tbmcoll_xfer_step(tbmcoll_comm_t *c, tbmcoll_xfer_t *x)
{
    long n;

    if (x->done >= x->len)
        return 0;
    n = xfer_io(c, x);
    if (n < 0)
        return (int)-n;
    x->done += (size_t)n;
    return 0;
}

void tbmcoll_fold(tbmcoll_comm_t *c, void *dst, const unsigned char *const *part, int n, size_t count,
                  tbm_dtype_t dt, tbm_redop_t op)
{
    long long t0 = tbmcoll_tick(c);

    tbm_fold(dst, part, n, count, dt, op);
    tbmcoll_tock(c, &c->stats.reduce_us, t0);
}

void tbmcoll_reduce(tbmcoll_comm_t *c, void *dst, const void *a, const void *b, size_t count, tbm_dtype_t dt,
                    tbm_redop_t op)
{
    long long t0 = tbmcoll_tick(c);

    tbm_reduce(dst, a, b, count, dt, op);
    tbmcoll_tock(c, &c->stats.reduce_us, t0);
}

void tbmcoll_stats_reset(tbmcoll_comm_t *c, int on)
{
    if (!c)
        return;
    memset(&c->stats, 0, sizeof(c->stats));
    c->stats_on = on;
}

void tbmcoll_stats_get(const tbmcoll_comm_t *c, tbmcoll_stats_t *out)
{
    memset(out, 0, sizeof(*out));
    if (c)
        *out = c->stats;
}

int tbmcoll_idle(const tbmcoll_comm_t *c, tbmcoll_idle_t *st)
{
    if (st->rounds++ == 0)
        st->since_us = tbm_now_us();
    if (st->rounds <= TBMCOLL_SPINS) {
        sched_yield();
        return 1;
    }
    if (c->opts.spin_us > 0 && tbm_now_us() - st->since_us < c->opts.spin_us) {
        sched_yield();   /* at once when this core has nothing else to run; the peers' turn when it has */
        return 1;
    }
    st->rounds = 0;
    return 0;
}

/* Move what the socket takes (or has) now: until the transfer is done or the socket would block
 * (*would_block = 1). Returns 0, or an error code as tbmcoll_xfer_step(). One call drains as much as it can,
 * so that each wake-up of poll costs few system calls (they are dear under a sandboxing kernel). */
static int xfer_drain(tbmcoll_comm_t *c, tbmcoll_xfer_t *x, int *would_block)
{
    long r;

    *would_block = 0;
    while (x->done < x->len) {
        r = xfer_io(c, x);
        if (r < 0)
            return (int)-r;
        if (r == 0) {
            *would_block = 1;
            return 0;
        }
        x->done += (size_t)r;
    }
    return 0;
}

static size_t xfer_goal(const tbmcoll_xfer_t *x)
{
    return x->goal && x->goal < x->len ? x->goal : x->len;
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
    int i, k, nf, nw, rc, wb, timeout, short_of;
    long long t0;

    memset(ready, 1, sizeof(ready));
    for (;;) {
        nf = 0;
        for (i = 0; i < n; i++) {
            if (xs[i].done >= xs[i].len || !ready[i])
                continue;
            if ((codes[nf] = xfer_drain(c, &xs[i], &wb)) != 0)
                failed[nf++] = &xs[i];
            ready[i] = 0;
        }
        if (nf) {
            for (i = 0, nw = 0; i < n; i++)
                if (xs[i].done < xfer_goal(&xs[i]) && !peer_among(failed, nf, xs[i].link->peer))
                    waiting[nw++] = &xs[i];
            return tbmcoll_fail_xfers(c, failed, codes, nf, waiting, nw, what);
        }
        for (i = 0, k = 0, short_of = 0; i < n; i++) {
            if (xs[i].done >= xs[i].len)
                continue;
            short_of += xs[i].done < xfer_goal(&xs[i]);
            p[k] = (struct pollfd){ .fd = tbmcoll_xfer_fd(&xs[i]), .events = xs[i].is_send ? POLLOUT : POLLIN };
            pend[k++] = &xs[i];
        }
        if (short_of == 0)
            return 0;
        t0 = tbmcoll_tick(c);
        for (;;) {
            timeout = tbmcoll_idle(c, &idle) ? 0 : c->opts.io_timeout_ms;
            c->stats.polls += timeout > 0;
            do
                rc = poll(p, (nfds_t)k, timeout);
            while (rc < 0 && errno == EINTR);
            if (rc < 0)
                return tbmcoll_fail(c, "%s: poll failed: %s", what, strerror(errno));
            if (rc > 0)
                break;
            if (timeout > 0) {   /* named: the transfers short of their goal, what the batch waits for */
                for (i = 0, nw = 0; i < k; i++)
                    if (pend[i]->done < xfer_goal(pend[i]))
                        waiting[nw++] = pend[i];
                return tbmcoll_fail_stalled(c, waiting, nw, what);
            }
        }
        tbmcoll_tock(c, &c->stats.wait_us, t0);
        idle.rounds = 0;
        for (i = 0; i < k; i++)
            if (p[i].revents)
                ready[pend[i] - xs] = 1;
    }
}

int tbmcoll_xfer_run_streams(tbmcoll_comm_t *c, tbmcoll_xfer_t *xs, int n, const char *what)
{
    if (n > BATCH_MAX)
        return tbmcoll_fail(c, "%s: %d transfers at once, at most %d", what, n, BATCH_MAX);
    return run_batch(c, xs, n, what);
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
        /* nearly equal parts in whole pages, the last one takes the rest: the peer splits its side the same
         * way; each part starts as far past a page boundary as the whole, so the receives' alignment (and
         * whether they are staged) is the whole transfer's */
        part = xs[i].len / (size_t)ns / TBM_STAGE_PAGE * TBM_STAGE_PAGE;
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

int tbmcoll_xfer_run_pieces(tbmcoll_comm_t *c, tbmcoll_xfer_t *xs, int n, const char *what)
{
    tbmcoll_xfer_t sub[BATCH_MAX];
    size_t piece = c->opts.segment_bytes, most = 0, r, rounds, at, len;
    int from[BATCH_MAX], i, k, m, both = 0;

    for (i = 0; i < n; i++) {
        if (xs[i].link->nfd != 1 || xs[i].done != 0)
            return tbmcoll_xfer_run(c, xs, n, what);
        most = xs[i].len > most ? xs[i].len : most;
        for (m = 0; m < i; m++)
            both |= xs[m].link == xs[i].link && xs[m].is_send != xs[i].is_send;
    }
    if (n > 2 * TBM_MLX_RING_MAX || piece == 0 || most <= piece || !both)
        return tbmcoll_xfer_run(c, xs, n, what);
    rounds = (most + piece - 1) / piece;
    for (r = 0; r < rounds; r++) {
        for (i = 0, m = 0; i < n; i++) {
            if (!xs[i].is_send) {
                /* whole, with this round's goal: what the peer sends beyond it is read all the same */
                if (xs[i].done < xs[i].len) {
                    sub[m] = xs[i];
                    sub[m].goal = (r + 1) * piece;   /* xfer_goal() caps it at len */
                    from[m++] = i;
                }
                continue;
            }
            tbmcoll_piece_of(xs[i].len, piece, r, &at, &len);
            if (len == 0)
                continue;
            sub[m] = xs[i];
            sub[m].buf = xs[i].buf + at;
            sub[m].len = len;
            from[m++] = i;
        }
        if (run_batch(c, sub, m, what) < 0)
            return -1;
        for (k = 0; k < m; k++)   /* the receives' progress, where the next round goes on from */
            if (!sub[k].is_send)
                xs[from[k]].done = sub[k].done;
    }
    for (i = 0; i < n; i++)
        xs[i].done = xs[i].len;
    return 0;
}

/* The link to a peer: on a ring, sends prefer the right link and receives the left one (for two ranks both
 * neighbours are the same rank: each direction then has its own connection, as the peer expects). */
static tbmcoll_link_t *link_to(tbmcoll_comm_t *c, int peer, int is_send)
{
    if (c->algo != TBMCOLL_ALGO_RING)
        return &c->links[peer];
    if (is_send)
        return peer == c->right.peer ? &c->right : &c->left;
    return peer == c->left.peer ? &c->left : &c->right;
}

int tbmcoll_tcp_p2p(tbmcoll_comm_t *c, const void *sbuf, int to, void *rbuf, int from, size_t bytes)
{
    tbmcoll_xfer_t xs[2];
    int n = 0;

    if (to >= 0)
        xs[n++] = (tbmcoll_xfer_t){ .link = link_to(c, to, 1), .is_send = 1, .buf = (unsigned char *)sbuf,
                                    .len = bytes };
    if (from >= 0)
        xs[n++] = (tbmcoll_xfer_t){ .link = link_to(c, from, 0), .is_send = 0, .buf = rbuf, .len = bytes };
    if (to >= 0 && from >= 0)
        return tbmcoll_xfer_run_pieces(c, xs, n, "send/recv");
    return tbmcoll_xfer_run(c, xs, n, to >= 0 ? "send" : "recv");
}
