/* envplan.c: one rank's MLX distributed environment from tbmesh.conf and the job's nodes (see envplan.h):
 * checks, backend choice, rank order, the cables each rank uses, then the variables and files. */
#include "envplan.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "strbuf.h"
#include "values.h"

#define MLX_V(maj, min, pat) TBM_MLX_VERSION(maj, min, pat)
#define JACCL_FIRST         MLX_V(0, 30, 1)   /* JACCL first shipped */
#define JACCL_DEVICES_ONLY  MLX_V(0, 30, 3)   /* read MLX_JACCL_DEVICES instead of MLX_IBV_DEVICES */
#define JACCL_RING_FIRST    MLX_V(0, 30, 6)   /* JACCL ring mode */
#define JACCL_ALIASES_FIRST MLX_V(0, 31, 2)   /* JACCL_* aliases */
#define PORT_MAX            65535
#define MAX_VARS            16
#define OOM "out of memory while planning the job's environment: free some memory and retry"

typedef struct rails {
    int n;                                /* cables joining the pair, at most TBM_ENVPLAN_MAX_RAILS kept */
    int cable[TBM_ENVPLAN_MAX_RAILS];     /* indices into conf->cables, in tbmesh.conf order */
} rails_t;

typedef struct ctx {
    const tbm_conf_t *conf;
    const char *const *nodes;
    size_t n;
    int self;                             /* job index of this node */
    int *cnode;                           /* conf node of each job index */
    rails_t *rails;                       /* n x n, by job index */
    const tbm_conf_group_t *group;
    tbm_backend_t backend;
    long version;
    int offset;
    int k;                                /* cables used between ring neighbours */
    char job_dir[TBM_ENVPLAN_DIR_MAX + 1];
    const char *libname;
    tbm_envplan_t *plan;
    tbm_err_t *err;
} ctx_t;

/* ---- small values ---- */

int tbm_envplan_port_offset(uint32_t job_id)
{
    return (int)(job_id % TBM_ENVPLAN_PORT_SLOTS) * TBM_ENVPLAN_PORT_WINDOW;
}

static int path_valid(const char *s)
{
    size_t i;

    if (!s || s[0] != '/' || strlen(s) > TBM_ENVPLAN_DIR_MAX || strstr(s, "..") || strstr(s, "//"))
        return 0;
    for (i = 0; s[i]; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              strchr("._-/", s[i])))
            return 0;
    return 1;
}

static int libname_valid(const char *s)
{
    size_t i, len = strlen(s);

    if (len == 0 || len > 64 || s[0] == '.')
        return 0;
    for (i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              strchr("._-", s[i])))
            return 0;
    return 1;
}

static const char *node_name(const ctx_t *c, int job_index)
{
    return c->nodes[job_index];
}

/* The end of a cable on conf node `node`. */
static const tbm_conf_end_t *end_on(const ctx_t *c, int cable, int node)
{
    const tbm_conf_cable_t *cb = &c->conf->cables[cable];

    return cb->end[0].node == node ? &cb->end[0] : &cb->end[1];
}

static void cable_label(const ctx_t *c, int cable, char *buf, size_t len)
{
    const tbm_conf_cable_t *cb = &c->conf->cables[cable];

    snprintf(buf, len, "%s:%s <-> %s:%s", c->conf->nodes[cb->end[0].node].name, cb->end[0].iface,
             c->conf->nodes[cb->end[1].node].name, cb->end[1].iface);
}

/* ---- checks of the request ---- */

