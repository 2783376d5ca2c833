/* test_taskgpu.c: unit tests of lib/taskgpu.c: what of a task's window of the sample ring is reported (GPU mean
 * and peak, energy), and why not when it is not; how the whys and the energy read for people. */
#include <math.h>
#include <string.h>

#include "tbm_check.h"
#include "samplering.h"
#include "taskgpu.h"

/* A ring of the agent's shape holding pts (times in monotonic seconds). */
static char *ring_of(const tbm_ring_point_t *pts, size_t n, size_t *len)
{
    tbm_ring_header_t h;
    char *buf;
    size_t i;

    *len = tbm_ring_bytes(64);
    buf = calloc(1, *len);
    tbm_ring_header_init(&h, 64);
    for (i = 0; i < n; i++) {
        memcpy(buf + tbm_ring_next_offset(&h), &pts[i], sizeof(pts[i]));
        h.count++;
    }
    memcpy(buf, &h, sizeof(h));
    return buf;
}

/* A task of 35 s on a Mac sampled every 10 s: its samples say what the whole Mac did meanwhile. */
START_TEST(a_task_with_samples)
{
    tbm_ring_point_t pts[] = { { 100, 0.2f, 50 }, { 110, 0.6f, 120 }, { 120, 0.8f, 150 }, { 130, 0.4f, 100 },
                               { 140, 0.1f, 40 } };
    size_t len;
    char *buf = ring_of(pts, 5, &len);
    tbm_task_gpu_t w;
    tbm_rusage_t ru;

    memset(&ru, 0, sizeof(ru));
    ru.utime_us = 77;
    tbm_ring_window(buf, len, 105, 140 - 1e-9, 35, &w);
    tbm_task_gpu_fill(&ru, &w, 0, 1, 35, 10);
    ck_assert_int_eq(ru.utime_us, 77);                        /* the rest of the usage is left alone */
    ck_assert_int_eq(ru.gpu_samples, 3);
    ck_assert_double_eq_tol(ru.gpu_mean, 0.6, 1e-6);
    ck_assert_double_eq_tol(ru.gpu_peak, 0.8, 1e-6);
    ck_assert_int_eq(ru.power_samples, 3);
    ck_assert_double_eq_tol(ru.energy_j, 120 * 5 + 150 * 10 + 100 * 10, 1e-6);   /* from the task's start on */
    ck_assert(ru.gpu_why == TBM_METER_SAID_NOTHING && ru.energy_why == TBM_METER_SAID_NOTHING);
    free(buf);
}
END_TEST

/* Never 0 for "not known": each case says why instead. */
START_TEST(not_reported_and_why)
{
    tbm_ring_point_t gpu_only[] = { { 100, 0.5f, -1 }, { 110, 0.7f, -1 }, { 120, 0.9f, -1 } };
    tbm_ring_point_t none[] = { { 100, -1, -1 }, { 110, -1, -1 }, { 120, -1, -1 } };
    tbm_task_gpu_t w = { 4, 0.5, 0.9, 4, 100 };
    tbm_rusage_t ru;
    size_t len;
    char *buf;

    memset(&ru, 0, sizeof(ru));
    tbm_task_gpu_fill(&ru, &w, 0, 0, 60, 10);                 /* metrics off: whatever a ring holds is old */
    ck_assert(ru.gpu_samples == 0 && ru.power_samples == 0 && ru.gpu_mean == 0 && ru.energy_j == 0);
    ck_assert(ru.gpu_why == TBM_METER_OFF && ru.energy_why == TBM_METER_OFF);
    tbm_task_gpu_fill(&ru, NULL, -1, 1, 60, 10);              /* the ring could not be read */
    ck_assert(ru.gpu_why == TBM_METER_NO_RING && ru.energy_why == TBM_METER_NO_RING && !ru.gpu_samples);
    tbm_task_gpu_fill(&ru, &w, 0, 1, 9.99, 10);               /* shorter than one interval, samples or not */
    ck_assert(ru.gpu_why == TBM_METER_SHORT && ru.energy_why == TBM_METER_SHORT && !ru.gpu_samples);
    tbm_task_gpu_fill(&ru, &w, 0, 1, NAN, 10);
    ck_assert_int_eq(ru.gpu_why, TBM_METER_SHORT);
    tbm_task_gpu_fill(&ru, &w, 0, 1, 10, 10);                 /* one whole interval is enough */
    ck_assert(ru.gpu_samples == 4 && ru.power_samples == 4 && ru.gpu_why == 0 && ru.energy_why == 0);

    buf = ring_of(gpu_only, 3, &len);                         /* ioreg's GPU figure, no powermetrics */
    tbm_ring_window(buf, len, 95, 125, 35, &w);
    tbm_task_gpu_fill(&ru, &w, 0, 1, 30, 10);
    ck_assert_int_eq(ru.gpu_samples, 3);
    ck_assert_double_eq_tol(ru.gpu_mean, 0.7, 1e-6);
    ck_assert(ru.power_samples == 0 && ru.energy_j == 0 && ru.energy_why == TBM_METER_NO_SAMPLES);
    free(buf);
    buf = ring_of(none, 3, &len);                             /* a Mac that reports neither */
    tbm_ring_window(buf, len, 95, 125, 35, &w);
    tbm_task_gpu_fill(&ru, &w, 0, 1, 30, 10);
    ck_assert(ru.gpu_why == TBM_METER_NO_SAMPLES && ru.energy_why == TBM_METER_NO_SAMPLES);
    ck_assert(ru.gpu_samples == 0 && ru.power_samples == 0);
    tbm_ring_window(buf, len, 200, 300, 35, &w);              /* the sampler stopped before the task */
    tbm_task_gpu_fill(&ru, &w, 0, 1, 100, 10);
    ck_assert(ru.gpu_why == TBM_METER_NO_SAMPLES && ru.energy_why == TBM_METER_NO_SAMPLES);
    free(buf);
}
END_TEST

