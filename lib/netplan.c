/* netplan.c: the per-cable /30 plan and its macOS commands (see netplan.h). */
#include "netplan.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrclash.h"
#include "strbuf.h"
#include "scalar.h"

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

/* The prefix of a kept cable: the first end's, else the second's, else a /30 (Addr= without prefixes). */
static int kept_prefix(const tbm_conf_cable_t *cc)
{
    if (cc->end[0].prefix_len >= 1 && cc->end[0].prefix_len <= 32)
        return cc->end[0].prefix_len;
    if (cc->end[1].prefix_len >= 1 && cc->end[1].prefix_len <= 32)
        return cc->end[1].prefix_len;
    return 30;
}

/* Is this /30 (network address) within the network of an address of a kept cable? */
static int subnet_taken(const tbm_netplan_t *p, uint32_t subnet)
{
    tbm_addr_net_t n;
    uint32_t first, last;
    size_t i;
    int e;

    for (i = 0; i < p->n_cables; i++) {
        if (p->cables[i].planned)
            continue;
        for (e = 0; e < 2; e++)
            if (tbm_ipv4_parse(p->cables[i].end[e].ipv4, &n.addr) == 0) {
                n.prefix = p->cables[i].prefix_len;
                tbm_addr_net_range(&n, &first, &last);
                if (first <= subnet + 3 && subnet <= last)
                    return 1;
            }
    }
    return 0;
}

/* The nets of the addresses of every cable of `c` that keeps them (each end with its prefix, else the
 * cable's); `skip` (may be NULL) names cables left out. Returns how many (nets holds 2 * n_cables). */
static size_t kept_nets(const tbm_conf_t *c, const unsigned char *skip, tbm_addr_net_t *nets)
{
    size_t i, n = 0;
    int e;

    for (i = 0; i < c->n_cables; i++)
        for (e = 0; e < 2 && !(skip && skip[i]); e++)
            if (tbm_ipv4_parse(c->cables[i].end[e].ipv4, &nets[n].addr) == 0) {
                int pl = c->cables[i].end[e].prefix_len;
                nets[n].prefix = pl >= 1 && pl <= 32 ? pl : kept_prefix(&c->cables[i]);
                nets[n].owner = (int)i;
                nets[n++].group = c->cables[i].group;
            }
    return n;
}

/* For each cable of `c` whose kept addresses collide with an earlier kept cable's: that cable + 1, in
 * collides[] (calloc'ed by the caller, n_cables long). -1 when out of memory. */
