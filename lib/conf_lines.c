/* conf_lines.c: the four kinds of line of tbmesh.conf, each a table of keys with what reads their values:
 * global settings (ports, MlxVersion, partitions), Group, NodeName and Cable lines (see tbmesh.conf(5)).
 * What needs other lines (node names, cables' nodes) is kept pending for conf_checks.c. */
#include "conf_parser.h"
#include "record.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scalar.h"

/* ---- growth ---- */

static int grow(void **v, size_t *cap, size_t n, size_t size, size_t max)
{
    size_t ncap;
    void *nv;

    if (n < *cap)
        return 0;
    if (n >= max)
        return -1;
    ncap = *cap ? *cap * 2 : 16;
    if (ncap > max)
        ncap = max;
    nv = realloc(*v, ncap * size);
    if (!nv)
        return -1;
    *v = nv;
    *cap = ncap;
    return 0;
}

/* ---- values ---- */

static int set_port(conf_parser_t *p, const char *key, const char *val, int *out)
{
    if (tbm_parse_uint(val, 65535, out) < 0)
        return BAD(p, "use a port number from 1 to 65535", "%s=%.40s is not a port number", key, val);
    return 0;
}

/* Split "a,b" into two bounded words. */
static int split_two(conf_parser_t *p, const char *key, const char *val, char *a, char *b, size_t len,
                     const char *example)
{
    const char *comma = strchr(val, ',');

    if (!comma || strchr(comma + 1, ',') || comma == val || !comma[1] || (size_t)(comma - val) >= len ||
        strlen(comma + 1) >= len)
        return BAD(p, example, "%s=%.80s does not name exactly two ends", key, val);
    snprintf(a, len, "%.*s", (int)(comma - val), val);
    snprintf(b, len, "%s", comma + 1);
    return 0;
}

/* ---- global settings ---- */

static int set_global(conf_parser_t *p, const char *key, const char *val);
static int set_record_setting(conf_parser_t *p, const char *key, const char *val);
static int set_global_owner(conf_parser_t *p, const char *key, const char *val);

/* The global settings; global_line[] follows this order. */
static const conf_key_t global_keys[] = {
    {"AgentPort", set_global}, {"CoordinatorPort", set_global}, {"RingBasePort", set_global},
    {"SlurmdBasePort", set_global}, {"MlxVersion", set_global}, {"MacPartition", set_global},
    {"SharedPartitions", set_global}, {"DefaultPartition", set_global}, {"ExclusiveMacs", set_global},
    {"JacclOnSubsets", set_global}, {"Placement", set_global}, {"RecordDir", set_record_setting},
    {"RecordReaders", set_record_setting}, {"Records", set_record_setting},
    {"OwnerRecovery", set_global_owner}, {"OwnerAccess", set_global_owner}, {"OwnerUpkeep", set_global_owner},
    {NULL, NULL},
};

/* A partition name, or (list) a comma-separated list of them: [A-Za-z0-9_.-], no empty item. */
static int set_partitions(conf_parser_t *p, const char *key, const char *val, char *dst, size_t len, int list)
{
    size_t i, item = 0;

    if (!*val || strlen(val) >= len)
        return BAD(p, list ? "name Slurm partitions, comma-separated, e.g. SharedPartitions=all"
                           : "name one Slurm partition, e.g. MacPartition=mac",
                   "%s=%.40s is %s", key, val, *val ? "too long" : "empty");
    for (i = 0; val[i]; i++) {
        if (val[i] == ',' && list && item > 0) {
            item = 0;
            continue;
        }
        if (!isalnum((unsigned char)val[i]) && !strchr("_.-", val[i]))
            return BAD(p, list ? "name Slurm partitions, comma-separated, e.g. SharedPartitions=all"
                               : "name one Slurm partition, e.g. MacPartition=mac",
                       "%s=%.40s is not a partition name%s", key, val, list ? " list" : "");
        item++;
    }
    if (item == 0)
        return BAD(p, "remove the trailing comma", "%s=%.40s ends with a comma", key, val);
    memcpy(dst, val, strlen(val) + 1);
    return 0;
}

