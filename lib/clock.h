/* clock.h: the project's one monotonic clock, in milliseconds and microseconds (timeouts, deadlines,
 * durations; never the time of day). */
#ifndef TBM_CLOCK_H
#define TBM_CLOCK_H

long long tbm_now_ms(void);
long long tbm_now_us(void);

#endif
