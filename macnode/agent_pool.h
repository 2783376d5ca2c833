/* agent_pool.h: macnoded's servers, each a process of its own that serves one authenticated connection at a
 * time and then waits for the next, instead of a process forked for every connection and ended with it. The
 * gate (agent_gate.h) hands a connection whose hello checked out to an idle server: its socket (passed over a
 * Unix socket pair, the server's channel), the bytes read after the hello, the caller's uid and the gate's
 * times. Only when no server is idle is one forked. A server says on its channel when it is idle again; it
 * ends after AGENT_POOL_CONNS connections (a fresh one takes its place), when the main process closes its
 * channel (too many idle for too long, or the agent stops), or at a SIGTERM once its connection is served.
 *
 * One connection at a time per server keeps what a fork per connection gave: a task's server holds its
 * record's lock and the task's process shares only its memory, a server that fails ends one connection, and
 * servers outlive a stopped main process until their connections end. What it saves a launch is the fork
 * (page tables copied), the copy-on-write faults both processes then take, and the exit. */
#ifndef MACNODE_AGENT_POOL_H
#define MACNODE_AGENT_POOL_H

#include <sys/types.h>

#include "agent.h"

#define AGENT_POOL_CONNS   1000   /* connections a server serves before it ends */
#define AGENT_POOL_IDLE    8      /* idle servers kept however long they are idle */
#define AGENT_POOL_IDLE_S  30     /* ... the others end after this long idle */

typedef struct agent_pool_limits {
    int max;            /* connections served at once */
    int max_per_uid;    /* ... of one uid other than root */
    int idle_keep;      /* AGENT_POOL_IDLE */
    int idle_ms;        /* AGENT_POOL_IDLE_S * 1000 */
    int conns;          /* AGENT_POOL_CONNS */
    int root_reserve;   /* of max, the last connections are root's alone (its health check, cleanup, usage) */
} agent_pool_limits_t;

typedef struct agent_pool agent_pool_t;

/* serve(ctx, c) serves one connection in a server (agent_serve); in_new(ctx) runs first in each new server,
 * to close what the main process holds (the listening socket, the gate's waiting connections). NULL with err
 * when out of memory. */
agent_pool_t *agent_pool_new(const agent_pool_limits_t *lim, void (*serve)(void *ctx, agent_conn_t *c),
                             void (*in_new)(void *ctx), void *ctx, tbm_err_t *err);

/* Hand c to a server: an idle one, else a new one. 0 when handed on; -1 when the agent (or c's uid) has all
 * the connections it may have (`busy`: users' connections take at most max - root_reserve in all, root's up to
 * max), -2 when no server can take it (cannot fork); why says which. Either way c's socket and decoder are
 * still the caller's to close and free (the server has its own copy). */
int agent_pool_give(agent_pool_t *p, agent_conn_t *c, char *why, size_t len);

/* A child of the main process was reaped: forget it when it was a server. 1 when it was one. */
int agent_pool_reaped(agent_pool_t *p, pid_t pid);

/* Now and then (the main loop's turn): read the servers' idle notes, end idle servers beyond the limits. */
void agent_pool_tick(agent_pool_t *p, long long now_ms);

/* How many servers there are, and how many of them are idle (*idle, when not NULL). */
int agent_pool_count(agent_pool_t *p, int *idle);

/* The agent stops: close every channel (idle servers end now, busy ones after their connection) and free. */
void agent_pool_free(agent_pool_t *p);

/* In another child of the main process (the sweeper): close this process's copies of the channels. */
void agent_pool_drop(agent_pool_t *p);

#endif