/* The record store's settings belong to lib/record_settings.c (tbm_record_settings_parse reads them for the
 * store, a line at a time); here they are checked, so that a bad value is reported with the rest of the file,
 * and kept. The store reads each on a line of its own, once. */
static int set_record_setting(conf_parser_t *p, const char *key, const char *val)
{
    char line[TBM_CONF_LINE_MAX + 64];
    tbm_record_settings_t s;
    tbm_err_t err = { { 0 } };
    int i = !strcasecmp(key, "RecordDir") ? 0 : !strcasecmp(key, "RecordReaders") ? 1 : 2;   /* record_line[] */

    if (p->line_tokens > 1)
        return BAD(p, "put it on a line of its own: the record store reads RecordDir=, RecordReaders= and Records= "
                   "one to a line", "%s= shares its line with other settings", key);
    if (p->record_line[i])
        return BAD(p, "keep one of them", "%s is already set at line %d", key, p->record_line[i]);
    p->record_line[i] = p->line;
    memset(&s, 0, sizeof(s));
    snprintf(line, sizeof(line), "%s=%s", key, val);
    if (tbm_record_settings_parse(line, strlen(line), "tbmesh.conf", &s, &err) < 0)
        return BAD(p, "see tbmesh.conf(5), RECORD STORE", "%s",
                   strchr(err.msg, ' ') ? strchr(err.msg, ' ') + 1 : err.msg);
    /* kept as given, so that tbm_conf_write keeps them */
    if (i == 0)
        snprintf(p->c->record_dir, sizeof(p->c->record_dir), "%s", s.dir);
    else if (i == 1)
        snprintf(p->c->record_readers, sizeof(p->c->record_readers), "%s", s.readers);
    else
        p->c->records = s.records;
    return 0;
}

static int set_yes_no(conf_parser_t *p, const char *key, const char *val, int *dst)
{
    if (strcmp(val, "yes") != 0 && strcmp(val, "no") != 0)
        return BAD(p, "write yes or no", "%s=%.40s is neither yes nor no", key, val);
    *dst = val[0] == 'y';
    return 0;
}

static int set_mlx_version(conf_parser_t *p, const char *val)
{
    if (strlen(val) >= TBM_MLX_VERSION_MAX || tbm_mlx_version_parse(val) < 0)
        return BAD(p, "write the MLX version as major.minor.patch, e.g. MlxVersion=0.31.2",
                   "MlxVersion=%.40s is not a version", val);
    snprintf(p->c->mlx_version, sizeof(p->c->mlx_version), "%s", val);
    return 0;
}

static int set_global(conf_parser_t *p, const char *key, const char *val)
{
    int i;

    for (i = 0; global_keys[i + 1].name && strcmp(key, global_keys[i].name) != 0; i++)
        ;
    if (p->global_line[i])
        return BAD(p, "keep one of them", "%s is already set at line %d", key, p->global_line[i]);
    p->global_line[i] = p->line;
    switch (i) {
    case 0: return set_port(p, key, val, &p->c->agent_port);
    case 1: return set_port(p, key, val, &p->c->coordinator_port);
    case 2: return set_port(p, key, val, &p->c->ring_base_port);
    case 3: return set_port(p, key, val, &p->c->slurmd_base_port);
    case 4: return set_mlx_version(p, val);
    case 5: return set_partitions(p, key, val, p->c->mac_partition, sizeof(p->c->mac_partition), 0);
    case 6: return set_partitions(p, key, val, p->c->shared_partitions, sizeof(p->c->shared_partitions), 1);
    case 7: return set_partitions(p, key, val, p->c->default_partition, sizeof(p->c->default_partition), 0);
    case 8: return set_yes_no(p, key, val, &p->c->exclusive_macs);
    case 9: return set_yes_no(p, key, val, &p->c->jaccl_on_subsets);
    default:
        if (strcmp(val, "pack") != 0 && strcmp(val, "order") != 0)
            return BAD(p, "write Placement=pack (the smallest group that holds a job first) or Placement=order "
                       "(tbmesh.conf's order of groups)", "Placement=%.40s is neither pack nor order", val);
        p->c->placement_order = val[0] == 'o';
        return 0;
    }
}

