/* bench_progress.c: `macnode bench`'s progress on stderr (rank 0): done, share of the work, time so far and
 * an estimate of the time left. */
#include "config.h"
#include "bench.h"

#include "clock.h"

#include <stdio.h>
#include <unistd.h>

double bench_now_s(void)
{
    return (double)tbm_now_us() / 1e6;
}

void bench_progress_start(bench_t *b, double work_total)
{
    b->work_total = work_total;
    b->work_done = 0;
    b->t_start = b->t_said = bench_now_s();
    b->said = 0;
    b->tty = isatty(STDERR_FILENO);
}

/* After each step. auto: on a terminal, one line kept up to date once the run has taken 2 s; elsewhere
 * (srun's output file) a line every 10 s once it has taken 10 s. on: a line after every step. The estimate
 * assumes time grows with bytes. */
void bench_progress_step(bench_t *b, double work, const char *what)
{
    double t = bench_now_s(), elapsed = t - b->t_start, left, every = b->tty ? 1 : 10;

    b->work_done += work;
    if (!b->speaker || b->progress == PROGRESS_OFF)
        return;
    if (b->progress == PROGRESS_AUTO && (elapsed < (b->tty ? 2 : every) || t - b->t_said < every ||
                                         b->work_done >= b->work_total))
        return;
    left = b->work_done > 0 ? elapsed * (b->work_total - b->work_done) / b->work_done : 0;
    fprintf(stderr, "%s%s: %s done, %.0f%% of the work, %.0f s so far, about %.0f s left%s", b->tty ? "\r" : "",
            BENCH_PROG, what, 100 * b->work_done / b->work_total, elapsed, left, b->tty ? "\033[K" : "\n");
    fflush(stderr);
    b->t_said = t;
    b->said = 1;
}

void bench_progress_end(bench_t *b)
{
    if (b->speaker && b->said && b->tty)
        fprintf(stderr, "\r\033[K");
}
