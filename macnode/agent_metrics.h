/* agent_metrics.h: the agent's metrics (doc/METRICS.md). A process of its own, forked by macnoded at its
 * start (and again if it ends), serves GET /metrics on the metrics address; a sampler process below it
 * samples the Mac every interval (agent_sampler.c) and leaves the exposition in the state folder, which the
 * server hands out as it is: a scrape runs no command and waits on no sampler, and a flood of scrapes costs
 * the agent's main loop nothing. */
#ifndef MACNODE_AGENT_METRICS_H
#define MACNODE_AGENT_METRICS_H

#include <stddef.h>
#include <sys/types.h>

#include "agent.h"
#include "samplering.h"

#define AGENT_METRICS_PORT       9431   /* the metrics endpoint's default port */
#define AGENT_METRICS_INTERVAL_S 10     /* between samples, by default */
#define AGENT_METRICS_STALE      3      /* a sample older than this many intervals is not served */

/* Where the sampler leaves the exposition: <state_dir>/metrics.prom. */
void agent_metrics_path(const agent_conf_t *conf, char *buf, size_t len);

/* The sampler's loop, until SIGTERM or until `parent` is gone. start_time: the agent's start (Unix s). */
void agent_sampler_run(const agent_conf_t *conf, double start_time, pid_t parent);

/* Fork the metrics process serving on lfd (the listening socket of conf->metrics_listen); in it, drop(ctx)
 * first lets go of what is the main process's alone (its other sockets). Its pid, or -1 (logged). It ends
 * when the agent's main process is gone. */
pid_t agent_metrics_start(const agent_conf_t *conf, int lfd, double start_time, void (*drop)(void *ctx),
                          void *ctx);

/* The sample ring (state folder, samples.ring): the sampler adds a point per sample (0, or -1 with err); a
 * task's server reads what the Mac did in [from, to] (monotonic seconds, tbm_now_us() / 1e6): 0, or -1 with
 * err when there is no ring (no sampler ran: metrics off) or it is damaged. */
int agent_ring_append(const agent_conf_t *conf, const tbm_ring_point_t *p, tbm_err_t *err);
int agent_ring_window(const agent_conf_t *conf, double from, double to, tbm_task_gpu_t *out, tbm_err_t *err);

#endif
