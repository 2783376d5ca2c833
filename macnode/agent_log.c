/* agent_log.c: macnoded's log, with a rate limit for what unauthenticated clients cause (see agent_log.h). */
#include "config.h"
#include "agent_log.h"
#include "utctime.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const noise_names[AGENT_NOISE_KINDS] = {
    [AGENT_NOISE_REFUSED] = "refused",
    [AGENT_NOISE_TIMEOUT] = "timed out before the hello",
    [AGENT_NOISE_CLOSED] = "closed before the hello",
    [AGENT_NOISE_SHED] = "closed to make room",
    [AGENT_NOISE_BUSY] = "refused as busy",
    [AGENT_NOISE_METRICS] = "metrics scrapes refused or samples not published",
};

static struct {
    long long start;                          /* the interval's start (ms); 0: none yet */
    unsigned long logged[AGENT_NOISE_KINDS];  /* lines logged in full in this interval */
    unsigned long left_out[AGENT_NOISE_KINDS];
} noise;

static void log_line(const char *fmt, va_list ap)
{
    char line[2048];
    int n;

    tbm_utc_iso(time(NULL), TBM_UTC_EXTENDED, line, sizeof(line));
    n = (int)strlen(line);
    n += snprintf(line + n, sizeof(line) - (size_t)n, " macnoded[%ld]: ", (long)getpid());
    n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    if (n > (int)sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, (size_t)n) < 0) {
        /* nowhere left to say it */
    }
}

void agent_log(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_line(fmt, ap);
    va_end(ap);
}

void agent_log_tick(long long now_ms)
{
    char sum[512];
    size_t n = 0;
    unsigned long total = 0;
    int k;

    if (noise.start && now_ms - noise.start < AGENT_LOG_INTERVAL_MS)
        return;
    for (k = 0; k < AGENT_NOISE_KINDS; k++) {
        if (noise.left_out[k] && n < sizeof(sum))
            n += (size_t)snprintf(sum + n, sizeof(sum) - n, "%s%lu %s", total ? ", " : "", noise.left_out[k],
                                  noise_names[k]);
        total += noise.left_out[k];
    }
    if (total)
        agent_log("connections in the last %lld s not logged one by one: %s",
                  noise.start ? (now_ms - noise.start) / 1000 : 0, sum);
    memset(&noise, 0, sizeof(noise));
    noise.start = now_ms;
}

void agent_log_noisy(agent_noise_t kind, long long now_ms, const char *fmt, ...)
{
    va_list ap;

    if ((int)kind < 0 || kind >= AGENT_NOISE_KINDS)
        return;
    agent_log_tick(now_ms);
    if (noise.logged[kind] >= AGENT_LOG_BURST) {
        noise.left_out[kind]++;
        return;
    }
    noise.logged[kind]++;
    va_start(ap, fmt);
    log_line(fmt, ap);
    va_end(ap);
}