static int find_collisions(const tbm_conf_t *c, const unsigned char *skip, int *collides)
{
    tbm_addr_net_t *nets = malloc((2 * c->n_cables + 1) * sizeof(*nets));
    tbm_addr_clash_t *clash = NULL;
    long n, i;

    if (!nets)
        return -1;
    n = tbm_addr_clashes(nets, kept_nets(c, skip, nets), &clash);
    for (i = 0; i < n; i++)
        if (!collides[nets[clash[i].b].owner])
            collides[nets[clash[i].b].owner] = nets[clash[i].a].owner + 1;
    free(clash);
    free(nets);
    return n < 0 ? -1 : 0;
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

int tbm_netplan_addrs_ok(const tbm_conf_cable_t *cb)
{
    uint32_t a, b;

    if (!cb->end[0].ipv4[0] && !cb->end[1].ipv4[0])
        return 1;
    return tbm_ipv4_parse(cb->end[0].ipv4, &a) == 0 && tbm_ipv4_parse(cb->end[1].ipv4, &b) == 0 &&
           tbm_link_addrs_ok(a, cb->end[0].prefix_len, b, cb->end[1].prefix_len);
}

/* Kept cables whose addresses collide with an earlier kept cable's are broken too. */
static int mark_collisions(const tbm_conf_t *c, tbm_netplan_t *p)
{
    unsigned char *skip = calloc(c->n_cables + 1, 1);
    int *collides = calloc(c->n_cables + 1, sizeof(int));
    size_t i;
    int rc = -1;

    if (skip && collides) {
        for (i = 0; i < c->n_cables; i++)
            skip[i] = (unsigned char)(p->cables[i].planned || p->cables[i].broken);
        rc = find_collisions(c, skip, collides);
        for (i = 0; rc == 0 && i < c->n_cables; i++)
            if (collides[i]) {
                p->cables[i].collides = collides[i];
                p->cables[i].broken = 1;
            }
    }
    free(skip);
    free(collides);
    return rc;
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
        cb->prefix_len = cb->planned ? 30 : kept_prefix(cc);
        cb->broken = !cb->planned && !tbm_netplan_addrs_ok(cc);
    }
    if (mark_collisions(c, p) < 0) {
        tbm_netplan_free(p);
        return tbm_errprintf(err, "out of memory");
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
        tbm_sb_printf(&sb, "%s:%s %s/%d <-> %s:%s %s/%d%s", cb->end[0].node, cb->end[0].iface, cb->end[0].ipv4,
                      cb->prefix_len, cb->end[1].node, cb->end[1].iface, cb->end[1].ipv4, cb->prefix_len,
                      cb->planned ? "" : !cb->broken ? "   (kept from tbmesh.conf)" : cb->collides ?
                      "   (kept from tbmesh.conf, BROKEN: its subnet collides with " : "   (kept from tbmesh.conf, "
                      "BROKEN: not one link; run `macnode netplan --renumber`)");
        if (cb->collides) {
            const tbm_netplan_cable_t *o = &p->cables[cb->collides - 1];
            tbm_sb_printf(&sb, "%s:%s <-> %s:%s; run `macnode netplan --renumber`)", o->end[0].node,
                          o->end[0].iface, o->end[1].node, o->end[1].iface);
        }
        tbm_sb_printf(&sb, "\n");
    }
    if (!sb.len)
        tbm_sb_printf(&sb, "# no cables\n");
    return tbm_sb_take(&sb);
}

#define BROKEN_FIX "run `macnode netplan --renumber` (every cable gets a /30 of its own; apply it on every " \
                   "Mac, then run tbmesh inventory again), or drop this cable's Addr= from tbmesh.conf so that " \
                   "only it is numbered afresh"

/* "mac01:en2 <-> mac02:en3" */
#define WHERE_MAX (2 * (TBM_HOSTNAME_MAX + TBM_IFNAME_MAX) + 8)

/* "10.0.0.4/30": the network of a cable's first end. */
static void cable_net(const tbm_netplan_cable_t *cb, char *buf, size_t len)
{
    tbm_addr_net_t n = { 0, cb->prefix_len, 0, 0 };

    if (tbm_ipv4_parse(cb->end[0].ipv4, &n.addr) < 0)
        snprintf(buf, len, "?");
    else
        tbm_addr_net_text(&n, buf, len);
}

static void report_collision(const tbm_netplan_t *p, const tbm_netplan_cable_t *cb, tbm_findings_t *fs)
{
    const tbm_netplan_cable_t *o = &p->cables[cb->collides - 1];
    char where[2 * WHERE_MAX + 4], net[24], onet[24];

    snprintf(where, sizeof(where), "%s:%s <-> %s:%s, %s:%s <-> %s:%s", o->end[0].node, o->end[0].iface,
             o->end[1].node, o->end[1].iface, cb->end[0].node, cb->end[0].iface, cb->end[1].node, cb->end[1].iface);
    cable_net(o, onet, sizeof(onet));
    cable_net(cb, net, sizeof(net));
    tbm_finding_add(fs, TBM_SEV_ERROR, "netplan-addr-collision", where, BROKEN_FIX,
                    "tbmesh.conf gives the cable %s:%s <-> %s:%s the addresses %s and %s, in %s%s%s%s, which the cable "
                    "%s:%s <-> %s:%s uses too: traffic for one would leave through the other", cb->end[0].node,
                    cb->end[0].iface, cb->end[1].node, cb->end[1].iface, cb->end[0].ipv4, cb->end[1].ipv4, net,
                    strcmp(net, onet) ? " (overlapping " : "", strcmp(net, onet) ? onet : "",
                    strcmp(net, onet) ? ")" : "", o->end[0].node, o->end[0].iface, o->end[1].node, o->end[1].iface);
}