/* What the window hands in is kept within the figures' bounds: shares 0..1, the mean not above the peak, an
 * energy that is no number is not reported. */
START_TEST(figures_kept_in_bounds)
{
    tbm_task_gpu_t w = { 2, 0.50000001, 0.5, 2, NAN };
    tbm_rusage_t ru;

    memset(&ru, 0, sizeof(ru));
    tbm_task_gpu_fill(&ru, &w, 0, 1, 20, 10);
    ck_assert(ru.gpu_mean <= ru.gpu_peak);
    ck_assert(ru.power_samples == 0 && ru.energy_why == TBM_METER_NO_SAMPLES);
    w = (tbm_task_gpu_t){ 1, 1.5, 1.5, 1, -2 };
    tbm_task_gpu_fill(&ru, &w, 0, 1, 20, 10);
    ck_assert(ru.gpu_mean == 1 && ru.gpu_peak == 1);
    ck_assert(ru.power_samples == 0);
}
END_TEST

START_TEST(for_people)
{
    char buf[64];

    ck_assert_ptr_nonnull(strstr(tbm_meter_why_text(TBM_METER_OFF), "metrics are off"));
    ck_assert_str_eq(tbm_meter_why_text(TBM_METER_SHORT), "the task ran less than one sample interval");
    ck_assert_ptr_nonnull(strstr(tbm_meter_why_text(TBM_METER_NO_RING), "could not read its samples"));
    ck_assert_ptr_nonnull(strstr(tbm_meter_why_text(TBM_METER_NO_SAMPLES), "does not report it"));
    ck_assert_ptr_null(tbm_meter_why_text(TBM_METER_SAID_NOTHING));
    ck_assert_ptr_null(tbm_meter_why_text(-1));
    tbm_energy_text(0, buf, sizeof(buf));
    ck_assert_str_eq(buf, "0.0 J");
    tbm_energy_text(532.44, buf, sizeof(buf));
    ck_assert_str_eq(buf, "532.4 J");
    tbm_energy_text(12345, buf, sizeof(buf));
    ck_assert_str_eq(buf, "12.3 kJ (3.43 Wh)");
    tbm_energy_text(3.6e6, buf, sizeof(buf));
    ck_assert_str_eq(buf, "1.00 kWh");
    tbm_energy_text(-1, buf, sizeof(buf));
    ck_assert_str_eq(buf, "?");
    tbm_energy_text(NAN, buf, sizeof(buf));
    ck_assert_str_eq(buf, "?");
}
END_TEST

static Suite *taskgpu_suite(void)
{
    Suite *s = suite_create("taskgpu");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, a_task_with_samples);
    tcase_add_test(tc, not_reported_and_why);
    tcase_add_test(tc, figures_kept_in_bounds);
    tcase_add_test(tc, for_people);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(taskgpu_suite)
