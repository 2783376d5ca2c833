/* refwork.c: the reference workload's arithmetic (see refwork.h). */
#include "refwork.h"

#include <math.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void tbm_rw_fill(uint64_t seed, uint64_t stream, float *out, size_t n, float scale)
{
    uint64_t s = seed ^ (stream * 0xd1b54a32d192ed03ull);
    size_t i;

    for (i = 0; i < n; i++) {
        /* 24 random bits -> [-1, 1) exactly representable, then scaled: the same on every host */
        float u = (float)((int64_t)(splitmix64(&s) >> 40) - (1 << 23)) / (float)(1 << 23);
        out[i] = u * scale;
    }
}

void tbm_rw_input(const tbm_refwork_t *w, float *x)
{
    tbm_rw_fill(w->seed, 0, x, (size_t)w->batch * (size_t)w->hidden, 1.0f);
}

void tbm_rw_weights(const tbm_refwork_t *w, int layer, int row0, int nrows, float *rows)
{
    float scale = 1.0f / sqrtf((float)w->hidden);
    int r;

    /* one stream per row, so any shard of rows is generated alone, identical to the whole */
    for (r = 0; r < nrows; r++)
        tbm_rw_fill(w->seed, 1 + (uint64_t)layer * (uint64_t)w->hidden + (uint64_t)(row0 + r),
                    rows + (size_t)r * (size_t)w->hidden, (size_t)w->hidden, scale);
}

void tbm_rw_partial(const tbm_refwork_t *w, const float *x, const float *rows, int row0, int nrows, float *y)
{
    size_t H = (size_t)w->hidden;
    int b, i;
    size_t j;

    memset(y, 0, (size_t)w->batch * H * sizeof(*y));
    for (b = 0; b < w->batch; b++)
        for (i = 0; i < nrows; i++) {
            float xv = x[(size_t)b * H + (size_t)(row0 + i)];
            const float *wr = rows + (size_t)i * H;
            float *yr = y + (size_t)b * H;
            for (j = 0; j < H; j++)
                yr[j] += xv * wr[j];
        }
}

void tbm_rw_relu(float *y, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (!(y[i] > 0.0f))
            y[i] = 0.0f;
}

void tbm_rw_shard(int hidden, int rank, int n, int *row0, int *nrows)
{
    int base = hidden / n, extra = hidden % n;

    *nrows = base + (rank < extra);
    *row0 = rank * base + (rank < extra ? rank : extra);
}

void tbm_rw_compare(const float *a, const float *b, size_t n, double rtol, double atol, tbm_rw_diff_t *d)
{
    size_t i;

    memset(d, 0, sizeof(*d));
    d->bitwise = 1;
    for (i = 0; i < n; i++) {
        double x = a[i], y = b[i], diff, mag;
        if (memcmp(&a[i], &b[i], sizeof(float)) == 0)
            continue;
        d->bitwise = 0;
        d->n_differ++;
        if (!isfinite(x) || !isfinite(y)) {
            d->nonfinite = 1;
            d->n_beyond++;
            continue;
        }
        diff = fabs(x - y);
        mag = fmax(fmax(fabs(x), fabs(y)), 1e-30);
        if (diff > atol + rtol * mag)
            d->n_beyond++;
        if (diff > d->max_abs) {
            d->max_abs = diff;
            d->where = i;
        }
        if (diff / mag > d->max_rel)
            d->max_rel = diff / mag;
    }
}
