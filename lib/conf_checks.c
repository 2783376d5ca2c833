/* conf_checks.c: the checks of tbmesh.conf that need more than one line, run once every line is read:
 * a node named twice or in two groups, NodeName settings and cable ends resolved to their nodes, an
 * interface used twice, what each group needs of its cables, cables against Topology=, group names. */
#include "conf_parser.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the checks sort to find a name used twice: a node's name, a group's feature, a cable end (node
 * and interface); `index` tells them apart (node or group index, line). */
typedef struct sort_key {
    const char *name;
    const char *sub;               /* "" when the name alone is the key */
    int index;
} sort_key_t;

static int by_key(const void *a, const void *b)
{
    const sort_key_t *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (!c)
        c = strcmp(x->sub, y->sub);
    return c ? c : x->index - y->index;
}

static int find_node(const conf_parser_t *p, const char *name)
{
    size_t lo = 0, hi = p->c->n_nodes;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(p->c->nodes[p->index[mid]].name, name);
        if (c == 0)
            return p->index[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static const char *group_name(const conf_parser_t *p, int g)
{
    return p->c->groups[g].caps.name;
}

/* Sort the nodes by name, and report a node named twice. */
static int index_nodes(conf_parser_t *p)
{
    size_t i;

    sort_key_t *v = malloc((p->c->n_nodes ? p->c->n_nodes : 1) * sizeof(*v));

    p->index = malloc((p->c->n_nodes ? p->c->n_nodes : 1) * sizeof(int));
    if (!p->index || !v) {
        free(v);
        return -1;
    }
    for (i = 0; i < p->c->n_nodes; i++) {
        v[i].name = p->c->nodes[i].name;
        v[i].sub = "";
        v[i].index = (int)i;
    }
    qsort(v, p->c->n_nodes, sizeof(*v), by_key);
    for (i = 0; i < p->c->n_nodes; i++)
        p->index[i] = v[i].index;
    free(v);
    for (i = 1; i < p->c->n_nodes; i++) {
        const tbm_conf_node_t *a = &p->c->nodes[p->index[i - 1]], *b = &p->c->nodes[p->index[i]];
        if (strcmp(a->name, b->name) != 0)
            continue;
        if (a->group == b->group)
            BAD_AT(p, b->line, "list each Mac once", "node %s is listed twice in group %s", b->name,
                   group_name(p, b->group));
        else
            BAD_AT(p, b->line, "a Mac belongs to one group: remove it from one Nodes= list",
                   "node %s is in group %s (line %d) and in group %s", b->name, group_name(p, a->group), a->line,
                   group_name(p, b->group));
    }
    return 0;
}

static void resolve_node_settings(conf_parser_t *p)
{
    int *described = calloc(p->c->n_nodes ? p->c->n_nodes : 1, sizeof(int));
    size_t i;

    for (i = 0; described && i < p->n_pn; i++) {
        const pending_node_t *pn = &p->pn[i];
        int k = find_node(p, pn->name);
        tbm_conf_node_t *n;
        if (k < 0) {
            BAD_AT(p, pn->line, "add it to the Nodes= of a Group line first", "node %s is in no group",
                   pn->name);
            continue;
        }
        n = &p->c->nodes[k];
        if (pn->group[0] && strcmp(pn->group, group_name(p, n->group)) != 0)
            BAD_AT(p, pn->line, "fix Group= or the group's Nodes=",
                   "NodeName=%s says Group=%s, but the node is in group %s (line %d)", pn->name, pn->group,
                   group_name(p, n->group), n->line);
        if (described[k])
            BAD_AT(p, pn->line, "merge the two NodeName lines",
                   "node %s is already described at line %d", pn->name, described[k]);
        described[k] = pn->line;
        snprintf(n->agent_addr, sizeof(n->agent_addr), "%s", pn->set.agent_addr);
        n->agent_port = pn->set.agent_port;
        n->slurmd_port = pn->set.slurmd_port;
    }
    free(described);
}

/* Resolve one cable's node names; 0 when both are known and in one group. */
static int resolve_cable(conf_parser_t *p, pending_cable_t *pc)
{
    int e, k[2];

    if (pc->bad)
        return -1;   /* its line was reported already */
    for (e = 0; e < 2; e++) {
        k[e] = find_node(p, pc->node[e]);
        if (k[e] < 0)
            return BAD_AT(p, pc->cable.line, "add the node to a group's Nodes= or fix the name",
                          "the cable names node %s, which is in no group", pc->node[e]);
        pc->cable.end[e].node = k[e];
    }
    if (k[0] == k[1])
        return BAD_AT(p, pc->cable.line, "a cable joins two different Macs",
                      "the cable joins node %s to itself", pc->node[0]);
    if (p->c->nodes[k[0]].group != p->c->nodes[k[1]].group)
        return BAD_AT(p, pc->cable.line, "a cable stays within one group: fix the groups' Nodes=",
                      "the cable joins %s (group %s) and %s (group %s)", pc->node[0],
                      group_name(p, p->c->nodes[k[0]].group), pc->node[1], group_name(p, p->c->nodes[k[1]].group));
    pc->cable.group = p->c->nodes[k[0]].group;
    return 0;
}

/* An interface used by two cables. */
static void check_ends_unique(conf_parser_t *p)
{
    sort_key_t *keys = malloc((p->n_pc ? p->n_pc : 1) * 2 * sizeof(*keys));
    size_t i, n = 0;
    int e;

    if (!keys)
        return;
    for (i = 0; i < p->n_pc; i++)
        for (e = 0; e < 2 && p->pc[i].node[0][0]; e++) {
            keys[n].name = p->pc[i].node[e];
            keys[n].sub = p->pc[i].cable.end[e].iface;
            keys[n++].index = p->pc[i].cable.line;
        }
    qsort(keys, n, sizeof(*keys), by_key);
    for (i = 1; i < n; i++)
        if (strcmp(keys[i - 1].name, keys[i].name) == 0 && strcmp(keys[i - 1].sub, keys[i].sub) == 0)
            BAD_AT(p, keys[i].index, "an interface holds one cable: fix the interface names",
                   "%s:%s is already used by the cable at line %d", keys[i].name, keys[i].sub, keys[i - 1].index);
    free(keys);
}

static int move_cables(conf_parser_t *p)
{
    size_t i;

    p->c->cables = calloc(p->n_pc ? p->n_pc : 1, sizeof(*p->c->cables));
    if (!p->c->cables)
        return -1;
    for (i = 0; i < p->n_pc; i++) {
        if (resolve_cable(p, &p->pc[i]) == 0)
            p->c->cables[p->c->n_cables++] = p->pc[i].cable;
        else
            p->pc[i].bad = 1;
    }
    check_ends_unique(p);
    return 0;
}

/* What a group needs of each of its cables: RDMA devices with Rdma=yes, addresses for TCP and JACCL; the
 * same of a cable between two Macs of the group's RdmaSubset=. */
static void check_cable_needs(conf_parser_t *p)
{
    size_t i;

    for (i = 0; i < p->n_pc; i++) {
        const pending_cable_t *pc = &p->pc[i];
        const tbm_conf_group_t *g;
        int tcp, subset;
        if (pc->bad)
            continue;
        g = &p->c->groups[pc->cable.group];
        tcp = (g->caps.backends & ~TBM_BACKEND_BIT(TBM_BACKEND_MPI)) != 0;
        subset = p->c->nodes[pc->cable.end[0].node].rdma_subset && p->c->nodes[pc->cable.end[1].node].rdma_subset;
        if (g->caps.rdma && !pc->has_rdma)
            BAD_AT(p, pc->cable.line, "add Rdma=rdma_<if>,rdma_<if>, or set Rdma=no on the group",
                   "group %s has Rdma=yes but this cable names no RDMA devices", g->caps.name);
        else if (subset && !pc->has_rdma)
            BAD_AT(p, pc->cable.line, "add Rdma=rdma_<if>,rdma_<if>, or take one of its Macs out of RdmaSubset=",
                   "the cable joins two Macs of group %s's RdmaSubset= but names no RDMA devices", g->caps.name);
        if (tcp && !pc->has_addr)
            BAD_AT(p, pc->cable.line, "give both ends' addresses: Addr=10.0.0.1/30,10.0.0.2/30",
                   "group %s runs %s but this cable has no Addr=", g->caps.name,
                   g->caps.backends & TBM_BACKEND_BIT(TBM_BACKEND_RING) ? "ring" : "JACCL");
        else if (subset && !pc->has_addr)
            BAD_AT(p, pc->cable.line, "give both ends' addresses: Addr=10.0.0.1/30,10.0.0.2/30",
                   "the cable joins two Macs of group %s's RdmaSubset=, where JACCL runs, but has no Addr=",
                   g->caps.name);
    }
}

/* A group's RdmaSubset= is a full mesh: every two of its Macs share a cable (ids[0..n) are the group's). */
static void check_subset_mesh(conf_parser_t *p, const tbm_conf_group_t *gr, const size_t *ids, size_t n)
{
    uint64_t joined[TBM_CONF_RDMA_SUBSET_MAX] = {0};
    int at[TBM_CONF_RDMA_SUBSET_MAX];
    size_t i, j, k = 0;
    int a, b;

    for (i = 0; i < gr->caps.n_nodes && k < TBM_CONF_RDMA_SUBSET_MAX; i++)
        if (p->c->nodes[gr->nodes[i]].rdma_subset)
            at[k++] = gr->nodes[i];
    for (i = 0; i < n; i++) {
        const tbm_conf_cable_t *cb = &p->c->cables[ids[i]];
        for (a = 0; a < (int)k && at[a] != cb->end[0].node; a++)
            ;
        for (b = 0; b < (int)k && at[b] != cb->end[1].node; b++)
            ;
        if (a < (int)k && b < (int)k) {
            joined[a] |= 1ull << b;
            joined[b] |= 1ull << a;
        }
    }
    for (i = 0; i < k; i++)
        for (j = i + 1; j < k; j++)
            if (!(joined[i] >> j & 1u)) {
                BAD_AT(p, gr->line, "name Macs every two of which are cabled (tbmesh inventory writes the largest "
                       "such set), or drop RdmaSubset=", "RdmaSubset= of group %s is not a full mesh: %s and %s "
                       "share no cable", gr->caps.name, p->c->nodes[at[i]].name, p->c->nodes[at[j]].name);
                return;
            }
}

/* The class the cables ids[0..n) of group g make (pos: each node's place in its group). */
static int cable_class(const tbm_conf_t *c, size_t g, const int *pos, const size_t *ids, size_t n)
{
    int (*pairs)[2] = malloc((n ? n : 1) * sizeof(*pairs));
    size_t i;
    int cls;

    if (!pairs)
        return -1;
    for (i = 0; i < n; i++) {
        pairs[i][0] = pos[c->cables[ids[i]].end[0].node];
        pairs[i][1] = pos[c->cables[ids[i]].end[1].node];
    }
    cls = (int)tbm_topo_classify(c->groups[g].caps.n_nodes, (const int (*)[2])pairs, n);
    free(pairs);
    return cls;
}

static void check_group(conf_parser_t *p, size_t g, const int *pos, const size_t *ids, size_t n_cables)
{
    const tbm_conf_group_t *gr = &p->c->groups[g];
    int cls = gr->caps.n_nodes && !p->group_bad[g] ? cable_class(p->c, g, pos, ids, n_cables) : -1;

    if (cls < 0)
        return;
    if (n_cables == 0 && gr->caps.n_nodes > 1 && (gr->caps.backends & ~TBM_BACKEND_BIT(TBM_BACKEND_MPI)))
        BAD_AT(p, gr->line, "add its Cable= lines (tbmesh inventory writes them), or set Backends=mpi",
               "group %s allows more than mpi but lists no cable", gr->caps.name);
    else if (n_cables > 0 && cls != (int)gr->caps.topology)
        BAD_AT(p, gr->line, "fix the group's Cable= lines or its Topology=",
               "group %s says Topology=%s but its cables make the topology %s", gr->caps.name,
               tbm_topo_class_name(gr->caps.topology), tbm_topo_class_name((tbm_topo_class_t)cls));
    if (gr->n_rdma_subset)
        check_subset_mesh(p, gr, ids, n_cables);
}

/* Each group's cables against its Topology= (cables bucketed by group first). */
static void check_group_cables(conf_parser_t *p)
{
    int *pos = malloc((p->c->n_nodes ? p->c->n_nodes : 1) * sizeof(int));
    size_t *start = calloc(p->c->n_groups + 1, sizeof(size_t));
    size_t *ids = malloc((p->c->n_cables ? p->c->n_cables : 1) * sizeof(size_t));
    size_t g, k;

    if (pos && start && ids) {
        for (g = 0; g < p->c->n_groups; g++)
            for (k = 0; k < p->c->groups[g].caps.n_nodes; k++)
                pos[p->c->groups[g].nodes[k]] = (int)k;
        for (k = 0; k < p->c->n_cables; k++)
            start[p->c->cables[k].group + 1]++;
        for (g = 0; g < p->c->n_groups; g++)
            start[g + 1] += start[g];
        for (k = 0; k < p->c->n_cables; k++)
            ids[start[p->c->cables[k].group]++] = k;
        for (g = 0; g < p->c->n_groups; g++)    /* start[g] now ends group g */
            check_group(p, g, pos, ids + (g ? start[g - 1] : 0), start[g] - (g ? start[g - 1] : 0));
    }
    free(pos);
    free(start);
    free(ids);
}

/* Two groups with one name, or that would share a Slurm feature (studio-a and studio_a; or a group named
 * rdma-x and the RdmaSubset= feature of group x, tbmesh_rdma_x). */
static void check_group_names(conf_parser_t *p)
{
    typedef char feature_t[TBM_GROUP_NAME_MAX + 16];
    feature_t *features = malloc((p->c->n_groups ? p->c->n_groups : 1) * 2 * sizeof(*features));
    sort_key_t *keys = malloc((p->c->n_groups ? p->c->n_groups : 1) * 2 * sizeof(*keys));
    size_t i, n = 0;

    for (i = 0; features && keys && i < p->c->n_groups; i++)
        if (p->c->groups[i].caps.name[0]) {
            tbm_group_feature(p->c->groups[i].caps.name, features[n], sizeof(features[n]));
            keys[n].name = features[n];
            keys[n].sub = "";
            keys[n++].index = (int)i;
            if (!p->c->groups[i].n_rdma_subset)
                continue;
            tbm_group_rdma_feature(p->c->groups[i].caps.name, features[n], sizeof(features[n]));
            keys[n].name = features[n];
            keys[n].sub = "";
            keys[n++].index = (int)i;
        }
    if (n)
        qsort(keys, n, sizeof(*keys), by_key);
    for (i = 1; i < n; i++) {
        const tbm_conf_group_t *a = &p->c->groups[keys[i - 1].index], *b = &p->c->groups[keys[i].index];
        if (strcmp(keys[i - 1].name, keys[i].name) != 0)
            continue;
        if (strcmp(a->caps.name, b->caps.name) == 0)
            BAD_AT(p, b->line, "merge the two Group lines or rename one",
                   "group %s is already defined at line %d", b->caps.name, a->line);
        else
            BAD_AT(p, b->line, "rename one of them",
                   "groups %s (line %d) and %s give the same Slurm feature %s", a->caps.name, a->line,
                   b->caps.name, keys[i].name);
    }
    free(features);
    free(keys);
}

void tbm_conf_check_across_lines(conf_parser_t *p)
{
    if (index_nodes(p) < 0 || move_cables(p) < 0)
        BAD_AT(p, p->line, "free some memory", "out of memory");
    resolve_node_settings(p);
    check_cable_needs(p);
    check_group_cables(p);
    check_group_names(p);
}
