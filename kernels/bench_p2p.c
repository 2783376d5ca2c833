/* bench_p2p.c: `macnode bench -o p2p`: every cable (pair of connected ranks) alone in turn, the others
 * waiting: the rate each way and both ways at once, and the latency (half a round trip). */
#include "config.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Elements of the bandwidth messages (-e) and of the latency ones (-b, at least one). */
static size_t p2p_count(const bench_t *b)
{
    size_t n = b->maxb / tbm_dtype_size(b->dt);
    return n ? n : 1;
}

static size_t p2p_lat_count(const bench_t *b)
{
    size_t n = b->minb / tbm_dtype_size(b->dt);
    return n ? n : 1;
}

/* One direction of one cable: `from` sends iters messages of count elements, `to` receives them and answers
 * with one element; the sender's clock gives the rate. Returns 0 and, at the sender, the rate in GB/s. */
static int one_way(bench_t *b, int from, int to, size_t count, float *gbs, float *wrong, tbm_err_t *err)
{
    size_t es = tbm_dtype_size(b->dt);
    int i, me = b->rank;
    double t0 = 0;

    for (i = 0; i < b->warmup + b->iters; i++) {
        if (i == b->warmup && me == from)
            t0 = bench_now_s();
        if (me == from ? tbmcoll_send(b->c, b->sendbuf, count, b->dt, to, err)
                       : tbmcoll_recv(b->c, b->recvbuf, count, b->dt, from, err))
            return -1;
        if (i < b->warmup || i == b->warmup + b->iters - 1) {   /* the warm-ups, and the end: an answer */
            if (me == from ? tbmcoll_recv(b->c, b->recvbuf + p2p_count(b) * tbm_dtype_size(b->dt), 1, b->dt, to, err)
                           : tbmcoll_send(b->c, b->sendbuf, 1, b->dt, from, err))
                return -1;
        }
    }
    if (me == from)
        *gbs = (float)((double)count * es * b->iters / (bench_now_s() - t0) / 1e9);
    else if (b->check)
        *wrong += (float)bench_count_wrong(b, b->recvbuf, count, from);
    return 0;
}

static int measure_cable(bench_t *b, int x, int y, float *res, tbm_err_t *err)
{
    size_t count = p2p_count(b), lat = p2p_lat_count(b);
    int me = b->rank, peer = me == x ? y : x, i;
    double t0 = 0;

    if (one_way(b, x, y, count, &res[P_AB], &res[P_WRONG], err) < 0 ||
        one_way(b, y, x, count, &res[P_BA], &res[P_WRONG], err) < 0)
        return -1;
    /* both ways at once */
    for (i = 0; i < b->warmup + b->iters; i++) {
        if (i == b->warmup)
            t0 = bench_now_s();
        if (tbmcoll_sendrecv(b->c, b->sendbuf, peer, b->recvbuf, peer, count, b->dt, err) < 0)
            return -1;
    }
    if (tbmcoll_sendrecv(b->c, b->sendbuf, peer, b->recvbuf + p2p_count(b) * tbm_dtype_size(b->dt), peer, 1, b->dt, err) < 0)
        return -1;
    if (me == x)
        res[P_BOTH] = (float)(2.0 * count * tbm_dtype_size(b->dt) * b->iters / (bench_now_s() - t0) / 1e9);
    if (b->check)
        res[P_WRONG] += (float)bench_count_wrong(b, b->recvbuf, count, peer);
    /* latency: ping-pong of -b bytes, x's clock, half the round trip */
    for (i = 0; i < 10 + b->lat_iters; i++) {
        if (i == 10)
            t0 = bench_now_s();
        if (me == x ? tbmcoll_send(b->c, b->sendbuf, lat, b->dt, y, err) < 0 ||
                      tbmcoll_recv(b->c, b->recvbuf, lat, b->dt, y, err) < 0
                    : tbmcoll_recv(b->c, b->recvbuf, lat, b->dt, x, err) < 0 ||
                      tbmcoll_send(b->c, b->sendbuf, lat, b->dt, x, err) < 0)
            return -1;
    }
    if (me == x)
        res[P_LAT] = (float)((bench_now_s() - t0) * 1e6 / b->lat_iters / 2);
    if (b->check)
        res[P_WRONG] += (float)bench_count_wrong(b, b->recvbuf, lat, peer);
    return 0;
}

