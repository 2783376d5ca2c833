/* conf_from_topology.c: the tbmesh.conf model of a validated topology: its groups and cables, names and
 * settings kept from the last tbmesh.conf where the hosts match; a Mac whose Thunderbolt facts are unknown
 * left out, with why (see conf.h). */
#include "conf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalar.h"

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every host needs a valid, unique name to become a node. */
static int check_hosts(const tbm_topology_t *t, tbm_err_t *err)
{
    const char **v = malloc(t->n_hosts * sizeof(*v));
    size_t i;
    int rc = 0;

    if (!v)
        return tbm_errprintf(err, "out of memory writing tbmesh.conf");
    for (i = 0; i < t->n_hosts && rc == 0; i++) {
        v[i] = tbm_topology_host_name(t, (int)i);
        if (!tbm_hostname_valid(v[i]))
            rc = tbm_errprintf(err, "host '%s' has no valid node name: fix the host name on that Mac and probe "
                               "it again", v[i]);
    }
    if (rc == 0) {
        qsort(v, t->n_hosts, sizeof(*v), by_name);
        for (i = 1; i < t->n_hosts && rc == 0; i++)
            if (strcmp(v[i - 1], v[i]) == 0)
                rc = tbm_errprintf(err, "two hosts are named %s: give every Mac its own host name", v[i]);
    }
    free(v);
    return rc;
}

/* The hint group holding most hosts of topology group g, or NULL. */
static const tbm_conf_group_t *hint_group(const tbm_topology_t *t, size_t g, const tbm_conf_t *hint)
{
    size_t *votes, i, best = 0;
    const tbm_conf_group_t *pick = NULL;

    if (!hint || !hint->n_groups || !(votes = calloc(hint->n_groups, sizeof(size_t))))
        return NULL;
    for (i = 0; i < t->groups[g].n_hosts; i++) {
        int k = tbm_conf_node(hint, tbm_topology_host_name(t, t->groups[g].hosts[i]));
        if (k >= 0 && ++votes[hint->nodes[k].group] > best) {
            best = votes[hint->nodes[k].group];
            pick = &hint->groups[hint->nodes[k].group];
        }
    }
    free(votes);
    return pick;
}

static int name_taken(const tbm_conf_t *c, size_t upto, const char *name)
{
    size_t g;

    for (g = 0; g < upto; g++)
        if (strcmp(c->groups[g].caps.name, name) == 0)
            return 1;
    return 0;
}

static void name_group(tbm_conf_t *c, size_t g, const tbm_conf_group_t *h)
{
    tbm_conf_group_t *gr = &c->groups[g];
    int k = 1;

    if (h && !name_taken(c, g, h->caps.name)) {
        snprintf(gr->caps.name, sizeof(gr->caps.name), "%s", h->caps.name);
        gr->mode = h->mode;
        memcpy(gr->owner, h->owner, sizeof(gr->owner));
        return;
    }
    do
        snprintf(gr->caps.name, sizeof(gr->caps.name), "group%d", k++);
    while (name_taken(c, g, gr->caps.name));
}

/* A group of one Mac whose Thunderbolt facts are unknown (its capture failed): nothing is known of its
 * cables, so it is in no group (the topology gives such a Mac no port, so it is always alone). */
static int left_out(const tbm_topology_t *t, size_t g)
{
    return t->groups[g].n_hosts == 1 && t->hosts[t->groups[g].hosts[0]].unknown[TBM_PART_THUNDERBOLT][0];
}

/* Record host h as left out, with why its capture failed. */
static void add_left_out(tbm_conf_t *c, const tbm_topology_t *t, int h)
{
    tbm_conf_left_out_t *l = &c->left_out[c->n_left_out++];

    snprintf(l->name, sizeof(l->name), "%s", tbm_topology_host_name(t, h));
    tbm_facts_unknown_why(&t->hosts[h], TBM_PART_THUNDERBOLT, l->why, sizeof(l->why));
}

/* Topology group tg becomes group g of the configuration. */
static int add_group(tbm_conf_t *c, const tbm_topology_t *t, const tbm_validation_t *v, size_t tg, size_t g,
                     const tbm_conf_t *hint)
{
    tbm_conf_group_t *gr = &c->groups[g];
    size_t i;

    gr->caps = v->groups[tg].caps;
    gr->link = v->groups[tg].link;
    gr->mode = TBM_MODE_BRIDGE;
    name_group(c, g, hint_group(t, tg, hint));
    gr->nodes = malloc(t->groups[tg].n_hosts * sizeof(int));
    if (!gr->nodes)
        return -1;
    for (i = 0; i < t->groups[tg].n_hosts; i++) {
        int h = t->groups[tg].hosts[i], k = hint ? tbm_conf_node(hint, tbm_topology_host_name(t, h)) : -1;
        tbm_conf_node_t *n = &c->nodes[c->n_nodes];
        if (k >= 0)
            *n = hint->nodes[k];
        else
            memset(n, 0, sizeof(*n));
        snprintf(n->name, sizeof(n->name), "%s", tbm_topology_host_name(t, h));
        n->group = (int)g;
        n->line = 0;
        n->rdma_subset = i < 32 && (v->groups[tg].rdma_subset >> i & 1u);   /* the group's hosts ascend */
        gr->n_rdma_subset += (size_t)n->rdma_subset;
        gr->nodes[i] = (int)c->n_nodes++;
    }
    return 0;
}

