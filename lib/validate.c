/* validate.c: checks the topology against the JACCL/MLX checklist and derives each group's usable
 * backends (see validate.h). */
#include "validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrclash.h"
#include "hostlist.h"
#include "rdmamesh.h"
#include "scalar.h"

#define BIT(b) TBM_BACKEND_BIT(b)
#define BLOCK_TCP (TBM_BACKENDS_RDMA | BIT(TBM_BACKEND_RING))

/* ---- validation ---- */

typedef struct ctx {
    const tbm_topology_t *t;
    tbm_validation_t *v;
    const tbm_group_t *g;
    tbm_group_verdict_t *gv;
    int severe;                  /* rdma-related problems are errors in an RDMA group, else warnings */
    int dup_uuid;                /* the group holds a port with a duplicated domain UUID */
    /* What rules RDMA out, kept to find the Macs that still run JACCL once every check has run: */
    unsigned char *cable_rdma;   /* per cable: CABLE_DOES_RDMA, CABLE_RDMA_BLOCKED (by a finding on it) */
    unsigned char *host_rdma_bad;    /* per host: a finding on it rules RDMA out */
    unsigned char *group_rdma_bad;   /* per group: a finding on the whole group rules RDMA out */
    unsigned char *subset_wanted;    /* per group: some cables do RDMA, others cannot (rdma-subset) */
    int group_scope;             /* the finding being flagged is about the whole group, whatever host it names */
} ctx_t;

#define CABLE_DOES_RDMA    1u
#define CABLE_RDMA_BLOCKED 2u

static void mark(unsigned char *sev, int i, tbm_severity_t s)
{
    if (i >= 0 && sev[i] < (unsigned char)(s + 1))
        sev[i] = (unsigned char)(s + 1);
}

/* Where a finding that rules RDMA out lies: on a cable, else on a host, else on the group. */
static void rdma_blocked_at(ctx_t *c, unsigned blocks, int cable, int host)
{
    if (!(blocks & TBM_BACKENDS_RDMA) || !c->cable_rdma)
        return;
    if (cable >= 0)
        c->cable_rdma[cable] |= CABLE_RDMA_BLOCKED;
    else if (host >= 0 && !c->group_scope)
        c->host_rdma_bad[host] = 1;
    else
        c->group_rdma_bad[c->t->host_group[c->g->hosts[0]]] = 1;
}

/* Rule out the backends of `blocks` for the group, remembering the first reason. */
static void block(ctx_t *c, unsigned blocks, const char *code, const char *what)
{
    int b;

    for (b = 0; b < TBM_BACKEND_COUNT; b++)
        if ((blocks & BIT(b)) && !(c->gv->blocked & BIT(b))) {
            c->gv->blocked |= BIT(b);
            snprintf(c->gv->why[b], sizeof(c->gv->why[b]), "%s: %s", code, what);
        }
}

/* Add a finding about the group (on a cable or a host when >= 0) that rules out `blocks`. */
static void flag(ctx_t *c, tbm_severity_t sev, const char *code, const char *where, unsigned blocks, int cable,
                 int host, const char *fix, const char *fmt, ...) __attribute__((format(printf, 9, 10)));