static int check_args(ctx_t *c, const char *rank_node, tbm_backend_t b, uint32_t job_id,
                      const tbm_envplan_opts_t *opts)
{
    const char *dir = opts ? opts->job_dir : NULL;
    char choices[TBM_BACKEND_CHOICES_MAX];

    if (!c->conf)
        return tbm_errprintf(c->err, "no tbmesh.conf was given: read it (tbm_conf_parse) before planning a job");
    if (!c->nodes || c->n == 0)
        return tbm_errprintf(c->err, "the job has no nodes: give the job's node list in Slurm's order");
    if (c->n > TBM_ENVPLAN_MAX_RANKS)
        return tbm_errprintf(c->err, "the job has %zu Macs, more than the %d tbmesh plans for: ask for %d or fewer",
                             c->n, TBM_ENVPLAN_MAX_RANKS, TBM_ENVPLAN_MAX_RANKS);
    if (!rank_node || !*rank_node)
        return tbm_errprintf(c->err, "this node's name is missing: give the name Slurm knows the node by");
    if ((unsigned)b > TBM_BACKEND_AUTO)
        return tbm_errprintf(c->err, "unknown backend: use %s", tbm_backend_choices(choices, sizeof(choices)));
    if (dir)
        snprintf(c->job_dir, sizeof(c->job_dir), "%s", dir);
    else
        snprintf(c->job_dir, sizeof(c->job_dir), "/tmp/tbmesh-job-%u", (unsigned)job_id);
    if (!path_valid(dir ? dir : c->job_dir))
        return tbm_errprintf(c->err, "the job folder '%.100s' is not an absolute path of letters, digits, '.', "
                             "'_', '-' and '/' (at most %d bytes, no '..'): give a plain folder such as "
                             "/tmp/tbmesh-job-<id>", dir ? dir : c->job_dir, TBM_ENVPLAN_DIR_MAX);
    c->libname = opts && opts->mpi_libname ? opts->mpi_libname : TBM_ENVPLAN_MPI_LIBNAME;
    if (!libname_valid(c->libname))
        return tbm_errprintf(c->err, "the MPI library name '%.64s' is not a plain file name: give one such as "
                             "libmpi.40.dylib", c->libname);
    c->version = tbm_mlx_version_parse(opts && opts->mlx_version ? opts->mlx_version : c->conf->mlx_version);
    c->offset = tbm_envplan_port_offset(job_id);
    return 0;
}

static int job_list(const ctx_t *c, char *buf, size_t len)
{
    char *s = tbm_hostlist_compress((char *const *)c->nodes, c->n);

    snprintf(buf, len, "%s", s ? s : "?");
    free(s);
    return 0;
}

/* Names valid and unique, this node among them, every node in tbmesh.conf. */
static int index_nodes(ctx_t *c, const char *rank_node)
{
    size_t i, j;
    char list[256];

    c->self = -1;
    for (i = 0; i < c->n; i++) {
        if (!c->nodes[i] || !tbm_hostname_valid(c->nodes[i]))
            return tbm_errprintf(c->err, "node name '%.64s' is not a valid host name: pass the job's node names as "
                                 "Slurm lists them", c->nodes[i] ? c->nodes[i] : "(null)");
        for (j = 0; j < i; j++)
            if (strcmp(c->nodes[i], c->nodes[j]) == 0)
                return tbm_errprintf(c->err, "node %s is listed twice in the job's node list: list each node once",
                                     c->nodes[i]);
        if (strcmp(c->nodes[i], rank_node) == 0)
            c->self = (int)i;
    }
    if (c->self < 0) {
        job_list(c, list, sizeof(list));
        return tbm_errprintf(c->err, "this node %.64s is not in the job's node list (%s): plan on one of the "
                             "job's own nodes", rank_node, list);
    }
    for (i = 0; i < c->n; i++) {
        c->cnode[i] = tbm_conf_node(c->conf, c->nodes[i]);
        if (c->cnode[i] < 0)
            return tbm_errprintf(c->err, "node %s is not in tbmesh.conf: add it to a group (tbmesh inventory "
                                 "writes them), or run the job on the Macs of one tbmesh group", c->nodes[i]);
    }
    return 0;
}

static int one_group(ctx_t *c)
{
    size_t i;
    int g0 = c->conf->nodes[c->cnode[0]].group;

    for (i = 0; i < c->n; i++) {
        int g = c->conf->nodes[c->cnode[i]].group;
        if (g < 0 || (size_t)g >= c->conf->n_groups)
            return tbm_errprintf(c->err, "node %s has no group in tbmesh.conf: add it to a group's Nodes= (tbmesh "
                                 "inventory writes them)", c->nodes[i]);
        if (g != g0)
            return tbm_errprintf(c->err, "the job's nodes are in two groups: %s is in %s, %s is in %s: a job runs "
                                 "within one group; submit with --gres=tbmesh:N so that it is placed in one",
                                 c->nodes[0], c->conf->groups[g0].caps.name, c->nodes[i],
                                 c->conf->groups[g].caps.name);
    }
    c->group = &c->conf->groups[g0];
    return 0;
}

/* ---- backend ---- */

