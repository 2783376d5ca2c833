/* envplan_ring.c: the builder of MLX's ring backend (TCP over the Thunderbolt links between neighbouring
 * ranks): the hostfile, where rank r listens on its ends of the cables joining rank r-1 and rank r, at
 * RingBasePort plus the job's offset (see envplan.h). */
#include "envplan_builder.h"

#include <stdio.h>

/* Rank r listens on its ends of the cables joining rank r-1 and rank r. */
static void hostfile_row(const envplan_ctx_t *c, tbm_strbuf_t *sb, int r)
{
    int prev = (r + (int)c->n - 1) % (int)c->n, node = c->cnode[c->plan->order[r]], a;
    int port = c->conf->ring_base_port + c->offset + r * c->k;

    for (a = 0; a < c->k; a++)
        tbm_sb_printf(sb, "%s\"%s:%d\"", a ? ", " : "",
                      tbm_envplan_end_on(c, tbm_envplan_rank_rails(c, r, prev)->cable[a], node)->ipv4, port + a);
}

static int ring_vars(envplan_ctx_t *c)
{
    tbm_strbuf_t sb;
    char path[TBM_ENVPLAN_DIR_MAX + 64];

    tbm_sb_init(&sb);
    tbm_envplan_json_rows(c, &sb, hostfile_row);
    if (tbm_envplan_add_file(c, TBM_ENVPLAN_HOSTFILE, &sb, path, sizeof(path)) < 0)
        return -1;
    if (tbm_envplan_add_var(c, "MLX_RANK", "%d", c->plan->rank) < 0 ||
        tbm_envplan_add_var(c, "MLX_HOSTFILE", "%s", path) < 0)
        return -1;
    return 0;
}

/* Rank r's a-th address listens at RingBasePort + offset + r*k + a. */
static int last_ring_port(const envplan_ctx_t *c, const char **key, int *base)
{
    *key = "RingBasePort";
    *base = c->conf->ring_base_port;
    return *base + c->offset + (int)c->n * c->k - 1;
}

const envplan_builder_t tbm_envplan_ring_builder = {
    .ring_order = 1, .needs_ipv4 = 1, .cables = tbm_envplan_neighbour_cables, .last_port = last_ring_port,
    .vars = ring_vars,
};
