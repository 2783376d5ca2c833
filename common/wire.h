/* wire.h: the bridge-agent protocol on a socket: send messages and data frames, receive whole frames with
 * a deadline, connect and listen on ADDR:PORT. Shared by macnoded and macnode exec (framing is lib/proto). */
#ifndef TBM_COMMON_WIRE_H
#define TBM_COMMON_WIRE_H

#include <stddef.h>
#include <sys/socket.h>

#include "errbuf.h"
#include "proto.h"

/* Encode and send one message. 0, or -1 with err set. */
int wire_send(int fd, const tbm_msg_t *m, tbm_err_t *err);

/* Send an error message {code, message}; failures are ignored (the connection is closing anyway). */
void wire_send_error(int fd, const char *code, const char *message);

/* Send `len` bytes as data frames of `kind` (split at TBM_DATA_MAX; len 0 sends one empty frame). */
int wire_send_data(int fd, tbm_frame_kind_t kind, const void *buf, size_t len);

/* Read what the socket has into the decoder: >0 bytes read, 0 at end of stream, -1 with errno. */
ssize_t wire_fill(int fd, tbm_fdec_t *d);

/* Wait up to timeout_ms (-1: forever) for the next whole frame. 1 and *f; 0 at end of stream; -1 with err
 * (framing error, timeout, read error) and errno EPROTO (what came is no frame), ETIMEDOUT, or the read's. */
int wire_next_frame(int fd, tbm_fdec_t *d, tbm_frame_t *f, int timeout_ms, tbm_err_t *err);

/* Wait for the next JSON message; data frames are refused. 1 with *m (tbm_msg_free it), 0 at end of
 * stream, -1 with err (errno as wire_next_frame's; EPROTO for a frame that is no message). */
int wire_next_msg(int fd, tbm_fdec_t *d, tbm_msg_t *m, int timeout_ms, tbm_err_t *err);

/* Split "ADDR:PORT" or "ADDR" (port then default_port); an IPv6 address as "[ADDR]:PORT", "[ADDR]" or bare
 * ("::1", no port). 0, or -1 with err. */
int wire_split_addr(const char *spec, int default_port, char *host, size_t hostlen, int *port, tbm_err_t *err);

/* How long a peer may be silent and unreachable before a connection to it fails, by default: a machine that
 * lost its power or its network says nothing, so without this a task of a bridge host gone would run on,
 * and a forwarder would wait for a Mac gone, for ever. */
#define WIRE_PEER_TIMEOUT_S 60

/* Let the kernel find a dead peer within about `seconds` (> 0): TCP keepalive probes after an idle third of
 * it, then every sixth, four unanswered ending the connection; data unacknowledged that long ends it too
 * (TCP_USER_TIMEOUT, where there is one). 0: keepalive off. Failures are ignored (the connection works
 * without). */
void wire_keepalive(int fd, int seconds);

/* Root's connections to an agent leave from a port below 1024 (one that the services database does not name),
 * which on a Linux host only root may bind: the agent's gate serves a connection from such a port before the
 * others of its address, so that a user of the same bridge host who floods the agent cannot crowd out root's
 * questions (a step's usage, the health check's facts, the look at a failed task's agent) nor the task
 * connections the SPANK plug-in greets as root. Two lanes: the greeted task connections, held as long as their
 * tasks run, take ports of their own, so that however many tasks users keep running, root's own questions
 * still find ports. (A host whose net.ipv4.ip_unprivileged_port_start is below 1024 lets its users bind them
 * too, and loses that.) */
typedef enum wire_lane {
    WIRE_LANE_ROOT = 0,   /* root's own questions: ports 768-1023 */
    WIRE_LANE_TASK        /* task connections greeted by root: ports 512-767 */
} wire_lane_t;
#define WIRE_LANE_FIRST(lane) ((lane) == WIRE_LANE_TASK ? 512 : 768)
#define WIRE_LANE_PORTS 256

/* Bind fd (a new socket of family) to a port of lane when this process is root: the port, or 0 when it is not
 * root, the family is not IP, or none could be bound (all taken, or root may not bind them here): the
 * connection then leaves from any port, as a user's would. */
int wire_reserved_port(int fd, int family, wire_lane_t lane);

/* A connected TCP socket to spec (ADDR[:PORT]), or -1 with err (and errno from connect when the address was
 * good but the connection failed; 0 when the address was not). Root's leaves from a port of WIRE_LANE_ROOT
 * (wire_reserved_port). */
int wire_connect(const char *spec, int default_port, tbm_err_t *err);

/* wire_connect, giving up after ms (> 0; errno ETIMEDOUT then). */
int wire_connect_within(const char *spec, int default_port, int ms, tbm_err_t *err);

/* wire_connect_within, root's connection leaving from a port of lane. */
int wire_connect_lane(const char *spec, int default_port, int ms, wire_lane_t lane, tbm_err_t *err);

/* A listening TCP socket on spec (ADDR[:PORT]), or -1 with err. */
int wire_listen(const char *spec, int default_port, tbm_err_t *err);

/* "10.77.0.1:5123" for a peer address. */
void wire_peer_name(const struct sockaddr *sa, socklen_t len, char *buf, size_t buflen);

#endif
