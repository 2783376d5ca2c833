/* linkmon.h: the OS's news of network links, for macnoded's watch request: a socket that becomes readable
 * when an interface's link changes (Linux: NETLINK_ROUTE with RTMGRP_LINK, linkmon_linux.c; macOS: PF_ROUTE
 * with RTM_IFINFO, linkmon_darwin.c), and the links' states now (getifaddrs, linkmon.c). A link is up when
 * the interface is up and running (has a carrier: a cable with something at the other end). */
#ifndef MACNODE_LINKMON_H
#define MACNODE_LINKMON_H

#include "errbuf.h"

#include <stddef.h>

/* Called with each interface's name and whether its link is up. */
typedef void (*linkmon_fn)(void *ctx, const char *name, int up);

/* The monitor's socket (non-blocking, close-on-exec), or -1 with err. */
int linkmon_open(tbm_err_t *err);

/* Read what the socket has, calling fn for every link message. 0 when all was read; 1 when news was lost
 * (the OS dropped messages as its buffer overflowed, or, with err saying which, a message could not be read):
 * take the states again with linkmon_states; -1 with err on a read error. */
int linkmon_read(int fd, linkmon_fn fn, void *ctx, tbm_err_t *err);

/* One read of the monitor's socket into buf (what names the socket in messages): the bytes read; 0 when
 * nothing is left to read; -2 when the OS dropped messages; -1 with err on a read error or a closed socket.
 * Shared by linkmon_read of each system. */
long linkmon_recv(int fd, void *buf, size_t size, const char *what, tbm_err_t *err);

/* Every interface's state now, through fn. 0, or -1 with err. */
int linkmon_states(linkmon_fn fn, void *ctx, tbm_err_t *err);

#endif
