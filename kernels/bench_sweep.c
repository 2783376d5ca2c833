/* bench_sweep.c: `macnode bench`'s sweep of sizes in the form of nccl-tests: per size, warm-ups, timed
 * iterations (the time is the maximum over ranks), then one checked run; out of place and in place. With
 * -T both, libtbmcoll and Open MPI take turns at each size, a row each per turn. */
#include "config.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

static shape_t shape_of(const bench_t *b, size_t bytes)
{
    size_t es = tbm_dtype_size(b->dt);
    shape_t s = { 0, 0, 0 };

    if (b->op == OP_ALLGATHER || b->op == OP_REDUCESCATTER) {
        s.per = bytes / es / (size_t)b->n;
        s.count = s.per * (size_t)b->n;
    } else {
        s.count = bytes / es;
    }
    s.bytes = s.count * es;
    return s;
}


/* Run the operation once in the given placement. */
static int run_once(bench_t *b, const shape_t *s, int in_place, tbm_err_t *err)
{
    size_t es = tbm_dtype_size(b->dt), mine = (size_t)b->rank * s->per * es;

    switch (b->op) {
    case OP_ALLREDUCE:
        return tbmcoll_allreduce(b->c, in_place ? b->recvbuf : b->sendbuf, b->recvbuf, s->count, b->dt, b->redop,
                                 err);
    case OP_ALLGATHER:
        return tbmcoll_allgather(b->c, in_place ? b->recvbuf + mine : b->sendbuf, b->recvbuf, s->per, b->dt, err);
    case OP_REDUCESCATTER:
        return tbmcoll_reduce_scatter(b->c, b->sendbuf, in_place ? b->sendbuf + mine : b->recvbuf, s->per, b->dt,
                                      b->redop, err);
    case OP_BROADCAST:
        return tbmcoll_broadcast(b->c, b->recvbuf, s->count, b->dt, b->root, err);
    default:
        return tbmcoll_sendrecv(b->c, b->sendbuf, (b->rank + 1) % b->n, b->recvbuf, (b->rank + b->n - 1) % b->n,
                                s->count, b->dt, err);
    }
}

/* Fill the inputs, run once, count the elements that differ from the expected values. */
static long check_once(bench_t *b, const shape_t *s, int in_place, tbm_err_t *err)
{
    size_t es = tbm_dtype_size(b->dt), i, n = s->count, mine = (size_t)b->rank * s->per * es;
    const unsigned char *out = b->recvbuf;
    long wrong = 0;

    if (b->op == OP_ALLGATHER)
        bench_fill(b->dt, in_place ? b->recvbuf + mine : b->sendbuf, s->per, b->rank, 0);
    else if (b->op == OP_REDUCESCATTER || !in_place)
        bench_fill(b->dt, b->sendbuf, s->count, b->rank, 0);
    else
        bench_fill(b->dt, b->recvbuf, s->count, b->rank, 0);
    if (b->op == OP_BROADCAST)
        bench_fill(b->dt, b->recvbuf, s->count, b->rank, 0);
    if (run_once(b, s, in_place, err) < 0)
        return -1;
    if (b->op == OP_REDUCESCATTER) {
        out = in_place ? b->sendbuf + mine : b->recvbuf;
        n = s->per;
    }
    for (i = 0; i < n; i++)
        wrong += bench_get(b->dt, out, i) != (double)bench_expected(b, s, i);
    return wrong;
}

static double busbw_factor(const bench_t *b)
{
    double n = b->n;

    switch (b->op) {
    case OP_ALLREDUCE: return 2 * (n - 1) / n;
    case OP_ALLGATHER:
    case OP_REDUCESCATTER: return (n - 1) / n;
    default: return 1;
    }
}

/* Where the time of one operation went, per rank, for --verbose (tbmcoll_stats, per iteration). */
enum { M_US, M_IO_US, M_CALLS, M_BYTES, M_REDUCE_US, M_WAIT_US, M_POLLS, M_STAGED, M_FIELDS };

static void per_iteration(const bench_t *b, double us, float *m)
{
    tbmcoll_stats_t st;

    tbmcoll_stats_get(b->c, &st);
    m[M_US] = (float)us;
    m[M_IO_US] = (float)st.io_us / (float)b->iters;
    m[M_CALLS] = (float)st.io_calls / (float)b->iters;
    m[M_BYTES] = (float)st.io_bytes / (float)b->iters;
    m[M_REDUCE_US] = (float)st.reduce_us / (float)b->iters;
    m[M_WAIT_US] = (float)st.wait_us / (float)b->iters;
    m[M_POLLS] = (float)st.polls / (float)b->iters;
    m[M_STAGED] = (float)st.staged_bytes / (float)b->iters;
}

