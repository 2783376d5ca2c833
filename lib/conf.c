/* conf.c: the tbmesh.conf parser: Key=Value lines with hostlists, every bad line reported with
 * file:line, all or nothing (see conf.h and tbmesh.conf(5)). */
#include "conf.h"

#include <stdarg.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "values.h"

/* Settings of a NodeName line, one per node it names, resolved once every group is known. */
typedef struct pending_node {
    char name[TBM_HOSTNAME_MAX];
    char group[TBM_GROUP_NAME_MAX];
    tbm_conf_node_t set;           /* agent_addr, agent_port, slurmd_port */
    int line;
} pending_node_t;

/* A Cable line, its node names resolved once every group is known. */
typedef struct pending_cable {
    char node[2][TBM_HOSTNAME_MAX];
    tbm_conf_cable_t cable;
    int has_addr, has_rdma;
    int bad;                       /* its line or its ends had an error: no further checks */
} pending_cable_t;

typedef struct parser {
    const char *file;
    int line;
    tbm_findings_t *errors;
    size_t n_errors;
    tbm_conf_t *c;
    int global_line[8];
    pending_node_t *pn;            /* NodeName settings */
    size_t n_pn, cap_pn;
    pending_cable_t *pc;           /* Cable lines */
    size_t n_pc, cap_pc;
    size_t cap_groups, cap_nodes, cap_bad;
    unsigned char *group_bad;      /* per group: its line had an error, so no further checks */
    size_t line_errors;            /* errors before the line being read */
    int *index;                    /* node indices sorted by name */
    /* the line being read */
    tbm_conf_group_t *group;
    int has_backends, has_topology, has_nodes;
    pending_node_t node;
    char **node_names;
    size_t n_node_names;
} parser_t;

typedef int (*setter_t)(parser_t *p, const char *key, const char *val);

typedef struct conf_key {
    const char *name;
    setter_t set;
} conf_key_t;

/* ---- messages ---- */

