/* timing.h: what the timing programs (make -C tests timing) share: a monotonic clock in milliseconds and the
 * sorting of their samples, from which each prints its median, p95 and max. */
#ifndef TBM_TIMING_H
#define TBM_TIMING_H

#include <stdlib.h>
#include <time.h>

static inline double timing_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int timing_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Sort n samples in place, fastest first. */
static inline void timing_sort(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), timing_cmp);
}

#endif
