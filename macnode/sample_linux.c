/* sample_linux.c: the sampler's OS readings on Linux (sample_os.h): /proc/stat and /proc/meminfo (read by
 * lib/macsample.c), and an interface's flags and 64-bit counters from the kernel over NETLINK_ROUTE
 * (RTM_GETLINK, IFLA_STATS64), which answers for the network namespace the agent runs in. */
#include "config.h"
#include "sample_os.h"

#ifdef __linux__
#include <errno.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fileio.h"

/* A /proc file read and parsed by parse (which sets err when it fails). 0, or -1 with err. */
static int read_proc(const char *path, int (*parse)(const char *text, size_t len, void *out, tbm_err_t *err),
                     void *out, tbm_err_t *err)
{
    size_t len = 0;
    char *text = tbm_read_file(path, 1u << 20, &len, err);
    int rc;

    if (!text)
        return -1;
    rc = parse(text, len, out, err);
    free(text);
    return rc;
}

static int parse_stat(const char *text, size_t len, void *out, tbm_err_t *err)
{
    return tbm_parse_proc_stat(text, len, out, err);
}

static int parse_meminfo(const char *text, size_t len, void *out, tbm_err_t *err)
{
    tbm_mac_sample_t *s = out;

    return tbm_parse_meminfo(text, len, &s->mem_total, &s->mem_used, err);
}

int sample_os_cpu(tbm_cpu_ticks_t *t, tbm_err_t *err)
{
    return read_proc("/proc/stat", parse_stat, t, err);
}

int sample_os_memory(tbm_mac_sample_t *s, tbm_err_t *err)
{
    return read_proc("/proc/meminfo", parse_meminfo, s, err);
}

/* The link message's flags and IFLA_STATS64 into l. */
static void from_message(const struct nlmsghdr *h, tbm_ms_link_t *l)
{
    const struct ifinfomsg *ifi = NLMSG_DATA(h);
    const struct rtattr *rta = IFLA_RTA(ifi);
    int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*ifi));
    struct rtnl_link_stats64 st;

    l->up = (ifi->ifi_flags & IFF_UP) && (ifi->ifi_flags & IFF_RUNNING);
    for (; RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
        if (rta->rta_type != IFLA_STATS64 || RTA_PAYLOAD(rta) < sizeof(st))
            continue;
        memcpy(&st, RTA_DATA(rta), sizeof(st));
        l->rx_bytes = tbm_reported((double)st.rx_bytes);
        l->tx_bytes = tbm_reported((double)st.tx_bytes);
        l->rx_packets = tbm_reported((double)st.rx_packets);
        l->tx_packets = tbm_reported((double)st.tx_packets);
        l->rx_errors = tbm_reported((double)st.rx_errors);
        l->tx_errors = tbm_reported((double)st.tx_errors);
    }
}

int sample_os_link(const char *iface, tbm_ms_link_t *l, tbm_err_t *err)
{
    struct {
        struct nlmsghdr h;
        struct ifinfomsg ifi;
    } req;
    union {
        char buf[16384];
        struct nlmsghdr align;
    } u;
    unsigned idx = if_nametoindex(iface);
    struct pollfd pfd;
    ssize_t n;
    int fd, rc = -1;
    struct nlmsghdr *h;

    if (idx == 0) {
        l->up = -1;
        return 0;
    }
    fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return tbm_errprintf(err, "%s: cannot open a netlink socket: %s", iface, strerror(errno));
    memset(&req, 0, sizeof(req));
    req.h.nlmsg_len = sizeof(req);
    req.h.nlmsg_type = RTM_GETLINK;
    req.h.nlmsg_flags = NLM_F_REQUEST;
    req.h.nlmsg_seq = 1;
    req.ifi.ifi_family = AF_UNSPEC;
    req.ifi.ifi_index = (int)idx;
    if (send(fd, &req, sizeof(req), 0) < 0) {
        tbm_errprintf(err, "%s: cannot ask the kernel for the link: %s", iface, strerror(errno));
        goto out;
    }
    pfd.fd = fd;
    pfd.events = POLLIN;
    if (poll(&pfd, 1, 1000) <= 0 || (n = recv(fd, u.buf, sizeof(u.buf), 0)) < 0) {
        tbm_errprintf(err, "%s: the kernel did not answer for the link within 1 s", iface);
        goto out;
    }
    for (h = &u.align; NLMSG_OK(h, (unsigned)n); h = NLMSG_NEXT(h, n)) {
        if (h->nlmsg_type == NLMSG_ERROR) {
            const struct nlmsgerr *e = NLMSG_DATA(h);
            if (e->error == -ENODEV) {
                l->up = -1;
                rc = 0;
            } else
                tbm_errprintf(err, "%s: the kernel refused the link request: %s", iface, strerror(-e->error));
            goto out;
        }
        if (h->nlmsg_type == RTM_NEWLINK && h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifinfomsg))) {
            from_message(h, l);
            rc = 0;
            goto out;
        }
    }
    tbm_errprintf(err, "%s: the kernel's answer held no link", iface);
out:
    close(fd);
    return rc;
}
#endif