static int measure(bench_t *b, const shape_t *s, int in_place, result_t *r, tbm_err_t *err)
{
    float m[M_FIELDS], max[M_FIELDS];
    int32_t wrong32, all;
    double t0;
    int i;

    for (i = 0; i < b->warmup; i++)
        if (run_once(b, s, in_place, err) < 0)
            return -1;
    if (tbmcoll_barrier(b->c, err) < 0)
        return -1;
    tbmcoll_stats_reset(b->c, b->verbose);
    t0 = bench_now_s();
    for (i = 0; i < b->iters; i++)
        if (run_once(b, s, in_place, err) < 0)
            return -1;
    per_iteration(b, (bench_now_s() - t0) * 1e6 / b->iters, m);
    tbmcoll_stats_reset(b->c, 0);
    /* the time is the slowest rank's; with --verbose each counter is its largest over the ranks too */
    if (tbmcoll_allreduce(b->c, m, max, b->verbose ? M_FIELDS : 1, TBM_DT_F32, TBM_OP_MAX, err) < 0)
        return -1;
    r->wrong = 0;
    if (b->check) {
        long w = check_once(b, s, in_place, err);
        if (w < 0)
            return -1;
        wrong32 = (int32_t)(w > INT32_MAX ? INT32_MAX : w);
        if (tbmcoll_allreduce(b->c, &wrong32, &all, 1, TBM_DT_I32, TBM_OP_SUM, err) < 0)
            return -1;
        r->wrong = all;
    }
    r->ran = 1;
    r->us = max[M_US];
    r->algbw = (double)s->bytes / (r->us * 1e-6) / 1e9;
    r->busbw = r->algbw * busbw_factor(b);
    if (b->verbose) {
        r->io_us = max[M_IO_US];
        r->io_calls = max[M_CALLS];
        r->io_bytes = max[M_BYTES];
        r->reduce_us = max[M_REDUCE_US];
        r->wait_us = max[M_WAIT_US];
        r->polls = max[M_POLLS];
        r->staged = max[M_STAGED];
    }
    return 0;
}

/* Broadcast has one buffer (in place only); sendrecv two (out of place only). */
static int placement_applies(const bench_t *b, int in_place)
{
    switch (b->op) {
    case OP_BROADCAST: return in_place;
    case OP_SENDRECV: return !in_place;
    default: return 1;
    }
}

int bench_sweep(bench_t *b)
{
    tbm_err_t err = { { 0 } };
    size_t bytes;
    int place, first_json = 1, k = 0, steps = 0, i, rounds = b->turns ? 2 * b->turns : 1;
    double total = 0;
    char what[64];
    traffic_card_t *cards = NULL;

    for (bytes = b->minb; bytes <= b->maxb; bytes *= b->factor) {
        shape_t s = shape_of(b, bytes);
        total += ((double)s.bytes * (b->iters + b->warmup + b->check) + 4096) * rounds;
        steps++;
        if (bytes > b->maxb / b->factor)
            break;
    }
    bench_progress_start(b, total);
    if (b->speaker)
        bench_print_header(b);
    for (bytes = b->minb; bytes <= b->maxb; bytes *= b->factor) {
        shape_t s = shape_of(b, bytes);
        k++;
        for (i = 0; s.count != 0 && i < rounds; i++) {
            result_t r[2] = { { 0 }, { 0 } };
            if (b->turns) {   /* -T both: libtbmcoll, then Open MPI, then libtbmcoll ... */
                b->c = b->turn[i % 2];
                b->rank = tbmcoll_rank(b->c);   /* the two may number the processes differently */
            }
            for (place = 0; place < 2; place++)
                if (placement_applies(b, place) && measure(b, &s, place, &r[place], &err) < 0) {
                    bench_progress_end(b);
                    fprintf(stderr, "%s: %s%s\n", BENCH_PROG, b->turns ? (i % 2 ? "Open MPI: " : "TCP: ") : "",
                            err.msg);
                    return 3;
                }
            if (b->speaker) {
                bench_print_size(b, &s);
                for (place = 0; place < 2; place++)
                    bench_print_result(b, &s, &r[place], place, &first_json);
                bench_print_row_end(b);
                if (b->verbose)
                    bench_print_counters(b, &s, r);
            }
        }
        snprintf(what, sizeof(what), "%d of %d sizes", k, steps);
        bench_progress_step(b, ((double)s.bytes * (b->iters + b->warmup + b->check) + 4096) * rounds, what);
        if (bytes > b->maxb / b->factor)   /* the next step would pass -e (or overflow) */
            break;
    }
    bench_progress_end(b);
    if (b->traffic && !(cards = bench_traffic(b)))
        return 3;
    if (b->speaker)
        bench_print_footer(b, cards);
    free(cards);
    return b->wrong_total ? 1 : 0;
}