static int bad_at(parser_t *p, int line, const char *code, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Report an error of the file at `line`; returns -1. */
static int bad_at(parser_t *p, int line, const char *code, const char *fix, const char *fmt, ...)
{
    char where[TBM_FINDING_WHERE_MAX], what[TBM_FINDING_TEXT_MAX];
    va_list ap;

    snprintf(where, sizeof(where), "%.120s:%d", p->file, line);
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    tbm_finding_add(p->errors, TBM_SEV_ERROR, code, where, fix, "%s", what);
    p->n_errors++;
    return -1;
}

#define BAD(p, fix, ...) bad_at((p), (p)->line, "conf-error", (fix), __VA_ARGS__)

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

static int set_port(parser_t *p, const char *key, const char *val, int *out)
{
    if (tbm_parse_uint(val, 65535, out) < 0)
        return BAD(p, "use a port number from 1 to 65535", "%s=%.40s is not a port number", key, val);
    return 0;
}

/* Split "a,b" into two bounded words. */
static int split_two(parser_t *p, const char *key, const char *val, char *a, char *b, size_t len, const char *example)
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

static const char *const global_names[] = {"AgentPort", "CoordinatorPort", "RingBasePort", "SlurmdBasePort",
                                           "MlxVersion", "MacPartition", "SharedPartitions", "DefaultPartition"};
#define N_GLOBALS (sizeof(global_names) / sizeof(global_names[0]))

/* A partition name, or (list) a comma-separated list of them: [A-Za-z0-9_.-], no empty item. */
static int set_partitions(parser_t *p, const char *key, const char *val, char *dst, size_t len, int list)
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

static int set_global(parser_t *p, const char *key, const char *val)
{
    int i;

    for (i = 0; i < (int)N_GLOBALS - 1 && strcasecmp(key, global_names[i]) != 0; i++)
        ;
    if (p->global_line[i])
        return BAD(p, "keep one of them", "%s is already set at line %d", global_names[i], p->global_line[i]);
    p->global_line[i] = p->line;
    switch (i) {
    case 0: return set_port(p, global_names[i], val, &p->c->agent_port);
    case 1: return set_port(p, global_names[i], val, &p->c->coordinator_port);
    case 2: return set_port(p, global_names[i], val, &p->c->ring_base_port);
    case 3: return set_port(p, global_names[i], val, &p->c->slurmd_base_port);
    case 5: return set_partitions(p, global_names[i], val, p->c->mac_partition, sizeof(p->c->mac_partition), 0);
    case 6: return set_partitions(p, global_names[i], val, p->c->shared_partitions,
                                  sizeof(p->c->shared_partitions), 1);
    case 7: return set_partitions(p, global_names[i], val, p->c->default_partition,
                                  sizeof(p->c->default_partition), 0);
    default: break;
    }
    {
        int x, y, z, n = 0;
        if (strlen(val) >= TBM_MLX_VERSION_MAX || sscanf(val, "%d.%d.%d%n", &x, &y, &z, &n) != 3 ||
            (size_t)n != strlen(val) || strspn(val, "0123456789.") != strlen(val))
            return BAD(p, "write the MLX version as major.minor.patch, e.g. MlxVersion=0.31.2",
                       "MlxVersion=%.40s is not a version", val);
        snprintf(p->c->mlx_version, sizeof(p->c->mlx_version), "%s", val);
    }
    return 0;
}

static const conf_key_t global_keys[] = {
    {"AgentPort", set_global}, {"CoordinatorPort", set_global}, {"RingBasePort", set_global},
    {"SlurmdBasePort", set_global}, {"MlxVersion", set_global}, {"MacPartition", set_global},
    {"SharedPartitions", set_global}, {"DefaultPartition", set_global}, {NULL, NULL},
};

/* ---- Group lines ---- */

static int set_group_name(parser_t *p, const char *key, const char *val)
{
    (void)key;
    if (!tbm_group_name_valid(val))
        return BAD(p, "use lowercase letters, digits, '-' and '_', starting with a letter, at most 31 characters",
                   "'%.40s' is not a valid group name", val);
    snprintf(p->group->caps.name, sizeof(p->group->caps.name), "%s", val);
    return 0;
}

static int add_node(parser_t *p, const char *name, int group)
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

static int set_nodes(parser_t *p, const char *key, const char *val)
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

static int set_topology(parser_t *p, const char *key, const char *val)
{
    (void)key;
    p->has_topology = 1;
    if (tbm_topo_class_parse(val, &p->group->caps.topology) < 0)
        return BAD(p, "use mesh, ring, other or single", "Topology=%.40s is not a topology", val);
    return 0;
}

static int set_link(parser_t *p, const char *key, const char *val)
{
    (void)key;
    if (tbm_link_parse(val, &p->group->link) < 0)
        return BAD(p, "use tb5 (above 40 Gb/s), tb4 or none", "Link=%.40s is not a link kind", val);
    return 0;
}

static int parse_yes_no(parser_t *p, const char *key, const char *val, int *out)
{
    if (strcmp(val, "yes") == 0 || strcmp(val, "no") == 0) {
        *out = val[0] == 'y';
        return 0;
    }
    return BAD(p, "use yes or no", "%s=%.40s is not yes or no", key, val);
}

static int set_group_rdma(parser_t *p, const char *key, const char *val)
{
    return parse_yes_no(p, key, val, &p->group->caps.rdma);
}

static int set_mode(parser_t *p, const char *key, const char *val)
{
    (void)key;
    if (strcmp(val, "bridge") == 0 || strcmp(val, "direct") == 0) {
        p->group->mode = val[0] == 'b' ? TBM_MODE_BRIDGE : TBM_MODE_DIRECT;
        return 0;
    }
    return BAD(p, "use bridge (slurmd on the bridge host) or direct (slurmd on the Mac)",
               "Mode=%.40s is not a mode", val);
}

static int set_backends(parser_t *p, const char *key, const char *val)
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

static const conf_key_t group_keys[] = {
    {"Group", set_group_name}, {"Nodes", set_nodes}, {"Topology", set_topology}, {"Link", set_link},
    {"Rdma", set_group_rdma}, {"Mode", set_mode}, {"Backends", set_backends}, {NULL, NULL},
};

static int start_group(parser_t *p)
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

static int node_count_fits(parser_t *p, const tbm_conf_group_t *g)
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

static void finish_group(parser_t *p)
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
}

