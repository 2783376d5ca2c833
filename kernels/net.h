/* net.h: plain TCP sockets for libtbmcoll: listen, dial with bounded retries, accept, exact reads and writes
 * with deadlines (the tbm_now_ms() clock of lib/clock.h), and the data-path settings. Knows nothing of the
 * communicator: every failure comes back as a message in a tbm_err_t, or as an error code. Not installed. */
#ifndef TBMCOLL_NET_H
#define TBMCOLL_NET_H

#include <stddef.h>
#include <stdint.h>

#include "mlxenv.h"
#include "tbmcoll.h"

#define TBMCOLL_ADDR_MAX 32   /* "255.255.255.255:65535" with NUL */

/* How long an accepted connection may take to say who it is (a rank's hello, or its header to the JACCL
 * coordinator) before it is dropped as a stray: a port scan, or a client of some other program. */
#define TBMCOLL_STRAY_HELLO_MS 2000

/* "a.b.c.d:port" of an address. */
void tbmcoll_addr_text(const tbm_mlx_addr_t *a, char *out, size_t outsz);

/* A listening socket bound to addr (port 0: any free port, written back into addr). Returns the fd, or -1
 * with a message. */
int tbmcoll_listen(const tbmcoll_opts_t *o, tbm_mlx_addr_t *addr, tbm_err_t *err);

/* Dial addr, retrying refused connections until deadline_ms. Returns a connected blocking fd, or -1 with a
 * message naming `who`. */
int tbmcoll_dial(const tbmcoll_opts_t *o, const tbm_mlx_addr_t *addr, int64_t deadline_ms, const char *who,
                 tbm_err_t *err);

/* Accept one connection on any of the listeners before deadline_ms. Returns the fd (peer's address in
 * peer_text), -1 with a message (timed out), or -2 with a message (out of file descriptors or memory). */
int tbmcoll_accept(const int *lfds, int nl, int64_t deadline_ms, char *peer_text, size_t ptsz, tbm_err_t *err);

/* Blocking exact read / write with a deadline. Return 0, or -1 with a message naming `who`. */
int tbmcoll_read_full(int fd, void *buf, size_t len, int64_t deadline_ms, const char *who, tbm_err_t *err);
int tbmcoll_write_full(int fd, const void *buf, size_t len, int64_t deadline_ms, const char *who,
                       tbm_err_t *err);

/* Set up a connected socket for the data path: TCP_NODELAY, buffers, non-blocking, no SIGPIPE. */
int tbmcoll_tune(int fd, const tbmcoll_opts_t *o, tbm_err_t *err);

/* The most one send call moves. A send holds its socket's lock while the kernel copies; what the peer sends
 * on the same connection meanwhile waits in the socket's backlog and is queued in one burst when the call
 * ends, and a burst can pass the receive buffer: the kernel then drops it (TCPRcvQDrop) and the peer waits
 * for a retransmission timeout, 200 ms or more (seen in the lab: all-reduces of 16 MiB at a seventh of their
 * rate, both directions of one connection busy with sends of megabytes). A bounded call bounds the burst. */
#define TBMCOLL_SEND_CALL_MAX (512u << 10)

/* One non-blocking send (is_send; at most TBMCOLL_SEND_CALL_MAX) or receive of up to len bytes. Returns the
 * bytes moved (> 0), 0 when the socket would block (or a signal came), or minus an error code: -EPIPE when
 * the peer closed the connection, else -errno. */
long tbmcoll_sock_io(int fd, int is_send, unsigned char *buf, size_t len);

/* Where a connected socket leaves this host, for messages: "mac07's en2" (this host's name and the interface
 * holding the socket's local address), or "" when it cannot be told. */
void tbmcoll_local_end(int fd, char *out, size_t outsz);

/* Whether the peer of a connected socket has closed it, without consuming data: 0 (no), or an error code
 * (EPIPE when it closed, else the errno). */
int tbmcoll_peer_closed(int fd);

#endif
