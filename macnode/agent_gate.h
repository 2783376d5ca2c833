/* agent_gate.h: macnoded's front door. Every connection waits here, in the agent's main process, until its
 * first frame is a hello whose MUNGE credential checks out: nothing is forked and no large buffer is given to
 * a stranger (a hello fits in TBM_HELLO_MAX bytes). Waiting connections are bounded per peer address and in
 * total: a new connection is always taken, and the oldest waiting one (of its peer when that peer is at its
 * limit) is closed to make room, so a flood of idle connections ages out while a client that sends its hello
 * at once gets through. A connection without a whole hello after GATE_DEADLINE_MS is closed. Garbage is
 * refused as soon as it is read; all this is logged under the rate limit (agent_log.h). */
#ifndef MACNODE_AGENT_GATE_H
#define MACNODE_AGENT_GATE_H

#include "agent.h"

#define GATE_WAITING_MAX      128    /* connections waiting for their hello, in total */
#define GATE_WAITING_PER_PEER 32     /* ... from one peer address */
#define GATE_DEADLINE_MS      3000   /* from accept to a whole hello */
#define GATE_ACCEPT_BATCH     64     /* connections accepted per turn before the waiting ones are read again */

typedef struct agent_gate agent_gate_t;

/* A gate in front of the listening socket lfd (made non-blocking here). NULL with err when out of memory. */
agent_gate_t *agent_gate_new(const agent_conf_t *conf, int lfd, tbm_err_t *err);

/* Close every waiting connection and free the gate (not the listening socket). */
void agent_gate_free(agent_gate_t *g);

/* One turn: wait at most timeout_ms for the listening socket or a waiting connection; accept, read, refuse,
 * time out; hand each connection whose hello checked out to admit(ctx, c). From then on c's socket and
 * decoder are admit's: the gate forgets them. */
void agent_gate_turn(agent_gate_t *g, int timeout_ms, void (*admit)(void *ctx, agent_conn_t *c), void *ctx);

/* In a forked server: close the waiting connections' sockets (this process's copies) and free the gate. */
void agent_gate_drop(agent_gate_t *g);

/* What the limits decide, apart so that it can be tested: which waiting connection to close so that one more
 * from `addr` fits, given the waiting ones' addresses and arrival times. Its index, or -1 when there is
 * room. The oldest of addr's own when addr has per_peer waiting, else the oldest of all when total are. */
typedef struct agent_waiting {
    char addr[64];       /* the peer's address, without the port */
    long long since;     /* accepted at (tbm_now_ms) */
} agent_waiting_t;

int agent_gate_victim(const agent_waiting_t *w, int n, const char *addr, int per_peer, int total);

#endif
