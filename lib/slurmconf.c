/* slurmconf.c: slurm.conf node lines, gres.conf lines and the DOT drawing of the cabling (see slurmconf.h). */
#include "slurmconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

#define FEATURE_MAX 64

void tbm_feature_name(const char *text, char *buf, size_t len)
{
    size_t n = 0;
    int gap = 0;

    if (len == 0)
        return;
    for (; *text && n + 1 < len; text++) {
        char c = *text >= 'A' && *text <= 'Z' ? (char)(*text - 'A' + 'a') : *text;
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            if (gap && n > 0 && n + 2 < len)
                buf[n++] = '_';
            buf[n++] = c;
            gap = 0;
        } else
            gap = 1;
    }
    buf[n] = '\0';
}

uint64_t tbm_slurm_real_memory_mib(uint64_t bytes)
{
    uint64_t mib = bytes >> 20, keep = mib / 32 > 512 ? mib / 32 : 512;

    return mib > 2 * keep ? mib - keep : mib / 2;
}

/* The facts of the host named like a node, or NULL. */
static const tbm_host_facts_t *facts_of(const tbm_topology_t *t, const char *name)
{
    size_t i;

    for (i = 0; t && i < t->n_hosts; i++)
        if (strcmp(tbm_topology_host_name(t, (int)i), name) == 0)
            return &t->hosts[i];
    return NULL;
}

static void add_feature(tbm_strbuf_t *sb, const char *prefix, const char *text, int *first)
{
    char name[FEATURE_MAX], full[FEATURE_MAX + 16];

    tbm_feature_name(text, name, sizeof(name));
    if (!name[0])
        return;
    snprintf(full, sizeof(full), "%s%s", prefix, name);
    tbm_sb_printf(sb, "%s%s", *first ? " Features=" : ",", full);
    *first = 0;
}

/* "Apple M3 Ultra" -> "m3_ultra": the maker's name says nothing in a lab of Macs. */
static const char *chip_text(const char *chip)
{
    return strncmp(chip, "Apple ", 6) == 0 ? chip + 6 : chip;
}

static void node_features(tbm_strbuf_t *sb, const tbm_conf_t *c, const tbm_conf_node_t *n, const tbm_host_facts_t *h)
{
    const tbm_conf_group_t *g = &c->groups[n->group];
    char group[FEATURE_MAX];
    int first = 1;

    tbm_group_feature(g->caps.name, group, sizeof(group));
    add_feature(sb, "", "tbmesh", &first);
    add_feature(sb, "", group, &first);
    if (g->caps.rdma && (g->caps.backends & TBM_BACKENDS_RDMA))
        add_feature(sb, "", "rdma", &first);
    if (n->rdma_subset && g->n_rdma_subset) {   /* where JACCL jobs go when the site allows (JacclOnSubsets) */
        tbm_group_rdma_feature(g->caps.name, group, sizeof(group));
        add_feature(sb, "", group, &first);
    }
    if (h && h->os_version[0])
        add_feature(sb, "macos_", h->os_version, &first);
    if (h && h->chip[0])
        add_feature(sb, "", chip_text(h->chip), &first);
}

static int node_line(tbm_strbuf_t *sb, const tbm_conf_t *c, const tbm_conf_node_t *n, const tbm_host_facts_t *h,
                     long port, tbm_err_t *err)
{
    tbm_sb_printf(sb, "NodeName=%s", n->name);
    if (h && h->cores_performance + h->cores_efficiency > 0)
        tbm_sb_printf(sb, " CPUs=%d", h->cores_performance + h->cores_efficiency);
    if (h && tbm_slurm_real_memory_mib(h->memory_bytes) > 0)
        tbm_sb_printf(sb, " RealMemory=%llu", (unsigned long long)tbm_slurm_real_memory_mib(h->memory_bytes));
    tbm_sb_printf(sb, " Gres=tbmesh:1");
    node_features(sb, c, n, h);
    if (c->groups[n->group].mode == TBM_MODE_BRIDGE) {
        if (port > 65535)
            return tbm_errprintf(err, "node %s would get slurmd port %ld: lower SlurmdBasePort in tbmesh.conf "
                                 "or give the node SlurmdPort=", n->name, port);
        tbm_sb_printf(sb, " Port=%ld", port);
    }
    tbm_sb_printf(sb, "\n");
    return 0;
}

char *tbm_slurm_node_lines(const tbm_topology_t *t, const tbm_conf_t *c, tbm_err_t *err)
{
    tbm_strbuf_t sb;
    size_t i;
    long next = c->slurmd_base_port;

    tbm_sb_init(&sb);
    tbm_sb_printf(&sb, "# slurm.conf node lines written by tbmesh inventory (bridge-mode Macs carry their slurmd "
                       "Port=).\n");
    for (i = 0; i < c->n_nodes; i++) {
        const tbm_conf_node_t *n = &c->nodes[i];
        long port = n->slurmd_port ? n->slurmd_port : next;
        if (c->groups[n->group].mode == TBM_MODE_BRIDGE && !n->slurmd_port)
            next++;
        if (node_line(&sb, c, n, facts_of(t, n->name), port, err) < 0) {
            tbm_sb_free(&sb);
            return NULL;
        }
    }
    if (sb.failed)
        tbm_errprintf(err, "out of memory writing slurm.conf node lines");
    return tbm_sb_take(&sb);
}

