/* coll_schedule.c: the engine that runs a schedule of steps on one or two links (the ring's pipelined
 * collectives, and the halving's exchange with one peer): each step sends on the out link while data arrives on
 * the in link and is folded segment by segment as it comes. */
#include "coll.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

/* A schedule being run: where its sends and receives stand. */
typedef struct run {
    tbmcoll_comm_t *c;
    tbmcoll_link_t *in, *out;        /* receive on in (the left), send on out (the right); may be one link */
    const tbmcoll_step_t *st;
    int n;
    tbm_dtype_t dt;
    tbm_redop_t op;
    size_t esize;
    const char *what;
    int ss;                          /* current send step, bytes sent in it */
    size_t sent;
    int rs;                          /* current receive step, bytes received and folded in it */
    size_t got, done;
    int lockstep;                    /* one peer both ways: send at most a piece ahead of what came in */
} run_t;

/* Skip steps with nothing to send or receive (empty chunks when count < ranks). */
static void skip_empty(run_t *r)
{
    while (r->ss < r->n && r->st[r->ss].send_len == 0)
        r->ss++;
    while (r->rs < r->n && r->st[r->rs].recv_len == 0)
        r->rs++;
}

/* Bytes of the current send step that may go out now. */
static size_t send_avail(const run_t *r)
{
    const tbmcoll_step_t *s = &r->st[r->ss];
    size_t ready;

    if (r->lockstep && r->rs < r->n) {
        ready = r->got + r->c->opts.segment_bytes;
        return ready < s->send_len ? ready : s->send_len;
    }
    if (s->gate < 0 || s->gate < r->rs)
        return s->send_len;
    ready = s->gate == r->rs ? r->done : 0;
    return ready < s->send_len ? ready : s->send_len;
}

/* Fold the received bytes of the current step in segments (whole elements); all of them at the end. */
static void fold_received(run_t *r)
{
    const tbmcoll_step_t *s = &r->st[r->rs];
    size_t upto = r->got;

    if (!s->fold_dst) {
        r->done = r->got;
        return;
    }
    if (r->got < s->recv_len) {
        if (r->got - r->done < r->c->opts.segment_bytes)
            return;
        upto = r->done + (r->got - r->done) / r->esize * r->esize;
    }
    if (s->recv_second)
        tbmcoll_reduce(r->c, s->fold_dst + r->done, s->fold_b + r->done, s->recv + r->done,
                       (upto - r->done) / r->esize, r->dt, r->op);
    else
        tbmcoll_reduce(r->c, s->fold_dst + r->done, s->recv + r->done, s->fold_b + r->done,
                       (upto - r->done) / r->esize, r->dt, r->op);
    r->done = upto;
}

/* One receive on the in link; 0 or an error code (tbmcoll_xfer_step). */
static int do_recv(run_t *r)
{
    const tbmcoll_step_t *s = &r->st[r->rs];
    tbmcoll_xfer_t x = { .link = r->in, .is_send = 0, .buf = s->recv, .len = s->recv_len, .done = r->got };
    int code = tbmcoll_xfer_step(r->c, &x);

    if (code)
        return code;
    r->got = x.done;
    fold_received(r);
    if (r->done == s->recv_len) {
        r->rs++;
        r->got = r->done = 0;
    }
    return 0;
}

/* One send on the out link, of what the gate allows; 0 or an error code. */
static int do_send(run_t *r)
{
    const tbmcoll_step_t *s = &r->st[r->ss];
    tbmcoll_xfer_t x = { .link = r->out, .is_send = 1, .buf = (unsigned char *)s->send,
                         .len = send_avail(r), .done = r->sent };
    int code = tbmcoll_xfer_step(r->c, &x);

    if (code)
        return code;
    r->sent = x.done;
    if (r->sent == s->send_len) {
        r->ss++;
        r->sent = 0;
    }
    return 0;
}

/* Fail naming the neighbours whose links failed (code != 0) or, when stalled, those we wait for. A failure
 * on one side looks at the other side too: when both neighbours have closed, both are named. */
static int run_fail(run_t *r, int left_code, int right_code, int stalled)
{
    tbmcoll_xfer_t lx = { .link = r->in, .is_send = 0 }, rx = { .link = r->out, .is_send = 1 };
    tbmcoll_xfer_t *xs[2], *waiting[1] = { &lx };
    int codes[2], n = 0;

    if (!stalled && !left_code)
        left_code = tbmcoll_peer_closed(r->in->fd);
    if (!stalled && !right_code && r->out != r->in)
        right_code = tbmcoll_peer_closed(r->out->fd);
    if (r->out == r->in && right_code) {   /* one peer: named once */
        left_code = left_code ? left_code : right_code;
        right_code = 0;
    }
    if (left_code)
        xs[n] = &lx, codes[n++] = left_code;
    if (right_code)
        xs[n] = &rx, codes[n++] = right_code;
    if (stalled)
        return tbmcoll_fail_stalled(r->c, xs, n, r->what);
    /* the left still owes data and did not fail: name it as awaited (it may be the cause) */
    return tbmcoll_fail_xfers(r->c, xs, codes, n, waiting, !left_code && r->rs < r->n, r->what);
}

