/* test_reduce.c: unit tests of lib/reduce.c (conversions, reductions, chunking, names). */
#include "tbm_check.h"
#include <math.h>
#include <string.h>
#include <stdlib.h>

#include "reduce.h"

START_TEST(f16_rounds_to_nearest_even)
{
    ck_assert_uint_eq(tbm_f32_to_f16(1.0f), 0x3c00);
    ck_assert_uint_eq(tbm_f32_to_f16(-2.0f), 0xc000);
    ck_assert_uint_eq(tbm_f32_to_f16(0.0f), 0x0000);
    ck_assert_uint_eq(tbm_f32_to_f16(-0.0f), 0x8000);
    ck_assert_uint_eq(tbm_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);          /* tie, even stays */
    ck_assert_uint_eq(tbm_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);      /* tie, rounds up to even */
    ck_assert_uint_eq(tbm_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01); /* above the tie */
    ck_assert_uint_eq(tbm_f32_to_f16(65504.0f), 0x7bff);                 /* largest finite */
    ck_assert_uint_eq(tbm_f32_to_f16(65519.0f), 0x7bff);
    ck_assert_uint_eq(tbm_f32_to_f16(65520.0f), 0x7c00);                 /* tie to even: infinity */
    ck_assert_uint_eq(tbm_f32_to_f16(1e10f), 0x7c00);
    ck_assert_uint_eq(tbm_f32_to_f16(-INFINITY), 0xfc00);
    ck_assert_uint_eq(tbm_f32_to_f16(0x1p-24f), 0x0001);                 /* smallest subnormal */
    ck_assert_uint_eq(tbm_f32_to_f16(0x1p-25f), 0x0000);                 /* tie to even: zero */
    ck_assert_uint_eq(tbm_f32_to_f16(0x1.8p-25f), 0x0001);
    ck_assert_uint_eq(tbm_f32_to_f16(3 * 0x1p-25f), 0x0002);             /* 1.5 subnormal steps: tie to 2 */
    ck_assert_uint_eq(tbm_f32_to_f16(0x1p-14f), 0x0400);                 /* smallest normal */
    ck_assert_uint_eq(tbm_f32_to_f16(0x1p-14f - 0x1p-25f), 0x0400);      /* subnormal rounds up into normal */
    ck_assert_uint_eq(tbm_f32_to_f16(1e-30f), 0x0000);
    ck_assert_uint_eq(tbm_f32_to_f16(NAN) & 0x7e00, 0x7e00);             /* quiet NaN */
}
END_TEST

START_TEST(f16_widens_exactly)
{
    unsigned h;

    ck_assert(tbm_f16_to_f32(0x3c00) == 1.0f);
    ck_assert(tbm_f16_to_f32(0x0001) == 0x1p-24f);
    ck_assert(tbm_f16_to_f32(0x8001) == -0x1p-24f);
    ck_assert(tbm_f16_to_f32(0x7bff) == 65504.0f);
    ck_assert(isinf(tbm_f16_to_f32(0x7c00)));
    ck_assert(isnan(tbm_f16_to_f32(0x7e00)));
    /* every finite half survives the round trip */
    for (h = 0; h < 0x10000; h++)
        if ((h & 0x7c00) != 0x7c00)
            ck_assert_uint_eq(tbm_f32_to_f16(tbm_f16_to_f32((uint16_t)h)), h);
}
END_TEST

/* Every boundary between two neighbouring finite halves: the midpoint goes to the even one, a float just
 * above or below it to the nearer one. widen/narrow: the type's conversions; top: its largest finite. */
static void check_midpoints(float (*widen)(uint16_t), uint16_t (*narrow)(float), unsigned top)
{
    unsigned h;

    for (h = 0; h < top; h++) {
        float lo = widen((uint16_t)h), hi = widen((uint16_t)(h + 1));
        float mid = lo + (hi - lo) / 2;      /* exact: one bit more than the half type has */
        ck_assert_uint_eq(narrow(mid), (h & 1) ? h + 1 : h);
        ck_assert_uint_eq(narrow(nextafterf(mid, INFINITY)), h + 1);
        ck_assert_uint_eq(narrow(nextafterf(mid, 0)), h);
        ck_assert_uint_eq(narrow(-nextafterf(mid, 0)), h | 0x8000);
    }
}