/* The group's nodes as a hostlist; NULL when out of memory. */
static char *group_nodes(const tbm_conf_t *c, const tbm_conf_group_t *g)
{
    char **names = malloc((g->caps.n_nodes ? g->caps.n_nodes : 1) * sizeof(char *));
    char *s;
    size_t i;

    if (!names)
        return NULL;
    for (i = 0; i < g->caps.n_nodes; i++)
        names[i] = (char *)c->nodes[g->nodes[i]].name;
    s = tbm_hostlist_compress(names, g->caps.n_nodes);
    free(names);
    return s;
}

char *tbm_gres_conf_lines(const tbm_conf_t *c)
{
    tbm_strbuf_t sb;
    size_t g;

    tbm_sb_init(&sb);
    tbm_sb_printf(&sb, "# gres.conf lines written by tbmesh inventory: one tbmesh unit per Mac.\n");
    for (g = 0; g < c->n_groups; g++) {
        char *list = group_nodes(c, &c->groups[g]);
        if (!list) {
            tbm_sb_free(&sb);
            return NULL;
        }
        tbm_sb_printf(&sb, "NodeName=%s Name=tbmesh Count=1\n", list);
        free(list);
    }
    return tbm_sb_take(&sb);
}

/* ---- drawing ---- */

/* A DOT quoted string. */
static void quoted(tbm_strbuf_t *sb, const char *s)
{
    tbm_sb_append(sb, "\"", 1);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            tbm_sb_append(sb, "\\", 1);
        if ((unsigned char)*s >= 0x20)
            tbm_sb_append(sb, s, 1);
    }
    tbm_sb_append(sb, "\"", 1);
}

/* Colour of a host or cable from its worst finding (stored as severity + 1, 0 for none). */
static const char *color_of(unsigned char worst)
{
    return worst > TBM_SEV_WARNING + 1 ? "red" : worst > TBM_SEV_INFO + 1 ? "orange" : "black";
}

static void draw_group(tbm_strbuf_t *sb, const tbm_topology_t *t, const tbm_validation_t *v, const tbm_conf_t *c,
                       size_t g)
{
    const tbm_group_t *gr = &t->groups[g];
    int k = tbm_conf_node(c, tbm_topology_host_name(t, gr->hosts[0]));
    const tbm_conf_group_t *cg = k >= 0 ? &c->groups[c->nodes[k].group] : NULL;
    char label[160];
    size_t i;

    if (!cg)   /* left out of tbmesh.conf (its Thunderbolt facts are unknown), or not in c */
        snprintf(label, sizeof(label), "in no group%s",
                 t->hosts[gr->hosts[0]].unknown[TBM_PART_THUNDERBOLT][0] ? ": no Thunderbolt facts" : "");
    else
        snprintf(label, sizeof(label), "%s: %s, %s%s%s", cg->caps.name, tbm_topo_class_name(gr->cls),
                 tbm_link_name(v->groups[g].link), v->groups[g].caps.rdma ? ", RDMA" : "",
                 cg->mode == TBM_MODE_BRIDGE ? ", bridge" : ", direct");
    tbm_sb_printf(sb, "  subgraph \"cluster_%zu\" {\n    label=", g);
    quoted(sb, label);
    tbm_sb_printf(sb, ";\n");
    for (i = 0; i < gr->n_hosts; i++) {
        tbm_sb_printf(sb, "    ");
        quoted(sb, tbm_topology_host_name(t, gr->hosts[i]));
        tbm_sb_printf(sb, " [color=%s];\n", color_of(v->host_severity[gr->hosts[i]]));
    }
    tbm_sb_printf(sb, "  }\n");
}

static void draw_cable(tbm_strbuf_t *sb, const tbm_topology_t *t, const tbm_validation_t *v, size_t i)
{
    const tbm_cable_t *cb = &t->cables[i];
    const tbm_port_t *a = &t->ports[cb->port[0]], *b = cb->port[1] >= 0 ? &t->ports[cb->port[1]] : NULL;
    char label[80], other[TBM_HOST_MAX + 8];
    unsigned char sev = v->cable_severity[i];

    if (cb->host[1] >= 0)
        snprintf(other, sizeof(other), "%s", tbm_topology_host_name(t, cb->host[1]));
    else
        snprintf(other, sizeof(other), "?%zu", i);
    snprintf(label, sizeof(label), "%s - %s\\n%d Gb/s", a->iface[0] ? a->iface : "?",
             b && b->iface[0] ? b->iface : "?", cb->speed_gbps);
    tbm_sb_printf(sb, "  ");
    quoted(sb, tbm_topology_host_name(t, cb->host[0]));
    tbm_sb_printf(sb, " -- ");
    quoted(sb, other);
    tbm_sb_printf(sb, " [label=\"%s\", color=%s%s];\n", label, color_of(sev),
                  cb->one_sided ? ", style=dashed" : "");
}

char *tbm_cabling_dot(const tbm_topology_t *t, const tbm_validation_t *v, const tbm_conf_t *c)
{
    tbm_strbuf_t sb;
    size_t i;

    tbm_sb_init(&sb);
    tbm_sb_printf(&sb, "graph tbmesh {\n  node [shape=box, style=rounded];\n  edge [fontsize=10];\n");
    for (i = 0; i < t->n_groups; i++)
        draw_group(&sb, t, v, c, i);
    for (i = 0; i < t->n_cables; i++)
        draw_cable(&sb, t, v, i);
    tbm_sb_printf(&sb, "}\n");
    return tbm_sb_take(&sb);
}
