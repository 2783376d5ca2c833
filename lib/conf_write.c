/* conf_write.c: the text of a tbmesh.conf model, which tbm_conf_parse reads back equal (see conf.h); the
 * record store's settings are written as they were given. */
#include "conf.h"

#include <stdio.h>
#include <stdlib.h>

#include "strbuf.h"

/* The owners that are set, each as " Key=value" on a Group line (on_line) or as a line of its own. */
static void write_owners(tbm_strbuf_t *sb, const char (*owner)[TBM_OWNER_MAX], int on_line)
{
    int r;

    for (r = 0; r < TBM_OWNER_ROLES; r++)
        if (owner[r][0])
            tbm_sb_printf(sb, on_line ? " %s=%s" : "%s=%s\n", tbm_owner_key((tbm_owner_role_t)r), owner[r]);
}

/* The group's nodes (only those of its RdmaSubset= when `subset`) as a hostlist; NULL when out of memory. */
static char *group_list(const tbm_conf_t *c, const tbm_conf_group_t *g, int subset)
{
    char **names = malloc((g->caps.n_nodes ? g->caps.n_nodes : 1) * sizeof(char *)), *list;
    size_t i, n = 0;

    if (!names)
        return NULL;
    for (i = 0; i < g->caps.n_nodes; i++)
        if (!subset || c->nodes[g->nodes[i]].rdma_subset)
            names[n++] = (char *)c->nodes[g->nodes[i]].name;
    list = tbm_hostlist_compress(names, n);
    free(names);
    return list;
}

static void write_group(tbm_strbuf_t *sb, const tbm_conf_t *c, const tbm_conf_group_t *g)
{
    char backends[64], *list = group_list(c, g, 0), *subset = g->n_rdma_subset ? group_list(c, g, 1) : NULL;

    if (!list || (g->n_rdma_subset && !subset)) {
        sb->failed = 1;
        free(list);
        return;
    }
    tbm_backends_format(g->caps.backends, backends, sizeof(backends));
    tbm_sb_printf(sb, "Group=%s Nodes=%s Topology=%s Link=%s Rdma=%s Mode=%s Backends=%s", g->caps.name, list,
                  tbm_topo_class_name(g->caps.topology), tbm_link_name(g->link), g->caps.rdma ? "yes" : "no",
                  tbm_mode_name(g->mode), backends);
    if (subset)
        tbm_sb_printf(sb, " RdmaSubset=%s", subset);
    write_owners(sb, g->owner, 1);
    tbm_sb_printf(sb, "\n");
    free(list);
    free(subset);
}

static void write_node(tbm_strbuf_t *sb, const tbm_conf_node_t *n)
{
    if (!n->agent_addr[0] && !n->agent_port && !n->slurmd_port)
        return;
    tbm_sb_printf(sb, "NodeName=%s", n->name);
    if (n->agent_addr[0])
        tbm_sb_printf(sb, " AgentAddr=%s", n->agent_addr);
    if (n->agent_port)
        tbm_sb_printf(sb, " AgentPort=%d", n->agent_port);
    if (n->slurmd_port)
        tbm_sb_printf(sb, " SlurmdPort=%d", n->slurmd_port);
    tbm_sb_printf(sb, "\n");
}

static void write_addr(tbm_strbuf_t *sb, const tbm_conf_end_t *e, const char *sep)
{
    tbm_sb_printf(sb, "%s%s", sep, e->ipv4);
    if (e->prefix_len > 0)
        tbm_sb_printf(sb, "/%d", e->prefix_len);
}

static void write_cable(tbm_strbuf_t *sb, const tbm_conf_t *c, const tbm_conf_cable_t *cb)
{
    tbm_sb_printf(sb, "Cable=%s:%s,%s:%s", c->nodes[cb->end[0].node].name, cb->end[0].iface,
                  c->nodes[cb->end[1].node].name, cb->end[1].iface);
    if (cb->end[0].ipv4[0] && cb->end[1].ipv4[0]) {
        write_addr(sb, &cb->end[0], " Addr=");
        write_addr(sb, &cb->end[1], ",");
    }
    if (cb->end[0].rdma[0] && cb->end[1].rdma[0])
        tbm_sb_printf(sb, " Rdma=%s,%s", cb->end[0].rdma, cb->end[1].rdma);
    if (cb->speed_gbps > 0)
        tbm_sb_printf(sb, " Speed=%d", cb->speed_gbps);
    tbm_sb_printf(sb, "\n");
}

/* The Macs left out of every group, one comment line each: why, and what to do. */
static void write_left_out(tbm_strbuf_t *sb, const tbm_conf_t *c)
{
    size_t i;

    for (i = 0; i < c->n_left_out; i++)
        tbm_sb_printf(sb, "# %s is in no group: no Thunderbolt facts for %s (probe failed: %s): probe it again "
                      "(`macnode probe` on %s), then run tbmesh inventory again\n", c->left_out[i].name,
                      c->left_out[i].name, c->left_out[i].why, c->left_out[i].name);
}

char *tbm_conf_write(const tbm_conf_t *c)
{
    tbm_strbuf_t sb;
    size_t g, i;

    tbm_sb_init(&sb);
    tbm_sb_printf(&sb, "# tbmesh.conf: the Thunderbolt groups of the lab for slurm-tbmesh; see tbmesh.conf(5).\n");
    write_left_out(&sb, c);
    tbm_sb_printf(&sb, "AgentPort=%d\nCoordinatorPort=%d\nRingBasePort=%d\nSlurmdBasePort=%d\n", c->agent_port,
                  c->coordinator_port, c->ring_base_port, c->slurmd_base_port);
    if (c->mlx_version[0])
        tbm_sb_printf(&sb, "MlxVersion=%s\n", c->mlx_version);
    if (c->mac_partition[0])
        tbm_sb_printf(&sb, "MacPartition=%s\n", c->mac_partition);
    if (c->shared_partitions[0])
        tbm_sb_printf(&sb, "SharedPartitions=%s\n", c->shared_partitions);
    if (c->default_partition[0])
        tbm_sb_printf(&sb, "DefaultPartition=%s\n", c->default_partition);
    if (!c->exclusive_macs)
        tbm_sb_printf(&sb, "ExclusiveMacs=no\n");
    if (c->jaccl_on_subsets)
        tbm_sb_printf(&sb, "JacclOnSubsets=yes\n");
    if (c->placement_order)
        tbm_sb_printf(&sb, "Placement=order\n");
    write_owners(&sb, c->owner, 0);
    if (c->record_dir[0])
        tbm_sb_printf(&sb, "RecordDir=%s\n", c->record_dir);
    if (c->record_readers[0])
        tbm_sb_printf(&sb, "RecordReaders=%s\n", c->record_readers);
    if (c->records >= 0)
        tbm_sb_printf(&sb, "Records=%s\n", c->records ? "yes" : "no");
    for (g = 0; g < c->n_groups; g++) {
        tbm_sb_printf(&sb, "\n");
        write_group(&sb, c, &c->groups[g]);
        for (i = 0; i < c->groups[g].caps.n_nodes; i++)
            write_node(&sb, &c->nodes[c->groups[g].nodes[i]]);
        for (i = 0; i < c->n_cables; i++)
            if (c->cables[i].group == (int)g)
                write_cable(&sb, c, &c->cables[i]);
    }
    return tbm_sb_take(&sb);
}
