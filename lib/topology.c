/* topology.c: builds the cabling model from the hosts' facts: ports, cables matched by domain UUID,
 * multi-rail pairs, connected groups and their class (see topology.h). */
#include "topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[] = {"single", "mesh", "ring", "other"};

const char *tbm_topo_class_name(tbm_topo_class_t c)
{
    return (unsigned)c < 4 ? class_names[c] : "unknown";
}

int tbm_topo_class_parse(const char *s, tbm_topo_class_t *c)
{
    int i;

    for (i = 0; i < 4; i++)
        if (strcmp(s, class_names[i]) == 0) {
            *c = (tbm_topo_class_t)i;
            return 0;
        }
    return -1;
}

const char *tbm_topology_host_name(const tbm_topology_t *t, int host)
{
    if (host < 0 || (size_t)host >= t->n_hosts)
        return "?";
    if (!t->hosts[host].hostname[0] || !memchr(t->hosts[host].hostname, '\0', TBM_HOST_MAX))
        return "(unnamed)";
    return t->hosts[host].hostname;
}

void tbm_port_label(const tbm_topology_t *t, int port, char *buf, size_t len)
{
    const tbm_port_t *p = &t->ports[port];

    tbm_facts_port_name(tbm_topology_host_name(t, p->host), &t->hosts[p->host].ports[p->fact], buf, len);
}

void tbm_cable_label(const tbm_topology_t *t, int cable, char *buf, size_t len)
{
    const tbm_cable_t *c = &t->cables[cable];
    char a[TBM_PORT_NAME_MAX], b[TBM_PORT_NAME_MAX];

    tbm_port_label(t, c->port[0], a, sizeof(a));
    if (c->port[1] >= 0)
        tbm_port_label(t, c->port[1], b, sizeof(b));
    else if (c->host[1] >= 0)
        snprintf(b, sizeof(b), "%s:?", tbm_topology_host_name(t, c->host[1]));
    else
        snprintf(b, sizeof(b), "?");
    snprintf(buf, len, "%s <-> %s", a, b);
}

/* ---- classification ---- */

static int by_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;

    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] != y[1] ? (x[1] < y[1] ? -1 : 1) : 0);
}