int bench_p2p(bench_t *b)
{
    tbm_err_t err = { { 0 } };
    rank_card_t *cards = calloc((size_t)b->n, sizeof(*cards)), mine;
    int(*pairs)[2] = calloc((size_t)b->n * (size_t)b->n, sizeof(*pairs));
    float *res = NULL, *sum = NULL;
    int x, y, np = 0, k, rc = 3;
    char what[64];

    memset(&mine, 0, sizeof(mine));
    if (!cards || !pairs)
        goto oom;
    if (gethostname(mine.host, sizeof(mine.host) - 1) < 0)
        snprintf(mine.host, sizeof(mine.host), "rank%d", b->rank);
    for (y = 0; y < b->n; y++) {
        tbmcoll_peer_info_t pi;
        if (y == b->rank || tbmcoll_peer_info(b->c, y, &pi, &err) < 0)
            continue;
        mine.peer[y].connected = pi.connected;
        snprintf(mine.peer[y].ifname, sizeof(mine.peer[y].ifname), "%s", pi.local_if);
    }
    if (tbmcoll_allgather(b->c, &mine, cards, sizeof(mine) / 4, TBM_DT_I32, &err) < 0)
        goto fail;
    for (x = 0; x < b->n; x++)
        for (y = x + 1; y < b->n; y++)
            if (cards[x].peer[y].connected && cards[y].peer[x].connected)
                pairs[np][0] = x, pairs[np][1] = y, np++;
    res = calloc((size_t)np * P_FIELDS + 1, sizeof(*res));
    sum = calloc((size_t)np * P_FIELDS + 1, sizeof(*sum));
    if (!res || !sum)
        goto oom;
    bench_progress_start(b, np);
    for (k = 0; k < np; k++) {
        if (tbmcoll_barrier(b->c, &err) < 0)
            goto fail;
        if ((b->rank == pairs[k][0] || b->rank == pairs[k][1]) &&
            measure_cable(b, pairs[k][0], pairs[k][1], res + k * P_FIELDS, &err) < 0)
            goto fail;
        snprintf(what, sizeof(what), "%d of %d cables", k + 1, np);
        bench_progress_step(b, 1, what);
    }
    if (np && tbmcoll_allreduce(b->c, res, sum, (size_t)np * P_FIELDS, TBM_DT_F32, TBM_OP_SUM, &err) < 0)
        goto fail;
    bench_progress_end(b);
    if (b->rank == 0) {
        if (np == 0)
            fprintf(stderr, "%s: p2p: no two ranks are connected (one rank?): nothing to measure\n", BENCH_PROG);
        bench_print_cables(b, cards, (const int(*)[2])pairs, np, sum, p2p_count(b) * tbm_dtype_size(b->dt),
                           p2p_lat_count(b) * tbm_dtype_size(b->dt));
    }
    if (np == 0)
        rc = 2;
    else
        rc = b->wrong_total ? 1 : 0;
    goto out;
oom:
    fprintf(stderr, "%s: out of memory\n", BENCH_PROG);
    goto out;
fail:
    bench_progress_end(b);
    fprintf(stderr, "%s: p2p: %s\n", BENCH_PROG, err.msg);
out:
    free(cards);
    free(pairs);
    free(res);
    free(sum);
    return rc;
}

traffic_card_t *bench_traffic(bench_t *b)
{
    traffic_card_t *cards = calloc((size_t)b->n, sizeof(*cards)), *mine = calloc(1, sizeof(*mine));
    tbm_err_t err = { { 0 } };
    tbmcoll_peer_info_t pi;
    int y;

    if (!cards || !mine) {
        fprintf(stderr, "%s: --traffic: out of memory\n", BENCH_PROG);
        goto fail;
    }
    if (gethostname(mine->host, sizeof(mine->host) - 1) < 0)
        snprintf(mine->host, sizeof(mine->host), "rank%d", b->rank);
    for (y = 0; y < b->n; y++) {   /* counted before the gathering adds its own bytes */
        if (y == b->rank || tbmcoll_peer_info(b->c, y, &pi, &err) < 0)
            continue;
        mine->peer[y].connected = pi.connected;
        snprintf(mine->peer[y].ifname, sizeof(mine->peer[y].ifname), "%s", pi.local_if);
        mine->peer[y].sent[0] = (uint32_t)pi.sent, mine->peer[y].sent[1] = (uint32_t)(pi.sent >> 32);
        mine->peer[y].received[0] = (uint32_t)pi.received, mine->peer[y].received[1] = (uint32_t)(pi.received >> 32);
    }
    if (tbmcoll_allgather(b->c, mine, cards, sizeof(*mine) / 4, TBM_DT_I32, &err) < 0) {
        fprintf(stderr, "%s: --traffic: %s\n", BENCH_PROG, err.msg);
        goto fail;
    }
    free(mine);
    return cards;
fail:
    free(mine);
    free(cards);
    return NULL;
}