/* ---- owners (global, or on a Group line) ---- */

static tbm_owner_role_t owner_role(const char *key)
{
    int r;

    for (r = 0; r < TBM_OWNER_ROLES && strcasecmp(key, tbm_owner_key((tbm_owner_role_t)r)) != 0; r++)
        ;
    return (tbm_owner_role_t)r;
}

static int set_owner(conf_parser_t *p, const char *key, const char *val, char *dst)
{
    if (!tbm_owner_valid(val))
        return BAD(p, "name one owner in one word (a login, an e-mail address or a team), "
                      "e.g. OwnerRecovery=ops@lab.example",
                   "%s=%.64s is not an owner", key, val);
    snprintf(dst, TBM_OWNER_MAX, "%s", val);
    return 0;
}

static int set_global_owner(conf_parser_t *p, const char *key, const char *val)
{
    tbm_owner_role_t r = owner_role(key);

    if (p->owner_line[r])
        return BAD(p, "keep one of them; a group's own owner goes on its Group line", "%s is already set at line %d",
                   tbm_owner_key(r), p->owner_line[r]);
    p->owner_line[r] = p->line;
    return set_owner(p, key, val, p->c->owner[r]);
}

static int set_group_owner(conf_parser_t *p, const char *key, const char *val)
{
    return set_owner(p, key, val, p->group->owner[owner_role(key)]);
}

/* ---- Group lines ---- */

static int set_group_name(conf_parser_t *p, const char *key, const char *val)
{
    (void)key;
    if (!tbm_group_name_valid(val))
        return BAD(p, "use lowercase letters, digits, '-' and '_', starting with a letter, at most 31 characters",
                   "'%.40s' is not a valid group name", val);
    snprintf(p->group->caps.name, sizeof(p->group->caps.name), "%s", val);
    return 0;
}

static int add_node(conf_parser_t *p, const char *name, int group)
{
    tbm_conf_node_t *n;

    if (grow((void **)&p->c->nodes, &p->cap_nodes, p->c->n_nodes, sizeof(*n), TBM_CONF_MAX_NODES) < 0)
        return BAD(p, "split the lab into several files or fewer nodes", "more than %d nodes", TBM_CONF_MAX_NODES);
    n = &p->c->nodes[p->c->n_nodes];
    memset(n, 0, sizeof(*n));
    snprintf(n->name, sizeof(n->name), "%s", name);
    n->group = group;
    n->line = p->line;
    return (int)p->c->n_nodes++;
}

static int set_nodes(conf_parser_t *p, const char *key, const char *val)
{
    tbm_err_t err = {{0}};
    char **names;
    size_t n, i;
    int rc = 0;

    (void)key;
    p->has_nodes = 1;
    if (tbm_hostlist_expand(val, &names, &n, &err) < 0)
        return BAD(p, "write the Macs as a hostlist: Nodes=mac[01-04]", "Nodes=: %s", err.msg);
    p->group->nodes = malloc(n * sizeof(int));
    if (!p->group->nodes)
        rc = BAD(p, "free some memory", "out of memory");
    for (i = 0; rc == 0 && i < n; i++) {
        int k = add_node(p, names[i], (int)(p->group - p->c->groups));
        if (k < 0)
            rc = -1;
        else
            p->group->nodes[p->group->caps.n_nodes++] = k;
    }
    tbm_hostlist_free(names, n);
    return rc;
}

static int set_topology(conf_parser_t *p, const char *key, const char *val)
{
    (void)key;
    p->has_topology = 1;
    if (tbm_topo_class_parse(val, &p->group->caps.topology) < 0)
        return BAD(p, "use mesh, ring, other or single", "Topology=%.40s is not a topology", val);
    return 0;
}

static int set_link(conf_parser_t *p, const char *key, const char *val)
{
    (void)key;
    if (tbm_link_parse(val, &p->group->link) < 0)
        return BAD(p, "use tb5 (above 40 Gb/s), tb4 or none", "Link=%.40s is not a link kind", val);
    return 0;
}

