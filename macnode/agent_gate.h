/* agent_gate.h: macnoded's front door. Every connection waits here, in the agent's main process, until the
 * agent has proved itself to it and its hello's MUNGE credential checks out: nothing is forked and no large
 * buffer is given to a stranger (each first frame fits in TBM_HELLO_MAX bytes). The client's first frame is
 * prove (a nonce); the agent answers proof, a MUNGE credential of root's naming this node and the nonce
 * (lib/proto.h), once per connection, and at most GATE_PROOF_RATE a second (GATE_PROOF_BURST at once), so that
 * a flood of proves does not turn the agent into a munged hammer: a prove beyond that waits (its deadline
 * running) for the next, and the proofs due go first to the peers with the fewest proofs unanswered by a
 * hello. Then the hello. Waiting connections are bounded per peer address and in total: a new connection is
 * always taken, and the waiting one that has stood still the longest (no frame, no proof since) is closed to
 * make room (of its peer when that peer is at its limit), so a flood of idle connections ages out while a
 * client that sends its frames at once gets through. Connections from a port below 1024 (root's on a Linux
 * bridge host: wire_reserved_port; of two kinds by its lanes, root's own questions above the task connections
 * it greets) are kept apart from their address's others, counted by kind, closed to make room only when none
 * of a lower kind can be, and proved first, the higher kind before the lower: a user of the bridge host
 * flooding the agent does not crowd out root's questions nor the task connections the SPANK plug-in greets. A
 * connection without a whole hello after GATE_DEADLINE_MS is closed. Garbage is refused as soon as it is read;
 * all this is logged under the rate limit (agent_log.h). */
#ifndef MACNODE_AGENT_GATE_H
#define MACNODE_AGENT_GATE_H

#include "agent.h"

#define GATE_WAITING_MAX      128    /* connections waiting for their hello, in total */
#define GATE_WAITING_PER_PEER 64     /* ... from one peer address (the bridge launches a step's tasks at once) */
#define GATE_DEADLINE_MS      3000   /* from accept to a whole hello */
#define GATE_ACCEPT_BATCH     64     /* connections accepted per turn before the waiting ones are read again */
#define GATE_PROOF_RATE       256    /* proofs made a second at most (each a munge_encode) ... */
#define GATE_PROOF_BURST      128    /* ... and at once (every waiting connection) */

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

/* Where a waiting connection is. */
typedef enum agent_gate_phase {
    GATE_WANTS_PROVE = 0,   /* its first frame, prove, has not come */
    GATE_PROOF_DUE,         /* its prove came; its proof waits for the rate limit */
    GATE_PROVED,            /* its proof was sent; its hello has not come */
} agent_gate_phase_t;

/* The kinds of a connection's port, lowest first (wire.h's lanes): from 1024 up (anyone's), from root's lane
 * for the task connections it greets (512-767), from root's lane for its own questions (768-1023). */
enum { GATE_ANY = 0, GATE_TASK, GATE_ROOT };

/* The kind of a connection from a peer port (0: not IP). */
int agent_gate_port_kind(int port);

/* What the limits decide, apart so that it can be tested: which waiting connection to close so that one more
 * from `addr` of kind `kind` fits, given the waiting ones' addresses, kinds and when they last moved on.
 * Its index, or -1 when there is room. The one of addr's own of that kind that stood still the longest when
 * addr has per_peer of that kind waiting, else, when total are, the one of the lowest kind there is that stood
 * still the longest. */
typedef struct agent_waiting {
    char addr[64];       /* the peer's address, without the port */
    int kind;            /* its port's: GATE_ANY, GATE_TASK or GATE_ROOT */
    long long since;     /* accepted at (tbm_now_ms) */
    long long moved;     /* accepted, its prove read or its proof sent at, the last of them (tbm_now_ms) */
    agent_gate_phase_t phase;
    char nonce[TBM_NONCE_LEN + 1];   /* its prove's (GATE_PROOF_DUE) */
} agent_waiting_t;

int agent_gate_victim(const agent_waiting_t *w, int n, const char *addr, int kind, int per_peer, int total);

/* Which connection's proof is made next: of those GATE_PROOF_DUE, those of the highest kind first; of them,
 * one whose peer (address and kind) has the fewest connections GATE_PROVED (proofs that no hello answered
 * yet), the oldest of those. Its index, or -1 when none is due. */
int agent_gate_next_proof(const agent_waiting_t *w, int n);

/* The proofs' rate limit: a bucket of tokens, `rate` a second, at most `burst` kept. */
typedef struct agent_bucket {
    double tokens;
    long long at;        /* when it was last filled (tbm_now_ms); 0: never (it starts full) */
} agent_bucket_t;

/* Take a token at `now` (ms): 1 when there was one; 0 when not, with *wait_ms until the next. */
int agent_bucket_take(agent_bucket_t *b, long long now, int rate, int burst, int *wait_ms);

#endif
