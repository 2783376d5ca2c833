/* rtmsg.h: link news from a macOS routing socket (PF_ROUTE), read as the bytes a read() returns, so that
 * the reading is tested on any system (macnode/linkmon_darwin.c holds the socket, and checks at compile time
 * on macOS that these constants and offsets are the system's own).
 *
 * Every routing message starts with its length (u_short), version (u_char) and type (u_char), in host byte
 * order. An interface message (RTM_IFINFO, struct if_msghdr in <net/if.h>) goes on with ifm_addrs (int,
 * offset 4), ifm_flags (int, offset 8: the interface's IFF_* flags), ifm_index (u_short, offset 12), two
 * bytes of padding and the interface's statistics (struct if_data, 96 bytes), 112 bytes in all. A link is up
 * when the interface is up and running (IFF_UP and IFF_RUNNING: it has a carrier). */
#ifndef TBM_RTMSG_H
#define TBM_RTMSG_H

#include "errbuf.h"

#include <stddef.h>

#define TBM_RTM_VERSION 5          /* RTM_VERSION */
#define TBM_RTM_IFINFO 0x0e        /* RTM_IFINFO */
#define TBM_RTM_IFF_UP 0x1         /* IFF_UP */
#define TBM_RTM_IFF_RUNNING 0x40   /* IFF_RUNNING */
#define TBM_IFM_FLAGS_OFF 8        /* offsetof(struct if_msghdr, ifm_flags) */
#define TBM_IFM_INDEX_OFF 12       /* offsetof(struct if_msghdr, ifm_index) */
#define TBM_IFM_SIZE 112           /* sizeof(struct if_msghdr) */

/* Called with an interface's index and whether its link is up. */
typedef void (*tbm_rtmsg_link_fn)(void *ctx, unsigned index, int up);

/* Walk the messages of one read of buf's n bytes, calling fn for every RTM_IFINFO message of version
 * TBM_RTM_VERSION (other types and versions are skipped by their length). Returns the number of link
 * messages seen; -1 with err when a message's length cannot be right (under 4 bytes, past the read's end, or
 * an RTM_IFINFO shorter than its header): what follows it in the read is lost, so the caller should take the
 * links' states afresh. The messages before it were passed to fn. */
long tbm_rtmsg_links(const void *buf, size_t n, tbm_rtmsg_link_fn fn, void *ctx, tbm_err_t *err);

#endif