static int parse_yes_no(conf_parser_t *p, const char *key, const char *val, int *out)
{
    if (strcmp(val, "yes") == 0 || strcmp(val, "no") == 0) {
        *out = val[0] == 'y';
        return 0;
    }
    return BAD(p, "use yes or no", "%s=%.40s is not yes or no", key, val);
}

static int set_group_rdma(conf_parser_t *p, const char *key, const char *val)
{
    return parse_yes_no(p, key, val, &p->group->caps.rdma);
}

static int set_mode(conf_parser_t *p, const char *key, const char *val)
{
    (void)key;
    if (strcmp(val, "bridge") == 0 || strcmp(val, "direct") == 0) {
        p->group->mode = val[0] == 'b' ? TBM_MODE_BRIDGE : TBM_MODE_DIRECT;
        return 0;
    }
    return BAD(p, "use bridge (slurmd on the bridge host) or direct (slurmd on the Mac)",
               "Mode=%.40s is not a mode", val);
}

static int set_backends(conf_parser_t *p, const char *key, const char *val)
{
    tbm_err_t err = {{0}};
    char choices[TBM_BACKEND_CHOICES_MAX], fix[TBM_BACKEND_CHOICES_MAX + 8];

    (void)key;
    p->has_backends = 1;
    if (tbm_backends_parse(val, &p->group->caps.backends, &err) < 0) {
        snprintf(fix, sizeof(fix), "use %s", tbm_backends_choices(choices, sizeof(choices)));
        return BAD(p, fix, "Backends=%.80s is not a list of backends", val);
    }
    return 0;
}

/* RdmaSubset=: kept as names until the line's Nodes= is read too (finish_group). */
static int set_rdma_subset(conf_parser_t *p, const char *key, const char *val)
{
    tbm_err_t err = {{0}};

    (void)key;
    if (tbm_hostlist_expand(val, &p->subset_names, &p->n_subset_names, &err) < 0)
        return BAD(p, "write the Macs as a hostlist: RdmaSubset=mac[01-07]", "RdmaSubset=: %s", err.msg);
    return 0;
}

static const conf_key_t group_keys[] = {
    {"Group", set_group_name}, {"Nodes", set_nodes}, {"Topology", set_topology}, {"Link", set_link},
    {"Rdma", set_group_rdma}, {"Mode", set_mode}, {"Backends", set_backends}, {"RdmaSubset", set_rdma_subset},
    {"OwnerRecovery", set_group_owner}, {"OwnerAccess", set_group_owner}, {"OwnerUpkeep", set_group_owner},
    {NULL, NULL},
};

static int start_group(conf_parser_t *p)
{
    if (grow((void **)&p->c->groups, &p->cap_groups, p->c->n_groups, sizeof(*p->group), TBM_CONF_MAX_GROUPS) < 0 ||
        grow((void **)&p->group_bad, &p->cap_bad, p->c->n_groups, 1, TBM_CONF_MAX_GROUPS) < 0)
        return BAD(p, "merge groups", "more than %d groups", TBM_CONF_MAX_GROUPS);
    p->group = &p->c->groups[p->c->n_groups++];
    memset(p->group, 0, sizeof(*p->group));
    p->group->line = p->line;
    p->has_backends = p->has_topology = p->has_nodes = 0;
    return 0;
}

static int node_count_fits(conf_parser_t *p, const tbm_conf_group_t *g)
{
    static const size_t least[] = {1, 2, 3, 2};
    size_t n = g->caps.n_nodes, want = least[g->caps.topology];

    if (g->caps.topology == TBM_TOPO_SINGLE && n != 1)
        return BAD(p, "a single group holds one Mac: use Topology=mesh, ring or other",
                   "Topology=single with %zu nodes", n);
    if (n < want)
        return BAD(p, "check Nodes= and Topology=", "Topology=%s needs at least %zu nodes, Nodes= names %zu",
                   tbm_topo_class_name(g->caps.topology), want, n);
    return 0;
}