/* 0 when the MLX version can run backend b; else -1 with the message. */
static int version_allows(ctx_t *c, tbm_backend_t b, tbm_err_t *err)
{
    char v[48];

    if (c->version < 0)
        return 0;
    snprintf(v, sizeof(v), "%ld.%ld.%ld", c->version / 1000000, c->version / 1000 % 1000, c->version % 1000);
    if ((b == TBM_BACKEND_JACCL || b == TBM_BACKEND_JACCL_RING) && c->version < JACCL_FIRST)
        return tbm_errprintf(err, "MLX %s has no JACCL (it first shipped in 0.30.1): upgrade MLX and set "
                             "MlxVersion= in tbmesh.conf, or use --mlx-backend=ring", v);
    if (b == TBM_BACKEND_JACCL_RING && c->version < JACCL_RING_FIRST)
        return tbm_errprintf(err, "MLX %s has no JACCL ring mode (it came in 0.30.6): upgrade MLX and set "
                             "MlxVersion= in tbmesh.conf, or use --mlx-backend=ring", v);
    return 0;
}

static int choose_backend(ctx_t *c, tbm_backend_t b)
{
    tbm_err_t why = {{0}};
    int i;

    if (b == TBM_BACKEND_AUTO) {
        for (i = 0; i < TBM_BACKEND_COUNT; i++)
            if (tbm_group_supports(&c->group->caps, (tbm_backend_t)i, c->n, NULL) &&
                version_allows(c, (tbm_backend_t)i, NULL) == 0) {
                c->backend = (tbm_backend_t)i;
                return 0;
            }
        tbm_group_supports(&c->group->caps, TBM_BACKEND_AUTO, c->n, &why);
        return tbm_errprintf(c->err, "no backend fits %zu Macs of group %s: %s", c->n, c->group->caps.name,
                             why.msg);
    }
    if (!tbm_group_supports(&c->group->caps, b, c->n, &why))
        return tbm_errprintf(c->err, "backend %s on %zu Macs of group %s: %s", tbm_backend_name(b), c->n,
                             c->group->caps.name, why.msg);
    c->backend = b;
    return version_allows(c, b, c->err);
}

static int is_jaccl(const ctx_t *c)
{
    return c->backend == TBM_BACKEND_JACCL || c->backend == TBM_BACKEND_JACCL_RING;
}

static int is_ring(const ctx_t *c)
{
    return c->backend == TBM_BACKEND_JACCL_RING || c->backend == TBM_BACKEND_RING;
}

/* ---- cables and rank order ---- */

static rails_t *rails_of(const ctx_t *c, int a, int b)
{
    return &c->rails[(size_t)a * c->n + (size_t)b];
}

/* The cables joining job nodes, by pair, in tbmesh.conf order. */
static int collect_rails(ctx_t *c)
{
    int *pos = malloc((c->conf->n_nodes ? c->conf->n_nodes : 1) * sizeof(int));
    size_t i;

    if (!pos)
        return tbm_errprintf(c->err, OOM);
    for (i = 0; i < c->conf->n_nodes; i++)
        pos[i] = -1;
    for (i = 0; i < c->n; i++)
        pos[c->cnode[i]] = (int)i;
    for (i = 0; i < c->conf->n_cables; i++) {
        const tbm_conf_cable_t *cb = &c->conf->cables[i];
        int a, b, e;
        if (cb->end[0].node < 0 || cb->end[1].node < 0 || (size_t)cb->end[0].node >= c->conf->n_nodes ||
            (size_t)cb->end[1].node >= c->conf->n_nodes)
            continue;
        a = pos[cb->end[0].node];
        b = pos[cb->end[1].node];
        if (a < 0 || b < 0 || a == b)
            continue;
        for (e = 0; e < 2; e++) {
            rails_t *r = e ? rails_of(c, b, a) : rails_of(c, a, b);
            if (r->n < TBM_ENVPLAN_MAX_RAILS)
                r->cable[r->n++] = (int)i;
        }
    }
    free(pos);
    return 0;
}

static int cabled(const ctx_t *c, int a, int b)
{
    return rails_of(c, a, b)->n > 0;
}

/* True when the job order itself goes round a cabled cycle. */
static int order_is_cycle(const ctx_t *c)
{
    size_t i;

    for (i = 0; i < c->n; i++)
        if (!cabled(c, (int)i, (int)((i + 1) % c->n)))
            return 0;
    return 1;
}

/* The job nodes cabled to job node a (at most 3 are looked for: more is not a ring). */
static int neighbours(const ctx_t *c, int a, int nb[3])
{
    size_t i;
    int k = 0;

    for (i = 0; i < c->n && k < 3; i++)
        if ((int)i != a && cabled(c, a, (int)i))
            nb[k++] = (int)i;
    return k;
}