size_t tbm_netplan_broken(const tbm_netplan_t *p, tbm_findings_t *fs)
{
    char where[WHERE_MAX];
    size_t i, n = 0;

    for (i = 0; i < p->n_cables; i++) {
        const tbm_netplan_cable_t *cb = &p->cables[i];
        if (!cb->broken)
            continue;
        n++;
        if (cb->collides) {
            report_collision(p, cb, fs);
            continue;
        }
        snprintf(where, sizeof(where), "%s:%s <-> %s:%s", cb->end[0].node, cb->end[0].iface, cb->end[1].node,
                 cb->end[1].iface);
        tbm_finding_add(fs, TBM_SEV_ERROR, "netplan-pair-broken", where, BROKEN_FIX,
                        "tbmesh.conf gives the two ends %s and %s, %s: the cable cannot carry traffic with them",
                        cb->end[0].ipv4, cb->end[1].ipv4, strcmp(cb->end[0].ipv4, cb->end[1].ipv4) == 0 ?
                        "the same address" : "not on one /30 nor on one common network");
    }
    return n;
}

/* Clear the addresses of cable i of c, with a warning saying why (`with`: the cable they collide with). */
static void drop_cable(tbm_conf_t *c, size_t i, const tbm_conf_cable_t *with, tbm_findings_t *fs)
{
    tbm_conf_cable_t *cb = &c->cables[i];
    char where[WHERE_MAX], why[WHERE_MAX + 64] = "they are not one link";
    int e;

    snprintf(where, sizeof(where), "%s:%s <-> %s:%s", c->nodes[cb->end[0].node].name, cb->end[0].iface,
             c->nodes[cb->end[1].node].name, cb->end[1].iface);
    if (with)
        snprintf(why, sizeof(why), "they collide with those of %s:%s <-> %s:%s", c->nodes[with->end[0].node].name,
                 with->end[0].iface, c->nodes[with->end[1].node].name, with->end[1].iface);
    tbm_finding_add(fs, TBM_SEV_WARNING, "addr-left-out", where,
                    "run `macnode netplan` on the two Macs (--apply): it gives this cable a /30 of its own; "
                    "then probe them and run tbmesh inventory again",
                    "tbmesh.conf leaves out this cable's addresses %s and %s: %s, and macnode netplan would keep "
                    "them", cb->end[0].ipv4, cb->end[1].ipv4, why);
    for (e = 0; e < 2; e++) {
        cb->end[e].ipv4[0] = '\0';
        cb->end[e].prefix_len = -1;
    }
}

size_t tbm_netplan_drop_broken(tbm_conf_t *c, tbm_findings_t *fs)
{
    unsigned char *bad = calloc(c->n_cables + 1, 1);
    int *collides = calloc(c->n_cables + 1, sizeof(int));
    size_t i, n = 0;

    for (i = 0; bad && i < c->n_cables; i++)
        bad[i] = (unsigned char)!tbm_netplan_addrs_ok(&c->cables[i]);
    if ((!bad || !collides || find_collisions(c, bad, collides) < 0) && collides)
        memset(collides, 0, (c->n_cables + 1) * sizeof(int));
    for (i = 0; bad && i < c->n_cables; i++)
        if (bad[i] || collides[i]) {
            drop_cable(c, i, bad[i] ? NULL : &c->cables[collides[i] - 1], fs);
            n++;
        }
    free(bad);
    free(collides);
    return n;
}

static void netmask_text(int prefix, char *buf, size_t len)
{
    ip_text(prefix ? 0xffffffffu << (32 - prefix) : 0, buf, len);
}

/* ---- routes ---- */

/* The hosts of the plan, in order of first appearance. */
static int plan_hosts(const tbm_netplan_t *p, const char ***names, size_t *n)
{
    size_t i, j;
    int e;

    *names = calloc(2 * p->n_cables + 1, sizeof(**names));
    *n = 0;
    if (!*names)
        return -1;
    for (i = 0; i < p->n_cables; i++)
        for (e = 0; e < 2; e++) {
            const char *name = p->cables[i].end[e].node;
            for (j = 0; j < *n && strcmp((*names)[j], name) != 0; j++)
                ;
            if (j == *n)
                (*names)[(*n)++] = name;
        }
    return 0;
}

