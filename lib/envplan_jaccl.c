/* envplan_jaccl.c: the builders of the JACCL backends, jaccl (a full RDMA mesh, one cable per pair) and
 * jaccl-ring (RDMA between neighbouring ranks, up to 4 cables each): the device matrix file, the
 * coordinator's address and the MLX_/JACCL_ variables of the MLX version (see envplan.h). */
#include "envplan_builder.h"

#include <stdio.h>

#include "scalar.h"

/* One matrix cell: null, "dev", or ["dev", ...] (ring mode with several cables). */
static void matrix_cell(const envplan_ctx_t *c, tbm_strbuf_t *sb, int r, int s)
{
    int i, n = tbm_envplan_used(c, r, s), node = c->cnode[c->plan->order[r]];

    if (n == 0) {
        tbm_sb_printf(sb, "null");
        return;
    }
    if (n > 1)
        tbm_sb_append(sb, "[", 1);
    for (i = 0; i < n; i++)
        tbm_sb_printf(sb, "%s\"%s\"", i ? ", " : "",
                      tbm_envplan_end_on(c, tbm_envplan_rank_rails(c, r, s)->cable[i], node)->rdma);
    if (n > 1)
        tbm_sb_append(sb, "]", 1);
}

static void matrix_row(const envplan_ctx_t *c, tbm_strbuf_t *sb, int r)
{
    size_t s;

    for (s = 0; s < c->n; s++) {
        tbm_sb_printf(sb, "%s", s ? ", " : "");
        matrix_cell(c, sb, r, (int)s);
    }
}

/* Where rank `rank` finds the coordinator (rank 0 binds every address). */
static int coordinator_host(envplan_ctx_t *c, int rank, char *buf, size_t len)
{
    const envplan_rails_t *r = tbm_envplan_rank_rails(c, 0, rank);
    int node0 = c->cnode[c->plan->order[0]];
    const tbm_conf_node_t *n0 = &c->conf->nodes[node0];
    uint32_t ip;

    if (rank == 0) {
        snprintf(buf, len, "0.0.0.0");
        return 0;
    }
    if (r->n > 0) {
        if (tbm_envplan_check_end(c, r->cable[0], node0) < 0)
            return -1;
        snprintf(buf, len, "%s", tbm_envplan_end_on(c, r->cable[0], node0)->ipv4);
        return 0;
    }
    if (tbm_ipv4_parse(n0->agent_addr, &ip) == 0) {
        snprintf(buf, len, "%s", n0->agent_addr);
        return 0;
    }
    return tbm_errprintf(c->err, "rank %d (%s) has no cable to rank 0 (%s), and %s has no IPv4 AgentAddr, so it "
                         "cannot reach JACCL's coordinator: set NodeName=%s AgentAddr=<its IPv4 management address> "
                         "in tbmesh.conf, or use --mlx-backend=ring", rank,
                         tbm_envplan_node_name(c, c->plan->order[rank]), n0->name, n0->name, n0->name);
}

static int jaccl_vars(envplan_ctx_t *c)
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
    tbm_envplan_json_rows(c, &sb, matrix_row);
    if (tbm_envplan_add_file(c, TBM_ENVPLAN_DEVICES_FILE, &sb, path, sizeof(path)) < 0)
        return -1;
    if (tbm_envplan_add_var(c, "MLX_RANK", "%d", c->plan->rank) < 0 ||
        tbm_envplan_add_var(c, devvar, "%s", path) < 0 ||
        tbm_envplan_add_var(c, "MLX_JACCL_COORDINATOR", "%s:%d", host, port) < 0 ||
        (ring && tbm_envplan_add_var(c, "MLX_JACCL_RING", "1") < 0))
        return -1;
    if (!aliases)
        return 0;
    if (tbm_envplan_add_var(c, "JACCL_RANK", "%d", c->plan->rank) < 0 ||
        tbm_envplan_add_var(c, "JACCL_IBV_DEVICES", "%s", path) < 0 ||
        tbm_envplan_add_var(c, "JACCL_COORDINATOR", "%s:%d", host, port) < 0 ||
        (ring && tbm_envplan_add_var(c, "JACCL_RING", "1") < 0))
        return -1;
    return 0;
}

/* A JACCL mesh needs every pair of ranks cabled. */
static int check_mesh(envplan_ctx_t *c)
{
    size_t r, s;

    for (r = 0; r < c->n; r++)
        for (s = r + 1; s < c->n; s++)
            if (tbm_envplan_rank_rails(c, (int)r, (int)s)->n == 0)
                return tbm_errprintf(c->err, "no cable joins %s and %s in tbmesh.conf, and a JACCL mesh needs "
                                     "every pair cabled: fix the group's Cable= lines (tbmesh inventory writes "
                                     "them), or use --mlx-backend=jaccl-ring",
                                     tbm_envplan_node_name(c, c->plan->order[r]),
                                     tbm_envplan_node_name(c, c->plan->order[s]));
    return 0;
}

/* In a mesh, the first cable of every pair. */
static int mesh_cables(const envplan_ctx_t *c, int r, int s)
{
    (void)c;
    (void)r;
    (void)s;
    return 1;
}

/* Rank 0 listens at CoordinatorPort plus the job's offset. */
static int coordinator_port(const envplan_ctx_t *c, const char **key, int *base)
{
    *key = "CoordinatorPort";
    *base = c->conf->coordinator_port;
    return *base + c->offset;
}

const envplan_builder_t tbm_envplan_jaccl_builder = {
    .needs_rdma = 1, .needs_ipv4 = 1, .cables = mesh_cables, .check = check_mesh, .last_port = coordinator_port,
    .vars = jaccl_vars,
};

const envplan_builder_t tbm_envplan_jaccl_ring_builder = {
    .ring_order = 1, .needs_rdma = 1, .needs_ipv4 = 1, .cables = tbm_envplan_neighbour_cables,
    .last_port = coordinator_port, .vars = jaccl_vars,
};