static int not_a_ring(const ctx_t *c, const char *how)
{
    return tbm_errprintf(c->err, "the cables of group %s in tbmesh.conf do not make one ring through the job's "
                         "Macs: %s: fix the group's Cable= lines (tbmesh inventory writes them)",
                         c->group->caps.name, how);
}

/* Walk the cables' cycle from job node 0, first towards its neighbour that comes first in the job order. */
static int walk_cycle(ctx_t *c, int *order)
{
    char seen[TBM_ENVPLAN_MAX_RANKS] = {0}, how[2 * TBM_HOSTNAME_MAX + 64];
    int prev = -1, at = 0, nb[3];
    size_t r;

    for (r = 0; r < c->n; r++) {
        int k = neighbours(c, at, nb), next;
        if (k != 2) {
            snprintf(how, sizeof(how), "%s is cabled to %d%s of them, not 2", node_name(c, at), k,
                     k > 2 ? " or more" : "");
            return not_a_ring(c, how);
        }
        if (seen[at])
            break;
        seen[at] = 1;
        order[r] = at;
        next = nb[0] == prev ? nb[1] : nb[0];
        prev = at;
        at = next;
    }
    if (r < c->n || at != 0) {
        snprintf(how, sizeof(how), "going round from %s comes back after %zu of the %zu Macs", node_name(c, 0), r,
                 c->n);
        return not_a_ring(c, how);
    }
    return 0;
}

static int make_order(ctx_t *c)
{
    int *order = malloc(c->n * sizeof(int));
    size_t i;

    if (!order)
        return tbm_errprintf(c->err, OOM);
    c->plan->order = order;
    for (i = 0; i < c->n; i++)
        order[i] = (int)i;
    if (!is_ring(c) || order_is_cycle(c))
        return 0;
    if (c->n == 2)
        return tbm_errprintf(c->err, "no cable joins %s and %s in tbmesh.conf: fix the group's Cable= lines "
                             "(tbmesh inventory writes them)", node_name(c, 0), node_name(c, 1));
    return walk_cycle(c, order);
}

/* The cables joining ranks r and s. */
static const rails_t *rank_rails(const ctx_t *c, int r, int s)
{
    return rails_of(c, c->plan->order[r], c->plan->order[s]);
}

static int is_neighbour(const ctx_t *c, int r, int s)
{
    int n = (int)c->n;

    return r != s && (s == (r + 1) % n || r == (s + 1) % n);
}

/* How many cables of rank r facing rank s the plan uses (the first ones of the pair). */
static int used(const ctx_t *c, int r, int s)
{
    if (r == s)
        return 0;
    if (c->backend == TBM_BACKEND_JACCL)
        return 1;
    if (is_ring(c))
        return is_neighbour(c, r, s) ? c->k : 0;
    return rank_rails(c, r, s)->n;   /* mpi: every cable between the job's nodes */
}

static int check_pairs(ctx_t *c)
{
    size_t r, s;

    c->k = TBM_ENVPLAN_MAX_RAILS;
    for (r = 0; r < c->n; r++)
        for (s = r + 1; s < c->n; s++) {
            int have = rank_rails(c, (int)r, (int)s)->n;
            if (c->backend == TBM_BACKEND_JACCL && have == 0)
                return tbm_errprintf(c->err, "no cable joins %s and %s in tbmesh.conf, and a JACCL mesh needs every "
                                     "pair cabled: fix the group's Cable= lines (tbmesh inventory writes them), "
                                     "or use --mlx-backend=jaccl-ring", node_name(c, c->plan->order[r]),
                                     node_name(c, c->plan->order[s]));
            if (is_ring(c) && is_neighbour(c, (int)r, (int)s) && have < c->k)
                c->k = have;
        }
    return 0;
}

static int bad_end(ctx_t *c, int cable, int node, const char *what, const char *value)
{
    char label[2 * (TBM_HOSTNAME_MAX + TBM_IFNAME_MAX) + 8];

    cable_label(c, cable, label, sizeof(label));
    if (strcmp(what, "RDMA device") == 0)
        return tbm_errprintf(c->err, "the cable %s gives no valid RDMA device for %s's end (\"%s\"): JACCL needs "
                             "one on both ends; add Rdma=rdma_<if>,rdma_<if> to its Cable= line (tbmesh inventory "
                             "writes it), or use --mlx-backend=ring", label, c->conf->nodes[node].name, value);
    return tbm_errprintf(c->err, "the cable %s gives no valid IPv4 address for %s's end (\"%s\"): %s needs one on "
                         "both ends; add Addr=<a>/30,<b>/30 to its Cable= line (macnode netplan plans them), or "
                         "use --mlx-backend=mpi", label, c->conf->nodes[node].name, value,
                         tbm_backend_name(c->backend));
}