static size_t host_index(const char *const *names, size_t n, const char *name)
{
    size_t i;

    for (i = 0; i < n && strcmp(names[i], name) != 0; i++)
        ;
    return i;
}

static int cabled(const tbm_netplan_t *p, const char *a, const char *b)
{
    size_t i;

    for (i = 0; i < p->n_cables; i++) {
        const tbm_netplan_cable_t *cb = &p->cables[i];
        if ((!strcmp(cb->end[0].node, a) && !strcmp(cb->end[1].node, b)) ||
            (!strcmp(cb->end[0].node, b) && !strcmp(cb->end[1].node, a)))
            return 1;
    }
    return 0;
}

int tbm_netplan_routes(const tbm_netplan_t *p, const char *host, tbm_netplan_route_t **routes, size_t *nroutes,
                       int *forwards, tbm_err_t *err)
{
    const char **names = NULL;
    size_t nh = 0, *queue = NULL, *first = NULL, head = 0, tail = 0, i, me, u, v, a, b;
    int *dist = NULL, e, rc = -1;
    tbm_netplan_route_t *out = NULL;
    size_t n = 0;

    *routes = NULL;
    *nroutes = 0;
    *forwards = 0;
    if (plan_hosts(p, &names, &nh) < 0)
        goto oom;
    me = host_index(names, nh, host);
    if (me == nh) {
        free(names);
        return 0;
    }
    queue = calloc(nh, sizeof(*queue));
    first = calloc(nh, sizeof(*first));       /* the cable of `host` that leads to each host */
    dist = calloc(nh, sizeof(*dist));
    out = calloc(2 * p->n_cables + 1, sizeof(*out));
    if (!queue || !first || !dist || !out)
        goto oom;
    for (i = 0; i < nh; i++)
        dist[i] = -1;
    dist[me] = 0;
    queue[tail++] = me;
    while (head < tail) {                      /* breadth first: fewest cables, cables in file order */
        u = queue[head++];
        for (i = 0; i < p->n_cables; i++)
            for (e = 0; e < 2; e++) {
                if (strcmp(p->cables[i].end[e].node, names[u]) != 0)
                    continue;
                v = host_index(names, nh, p->cables[i].end[!e].node);
                if (dist[v] >= 0)
                    continue;
                dist[v] = dist[u] + 1;
                first[v] = u == me ? i : first[u];
                queue[tail++] = v;
            }
    }
    for (i = 0; i < p->n_cables; i++) {
        const tbm_netplan_cable_t *cb = &p->cables[i];
        if (!strcmp(cb->end[0].node, host) || !strcmp(cb->end[1].node, host))
            continue;                          /* its own cables: the /30 reaches the peer */
        for (e = 0; e < 2; e++) {
            const tbm_netplan_cable_t *hop;
            tbm_netplan_route_t *r;
            int mine;
            v = host_index(names, nh, cb->end[e].node);
            if (dist[v] < 0 || !cb->end[e].ipv4[0])
                continue;
            hop = &p->cables[first[v]];
            mine = !strcmp(hop->end[0].node, host) ? 0 : 1;
            if (!hop->end[!mine].ipv4[0])
                continue;
            r = &out[n++];
            snprintf(r->dest, sizeof(r->dest), "%s", cb->end[e].ipv4);
            snprintf(r->owner, sizeof(r->owner), "%s", cb->end[e].node);
            snprintf(r->via, sizeof(r->via), "%s", hop->end[!mine].ipv4);
            snprintf(r->iface, sizeof(r->iface), "%s", hop->end[mine].iface);
            r->hops = dist[v];
        }
    }
    /* forwarding: two neighbours without a cable between them */
    for (a = 0; a < nh && !*forwards; a++)
        for (b = a + 1; b < nh && !*forwards; b++)
            if (a != me && b != me && dist[a] == 1 && dist[b] == 1 && !cabled(p, names[a], names[b]))
                *forwards = 1;
    *routes = n ? out : NULL;
    *nroutes = n;
    if (!n)
        free(out);
    out = NULL;
    rc = 0;
    goto done;
oom:
    tbm_errprintf(err, "out of memory");
done:
    free(names);
    free(queue);
    free(first);
    free(dist);
    free(out);
    return rc;
}

