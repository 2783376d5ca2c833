/* envplan.c: one rank's MLX distributed environment (see envplan.h): the request checked (job folder,
 * nodes, one group), then the steps every backend shares: the backend chosen (envplan_choose.c), the cables
 * and the rank order (envplan_cables.c, envplan_order.c), their checks, the common variables, and the
 * chosen backend's builder (envplan_jaccl.c, envplan_ring.c, envplan_mpi.c). */
#include "envplan_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

#define PORT_MAX 65535

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

static int check_args(envplan_ctx_t *c, const char *rank_node, tbm_backend_t b, uint32_t job_id,
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

static int job_list(const envplan_ctx_t *c, char *buf, size_t len)
{
    char *s = tbm_hostlist_compress((char *const *)c->nodes, c->n);

    snprintf(buf, len, "%s", s ? s : "?");
    free(s);
    return 0;
}

/* Names valid and unique, this node among them, every node in tbmesh.conf. */
static int index_nodes(envplan_ctx_t *c, const char *rank_node)
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

static int one_group(envplan_ctx_t *c)
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

static int check_cables(envplan_ctx_t *c)
{
    size_t r, s;
    int i;

    for (r = 0; r < c->n; r++)
        for (s = 0; s < c->n; s++)
            for (i = 0; i < tbm_envplan_used(c, (int)r, (int)s); i++)
                if (tbm_envplan_check_end(c, tbm_envplan_rank_rails(c, (int)r, (int)s)->cable[i],
                                          c->cnode[c->plan->order[r]]) < 0)
                    return -1;
    return 0;
}

/* The ports of the plan stay at or below 65535. */
static int check_ports(envplan_ctx_t *c)
{
    const char *key;
    int base, last;
    int limit = PORT_MAX - (TBM_ENVPLAN_PORT_SLOTS - 1) * TBM_ENVPLAN_PORT_WINDOW - (TBM_ENVPLAN_PORT_WINDOW - 1);

    if (!c->builder->last_port)
        return 0;
    last = c->builder->last_port(c, &key, &base);
    if (base < 1 || last > PORT_MAX)
        return tbm_errprintf(c->err, "%s=%d plus this job's port offset %d needs ports up to %d, above %d: set %s "
                             "in tbmesh.conf to %d or less", key, base, c->offset, last, PORT_MAX, key, limit);
    return 0;
}

static int common_vars(envplan_ctx_t *c, tbm_backend_t asked)
{
    tbm_envplan_t *p = c->plan;
    size_t r;

    p->backend = c->backend;
    for (r = 0; r < c->n; r++)
        if (p->order[r] == c->self)
            p->rank = (int)r;
    if (asked == TBM_BACKEND_AUTO)
        snprintf(p->note, sizeof(p->note), "tbmesh: group %s, %zu Macs: backend %s (chosen by auto: %s); rank %d",
                 p->group, c->n, tbm_backend_name(c->backend), tbm_envplan_auto_reason(c->backend), p->rank);
    else
        snprintf(p->note, sizeof(p->note), "tbmesh: group %s, %zu Macs%s: backend %s (asked for); rank %d",
                 p->group, c->n, c->on_subset ? " of its RDMA subset" : "", tbm_backend_name(c->backend), p->rank);
    if (tbm_envplan_add_var(c, "TBMESH_BACKEND", "%s", tbm_backend_name(c->backend)) < 0 ||
        tbm_envplan_add_var(c, "TBMESH_RANK", "%d", p->rank) < 0 ||
        tbm_envplan_add_var(c, "TBMESH_SIZE", "%zu", c->n) < 0)
        return -1;
    return 0;
}

static int plan_single(envplan_ctx_t *c)
{
    tbm_envplan_t *p = c->plan;

    p->order = calloc(1, sizeof(int));
    if (!p->order)
        return tbm_errprintf(c->err, TBM_ENVPLAN_OOM);
    snprintf(p->note, sizeof(p->note), "tbmesh: one Mac (%s in group %s): MLX runs alone; no distributed "
             "variables are set", c->nodes[0], p->group);
    if (tbm_envplan_add_var(c, "TBMESH_BACKEND", "none") < 0 || tbm_envplan_add_var(c, "TBMESH_RANK", "0") < 0 ||
        tbm_envplan_add_var(c, "TBMESH_SIZE", "1") < 0)
        return -1;
    return 0;
}

/* One builder per backend, by tbm_backend_t. */
static const envplan_builder_t *const builders[TBM_BACKEND_COUNT] = {
    [TBM_BACKEND_JACCL] = &tbm_envplan_jaccl_builder,
    [TBM_BACKEND_JACCL_RING] = &tbm_envplan_jaccl_ring_builder,
    [TBM_BACKEND_RING] = &tbm_envplan_ring_builder,
    [TBM_BACKEND_MPI] = &tbm_envplan_mpi_builder,
};

static int plan_many(envplan_ctx_t *c, tbm_backend_t b)
{
    c->rails = calloc(c->n * c->n, sizeof(*c->rails));
    if (!c->rails)
        return tbm_errprintf(c->err, TBM_ENVPLAN_OOM);
    if (tbm_envplan_choose_backend(c, b) < 0)
        return -1;
    c->builder = builders[c->backend];
    if (tbm_envplan_collect_rails(c) < 0 || tbm_envplan_make_order(c) < 0 ||
        (c->builder->check && c->builder->check(c) < 0) || check_cables(c) < 0 || check_ports(c) < 0 ||
        common_vars(c, b) < 0)
        return -1;
    c->plan->distributed = 1;
    return c->builder->vars(c);
}

static int plan(envplan_ctx_t *c, const char *rank_node, tbm_backend_t b, uint32_t job_id,
                const tbm_envplan_opts_t *opts)
{
    tbm_envplan_t *p = c->plan;

    if (check_args(c, rank_node, b, job_id, opts) < 0)
        return -1;
    c->cnode = malloc(c->n * sizeof(int));
    p->vars = calloc(TBM_ENVPLAN_MAX_VARS, sizeof(*p->vars));
    p->files = calloc(1, sizeof(*p->files));
    if (!c->cnode || !p->vars || !p->files)
        return tbm_errprintf(c->err, TBM_ENVPLAN_OOM);
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
    envplan_ctx_t c;
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

