/* client.h: the client side of the bridge-agent protocol, shared by macnode exec, cleanup, probe --agent and check
 * and by the SPANK plug-in's questions to an agent as root: connect, have the agent prove itself (lib/proto.h: prove, proof), authenticate (MUNGE hello), then one
 * request and its reply. */
#ifndef TBM_COMMON_CLIENT_H
#define TBM_COMMON_CLIENT_H

#include "errbuf.h"
#include "facts.h"
#include "proto.h"

/* When client_open's steps ended (tbm_now_us; 0: not reached), for macnode exec's launch times. */
typedef struct client_times {
    long long cred;       /* the hello's MUNGE credential made */
    long long connect;    /* the agent's address resolved and the TCP connection made */
    long long proof;      /* the agent's proof read and checked */
    long long welcome;    /* the hello sent and the agent's welcome read */
} client_times_t;

/* What failed when a call gave -1 (client_t.fault), for callers that act on it (drain a Mac whose agent does
 * not answer, not one that refused): err says it in words. */
typedef enum client_fault {
    CLIENT_OK = 0,
    CLIENT_LOCAL,         /* this side could not ask: no credential, no random bytes, no memory, no node to expect */
    CLIENT_UNREACHABLE,   /* no connection (fault_errno: connect's errno; 0: the address is wrong) */
    CLIENT_SILENT,        /* connected, but no answer in time */
    CLIENT_CLOSED,        /* connected, then closed (or a send or read failed) without an answer */
    CLIENT_UNPROVED,      /* it answered, but did not prove itself: no proof, or a false one */
    CLIENT_ANSWERED       /* it proved itself, then answered otherwise: refused, another message, no message */
} client_fault_t;

typedef struct client {
    const char *agent;    /* ADDR[:PORT] */
    const char *socket;   /* munged's socket, NULL for libmunge's default */
    const char *mac;      /* the Mac's name for messages ($SLURMD_NODENAME by default); NULL: not known */
    const char *want;     /* the node whose agent must prove itself (--node); NULL: client_expected_node finds it */
    int reply_ms;         /* the longest wait for each message of the agent; 0: CLIENT_REPLY_MS */
    int connect_ms;       /* the longest wait for the TCP connection; 0: the system's */
    long long deadline;   /* tbm_now_ms by which every message must have come; 0: none (reply_ms each) */
    int fd;
    int greeted;          /* fd is already connected and said hello (the SPANK plug-in did, TBMESH_AGENT_FD): the
                           * welcome is still to be read */
    int task_lane;        /* root greets a task's connection: it leaves from a port of WIRE_LANE_TASK, not of
                           * root's own questions' lane (wire.h) */
    tbm_fdec_t dec;
    char node[TBM_NODE_MAX];   /* the node the agent proved itself for (then named in its welcome) */
    client_times_t times;
    client_fault_t fault; /* set when a call gives -1 */
    int fault_errno;
} client_t;

/* Who the client talks to, for messages: "the agent of mac01 at 10.0.0.1:6830" (the name from the welcome,
 * else c->mac), or "the agent at 10.0.0.1:6830". */
const char *client_who(const client_t *c, char *buf, size_t len);

/* Which node's agent c->agent must be, for its proof: c->want; else the node tbmesh.conf ($TBMESH_CONF, else
 * beside $SLURM_CONF's slurm.conf) puts at that address; else c->mac; else the address's host when it is a
 * name, not a number (its first label: "mac01" for mac01.lab:6830). Into buf; 0, or -1 with err saying how to
 * name it. */
int client_expected_node(const client_t *c, char *buf, size_t len, tbm_err_t *err);

/* Make a fresh MUNGE credential, connect to c->agent, have the agent prove itself (a fresh nonce in prove,
 * its proof checked with lib's tbm_proof_check: root's, this nonce, the expected node) within CLIENT_PROOF_MS,
 * and only then say hello and wait for the welcome (a proof that did not come, or a connection closed before
 * it, is asked for again on a new connection, CLIENT_PROOF_TRIES times in all). 0, or -1 with err naming the Mac
 * and the agent's address (connection refused, MUNGE failed, no proof or a false one: nothing was sent then,
 * the agent refused).
 * Call client_close() either way. */
int client_open(client_t *c, tbm_err_t *err);

/* client_open with req (when not NULL) sent right behind the hello, in the same write, without waiting for
 * the welcome: the agent reads it once the hello has checked out (the gate reads no further before), which
 * saves a round trip. The welcome is read here; req's reply is the caller's to read. When c->greeted, c->fd
 * said hello already: the welcome is read, then req sent. */