/* Backends a topology and RDMA allow; the same rule as validation's verdict. */
static unsigned allowed_backends(const tbm_conf_group_t *g)
{
    unsigned m = g->caps.topology == TBM_TOPO_MESH ? TBM_BACKENDS_ALL
                 : g->caps.topology == TBM_TOPO_RING ? TBM_BACKENDS_ALL & ~TBM_BACKEND_BIT(TBM_BACKEND_JACCL)
                                                     : TBM_BACKEND_BIT(TBM_BACKEND_MPI);

    return g->caps.rdma ? m : m & ~TBM_BACKENDS_RDMA;
}

/* The group's node named `name`, or -1. */
static int group_node(const conf_parser_t *p, const tbm_conf_group_t *g, const char *name)
{
    size_t i;

    for (i = 0; i < g->caps.n_nodes; i++)
        if (strcmp(p->c->nodes[g->nodes[i]].name, name) == 0)
            return g->nodes[i];
    return -1;
}

/* RdmaSubset=: Macs of the group's Nodes=, each once, 2 or more, in a group without RDMA as a whole. */
static void finish_subset(conf_parser_t *p, tbm_conf_group_t *g)
{
    size_t i, n = p->n_subset_names;
    int k;

    if (g->caps.rdma) {
        BAD(p, "drop RdmaSubset=: every Mac of the group runs JACCL already",
            "group %s has Rdma=yes and RdmaSubset=", g->caps.name);
        return;
    }
    if (n < 2 || n > TBM_CONF_RDMA_SUBSET_MAX) {
        BAD(p, "name 2 to 64 Macs of the group whose cables all do RDMA (tbmesh inventory writes them), or drop "
               "RdmaSubset=", "RdmaSubset= names %zu Mac%s", n, n == 1 ? "" : "s");
        return;
    }
    for (i = 0; i < n; i++) {
        k = group_node(p, g, p->subset_names[i]);
        if (k < 0) {
            BAD(p, "name Macs of the group's Nodes= only", "RdmaSubset= names %s, which is not in Nodes=",
                p->subset_names[i]);
            return;
        }
        if (p->c->nodes[k].rdma_subset) {
            BAD(p, "name each Mac once", "RdmaSubset= names %s twice", p->subset_names[i]);
            return;
        }
        p->c->nodes[k].rdma_subset = 1;
    }
    g->n_rdma_subset = n;
}

static void finish_group(conf_parser_t *p)
{
    tbm_conf_group_t *g = p->group;
    unsigned extra;
    char list[64];

    if (!g->caps.name[0])
        return;
    if (!p->has_nodes || !p->has_topology) {
        BAD(p, "a Group line needs Nodes= and Topology=: Group=studio-a Nodes=mac[01-04] Topology=mesh",
            "group %s has no %s=", g->caps.name, p->has_nodes ? "Topology" : "Nodes");
        return;
    }
    if (node_count_fits(p, g) < 0)
        return;
    if (g->caps.rdma && g->link != TBM_LINK_TB5)
        BAD(p, "set Link=tb5, or Rdma=no", "Rdma=yes needs Link=tb5: RDMA runs on Thunderbolt 5 only");
    if (!p->has_backends)
        g->caps.backends = allowed_backends(g);
    extra = g->caps.backends & ~allowed_backends(g);
    tbm_backends_format(extra, list, sizeof(list));
    if (extra)
        BAD(p, "remove them from Backends=, or fix Topology= and Rdma=",
            "Backends= lists %s, which a %s group with Rdma=%s cannot run", list,
            tbm_topo_class_name(g->caps.topology), g->caps.rdma ? "yes" : "no");
    if (p->subset_names)
        finish_subset(p, g);
}

/* ---- NodeName lines ---- */

static int set_node_names(conf_parser_t *p, const char *key, const char *val)
{
    tbm_err_t err = {{0}};

    (void)key;
    if (tbm_hostlist_expand(val, &p->node_names, &p->n_node_names, &err) < 0)
        return BAD(p, "write the node names as a hostlist: NodeName=mac[01-04]", "NodeName=: %s", err.msg);
    return 0;
}

