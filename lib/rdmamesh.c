/* rdmamesh.c: the largest RDMA mesh and ring among a group's Macs when some of its cables cannot do RDMA
 * (see rdmamesh.h): every subset tried, a ring found by the table of paths over subsets (Held and Karp). */
#include "rdmamesh.h"

#include <stdlib.h>
#include <string.h>

static int count(uint32_t m)
{
    return __builtin_popcount(m);
}

static int lowest(uint32_t m)
{
    return __builtin_ctz(m);
}

/* Of two sets of one size, a keeps the lower-numbered Mac where they first differ. */
static int better(uint32_t a, uint32_t b)
{
    uint32_t d = a ^ b;

    return b == 0 || (a & (d & (0u - d))) != 0;
}

static int is_mesh(uint32_t m, const uint32_t *ok)
{
    uint32_t rest;
    int i;

    for (rest = m; rest; rest &= rest - 1) {
        i = lowest(rest);
        if (((ok[i] | (1u << i)) & m) != m)
            return 0;
    }
    return 1;
}

static uint32_t largest_mesh(uint32_t full, const uint32_t *ok)
{
    uint32_t m, best = 0;

    for (m = 1; m <= full; m++)
        if (count(m) >= 2 && count(m) >= count(best) && (count(m) > count(best) || better(m, best)) &&
            is_mesh(m, ok))
            best = m;
    return best;
}

/* ends[m]: the Macs at which a path from m's lowest Mac through all of m (over RDMA pairs) can end. */
static void fill_paths(uint32_t full, const uint32_t *ok, uint16_t *ends)
{
    uint32_t m, vs, next;
    int s, v;

    for (m = 1; m <= full; m++) {
        if (count(m) == 1)
            ends[m] = (uint16_t)m;
        if (!ends[m])
            continue;
        s = lowest(m);
        for (vs = ends[m]; vs; vs &= vs - 1) {
            v = lowest(vs);
            next = ok[v] & full & ~m & ~((2u << s) - 1);   /* Macs above the start, not yet on the path */
            for (; next; next &= next - 1)
                ends[m | (1u << lowest(next))] |= (uint16_t)(1u << lowest(next));
        }
    }
}

/* The ring over m in cycle order from its lowest Mac, read back from the table of paths (lowest Macs first at
 * each step), then turned round so that it goes on to the lower of its two neighbours' ends. */
static void ring_order(uint32_t m, const uint32_t *ok, const uint16_t *ends, tbm_rdma_subsets_t *out)
{
    int s = lowest(m), k = count(m) - 1, v = lowest(ends[m] & ok[s]), i, t;

    out->n_ring = count(m);
    for (;;) {
        out->ring_order[k--] = v;
        if (m == (1u << v) || k < 0)
            break;
        m &= ~(1u << v);
        v = lowest(ends[m] & ok[v]);
    }
    for (i = 1, k = out->n_ring - 1; i < k; i++, k--) {
        t = out->ring_order[i];
        out->ring_order[i] = out->ring_order[k];
        out->ring_order[k] = t;
    }
}

int tbm_rdma_subsets(size_t n, const uint32_t *ok, tbm_rdma_subsets_t *out)
{
    uint32_t full, m, best = 0;
    uint16_t *ends;

    memset(out, 0, sizeof(*out));
    if (n == 0 || n > TBM_RDMA_SEARCH_MAX)
        return -1;
    full = (uint32_t)((1ul << n) - 1);
    ends = calloc((size_t)full + 1, sizeof(*ends));
    if (!ends)
        return -1;
    out->mesh = largest_mesh(full, ok);
    fill_paths(full, ok, ends);
    for (m = 1; m <= full; m++)
        if (count(m) >= 3 && count(m) > count(out->mesh) && count(m) >= count(best) &&
            (count(m) > count(best) || better(m, best)) && (ends[m] & ok[lowest(m)]))
            best = m;
    if (best) {
        out->ring = best;
        ring_order(best, ok, ends, out);
    }
    free(ends);
    return 0;
}