START_TEST(f16_midpoints)
{
    check_midpoints(tbm_f16_to_f32, tbm_f32_to_f16, 0x7bff);
}
END_TEST

START_TEST(bf16_midpoints)
{
    check_midpoints(tbm_bf16_to_f32, tbm_f32_to_bf16, 0x7f7f);
}
END_TEST

START_TEST(bf16_rounds_to_nearest_even)
{
    unsigned h;

    ck_assert_uint_eq(tbm_f32_to_bf16(1.0f), 0x3f80);
    ck_assert_uint_eq(tbm_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);          /* tie, even stays */
    ck_assert_uint_eq(tbm_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);      /* tie, up to even */
    ck_assert_uint_eq(tbm_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
    ck_assert_uint_eq(tbm_f32_to_bf16(3.4028235e38f), 0x7f80);           /* largest float rounds to inf */
    ck_assert_uint_eq(tbm_f32_to_bf16(-INFINITY), 0xff80);
    ck_assert_uint_eq(tbm_f32_to_bf16(NAN) & 0x7fc0, 0x7fc0);
    ck_assert(tbm_bf16_to_f32(0x4040) == 3.0f);
    for (h = 0; h < 0x10000; h++)
        if ((h & 0x7f80) != 0x7f80)
            ck_assert_uint_eq(tbm_f32_to_bf16(tbm_bf16_to_f32((uint16_t)h)), h);
}
END_TEST

START_TEST(reduce_each_type)
{
    float f[3] = { 1.5f, -2.0f, 3.0f }, g[3] = { 0.25f, 5.0f, NAN };
    int32_t i[3] = { 2147483647, -5, 7 }, j[3] = { 1, -9, 7 };
    uint16_t h[2] = { tbm_f32_to_f16(1.0f), tbm_f32_to_f16(2048.0f) };
    uint16_t k[2] = { tbm_f32_to_f16(0.5f), tbm_f32_to_f16(1.0f) };
    uint16_t b[2] = { tbm_f32_to_bf16(1.0f), tbm_f32_to_bf16(-3.0f) };
    uint16_t c[2] = { tbm_f32_to_bf16(2.0f), tbm_f32_to_bf16(-1.0f) };

    ck_assert_int_eq(tbm_reduce(f, f, g, 2, TBM_DT_F32, TBM_OP_SUM), 0);
    ck_assert(f[0] == 1.75f && f[1] == 3.0f && f[2] == 3.0f);
    ck_assert_int_eq(tbm_reduce(f, f, g, 3, TBM_DT_F32, TBM_OP_MAX), 0);
    ck_assert(f[0] == 1.75f && f[1] == 5.0f && isnan(f[2]));
    ck_assert_int_eq(tbm_reduce(i, i, j, 3, TBM_DT_I32, TBM_OP_SUM), 0);
    ck_assert_int_eq(i[0], INT32_MIN);                                  /* wraps */
    ck_assert_int_eq(i[1], -14);
    ck_assert_int_eq(tbm_reduce(i, i, j, 3, TBM_DT_I32, TBM_OP_MAX), 0);
    ck_assert_int_eq(i[0], 1);
    ck_assert_int_eq(i[1], -9);
    ck_assert_int_eq(i[2], 14);
    ck_assert_int_eq(tbm_reduce(h, h, k, 2, TBM_DT_F16, TBM_OP_SUM), 0);
    ck_assert_uint_eq(h[0], tbm_f32_to_f16(1.5f));
    ck_assert_uint_eq(h[1], tbm_f32_to_f16(2048.0f));                   /* 2049 ties to even 2048 */
    ck_assert_int_eq(tbm_reduce(b, b, c, 2, TBM_DT_BF16, TBM_OP_MAX), 0);
    ck_assert_uint_eq(b[0], 0x4000);
    ck_assert_uint_eq(b[1], tbm_f32_to_bf16(-1.0f));
    ck_assert_int_eq(tbm_reduce(b, b, c, 2, (tbm_dtype_t)9, TBM_OP_SUM), -1);
    ck_assert_int_eq(tbm_reduce(b, b, c, 2, TBM_DT_F32, (tbm_redop_t)9), -1);
}
END_TEST

START_TEST(reduce_unaligned)
{
    unsigned char d[9], s[9];
    float a = 1.0f, b = 2.0f, r;

    memcpy(d + 1, &a, 4);
    memcpy(s + 1, &b, 4);
    ck_assert_int_eq(tbm_reduce(d + 1, d + 1, s + 1, 1, TBM_DT_F32, TBM_OP_SUM), 0);
    memcpy(&r, d + 1, 4);
    ck_assert(r == 3.0f);
    /* three distinct buffers: dst = a op b, a and b untouched */
    ck_assert_int_eq(tbm_reduce(d + 5, d + 1, s + 1, 1, TBM_DT_F32, TBM_OP_MAX), 0);
    memcpy(&r, d + 5, 4);
    ck_assert(r == 3.0f);
    memcpy(&r, s + 1, 4);
    ck_assert(r == 2.0f);
}
END_TEST

/* Long buffers (whole blocks, combined where they lie) give the bits of the element-by-element path, for every
 * way dst may alias, aligned or not. */
START_TEST(reduce_long_same_bits)
{
    enum { N = 3 * 256 + 37 };
    static float fa[N], fb[N], want[N], got[N + 1];
    tbm_dtype_t types[2] = { TBM_DT_F32, TBM_DT_I32 };
    tbm_redop_t ops[2] = { TBM_OP_SUM, TBM_OP_MAX };
    unsigned char *ua = malloc(4 * N + 1), *ub = malloc(4 * N + 1), *ud = malloc(4 * N + 1);
    int t, o, k;

    ck_assert(ua && ub && ud);
    for (t = 0; t < 2; t++)
        for (o = 0; o < 2; o++) {
            for (k = 0; k < N; k++) {
                if (types[t] == TBM_DT_F32) {
                    fa[k] = (float)k * 0.37f - 100.0f;
                    fb[k] = k % 97 == 5 ? NAN : 1.0f / (float)(k + 1) - 0.5f;
                    if (k % 89 == 3)   /* max(+0, -0) and max(NaN, x) depend on the operands' order */
                        fa[k] = k % 2 ? NAN : 0.0f, fb[k] = -0.0f;
                } else {
                    int32_t x = (int32_t)(k * 2654435761u), y = (int32_t)(k * 40503u) - 1000000;
                    memcpy(&fa[k], &x, 4);
                    memcpy(&fb[k], &y, 4);
                }
                ck_assert_int_eq(tbm_reduce(&want[k], &fa[k], &fb[k], 1, types[t], ops[o]), 0);
            }
            ck_assert_int_eq(tbm_reduce(got, fa, fb, N, types[t], ops[o]), 0);         /* distinct */
            ck_assert(memcmp(got, want, sizeof(want)) == 0);
            memcpy(got, fa, sizeof(fa));
            ck_assert_int_eq(tbm_reduce(got, got, fb, N, types[t], ops[o]), 0);        /* dst == a */
            ck_assert(memcmp(got, want, sizeof(want)) == 0);
            memcpy(got, fb, sizeof(fb));
            ck_assert_int_eq(tbm_reduce(got, fa, got, N, types[t], ops[o]), 0);        /* dst == b */
            ck_assert(memcmp(got, want, sizeof(want)) == 0);
            memcpy(ua + 1, fa, sizeof(fa));                                           /* unaligned */
            memcpy(ub + 1, fb, sizeof(fb));
            ck_assert_int_eq(tbm_reduce(ud + 1, ua + 1, ub + 1, N, types[t], ops[o]), 0);
            ck_assert(memcmp(ud + 1, want, sizeof(want)) == 0);
        }
    free(ua);
    free(ub);
    free(ud);
}
END_TEST

static void expect_chunk(size_t count, int n, int i, size_t want_off, size_t want_len)
{
    size_t off = 99, len = 99;

    tbm_chunk(count, n, i, &off, &len);
    ck_assert_uint_eq(off, want_off);
    ck_assert_uint_eq(len, want_len);
}

START_TEST(chunks_split_nearly_equal)
{
    expect_chunk(10, 4, 0, 0, 3);
    expect_chunk(10, 4, 1, 3, 3);
    expect_chunk(10, 4, 2, 6, 2);
    expect_chunk(10, 4, 3, 8, 2);
    expect_chunk(1, 3, 0, 0, 1);
    expect_chunk(1, 3, 2, 1, 0);
    expect_chunk(12, 3, 2, 8, 4);
    expect_chunk(5, 0, 0, 0, 0);      /* no ranks */
    expect_chunk(5, 2, 2, 0, 0);      /* index out of range */
    expect_chunk(5, 2, -1, 0, 0);
}
END_TEST

START_TEST(chunks_cover_the_buffer)
{
    size_t count, off, len, next;
    int n, i;

    for (count = 0; count < 40; count++)
        for (n = 1; n <= 9; n++) {
            next = 0;
            for (i = 0; i < n; i++) {
                tbm_chunk(count, n, i, &off, &len);
                ck_assert_uint_eq(off, next);
                ck_assert(len == count / (size_t)n || len == count / (size_t)n + 1);
                next = off + len;
            }
            ck_assert_uint_eq(next, count);
        }
}
END_TEST

START_TEST(names_and_parsing)
{
    tbm_err_t err = { { 0 } };
    tbm_dtype_t dt;
    tbm_redop_t op;

    ck_assert_uint_eq(tbm_dtype_size(TBM_DT_F32), 4);
    ck_assert_uint_eq(tbm_dtype_size(TBM_DT_F16), 2);
    ck_assert_uint_eq(tbm_dtype_size(TBM_DT_BF16), 2);
    ck_assert_uint_eq(tbm_dtype_size(TBM_DT_I32), 4);
    ck_assert_uint_eq(tbm_dtype_size((tbm_dtype_t)7), 0);
    ck_assert_str_eq(tbm_dtype_name(TBM_DT_BF16), "bf16");
    ck_assert_str_eq(tbm_dtype_name((tbm_dtype_t)7), "?");
    ck_assert_str_eq(tbm_redop_name(TBM_OP_MAX), "max");
    ck_assert_str_eq(tbm_redop_name((tbm_redop_t)7), "?");
    ck_assert_int_eq(tbm_dtype_parse("bfloat16", &dt, &err), 0);
    ck_assert_int_eq(dt, TBM_DT_BF16);
    ck_assert_int_eq(tbm_dtype_parse("i32", &dt, &err), 0);
    ck_assert_int_eq(dt, TBM_DT_I32);
    ck_assert_int_eq(tbm_dtype_parse("f64", &dt, &err), -1);
    ck_assert_str_eq(err.msg, "unknown element type 'f64': use f32, f16, bf16 or i32");
    ck_assert_int_eq(tbm_redop_parse("max", &op, &err), 0);
    ck_assert_int_eq(op, TBM_OP_MAX);
    ck_assert_int_eq(tbm_redop_parse("prod", &op, &err), -1);
    ck_assert_str_eq(err.msg, "unknown reduction 'prod': use sum or max");
    ck_assert_int_eq(tbm_redop_parse(NULL, &op, &err), -1);
    ck_assert_str_eq(err.msg, "unknown reduction '': use sum or max");
}
END_TEST

/* A fold gives the bits of n-1 whole passes in rank order, across its blocks, also into part[0] or part[1]. */
START_TEST(fold_in_rank_order)
{
    enum { N = 5000, PARTS = 3 };
    static float p[PARTS][N], want[N], got[N];
    const unsigned char *part[PARTS];
    int i, j;

    for (j = 0; j < PARTS; j++) {
        for (i = 0; i < N; i++)
            p[j][i] = (j == 0 ? 1e8f : 1.0f) * (float)((i * 7 + j * 3) % 11) + 0.3f * (float)j;
        part[j] = (const unsigned char *)p[j];
    }
    tbm_reduce(want, p[0], p[1], N, TBM_DT_F32, TBM_OP_SUM);
    tbm_reduce(want, want, p[2], N, TBM_DT_F32, TBM_OP_SUM);
    tbm_fold(got, part, PARTS, N, TBM_DT_F32, TBM_OP_SUM);
    ck_assert_mem_eq(got, want, sizeof(want));
    memcpy(got, p[1], sizeof(got));
    tbm_fold(p[1], part, PARTS, N, TBM_DT_F32, TBM_OP_SUM);
    ck_assert_mem_eq(p[1], want, sizeof(want));
    memcpy(p[1], got, sizeof(got));
    tbm_fold(p[0], part, PARTS, N, TBM_DT_F32, TBM_OP_SUM);
    ck_assert_mem_eq(p[0], want, sizeof(want));
    tbm_fold(got, part, 1, N, TBM_DT_F32, TBM_OP_SUM);
    ck_assert_mem_eq(got, p[0], sizeof(got));
}
END_TEST

/* The lab's four simulated Macs share one kernel and two cores, their links veths; real Macs have a machine
 * (and cores) each; local ranks talk over loopback. */
START_TEST(halving_only_where_ranks_share_too_few_cores)
{
    uint64_t one[8] = { 7, 7, 7, 7, 7, 7, 7, 7 }, apart[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    uint64_t pairs[4] = { 1, 1, 2, 2 };
    uint32_t two[8] = { 2, 2, 2, 2, 2, 2, 2, 2 }, many[8] = { 16, 16, 16, 16, 16, 16, 16, 16 };
    uint32_t mixed[4] = { 1, 1, 16, 16 };

    ck_assert_int_eq(tbm_mesh_halving_pays(4, one, two), 1);      /* 4 ranks on 2 cores */
    ck_assert_int_eq(tbm_mesh_halving_pays(8, one, two), 1);
    ck_assert_int_eq(tbm_mesh_halving_pays(4, one, many), 0);     /* 4 ranks on 16 cores */
    ck_assert_int_eq(tbm_mesh_halving_pays(8, apart, two), 0);    /* a machine per rank */
    ck_assert_int_eq(tbm_mesh_halving_pays(4, pairs, two), 0);    /* 2 ranks on each 2-core machine */
    ck_assert_int_eq(tbm_mesh_halving_pays(4, pairs, mixed), 1);  /* the first machine has one core */
    ck_assert_int_eq(tbm_mesh_halving_pays(2, one, two), 0);      /* 2 ranks: the same exchange either way */
    ck_assert_int_eq(tbm_mesh_halving_pays(3, one, two), 0);      /* not a power of two */
    ck_assert_int_eq(tbm_mesh_halving_pays(6, one, two), 0);
    ck_assert_int_eq(tbm_mesh_halving_pays(4, NULL, two), 0);
    ck_assert_int_eq(tbm_mesh_halving_pays(4, one, NULL), 0);
}
END_TEST

/* The small all-reduce through rank 0 only where some machine runs more of the ranks than it has cores,
 * loopback or not, from 3 ranks up; by recursive doubling where a machine runs 8 or more (a power of two), each
 * with a core; in one round otherwise. */
START_TEST(small_plan_by_ranks_and_cores)
{
    uint64_t one[16] = { 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7 }, apart[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    uint64_t pairs[4] = { 1, 1, 2, 2 }, halves[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2 };
    uint32_t two[16] = { 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 };
    uint32_t many[16] = { 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16 };
    uint32_t mixed[4] = { 1, 1, 16, 16 }, four[8] = { 4, 4, 4, 4, 4, 4, 4, 4 };

    ck_assert_int_eq(tbm_small_plan(3, one, two), TBM_SMALL_ROOTED);      /* 3 ranks on 2 cores */
    ck_assert_int_eq(tbm_small_plan(4, one, two), TBM_SMALL_ROOTED);      /* the lab: 4 Macs on 2 cores */
    ck_assert_int_eq(tbm_small_plan(8, one, two), TBM_SMALL_ROOTED);
    ck_assert_int_eq(tbm_small_plan(6, one, two), TBM_SMALL_ROOTED);      /* any count, not only powers of two */
    ck_assert_int_eq(tbm_small_plan(4, one, four), TBM_SMALL_ONEROUND);   /* a core per rank */
    ck_assert_int_eq(tbm_small_plan(8, one, four), TBM_SMALL_ROOTED);
    ck_assert_int_eq(tbm_small_plan(8, one, many), TBM_SMALL_DOUBLING);   /* 8 ranks on 16 cores */
    ck_assert_int_eq(tbm_small_plan(16, one, many), TBM_SMALL_DOUBLING);
    ck_assert_int_eq(tbm_small_plan(16, halves, many), TBM_SMALL_DOUBLING);   /* 8 on each of two machines */
    ck_assert_int_eq(tbm_small_plan(6, one, many), TBM_SMALL_ONEROUND);   /* fewer than 8 on the machine */
    ck_assert_int_eq(tbm_small_plan(12, one, many), TBM_SMALL_ONEROUND);  /* not a power of two */
    ck_assert_int_eq(tbm_small_plan(8, apart, two), TBM_SMALL_ONEROUND);  /* a machine per rank: one round */
    ck_assert_int_eq(tbm_small_plan(4, pairs, two), TBM_SMALL_ONEROUND);  /* 2 ranks on each 2-core machine */
    ck_assert_int_eq(tbm_small_plan(4, pairs, mixed), TBM_SMALL_ROOTED);  /* the first machine has one core */
    ck_assert_int_eq(tbm_small_plan(2, one, two), TBM_SMALL_ONEROUND);    /* 2 ranks: the same exchange */
    ck_assert_int_eq(tbm_small_plan(2, one, (uint32_t[]){ 1, 1 }), TBM_SMALL_ONEROUND);
    ck_assert_int_eq(tbm_small_plan(4, NULL, two), TBM_SMALL_ONEROUND);
    ck_assert_int_eq(tbm_small_plan(4, one, NULL), TBM_SMALL_ONEROUND);
    ck_assert_int_eq(tbm_small_plan(0, one, two), TBM_SMALL_ONEROUND);
}
END_TEST

/* More than one stream per pair only where every machine has a core to spare beyond its ranks. */
START_TEST(streams_only_where_machines_have_cores_to_spare)
{
    uint64_t one[8] = { 7, 7, 7, 7, 7, 7, 7, 7 }, apart[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    uint64_t pairs[4] = { 1, 1, 2, 2 };
    uint32_t two[8] = { 2, 2, 2, 2, 2, 2, 2, 2 }, many[8] = { 16, 16, 16, 16, 16, 16, 16, 16 };
    uint32_t mixed[4] = { 16, 16, 2, 2 }, three[4] = { 3, 3, 3, 3 };

    ck_assert_int_eq(tbm_mesh_streams_pay(4, one, two), 0);       /* the lab: 4 ranks on 2 cores */
    ck_assert_int_eq(tbm_mesh_streams_pay(2, one, two), 0);       /* 2 ranks on 2 cores: none to spare */
    ck_assert_int_eq(tbm_mesh_streams_pay(2, one, three), 1);
    ck_assert_int_eq(tbm_mesh_streams_pay(4, one, many), 1);      /* 4 ranks on 16 cores */
    ck_assert_int_eq(tbm_mesh_streams_pay(8, apart, two), 1);     /* a Mac per rank */
    ck_assert_int_eq(tbm_mesh_streams_pay(4, pairs, two), 0);     /* 2 ranks on each 2-core machine */
    ck_assert_int_eq(tbm_mesh_streams_pay(4, pairs, three), 1);
    ck_assert_int_eq(tbm_mesh_streams_pay(4, pairs, mixed), 0);   /* the second machine has none to spare */
    ck_assert_int_eq(tbm_mesh_streams_pay(1, one, two), 1);
    ck_assert_int_eq(tbm_mesh_streams_pay(0, one, two), 0);
    ck_assert_int_eq(tbm_mesh_streams_pay(4, NULL, two), 0);
    ck_assert_int_eq(tbm_mesh_streams_pay(4, one, NULL), 0);
}
END_TEST

/* Receives staged only into memory 1 to 31 bytes past a 64-byte boundary, and only large ones; the staged
 * data lands 32 bytes past the destination modulo a page, so that neither copy is 1 to 31 bytes ahead of
 * its source modulo 4096 (with the socket data at a 64-byte boundary); the decision is the whole
 * receive's, however far its calls have gone. */
START_TEST(receives_staged_only_where_the_copy_is_slow)
{
    uintptr_t page = 0x7f0000200000u, d;
    size_t at = 99, big = 1u << 20, done;

    ck_assert_int_eq(tbm_recv_staged(page, big, page, &at), 0);          /* page-aligned */
    ck_assert_uint_eq(at, 0);
    ck_assert_int_eq(tbm_recv_staged(page + 64 * 7, big, page + 64 * 7, &at), 0);   /* a 64-byte boundary */
    ck_assert_int_eq(tbm_recv_staged(page + 16, big, page + 16, &at), 1);  /* a large malloc() block */
    ck_assert_uint_eq(at, 48);
    ck_assert_int_eq(tbm_recv_staged(page + 4032 + 31, big, page + 4032 + 31, &at), 1);   /* a page's end */
    ck_assert_uint_eq(at, 4095);
    ck_assert_int_eq(tbm_recv_staged(page + 32, big, page + 32, &at), 0);  /* 32 to 63 past: not slow */
    ck_assert_int_eq(tbm_recv_staged(page + 63, big, page + 63, &at), 0);
    ck_assert_int_eq(tbm_recv_staged(page + 16, TBM_STAGE_MIN - 1, page + 16, &at), 0);   /* small */
    ck_assert_int_eq(tbm_recv_staged(page + 16, TBM_STAGE_MIN, page + 16, &at), 1);
    /* a receive that has come partway: staged or not as it started, the data 32 bytes past where it goes */
    ck_assert_int_eq(tbm_recv_staged(page + 16, big, page + 16 + 100001, &at), 1);
    ck_assert_uint_eq(at, (16 + 100001 + 32) % 4096);
    ck_assert_int_eq(tbm_recv_staged(page + 16, big, page + big - 10, &at), 1);   /* its last bytes too */
    ck_assert_int_eq(tbm_recv_staged(page + 48, big, page + 48 + 100001 - 32, &at), 0);
    for (d = page; d < page + 2 * TBM_STAGE_PAGE; d++) {
        unsigned past = (unsigned)(d & 63);
        int staged = tbm_recv_staged(d, big, d, &at);
        ck_assert_int_eq(staged, past >= 1 && past <= 31);
        if (!staged)
            continue;
        for (done = 0; done < big; done += 65483) {
            ck_assert_int_eq(tbm_recv_staged(d, big, d + done, &at), 1);
            ck_assert_uint_lt(at, TBM_STAGE_PAGE);
            /* the copy out: the destination 32 bytes behind the staged data, modulo a page */
            ck_assert_uint_eq((d + done - at) & (TBM_STAGE_PAGE - 1), TBM_STAGE_PAGE - 32);
            /* the receive: the staged data as far past the socket data (at d's 64-byte boundary, moving
             * along) as 33 to 63 bytes */
            ck_assert_uint_ge((at - done) & 63, 33);
        }
    }
}
END_TEST

/* Staging only on a CPU whose copy to 16 bytes past a boundary is TBM_STAGE_SLOWER times slower or more. */
START_TEST(staging_only_where_the_cpu_is_slow_past_a_boundary)
{
    ck_assert_int_eq(tbm_staging_pays(1600.0, 25000.0), 1);   /* Zen 3: 40 against 2.5 GB/s */
    ck_assert_int_eq(tbm_staging_pays(660.0, 920.0), 0);      /* Zen 5: 99 against 71 GB/s */
    ck_assert_int_eq(tbm_staging_pays(1000.0, 1000.0), 0);
    ck_assert_int_eq(tbm_staging_pays(1000.0, 2999.0), 0);
    ck_assert_int_eq(tbm_staging_pays(1000.0, 3000.0), 1);    /* the threshold itself */
    ck_assert_int_eq(tbm_staging_pays(1000.0, 500.0), 0);     /* faster past a boundary */
    ck_assert_int_eq(tbm_staging_pays(0.0, 5000.0), 0);       /* not measured */
    ck_assert_int_eq(tbm_staging_pays(1000.0, 0.0), 0);
    ck_assert_int_eq(tbm_staging_pays(-1.0, 5000.0), 0);
    ck_assert_int_eq(tbm_staging_pays(0.0 / 0.0, 5000.0), 0);   /* NaN */
}
END_TEST

/* Local ranks get a CPU each, in the order the process may use them, only when every rank can have one. */
START_TEST(local_ranks_bound_only_when_they_fit)
{
    const int cpus[] = { 2, 5, 7, 9 };
    int r;

    for (r = 0; r < 4; r++)
        ck_assert_int_eq(tbm_local_cpu(r, 4, cpus, 4), cpus[r]);
    ck_assert_int_eq(tbm_local_cpu(0, 2, cpus, 4), 2);
    ck_assert_int_eq(tbm_local_cpu(1, 2, cpus, 4), 5);
    ck_assert_int_eq(tbm_local_cpu(0, 1, cpus, 1), 2);
    for (r = 0; r < 5; r++)   /* 5 ranks on 4 CPUs: none bound, not 4 of them */
        ck_assert_int_eq(tbm_local_cpu(r, 5, cpus, 4), -1);
    ck_assert_int_eq(tbm_local_cpu(4, 4, cpus, 4), -1);
    ck_assert_int_eq(tbm_local_cpu(-1, 4, cpus, 4), -1);
    ck_assert_int_eq(tbm_local_cpu(0, 0, cpus, 4), -1);
    ck_assert_int_eq(tbm_local_cpu(0, 1, NULL, 0), -1);
    ck_assert_int_eq(tbm_local_cpu(0, 1, cpus, 0), -1);
}
END_TEST

static Suite *reduce_suite(void)
{
    Suite *s = suite_create("reduce");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, f16_rounds_to_nearest_even);
    tcase_add_test(tc, f16_widens_exactly);
    tcase_add_test(tc, bf16_rounds_to_nearest_even);
    tcase_add_test(tc, f16_midpoints);
    tcase_add_test(tc, bf16_midpoints);
    tcase_add_test(tc, reduce_each_type);
    tcase_add_test(tc, reduce_unaligned);
    tcase_add_test(tc, reduce_long_same_bits);
    tcase_add_test(tc, chunks_split_nearly_equal);
    tcase_add_test(tc, halving_only_where_ranks_share_too_few_cores);
    tcase_add_test(tc, small_plan_by_ranks_and_cores);
    tcase_add_test(tc, receives_staged_only_where_the_copy_is_slow);
    tcase_add_test(tc, staging_only_where_the_cpu_is_slow_past_a_boundary);
    tcase_add_test(tc, streams_only_where_machines_have_cores_to_spare);
    tcase_add_test(tc, local_ranks_bound_only_when_they_fit);
    tcase_add_test(tc, chunks_cover_the_buffer);
    tcase_add_test(tc, names_and_parsing);
    tcase_add_test(tc, fold_in_rank_order);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(reduce_suite)
