/* test_rdmamesh.c: unit tests of lib/rdmamesh.c: the largest RDMA mesh and ring among a group's Macs when
 * some pairs are not joined by RDMA cables, its ties broken the same way every time, and its bounds. */
#include "tbm_check.h"

#include "rdmamesh.h"

/* n Macs all joined, but the pairs given (a, b, a, b, ..., -1). */
static void all_but(uint32_t *ok, size_t n, const int *cut)
{
    size_t i;

    for (i = 0; i < n; i++)
        ok[i] = ((uint32_t)((1ul << n) - 1)) & ~(1u << i);
    for (; cut[0] >= 0; cut += 2) {
        ok[cut[0]] &= ~(1u << cut[1]);
        ok[cut[1]] &= ~(1u << cut[0]);
    }
}

/* The ring found is a cycle over pairs that are joined, through every Mac of its set once, from the lowest. */
static void assert_ring(const tbm_rdma_subsets_t *s, const uint32_t *ok)
{
    uint32_t seen = 0;
    int i, a, b;

    ck_assert_int_eq(s->n_ring, __builtin_popcount(s->ring));
    ck_assert_int_eq(s->ring_order[0], __builtin_ctz(s->ring));
    for (i = 0; i < s->n_ring; i++) {
        a = s->ring_order[i];
        b = s->ring_order[(i + 1) % s->n_ring];
        ck_assert_msg((ok[a] >> b) & 1u, "ring step %d-%d is not joined", a, b);
        seen |= 1u << a;
    }
    ck_assert_uint_eq(seen, s->ring);
}

/* Eight Macs, one slow cable between the third and the last: seven form a mesh without the last; all eight a
 * ring without that cable. */
START_TEST(eight_with_one_slow_cable)
{
    const int cut[] = { 2, 7, -1 };
    uint32_t ok[8];
    tbm_rdma_subsets_t s;

    all_but(ok, 8, cut);
    ck_assert_int_eq(tbm_rdma_subsets(8, ok, &s), 0);
    ck_assert_uint_eq(s.mesh, 0x7f);
    ck_assert_uint_eq(s.ring, 0xff);
    assert_ring(&s, ok);
    ck_assert_int_eq(s.ring_order[1], 1);   /* the lowest-numbered way round */
}
END_TEST

/* Of two meshes of one size, the one keeping the lower-numbered Mac; a ring only when it is larger. */
START_TEST(ties_and_sizes)
{
    const int cut01[] = { 0, 1, -1 }, chain4[] = { 0, 2, 0, 3, 1, 3, -1 }, none[] = { -1 };
    uint32_t ok[16];
    tbm_rdma_subsets_t s;

    all_but(ok, 4, cut01);
    ck_assert_int_eq(tbm_rdma_subsets(4, ok, &s), 0);
    ck_assert_uint_eq(s.mesh, 0xd);          /* {0,2,3}, not {1,2,3} */
    ck_assert_uint_eq(s.ring, 0xf);          /* 0-2-1-3 */
    assert_ring(&s, ok);
    /* a ring of four with its pair 3-0 cut (0-1-2-3 left as a path): a pair is the largest mesh, no ring */
    all_but(ok, 4, chain4);
    ck_assert_int_eq(tbm_rdma_subsets(4, ok, &s), 0);
    ck_assert_uint_eq(s.mesh, 0x3);          /* {0,1}, not {1,2} nor {2,3} */
    ck_assert_uint_eq(s.ring, 0);
    ck_assert_int_eq(s.n_ring, 0);
    /* a full mesh: itself, no ring beside it */
    all_but(ok, 5, none);
    ck_assert_int_eq(tbm_rdma_subsets(5, ok, &s), 0);
    ck_assert_uint_eq(s.mesh, 0x1f);
    ck_assert_uint_eq(s.ring, 0);
    /* nothing joined */
    memset(ok, 0, sizeof(ok));
    ck_assert_int_eq(tbm_rdma_subsets(3, ok, &s), 0);
    ck_assert_uint_eq(s.mesh, 0);
    ck_assert_uint_eq(s.ring, 0);
}
END_TEST

/* Sixteen Macs are searched (every subset: quick); more, or none, are refused. */
START_TEST(bounds)
{
    const int cut[] = { 0, 15, 3, 9, -1 }, none[] = { -1 };
    uint32_t ok[TBM_RDMA_SEARCH_MAX + 1];
    tbm_rdma_subsets_t s;

    all_but(ok, 16, cut);
    ck_assert_int_eq(tbm_rdma_subsets(16, ok, &s), 0);
    ck_assert_int_eq(__builtin_popcount(s.mesh), 14);
    ck_assert_uint_eq(s.mesh, 0x7dff);   /* without Macs 9 and 15: the later ends of both cuts */
    ck_assert_uint_eq(s.ring, 0xffff);
    assert_ring(&s, ok);
    all_but(ok, 16, none);
    ck_assert_int_eq(tbm_rdma_subsets(17, ok, &s), -1);
    ck_assert_uint_eq(s.mesh, 0);
    ck_assert_int_eq(tbm_rdma_subsets(0, ok, &s), -1);
}
END_TEST

static Suite *rdmamesh_suite(void)
{
    Suite *s = suite_create("rdmamesh");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, eight_with_one_slow_cable);
    tcase_add_test(tc, ties_and_sizes);
    tcase_add_test(tc, bounds);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(rdmamesh_suite)
