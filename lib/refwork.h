/* refwork.h: the reference workload that compares a single Mac with a mesh: a few layers of a
 * tensor-parallel network (y = relu(x W_l)), weights and inputs made from a seed, W_l split by rows across
 * the ranks so that each layer is one all-reduce of partial products. Pure: generation, the partial
 * products and the comparison of two outputs. */
#ifndef TBM_REFWORK_H
#define TBM_REFWORK_H

#include <stddef.h>
#include <stdint.h>

typedef struct tbm_refwork {
    uint64_t seed;
    int layers;
    int hidden;                  /* H: each W_l is H x H */
    int batch;                   /* B: x is B x H */
} tbm_refwork_t;

/* `n` deterministic floats, uniform in [-scale, scale], from (seed, stream): the same on every host. */
void tbm_rw_fill(uint64_t seed, uint64_t stream, float *out, size_t n, float scale);

/* The input x (batch x hidden). */
void tbm_rw_input(const tbm_refwork_t *w, float *x);

/* Rows [row0, row0 + nrows) of W_layer (each row `hidden` floats), scaled by 1/sqrt(hidden). */
void tbm_rw_weights(const tbm_refwork_t *w, int layer, int row0, int nrows, float *rows);

/* The rows' share of x W: y[b][j] = sum over i in [row0, row0+nrows) of x[b][i] * W[i][j], summed in i order. */
void tbm_rw_partial(const tbm_refwork_t *w, const float *x, const float *rows, int row0, int nrows, float *y);

void tbm_rw_relu(float *y, size_t n);

/* The rows rank r of n holds: an even split, the first (hidden mod n) ranks one more. */
void tbm_rw_shard(int hidden, int rank, int n, int *row0, int *nrows);

/* How two outputs differ. */
typedef struct tbm_rw_diff {
    int bitwise;                 /* identical bits */
    size_t n_differ;             /* elements whose bits differ */
    double max_abs;              /* largest absolute difference */
    double max_rel;              /* largest |a-b| / max(|a|, |b|, 1e-30) */
    size_t where;                /* index of the largest absolute difference */
    int nonfinite;               /* a NaN or an infinity in either */
    size_t n_beyond;             /* elements with |a-b| > atol + rtol * max(|a|, |b|) */
} tbm_rw_diff_t;

/* Compare two outputs; the tolerance is numpy's allclose: |a-b| <= atol + rtol * max(|a|, |b|). */
void tbm_rw_compare(const float *a, const float *b, size_t n, double rtol, double atol, tbm_rw_diff_t *d);

#endif