static int set_node_group(conf_parser_t *p, const char *key, const char *val)
{
    (void)key;
    if (!tbm_group_name_valid(val))
        return BAD(p, "use lowercase letters, digits, '-' and '_', starting with a letter, at most 31 characters",
                   "'%.40s' is not a valid group name", val);
    snprintf(p->node.group, sizeof(p->node.group), "%s", val);
    return 0;
}

static int set_agent_addr(conf_parser_t *p, const char *key, const char *val)
{
    (void)key;
    if (!tbm_hostname_valid(val))
        return BAD(p, "give a host name or an IPv4 address", "AgentAddr=%.64s is not a host name or address", val);
    snprintf(p->node.set.agent_addr, sizeof(p->node.set.agent_addr), "%s", val);
    return 0;
}

static int set_agent_port(conf_parser_t *p, const char *key, const char *val)
{
    return set_port(p, key, val, &p->node.set.agent_port);
}

static int set_slurmd_port(conf_parser_t *p, const char *key, const char *val)
{
    return set_port(p, key, val, &p->node.set.slurmd_port);
}

static const conf_key_t node_keys[] = {
    {"NodeName", set_node_names}, {"Group", set_node_group}, {"AgentAddr", set_agent_addr},
    {"AgentPort", set_agent_port}, {"SlurmdPort", set_slurmd_port}, {NULL, NULL},
};

static void finish_node_line(conf_parser_t *p)
{
    size_t i;

    for (i = 0; i < p->n_node_names; i++) {
        if (grow((void **)&p->pn, &p->cap_pn, p->n_pn, sizeof(*p->pn), TBM_CONF_MAX_NODES) < 0) {
            BAD(p, "describe fewer nodes", "more than %d node settings", TBM_CONF_MAX_NODES);
            break;
        }
        p->pn[p->n_pn] = p->node;
        snprintf(p->pn[p->n_pn].name, sizeof(p->pn[p->n_pn].name), "%s", p->node_names[i]);
        p->pn[p->n_pn++].line = p->line;
    }
    tbm_hostlist_free(p->node_names, p->n_node_names);
    p->node_names = NULL;
    p->n_node_names = 0;
}

/* ---- Cable lines ---- */

static pending_cable_t *cur_cable(conf_parser_t *p)
{
    return &p->pc[p->n_pc - 1];
}

static int set_cable_ends(conf_parser_t *p, const char *key, const char *val)
{
    const char *example = "write both ends as node:interface, e.g. Cable=mac01:en2,mac02:en2";
    char end[2][TBM_HOSTNAME_MAX + TBM_IFNAME_MAX];
    char *colon[2];
    pending_cable_t *pc = cur_cable(p);
    int e;

    if (split_two(p, key, val, end[0], end[1], sizeof(end[0]), example) < 0)
        return -1;
    for (e = 0; e < 2; e++) {
        colon[e] = strchr(end[e], ':');
        if (!colon[e])
            return BAD(p, example, "cable end '%s' has no ':interface'", end[e]);
        *colon[e] = '\0';
        if (!tbm_hostname_valid(end[e]) || !tbm_iface_name_valid(colon[e] + 1))
            return BAD(p, example, "cable end '%s:%s' is not node:interface", end[e], colon[e] + 1);
    }
    for (e = 0; e < 2; e++) {
        snprintf(pc->node[e], sizeof(pc->node[e]), "%.63s", end[e]);
        snprintf(pc->cable.end[e].iface, sizeof(pc->cable.end[e].iface), "%s", colon[e] + 1);
    }
    return 0;
}

static int set_cable_addr(conf_parser_t *p, const char *key, const char *val)
{
    const char *example = "give both ends' IPv4 addresses: Addr=10.0.0.1/30,10.0.0.2/30";
    char a[2][32];
    uint32_t ip;
    pending_cable_t *pc = cur_cable(p);
    int e;

    if (split_two(p, key, val, a[0], a[1], sizeof(a[0]), example) < 0)
        return -1;
    for (e = 0; e < 2; e++) {
        tbm_conf_end_t *end = &pc->cable.end[e];
        char *slash = strchr(a[e], '/');
        end->prefix_len = -1;
        if (slash) {
            *slash = '\0';
            if (tbm_parse_uint(slash + 1, 32, &end->prefix_len) < 0)
                return BAD(p, example, "'/%.20s' is not a prefix length from 1 to 32", slash + 1);
        }
        if (tbm_ipv4_parse(a[e], &ip) < 0)
            return BAD(p, example, "'%s' is not an IPv4 address", a[e]);
        snprintf(end->ipv4, sizeof(end->ipv4), "%.15s", a[e]);
    }
    pc->has_addr = 1;
    return 0;
}

