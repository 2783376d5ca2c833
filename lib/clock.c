/* clock.c: the project's one monotonic clock (see clock.h). */
#include "clock.h"

#include <time.h>

long long tbm_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

long long tbm_now_ms(void)
{
    return tbm_now_us() / 1000;
}