static void flag(ctx_t *c, tbm_severity_t sev, const char *code, const char *where, unsigned blocks, int cable,
                 int host, const char *fix, const char *fmt, ...)
{
    char what[TBM_FINDING_TEXT_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    tbm_finding_add(&c->v->findings, sev, code, where, fix, "%s", what);
    block(c, blocks, code, what);
    rdma_blocked_at(c, blocks, cable, host);
    mark(c->v->cable_severity, cable, sev);
    mark(c->v->host_severity, host, sev);
}

/* The group's hosts as a hostlist ("mac[01-04]"), cut to fit: all of them, or those of `only` (bit i: the
 * group's host i; the group then has at most 32). */
static void hosts_where(const ctx_t *c, const uint32_t *only, char *buf, size_t len)
{
    char **names = malloc(c->g->n_hosts * sizeof(char *));
    char *s;
    size_t i, n = 0;

    buf[0] = '\0';
    if (!names)
        return;
    for (i = 0; i < c->g->n_hosts; i++)
        if (!only || (*only >> i) & 1u)
            names[n++] = (char *)tbm_topology_host_name(c->t, c->g->hosts[i]);
    s = tbm_hostlist_compress(names, n);
    snprintf(buf, len, "%s", s ? s : "");
    free(s);
    free(names);
}

static void group_where(const ctx_t *c, char *buf, size_t len)
{
    hosts_where(c, NULL, buf, len);
}

/* A part of the host's facts is unknown (its capture failed: the topology said so): rule out `blocks` without
 * a finding of its own, and return 1, so that nothing is concluded from it. */
static int unknown(ctx_t *c, int host, tbm_facts_part_t part, unsigned blocks)
{
    char what[TBM_FINDING_TEXT_MAX];

    if (!c->t->hosts[host].unknown[part][0])
        return 0;
    snprintf(what, sizeof(what), "no %s facts for %s: probe it again", tbm_facts_part_name(part, 1),
             tbm_topology_host_name(c->t, host));
    block(c, blocks, "facts-unknown", what);
    rdma_blocked_at(c, blocks, -1, host);
    return 1;
}

/* ---- per cable ---- */

static int has_rdma_device(const tbm_host_facts_t *h, const char *iface)
{
    char want[TBM_IFNAME_MAX + 8];
    int i;

    snprintf(want, sizeof(want), "rdma_%s", iface);
    for (i = 0; iface[0] && i < h->n_rdma && i < TBM_MAX_RDMA; i++)
        if (strncmp(h->rdma_devices[i], want, TBM_IFNAME_MAX) == 0)
            return 1;
    return 0;
}

/* What to do about a Mac without the RDMA device of a link: enable RDMA only where it is not enabled. */
static void rdma_missing_fix(const tbm_host_facts_t *h, int gbps, char *buf, size_t len)
{
    if (h->rdma_enabled == 1)
        tbm_rdma_enabled_fix(h, gbps, buf, len);
    else if (h->rdma_enabled == 0)
        snprintf(buf, len, "enable RDMA from Recovery (rdma_ctl enable) on that Mac, reboot, and check ibv_devices");
    else
        snprintf(buf, len, "run `rdma_ctl status` on that Mac; if disabled, enable RDMA from Recovery (rdma_ctl "
                 "enable) and reboot; then check ibv_devices");
}

/* RDMA on one cable of a group that wants RDMA; returns 1 when the cable does RDMA. */
static int check_rdma(ctx_t *c, int cable, const char *where)
{
    const tbm_cable_t *cb = &c->t->cables[cable];
    const tbm_port_t *p[2] = {&c->t->ports[cb->port[0]], &c->t->ports[cb->port[1]]};
    int e;

    if (cb->speed_gbps < TBM_TB5_MIN_GBPS) {
        flag(c, TBM_SEV_ERROR, "link-not-tb5", where, TBM_BACKENDS_RDMA, cable, -1,
             "use Thunderbolt 5 ports and cables on both Macs (on Mac Studio not the port beside Ethernet), "
             "or run this group with ring or mpi",
             "the link runs at %d Gb/s; RDMA needs Thunderbolt 5 (above 40 Gb/s) on both ends, whatever "
             "ibv_devices lists", cb->speed_gbps);
        return 0;
    }
    for (e = 0; e < 2; e++)
        if (unknown(c, p[e]->host, TBM_PART_RDMA, TBM_BACKENDS_RDMA))
            return 0;
    for (e = 0; e < 2; e++)
        if (!has_rdma_device(&c->t->hosts[p[e]->host], p[e]->iface)) {
            const tbm_host_facts_t *hf = &c->t->hosts[p[e]->host];
            char fix[TBM_FINDING_TEXT_MAX];
            rdma_missing_fix(hf, cb->speed_gbps, fix, sizeof(fix));
            flag(c, TBM_SEV_ERROR, "rdma-missing", where, TBM_BACKENDS_RDMA, cable, p[e]->host, fix,
                 "%s lists no RDMA device rdma_%s (ibv_devices; rdma_ctl says %s)",
                 tbm_topology_host_name(c->t, p[e]->host), p[e]->iface[0] ? p[e]->iface : "?",
                 hf->rdma_enabled == 1 ? "enabled" : hf->rdma_enabled == 0 ? "disabled" : "unknown");
            return 0;
        }
    return 1;
}

/* One end's interface: known, up, with an IPv4 address. Returns 1 when usable. */
static int check_end(ctx_t *c, int cable, const tbm_port_t *p, const char *where, uint32_t *addr)
{
    const char *h = tbm_topology_host_name(c->t, p->host);

    if (unknown(c, p->host, TBM_PART_NETWORK, BLOCK_TCP))
        return 0;
    if (!p->iface[0] || !p->iface_found) {
        flag(c, TBM_SEV_ERROR, "iface-unknown", where, BLOCK_TCP, cable, p->host,
             "check that networksetup lists a Thunderbolt network service for that port, then probe again",
             "%s: Thunderbolt %d is bound to no known network interface%s%s", h, p->receptacle,
             p->iface[0] ? " (" : "", p->iface[0] ? "not in ifconfig)" : "");
        return 0;
    }
    if (!p->ipv4[0] || tbm_ipv4_parse(p->ipv4, addr) < 0) {
        flag(c, TBM_SEV_ERROR, "ipv4-missing", where, BLOCK_TCP, cable, p->host,
             "give both ends of the cable an address on one /30: macnode netplan prints the commands",
             "%s:%s has no %sIPv4 address%s%s%s (JACCL and ring need one on every Thunderbolt interface)", h, p->iface,
             p->ipv4[0] ? "valid " : "", p->ipv4[0] ? " ('" : "", p->ipv4, p->ipv4[0] ? "')" : "");
        return 0;
    }
    if (!p->iface_up) {
        flag(c, TBM_SEV_ERROR, "iface-down", where, BLOCK_TCP, cable, p->host,
             "bring it up (ifconfig <iface> up) and check the cable", "%s:%s is down", h, p->iface);
        return 0;
    }
    return 1;
}

/* Both addresses on one network of `prefix` bits (1..30), as two usable host addresses. */
static int same_net(uint32_t a, uint32_t b, int prefix)
{
    uint32_t m = prefix < 1 || prefix > 30 ? 0 : (uint32_t)(0xffffffffu << (32 - prefix));

    if (!m || (a & m) != (b & m))
        return 0;
    return (a & ~m) != 0 && (a | m) != 0xffffffffu && (b & ~m) != 0 && (b | m) != 0xffffffffu;
}

int tbm_link_addrs_ok(uint32_t a, int prefix_a, uint32_t b, int prefix_b)
{
    return a != b && (same_net(a, b, 30) || (prefix_a == prefix_b && same_net(a, b, prefix_a)));
}

static void check_subnet(ctx_t *c, int cable, const char *where, uint32_t a, uint32_t b)
{
    const tbm_port_t *p[2] = {&c->t->ports[c->t->cables[cable].port[0]],
                              &c->t->ports[c->t->cables[cable].port[1]]};

    if (tbm_link_addrs_ok(a, p[0]->prefix_len, b, p[1]->prefix_len))
        return;
    flag(c, TBM_SEV_ERROR, "subnet-mismatch", where, BLOCK_TCP, cable, -1,
         "put both ends on one /30 of their own: macnode netplan prints a plan",
         "%s:%s has %s/%d and %s:%s has %s/%d: %s", tbm_topology_host_name(c->t, p[0]->host), p[0]->iface,
         p[0]->ipv4, p[0]->prefix_len, tbm_topology_host_name(c->t, p[1]->host), p[1]->iface, p[1]->ipv4,
         p[1]->prefix_len, a == b ? "the same address" : "not on one /30 nor on one common prefix");
}

/* Everything about one cable seen from both ends; returns 1 when it does RDMA. */
static int check_cable(ctx_t *c, int cable)
{
    const tbm_cable_t *cb = &c->t->cables[cable];
    char where[TBM_FINDING_WHERE_MAX];
    uint32_t a = 0, b = 0;
    int ok_a, ok_b, rdma = 0;

    tbm_cable_label(c->t, cable, where, sizeof(where));
    if (cb->one_sided) {
        mark(c->v->cable_severity, cable, TBM_SEV_ERROR);
        block(c, TBM_BACKENDS_RDMA, "cable-one-sided", where);
        rdma_blocked_at(c, TBM_BACKENDS_RDMA, -1, -1);
        return 0;
    }
    if (c->gv->rdma_wanted)
        rdma = check_rdma(c, cable, where);
    ok_a = check_end(c, cable, &c->t->ports[cb->port[0]], where, &a);
    ok_b = check_end(c, cable, &c->t->ports[cb->port[1]], where, &b);
    if (ok_a && ok_b)
        check_subnet(c, cable, where, a, b);
    return rdma;
}

/* ---- per host ---- */

static int bridge0_up(const tbm_host_facts_t *h)
{
    int i;

    for (i = 0; i < h->n_ifaces && i < TBM_MAX_IFACES; i++)
        if (strncmp(h->ifaces[i].name, "bridge0", TBM_IFNAME_MAX) == 0 && h->ifaces[i].up)
            return 1;
    return 0;
}

static void check_host(ctx_t *c, int host)
{
    const tbm_host_facts_t *h = &c->t->hosts[host];
    const char *name = tbm_topology_host_name(c->t, host);
    tbm_severity_t sev = c->severe ? TBM_SEV_ERROR : TBM_SEV_WARNING;

    if (h->hostname[0] && !tbm_hostname_valid(h->hostname))
        flag(c, TBM_SEV_ERROR, "hostname-invalid", name, TBM_BACKENDS_ALL, -1, host,
             "give the Mac a host name of letters, digits, '.', '-' and '_' (at most 63)",
             "host name '%s' cannot be a Slurm node name", name);
    if (bridge0_up(h))
        flag(c, sev, "bridge0-up", name, TBM_BACKENDS_RDMA, -1, host,
             "sudo ifconfig bridge0 down (and remove the Thunderbolt Bridge service so it stays down)",
             "bridge0 (Thunderbolt Bridge) is up on %s; JACCL fails with 'No IPv4-mapped GID' or RTR errno 22 "
             "while it is", name);
    if (c->gv->rdma_wanted && !unknown(c, host, TBM_PART_OS, TBM_BACKENDS_RDMA) &&
        tbm_macos_has_rdma(h->os_version) != 1)
        flag(c, TBM_SEV_ERROR, "os-too-old", name, TBM_BACKENDS_RDMA, -1, host,
             "update macOS to 26.2 or later on every Mac of the group",
             "%s runs macOS %s; JACCL needs 26.2 or later", name, h->os_version[0] ? h->os_version : "(unknown)");
}

/* One finding when the group's Macs run more than one macOS version. */
static void check_os(ctx_t *c)
{
    const tbm_host_facts_t *first = &c->t->hosts[c->g->hosts[0]];
    char what[TBM_FINDING_TEXT_MAX], where[TBM_FINDING_WHERE_MAX];
    size_t i;

    if (first->unknown[TBM_PART_OS][0])
        return;
    for (i = 1; i < c->g->n_hosts; i++) {
        const tbm_host_facts_t *h = &c->t->hosts[c->g->hosts[i]];
        if (h->unknown[TBM_PART_OS][0] || strncmp(h->os_version, first->os_version, TBM_HOST_MAX) == 0)
            continue;
        group_where(c, where, sizeof(where));
        snprintf(what, sizeof(what), "macOS versions differ in the group: %s runs %.20s, %s runs %.20s",
                 tbm_topology_host_name(c->t, c->g->hosts[0]), first->os_version,
                 tbm_topology_host_name(c->t, c->g->hosts[i]), h->os_version);
        c->group_scope = 1;   /* which Macs differ is relative: no part of the group is cleared */
        flag(c, c->severe ? TBM_SEV_ERROR : TBM_SEV_WARNING, "os-mismatch", where, TBM_BACKENDS_RDMA, -1,
             c->g->hosts[i], "update every Mac of the group to the same macOS version", "%s", what);
        c->group_scope = 0;
        return;
    }
}

/* ---- per group ---- */

/* The pairs missing from a full mesh, "mac01-mac03, mac02-mac04", cut to fit. */
static void missing_pairs(const ctx_t *c, char *buf, size_t len)
{
    size_t i, j, used = 0;

    buf[0] = '\0';
    for (i = 0; i < c->g->n_hosts && used < len; i++)
        for (j = i + 1; j < c->g->n_hosts && used < len; j++)
            if (!tbm_topology_pair(c->t, c->g->hosts[i], c->g->hosts[j]))
                used += (size_t)snprintf(buf + used, len - used, "%s%s-%s", used ? ", " : "",
                                         tbm_topology_host_name(c->t, c->g->hosts[i]),
                                         tbm_topology_host_name(c->t, c->g->hosts[j]));
}

static void check_class(ctx_t *c)
{
    char where[TBM_FINDING_WHERE_MAX], missing[200];
    size_t n = c->g->n_hosts;

    group_where(c, where, sizeof(where));
    if (c->g->cls == TBM_TOPO_SINGLE && unknown(c, c->g->hosts[0], TBM_PART_THUNDERBOLT, TBM_BACKENDS_ALL))
        return;
    if (c->g->cls == TBM_TOPO_SINGLE && c->g->n_cables > 0) {   /* one-sided cables only: they were named */
        block(c, BLOCK_TCP, "cable-one-sided", "its cables are seen from one end only");
        rdma_blocked_at(c, BLOCK_TCP, -1, -1);
    } else if (c->g->cls == TBM_TOPO_SINGLE)
        flag(c, TBM_SEV_INFO, "host-uncabled", where, BLOCK_TCP, -1, c->g->hosts[0],
             "cable it to the Macs of its group, or keep it for single-Mac jobs",
             "%s has no Thunderbolt cable to another Mac of the inventory", where);
    else if (c->g->cls == TBM_TOPO_OTHER) {
        missing_pairs(c, missing, sizeof(missing));
        flag(c, TBM_SEV_ERROR, "not-mesh-or-ring", where, BLOCK_TCP, -1, -1,
             "cable every pair (a full mesh of at most 8) or one closed cycle through all (a ring)",
             "%zu Macs with %zu joined pairs are neither a full mesh nor a ring; pairs not joined: %s", n,
             c->g->n_pairs, missing);
    } else if (c->g->cls == TBM_TOPO_MESH && n > TBM_JACCL_MESH_MAX)
        flag(c, TBM_SEV_WARNING, "mesh-too-large", where, 0, -1, -1,
             "run JACCL mesh jobs on 8 Macs or fewer; jobs on more use jaccl-ring or ring",
             "a full mesh of %zu Macs: a JACCL mesh takes at most %d of them", n, TBM_JACCL_MESH_MAX);
}

static int wants_rdma(const ctx_t *c)
{
    size_t i;

    for (i = 0; i < c->g->n_hosts; i++)
        if (c->t->hosts[c->g->hosts[i]].n_rdma > 0)
            return 1;
    return 0;
}

/* Groups holding a port whose domain UUID another port reports too: their cables cannot be trusted. */
static void mark_duplicates(const tbm_topology_t *t, tbm_validation_t *v, unsigned char *dup_group)
{
    size_t i;

    for (i = 0; i < t->n_ports; i++)
        if (t->ports[i].duplicate_uuid) {
            mark(v->host_severity, t->ports[i].host, TBM_SEV_ERROR);
            dup_group[t->host_group[t->ports[i].host]] = 1;
        }
}

/* No Mac of the group lists an RDMA device. Where rdma_ctl says enabled, enabling is not the fix. */
static void no_rdma(ctx_t *c, int slow, int min_speed)
{
    char where[TBM_FINDING_WHERE_MAX], fix[TBM_FINDING_TEXT_MAX], also[TBM_HOST_MAX + 48] = "";
    size_t i, n_enabled = 0;
    int enabled = -1;

    for (i = 0; i < c->g->n_hosts; i++)
        if (c->t->hosts[c->g->hosts[i]].rdma_enabled == 1 && n_enabled++ == 0)
            enabled = c->g->hosts[i];
    group_where(c, where, sizeof(where));
    if (enabled < 0) {
        flag(c, TBM_SEV_INFO, "rdma-unavailable", where, TBM_BACKENDS_RDMA, -1, -1,
             "for JACCL, cable Thunderbolt 5 Macs and enable RDMA from Recovery (rdma_ctl enable); ring and mpi "
             "work without",
             "no Mac of the group lists an RDMA device%s: JACCL is not available", slow ? " and its links run at "
             "40 Gb/s or less" : "");
        return;
    }
    tbm_rdma_enabled_fix(&c->t->hosts[enabled], min_speed, fix, sizeof(fix));
    snprintf(also, sizeof(also), " on %s%s", tbm_topology_host_name(c->t, enabled), n_enabled > 1 ? " and others" : "");
    flag(c, TBM_SEV_INFO, "rdma-unavailable", where, TBM_BACKENDS_RDMA, -1, -1, fix,
         "no Mac of the group lists an RDMA device although rdma_ctl says enabled%s%s: JACCL is not available "
         "(ring and mpi work without)", also, slow ? ", and its links run at 40 Gb/s or less" : "");
}

/* ---- the Macs that still run JACCL ---- */

/* The group's host number of a host (the group's hosts ascend). */
static int position(const ctx_t *c, int host)
{
    size_t i;

    for (i = 0; i < c->g->n_hosts && c->g->hosts[i] != host; i++)
        ;
    return (int)i;
}

/* The cables that do not do RDMA (at most 3 named, the rest counted): "mac03:en7 <-> mac08:en4 at 40 Gb/s
 * where RDMA wants above 40 Gb/s (Thunderbolt 5)". Fills no[] (bit: a pair with such a cable, or with a cable
 * that another finding rules RDMA out on). */
static size_t name_slow(const ctx_t *c, uint32_t *no, char *buf, size_t len)
{
    char label[TBM_FINDING_WHERE_MAX];
    size_t i, n = 0, used = 0;
    int a, b;

    buf[0] = '\0';
    for (i = 0; i < c->g->n_cables; i++) {
        const tbm_cable_t *cb = &c->t->cables[c->g->cables[i]];
        unsigned char r = c->cable_rdma[c->g->cables[i]];
        if (cb->one_sided || r == CABLE_DOES_RDMA)
            continue;
        a = position(c, cb->host[0]);
        b = position(c, cb->host[1]);
        if (a < TBM_RDMA_SEARCH_MAX && b < TBM_RDMA_SEARCH_MAX) {
            no[a] |= 1u << b;
            no[b] |= 1u << a;
        }
        if ((r & CABLE_DOES_RDMA) || n++ >= 3 || used >= len)
            continue;   /* it does RDMA, but something else is wrong with it: named by its own finding */
        tbm_cable_label(c->t, c->g->cables[i], label, sizeof(label));
        if (cb->speed_gbps < TBM_TB5_MIN_GBPS)
            used += (size_t)snprintf(buf + used, len - used, "%s%s at %d Gb/s where RDMA wants above 40 Gb/s "
                                     "(Thunderbolt 5)", n > 1 ? ", " : "", label, cb->speed_gbps);
        else
            used += (size_t)snprintf(buf + used, len - used, "%s%s (no RDMA device at one end)", n > 1 ? ", " : "",
                                     label);
    }
    if (n > 3 && used < len)
        snprintf(buf + used, len - used, " and %zu more", n - 3);
    return n;
}

/* What still runs JACCL: "mac[01-07] form an RDMA mesh without mac08 (jaccl); all 8 form an RDMA ring
 * without that cable (jaccl-ring: mac01 mac02 ...)". */
static void say_subsets(const ctx_t *c, const tbm_rdma_subsets_t *sub, char *buf, size_t len)
{
    char in[TBM_FINDING_WHERE_MAX], out[TBM_FINDING_WHERE_MAX];
    uint32_t all = (uint32_t)((1ul << c->g->n_hosts) - 1), rest = all & ~sub->mesh;
    size_t used = 0;
    int i;

    hosts_where(c, &sub->mesh, in, sizeof(in));
    hosts_where(c, &rest, out, sizeof(out));
    if (sub->mesh)
        used = (size_t)snprintf(buf, len, "%s form an RDMA mesh without %s (jaccl%s)", in, out,
                                __builtin_popcount(sub->mesh) > TBM_JACCL_MESH_MAX ? ", 8 of them at most" : "");
    else
        used = (size_t)snprintf(buf, len, "no two Macs of the group are joined by RDMA cables only");
    if (!sub->ring || used >= len)
        return;
    rest = all & ~sub->ring;
    hosts_where(c, &sub->ring, in, sizeof(in));
    hosts_where(c, &rest, out, sizeof(out));
    used += (size_t)snprintf(buf + used, len - used, "; %s form an RDMA ring%s%s (jaccl-ring, in the order", rest ? in
                             : "all of them", rest ? " without " : "", out);
    for (i = 0; i < sub->n_ring && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, " %s",
                                 tbm_topology_host_name(c->t, c->g->hosts[sub->ring_order[i]]));
    if (used < len)
        snprintf(buf + used, len - used, ")");
}

/* Some cables of a group that wants RDMA cannot do it, which rules JACCL out for the whole group: name them,
 * the fix, and the largest set of its Macs that still runs JACCL, once every check has run: pairs joined by
 * cables that all do RDMA with no finding ruling RDMA out on them, between Macs with no such finding either.
 * The group's verdict stays (Rdma=no); the largest RDMA mesh becomes the verdict's rdma_subset (written as
 * RdmaSubset= in tbmesh.conf), unless a finding on the whole group rules RDMA out. */
static void rdma_subset(ctx_t *c)
{
    char where[TBM_FINDING_WHERE_MAX], slow[TBM_FINDING_TEXT_MAX / 2], still[TBM_FINDING_TEXT_MAX / 2];
    char fix[TBM_FINDING_TEXT_MAX];
    uint32_t ok[TBM_RDMA_SEARCH_MAX] = {0}, no[TBM_RDMA_SEARCH_MAX] = {0};
    tbm_rdma_subsets_t sub;
    size_t i, n_slow;
    int group = c->t->host_group[c->g->hosts[0]], searched;

    n_slow = name_slow(c, no, slow, sizeof(slow));
    for (i = 0; i < c->t->n_pairs && c->g->n_hosts <= TBM_RDMA_SEARCH_MAX; i++)
        if (c->t->pairs[i].group == group) {
            int a = position(c, c->t->pairs[i].host[0]), b = position(c, c->t->pairs[i].host[1]);
            ok[a] |= 1u << b;
            ok[b] |= 1u << a;
        }
    for (i = 0; i < TBM_RDMA_SEARCH_MAX; i++)
        ok[i] &= ~no[i];
    for (i = 0; i < c->g->n_hosts && i < TBM_RDMA_SEARCH_MAX; i++)
        if (c->host_rdma_bad[c->g->hosts[i]]) {   /* a Mac that cannot run JACCL joins no RDMA pair */
            size_t k;
            for (k = 0; k < TBM_RDMA_SEARCH_MAX; k++)
                ok[k] &= ~(1u << i);
            ok[i] = 0;
        }
    searched = tbm_rdma_subsets(c->g->n_hosts, ok, &sub) == 0;
    if (searched && !c->group_rdma_bad[group] && __builtin_popcount(sub.mesh) >= 2)
        c->gv->rdma_subset = sub.mesh;
    if (searched)
        say_subsets(c, &sub, still, sizeof(still));
    else
        snprintf(still, sizeof(still), "the largest part of it that runs JACCL is searched in groups of %d Macs or "
                 "fewer, and it has %zu", TBM_RDMA_SEARCH_MAX, c->g->n_hosts);
    group_where(c, where, sizeof(where));
    snprintf(fix, sizeof(fix), "replace %s with Thunderbolt 5 cables between Thunderbolt 5 ports of both Macs (on Mac "
             "Studio not the port beside Ethernet; a cable without RDMA devices: see rdma-missing), probe them and run "
             "tbmesh inventory again; until then Slurm offers the group ring and mpi only%s",
             n_slow == 1 ? "the cable" : "those cables", c->gv->rdma_subset ? ", and jaccl and jaccl-ring on the Macs "
             "of its RdmaSubset= (tbmesh.conf) if the site allows it with JacclOnSubsets=yes" : "");
    flag(c, TBM_SEV_WARNING, "rdma-subset", where, 0, -1, -1, fix,
         "%zu cable%s keep%s JACCL from the whole group: %s; %s%s", n_slow, n_slow == 1 ? "" : "s",
         n_slow == 1 ? "s" : "", slow, still,
         searched && c->group_rdma_bad[group] ? ", once the group's other problems that rule JACCL out are fixed"
                                              : "");
}

static void check_group(ctx_t *c)
{
    size_t i, rdma_cables = 0, two_sided = 0;
    int min_speed = -1;

    c->gv->rdma_wanted = wants_rdma(c);
    c->severe = c->gv->rdma_wanted;
    check_class(c);
    if (c->dup_uuid) {
        block(c, BLOCK_TCP, "uuid-duplicate", "a Thunderbolt domain UUID of the group is reported twice");
        rdma_blocked_at(c, BLOCK_TCP, -1, -1);
    }
    for (i = 0; i < c->g->n_cables; i++) {
        const tbm_cable_t *cb = &c->t->cables[c->g->cables[i]];
        int rdma = check_cable(c, c->g->cables[i]);
        rdma_cables += (size_t)rdma;
        if (rdma)
            c->cable_rdma[c->g->cables[i]] |= CABLE_DOES_RDMA;
        if (!cb->one_sided) {
            two_sided++;
            if (min_speed < 0 || cb->speed_gbps < min_speed)
                min_speed = cb->speed_gbps;
        }
    }
    c->gv->link = two_sided == 0 ? TBM_LINK_NONE : min_speed >= TBM_TB5_MIN_GBPS ? TBM_LINK_TB5 : TBM_LINK_TB4;
    if (!c->gv->rdma_wanted && two_sided > 0)
        no_rdma(c, c->gv->link == TBM_LINK_TB4, min_speed);
    c->subset_wanted[c->t->host_group[c->g->hosts[0]]] =
        c->gv->rdma_wanted && rdma_cables > 0 && rdma_cables < two_sided && c->g->n_hosts > 2;
    for (i = 0; i < c->g->n_hosts; i++)
        check_host(c, c->g->hosts[i]);
    if (c->g->n_hosts > 1)
        check_os(c);
    c->gv->caps.rdma = c->gv->rdma_wanted && two_sided > 0 && rdma_cables == two_sided;
}

/* The backends a class allows before any finding. */
static unsigned class_backends(tbm_topo_class_t cls)
{
    switch (cls) {
    case TBM_TOPO_MESH: return TBM_BACKENDS_ALL;
    case TBM_TOPO_RING: return TBM_BACKENDS_ALL & ~BIT(TBM_BACKEND_JACCL);
    default:            return BIT(TBM_BACKEND_MPI);
    }
}

static void verdict(ctx_t *c)
{
    tbm_group_caps_t *caps = &c->gv->caps;

    caps->n_nodes = c->g->n_hosts;
    caps->topology = c->g->cls;
    caps->backends = class_backends(c->g->cls) & ~c->gv->blocked;
    if (!caps->rdma)
        caps->backends &= ~TBM_BACKENDS_RDMA;
}

/* ---- addresses across cables ---- */

/* An interface of the management network: up, a routable address, not a Thunderbolt one nor loopback. */
static int management_iface(const tbm_host_facts_t *h, const tbm_iface_t *ifc, uint32_t *addr)
{
    int k;

    if (!ifc->up || ifc->prefix_len < 0 || tbm_ipv4_parse(ifc->ipv4, addr) < 0 || (*addr >> 24) == 127 ||
        (*addr >> 16) == 0xa9fe || strncmp(ifc->hwport, "Thunderbolt", 11) == 0 ||
        strncmp(ifc->name, "bridge", 6) == 0 || strncmp(ifc->name, "lo", 2) == 0)
        return 0;
    for (k = 0; k < h->n_ports && k < TBM_MAX_PORTS; k++)
        if (strncmp(h->ports[k].iface, ifc->name, TBM_IFNAME_MAX) == 0)
            return 0;
    return 1;
}

/* The nets to compare: both ends of every cable seen from both ends, every management interface. */
static size_t collect_nets(const tbm_topology_t *t, tbm_addr_net_t *nets, int *ifc_host)
{
    size_t c, h, n = 0, m = 0;
    int e, i;

    for (c = 0; c < t->n_cables; c++)
        for (e = 0; e < 2 && !t->cables[c].one_sided; e++) {
            const tbm_port_t *p = &t->ports[t->cables[c].port[e]];
            if (tbm_ipv4_parse(p->ipv4, &nets[n].addr) < 0)
                continue;
            nets[n].prefix = p->prefix_len;
            nets[n].owner = (int)c;
            nets[n++].group = t->cables[c].group;
        }
    for (h = 0; h < t->n_hosts; h++)
        for (i = 0; i < t->hosts[h].n_ifaces && i < TBM_MAX_IFACES; i++)
            if (management_iface(&t->hosts[h], &t->hosts[h].ifaces[i], &nets[n].addr)) {
                nets[n].prefix = t->hosts[h].ifaces[i].prefix_len;
                nets[n].owner = -1 - (int)m;
                ifc_host[m++] = (int)(h * TBM_MAX_IFACES + (size_t)i);
                nets[n++].group = -1;
            }
    return n;
}

#define COLLISION_FIX "run `macnode netplan --renumber` (every cable gets a /30 of its own) and apply it on every " \
                      "Mac (--apply), then probe them and run tbmesh inventory again"

static void report_clash(ctx_t *c, const tbm_addr_net_t *x, const tbm_addr_net_t *y, const int *ifc_host)
{
    char where[TBM_FINDING_WHERE_MAX + 8], a[TBM_FINDING_WHERE_MAX / 2], b[TBM_FINDING_WHERE_MAX / 2];
    char nx[20], ny[20], both[48];

    tbm_cable_label(c->t, y->owner, b, sizeof(b));
    tbm_addr_net_text(x, nx, sizeof(nx));
    tbm_addr_net_text(y, ny, sizeof(ny));
    snprintf(both, sizeof(both), strcmp(nx, ny) ? "%s and %s" : "%s", nx, ny);
    c->g = &c->t->groups[c->t->cables[y->owner].group];
    c->gv = &c->v->groups[c->t->cables[y->owner].group];
    if (x->owner < 0) {
        int h = ifc_host[-1 - x->owner] / TBM_MAX_IFACES, i = ifc_host[-1 - x->owner] % TBM_MAX_IFACES;
        snprintf(where, sizeof(where), "%s, %s:%s", b, tbm_topology_host_name(c->t, h), c->t->hosts[h].ifaces[i].name);
        flag(c, TBM_SEV_ERROR, "addr-collision", where, BLOCK_TCP, y->owner, -1,
             "number the cables outside the management network: `macnode netplan --renumber --base NET` with a "
             "network no other interface uses (169.254.0.0/16 by default), applied on every Mac (--apply)",
             "the cable %s uses %s, which overlaps the management network %s of %s:%s: traffic for one leaves "
             "through the other", b, ny, nx, tbm_topology_host_name(c->t, h), c->t->hosts[h].ifaces[i].name);
        return;
    }
    tbm_cable_label(c->t, x->owner, a, sizeof(a));
    snprintf(where, sizeof(where), "%s, %s", a, b);
    flag(c, TBM_SEV_ERROR, "addr-collision", where, BLOCK_TCP, y->owner, -1, COLLISION_FIX,
         "the cables %s and %s use %s %s: traffic for one leaves through the other", a, b,
         strcmp(nx, ny) ? "the overlapping subnets" : "one subnet", both);
    c->g = &c->t->groups[c->t->cables[x->owner].group];
    c->gv = &c->v->groups[c->t->cables[x->owner].group];
    block(c, BLOCK_TCP, "addr-collision", where);
    rdma_blocked_at(c, BLOCK_TCP, x->owner, -1);
    mark(c->v->cable_severity, x->owner, TBM_SEV_ERROR);
}

/* Cables whose subnets collide with another cable's or with a management network. -1 when out of memory. */
static int check_collisions(ctx_t *c)
{
    size_t cap = 2 * c->t->n_cables, h, i;
    tbm_addr_net_t *nets;
    tbm_addr_clash_t *clash = NULL;
    int *ifc_host;
    long n = 0;

    for (h = 0; h < c->t->n_hosts; h++)
        cap += c->t->hosts[h].n_ifaces > 0 ? (size_t)c->t->hosts[h].n_ifaces : 0;
    nets = malloc((cap ? cap : 1) * sizeof(*nets));
    ifc_host = malloc((cap ? cap : 1) * sizeof(*ifc_host));
    if (nets && ifc_host)
        n = tbm_addr_clashes(nets, collect_nets(c->t, nets, ifc_host), &clash);
    for (i = 0; nets && ifc_host && n > 0 && i < (size_t)n; i++)
        report_clash(c, &nets[clash[i].a], &nets[clash[i].b], ifc_host);
    free(clash);
    free(ifc_host);
    free(nets);
    return nets && ifc_host && n >= 0 ? 0 : -1;
}

static int copy_findings(tbm_validation_t *v, const tbm_findings_t *from)
{
    size_t i;

    for (i = 0; i < from->n; i++) {
        const tbm_finding_t *f = &from->items[i];
        tbm_finding_add(&v->findings, f->severity, f->code, f->where, f->fix, "%s", f->what);
    }
    v->findings.dropped += from->dropped;
    return 0;
}

static void free_ctx(ctx_t *c)
{
    free(c->cable_rdma);
    free(c->host_rdma_bad);
    free(c->group_rdma_bad);
    free(c->subset_wanted);
}

void tbm_validation_free(tbm_validation_t *v)
{
    tbm_findings_free(&v->findings);
    free(v->groups);
    free(v->cable_severity);
    free(v->host_severity);
    memset(v, 0, sizeof(*v));
}

int tbm_validate(const tbm_topology_t *t, tbm_validation_t *v, tbm_err_t *err)
{
    ctx_t c = {0};
    unsigned char *dup_group;
    size_t g;

    memset(v, 0, sizeof(*v));
    tbm_findings_init(&v->findings);
    v->groups = calloc(t->n_groups ? t->n_groups : 1, sizeof(*v->groups));
    v->cable_severity = calloc(t->n_cables ? t->n_cables : 1, 1);
    v->host_severity = calloc(t->n_hosts ? t->n_hosts : 1, 1);
    if (!v->groups || !v->cable_severity || !v->host_severity) {
        tbm_validation_free(v);
        return tbm_errprintf(err, "out of memory validating the topology");
    }
    dup_group = calloc(t->n_groups ? t->n_groups : 1, 1);
    if (!dup_group) {
        tbm_validation_free(v);
        return tbm_errprintf(err, "out of memory validating the topology");
    }
    v->n_groups = t->n_groups;
    copy_findings(v, &t->findings);
    mark_duplicates(t, v, dup_group);
    c.t = t;
    c.v = v;
    c.cable_rdma = calloc(t->n_cables ? t->n_cables : 1, 1);
    c.host_rdma_bad = calloc(t->n_hosts ? t->n_hosts : 1, 1);
    c.group_rdma_bad = calloc(t->n_groups ? t->n_groups : 1, 1);
    c.subset_wanted = calloc(t->n_groups ? t->n_groups : 1, 1);
    if (!c.cable_rdma || !c.host_rdma_bad || !c.group_rdma_bad || !c.subset_wanted) {
        free_ctx(&c);
        free(dup_group);
        tbm_validation_free(v);
        return tbm_errprintf(err, "out of memory validating the topology");
    }
    for (g = 0; g < t->n_groups; g++) {
        c.g = &t->groups[g];
        c.gv = &v->groups[g];
        c.dup_uuid = dup_group[g];
        check_group(&c);
    }
    if (check_collisions(&c) < 0) {
        free_ctx(&c);
        free(dup_group);
        tbm_validation_free(v);
        return tbm_errprintf(err, "out of memory validating the topology");
    }
    for (g = 0; g < t->n_groups; g++) {
        c.g = &t->groups[g];
        c.gv = &v->groups[g];
        if (c.subset_wanted[g])
            rdma_subset(&c);
        verdict(&c);
    }
    free_ctx(&c);
    free(dup_group);
    return 0;
}

int tbm_validation_fit(const tbm_validation_t *v)
{
    return tbm_findings_count(&v->findings, TBM_SEV_ERROR) == 0;
}
