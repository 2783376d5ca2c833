/* linkmon_linux.c: link news on Linux (the embedded lab's simulated Macs): a NETLINK_ROUTE socket subscribed
 * to RTMGRP_LINK; each RTM_NEWLINK / RTM_DELLINK names the interface (IFLA_IFNAME) and its flags
 * (linkmon.h). */
#include "config.h"
#include "linkmon.h"

#ifdef __linux__
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int linkmon_open(tbm_err_t *err)
{
    struct sockaddr_nl sa;
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);

    if (fd < 0)
        return tbm_errprintf(err, "cannot open a netlink socket for link changes: %s", strerror(errno));
    memset(&sa, 0, sizeof(sa));
    sa.nl_family = AF_NETLINK;
    sa.nl_groups = RTMGRP_LINK;
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        tbm_errprintf(err, "cannot subscribe to link changes (netlink RTMGRP_LINK): %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* One RTM_NEWLINK / RTM_DELLINK message. */
static void one(const struct nlmsghdr *h, linkmon_fn fn, void *ctx)
{
    const struct ifinfomsg *ifi = NLMSG_DATA(h);
    const struct rtattr *rta;
    int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*ifi));
    char name[IF_NAMESIZE];

    if (len < 0)
        return;
    for (rta = IFLA_RTA(ifi); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
        size_t n = RTA_PAYLOAD(rta);
        if (rta->rta_type != IFLA_IFNAME || n == 0 || n > sizeof(name))
            continue;
        memcpy(name, RTA_DATA(rta), n);
        name[n - 1] = '\0';
        fn(ctx, name, h->nlmsg_type == RTM_NEWLINK && (ifi->ifi_flags & IFF_UP) && (ifi->ifi_flags & IFF_RUNNING));
        return;
    }
}

int linkmon_read(int fd, linkmon_fn fn, void *ctx, tbm_err_t *err)
{
    char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
    const struct nlmsghdr *h;
    long n;
    int len;

    for (;;) {
        n = linkmon_recv(fd, buf, sizeof(buf), "netlink", err);
        if (n <= 0)
            return n == -2 ? 1 : (int)n;
        len = (int)n;
        for (h = (const struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned)len); h = NLMSG_NEXT(h, len))
            if (h->nlmsg_type == RTM_NEWLINK || h->nlmsg_type == RTM_DELLINK)
                one(h, fn, ctx);
    }
}
#endif
