/* agent_log.h: macnoded's log: one line per event (time, agent pid, message) on stderr, which macnoded --log
 * sends to a file. Events that strangers can cause by the thousand (connections that never authenticate)
 * go through a rate limit: the first few of each kind in an interval are logged, the rest are only counted,
 * and one summary line per interval gives the counts, so that no flood of connections floods the log. */
#ifndef MACNODE_AGENT_LOG_H
#define MACNODE_AGENT_LOG_H

#define AGENT_LOG_INTERVAL_MS 10000   /* one summary line at most per interval */
#define AGENT_LOG_BURST       10      /* lines of each kind logged in full per interval */

/* Log one line. */
void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What clients can cause by the thousand, logged under the rate limit. */
typedef enum agent_noise {
    AGENT_NOISE_REFUSED,     /* a malformed first frame, a refused credential */
    AGENT_NOISE_TIMEOUT,     /* no hello within the deadline */
    AGENT_NOISE_CLOSED,      /* closed before the hello */
    AGENT_NOISE_SHED,        /* closed to make room (a peer's or the total limit of waiting connections) */
    AGENT_NOISE_BUSY,        /* authenticated, but all servers (or all of this user's) are taken */
    AGENT_NOISE_METRICS,     /* a bad or shed metrics request; a sample not published */
    AGENT_NOISE_KINDS
} agent_noise_t;

/* Log a line of `kind` under the rate limit (counted either way). `now_ms` is tbm_now_ms(). */
void agent_log_noisy(agent_noise_t kind, long long now_ms, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* At the end of an interval: one line with the counts of the lines left out, if any; then a new interval. */
void agent_log_tick(long long now_ms);

#endif
