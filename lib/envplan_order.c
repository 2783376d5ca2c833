/* envplan_order.c: the rank order of a job. Ranks keep Slurm's order unless the backend needs neighbouring
 * ranks cabled (jaccl-ring, ring) and Slurm's order does not go round the cables: then they follow the
 * cables' cycle (see envplan.h). For such a ring order, how many cables neighbours use (c->k). */
#include "envplan_builder.h"

#include <stdio.h>
#include <stdlib.h>

static int cabled(const envplan_ctx_t *c, int a, int b)
{
    return tbm_envplan_rails(c, a, b)->n > 0;
}

/* True when the job order itself goes round a cabled cycle. */
static int order_is_cycle(const envplan_ctx_t *c)
{
    size_t i;

    for (i = 0; i < c->n; i++)
        if (!cabled(c, (int)i, (int)((i + 1) % c->n)))
            return 0;
    return 1;
}

/* The job nodes cabled to job node a (at most 3 are looked for: more is not a ring). */
static int neighbours(const envplan_ctx_t *c, int a, int nb[3])
{
    size_t i;
    int k = 0;

    for (i = 0; i < c->n && k < 3; i++)
        if ((int)i != a && cabled(c, a, (int)i))
            nb[k++] = (int)i;
    return k;
}

static int not_a_ring(const envplan_ctx_t *c, const char *how)
{
    return tbm_errprintf(c->err, "the cables of group %s in tbmesh.conf do not make one ring through the job's "
                         "Macs: %s: fix the group's Cable= lines (tbmesh inventory writes them)",
                         c->group->caps.name, how);
}

/* Walk the cables' cycle from job node 0, first towards its neighbour that comes first in the job order. */
static int walk_cycle(envplan_ctx_t *c, int *order)
{
    char seen[TBM_ENVPLAN_MAX_RANKS] = {0}, how[2 * TBM_HOSTNAME_MAX + 64];
    int prev = -1, at = 0, nb[3];
    size_t r;

    for (r = 0; r < c->n; r++) {
        int k = neighbours(c, at, nb), next;
        if (k != 2) {
            snprintf(how, sizeof(how), "%s is cabled to %d%s of them, not 2", tbm_envplan_node_name(c, at), k,
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
        snprintf(how, sizeof(how), "going round from %s comes back after %zu of the %zu Macs",
                 tbm_envplan_node_name(c, 0), r, c->n);
        return not_a_ring(c, how);
    }
    return 0;
}

static int order_ranks(envplan_ctx_t *c)
{
    int *order = malloc(c->n * sizeof(int));
    size_t i;

    if (!order)
        return tbm_errprintf(c->err, TBM_ENVPLAN_OOM);
    c->plan->order = order;
    for (i = 0; i < c->n; i++)
        order[i] = (int)i;
    if (!c->builder->ring_order || order_is_cycle(c))
        return 0;
    if (c->n == 2)
        return tbm_errprintf(c->err, "no cable joins %s and %s in tbmesh.conf: fix the group's Cable= lines "
                             "(tbmesh inventory writes them)", tbm_envplan_node_name(c, 0),
                             tbm_envplan_node_name(c, 1));
    return walk_cycle(c, order);
}

static int is_neighbour(const envplan_ctx_t *c, int r, int s)
{
    int n = (int)c->n;

    return r != s && (s == (r + 1) % n || r == (s + 1) % n);
}

int tbm_envplan_neighbour_cables(const envplan_ctx_t *c, int r, int s)
{
    return is_neighbour(c, r, s) ? c->k : 0;
}

/* The fewest cables joining two neighbouring ranks, at most TBM_ENVPLAN_MAX_RAILS. */
static int ring_width(const envplan_ctx_t *c)
{
    size_t r;
    int k = TBM_ENVPLAN_MAX_RAILS;

    for (r = 0; r < c->n; r++) {
        int s = (int)((r + 1) % c->n), have = tbm_envplan_rank_rails(c, (int)r, s)->n;
        if ((int)r != s && have < k)
            k = have;
    }
    return k;
}

int tbm_envplan_make_order(envplan_ctx_t *c)
{
    if (order_ranks(c) < 0)
        return -1;
    c->k = c->builder->ring_order ? ring_width(c) : TBM_ENVPLAN_MAX_RAILS;
    return 0;
}
