/* netplan.c: the per-cable /30 plan and its macOS commands (see netplan.h). */
#include "netplan.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

static int parse_base(const char *base, uint32_t *net, int *len, tbm_err_t *err)
{
    char addr[TBM_IPV4_MAX + 4];
    const char *slash = strchr(base, '/');
    struct in_addr in;
    char *end;
    long n;

    if (!slash || (size_t)(slash - base) >= sizeof(addr))
        return tbm_errprintf(err, "--base %.40s is not a network: write it as address/prefix, e.g. 169.254.0.0/16",
                             base);
    memcpy(addr, base, (size_t)(slash - base));
    addr[slash - base] = '\0';
    n = strtol(slash + 1, &end, 10);
    if (inet_pton(AF_INET, addr, &in) != 1 || *end || end == slash + 1 || n < 8 || n > 29)
        return tbm_errprintf(err, "--base %.40s is not a network with room for /30 cables: write address/prefix "
                             "with a prefix from 8 to 29, e.g. 169.254.0.0/16", base);
    *len = (int)n;
    *net = ntohl(in.s_addr) & (n ? 0xffffffffu << (32 - n) : 0);
    return 0;
}

static void ip_text(uint32_t ip, char *buf, size_t len)
{
    struct in_addr in = { htonl(ip) };
    inet_ntop(AF_INET, &in, buf, (socklen_t)len);
}

/* Is this /30 (network address) used by an address of a kept cable? */
static int subnet_taken(const tbm_netplan_t *p, uint32_t subnet)
{
    struct in_addr in;
    size_t i;
    int e;

    for (i = 0; i < p->n_cables; i++) {
        if (p->cables[i].planned)
            continue;
        for (e = 0; e < 2; e++)
            if (inet_pton(AF_INET, p->cables[i].end[e].ipv4, &in) == 1 && (ntohl(in.s_addr) & ~3u) == subnet)
                return 1;
    }
    return 0;
}

static void copy_end(tbm_netplan_end_t *dst, const tbm_conf_t *c, const tbm_conf_end_t *e)
{
    snprintf(dst->node, sizeof(dst->node), "%s", c->nodes[e->node].name);
    snprintf(dst->iface, sizeof(dst->iface), "%s", e->iface);
    snprintf(dst->ipv4, sizeof(dst->ipv4), "%s", e->ipv4);
}

static int number_cables(tbm_netplan_t *p, uint32_t net, int len, tbm_err_t *err)
{
    uint32_t size = 1u << (32 - len), next = 4;
    size_t i;

    for (i = 0; i < p->n_cables; i++) {
        tbm_netplan_cable_t *cb = &p->cables[i];
        if (!cb->planned)
            continue;
        while (next < size && subnet_taken(p, net + next))
            next += 4;
        if (next >= size)
            return tbm_errprintf(err, "the base network has room for %u cables, fewer than the lab needs: give a "
                                 "larger one (a smaller prefix)", size / 4 - 1);
        ip_text(net + next + 1, cb->end[0].ipv4, sizeof(cb->end[0].ipv4));
        ip_text(net + next + 2, cb->end[1].ipv4, sizeof(cb->end[1].ipv4));
        cb->prefix_len = 30;
        next += 4;
    }
    return 0;
}

int tbm_netplan_make(const tbm_conf_t *c, const char *base, int renumber, tbm_netplan_t *p, tbm_err_t *err)
{
    uint32_t net = 0;
    size_t i;
    int len = 0;

    memset(p, 0, sizeof(*p));
    if (parse_base(base, &net, &len, err) < 0)
        return -1;
    p->cables = calloc(c->n_cables ? c->n_cables : 1, sizeof(*p->cables));
    if (!p->cables)
        return tbm_errprintf(err, "out of memory");
    p->n_cables = c->n_cables;
    for (i = 0; i < c->n_cables; i++) {
        const tbm_conf_cable_t *cc = &c->cables[i];
        tbm_netplan_cable_t *cb = &p->cables[i];
        copy_end(&cb->end[0], c, &cc->end[0]);
        copy_end(&cb->end[1], c, &cc->end[1]);
        cb->planned = renumber || !cc->end[0].ipv4[0] || !cc->end[1].ipv4[0];
        cb->prefix_len = cb->planned ? 30 : cc->end[0].prefix_len;
    }
    if (number_cables(p, net, len, err) < 0) {
        tbm_netplan_free(p);
        return -1;
    }
    return 0;
}