/* What the backend needs of one cable end: an IPv4 address (JACCL and ring), an RDMA device (JACCL). */
static int check_end(ctx_t *c, int cable, int node)
{
    const tbm_conf_end_t *e = end_on(c, cable, node);
    uint32_t ip;

    if (c->backend == TBM_BACKEND_MPI)
        return 0;
    if (is_jaccl(c) && !tbm_iface_name_valid(e->rdma))
        return bad_end(c, cable, node, "RDMA device", e->rdma);
    if (tbm_ipv4_parse(e->ipv4, &ip) < 0)
        return bad_end(c, cable, node, "IPv4 address", e->ipv4);
    return 0;
}

static int check_cables(ctx_t *c)
{
    size_t r, s;
    int i;

    for (r = 0; r < c->n; r++)
        for (s = 0; s < c->n; s++)
            for (i = 0; i < used(c, (int)r, (int)s); i++)
                if (check_end(c, rank_rails(c, (int)r, (int)s)->cable[i], c->cnode[c->plan->order[r]]) < 0)
                    return -1;
    return 0;
}

static int check_ports(ctx_t *c)
{
    const char *key = is_jaccl(c) ? "CoordinatorPort" : "RingBasePort";
    int base = is_jaccl(c) ? c->conf->coordinator_port : c->conf->ring_base_port;
    int last = base + c->offset + (is_jaccl(c) ? 0 : (int)c->n * c->k - 1);
    int limit = PORT_MAX - (TBM_ENVPLAN_PORT_SLOTS - 1) * TBM_ENVPLAN_PORT_WINDOW - (TBM_ENVPLAN_PORT_WINDOW - 1);

    if (c->backend == TBM_BACKEND_MPI)
        return 0;
    if (base < 1 || last > PORT_MAX)
        return tbm_errprintf(c->err, "%s=%d plus this job's port offset %d needs ports up to %d, above %d: set %s "
                             "in tbmesh.conf to %d or less", key, base, c->offset, last, PORT_MAX, key, limit);
    return 0;
}

/* ---- variables and files ---- */

