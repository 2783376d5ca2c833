/* test_samplering.c: unit tests of lib/samplering.c: the ring of the Mac's GPU and power samples and what a
 * task's window of it says. */
#include <stdlib.h>
#include <string.h>

#include "tbm_check.h"
#include "samplering.h"

/* A ring of cap points holding the given points, written as the agent writes them. */
static char *ring_of(uint32_t cap, const tbm_ring_point_t *pts, size_t n, size_t *len)
{
    tbm_ring_header_t h;
    char *buf;
    size_t i;

    *len = tbm_ring_bytes(cap);
    buf = calloc(1, *len);
    tbm_ring_header_init(&h, cap);
    for (i = 0; i < n; i++) {
        memcpy(buf + tbm_ring_next_offset(&h), &pts[i], sizeof(pts[i]));
        h.count++;
    }
    memcpy(buf, &h, sizeof(h));
    return buf;
}

START_TEST(a_window)
{
    tbm_ring_point_t pts[] = { { 10, 0.1f, 100 }, { 20, 0.5f, 200 }, { 30, 0.9f, 300 }, { 40, -1, -1 },
                               { 50, 0.3f, 100 } };
    size_t len;
    char *buf = ring_of(16, pts, 5, &len);
    tbm_task_gpu_t g;
    tbm_err_t err;

    ck_assert_int_eq(tbm_ring_check(buf, len, &err), 0);
    tbm_ring_window(buf, len, 15, 35, 60, &g);
    ck_assert_int_eq(g.samples, 2);
    ck_assert_double_eq_tol(g.gpu_mean, 0.7, 1e-6);
    ck_assert_double_eq_tol(g.gpu_peak, 0.9, 1e-6);
    ck_assert_int_eq(g.power_samples, 2);
    /* 200 W from 15 (the window's start) to 20, 300 W from 20 to 30 */
    ck_assert_double_eq_tol(g.energy_j, 200 * 5 + 300 * 10, 1e-6);
    /* a sample without figures counts for nothing, and a long gap is capped */
    tbm_ring_window(buf, len, 35, 55, 5, &g);
    ck_assert_int_eq(g.samples, 1);
    ck_assert_double_eq_tol(g.gpu_mean, 0.3, 1e-6);
    ck_assert_double_eq_tol(g.energy_j, 100 * 5, 1e-6);
    /* a window with no sample */
    tbm_ring_window(buf, len, 51, 59, 60, &g);
    ck_assert_int_eq(g.samples, 0);
    ck_assert_int_eq(g.power_samples, 0);
    ck_assert_double_eq(g.energy_j, 0);
    /* a window backwards */
    tbm_ring_window(buf, len, 30, 10, 60, &g);
    ck_assert_int_eq(g.samples, 0);
    free(buf);
}
END_TEST

START_TEST(the_ring_wraps)
{
    tbm_ring_point_t pts[10];
    size_t len, i;
    char *buf;
    tbm_task_gpu_t g;

    for (i = 0; i < 10; i++)
        pts[i] = (tbm_ring_point_t){ (double)i, (float)i / 10, 10 };
    buf = ring_of(4, pts, 10, &len);   /* keeps 6, 7, 8, 9 */
    tbm_ring_window(buf, len, 0, 100, 60, &g);
    ck_assert_int_eq(g.samples, 4);
    ck_assert_double_eq_tol(g.gpu_mean, 0.75, 1e-6);
    ck_assert_double_eq_tol(g.gpu_peak, 0.9, 1e-6);
    ck_assert_double_eq_tol(g.energy_j, 30, 1e-6);   /* 7, 8, 9 each 1 s after the one before */
    free(buf);
}
END_TEST

START_TEST(damaged_rings_are_refused)
{
    tbm_ring_point_t pts[] = { { 1, 0.5f, 1 } };
    size_t len;
    char *buf = ring_of(4, pts, 1, &len);
    tbm_task_gpu_t g;
    tbm_err_t err;

    ck_assert_int_eq(tbm_ring_check(buf, 10, &err), -1);
    ck_assert_str_eq(err.msg, "the sample ring is 10 bytes, shorter than its header: remove it (the agent starts a "
                              "new one)");
    ck_assert_int_eq(tbm_ring_check(buf, len - 1, &err), -1);
    ck_assert_msg(strstr(err.msg, "where 4 points take") != NULL, "%s", err.msg);
    tbm_ring_window(buf, len - 1, 0, 10, 60, &g);
    ck_assert_int_eq(g.samples, 0);
    buf[0] = 'X';
    ck_assert_int_eq(tbm_ring_check(buf, len, &err), -1);
    ck_assert_str_eq(err.msg, "the sample ring is not one (its first bytes are not TBMRING1): remove it");
    buf[0] = 'T';
    ((tbm_ring_header_t *)(void *)buf)->point_size = 12;
    ck_assert_int_eq(tbm_ring_check(buf, len, &err), -1);
    ck_assert_str_eq(err.msg, "the sample ring was written by another version (4 points of 12 bytes): remove it");
    free(buf);
}
END_TEST

static Suite *samplering_suite(void)
{
    Suite *s = suite_create("samplering");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, a_window);
    tcase_add_test(tc, the_ring_wraps);
    tcase_add_test(tc, damaged_rings_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(samplering_suite)