/* The commands of one host; returns how many cables it has, or -1 (out of memory). */
static long host_commands(const tbm_netplan_t *p, const char *host, tbm_netplan_os_t os, tbm_strbuf_t *sb,
                          tbm_err_t *err)
{
    char mask[TBM_IPV4_MAX];
    tbm_netplan_route_t *routes;
    size_t i, n = 0, nr;
    int e, forwards;

    for (i = 0; i < p->n_cables; i++) {
        const tbm_netplan_cable_t *cb = &p->cables[i];
        for (e = 0; e < 2; e++) {
            const tbm_netplan_end_t *me = &cb->end[e], *peer = &cb->end[!e];
            if (strcmp(me->node, host) != 0)
                continue;
            if (n++ == 0)
                tbm_sb_printf(sb, "# on %s\n%s", host, os == TBM_NETPLAN_MACOS ? "ifconfig bridge0 down\n" : "");
            if (os == TBM_NETPLAN_LINUX) {
                tbm_sb_printf(sb, "ip addr replace %s/%d dev %s\n", me->ipv4, cb->prefix_len, me->iface);
                continue;
            }
            netmask_text(cb->prefix_len, mask, sizeof(mask));
            tbm_sb_printf(sb, "ifconfig %s inet %s netmask %s up\n", me->iface, me->ipv4, mask);
            tbm_sb_printf(sb, "route -n change -host %s -interface %s || route -n add -host %s -interface %s\n",
                          peer->ipv4, me->iface, peer->ipv4, me->iface);
        }
    }
    if (n == 0)
        return 0;
    if (tbm_netplan_routes(p, host, &routes, &nr, &forwards, err) < 0)
        return -1;
    if (nr)
        tbm_sb_printf(sb, "# the other hosts' Thunderbolt addresses, over the cables (Open MPI dials every one)\n");
    for (i = 0; i < nr; i++) {
        const tbm_netplan_route_t *r = &routes[i];
        if (os == TBM_NETPLAN_LINUX)
            tbm_sb_printf(sb, "ip route replace %s/32 via %s dev %s\n", r->dest, r->via, r->iface);
        else
            tbm_sb_printf(sb, "route -n change -host %s %s || route -n add -host %s %s\n", r->dest, r->via, r->dest,
                          r->via);
    }
    if (forwards)
        tbm_sb_printf(sb, "# %s passes on the traffic of hosts that have no cable to each other\n%s\n", host,
                      os == TBM_NETPLAN_LINUX ? "sysctl -qw net.ipv4.ip_forward=1"
                                              : "sysctl -w net.inet.ip.forwarding=1");
    for (i = 0; i < nr && !(routes[i].hops > 1); i++)
        ;
    if (os == TBM_NETPLAN_LINUX && i < nr)   /* replies may come back another way round a ring: Linux's strict
                                                source check drops them (macOS has no such check) */
        tbm_sb_printf(sb, "sysctl -qw net.ipv4.conf.all.rp_filter=2\n");
    free(routes);
    return (long)n;
}

char *tbm_netplan_commands(const tbm_netplan_t *p, const char *host, tbm_netplan_os_t os, tbm_err_t *err)
{
    tbm_strbuf_t sb;
    size_t i;
    long rc;
    int e;

    tbm_sb_init(&sb);
    tbm_sb_printf(&sb, "#!/bin/sh\n# Thunderbolt addressing from `macnode netplan`; run as root on each %s. "
                       "Not persistent: run again after a reboot.\nset -e\n", os == TBM_NETPLAN_MACOS ? "Mac" :
                       "host");
    if (host) {
        rc = host_commands(p, host, os, &sb, err);
        if (rc <= 0) {
            tbm_sb_free(&sb);
            if (rc == 0)
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
            if (!seen && !(e == 1 && !strcmp(p->cables[i].end[0].node, name)) &&
                host_commands(p, name, os, &sb, err) < 0) {
                tbm_sb_free(&sb);
                return NULL;
            }
        }
    return tbm_sb_take(&sb);
}
