/* rdmamesh.h: in a group where some cables cannot do RDMA (a 40 Gb/s cable in a Thunderbolt 5 mesh), the
 * largest set of its Macs that still runs JACCL: all pairs joined by RDMA cables (a mesh, for jaccl), and the
 * largest cycle over RDMA cables (a ring, for jaccl-ring) when it holds more Macs. */
#ifndef TBM_RDMAMESH_H
#define TBM_RDMAMESH_H

#include <stddef.h>
#include <stdint.h>

/* The search is exhaustive over the subsets of the group (2^n of them, with a ring's path table of 2^n
 * entries): groups of more Macs are not searched. */
#define TBM_RDMA_SEARCH_MAX 16

typedef struct tbm_rdma_subsets {
    uint32_t mesh;               /* bit i: Mac i, the largest full RDMA mesh (2 Macs or more); 0 when none */
    uint32_t ring;               /* the largest RDMA ring (3 Macs or more) when larger than the mesh; else 0 */
    int ring_order[TBM_RDMA_SEARCH_MAX];   /* its Macs in cycle order, from the lowest */
    int n_ring;
} tbm_rdma_subsets_t;

/* `n` Macs numbered 0..n-1; bit j of ok[i] (and of ok[j]) set when Macs i and j are joined by cables that all
 * do RDMA. Ties are broken the same way every time: of two sets of one size, the one that keeps the
 * lower-numbered Mac where they first differ (the set without the last Macs). Returns 0; -1 when n is 0 or
 * above TBM_RDMA_SEARCH_MAX (nothing searched), or when out of memory. */
int tbm_rdma_subsets(size_t n, const uint32_t *ok, tbm_rdma_subsets_t *out);

#endif
