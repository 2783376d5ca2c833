/* bench_output.c: what `macnode bench` prints on rank 0: the sweep as a table (nccl-tests' columns), CSV or
 * JSON, and the p2p table of cables. */
#include "config.h"
#include "bench.h"

#include <stdio.h>

const char *bench_transport_name(const bench_t *b)
{
    return tbmcoll_algo_name(tbmcoll_algo(b->c));
}

/* -l: where the ranks run (--bind). */
static void print_binding(const bench_t *b)
{
    int r;

    if (b->cpu[0] < 0) {
        printf("# local ranks: not bound to CPUs (--bind none, or more ranks than CPUs)\n");
        return;
    }
    printf("# local ranks: each bound to a CPU of its own (rank:CPU");
    for (r = 0; r < b->local_ranks; r++)
        printf(" %d:%d", r, b->cpu[r]);
    printf(")\n");
}

/* TCP: whether receives go through the staging buffer (-Z), and on what measurement when -Z auto. */
static void print_staging(const bench_t *b)
{
    tbmcoll_copy_probe_t p;

    if (b->opts.recv_staging != 0) {
        printf("# receives: %s (-Z %s)\n", b->opts.recv_staging > 0 ? "staged" : "not staged",
               b->opts.recv_staging > 0 ? "on" : "off");
        return;
    }
    tbmcoll_copy_probe(&p);
    if (p.aligned_ns <= 0 || p.past_ns <= 0) {
        printf("# receives: not staged (-Z auto: not measured on this CPU)\n");
        return;
    }
    printf("# receives: %s (-Z auto: a copy to 16 bytes past a 64-byte boundary takes %.1fx the aligned one "
           "on this CPU)\n", p.stage ? "staged" : "not staged", p.past_ns / p.aligned_ns);
}