/* ---- NodeName lines ---- */

static int set_node_names(parser_t *p, const char *key, const char *val)
{
    tbm_err_t err = {{0}};

    (void)key;
    if (tbm_hostlist_expand(val, &p->node_names, &p->n_node_names, &err) < 0)
        return BAD(p, "write the node names as a hostlist: NodeName=mac[01-04]", "NodeName=: %s", err.msg);
    return 0;
}

static int set_node_group(parser_t *p, const char *key, const char *val)
{
    (void)key;
    if (!tbm_group_name_valid(val))
        return BAD(p, "use lowercase letters, digits, '-' and '_', starting with a letter, at most 31 characters",
                   "'%.40s' is not a valid group name", val);
    snprintf(p->node.group, sizeof(p->node.group), "%s", val);
    return 0;
}

static int set_agent_addr(parser_t *p, const char *key, const char *val)
{
    (void)key;
    if (!tbm_hostname_valid(val))
        return BAD(p, "give a host name or an IPv4 address", "AgentAddr=%.64s is not a host name or address", val);
    snprintf(p->node.set.agent_addr, sizeof(p->node.set.agent_addr), "%s", val);
    return 0;
}

static int set_agent_port(parser_t *p, const char *key, const char *val)
{
    return set_port(p, key, val, &p->node.set.agent_port);
}

static int set_slurmd_port(parser_t *p, const char *key, const char *val)
{
    return set_port(p, key, val, &p->node.set.slurmd_port);
}

static const conf_key_t node_keys[] = {
    {"NodeName", set_node_names}, {"Group", set_node_group}, {"AgentAddr", set_agent_addr},
    {"AgentPort", set_agent_port}, {"SlurmdPort", set_slurmd_port}, {NULL, NULL},
};

static void finish_node_line(parser_t *p)
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

static pending_cable_t *cur_cable(parser_t *p)
{
    return &p->pc[p->n_pc - 1];
}

static int set_cable_ends(parser_t *p, const char *key, const char *val)
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

static int set_cable_addr(parser_t *p, const char *key, const char *val)
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

static int set_cable_rdma(parser_t *p, const char *key, const char *val)
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

static int set_cable_speed(parser_t *p, const char *key, const char *val)
{
    if (tbm_parse_uint(val, 10000, &cur_cable(p)->cable.speed_gbps) < 0)
        return BAD(p, "give the link speed in Gb/s, e.g. Speed=80", "%s=%.40s is not a speed in Gb/s", key, val);
    return 0;
}

static const conf_key_t cable_keys[] = {
    {"Cable", set_cable_ends}, {"Addr", set_cable_addr}, {"Rdma", set_cable_rdma}, {"Speed", set_cable_speed},
    {NULL, NULL},
};

static int start_cable(parser_t *p)
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

/* ---- lines ---- */

typedef struct token {
    char *key;
    char *val;
} token_t;

