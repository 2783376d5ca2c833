/* conf.c: the model of tbmesh.conf (see conf.h): an empty configuration with its defaults, freeing it,
 * look-ups of a group or a node by name, comparison, and where the file lives. Reading it is conf_parse.c,
 * writing it conf_write.c, making it from a topology conf_from_topology.c. */
#include "conf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tbm_mode_name(tbm_mode_t m)
{
    return m == TBM_MODE_DIRECT ? "direct" : "bridge";
}

void tbm_conf_init(tbm_conf_t *c)
{
    memset(c, 0, sizeof(*c));
    c->agent_port = TBM_CONF_AGENT_PORT;
    c->exclusive_macs = 1;
    c->records = -1;
    c->coordinator_port = TBM_CONF_COORDINATOR_PORT;
    c->ring_base_port = TBM_CONF_RING_BASE_PORT;
    c->slurmd_base_port = TBM_CONF_SLURMD_BASE_PORT;
}

void tbm_conf_free(tbm_conf_t *c)
{
    size_t g;

    for (g = 0; c->groups && g < c->n_groups; g++)
        free(c->groups[g].nodes);
    free(c->groups);
    free(c->nodes);
    free(c->cables);
    free(c->left_out);
    tbm_conf_init(c);
}

static const char *const owner_keys[TBM_OWNER_ROLES] = { "OwnerRecovery", "OwnerAccess", "OwnerUpkeep" };
static const char *const owner_duties[TBM_OWNER_ROLES] = {
    "recovery (a Mac, a cable or the group fails: who brings it back)",
    "access (who may use the group, accounts and limits)",
    "upkeep (macOS, MLX and slurm-tbmesh versions, RDMA, cabling changes)",
};

const char *tbm_owner_key(tbm_owner_role_t r)
{
    return r < TBM_OWNER_ROLES ? owner_keys[r] : "?";
}

const char *tbm_owner_duty(tbm_owner_role_t r)
{
    return r < TBM_OWNER_ROLES ? owner_duties[r] : "?";
}

int tbm_owner_valid(const char *s)
{
    size_t i;

    for (i = 0; s[i]; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("@._+:/-", s[i]))
            return 0;
    return i > 0 && i < TBM_OWNER_MAX;
}

const char *tbm_conf_owner(const tbm_conf_t *c, const tbm_conf_group_t *g, tbm_owner_role_t r)
{
    if (r >= TBM_OWNER_ROLES)
        return "";
    return g && g->owner[r][0] ? g->owner[r] : c->owner[r];
}

static int same_owners(const char (*a)[TBM_OWNER_MAX], const char (*b)[TBM_OWNER_MAX])
{
    int r;

    for (r = 0; r < TBM_OWNER_ROLES; r++)
        if (strcmp(a[r], b[r]) != 0)
            return 0;
    return 1;
}

const tbm_conf_group_t *tbm_conf_group(const tbm_conf_t *c, const char *name)
{
    size_t g;

    for (g = 0; g < c->n_groups; g++)
        if (strcmp(c->groups[g].caps.name, name) == 0)
            return &c->groups[g];
    return NULL;
}

int tbm_conf_rdma_subset_caps(const tbm_conf_t *c, const tbm_conf_group_t *g, tbm_group_caps_t *caps)
{
    if (!c->jaccl_on_subsets || g->n_rdma_subset < 2)
        return 0;
    memset(caps, 0, sizeof(*caps));
    snprintf(caps->name, sizeof(caps->name), "%s", g->caps.name);
    caps->n_nodes = g->n_rdma_subset;
    caps->topology = TBM_TOPO_MESH;
    caps->backends = TBM_BACKENDS_RDMA;
    caps->rdma = 1;
    return 1;
}

int tbm_conf_node(const tbm_conf_t *c, const char *name)
{
    size_t i;

    for (i = 0; i < c->n_nodes; i++)
        if (strcmp(c->nodes[i].name, name) == 0)
            return (int)i;
    return -1;
}

void tbm_conf_agent_of(const tbm_conf_t *c, int n, char *buf, size_t len)
{
    const tbm_conf_node_t *nd = &c->nodes[n];

    snprintf(buf, len, "%s:%d", nd->agent_addr[0] ? nd->agent_addr : nd->name,
             nd->agent_port ? nd->agent_port : c->agent_port);
}

