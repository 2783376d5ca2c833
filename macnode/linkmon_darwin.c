/* linkmon_darwin.c: link news on macOS: a PF_ROUTE socket; each RTM_IFINFO message carries the interface's
 * index and flags (linkmon.h). Built on macOS only; the embedded lab runs linkmon_linux.c. */
#include "config.h"
#include "linkmon.h"

#ifdef __APPLE__
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/route.h>
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

int linkmon_read(int fd, linkmon_fn fn, void *ctx, tbm_err_t *err)
{
    char buf[8192] __attribute__((aligned(8)));
    char name[IF_NAMESIZE];
    const struct if_msghdr *m;
    long n, off;

    for (;;) {
        n = linkmon_recv(fd, buf, sizeof(buf), "routing socket", err);
        if (n <= 0)
            return n == -2 ? 1 : (int)n;
        /* every routing message starts with its length (u_short), version and type (u_char each) */
        for (off = 0; off + 4 <= n;) {
            m = (const struct if_msghdr *)(buf + off);
            if (m->ifm_msglen < 4 || off + m->ifm_msglen > n)
                break;
            if (m->ifm_type == RTM_IFINFO && (size_t)m->ifm_msglen >= sizeof(*m) && if_indextoname(m->ifm_index, name))
                fn(ctx, name, (m->ifm_flags & IFF_UP) && (m->ifm_flags & IFF_RUNNING));
            off += m->ifm_msglen;
        }
    }
}
#endif
