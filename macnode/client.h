/* client.h: the client side of the bridge-agent protocol, shared by macnode exec, cleanup, probe --agent and check:
 * connect and authenticate (MUNGE hello), then one request and its reply. */
#ifndef MACNODE_CLIENT_H
#define MACNODE_CLIENT_H

#include "errbuf.h"
#include "facts.h"
#include "proto.h"

typedef struct client {
    const char *agent;    /* ADDR[:PORT] */
    const char *socket;   /* munged's socket, NULL for libmunge's default */
    const char *mac;      /* the Mac's name for messages ($SLURMD_NODENAME by default); NULL: not known */
    int reply_ms;         /* the longest wait for each message of the agent; 0: CLIENT_REPLY_MS */
    int fd;
    tbm_fdec_t dec;
    char node[TBM_NODE_MAX];   /* the node name the agent gave in its welcome */
} client_t;

/* Who the client talks to, for messages: "the agent of mac01 at 10.0.0.1:6830" (the name from the welcome,
 * else c->mac), or "the agent at 10.0.0.1:6830". */
const char *client_who(const client_t *c, char *buf, size_t len);

/* Make a fresh MUNGE credential, connect to c->agent, say hello at once and wait for the welcome. 0, or -1
 * with err naming the Mac and the agent's address (connection refused, MUNGE failed, the agent refused).
 * Call client_close() either way. */
int client_open(client_t *c, tbm_err_t *err);

/* Send req and wait for a reply of type `want` (*reply: tbm_msg_free it). An error reply, another type,
 * or the connection ending give -1 with err. */
int client_call(client_t *c, const tbm_msg_t *req, tbm_msg_type_t want, tbm_msg_t *reply, tbm_err_t *err);

void client_close(client_t *c);

#define CLIENT_REPLY_MS 60000

/* A Mac's facts from its agent (the probe request): connect to agent (ADDR[:PORT]) with munged's socket
 * (NULL: libmunge's default), ask, parse, waiting at most reply_ms for each reply (0: CLIENT_REPLY_MS). 0,
 * or -1 with err naming the agent. */
int client_probe(const char *agent, const char *socket, int reply_ms, tbm_host_facts_t *f, tbm_err_t *err);

/* The agent from --agent or $TBMESH_AGENT, the socket from --munge-socket or $TBMESH_MUNGE_SOCKET, the Mac's
 * name from $SLURMD_NODENAME; -1 with a message on stderr when no agent is known. */
int client_defaults(client_t *c, const char *cmd);

/* The grant text: from FILE, one line of stdin ('-', read byte by byte so that the rest stays unread), or
 * $TBMESH_GRANT when arg is NULL. NULL when there is none (err empty) or it cannot be read (err set). */
char *client_load_grant(const char *arg, tbm_err_t *err);

#endif