static int find_root(int *parent, int i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

static void join(int *parent, int a, int b)
{
    a = find_root(parent, a);
    b = find_root(parent, b);
    if (a != b)
        parent[a < b ? b : a] = a < b ? a : b;
}

/* Every host has two neighbours and one cycle holds them all. */
static int one_cycle(size_t n, const int (*e)[2], size_t m, int *deg, int *parent)
{
    size_t i, roots = 0;

    for (i = 0; i < n; i++)
        parent[i] = (int)i;
    for (i = 0; i < m; i++) {
        deg[e[i][0]]++;
        deg[e[i][1]]++;
        join(parent, e[i][0], e[i][1]);
    }
    for (i = 0; i < n; i++) {
        if (deg[i] != 2)
            return 0;
        roots += find_root(parent, (int)i) == (int)i;
    }
    return roots == 1;
}

tbm_topo_class_t tbm_topo_classify(size_t n, const int (*pairs)[2], size_t n_pairs)
{
    int (*e)[2] = NULL;
    int *deg = NULL, *parent = NULL;
    size_t i, m = 0;
    tbm_topo_class_t cls = TBM_TOPO_OTHER;

    if (n <= 1)
        return TBM_TOPO_SINGLE;
    e = malloc((n_pairs ? n_pairs : 1) * sizeof(*e));
    deg = calloc(n, sizeof(int));
    parent = malloc(n * sizeof(int));
    if (!e || !deg || !parent)
        goto out;
    for (i = 0; i < n_pairs; i++) {
        int a = pairs[i][0], b = pairs[i][1];
        if (a == b || a < 0 || b < 0 || (size_t)a >= n || (size_t)b >= n)
            continue;
        e[m][0] = a < b ? a : b;
        e[m++][1] = a < b ? b : a;
    }
    qsort(e, m, sizeof(*e), by_pair);
    for (i = 0, n_pairs = m, m = 0; i < n_pairs; i++)
        if (m == 0 || by_pair(e[m - 1], e[i]) != 0) {
            e[m][0] = e[i][0];
            e[m++][1] = e[i][1];
        }
    if (m == n * (n - 1) / 2)
        cls = TBM_TOPO_MESH;
    else if (n >= 3 && m == n && one_cycle(n, (const int (*)[2])e, m, deg, parent))
        cls = TBM_TOPO_RING;
out:
    free(e);
    free(deg);
    free(parent);
    return cls;
}

/* ---- ports ---- */

static const tbm_iface_t *find_iface(const tbm_host_facts_t *h, const char *name)
{
    int i;

    if (!name[0])
        return NULL;
    for (i = 0; i < h->n_ifaces && i < TBM_MAX_IFACES; i++)
        if (strcmp(h->ifaces[i].name, name) == 0)
            return &h->ifaces[i];
    return NULL;
}

/* Copy a bounded field of the facts, which may lack its NUL. */
#define COPY_FIELD(dst, src) snprintf((dst), sizeof(dst), "%.*s", (int)sizeof(src) - 1, (src))

static void fill_port(tbm_port_t *p, const tbm_host_facts_t *h, int host, int fact)
{
    const tbm_tb_port_t *f = &h->ports[fact];
    const tbm_iface_t *ifc;

    memset(p, 0, sizeof(*p));
    p->host = host;
    p->fact = fact;
    p->receptacle = f->receptacle;
    COPY_FIELD(p->iface, f->iface);
    p->speed_gbps = f->speed_gbps;
    COPY_FIELD(p->domain_uuid, f->domain_uuid);
    COPY_FIELD(p->peer_uuid, f->peer_uuid);
    p->connected = f->connected;
    p->prefix_len = -1;
    p->cable = -1;
    ifc = find_iface(h, p->iface);
    if (ifc) {
        p->iface_found = 1;
        p->iface_up = ifc->up;
        COPY_FIELD(p->ipv4, ifc->ipv4);
        p->prefix_len = p->ipv4[0] ? ifc->prefix_len : -1;
    }
}

static int collect_ports(tbm_topology_t *t)
{
    size_t h, total = 0;
    int k;

    for (h = 0; h < t->n_hosts; h++)
        total += t->hosts[h].n_ports > 0 ? (size_t)t->hosts[h].n_ports : 0;
    t->ports = calloc(total ? total : 1, sizeof(*t->ports));
    if (!t->ports)
        return -1;
    for (h = 0; h < t->n_hosts; h++) {
        const tbm_host_facts_t *f = &t->hosts[h];
        if (f->unknown[TBM_PART_THUNDERBOLT][0])
            continue;   /* its capture failed: no port of it is concluded from what is left */
        for (k = 0; k < f->n_ports && k < TBM_MAX_PORTS; k++)
            if (f->ports[k].domain_uuid[0] || f->ports[k].peer_uuid[0] || f->ports[k].hub_peer_uuid[0])
                fill_port(&t->ports[t->n_ports++], f, (int)h, k);
    }
    return 0;
}

/* ---- UUID index ---- */

typedef struct uuid_index {
    int *by_uuid;      /* port indices with a domain UUID, sorted by it */
    size_t n;
} uuid_index_t;

static const tbm_port_t *sort_ports;

static int by_uuid(const void *a, const void *b)
{
    int c = strcmp(sort_ports[*(const int *)a].domain_uuid, sort_ports[*(const int *)b].domain_uuid);
    return c ? c : *(const int *)a - *(const int *)b;
}

static void report_duplicate(tbm_topology_t *t, const uuid_index_t *ix, size_t i, size_t j)
{
    char where[TBM_FINDING_WHERE_MAX] = "", label[TBM_PORT_NAME_MAX];
    size_t k, used = 0;

    for (k = i; k < j; k++) {
        t->ports[ix->by_uuid[k]].duplicate_uuid = 1;
        tbm_port_label(t, ix->by_uuid[k], label, sizeof(label));
        if (used < sizeof(where))
            used += (size_t)snprintf(where + used, sizeof(where) - used, "%s%s", k > i ? ", " : "", label);
    }
    tbm_finding_add(&t->findings, TBM_SEV_ERROR, "uuid-duplicate", where,
                    "make sure each host's facts come from that host (not a copied capture) and probe again",
                    "Thunderbolt domain UUID %s is reported by %zu ports", t->ports[ix->by_uuid[i]].domain_uuid,
                    j - i);
}

static int build_index(tbm_topology_t *t, uuid_index_t *ix)
{
    size_t p, i, j;

    ix->n = 0;
    ix->by_uuid = malloc((t->n_ports ? t->n_ports : 1) * sizeof(int));
    if (!ix->by_uuid)
        return -1;
    for (p = 0; p < t->n_ports; p++)
        if (t->ports[p].domain_uuid[0])
            ix->by_uuid[ix->n++] = (int)p;
    sort_ports = t->ports;
    qsort(ix->by_uuid, ix->n, sizeof(int), by_uuid);
    for (i = 0; i < ix->n; i = j) {
        for (j = i + 1; j < ix->n && strcmp(t->ports[ix->by_uuid[i]].domain_uuid,
                                            t->ports[ix->by_uuid[j]].domain_uuid) == 0; j++)
            ;
        if (j - i > 1)
            report_duplicate(t, ix, i, j);
    }
    return 0;
}

/* The port reporting this domain UUID, -1 when none or several. */
static int lookup(const tbm_topology_t *t, const uuid_index_t *ix, const char *uuid)
{
    size_t lo = 0, hi = ix->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(t->ports[ix->by_uuid[mid]].domain_uuid, uuid);
        if (c == 0)
            return t->ports[ix->by_uuid[mid]].duplicate_uuid ? -1 : ix->by_uuid[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* ---- cables ---- */

/* The first host whose Thunderbolt facts are unknown (its capture failed), or -1; how many there are. */
static int unknown_tb_host(const tbm_topology_t *t)
{
    size_t h;

    for (h = 0; h < t->n_hosts; h++)
        if (t->hosts[h].unknown[TBM_PART_THUNDERBOLT][0])
            return (int)h;
    return -1;
}

static size_t unknown_tb_hosts(const tbm_topology_t *t)
{
    size_t h, n = 0;

    for (h = 0; h < t->n_hosts; h++)
        n += t->hosts[h].unknown[TBM_PART_THUNDERBOLT][0] != 0;
    return n;
}

/* A host whose capture of a part failed: say so, once per part, and what to do. */
static void report_unknown(tbm_topology_t *t)
{
    char why[TBM_UNKNOWN_MAX], fix[TBM_FINDING_TEXT_MAX];
    size_t h;
    int k;

    for (h = 0; h < t->n_hosts; h++)
        for (k = 0; k < TBM_PART_COUNT; k++) {
            const char *name = tbm_topology_host_name(t, (int)h);
            if (!t->hosts[h].unknown[k][0])
                continue;
            tbm_facts_unknown_why(&t->hosts[h], (tbm_facts_part_t)k, why, sizeof(why));
            snprintf(fix, sizeof(fix), "probe it again (`macnode probe` on %s says which command failed and why), "
                     "then run tbmesh inventory again", name);
            tbm_finding_add(&t->findings, TBM_SEV_ERROR, "facts-unknown", name, fix,
                            "no %s facts for %s (probe failed: %s): nothing is concluded from them%s%s%s",
                            tbm_facts_part_name((tbm_facts_part_t)k, 1), name, why,
                            k == TBM_PART_THUNDERBOLT ? ", and " : "", k == TBM_PART_THUNDERBOLT ? name : "",
                            k == TBM_PART_THUNDERBOLT ? " is left out of every group" : "");
        }
}

static void report_one_sided(tbm_topology_t *t, int cable, int q)
{
    const tbm_cable_t *c = &t->cables[cable];
    const tbm_port_t *p = &t->ports[c->port[0]];
    char where[TBM_FINDING_WHERE_MAX], a[TBM_PORT_NAME_MAX];

    tbm_cable_label(t, cable, where, sizeof(where));
    tbm_port_label(t, c->port[0], a, sizeof(a));
    if (q < 0 && unknown_tb_host(t) >= 0)
        tbm_finding_add(&t->findings, TBM_SEV_INFO, "cable-end-unknown", where,
                        "probe the Macs whose Thunderbolt facts are unknown again, then run tbmesh inventory again",
                        "%s sees a Mac with domain UUID %s that no host of the inventory reports; the Thunderbolt "
                        "facts of %s%s are unknown, so it may be there", a, p->peer_uuid,
                        tbm_topology_host_name(t, unknown_tb_host(t)), unknown_tb_hosts(t) > 1 ? " and others" : "");
    else if (q < 0)
        tbm_finding_add(&t->findings, TBM_SEV_ERROR, "cable-one-sided", where,
                        "add the Mac at the other end to the inventory, or check the cable and probe both ends",
                        "%s sees a Mac with domain UUID %s, but no host in the inventory reports that UUID%s",
                        a, p->peer_uuid, c->host[1] < 0 ? "" : " alone");
    else
        tbm_finding_add(&t->findings, TBM_SEV_ERROR, "cable-one-sided", where,
                        "reseat or replace the cable, then probe both Macs again",
                        "the cable is seen from %s only: %s does not see %s back", a,
                        tbm_topology_host_name(t, t->ports[q].host), tbm_topology_host_name(t, p->host));
}

static int add_cable(tbm_topology_t *t, int p, int q, int other_host)
{
    tbm_cable_t *c = &t->cables[t->n_cables];
    const tbm_port_t *pp = &t->ports[p];

    memset(c, 0, sizeof(*c));
    c->port[0] = p;
    c->port[1] = q;
    c->host[0] = pp->host;
    c->host[1] = other_host;
    c->one_sided = q < 0;
    c->speed_gbps = pp->speed_gbps;
    if (q >= 0 && t->ports[q].speed_gbps < c->speed_gbps)
        c->speed_gbps = t->ports[q].speed_gbps;
    c->group = -1;
    t->ports[p].cable = (int)t->n_cables;
    if (q >= 0)
        t->ports[q].cable = (int)t->n_cables;
    return (int)t->n_cables++;
}

static void match_port(tbm_topology_t *t, const uuid_index_t *ix, int p)
{
    tbm_port_t *pp = &t->ports[p];
    int q, cable;

    if (pp->cable >= 0 || !pp->peer_uuid[0] || !pp->connected || pp->duplicate_uuid)
        return;
    q = lookup(t, ix, pp->peer_uuid);
    if (q >= 0 && t->ports[q].host == pp->host) {   /* said once, from the first end, as the probe says it */
        char a[TBM_PORT_NAME_MAX], b[TBM_PORT_NAME_MAX];
        if (q < p && strncmp(t->ports[q].peer_uuid, pp->domain_uuid, TBM_UUID_MAX) == 0)
            return;
        tbm_port_label(t, p < q ? p : q, a, sizeof(a));
        tbm_port_label(t, p < q ? q : p, b, sizeof(b));
        tbm_cable_to_self(&t->findings, a, b);
        return;
    }
    if (q >= 0 && strncmp(t->hosts[t->ports[q].host].ports[t->ports[q].fact].hub_peer_uuid, pp->domain_uuid,
                          TBM_UUID_MAX) == 0)
        return;   /* the other end sees this Mac through a hub or dock: no cable (report_hub says so, once) */
    if (q >= 0 && t->ports[q].connected && t->ports[q].cable < 0 &&
        strcmp(t->ports[q].peer_uuid, pp->domain_uuid) == 0) {
        add_cable(t, p, q, t->ports[q].host);
        return;
    }
    cable = add_cable(t, p, -1, q >= 0 ? t->ports[q].host : -1);
    report_one_sided(t, cable, q);
}

/* The port's facts: what the host said of it. */
static const tbm_tb_port_t *port_facts(const tbm_topology_t *t, int port)
{
    return &t->hosts[t->ports[port].host].ports[t->ports[port].fact];
}

/* A Mac reached through a hub or dock is no cable: say so, once for two Macs that see each other so.
 * (Facts fields are read bounded: they may lack their NUL.) */
static void report_hub(tbm_topology_t *t, const uuid_index_t *ix, int p)
{
    const tbm_tb_port_t *f = port_facts(t, p), *g = NULL;
    char uuid[TBM_UUID_MAX], hub[TBM_HOST_MAX + 2] = "(unnamed)";
    char a[TBM_PORT_NAME_MAX], b[TBM_PORT_NAME_MAX], where[2 * sizeof(a) + 8];
    const char *fix = "cable the two Macs directly, port to port, with no hub, dock or daisy chain between them "
                      "(JACCL's RDMA needs direct cables), then probe both again";
    int q;

    COPY_FIELD(uuid, f->hub_peer_uuid);
    if (!uuid[0])
        return;
    q = lookup(t, ix, uuid);
    if (q >= 0) {
        g = port_facts(t, q);
        if (q < p && strncmp(g->hub_peer_uuid, t->ports[p].domain_uuid, TBM_UUID_MAX) == 0)
            return;   /* reported from the other end */
    }
    if (f->hub[0])
        snprintf(hub, sizeof(hub), "\"%.*s\"", TBM_HOST_MAX - 1, f->hub);
    else if (g && g->hub[0])
        snprintf(hub, sizeof(hub), "\"%.*s\"", TBM_HOST_MAX - 1, g->hub);
    tbm_port_label(t, p, a, sizeof(a));
    if (q < 0) {
        snprintf(where, sizeof(where), "%s <-> ?", a);
        tbm_finding_add(&t->findings, TBM_SEV_WARNING, "cable-through-hub", where, fix,
                        "%s reaches a Mac with domain UUID %s through the hub or dock %s, not by a direct cable; "
                        "it is not counted as a cable", a, uuid, hub);
        return;
    }
    tbm_port_label(t, q, b, sizeof(b));
    snprintf(where, sizeof(where), "%s <-> %s", a, b);
    tbm_finding_add(&t->findings, TBM_SEV_WARNING, "cable-through-hub", where, fix,
                    "%s and %s are joined through the hub or dock %s, not by a direct cable; it is not counted as "
                    "a cable of any group", tbm_topology_host_name(t, t->ports[p].host),
                    tbm_topology_host_name(t, t->ports[q].host), hub);
}

static int match_cables(tbm_topology_t *t)
{
    uuid_index_t ix;
    size_t p;

    t->cables = calloc(t->n_ports ? t->n_ports : 1, sizeof(*t->cables));
    if (!t->cables || build_index(t, &ix) < 0)
        return -1;
    for (p = 0; p < t->n_ports; p++)
        match_port(t, &ix, (int)p);
    for (p = 0; p < t->n_ports; p++)
        report_hub(t, &ix, (int)p);
    free(ix.by_uuid);
    return 0;
}

/* ---- pairs ---- */

static int by_hosts(const void *a, const void *b)
{
    const tbm_pair_t *x = a, *y = b;

    if (x->host[0] != y->host[0])
        return x->host[0] - y->host[0];
    return x->host[1] - y->host[1];
}

static int build_pairs(tbm_topology_t *t)
{
    size_t c, i, m = 0;

    t->pairs = calloc(t->n_cables ? t->n_cables : 1, sizeof(*t->pairs));
    if (!t->pairs)
        return -1;
    for (c = 0; c < t->n_cables; c++) {
        const tbm_cable_t *cb = &t->cables[c];
        if (cb->one_sided)
            continue;
        t->pairs[m].host[0] = cb->host[0] < cb->host[1] ? cb->host[0] : cb->host[1];
        t->pairs[m].host[1] = cb->host[0] < cb->host[1] ? cb->host[1] : cb->host[0];
        t->pairs[m++].n_cables = 1;
    }
    qsort(t->pairs, m, sizeof(*t->pairs), by_hosts);
    for (i = 0; i < m; i++) {
        if (t->n_pairs && by_hosts(&t->pairs[t->n_pairs - 1], &t->pairs[i]) == 0)
            t->pairs[t->n_pairs - 1].n_cables++;
        else
            t->pairs[t->n_pairs++] = t->pairs[i];
    }
    return 0;
}

const tbm_pair_t *tbm_topology_pair(const tbm_topology_t *t, int a, int b)
{
    tbm_pair_t key;

    key.host[0] = a < b ? a : b;
    key.host[1] = a < b ? b : a;
    return bsearch(&key, t->pairs, t->n_pairs, sizeof(key), by_hosts);
}

/* ---- groups ---- */

/* Number the groups by their first host; fill host_group. */
static int number_groups(tbm_topology_t *t, int *parent)
{
    size_t h, c;

    for (c = 0; c < t->n_cables; c++)
        if (t->cables[c].host[1] >= 0)
            join(parent, t->cables[c].host[0], t->cables[c].host[1]);
    for (h = 0; h < t->n_hosts; h++) {
        int r = find_root(parent, (int)h);
        t->host_group[h] = r == (int)h ? (int)t->n_groups++ : t->host_group[r];
    }
    t->groups = calloc(t->n_groups ? t->n_groups : 1, sizeof(*t->groups));
    return t->groups ? 0 : -1;
}

static int fill_members(tbm_topology_t *t)
{
    size_t h, c, g;

    for (h = 0; h < t->n_hosts; h++)
        t->groups[t->host_group[h]].n_hosts++;
    for (c = 0; c < t->n_cables; c++) {
        t->cables[c].group = t->host_group[t->cables[c].host[0]];
        t->groups[t->cables[c].group].n_cables++;
    }
    for (g = 0; g < t->n_groups; g++) {
        tbm_group_t *gr = &t->groups[g];
        gr->hosts = malloc(gr->n_hosts * sizeof(int));
        gr->cables = malloc((gr->n_cables ? gr->n_cables : 1) * sizeof(int));
        if (!gr->hosts || !gr->cables)
            return -1;
        gr->n_hosts = gr->n_cables = 0;
    }
    for (h = 0; h < t->n_hosts; h++)
        t->groups[t->host_group[h]].hosts[t->groups[t->host_group[h]].n_hosts++] = (int)h;
    for (c = 0; c < t->n_cables; c++)
        t->groups[t->cables[c].group].cables[t->groups[t->cables[c].group].n_cables++] = (int)c;
    return 0;
}

/* Position of host h in the group's ascending host list. */
static size_t member_index(const tbm_group_t *g, int h)
{
    size_t lo = 0, hi = g->n_hosts;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->hosts[mid] < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void report_multi_rail(tbm_topology_t *t, const tbm_pair_t *p)
{
    char where[TBM_FINDING_WHERE_MAX];

    snprintf(where, sizeof(where), "%s <-> %s", tbm_topology_host_name(t, p->host[0]),
             tbm_topology_host_name(t, p->host[1]));
    tbm_finding_add(&t->findings, TBM_SEV_INFO, "multi-rail", where, "nothing to do: the extra cables add bandwidth",
                    "%s and %s are joined by %d cables", tbm_topology_host_name(t, p->host[0]),
                    tbm_topology_host_name(t, p->host[1]), p->n_cables);
}

/* Class of one group from its pairs (local host numbers). */
static int classify_group(tbm_topology_t *t, size_t g, const size_t *pair_ids, size_t n)
{
    tbm_group_t *gr = &t->groups[g];
    int (*local)[2];
    size_t i;

    if (gr->n_hosts * (gr->n_hosts - 1) / 2 == n) {   /* also a lone host */
        gr->cls = gr->n_hosts == 1 ? TBM_TOPO_SINGLE : TBM_TOPO_MESH;
        return 0;
    }
    local = malloc((n ? n : 1) * sizeof(*local));
    if (!local)
        return -1;
    for (i = 0; i < n; i++) {
        local[i][0] = (int)member_index(gr, t->pairs[pair_ids[i]].host[0]);
        local[i][1] = (int)member_index(gr, t->pairs[pair_ids[i]].host[1]);
    }
    gr->cls = tbm_topo_classify(gr->n_hosts, (const int (*)[2])local, n);
    free(local);
    return 0;
}

static int classify_groups(tbm_topology_t *t)
{
    size_t *start = calloc(t->n_groups + 1, sizeof(size_t)), *ids = malloc((t->n_pairs ? t->n_pairs : 1) * sizeof(size_t));
    size_t g, p;
    int rc = 0;

    if (!start || !ids) {
        free(start);
        free(ids);
        return -1;
    }
    for (p = 0; p < t->n_pairs; p++) {
        tbm_group_t *gr = &t->groups[t->host_group[t->pairs[p].host[0]]];
        t->pairs[p].group = t->host_group[t->pairs[p].host[0]];
        gr->n_pairs++;
        start[t->pairs[p].group + 1]++;
        if (t->pairs[p].n_cables > 1) {
            gr->n_multi_rail++;
            report_multi_rail(t, &t->pairs[p]);
        }
    }
    for (g = 0; g < t->n_groups; g++)
        start[g + 1] += start[g];
    for (p = 0; p < t->n_pairs; p++)
        ids[start[t->pairs[p].group]++] = p;
    for (g = 0; g < t->n_groups && rc == 0; g++)   /* start[g] now ends group g */
        rc = classify_group(t, g, ids + (g ? start[g - 1] : 0), t->groups[g].n_pairs);
    free(start);
    free(ids);
    return rc;
}

static int build_groups(tbm_topology_t *t)
{
    int *parent = malloc(t->n_hosts * sizeof(int));
    size_t h;
    int rc;

    t->host_group = malloc(t->n_hosts * sizeof(int));
    if (!parent || !t->host_group) {
        free(parent);
        return -1;
    }
    for (h = 0; h < t->n_hosts; h++)
        parent[h] = (int)h;
    rc = number_groups(t, parent);
    free(parent);
    if (rc < 0 || fill_members(t) < 0)
        return -1;
    return classify_groups(t);
}

/* ---- hosts ---- */

static int by_name(const void *a, const void *b)
{
    const tbm_host_facts_t *const *x = a, *const *y = b;
    return strncmp((*x)->hostname, (*y)->hostname, TBM_HOST_MAX);
}

/* Duplicate or empty host names are findings: the Slurm side keys everything by name. */
static int check_names(tbm_topology_t *t)
{
    const tbm_host_facts_t **v = malloc(t->n_hosts * sizeof(*v));
    size_t i;

    if (!v)
        return -1;
    for (i = 0; i < t->n_hosts; i++) {
        v[i] = &t->hosts[i];
        if (!memchr(t->hosts[i].hostname, '\0', TBM_HOST_MAX) || !t->hosts[i].hostname[0])
            tbm_finding_add(&t->findings, TBM_SEV_ERROR, "host-unnamed", "", "fix the probe of that host",
                            "host number %zu in the inventory has no usable host name", i + 1);
    }
    qsort(v, t->n_hosts, sizeof(*v), by_name);
    for (i = 1; i < t->n_hosts; i++)
        if (v[i]->hostname[0] && strncmp(v[i - 1]->hostname, v[i]->hostname, TBM_HOST_MAX) == 0)
            tbm_finding_add(&t->findings, TBM_SEV_ERROR, "host-duplicate", "",
                            "give every Mac its own host name, or drop the repeated facts",
                            "two hosts in the inventory are named %.*s", TBM_HOST_MAX - 1, v[i]->hostname);
    free(v);
    return 0;
}

void tbm_topology_free(tbm_topology_t *t)
{
    size_t g;

    for (g = 0; t->groups && g < t->n_groups; g++) {
        free(t->groups[g].hosts);
        free(t->groups[g].cables);
    }
    free(t->groups);
    free(t->ports);
    free(t->cables);
    free(t->pairs);
    free(t->host_group);
    tbm_findings_free(&t->findings);
    memset(t, 0, sizeof(*t));
}

int tbm_topology_build(tbm_topology_t *t, const tbm_host_facts_t *hosts, size_t n, tbm_err_t *err)
{
    memset(t, 0, sizeof(*t));
    if (n > TBM_TOPOLOGY_MAX_HOSTS)
        return tbm_errprintf(err, "the inventory holds %zu hosts; at most %d are supported: split the lab",
                             n, TBM_TOPOLOGY_MAX_HOSTS);
    if (n == 0)
        return tbm_errprintf(err, "the inventory holds no host: give the facts of at least one Mac");
    t->hosts = hosts;
    t->n_hosts = n;
    tbm_findings_init(&t->findings);
    if (check_names(t) < 0 || (report_unknown(t), collect_ports(t) < 0) || match_cables(t) < 0 ||
        build_pairs(t) < 0 || build_groups(t) < 0) {
        tbm_topology_free(t);
        return tbm_errprintf(err, "out of memory building the topology of %zu hosts", n);
    }
    return 0;
}
