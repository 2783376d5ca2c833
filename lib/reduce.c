/* reduce.c: element-wise reductions, float16/bfloat16 conversions and chunking for the collective kernels. */
#include "reduce.h"

#include <math.h>
#include <string.h>

static const char *const dtype_names[TBM_DT_COUNT] = { "f32", "f16", "bf16", "i32" };
static const char *const dtype_long_names[TBM_DT_COUNT] = { "float32", "float16", "bfloat16", "int32" };
static const char *const redop_names[TBM_OP_COUNT] = { "sum", "max" };

size_t tbm_dtype_size(tbm_dtype_t dt)
{
    switch (dt) {
    case TBM_DT_F32:
    case TBM_DT_I32:
        return 4;
    case TBM_DT_F16:
    case TBM_DT_BF16:
        return 2;
    }
    return 0;
}

const char *tbm_dtype_name(tbm_dtype_t dt)
{
    return (unsigned)dt < TBM_DT_COUNT ? dtype_names[dt] : "?";
}

const char *tbm_redop_name(tbm_redop_t op)
{
    return (unsigned)op < TBM_OP_COUNT ? redop_names[op] : "?";
}

int tbm_dtype_parse(const char *name, tbm_dtype_t *out, tbm_err_t *err)
{
    int i;

    for (i = 0; name && i < TBM_DT_COUNT; i++) {
        if (strcmp(name, dtype_names[i]) == 0 || strcmp(name, dtype_long_names[i]) == 0) {
            *out = (tbm_dtype_t)i;
            return 0;
        }
    }
    return tbm_errprintf(err, "unknown element type '%s': use f32, f16, bf16 or i32", name ? name : "");
}

int tbm_redop_parse(const char *name, tbm_redop_t *out, tbm_err_t *err)
{
    int i;

    for (i = 0; name && i < TBM_OP_COUNT; i++) {
        if (strcmp(name, redop_names[i]) == 0) {
            *out = (tbm_redop_t)i;
            return 0;
        }
    }
    return tbm_errprintf(err, "unknown reduction '%s': use sum or max", name ? name : "");
}

/* Type punning through a union (defined in C11), which compilers keep in registers. */
typedef union f32_word {
    float f;
    uint32_t u;
} f32_word_t;

static uint32_t f32_bits(float f)
{
    f32_word_t w = { .f = f };
    return w.u;
}

static float bits_f32(uint32_t u)
{
    f32_word_t w = { .u = u };
    return w.f;
}

/* The conversions are written without branches (every case computed, one chosen by a mask), so that the
 * block loops below vectorize. They assume IEEE binary32 arithmetic in round-to-nearest-even, C's default. */

/* all ones when cond, else zero */
static uint32_t mask_if(int cond)
{
    return 0u - (uint32_t)(cond != 0);
}

static uint32_t pick(uint32_t mask, uint32_t yes, uint32_t no)
{
    return (yes & mask) | (no & ~mask);
}

static inline float decode_f16(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = h & 0x7fffu;                                   /* exponent and mantissa */
    /* finite: fields moved into place, then rebiased by 2^112 (exact, subnormals included) */
    uint32_t finite = f32_bits(bits_f32(em << 13) * 0x1p112f);
    uint32_t special = 0x7f800000u | ((em & 0x3ffu) << 13);     /* infinity, or NaN with its payload */

    return bits_f32(sign | pick(mask_if(em >= 0x7c00u), special, finite));
}

static inline uint16_t encode_f16(float f)
{
    uint32_t x = f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t a = x & 0x7fffffffu;
    /* normal result: rebias, round the 13 dropped bits to nearest even (a carry may reach infinity) */
    uint32_t normal = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
    /* below 2^-14: adding 0.5 puts the half's subnormal unit (2^-24) at the float's last bit; the add rounds */
    uint32_t sub = f32_bits(bits_f32(a) + 0.5f) - 0x3f000000u;
    uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);               /* quiet, payload kept */
    uint32_t r = pick(mask_if(a < 0x38800000u), sub, normal);

    r = pick(mask_if(a >= 0x47800000u), 0x7c00u, r);
    return (uint16_t)(sign | pick(mask_if(a > 0x7f800000u), nan, r));
}

