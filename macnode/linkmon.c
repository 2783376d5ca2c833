/* linkmon.c: the links' states now, the same on Linux and macOS (getifaddrs; linkmon.h). */
#include "config.h"
#include "linkmon.h"

#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <string.h>
#include <unistd.h>

int linkmon_states(linkmon_fn fn, void *ctx, tbm_err_t *err)
{
    struct ifaddrs *all, *a, *b;

    if (getifaddrs(&all) < 0)
        return tbm_errprintf(err, "cannot list the network interfaces (getifaddrs): %s", strerror(errno));
    for (a = all; a; a = a->ifa_next) {
        for (b = all; b != a && strcmp(b->ifa_name, a->ifa_name) != 0; b = b->ifa_next)
            ;
        if (b == a)   /* each interface once: getifaddrs lists one entry per address */
            fn(ctx, a->ifa_name, (a->ifa_flags & IFF_UP) && (a->ifa_flags & IFF_RUNNING));
    }
    freeifaddrs(all);
    return 0;
}

long linkmon_recv(int fd, void *buf, size_t size, const char *what, tbm_err_t *err)
{
    ssize_t n;

    do
        n = read(fd, buf, size);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    if (n < 0 && errno == ENOBUFS)
        return -2;
    if (n <= 0)
        return tbm_errprintf(err, "reading link changes (%s): %s", what, n < 0 ? strerror(errno) : "closed");
    return (long)n;
}

#if !defined(__linux__) && !defined(__APPLE__)
/* Elsewhere there is no link monitor: the watch request is refused with this message. */
int linkmon_open(tbm_err_t *err)
{
    return tbm_errprintf(err, "this system has no link monitor (Linux and macOS have); run the health check "
                         "periodically instead");
}

int linkmon_read(int fd, linkmon_fn fn, void *ctx, tbm_err_t *err)
{
    (void)fd, (void)fn, (void)ctx;
    return tbm_errprintf(err, "this system has no link monitor");
}
#endif
