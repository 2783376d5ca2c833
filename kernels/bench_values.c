/* bench_values.c: the values of `macnode bench`'s check: every rank's inputs are small integers (exact in
 * every type, and so are their sums), and the value every element of each operation's output must hold. */
#include "config.h"
#include "bench.h"

#include <string.h>

int bench_value_of(int rank, size_t i)
{
    return (int)(((size_t)rank * 3 + i * 7) % 5) - 2;
}

static void put(tbm_dtype_t dt, unsigned char *p, size_t i, int v)
{
    float f = (float)v;
    int32_t iv = v;
    uint16_t h;

    switch (dt) {
    case TBM_DT_F32: memcpy(p + i * 4, &f, 4); break;
    case TBM_DT_I32: memcpy(p + i * 4, &iv, 4); break;
    case TBM_DT_F16: h = tbm_f32_to_f16(f); memcpy(p + i * 2, &h, 2); break;
    case TBM_DT_BF16: h = tbm_f32_to_bf16(f); memcpy(p + i * 2, &h, 2); break;
    }
}

double bench_get(tbm_dtype_t dt, const unsigned char *p, size_t i)
{
    float f;
    int32_t iv;
    uint16_t h;

    switch (dt) {
    case TBM_DT_F32: memcpy(&f, p + i * 4, 4); return f;
    case TBM_DT_I32: memcpy(&iv, p + i * 4, 4); return iv;
    case TBM_DT_F16: memcpy(&h, p + i * 2, 2); return tbm_f16_to_f32(h);
    case TBM_DT_BF16: memcpy(&h, p + i * 2, 2); return tbm_bf16_to_f32(h);
    }
    return 0;
}

void bench_fill(tbm_dtype_t dt, unsigned char *p, size_t count, int rank, size_t first)
{
    size_t i;

    for (i = 0; i < count; i++)
        put(dt, p, i, bench_value_of(rank, first + i));
}

/* Element i reduced over all ranks, in rank order. */
static int reduced(const bench_t *b, size_t i)
{
    int k, v, acc = bench_value_of(0, i);

    for (k = 1; k < b->n; k++) {
        v = bench_value_of(k, i);
        if (b->redop == TBM_OP_SUM)
            acc += v;
        else if (v > acc)
            acc = v;
    }
    return acc;
}

int bench_expected(const bench_t *b, const shape_t *s, size_t i)
{
    switch (b->op) {
    case OP_ALLREDUCE: return reduced(b, i);
    case OP_ALLGATHER: return bench_value_of((int)(i / s->per), i % s->per);
    case OP_REDUCESCATTER: return reduced(b, (size_t)b->rank * s->per + i);
    case OP_BROADCAST: return bench_value_of(b->root, i);
    default: return bench_value_of((b->rank + b->n - 1) % b->n, i);   /* sendrecv: from rank-1 */
    }
}

long bench_count_wrong(const bench_t *b, const unsigned char *buf, size_t count, int sender)
{
    size_t i;
    long wrong = 0;

    for (i = 0; i < count; i++)
        wrong += bench_get(b->dt, buf, i) != (double)bench_value_of(sender, i);
    return wrong;
}
