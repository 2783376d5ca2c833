/* sweep.c: end what is left of a job on this Mac, round after round (see sweep.h). */
#include "config.h"
#include "sweep.h"
#include "clock.h"
#include "procs.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#define ROUND_MS 20

/* The processes signalled so far (each counted once). */
typedef struct seen {
    long *pid;
    size_t n, cap;
} seen_t;

static int seen_before(seen_t *s, long pid)
{
    size_t i;
    long *more;

    for (i = 0; i < s->n; i++)
        if (s->pid[i] == pid)
            return 1;
    if (s->n == s->cap) {
        if (!(more = realloc(s->pid, (s->cap ? 2 * s->cap : 64) * sizeof(*more))))
            return 0;
        s->pid = more;
        s->cap = s->cap ? 2 * s->cap : 64;
    }
    s->pid[s->n++] = pid;
    return 0;
}

static const tbm_proc_t *proc_of(const tbm_proc_t *t, size_t n, long pid)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (t[i].pid == pid)
            return &t[i];
    return NULL;
}

/* One round: the table, the plan, the signals (SIGTERM to the ones new in it, SIGKILL to all once killing).
 * How many the plan named (0: nothing is left), or -1 with err. */
static long round_of(const tbm_reap_ask_t *ask, int killing, seen_t *s, char *why, size_t len, tbm_err_t *err)
{
    tbm_proc_t *t = NULL;
    const tbm_proc_t *p;
    tbm_reap_t plan;
    size_t n = 0, i;
    long named;

    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;   /* ours (a task's server is the subreaper of its task's orphans): reaped, not counted again */
    if (procs_read(&t, &n, err) < 0 || tbm_reap_plan(t, n, ask, &plan, err) < 0) {
        free(t);
        return -1;
    }
    if (why && !why[0])
        snprintf(why, len, "%s", plan.why);
    for (i = 0; i < plan.n; i++) {
        if (!(p = proc_of(t, n, plan.pids[i])))
            continue;
        if (killing) {
            procs_signal(p, SIGKILL);
            seen_before(s, p->pid);
        } else if (!seen_before(s, p->pid) && procs_signal(p, SIGTERM) == 0) {
            procs_signal(p, SIGCONT);
        }
    }
    named = (long)plan.n;
    tbm_reap_free(&plan);
    free(t);
    return named;
}

int sweep_job(const tbm_reap_ask_t *ask, int grace_ms, int *ended, char *why, size_t len, tbm_err_t *err)
{
    long long start = tbm_now_ms(), now;
    struct timespec pause = { 0, ROUND_MS * 1000 * 1000 };
    seen_t s = { 0 };
    long named;

    *ended = 0;
    if (why && len)
        why[0] = '\0';
    for (;;) {
        now = tbm_now_ms();
        named = round_of(ask, now - start >= grace_ms, &s, why, len, err);
        if (named <= 0 || now - start >= (long long)grace_ms + SWEEP_KILL_MS)
            break;
        nanosleep(&pause, NULL);
    }
    *ended = (int)s.n;
    free(s.pid);
    if (named > 0 && why)
        snprintf(why + strlen(why), len - strlen(why), "; %ld still there %d ms after SIGKILL", named,
                 SWEEP_KILL_MS);
    return named < 0 ? -1 : 0;
}