static inline float decode_bf16(uint16_t h)
{
    return bits_f32((uint32_t)h << 16);
}

static inline uint16_t encode_bf16(float f)
{
    uint32_t x = f32_bits(f);
    uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;   /* a carry may reach infinity: correct */
    uint32_t quiet = (x >> 16) | 0x40u;                           /* NaN: keep it NaN, quiet */

    return (uint16_t)pick(mask_if((x & 0x7fffffffu) > 0x7f800000u), quiet, rounded);
}

/* The public conversions (the loops below use the inline forms directly). */
float tbm_f16_to_f32(uint16_t h)
{
    return decode_f16(h);
}

uint16_t tbm_f32_to_f16(float f)
{
    return encode_f16(f);
}

float tbm_bf16_to_f32(uint16_t h)
{
    return decode_bf16(h);
}

uint16_t tbm_f32_to_bf16(float f)
{
    return encode_bf16(f);
}

/* Max with NaN propagation: the result depends only on the operands' order, which callers fix. */
static float max_f32(float a, float b)
{
    return (a > b || isnan(a)) ? a : b;
}

/* Reductions run in blocks copied into local arrays: they never alias (restrict), so the loops vectorize (a
 * whole block is a constant trip count, vectorized even at -O2), and dst may be a or b since a block is
 * loaded before it is stored. A last partial block combines stale elements beyond its end, never stored.
 * float16/bfloat16 are widened, combined in float32 and narrowed in one pass (one pass per step was slower:
 * every step stored and reloaded the block). */
#define BLOCK 256

typedef union block {
    float f[BLOCK];
    int32_t i[BLOCK];
    uint16_t h[BLOCK];
} block_t;

static void sum_f32(block_t *restrict x, const block_t *restrict y)
{
    size_t k;

    for (k = 0; k < BLOCK; k++)
        x->f[k] += y->f[k];
}

static void max_f32s(block_t *restrict x, const block_t *restrict y)
{
    size_t k;

    for (k = 0; k < BLOCK; k++)
        x->f[k] = max_f32(x->f[k], y->f[k]);
}

static void sum_i32(block_t *restrict x, const block_t *restrict y)
{
    size_t k;

    for (k = 0; k < BLOCK; k++)
        x->i[k] = (int32_t)((uint32_t)x->i[k] + (uint32_t)y->i[k]);   /* wraps, no undefined overflow */
}

static void max_i32(block_t *restrict x, const block_t *restrict y)
{
    size_t k;

    for (k = 0; k < BLOCK; k++)
        x->i[k] = y->i[k] > x->i[k] ? y->i[k] : x->i[k];
}

/* sum_<type> and max_<type> for a two-byte type, given its widening and narrowing. */
#define HALF_COMBINERS(type, widen, narrow)                                                     \
    static void sum_##type(block_t *restrict x, const block_t *restrict y)                     \
    {                                                                                          \
        size_t k;                                                                              \
                                                                                               \
        for (k = 0; k < BLOCK; k++)                                                            \
            x->h[k] = narrow(widen(x->h[k]) + widen(y->h[k]));                                 \
    }                                                                                          \
    static void max_##type(block_t *restrict x, const block_t *restrict y)                     \
    {                                                                                          \
        size_t k;                                                                              \
                                                                                               \
        for (k = 0; k < BLOCK; k++)                                                            \
            x->h[k] = narrow(max_f32(widen(x->h[k]), widen(y->h[k])));                         \
    }

HALF_COMBINERS(f16, decode_f16, encode_f16)
HALF_COMBINERS(bf16, decode_bf16, encode_bf16)

typedef void (*combine_fn)(block_t *restrict x, const block_t *restrict y);

/* [type][operator], in the order of tbm_dtype_t and tbm_redop_t */
static const combine_fn combiners[TBM_DT_COUNT][TBM_OP_COUNT] = {
    [TBM_DT_F32] = { [TBM_OP_SUM] = sum_f32, [TBM_OP_MAX] = max_f32s },
    [TBM_DT_F16] = { [TBM_OP_SUM] = sum_f16, [TBM_OP_MAX] = max_f16 },
    [TBM_DT_BF16] = { [TBM_OP_SUM] = sum_bf16, [TBM_OP_MAX] = max_bf16 },
    [TBM_DT_I32] = { [TBM_OP_SUM] = sum_i32, [TBM_OP_MAX] = max_i32 },
};