void tbm_netplan_free(tbm_netplan_t *p)
{
    free(p->cables);
    memset(p, 0, sizeof(*p));
}

char *tbm_netplan_table(const tbm_netplan_t *p)
{
    tbm_strbuf_t sb;
    size_t i;

    tbm_sb_init(&sb);
    for (i = 0; i < p->n_cables; i++) {
        const tbm_netplan_cable_t *cb = &p->cables[i];
        tbm_sb_printf(&sb, "%s:%s %s/%d <-> %s:%s %s/%d%s\n", cb->end[0].node, cb->end[0].iface, cb->end[0].ipv4,
                      cb->prefix_len, cb->end[1].node, cb->end[1].iface, cb->end[1].ipv4, cb->prefix_len,
                      cb->planned ? "" : "   (kept from tbmesh.conf)");
    }
    if (!sb.len)
        tbm_sb_printf(&sb, "# no cables\n");
    return tbm_sb_take(&sb);
}

static void netmask_text(int prefix, char *buf, size_t len)
{
    ip_text(prefix ? 0xffffffffu << (32 - prefix) : 0, buf, len);
}

/* The commands of one host; returns how many cables it has. */
static size_t host_commands(const tbm_netplan_t *p, const char *host, tbm_strbuf_t *sb)
{
    char mask[TBM_IPV4_MAX];
    size_t i, n = 0;
    int e;

    for (i = 0; i < p->n_cables; i++) {
        const tbm_netplan_cable_t *cb = &p->cables[i];
        for (e = 0; e < 2; e++) {
            const tbm_netplan_end_t *me = &cb->end[e], *peer = &cb->end[!e];
            if (strcmp(me->node, host) != 0)
                continue;
            if (n++ == 0)
                tbm_sb_printf(sb, "# on %s\nifconfig bridge0 down\n", host);
            netmask_text(cb->prefix_len, mask, sizeof(mask));
            tbm_sb_printf(sb, "ifconfig %s inet %s netmask %s up\n", me->iface, me->ipv4, mask);
            tbm_sb_printf(sb, "route -n change -host %s -interface %s || route -n add -host %s -interface %s\n",
                          peer->ipv4, me->iface, peer->ipv4, me->iface);
        }
    }
    return n;
}

char *tbm_netplan_commands(const tbm_netplan_t *p, const char *host, tbm_err_t *err)
{
    tbm_strbuf_t sb;
    size_t i;
    int e;

    tbm_sb_init(&sb);
    tbm_sb_printf(&sb, "#!/bin/sh\n# Thunderbolt addressing from `macnode netplan`; run as root on each Mac. "
                       "Not persistent: run again after a reboot.\nset -e\n");
    if (host) {
        if (host_commands(p, host, &sb) == 0) {
            tbm_sb_free(&sb);
            tbm_errprintf(err, "%s has no cable in tbmesh.conf: name a host of the lab (--host NAME)", host);
            return NULL;
        }
        return tbm_sb_take(&sb);
    }
    for (i = 0; i < p->n_cables; i++)
        for (e = 0; e < 2; e++) {
            const char *name = p->cables[i].end[e].node;
            size_t j;
            int seen = 0;
            for (j = 0; j < i && !seen; j++)
                seen = !strcmp(p->cables[j].end[0].node, name) || !strcmp(p->cables[j].end[1].node, name);
            if (!seen && !(e == 1 && !strcmp(p->cables[i].end[0].node, name)))
                host_commands(p, name, &sb);
        }
    return tbm_sb_take(&sb);
}