int client_open_with(client_t *c, const tbm_msg_t *req, tbm_err_t *err);

/* Send req and wait for a reply of type `want` (*reply: tbm_msg_free it). An error reply, another type,
 * or the connection ending give -1 with err. */
int client_call(client_t *c, const tbm_msg_t *req, tbm_msg_type_t want, tbm_msg_t *reply, tbm_err_t *err);

/* Connect, say hello with req right behind it in the same write, and read the reply of type want (as
 * client_open_with, then the reply): one round trip. 0, or -1 with err. */
int client_ask(client_t *c, const tbm_msg_t *req, tbm_msg_type_t want, tbm_msg_t *reply, tbm_err_t *err);

void client_close(client_t *c);

/* Connect, have the agent prove itself, and say hello with `cred` (a job grant made to be a hello), without
 * waiting for the welcome: the connection is for the process that takes it over (TBMESH_AGENT_FD, where
 * c->greeted has client_open_with read the welcome). Its fd, kept across exec (the client keeps nothing of it:
 * no client_close), or -1 with err and c->fault. */
int client_greet(client_t *c, const char *cred, tbm_err_t *err);

#define CLIENT_REPLY_MS 60000
#define CLIENT_PROOF_MS 5000   /* the longest wait for the agent's proof (the agent's gate allows 3 s for all) */
#define CLIENT_PROOF_TRIES 3   /* connections tried for a proof that did not come (nothing of ours was sent) */

/* A Mac's facts from its agent (the probe request): connect to agent (ADDR[:PORT]), which must prove itself as
 * node's (NULL: client_expected_node), with munged's socket (NULL: libmunge's default), ask, parse, waiting
 * at most reply_ms for each reply (0: CLIENT_REPLY_MS). 0, or -1 with err naming the agent. */
int client_probe(const char *agent, const char *node, const char *socket, int reply_ms, tbm_host_facts_t *f,
                 tbm_err_t *err);

/* The agent from --agent or $TBMESH_AGENT, the socket from --munge-socket or $TBMESH_MUNGE_SOCKET, the Mac's
 * name from $SLURMD_NODENAME; -1 with a message on stderr when no agent is known. */
int client_defaults(client_t *c, const char *cmd);

/* The grant text: from FILE, one line of stdin ('-', read byte by byte so that the rest stays unread), or
 * $TBMESH_GRANT when arg is NULL. NULL when there is none (err empty) or it cannot be read (err set). */
char *client_load_grant(const char *arg, tbm_err_t *err);

/* A forwarded task's launch, as monotonic stamps (tbm_now_us; 0: not reached): the SPANK plug-in's (in
 * slurmstepd: the grant made, the forwarder exec'd) from $TBMESH_LAUNCH_STAMPS, then the forwarder's own. */
typedef struct client_launch {
    long long grant_start, grant_end, exec;   /* the plug-in's */
    long long main;                           /* the forwarder's main */
    client_times_t open;                      /* client_open's steps */
    long long started;                        /* the agent's started message read */
    long long first_output;                   /* the first stdout or stderr frame read */
    long long exit;                           /* the task's exit message read */
} client_launch_t;

/* The plug-in's three stamps from "GRANT_START GRANT_END EXEC" (decimal microseconds); 0, or -1 (the stamps
 * left at 0) when text is not three such numbers in order. */
int client_launch_stamps(const char *text, client_launch_t *l);

/* One line of the launch's parts in milliseconds, "grant=0.84 stepd=0.16 exec=2.10 credential=0.51
 * connect=0.12 proof=0.40 authenticate=1.93 spawn=3.02 first_output=0.44 total=9.12 end=0.80": grant (the job
 * grant's MUNGE credential, made as root in slurmstepd), stepd (slurmstepd's set-up of the task from there to
 * the plug-in's exec: as the user, the task's environment; with the plug-in's greeted connection, the agent's
 * proof too), exec (that exec to the forwarder's main), credential (the hello's MUNGE credential), connect
 * (resolve and TCP connect), proof (the prove sent to the agent's proof checked: the agent's MUNGE credential
 * made there, decoded here), authenticate (the hello, with the spawn
 * behind it, sent to the welcome read: the agent checks the credential and forks the connection's server),
 * spawn (the welcome to the agent's started: grant checked, job files written, task forked), first_output
 * (started to the first output frame: the task's set-up as its user, its exec, its output relayed), total
 * (the first stamp to the first output, else to the last before the exit), and apart from the launch, end
 * (the first output, else started, to the task's exit message). A part whose stamps are missing is "-". */
void client_launch_line(const client_launch_t *l, char *buf, size_t len);

#endif