static int add_var(ctx_t *c, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int add_var(ctx_t *c, const char *name, const char *fmt, ...)
{
    tbm_envplan_t *p = c->plan;
    tbm_strbuf_t sb;
    char value[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(value, sizeof(value), fmt, ap);
    va_end(ap);
    if (p->n_vars >= MAX_VARS)
        return tbm_errprintf(c->err, OOM);
    tbm_sb_init(&sb);
    tbm_sb_printf(&sb, "%s", name);
    p->vars[p->n_vars].name = tbm_sb_take(&sb);
    tbm_sb_printf(&sb, "%s", value);
    p->vars[p->n_vars].value = tbm_sb_take(&sb);
    if (!p->vars[p->n_vars].name || !p->vars[p->n_vars].value) {
        free(p->vars[p->n_vars].name);
        free(p->vars[p->n_vars].value);
        return tbm_errprintf(c->err, OOM);
    }
    p->n_vars++;
    return 0;
}

static int add_file(ctx_t *c, const char *name, tbm_strbuf_t *sb, char *path, size_t len)
{
    tbm_envfile_t *f = &c->plan->files[c->plan->n_files];

    snprintf(path, len, "%s/%s", c->job_dir, name);
    f->len = sb->len;
    f->data = tbm_sb_take(sb);
    tbm_sb_printf(sb, "%s", path);
    f->path = tbm_sb_take(sb);
    c->plan->n_files++;
    return f->data && f->path ? 0 : tbm_errprintf(c->err, OOM);
}

/* One matrix cell: null, "dev", or ["dev", ...] (ring mode with several cables). */
static void matrix_cell(const ctx_t *c, tbm_strbuf_t *sb, int r, int s)
{
    int i, n = used(c, r, s), node = c->cnode[c->plan->order[r]];

    if (n == 0) {
        tbm_sb_printf(sb, "null");
        return;
    }
    if (n > 1)
        tbm_sb_append(sb, "[", 1);
    for (i = 0; i < n; i++)
        tbm_sb_printf(sb, "%s\"%s\"", i ? ", " : "", end_on(c, rank_rails(c, r, s)->cable[i], node)->rdma);
    if (n > 1)
        tbm_sb_append(sb, "]", 1);
}

/* The JSON list of n rows, one per line: "[\n  [row 0],\n  [row 1]\n]\n". */
static void json_rows(const ctx_t *c, tbm_strbuf_t *sb, void (*row)(const ctx_t *, tbm_strbuf_t *, int))
{
    size_t r;

    tbm_sb_printf(sb, "[\n");
    for (r = 0; r < c->n; r++) {
        tbm_sb_printf(sb, "  [");
        row(c, sb, (int)r);
        tbm_sb_printf(sb, "]%s\n", r + 1 < c->n ? "," : "");
    }
    tbm_sb_printf(sb, "]\n");
}

static void matrix_row(const ctx_t *c, tbm_strbuf_t *sb, int r)
{
    size_t s;

    for (s = 0; s < c->n; s++) {
        tbm_sb_printf(sb, "%s", s ? ", " : "");
        matrix_cell(c, sb, r, (int)s);
    }
}

/* Rank r listens on its ends of the cables joining rank r-1 and rank r. */
static void hostfile_row(const ctx_t *c, tbm_strbuf_t *sb, int r)
{
    int prev = (r + (int)c->n - 1) % (int)c->n, node = c->cnode[c->plan->order[r]], a;
    int port = c->conf->ring_base_port + c->offset + r * c->k;

    for (a = 0; a < c->k; a++)
        tbm_sb_printf(sb, "%s\"%s:%d\"", a ? ", " : "", end_on(c, rank_rails(c, r, prev)->cable[a], node)->ipv4,
                      port + a);
}

/* Where rank `rank` finds the coordinator (rank 0 binds every address). */
static int coordinator_host(ctx_t *c, int rank, char *buf, size_t len)
{
    const rails_t *r = rank_rails(c, 0, rank);
    int node0 = c->cnode[c->plan->order[0]];
    const tbm_conf_node_t *n0 = &c->conf->nodes[node0];
    uint32_t ip;

    if (rank == 0) {
        snprintf(buf, len, "0.0.0.0");
        return 0;
    }
    if (r->n > 0) {
        if (check_end(c, r->cable[0], node0) < 0)
            return -1;
        snprintf(buf, len, "%s", end_on(c, r->cable[0], node0)->ipv4);
        return 0;
    }
    if (tbm_ipv4_parse(n0->agent_addr, &ip) == 0) {
        snprintf(buf, len, "%s", n0->agent_addr);
        return 0;
    }
    return tbm_errprintf(c->err, "rank %d (%s) has no cable to rank 0 (%s), and %s has no IPv4 AgentAddr, so it "
                         "cannot reach JACCL's coordinator: set NodeName=%s AgentAddr=<its IPv4 management address> "
                         "in tbmesh.conf, or use --mlx-backend=ring", rank, node_name(c, c->plan->order[rank]),
                         n0->name, n0->name, n0->name);
}

static int jaccl_vars(ctx_t *c)
{
    tbm_strbuf_t sb;
    char path[TBM_ENVPLAN_DIR_MAX + 64], host[TBM_HOSTNAME_MAX];
    const char *devvar = c->version == JACCL_DEVICES_ONLY ? "MLX_JACCL_DEVICES" : "MLX_IBV_DEVICES";
    int ring = c->backend == TBM_BACKEND_JACCL_RING, port = c->conf->coordinator_port + c->offset;
    int aliases = c->version < 0 || c->version >= JACCL_ALIASES_FIRST, r;

    for (r = 1; r < (int)c->n; r++)   /* every rank must reach it: a refusal is the same on every rank */
        if (coordinator_host(c, r, host, sizeof(host)) < 0)
            return -1;
    if (coordinator_host(c, c->plan->rank, host, sizeof(host)) < 0)
        return -1;
    tbm_sb_init(&sb);
    json_rows(c, &sb, matrix_row);
    if (add_file(c, TBM_ENVPLAN_DEVICES_FILE, &sb, path, sizeof(path)) < 0)
        return -1;
    if (add_var(c, "MLX_RANK", "%d", c->plan->rank) < 0 || add_var(c, devvar, "%s", path) < 0 ||
        add_var(c, "MLX_JACCL_COORDINATOR", "%s:%d", host, port) < 0 ||
        (ring && add_var(c, "MLX_JACCL_RING", "1") < 0))
        return -1;
    if (!aliases)
        return 0;
    if (add_var(c, "JACCL_RANK", "%d", c->plan->rank) < 0 || add_var(c, "JACCL_IBV_DEVICES", "%s", path) < 0 ||
        add_var(c, "JACCL_COORDINATOR", "%s:%d", host, port) < 0 || (ring && add_var(c, "JACCL_RING", "1") < 0))
        return -1;
    return 0;
}

static int ring_vars(ctx_t *c)
{
    tbm_strbuf_t sb;
    char path[TBM_ENVPLAN_DIR_MAX + 64];

    tbm_sb_init(&sb);
    json_rows(c, &sb, hostfile_row);
    if (add_file(c, TBM_ENVPLAN_HOSTFILE, &sb, path, sizeof(path)) < 0)
        return -1;
    if (add_var(c, "MLX_RANK", "%d", c->plan->rank) < 0 || add_var(c, "MLX_HOSTFILE", "%s", path) < 0)
        return -1;
    return 0;
}

/* Interface names in natural order: "en2" < "en3" < "en10". */
static int by_ifname(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;

    while (*x && *x == *y && !(*x >= '0' && *x <= '9')) {
        x++;
        y++;
    }
    if (*x >= '0' && *x <= '9' && *y >= '0' && *y <= '9') {
        long long nx = 0, ny = 0;
        tbm_parse_ll_span(x, strspn(x, "0123456789"), 10, 0, LLONG_MAX, &nx);
        tbm_parse_ll_span(y, strspn(y, "0123456789"), 10, 0, LLONG_MAX, &ny);
        if (nx != ny)
            return nx < ny ? -1 : 1;
    }
    return strcmp(x, y);
}

/* This node's interfaces on cables to the job's other nodes, in natural order of their names: every rank
 * then lists its interfaces in the same order (Open MPI's TCP transport hangs in the lab when the nodes of
 * a ring list the same names in different orders). */
static int mpi_vars(ctx_t *c)
{
    const char *names[TBM_ENVPLAN_MAX_RANKS * TBM_ENVPLAN_MAX_RAILS];
    int node = c->cnode[c->self], s, k;
    char ifs[TBM_ENVPLAN_MAX_RANKS * TBM_ENVPLAN_MAX_RAILS * TBM_IFNAME_MAX] = "";
    size_t i, n = 0, len = 0;

    for (s = 0; s < (int)c->n; s++)
        for (k = 0; k < rails_of(c, c->self, s)->n; k++)
            names[n++] = end_on(c, rails_of(c, c->self, s)->cable[k], node)->iface;
    qsort(names, n, sizeof(names[0]), by_ifname);
    for (i = 0; i < n; i++)
        len += (size_t)snprintf(ifs + len, sizeof(ifs) - len, "%s%s", i ? "," : "", names[i]);
    if (n == 0)
        return tbm_errprintf(c->err, "node %s has no cable to the job's other nodes in tbmesh.conf, so Open MPI "
                             "has no Thunderbolt interface to use: fix the group's Cable= lines (tbmesh inventory "
                             "writes them)", c->nodes[c->self]);
    if (add_var(c, "OMPI_MCA_btl", "self,tcp") < 0 || add_var(c, "OMPI_MCA_btl_tcp_if_include", "%s", ifs) < 0 ||
        add_var(c, "OMPI_MCA_oob_tcp_if_include", "%s", ifs) < 0 ||
        add_var(c, "MLX_MPI_LIBNAME", "%s", c->libname) < 0)
        return -1;
    return 0;
}

static const char *auto_reason(const ctx_t *c)
{
    switch (c->backend) {
    case TBM_BACKEND_JACCL: return "an RDMA full mesh";
    case TBM_BACKEND_JACCL_RING: return "RDMA, but not a full mesh of at most 8";
    case TBM_BACKEND_RING: return "no usable JACCL";
    default: return "cabled as neither a mesh nor a ring";
    }
}

static int common_vars(ctx_t *c, tbm_backend_t asked)
{
    tbm_envplan_t *p = c->plan;
    size_t r;

    p->backend = c->backend;
    for (r = 0; r < c->n; r++)
        if (p->order[r] == c->self)
            p->rank = (int)r;
    if (asked == TBM_BACKEND_AUTO)
        snprintf(p->note, sizeof(p->note), "tbmesh: group %s, %zu Macs: backend %s (chosen by auto: %s); rank %d",
                 p->group, c->n, tbm_backend_name(c->backend), auto_reason(c), p->rank);
    else
        snprintf(p->note, sizeof(p->note), "tbmesh: group %s, %zu Macs: backend %s (asked for); rank %d", p->group,
                 c->n, tbm_backend_name(c->backend), p->rank);
    if (add_var(c, "TBMESH_BACKEND", "%s", tbm_backend_name(c->backend)) < 0 ||
        add_var(c, "TBMESH_RANK", "%d", p->rank) < 0 || add_var(c, "TBMESH_SIZE", "%zu", c->n) < 0)
        return -1;
    return 0;
}

static int plan_single(ctx_t *c)
{
    tbm_envplan_t *p = c->plan;

    p->order = calloc(1, sizeof(int));
    if (!p->order)
        return tbm_errprintf(c->err, OOM);
    snprintf(p->note, sizeof(p->note), "tbmesh: one Mac (%s in group %s): MLX runs alone; no distributed "
             "variables are set", c->nodes[0], p->group);
    if (add_var(c, "TBMESH_BACKEND", "none") < 0 || add_var(c, "TBMESH_RANK", "0") < 0 ||
        add_var(c, "TBMESH_SIZE", "1") < 0)
        return -1;
    return 0;
}

static int plan_many(ctx_t *c, tbm_backend_t b)
{
    c->rails = calloc(c->n * c->n, sizeof(*c->rails));
    if (!c->rails)
        return tbm_errprintf(c->err, OOM);
    if (choose_backend(c, b) < 0 || collect_rails(c) < 0 || make_order(c) < 0 || check_pairs(c) < 0 ||
        check_cables(c) < 0 || check_ports(c) < 0 || common_vars(c, b) < 0)
        return -1;
    c->plan->distributed = 1;
    if (is_jaccl(c))
        return jaccl_vars(c);
    return c->backend == TBM_BACKEND_RING ? ring_vars(c) : mpi_vars(c);
}

static int plan(ctx_t *c, const char *rank_node, tbm_backend_t b, uint32_t job_id, const tbm_envplan_opts_t *opts)
{
    tbm_envplan_t *p = c->plan;

    if (check_args(c, rank_node, b, job_id, opts) < 0)
        return -1;
    c->cnode = malloc(c->n * sizeof(int));
    p->vars = calloc(MAX_VARS, sizeof(*p->vars));
    p->files = calloc(1, sizeof(*p->files));
    if (!c->cnode || !p->vars || !p->files)
        return tbm_errprintf(c->err, OOM);
    if (index_nodes(c, rank_node) < 0 || one_group(c) < 0)
        return -1;
    snprintf(p->group, sizeof(p->group), "%s", c->group->caps.name);
    p->size = c->n;
    p->backend = b;
    c->backend = b;
    return c->n == 1 ? plan_single(c) : plan_many(c, b);
}

int tbm_envplan_make(const tbm_conf_t *conf, const char *const *nodes, size_t n, const char *rank_node,
                     tbm_backend_t b, uint32_t job_id, const tbm_envplan_opts_t *opts, tbm_envplan_t *out,
                     tbm_err_t *err)
{
    ctx_t c;
    int rc;

    memset(out, 0, sizeof(*out));
    memset(&c, 0, sizeof(c));
    c.conf = conf;
    c.nodes = nodes;
    c.n = n;
    c.plan = out;
    c.err = err;
    rc = plan(&c, rank_node, b, job_id, opts);
    free(c.cnode);
    free(c.rails);
    if (rc < 0)
        tbm_envplan_free(out);
    return rc;
}

void tbm_envplan_free(tbm_envplan_t *p)
{
    size_t i;

    if (!p)
        return;
    for (i = 0; p->vars && i < p->n_vars; i++) {
        free(p->vars[i].name);
        free(p->vars[i].value);
    }
    for (i = 0; p->files && i < p->n_files; i++) {
        free(p->files[i].path);
        free(p->files[i].data);
    }
    free(p->vars);
    free(p->files);
    free(p->order);
    memset(p, 0, sizeof(*p));
}

const char *tbm_envplan_get(const tbm_envplan_t *p, const char *name)
{
    size_t i;

    for (i = 0; i < p->n_vars; i++)
        if (strcmp(p->vars[i].name, name) == 0)
            return p->vars[i].value;
    return NULL;
}