void bench_print_header(const bench_t *b)
{
    if (b->format == FMT_CSV) {
        printf("op,transport,ranks,size_bytes,count,type,redop,root,placement,time_us,algbw_gbs,busbw_gbs,wrong\n");
    } else if (b->format == FMT_JSON) {
        printf("{\"op\": \"%s\", \"transport\": \"%s\", \"ranks\": %d, \"type\": \"%s\", \"redop\": \"%s\", "
               "\"iterations\": %d, \"warmup\": %d, \"check\": %s, \"results\": [", bench_op_names[b->op],
               bench_transport_name(b), b->n, tbm_dtype_name(b->dt), tbm_redop_name(b->redop), b->iters, b->warmup,
               b->check ? "true" : "false");
    } else {
        printf("# macnode bench: %s, %d ranks, transport %s, %s %s, %d iterations, %d warm-up, check %s\n",
               bench_op_names[b->op], b->n, bench_transport_name(b), tbm_dtype_name(b->dt),
               tbm_redop_name(b->redop), b->iters, b->warmup, b->check ? "on" : "off");
        if (b->local_ranks)
            print_binding(b);
        if (b->op == OP_ALLREDUCE && tbmcoll_algo(b->c) != TBMCOLL_ALGO_MPI)
        {
            size_t kib = (tbmcoll_small_bytes(b->c) ? tbmcoll_small_bytes(b->c) : TBMCOLL_SMALL_BYTES) / 1024;

            printf("# all-reduce up to %zu KiB: %s\n", kib, tbmcoll_small_plan(b->c));
            printf("# all-reduce above %zu KiB: %s\n", kib, tbmcoll_allreduce_plan(b->c));
        }
        if (tbmcoll_algo(b->c) == TBMCOLL_ALGO_MESH && b->n > 1) {
            int k = tbmcoll_streams_in_use(b->c);
            printf("# TCP streams per pair of ranks: %d%s\n", k,
                   b->opts.streams == 0 && k == 1 ? " (no core to spare on some machine for more; -S to choose)" : "");
        }
        if (tbmcoll_algo(b->c) != TBMCOLL_ALGO_MPI)
            print_staging(b);
        printf("#\n#%58s%-39s%s\n", "", "out-of-place", "in-place");
        printf("# %12s %12s %6s %6s %5s %10s %8s %8s %7s %10s %8s %8s %7s\n", "size", "count", "type", "redop",
               "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
        printf("# %12s %12s %6s %6s %5s %10s %8s %8s %7s %10s %8s %8s %7s\n", "(B)", "(elements)", "", "", "",
               "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
    }
}

void bench_print_result(bench_t *b, const shape_t *s, const result_t *r, int in_place, int *first_json)
{
    const char *place = in_place ? "in-place" : "out-of-place";

    if (!r->ran) {
        if (b->format == FMT_TABLE)
            printf(" %10s %8s %8s %7s", "-", "-", "-", "-");
        return;
    }
    b->busbw_sum += r->busbw;
    b->busbw_count++;
    b->wrong_total += r->wrong;
    if (b->format == FMT_TABLE)
        printf(" %10.1f %8.3f %8.3f %7ld", r->us, r->algbw, r->busbw, r->wrong);
    else if (b->format == FMT_CSV)
        printf("%s,%s,%d,%zu,%zu,%s,%s,%d,%s,%.2f,%.4f,%.4f,%ld\n", bench_op_names[b->op], bench_transport_name(b), b->n,
               s->bytes, s->count, tbm_dtype_name(b->dt), tbm_redop_name(b->redop), b->root, place, r->us,
               r->algbw, r->busbw, r->wrong);
    else
        printf("%s\n  {\"size_bytes\": %zu, \"count\": %zu, \"placement\": \"%s\", \"time_us\": %.2f, "
               "\"algbw_gbs\": %.4f, \"busbw_gbs\": %.4f, \"wrong\": %ld}", *first_json ? "" : ",", s->bytes,
               s->count, place, r->us, r->algbw, r->busbw, r->wrong), *first_json = 0;
}

static unsigned long long u64_of(const uint32_t w[2])
{
    return (unsigned long long)w[0] | (unsigned long long)w[1] << 32;
}

/* --traffic: each rank's bytes to and from each peer it is connected to, and the interface they left by. */
static void print_traffic(const bench_t *b, const traffic_card_t *cards)
{
    int r, p, first = 1;

    if (b->format == FMT_TABLE)
        printf("# Traffic: payload bytes each rank's operations sent to and received from each peer over the sweep\n"
               "# (warm-up and check included; not the connections' handshake, nor TCP/IP's headers)\n"
               "# %4s %-20s %4s %-20s %-10s %16s %16s\n", "rank", "host", "peer", "peer host", "interface",
               "sent (B)", "received (B)");
    else if (b->format == FMT_CSV)
        printf("traffic,rank,host,peer,peer_host,interface,sent_bytes,received_bytes\n");
    else
        printf(",\n\"traffic\": [");
    for (r = 0; r < b->n; r++)
        for (p = 0; p < b->n; p++) {
            const char *ifn = cards[r].peer[p].ifname[0] ? cards[r].peer[p].ifname : "-";
            if (p == r || !cards[r].peer[p].connected)
                continue;
            if (b->format == FMT_TABLE)
                printf("# %4d %-20.20s %4d %-20.20s %-10s %16llu %16llu\n", r, cards[r].host, p, cards[p].host, ifn,
                       u64_of(cards[r].peer[p].sent), u64_of(cards[r].peer[p].received));
            else if (b->format == FMT_CSV)
                printf("traffic,%d,%s,%d,%s,%s,%llu,%llu\n", r, cards[r].host, p, cards[p].host, ifn,
                       u64_of(cards[r].peer[p].sent), u64_of(cards[r].peer[p].received));
            else
                printf("%s\n  {\"rank\": %d, \"host\": \"%s\", \"peer\": %d, \"peer_host\": \"%s\", "
                       "\"interface\": \"%s\", \"sent_bytes\": %llu, \"received_bytes\": %llu}", first ? "" : ",",
                       r, cards[r].host, p, cards[p].host, ifn, u64_of(cards[r].peer[p].sent),
                       u64_of(cards[r].peer[p].received)), first = 0;
        }
    if (b->format == FMT_JSON)
        printf("\n]");
    else if (b->format == FMT_TABLE)
        printf("#\n");
}

void bench_print_footer(const bench_t *b, const traffic_card_t *cards)
{
    double avg = b->busbw_count ? b->busbw_sum / b->busbw_count : 0;

    if (b->format == FMT_JSON) {
        printf("\n]");
        if (cards)
            print_traffic(b, cards);
        printf(", \"wrong_total\": %ld, \"avg_busbw_gbs\": %.4f}\n", b->wrong_total, avg);
        return;
    }
    if (b->format == FMT_TABLE)
        printf("# Wrong values       : %ld %s\n# Avg bus bandwidth  : %.4f GB/s\n#\n", b->wrong_total,
               b->wrong_total ? "FAILED" : "OK", avg);
    if (cards)
        print_traffic(b, cards);
}

/* The start of a table row: the size's columns. */
void bench_print_size(const bench_t *b, const shape_t *s)
{
    char root[16] = "-";

    if (b->format != FMT_TABLE)
        return;
    if (b->op == OP_BROADCAST)
        snprintf(root, sizeof(root), "%d", b->root);
    printf("  %12zu %12zu %6s %6s %5s", s->bytes, s->count, tbm_dtype_name(b->dt),
           b->op == OP_ALLREDUCE || b->op == OP_REDUCESCATTER ? tbm_redop_name(b->redop) : "-", root);
}

void bench_print_row_end(const bench_t *b)
{
    if (b->format == FMT_TABLE)
        printf("\n");
    fflush(stdout);
}

static void cable_end(const rank_card_t *cards, int r, int peer, char *out, size_t outsz)
{
    const char *ifn = cards[r].peer[peer].ifname;

    snprintf(out, outsz, "%s%s%s", cards[r].host, *ifn ? ":" : "", ifn);
}

void bench_print_cables(bench_t *b, const rank_card_t *cards, const int (*pairs)[2], int np, const float *res,
                        size_t size, size_t lat)
{
    char ea[HOST_MAX + 24], eb[HOST_MAX + 24];
    double slowest = 0, sum = 0;
    int k, worst = -1;
    long wrong = 0;

    if (b->format == FMT_CSV)
        printf("op,transport,rank_a,end_a,rank_b,end_b,size_bytes,a_to_b_gbs,b_to_a_gbs,both_ways_gbs,"
               "latency_bytes,latency_us,wrong\n");
    else if (b->format == FMT_JSON)
        printf("{\"op\": \"p2p\", \"transport\": \"%s\", \"ranks\": %d, \"type\": \"%s\", \"size_bytes\": %zu, "
               "\"latency_bytes\": %zu, \"iterations\": %d, \"warmup\": %d, \"latency_iterations\": %d, "
               "\"check\": %s, \"cables\": [", bench_transport_name(b), b->n, tbm_dtype_name(b->dt), size, lat,
               b->iters, b->warmup, b->lat_iters, b->check ? "true" : "false");
    else
        printf("# macnode bench: p2p, %d ranks, transport %s, every cable alone in turn: %zu-byte messages "
               "(%d iterations, %d warm-up),\n# latency as half the round trip of %zu bytes (%d round trips), "
               "check %s\n#\n# %4s %-24s %4s %-24s %9s %9s %9s %9s %7s\n# %4s %-24s %4s %-24s %9s %9s %9s %9s\n",
               b->n, bench_transport_name(b), size, b->iters, b->warmup, lat, b->lat_iters, b->check ? "on" : "off",
               "rank", "end", "rank", "end", "a->b", "b->a", "both", "latency", "#wrong", "a", "", "b", "",
               "(GB/s)", "(GB/s)", "(GB/s)", "(us)");
    for (k = 0; k < np; k++) {
        const float *r = res + k * P_FIELDS;
        int x = pairs[k][0], y = pairs[k][1];
        double low = r[P_AB] < r[P_BA] ? r[P_AB] : r[P_BA];
        cable_end(cards, x, y, ea, sizeof(ea));
        cable_end(cards, y, x, eb, sizeof(eb));
        wrong += (long)r[P_WRONG];
        sum += low;
        if (worst < 0 || low < slowest)
            slowest = low, worst = k;
        if (b->format == FMT_CSV)
            printf("p2p,%s,%d,%s,%d,%s,%zu,%.4f,%.4f,%.4f,%zu,%.2f,%ld\n", bench_transport_name(b), x, ea, y, eb, size,
                   r[P_AB], r[P_BA], r[P_BOTH], lat, r[P_LAT], (long)r[P_WRONG]);
        else if (b->format == FMT_JSON)
            printf("%s\n  {\"rank_a\": %d, \"end_a\": \"%s\", \"rank_b\": %d, \"end_b\": \"%s\", \"a_to_b_gbs\": %.4f, "
                   "\"b_to_a_gbs\": %.4f, \"both_ways_gbs\": %.4f, \"latency_us\": %.2f, \"wrong\": %ld}",
                   k ? "," : "", x, ea, y, eb, r[P_AB], r[P_BA], r[P_BOTH], r[P_LAT], (long)r[P_WRONG]);
        else
            printf("  %4d %-24s %4d %-24s %9.3f %9.3f %9.3f %9.1f %7ld\n", x, ea, y, eb, r[P_AB], r[P_BA], r[P_BOTH],
                   r[P_LAT], (long)r[P_WRONG]);
    }
    b->wrong_total = wrong;
    if (b->format == FMT_JSON) {
        printf("\n], \"wrong_total\": %ld, \"slowest_gbs\": %.4f, \"mean_gbs\": %.4f}\n", wrong, slowest,
               np ? sum / np : 0);
    } else if (b->format == FMT_TABLE) {
        if (worst >= 0) {
            cable_end(cards, pairs[worst][0], pairs[worst][1], ea, sizeof(ea));
            cable_end(cards, pairs[worst][1], pairs[worst][0], eb, sizeof(eb));
            printf("# Slowest cable      : %s <-> %s, %.3f GB/s one way (mean of the cables %.3f GB/s)\n", ea, eb,
                   slowest, sum / np);
        }
        printf("# Wrong values       : %ld %s\n#\n", wrong, wrong ? "FAILED" : "OK");
    }
    fflush(stdout);
}

void bench_print_counters(const bench_t *b, const shape_t *s, const result_t *r)
{
    FILE *f = b->format == FMT_TABLE ? stdout : stderr;
    int place;

    for (place = 0; place < 2; place++) {
        const result_t *x = &r[place];
        if (!x->ran)
            continue;
        fprintf(f, "#   %zu B %s, per op (largest over ranks): %.1f us; send/recv %.1f us in %.0f calls "
                "(%.1f KiB each; %.0f KiB staged), reduce %.1f us, waiting %.1f us (%.1f polls), rest %.1f us\n",
                s->bytes, place ? "in-place" : "out-of-place", x->us, x->io_us, x->io_calls,
                x->io_calls > 0 ? x->io_bytes / x->io_calls / 1024 : 0, x->staged / 1024, x->reduce_us, x->wait_us,
                x->polls, x->us - x->io_us - x->reduce_us - x->wait_us);
    }
    fflush(f);
}
