/* envplan_mpi.c: the builder of the Open MPI backend: this rank's Thunderbolt interfaces towards the job's
 * other nodes for Open MPI's TCP transport, and MLX's MPI library name; Open MPI numbers the ranks itself
 * (see envplan.h). */
#include "envplan_builder.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalar.h"

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
static int mpi_vars(envplan_ctx_t *c)
{
    const char *names[TBM_ENVPLAN_MAX_RANKS * TBM_ENVPLAN_MAX_RAILS];
    int node = c->cnode[c->self], s, k;
    char ifs[TBM_ENVPLAN_MAX_RANKS * TBM_ENVPLAN_MAX_RAILS * TBM_IFNAME_MAX] = "";
    size_t i, n = 0, len = 0;

    for (s = 0; s < (int)c->n; s++)
        for (k = 0; k < tbm_envplan_rails(c, c->self, s)->n; k++)
            names[n++] = tbm_envplan_end_on(c, tbm_envplan_rails(c, c->self, s)->cable[k], node)->iface;
    qsort(names, n, sizeof(names[0]), by_ifname);
    for (i = 0; i < n; i++)
        len += (size_t)snprintf(ifs + len, sizeof(ifs) - len, "%s%s", i ? "," : "", names[i]);
    if (n == 0)
        return tbm_errprintf(c->err, "node %s has no cable to the job's other nodes in tbmesh.conf, so Open MPI "
                             "has no Thunderbolt interface to use: fix the group's Cable= lines (tbmesh inventory "
                             "writes them)", c->nodes[c->self]);
    if (tbm_envplan_add_var(c, "OMPI_MCA_btl", "self,tcp") < 0 ||
        tbm_envplan_add_var(c, "OMPI_MCA_btl_tcp_if_include", "%s", ifs) < 0 ||
        tbm_envplan_add_var(c, "OMPI_MCA_oob_tcp_if_include", "%s", ifs) < 0 ||
        tbm_envplan_add_var(c, "MLX_MPI_LIBNAME", "%s", c->libname) < 0)
        return -1;
    return 0;
}

/* Every cable between the job's nodes. */
static int all_cables(const envplan_ctx_t *c, int r, int s)
{
    return tbm_envplan_rank_rails(c, r, s)->n;
}

/* No port of its own (Open MPI picks them), nothing asked of the cable ends. */
const envplan_builder_t tbm_envplan_mpi_builder = {
    .cables = all_cables, .vars = mpi_vars,
};