static int set_cable_rdma(conf_parser_t *p, const char *key, const char *val)
{
    const char *example = "name the RDMA device at each end: Rdma=rdma_en2,rdma_en2";
    char d[2][TBM_IFNAME_MAX];
    pending_cable_t *pc = cur_cable(p);
    int e;

    if (split_two(p, key, val, d[0], d[1], sizeof(d[0]), example) < 0)
        return -1;
    for (e = 0; e < 2; e++) {
        if (!tbm_iface_name_valid(d[e]))
            return BAD(p, example, "'%s' is not an RDMA device name", d[e]);
        snprintf(pc->cable.end[e].rdma, sizeof(pc->cable.end[e].rdma), "%.15s", d[e]);
    }
    pc->has_rdma = 1;
    return 0;
}

static int set_cable_speed(conf_parser_t *p, const char *key, const char *val)
{
    if (tbm_parse_uint(val, 10000, &cur_cable(p)->cable.speed_gbps) < 0)
        return BAD(p, "give the link speed in Gb/s, e.g. Speed=80", "%s=%.40s is not a speed in Gb/s", key, val);
    return 0;
}

static const conf_key_t cable_keys[] = {
    {"Cable", set_cable_ends}, {"Addr", set_cable_addr}, {"Rdma", set_cable_rdma}, {"Speed", set_cable_speed},
    {NULL, NULL},
};

static int start_cable(conf_parser_t *p)
{
    pending_cable_t *pc;

    if (grow((void **)&p->pc, &p->cap_pc, p->n_pc, sizeof(*p->pc), TBM_CONF_MAX_CABLES) < 0)
        return BAD(p, "list fewer cables", "more than %d cables", TBM_CONF_MAX_CABLES);
    pc = &p->pc[p->n_pc++];
    memset(pc, 0, sizeof(*pc));
    pc->cable.line = p->line;
    pc->cable.end[0].prefix_len = pc->cable.end[1].prefix_len = -1;
    return 0;
}

/* ---- a line of any kind ---- */

/* A line's kind is named by its first key. */
void tbm_conf_read_tokens(conf_parser_t *p, conf_token_t *tok, size_t n)
{
    if (strcasecmp(tok[0].key, "Group") == 0) {
        if (start_group(p) == 0) {
            tbm_conf_apply_keys(p, group_keys, "Group", tok, n);
            if (p->n_errors == p->line_errors)
                finish_group(p);
            p->group_bad[p->c->n_groups - 1] = p->n_errors > p->line_errors;
        }
        tbm_hostlist_free(p->subset_names, p->n_subset_names);
        p->subset_names = NULL;
        p->n_subset_names = 0;
    } else if (strcasecmp(tok[0].key, "NodeName") == 0) {
        memset(&p->node, 0, sizeof(p->node));
        tbm_conf_apply_keys(p, node_keys, "NodeName", tok, n);
        finish_node_line(p);
    } else if (strcasecmp(tok[0].key, "Cable") == 0) {
        if (start_cable(p) == 0) {
            tbm_conf_apply_keys(p, cable_keys, "Cable", tok, n);
            cur_cable(p)->bad = p->n_errors > p->line_errors;
        }
    } else if (tbm_conf_is_key(global_keys, tok[0].key)) {
        p->line_tokens = n;
        tbm_conf_apply_keys(p, global_keys, "setting", tok, n);
        p->line_tokens = 0;
    } else {
        char list[400], fix[480];
        tbm_conf_key_names(global_keys, list, sizeof(list));
        snprintf(fix, sizeof(fix), "a line starts with Group=, NodeName=, Cable= or one of %s", list);
        BAD(p, fix, "unknown key '%.40s'", tok[0].key);
    }
}