int tbm_conf_node_at(const tbm_conf_t *c, const char *agent)
{
    const char *colon = strrchr(agent, ':');
    size_t hostlen = colon ? (size_t)(colon - agent) : strlen(agent), i;
    char mine[TBM_HOSTNAME_MAX + 16];
    int found = -1;

    for (i = 0; i < c->n_nodes; i++) {
        tbm_conf_agent_of(c, (int)i, mine, sizeof(mine));
        if (strncmp(mine, agent, hostlen) != 0 || mine[hostlen] != ':' ||
            (colon && strcmp(mine + hostlen, colon) != 0))
            continue;
        if (found >= 0)
            return -1;   /* two Macs' agents at that address: which one is not known */
        found = (int)i;
    }
    return found;
}

/* ---- comparison ---- */

static int same_node(const tbm_conf_t *a, const tbm_conf_node_t *x, const tbm_conf_t *b)
{
    int k = tbm_conf_node(b, x->name);
    const tbm_conf_node_t *y;

    if (k < 0)
        return 0;
    y = &b->nodes[k];
    return strcmp(a->groups[x->group].caps.name, b->groups[y->group].caps.name) == 0 &&
           x->rdma_subset == y->rdma_subset && strcmp(x->agent_addr, y->agent_addr) == 0 && x->agent_port == y->agent_port &&
           x->slurmd_port == y->slurmd_port;
}

static int same_group(const tbm_conf_group_t *x, const tbm_conf_group_t *y)
{
    return y && x->caps.n_nodes == y->caps.n_nodes && x->caps.topology == y->caps.topology &&
           x->caps.backends == y->caps.backends && x->caps.rdma == y->caps.rdma && x->link == y->link &&
           x->mode == y->mode && x->n_rdma_subset == y->n_rdma_subset && same_owners(x->owner, y->owner);
}

static int same_end(const tbm_conf_t *a, const tbm_conf_end_t *x, const tbm_conf_t *b, const tbm_conf_end_t *y)
{
    return strcmp(a->nodes[x->node].name, b->nodes[y->node].name) == 0 && strcmp(x->iface, y->iface) == 0 &&
           strcmp(x->ipv4, y->ipv4) == 0 && x->prefix_len == y->prefix_len && strcmp(x->rdma, y->rdma) == 0;
}

int tbm_conf_equal(const tbm_conf_t *a, const tbm_conf_t *b)
{
    size_t i;

    if (a->agent_port != b->agent_port || a->coordinator_port != b->coordinator_port ||
        a->ring_base_port != b->ring_base_port || a->slurmd_base_port != b->slurmd_base_port ||
        strcmp(a->mlx_version, b->mlx_version) != 0 || strcmp(a->mac_partition, b->mac_partition) != 0 ||
        strcmp(a->shared_partitions, b->shared_partitions) != 0 ||
        strcmp(a->default_partition, b->default_partition) != 0 || a->exclusive_macs != b->exclusive_macs ||
        a->jaccl_on_subsets != b->jaccl_on_subsets || a->placement_order != b->placement_order ||
        !same_owners(a->owner, b->owner) ||
        strcmp(a->record_dir, b->record_dir) != 0 || strcmp(a->record_readers, b->record_readers) != 0 ||
        a->records != b->records || a->n_groups != b->n_groups ||
        a->n_nodes != b->n_nodes || a->n_cables != b->n_cables)
        return 0;
    for (i = 0; i < a->n_groups; i++)
        if (!same_group(&a->groups[i], tbm_conf_group(b, a->groups[i].caps.name)))
            return 0;
    for (i = 0; i < a->n_nodes; i++)
        if (!same_node(a, &a->nodes[i], b))
            return 0;
    for (i = 0; i < a->n_cables; i++)
        if (a->cables[i].speed_gbps != b->cables[i].speed_gbps ||
            !same_end(a, &a->cables[i].end[0], b, &b->cables[i].end[0]) ||
            !same_end(a, &a->cables[i].end[1], b, &b->cables[i].end[1]))
            return 0;
    return 1;
}

void tbm_conf_default_path(const char *slurm_conf, char *buf, size_t len)
{
    const char *slash;

    if (!slurm_conf || !*slurm_conf)
        slurm_conf = "/etc/slurm/slurm.conf";
    slash = strrchr(slurm_conf, '/');
    if (!slash)
        snprintf(buf, len, "tbmesh.conf");
    else
        snprintf(buf, len, "%.*s/tbmesh.conf", (int)(slash - slurm_conf), slurm_conf);
}
