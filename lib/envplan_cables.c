/* envplan_cables.c: the cables between a job's nodes, by pair in tbmesh.conf order, how many of them the
 * chosen backend uses, and what it needs of their ends (an IPv4 address, an RDMA device). */
#include "envplan_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalar.h"

static envplan_rails_t *rails_of(const envplan_ctx_t *c, int a, int b)
{
    return &c->rails[(size_t)a * c->n + (size_t)b];
}

const envplan_rails_t *tbm_envplan_rails(const envplan_ctx_t *c, int a, int b)
{
    return rails_of(c, a, b);
}

const envplan_rails_t *tbm_envplan_rank_rails(const envplan_ctx_t *c, int r, int s)
{
    return rails_of(c, c->plan->order[r], c->plan->order[s]);
}

int tbm_envplan_collect_rails(envplan_ctx_t *c)
{
    int *pos = malloc((c->conf->n_nodes ? c->conf->n_nodes : 1) * sizeof(int));
    size_t i;

    if (!pos)
        return tbm_errprintf(c->err, TBM_ENVPLAN_OOM);
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
            envplan_rails_t *r = e ? rails_of(c, b, a) : rails_of(c, a, b);
            if (r->n < TBM_ENVPLAN_MAX_RAILS)
                r->cable[r->n++] = (int)i;
        }
    }
    free(pos);
    return 0;
}

int tbm_envplan_used(const envplan_ctx_t *c, int r, int s)
{
    return r == s ? 0 : c->builder->cables(c, r, s);
}

const tbm_conf_end_t *tbm_envplan_end_on(const envplan_ctx_t *c, int cable, int node)
{
    const tbm_conf_cable_t *cb = &c->conf->cables[cable];

    return cb->end[0].node == node ? &cb->end[0] : &cb->end[1];
}

static void cable_label(const envplan_ctx_t *c, int cable, char *buf, size_t len)
{
    const tbm_conf_cable_t *cb = &c->conf->cables[cable];

    snprintf(buf, len, "%s:%s <-> %s:%s", c->conf->nodes[cb->end[0].node].name, cb->end[0].iface,
             c->conf->nodes[cb->end[1].node].name, cb->end[1].iface);
}

static int bad_end(envplan_ctx_t *c, int cable, int node, int rdma, const char *value)
{
    char label[2 * (TBM_HOSTNAME_MAX + TBM_IFNAME_MAX) + 8];

    cable_label(c, cable, label, sizeof(label));
    if (rdma)
        return tbm_errprintf(c->err, "the cable %s gives no valid RDMA device for %s's end (\"%s\"): JACCL needs "
                             "one on both ends; add Rdma=rdma_<if>,rdma_<if> to its Cable= line (tbmesh inventory "
                             "writes it), or use --mlx-backend=ring", label, c->conf->nodes[node].name, value);
    return tbm_errprintf(c->err, "the cable %s gives no valid IPv4 address for %s's end (\"%s\"): %s needs one on "
                         "both ends; add Addr=<a>/30,<b>/30 to its Cable= line (macnode netplan plans them), or "
                         "use --mlx-backend=mpi", label, c->conf->nodes[node].name, value,
                         tbm_backend_name(c->backend));
}

int tbm_envplan_check_end(envplan_ctx_t *c, int cable, int node)
{
    const tbm_conf_end_t *e = tbm_envplan_end_on(c, cable, node);
    uint32_t ip;

    if (c->builder->needs_rdma && !tbm_iface_name_valid(e->rdma))
        return bad_end(c, cable, node, 1, e->rdma);
    if (c->builder->needs_ipv4 && tbm_ipv4_parse(e->ipv4, &ip) < 0)
        return bad_end(c, cable, node, 0, e->ipv4);
    return 0;
}