/* Whole blocks of four-byte types are combined where they lie, without the copies into local blocks: one
 * loop for each way dst may alias (none, dst == a, dst == b), each with restrict pointers that do not alias,
 * over a whole block (a constant trip count: vectorized at -O2). The same operations on the same operands in
 * the same order as the copying path, so the same bits. Only for buffers aligned to their element (else the
 * copying path). */
#define DIRECT_COMBINERS(name, T, expr)                                                         \
    static void name##_3(T *restrict d, const T *restrict a, const T *restrict b)              \
    {                                                                                          \
        size_t k;                                                                              \
                                                                                               \
        for (k = 0; k < BLOCK; k++) {                                                          \
            T x = a[k], y = b[k];                                                              \
            d[k] = (expr);                                                                     \
        }                                                                                      \
    }                                                                                          \
    static void name##_da(T *restrict d, const T *restrict b)                                  \
    {                                                                                          \
        size_t k;                                                                              \
                                                                                               \
        for (k = 0; k < BLOCK; k++) {                                                          \
            T x = d[k], y = b[k];                                                              \
            d[k] = (expr);                                                                     \
        }                                                                                      \
    }                                                                                          \
    static void name##_db(T *restrict d, const T *restrict a)                                  \
    {                                                                                          \
        size_t k;                                                                              \
                                                                                               \
        for (k = 0; k < BLOCK; k++) {                                                          \
            T x = a[k], y = d[k];                                                              \
            d[k] = (expr);                                                                     \
        }                                                                                      \
    }                                                                                          \
    static void name(void *d, const void *a, const void *b, size_t blocks)                     \
    {                                                                                          \
        size_t i, at;                                                                          \
                                                                                               \
        for (i = 0; i < blocks; i++) {                                                         \
            at = i * BLOCK;                                                                    \
            if (d == a)                                                                        \
                name##_da((T *)d + at, (const T *)b + at);                                     \
            else if (d == b)                                                                   \
                name##_db((T *)d + at, (const T *)a + at);                                     \
            else                                                                               \
                name##_3((T *)d + at, (const T *)a + at, (const T *)b + at);                   \
        }                                                                                      \
    }

DIRECT_COMBINERS(direct_sum_f32, float, x + y)
DIRECT_COMBINERS(direct_max_f32, float, max_f32(x, y))
DIRECT_COMBINERS(direct_sum_i32, int32_t, (int32_t)((uint32_t)x + (uint32_t)y))
DIRECT_COMBINERS(direct_max_i32, int32_t, y > x ? y : x)

typedef void (*direct_fn)(void *d, const void *a, const void *b, size_t blocks);

static const direct_fn directs[TBM_DT_COUNT][TBM_OP_COUNT] = {
    [TBM_DT_F32] = { [TBM_OP_SUM] = direct_sum_f32, [TBM_OP_MAX] = direct_max_f32 },
    [TBM_DT_I32] = { [TBM_OP_SUM] = direct_sum_i32, [TBM_OP_MAX] = direct_max_i32 },
};

int tbm_reduce(void *dst, const void *a, const void *b, size_t count, tbm_dtype_t dt, tbm_redop_t op)
{
    block_t x = { { 0 } }, y = { { 0 } };
    size_t es = tbm_dtype_size(dt), done = 0, n;
    combine_fn combine;

    if ((unsigned)op >= TBM_OP_COUNT || es == 0)
        return -1;
    combine = combiners[dt][op];
    if (directs[dt][op] && count >= BLOCK && ((uintptr_t)dst | (uintptr_t)a | (uintptr_t)b) % es == 0) {
        done = count / BLOCK * BLOCK;
        directs[dt][op](dst, a, b, count / BLOCK);
    }
    for (; done < count; done += n) {
        n = count - done < BLOCK ? count - done : BLOCK;
        memcpy(&x, (const unsigned char *)a + done * es, n * es);
        memcpy(&y, (const unsigned char *)b + done * es, n * es);
        combine(&x, &y);
        memcpy((unsigned char *)dst + done * es, &x, n * es);
    }
    return 0;
}

