/* envplan_choose.c: which backend a job runs: auto resolved to the first the group and the MLX version
 * allow, or the one asked for checked against both (see envplan.h). */
#include "envplan_builder.h"

#include <stdio.h>

/* 0 when the MLX version can run backend b; else -1 with the message. */
static int version_allows(envplan_ctx_t *c, tbm_backend_t b, tbm_err_t *err)
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

/* The RdmaSubset= rules for jaccl or jaccl-ring asked for by name, when the group cannot run it whole and the
 * site allows the subset: into sub, with 1 when every Mac of the job is in the subset. */
static int subset_caps(envplan_ctx_t *c, tbm_backend_t b, tbm_group_caps_t *sub)
{
    size_t i;

    if ((b != TBM_BACKEND_JACCL && b != TBM_BACKEND_JACCL_RING) ||
        tbm_group_supports(&c->group->caps, b, c->n, NULL) || !tbm_conf_rdma_subset_caps(c->conf, c->group, sub))
        return 0;
    for (i = 0; i < c->n; i++)
        if (!c->conf->nodes[c->cnode[i]].rdma_subset)
            return 0;
    return 1;
}

int tbm_envplan_choose_backend(envplan_ctx_t *c, tbm_backend_t b)
{
    tbm_group_caps_t sub;
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
    c->on_subset = subset_caps(c, b, &sub);
    if (!tbm_group_supports(c->on_subset ? &sub : &c->group->caps, b, c->n, &why))
        return tbm_errprintf(c->err, "backend %s on %zu Macs of group %s: %s", tbm_backend_name(b), c->n,
                             c->group->caps.name, why.msg);
    c->backend = b;
    return version_allows(c, b, c->err);
}

const char *tbm_envplan_auto_reason(tbm_backend_t b)
{
    switch (b) {
    case TBM_BACKEND_JACCL: return "an RDMA full mesh";
    case TBM_BACKEND_JACCL_RING: return "RDMA, but not a full mesh of at most 8";
    case TBM_BACKEND_RING: return "no usable JACCL";
    default: return "cabled as neither a mesh nor a ring";
    }
}