/* The conf node of topology host h (its group in the configuration: conf_group[]). */
static int node_of(const tbm_conf_t *c, const tbm_topology_t *t, const int *conf_group, int h)
{
    const tbm_conf_group_t *g = &c->groups[conf_group[t->host_group[h]]];
    size_t i;

    for (i = 0; i < g->caps.n_nodes; i++)
        if (strcmp(c->nodes[g->nodes[i]].name, tbm_topology_host_name(t, h)) == 0)
            return g->nodes[i];
    return -1;
}

static void fill_end(tbm_conf_end_t *e, const tbm_port_t *p, int node, int rdma)
{
    uint32_t ip;

    e->node = node;
    if (tbm_iface_name_valid(p->iface))
        snprintf(e->iface, sizeof(e->iface), "%s", p->iface);
    else                                  /* no usable interface: name the port (validation said so) */
        snprintf(e->iface, sizeof(e->iface), "tb%d", p->receptacle & 0xffff);
    e->prefix_len = -1;
    if (p->ipv4[0] && tbm_ipv4_parse(p->ipv4, &ip) == 0) {
        snprintf(e->ipv4, sizeof(e->ipv4), "%s", p->ipv4);
        e->prefix_len = p->prefix_len >= 1 && p->prefix_len <= 32 ? p->prefix_len : -1;
    }
    if (rdma)
        snprintf(e->rdma, sizeof(e->rdma), "rdma_%.10s", p->iface);
}

static void add_cables(tbm_conf_t *c, const tbm_topology_t *t, const int *conf_group)
{
    size_t i;
    int e, rdma;

    for (i = 0; i < t->n_cables; i++) {
        const tbm_cable_t *cb = &t->cables[i];
        tbm_conf_cable_t *cc = &c->cables[c->n_cables];
        if (cb->one_sided || conf_group[cb->group] < 0)
            continue;
        memset(cc, 0, sizeof(*cc));
        cc->group = conf_group[cb->group];
        cc->speed_gbps = cb->speed_gbps > 0 && cb->speed_gbps <= 10000 ? cb->speed_gbps : 0;
        for (e = 0; e < 2; e++)
            cc->end[e].node = node_of(c, t, conf_group, cb->host[e]);
        rdma = c->groups[cc->group].caps.rdma ||
               (c->nodes[cc->end[0].node].rdma_subset && c->nodes[cc->end[1].node].rdma_subset);
        for (e = 0; e < 2; e++)
            fill_end(&cc->end[e], &t->ports[cb->port[e]], cc->end[e].node, rdma);
        if (!cc->end[0].ipv4[0] || !cc->end[1].ipv4[0]) {   /* Addr= names both ends or none */
            cc->end[0].ipv4[0] = cc->end[1].ipv4[0] = '\0';
            cc->end[0].prefix_len = cc->end[1].prefix_len = -1;
        }
        c->n_cables++;
    }
}

int tbm_conf_from_topology(const tbm_topology_t *t, const tbm_validation_t *v, const tbm_conf_t *hint,
                           tbm_conf_t *out, tbm_err_t *err)
{
    int *conf_group;
    size_t g;

    tbm_conf_init(out);
    if (check_hosts(t, err) < 0)
        return -1;
    if (hint) {
        out->agent_port = hint->agent_port;
        out->coordinator_port = hint->coordinator_port;
        out->ring_base_port = hint->ring_base_port;
        out->slurmd_base_port = hint->slurmd_base_port;
        memcpy(out->mlx_version, hint->mlx_version, sizeof(out->mlx_version));
        memcpy(out->mac_partition, hint->mac_partition, sizeof(out->mac_partition));
        memcpy(out->shared_partitions, hint->shared_partitions, sizeof(out->shared_partitions));
        memcpy(out->default_partition, hint->default_partition, sizeof(out->default_partition));
        out->exclusive_macs = hint->exclusive_macs;
        out->jaccl_on_subsets = hint->jaccl_on_subsets;
        out->placement_order = hint->placement_order;
        memcpy(out->owner, hint->owner, sizeof(out->owner));
        memcpy(out->record_dir, hint->record_dir, sizeof(out->record_dir));
        memcpy(out->record_readers, hint->record_readers, sizeof(out->record_readers));
        out->records = hint->records;
    }
    out->groups = calloc(t->n_groups ? t->n_groups : 1, sizeof(*out->groups));
    out->nodes = calloc(t->n_hosts ? t->n_hosts : 1, sizeof(*out->nodes));
    out->cables = calloc(t->n_cables ? t->n_cables : 1, sizeof(*out->cables));
    out->left_out = calloc(t->n_groups ? t->n_groups : 1, sizeof(*out->left_out));
    conf_group = malloc((t->n_groups ? t->n_groups : 1) * sizeof(int));
    if (!out->groups || !out->nodes || !out->cables || !out->left_out || !conf_group)
        goto oom;
    for (g = 0; g < t->n_groups; g++) {
        conf_group[g] = -1;
        if (left_out(t, g)) {
            add_left_out(out, t, t->groups[g].hosts[0]);
            continue;
        }
        conf_group[g] = (int)out->n_groups++;
        if (add_group(out, t, v, g, (size_t)conf_group[g], hint) < 0)
            goto oom;
    }
    add_cables(out, t, conf_group);
    free(conf_group);
    return 0;
oom:
    free(conf_group);
    tbm_conf_free(out);
    return tbm_errprintf(err, "out of memory writing tbmesh.conf");
}