/* Move what can move now without waiting: receive from the left, send what the gate allows to the right.
 * Returns 1 when something moved, 0 when nothing did, -1 after failing. */
static int run_try(run_t *r)
{
    int ss = r->ss, rs = r->rs, lcode = 0, rcode = 0;
    size_t sent = r->sent, got = r->got;

    if (r->rs < r->n)
        lcode = do_recv(r);
    if (r->ss < r->n && send_avail(r) > r->sent)
        rcode = do_send(r);
    if (lcode || rcode)
        return run_fail(r, lcode, rcode, 0);
    return ss != r->ss || rs != r->rs || sent != r->sent || got != r->got;
}

/* Sleep in poll until the left has data or the right takes data, bounded by io_timeout. While this rank
 * still owes the right neighbour data, the right link is also watched for its closing (nothing else arrives
 * on it during a collective), so the death of the right neighbour is seen even while this rank only
 * receives. Returns 0, or -1 after failing. */
static int run_wait(run_t *r, int *watch_right)
{
    struct pollfd p[2];
    int want_send = r->ss < r->n && send_avail(r) > r->sent, want_recv = r->rs < r->n, rc, code;

    *watch_right = *watch_right && r->ss < r->n;   /* once all is sent, the right may finish and close */
    if (!want_send && !want_recv)
        return tbmcoll_fail(r->c, "%s: the ring schedule waits on itself (step %d)", r->what, r->ss);
    p[0] = (struct pollfd){ .fd = want_recv ? r->in->fd : -1, .events = POLLIN };
    p[1] = (struct pollfd){ .fd = want_send || *watch_right ? r->out->fd : -1,
                            .events = (short)((want_send ? POLLOUT : 0) | (*watch_right ? POLLIN : 0)) };
    do
        rc = poll(p, 2, r->c->opts.io_timeout_ms);
    while (rc < 0 && errno == EINTR);
    if (rc < 0)
        return tbmcoll_fail(r->c, "%s: poll failed: %s", r->what, strerror(errno));
    if (rc == 0)
        return run_fail(r, want_recv, !want_recv, 1);
    if (*watch_right && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
        if ((code = tbmcoll_peer_closed(r->out->fd)) != 0)
            return run_fail(r, 0, code, 0);
        *watch_right = !(p[1].revents & POLLIN);   /* data from the right is not ours: stop watching */
    }
    return 0;
}

/* Run a schedule: move data while it moves, yield briefly (and spin up to spin_us), then sleep in poll. */
static int run_steps(run_t *r)
{
    tbmcoll_idle_t idle = { 0, 0 };
    int watch_right = 1, moved;
    long long t0;

    for (skip_empty(r); r->ss < r->n || r->rs < r->n; skip_empty(r)) {
        if ((moved = run_try(r)) < 0)
            return -1;
        if (moved) {
            idle.rounds = 0;
            continue;
        }
        t0 = tbmcoll_tick(r->c);
        if (!tbmcoll_idle(r->c, &idle)) {
            r->c->stats.polls++;
            if (run_wait(r, &watch_right) < 0)
                return -1;
        }
        tbmcoll_tock(r->c, &r->c->stats.wait_us, t0);
    }
    return 0;
}

static int schedule(tbmcoll_comm_t *c, tbmcoll_link_t *in, tbmcoll_link_t *out, const tbmcoll_step_t *st, int n,
                    tbm_dtype_t dt, tbm_redop_t op, const char *what, int lockstep)
{
    run_t run = { .c = c, .in = in, .out = out, .st = st, .n = n, .dt = dt, .op = op,
                  .esize = tbm_dtype_size(dt), .what = what, .lockstep = lockstep };

    return run_steps(&run);
}

int tbmcoll_schedule_run(tbmcoll_comm_t *c, tbmcoll_link_t *in, tbmcoll_link_t *out, const tbmcoll_step_t *st,
                         int n, tbm_dtype_t dt, tbm_redop_t op, const char *what)
{
    return schedule(c, in, out, st, n, dt, op, what, 0);
}

int tbmcoll_pair_fold(tbmcoll_comm_t *c, tbmcoll_link_t *l, const void *send, size_t send_len, void *recv,
                      size_t recv_len, void *fold_dst, const void *fold_b, int recv_second, tbm_dtype_t dt,
                      tbm_redop_t op, const char *what)
{
    tbmcoll_step_t st = { .send = send, .send_len = send_len, .recv = recv, .recv_len = recv_len,
                          .fold_dst = fold_dst, .fold_b = fold_b, .recv_second = recv_second, .gate = -1 };

    return schedule(c, l, l, &st, 1, dt, op, what, 1);
}