static void known_keys(const conf_key_t *keys, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (; keys->name && used < len; keys++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", keys->name);
}

/* Apply every token of a line through its table of keys. */
static void apply(parser_t *p, const conf_key_t *keys, const char *kind, token_t *tok, size_t n)
{
    unsigned seen = 0;
    size_t i;
    int k;

    for (i = 0; i < n; i++) {
        for (k = 0; keys[k].name && strcasecmp(keys[k].name, tok[i].key) != 0; k++)
            ;
        if (!keys[k].name) {
            char list[200], fix[240];
            known_keys(keys, list, sizeof(list));
            snprintf(fix, sizeof(fix), "known keys there: %s", list);
            BAD(p, fix, "unknown key '%.40s' on a %s line", tok[i].key, kind);
            continue;
        }
        if (seen & (1u << k)) {
            BAD(p, "keep one of them", "%s= is given twice on this line", keys[k].name);
            continue;
        }
        seen |= 1u << k;
        keys[k].set(p, keys[k].name, tok[i].val);
    }
}

static int tokenize(parser_t *p, char *s, token_t *tok, size_t *n)
{
    char *save = NULL, *w;

    *n = 0;
    for (w = strtok_r(s, " \t\r\f\v", &save); w; w = strtok_r(NULL, " \t\r\f\v", &save)) {
        char *eq = strchr(w, '=');
        if (*n == TBM_CONF_MAX_TOKENS)
            return BAD(p, "split the line", "more than %d settings on one line", TBM_CONF_MAX_TOKENS);
        if (!eq || eq == w)
            return BAD(p, "write settings as Key=Value separated by spaces", "'%.40s' is not Key=Value", w);
        *eq = '\0';
        if (!eq[1])
            return BAD(p, "give it a value or remove it", "%.40s= has no value", w);
        tok[*n].key = w;
        tok[(*n)++].val = eq + 1;
    }
    return 0;
}

static int is_key(const conf_key_t *keys, const char *key)
{
    for (; keys->name; keys++)
        if (strcasecmp(keys->name, key) == 0)
            return 1;
    return 0;
}

static void parse_tokens(parser_t *p, token_t *tok, size_t n)
{
    if (strcasecmp(tok[0].key, "Group") == 0) {
        if (start_group(p) == 0) {
            apply(p, group_keys, "Group", tok, n);
            if (p->n_errors == p->line_errors)
                finish_group(p);
            p->group_bad[p->c->n_groups - 1] = p->n_errors > p->line_errors;
        }
    } else if (strcasecmp(tok[0].key, "NodeName") == 0) {
        memset(&p->node, 0, sizeof(p->node));
        apply(p, node_keys, "NodeName", tok, n);
        finish_node_line(p);
    } else if (strcasecmp(tok[0].key, "Cable") == 0) {
        if (start_cable(p) == 0) {
            apply(p, cable_keys, "Cable", tok, n);
            cur_cable(p)->bad = p->n_errors > p->line_errors;
        }
    } else if (is_key(global_keys, tok[0].key))
        apply(p, global_keys, "setting", tok, n);
    else
        BAD(p, "a line starts with Group=, NodeName=, Cable= or one of AgentPort, CoordinatorPort, RingBasePort, "
            "SlurmdBasePort, MlxVersion, MacPartition, SharedPartitions, DefaultPartition", "unknown key '%.40s'",
            tok[0].key);
}

static void parse_line(parser_t *p, const char *s, size_t len)
{
    char buf[TBM_CONF_LINE_MAX + 1];
    token_t tok[TBM_CONF_MAX_TOKENS];
    char *hash;
    size_t n;

    if (len > TBM_CONF_LINE_MAX) {
        BAD(p, "split it: one Group, NodeName or Cable per line", "the line is longer than %d bytes", TBM_CONF_LINE_MAX);
        return;
    }
    if (memchr(s, '\0', len)) {
        BAD(p, "save the file as plain text", "the line holds a NUL byte");
        return;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    p->line_errors = p->n_errors;
    hash = strchr(buf, '#');
    if (hash)
        *hash = '\0';
    if (tokenize(p, buf, tok, &n) < 0 || n == 0)
        return;
    parse_tokens(p, tok, n);
}

/* ---- cross-line checks ---- */

static const tbm_conf_t *sort_conf;

static int node_by_name(const void *a, const void *b)
{
    int c = strcmp(sort_conf->nodes[*(const int *)a].name, sort_conf->nodes[*(const int *)b].name);
    return c ? c : *(const int *)a - *(const int *)b;
}

static int find_node(const parser_t *p, const char *name)
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

static const char *group_name(const parser_t *p, int g)
{
    return p->c->groups[g].caps.name;
}

/* Sort the nodes by name, and report a node named twice. */
static int index_nodes(parser_t *p)
{
    size_t i;

    p->index = malloc((p->c->n_nodes ? p->c->n_nodes : 1) * sizeof(int));
    if (!p->index)
        return -1;
    for (i = 0; i < p->c->n_nodes; i++)
        p->index[i] = (int)i;
    sort_conf = p->c;
    qsort(p->index, p->c->n_nodes, sizeof(int), node_by_name);
    for (i = 1; i < p->c->n_nodes; i++) {
        const tbm_conf_node_t *a = &p->c->nodes[p->index[i - 1]], *b = &p->c->nodes[p->index[i]];
        if (strcmp(a->name, b->name) != 0)
            continue;
        if (a->group == b->group)
            bad_at(p, b->line, "conf-error", "list each Mac once", "node %s is listed twice in group %s", b->name,
                   group_name(p, b->group));
        else
            bad_at(p, b->line, "conf-error", "a Mac belongs to one group: remove it from one Nodes= list",
                   "node %s is in group %s (line %d) and in group %s", b->name, group_name(p, a->group), a->line,
                   group_name(p, b->group));
    }
    return 0;
}

static void resolve_node_settings(parser_t *p)
{
    int *described = calloc(p->c->n_nodes ? p->c->n_nodes : 1, sizeof(int));
    size_t i;

    for (i = 0; described && i < p->n_pn; i++) {
        const pending_node_t *pn = &p->pn[i];
        int k = find_node(p, pn->name);
        tbm_conf_node_t *n;
        if (k < 0) {
            bad_at(p, pn->line, "conf-error", "add it to the Nodes= of a Group line first", "node %s is in no group",
                   pn->name);
            continue;
        }
        n = &p->c->nodes[k];
        if (pn->group[0] && strcmp(pn->group, group_name(p, n->group)) != 0)
            bad_at(p, pn->line, "conf-error", "fix Group= or the group's Nodes=",
                   "NodeName=%s says Group=%s, but the node is in group %s (line %d)", pn->name, pn->group,
                   group_name(p, n->group), n->line);
        if (described[k])
            bad_at(p, pn->line, "conf-error", "merge the two NodeName lines",
                   "node %s is already described at line %d", pn->name, described[k]);
        described[k] = pn->line;
        snprintf(n->agent_addr, sizeof(n->agent_addr), "%s", pn->set.agent_addr);
        n->agent_port = pn->set.agent_port;
        n->slurmd_port = pn->set.slurmd_port;
    }
    free(described);
}

/* Resolve one cable's node names; 0 when both are known and in one group. */
static int resolve_cable(parser_t *p, pending_cable_t *pc)
{
    int e, k[2];

    if (pc->bad)
        return -1;   /* its line was reported already */
    for (e = 0; e < 2; e++) {
        k[e] = find_node(p, pc->node[e]);
        if (k[e] < 0)
            return bad_at(p, pc->cable.line, "conf-error", "add the node to a group's Nodes= or fix the name",
                          "the cable names node %s, which is in no group", pc->node[e]);
        pc->cable.end[e].node = k[e];
    }
    if (k[0] == k[1])
        return bad_at(p, pc->cable.line, "conf-error", "a cable joins two different Macs",
                      "the cable joins node %s to itself", pc->node[0]);
    if (p->c->nodes[k[0]].group != p->c->nodes[k[1]].group)
        return bad_at(p, pc->cable.line, "conf-error", "a cable stays within one group: fix the groups' Nodes=",
                      "the cable joins %s (group %s) and %s (group %s)", pc->node[0],
                      group_name(p, p->c->nodes[k[0]].group), pc->node[1], group_name(p, p->c->nodes[k[1]].group));
    pc->cable.group = p->c->nodes[k[0]].group;
    return 0;
}

typedef struct end_key {
    const char *node;
    const char *iface;
    int line;
} end_key_t;

static int by_end(const void *a, const void *b)
{
    const end_key_t *x = a, *y = b;
    int c = strcmp(x->node, y->node);

    if (!c)
        c = strcmp(x->iface, y->iface);
    return c ? c : x->line - y->line;
}

/* An interface used by two cables. */
static void check_ends_unique(parser_t *p)
{
    end_key_t *keys = malloc((p->n_pc ? p->n_pc : 1) * 2 * sizeof(*keys));
    size_t i, n = 0;
    int e;

    if (!keys)
        return;
    for (i = 0; i < p->n_pc; i++)
        for (e = 0; e < 2 && p->pc[i].node[0][0]; e++) {
            keys[n].node = p->pc[i].node[e];
            keys[n].iface = p->pc[i].cable.end[e].iface;
            keys[n++].line = p->pc[i].cable.line;
        }
    qsort(keys, n, sizeof(*keys), by_end);
    for (i = 1; i < n; i++)
        if (strcmp(keys[i - 1].node, keys[i].node) == 0 && strcmp(keys[i - 1].iface, keys[i].iface) == 0)
            bad_at(p, keys[i].line, "conf-error", "an interface holds one cable: fix the interface names",
                   "%s:%s is already used by the cable at line %d", keys[i].node, keys[i].iface, keys[i - 1].line);
    free(keys);
}

static int move_cables(parser_t *p)
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

/* What a group needs of each of its cables: RDMA devices with Rdma=yes, addresses for TCP and JACCL. */
static void check_cable_needs(parser_t *p)
{
    size_t i;

    for (i = 0; i < p->n_pc; i++) {
        const pending_cable_t *pc = &p->pc[i];
        const tbm_conf_group_t *g;
        if (pc->bad)
            continue;
        g = &p->c->groups[pc->cable.group];
        if (g->caps.rdma && !pc->has_rdma)
            bad_at(p, pc->cable.line, "conf-error", "add Rdma=rdma_<if>,rdma_<if>, or set Rdma=no on the group",
                   "group %s has Rdma=yes but this cable names no RDMA devices", g->caps.name);
        if ((g->caps.backends & ~TBM_BACKEND_BIT(TBM_BACKEND_MPI)) && !pc->has_addr)
            bad_at(p, pc->cable.line, "conf-error", "give both ends' addresses: Addr=10.0.0.1/30,10.0.0.2/30",
                   "group %s runs %s but this cable has no Addr=", g->caps.name,
                   g->caps.backends & TBM_BACKEND_BIT(TBM_BACKEND_RING) ? "ring" : "JACCL");
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

static void check_group(parser_t *p, size_t g, const int *pos, const size_t *ids, size_t n_cables)
{
    const tbm_conf_group_t *gr = &p->c->groups[g];
    int cls = gr->caps.n_nodes && !p->group_bad[g] ? cable_class(p->c, g, pos, ids, n_cables) : -1;

    if (cls < 0)
        return;
    if (n_cables == 0 && gr->caps.n_nodes > 1 && (gr->caps.backends & ~TBM_BACKEND_BIT(TBM_BACKEND_MPI)))
        bad_at(p, gr->line, "conf-error", "add its Cable= lines (tbmesh inventory writes them), or set Backends=mpi",
               "group %s allows more than mpi but lists no cable", gr->caps.name);
    else if (n_cables > 0 && cls != (int)gr->caps.topology)
        bad_at(p, gr->line, "conf-error", "fix the group's Cable= lines or its Topology=",
               "group %s says Topology=%s but its cables make the topology %s", gr->caps.name,
               tbm_topo_class_name(gr->caps.topology), tbm_topo_class_name((tbm_topo_class_t)cls));
}

/* Each group's cables against its Topology= (cables bucketed by group first). */
static void check_group_cables(parser_t *p)
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

typedef struct feature_key {
    char feature[TBM_GROUP_NAME_MAX + 8];
    int group;
} feature_key_t;

static int by_feature(const void *a, const void *b)
{
    const feature_key_t *x = a, *y = b;
    int c = strcmp(x->feature, y->feature);

    return c ? c : x->group - y->group;
}

/* Two groups with one name, or that would share a Slurm feature (studio-a and studio_a). */
static void check_group_names(parser_t *p)
{
    feature_key_t *keys = malloc((p->c->n_groups ? p->c->n_groups : 1) * sizeof(*keys));
    size_t i, n = 0;

    for (i = 0; keys && i < p->c->n_groups; i++)
        if (p->c->groups[i].caps.name[0]) {
            tbm_group_feature(p->c->groups[i].caps.name, keys[n].feature, sizeof(keys[n].feature));
            keys[n++].group = (int)i;
        }
    if (keys)
        qsort(keys, n, sizeof(*keys), by_feature);
    for (i = 1; i < n; i++) {
        const tbm_conf_group_t *a = &p->c->groups[keys[i - 1].group], *b = &p->c->groups[keys[i].group];
        if (strcmp(keys[i - 1].feature, keys[i].feature) != 0)
            continue;
        if (strcmp(a->caps.name, b->caps.name) == 0)
            bad_at(p, b->line, "conf-error", "merge the two Group lines or rename one",
                   "group %s is already defined at line %d", b->caps.name, a->line);
        else
            bad_at(p, b->line, "conf-error", "rename one of them",
                   "groups %s (line %d) and %s give the same Slurm feature %s", a->caps.name, a->line,
                   b->caps.name, keys[i].feature);
    }
    free(keys);
}

/* ---- entry ---- */

static void parser_free(parser_t *p)
{
    free(p->pn);
    free(p->pc);
    free(p->index);
    free(p->group_bad);
    tbm_hostlist_free(p->node_names, p->n_node_names);
}

static void read_lines(parser_t *p, const char *buf, size_t len)
{
    size_t pos = 0;

    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) : len;
        p->line++;
        parse_line(p, buf + pos, end - pos);
        pos = end + 1;
    }
}

static int summarize(parser_t *p, size_t first, tbm_err_t *err)
{
    const tbm_finding_t *f = first < p->errors->n ? &p->errors->items[first] : NULL;

    if (!f)
        return tbm_errprintf(err, "%s: %zu errors: out of memory", p->file, p->n_errors);
    if (p->n_errors == 1)
        return tbm_errprintf(err, "%s: %s: %s", f->where, f->what, f->fix);
    return tbm_errprintf(err, "%s: %s: %s (and %zu more errors)", f->where, f->what, f->fix, p->n_errors - 1);
}

int tbm_conf_parse(const char *buf, size_t len, const char *file, tbm_conf_t *out, tbm_findings_t *errors,
                   tbm_err_t *err)
{
    tbm_findings_t own;
    parser_t p;
    size_t first;
    int rc = 0;

    memset(&p, 0, sizeof(p));
    tbm_findings_init(&own);
    p.file = file ? file : "tbmesh.conf";
    p.errors = errors ? errors : &own;
    first = p.errors->n;
    p.c = out;
    tbm_conf_init(out);
    if (len > TBM_CONF_MAX_BYTES) {
        bad_at(&p, 0, "conf-error", "keep tbmesh.conf under 16 MiB", "the file holds %zu bytes", len);
    } else {
        read_lines(&p, buf, len);
        if (index_nodes(&p) < 0 || move_cables(&p) < 0)
            bad_at(&p, p.line, "conf-error", "free some memory", "out of memory");
        resolve_node_settings(&p);
        check_cable_needs(&p);
        check_group_cables(&p);
        check_group_names(&p);
    }
    if (p.n_errors) {
        rc = summarize(&p, first, err);
        tbm_conf_free(out);
    }
    parser_free(&p);
    tbm_findings_free(&own);
    return rc;
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
