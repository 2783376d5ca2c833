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

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

/* Shift right by `shift` (1..31) rounding to nearest, ties to even. */
static uint32_t shift_round_even(uint32_t v, unsigned shift)
{
    uint32_t kept = v >> shift;
    uint32_t rest = v & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);

    if (rest > half || (rest == half && (kept & 1)))
        kept++;
    return kept;
}

float tbm_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;

    if (exp == 0) {
        float mag = (float)man * 0x1p-24f;   /* zero or subnormal: exact */
        return sign ? -mag : mag;
    }
    if (exp == 31)
        return bits_f32(sign | 0x7f800000u | (man << 13));
    return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t tbm_f32_to_f16(float f)
{
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t exp = (x >> 23) & 0xff;
    uint32_t man = x & 0x7fffff;
    int e = (int)exp - 127 + 15;

    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
    if (e >= 31)
        return sign | 0x7c00;
    if (e <= 0) {
        if (e < -10)
            return sign;                      /* below half the smallest subnormal */
        /* subnormal result; a carry into the exponent field gives the smallest normal, as it should */
        return (uint16_t)(sign | shift_round_even(man | 0x800000, (unsigned)(14 - e)));
    }
    /* a carry out of the mantissa bumps the exponent, up to infinity: correct rounding */
    return (uint16_t)(sign | shift_round_even(((uint32_t)e << 23) | man, 13));
}

float tbm_bf16_to_f32(uint16_t h)
{
    return bits_f32((uint32_t)h << 16);
}

uint16_t tbm_f32_to_bf16(float f)
{
    uint32_t x = f32_bits(f);

    if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffff))
        return (uint16_t)((x >> 16) | 0x40);  /* NaN: keep it NaN, quiet */
    return (uint16_t)shift_round_even(x, 16);   /* a carry may reach infinity: correct */
}

/* Max with NaN propagation: the result depends only on the operands' order, which callers fix. */
static float max_f32(float a, float b)
{
    return (a > b || isnan(a)) ? a : b;
}

static float apply_f32(float a, float b, tbm_redop_t op)
{
    return op == TBM_OP_SUM ? a + b : max_f32(a, b);
}

/* The element loops: load a and b, combine, store into dst (element by element, so dst may equal a or b). */
static void reduce_f32(unsigned char *d, const unsigned char *a, const unsigned char *b, size_t count,
                       tbm_redop_t op)
{
    size_t i;
    float x, y;

    for (i = 0; i < count; i++, d += 4, a += 4, b += 4) {
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        x = apply_f32(x, y, op);
        memcpy(d, &x, 4);
    }
}

static void reduce_half(unsigned char *d, const unsigned char *a, const unsigned char *b, size_t count,
                        tbm_redop_t op, float (*widen)(uint16_t), uint16_t (*narrow)(float))
{
    size_t i;
    uint16_t x, y;

    for (i = 0; i < count; i++, d += 2, a += 2, b += 2) {
        memcpy(&x, a, 2);
        memcpy(&y, b, 2);
        x = narrow(apply_f32(widen(x), widen(y), op));
        memcpy(d, &x, 2);
    }
}

static void reduce_i32(unsigned char *d, const unsigned char *a, const unsigned char *b, size_t count,
                       tbm_redop_t op)
{
    size_t i;
    int32_t x, y;
    uint32_t sum;

    for (i = 0; i < count; i++, d += 4, a += 4, b += 4) {
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        sum = (uint32_t)x + (uint32_t)y;   /* wraps, no undefined overflow */
        if (op == TBM_OP_SUM)
            memcpy(d, &sum, 4);
        else
            memcpy(d, y > x ? &y : &x, 4);
    }
}

int tbm_reduce(void *dst, const void *a, const void *b, size_t count, tbm_dtype_t dt, tbm_redop_t op)
{
    if ((unsigned)op >= TBM_OP_COUNT)
        return -1;
    switch (dt) {
    case TBM_DT_F32:
        reduce_f32(dst, a, b, count, op);
        return 0;
    case TBM_DT_F16:
        reduce_half(dst, a, b, count, op, tbm_f16_to_f32, tbm_f32_to_f16);
        return 0;
    case TBM_DT_BF16:
        reduce_half(dst, a, b, count, op, tbm_bf16_to_f32, tbm_f32_to_bf16);
        return 0;
    case TBM_DT_I32:
        reduce_i32(dst, a, b, count, op);
        return 0;
    }
    return -1;
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
