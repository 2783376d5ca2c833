/* linkmon_darwin.c: link news on macOS: a PF_ROUTE socket; each RTM_IFINFO message carries the interface's
 * index and flags (linkmon.h), read by lib/rtmsg.c. Built on macOS only; the embedded lab runs linkmon_linux.c. */
#include "config.h"
#include "linkmon.h"
#include "rtmsg.h"

#ifdef __APPLE__
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/route.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int linkmon_open(tbm_err_t *err)
{
    int fd = socket(PF_ROUTE, SOCK_RAW, AF_UNSPEC), fl;

    if (fd < 0)
        return tbm_errprintf(err, "cannot open a routing socket for link changes: %s", strerror(errno));
    fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
        tbm_errprintf(err, "cannot make the routing socket non-blocking: %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* The system's layout is the one lib/rtmsg.c reads: checked here, where the system's headers are. */
_Static_assert(RTM_VERSION == TBM_RTM_VERSION && RTM_IFINFO == TBM_RTM_IFINFO, "routing message version and type");
_Static_assert(IFF_UP == TBM_RTM_IFF_UP && IFF_RUNNING == TBM_RTM_IFF_RUNNING, "interface flags");
_Static_assert(offsetof(struct if_msghdr, ifm_flags) == TBM_IFM_FLAGS_OFF &&
               offsetof(struct if_msghdr, ifm_index) == TBM_IFM_INDEX_OFF &&
               sizeof(struct if_msghdr) == TBM_IFM_SIZE, "struct if_msghdr");

typedef struct {
    linkmon_fn fn;
    void *ctx;
} by_index_t;

static void by_index(void *ctx, unsigned index, int up)
{
    by_index_t *b = ctx;
    char name[IF_NAMESIZE];

    if (if_indextoname(index, name))   /* an interface gone since: nothing to say of it */
        b->fn(b->ctx, name, up);
}

int linkmon_read(int fd, linkmon_fn fn, void *ctx, tbm_err_t *err)
{
    char buf[8192] __attribute__((aligned(8)));
    by_index_t b = { fn, ctx };
    long n;

    for (;;) {
        n = linkmon_recv(fd, buf, sizeof(buf), "routing socket", err);
        if (n <= 0)
            return n == -2 ? 1 : (int)n;
        if (tbm_rtmsg_links(buf, (size_t)n, by_index, &b, err) < 0)
            return 1;   /* err says which message; the caller takes the states afresh */
    }
}
#endif