/* Elements folded at a time: every part's block and dst's stay in cache while the n-1 reductions run. */
#define FOLD_BLOCK_BYTES (16 * 1024)

void tbm_fold(void *dst, const unsigned char *const *part, int n, size_t count, tbm_dtype_t dt, tbm_redop_t op)
{
    size_t es = tbm_dtype_size(dt), step, at, len;
    unsigned char *d = dst;
    int j;

    if (es == 0 || n < 1)
        return;
    if (n == 1) {
        memmove(d, part[0], count * es);
        return;
    }
    step = FOLD_BLOCK_BYTES / es;
    for (at = 0; at < count; at += len) {
        size_t off = at * es;
        len = count - at < step ? count - at : step;
        tbm_reduce(d + off, part[0] + off, part[1] + off, len, dt, op);
        for (j = 2; j < n; j++)
            tbm_reduce(d + off, d + off, part[j] + off, len, dt, op);
    }
}

void tbm_chunk(size_t count, int n, int i, size_t *off, size_t *len)
{
    size_t base, extra, k;

    if (n < 1 || i < 0 || i >= n) {
        *off = *len = 0;
        return;
    }
    base = count / (size_t)n;
    extra = count % (size_t)n;
    k = (size_t)i;
    *len = base + (k < extra ? 1 : 0);
    *off = k * base + (k < extra ? k : extra);
}

/* How many of the n ranks run on rank r's machine (host[k] names rank k's machine). */
static int ranks_on(int n, const uint64_t *host, int r)
{
    int k, on = 0;

    for (k = 0; k < n; k++)
        on += host[k] == host[r];
    return on;
}

/* Whether some machine runs more of the n ranks than it has cores (cpus[r]: rank r's machine's). */
static int cores_outnumbered(int n, const uint64_t *host, const uint32_t *cpus)
{
    int r;

    for (r = 0; r < n; r++)
        if ((uint32_t)ranks_on(n, host, r) > cpus[r])
            return 1;
    return 0;
}

int tbm_mesh_halving_pays(int n, const uint64_t *host, const uint32_t *cpus)
{
    if (n < 4 || (n & (n - 1)) != 0 || !host || !cpus)
        return 0;
    return cores_outnumbered(n, host, cpus);
}

int tbm_mesh_streams_pay(int n, const uint64_t *host, const uint32_t *cpus)
{
    int r;

    if (!host || !cpus || n < 1)
        return 0;
    for (r = 0; r < n; r++)
        if ((uint32_t)ranks_on(n, host, r) >= cpus[r])
            return 0;
    return 1;
}

int tbm_small_plan(int n, const uint64_t *host, const uint32_t *cpus)
{
    int r, on, most = 0;

    if (n < 3 || !host || !cpus)
        return TBM_SMALL_ONEROUND;
    if (cores_outnumbered(n, host, cpus))
        return TBM_SMALL_ROOTED;
    for (r = 0; r < n; r++) {
        on = ranks_on(n, host, r);
        most = on > most ? on : most;
    }
    return most >= 8 && (n & (n - 1)) == 0 ? TBM_SMALL_DOUBLING : TBM_SMALL_ONEROUND;
}

int tbm_recv_staged(uintptr_t start, size_t len, uintptr_t at, size_t *where)
{
    unsigned past = (unsigned)(start & 63);

    *where = 0;
    if (len < TBM_STAGE_MIN || past == 0 || past > 31)
        return 0;
    *where = (size_t)((at + 32) & (TBM_STAGE_PAGE - 1));
    return 1;
}

int tbm_staging_pays(double aligned_ns, double past_ns)
{
    if (!(aligned_ns > 0) || !(past_ns > 0))
        return 0;
    return past_ns >= TBM_STAGE_SLOWER * aligned_ns;
}

int tbm_local_cpu(int rank, int n, const int *cpus, int ncpus)
{
    if (!cpus || n < 1 || rank < 0 || rank >= n || n > ncpus)
        return -1;
    return cpus[rank];
}
