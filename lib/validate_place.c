/* validate_place.c: the names of backends and links, group names and features, and the placement question:
 * can a group run a backend on N Macs? (see validate.h) */
#include "validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIT(b) TBM_BACKEND_BIT(b)

static const char *const backend_names[] = {"jaccl", "jaccl-ring", "ring", "mpi", "auto"};
static const char *const link_names[] = {"none", "tb4", "tb5"};

static int parse_name(const char *s, const char *const *names, int n)
{
    int i;

    for (i = 0; s && i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

const char *tbm_backend_name(tbm_backend_t b)
{
    return (unsigned)b <= TBM_BACKEND_AUTO ? backend_names[b] : "unknown";
}

/* The names of backends first..last of the table, separated by ", ", the last after `last_sep`. */
static const char *names_text(char *buf, size_t len, int first, int last, const char *last_sep)
{
    size_t used = 0;
    int b;

    buf[0] = '\0';
    for (b = first; b <= last && used < len; b++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", b == first ? "" : b == last ? last_sep : ", ",
                                 backend_names[b]);
    return buf;
}

const char *tbm_backend_choices(char *buf, size_t len)
{
    char rest[TBM_BACKEND_CHOICES_MAX];

    snprintf(buf, len, "%s, %s", backend_names[TBM_BACKEND_AUTO],
             names_text(rest, sizeof(rest), 0, TBM_BACKEND_COUNT - 1, " or "));
    return buf;
}

const char *tbm_backends_choices(char *buf, size_t len)
{
    char list[TBM_BACKEND_CHOICES_MAX];

    snprintf(buf, len, "%s (comma-separated) or none", names_text(list, sizeof(list), 0, TBM_BACKEND_COUNT - 1, ", "));
    return buf;
}

int tbm_backend_parse(const char *s, tbm_backend_t *b, tbm_err_t *err)
{
    char choices[TBM_BACKEND_CHOICES_MAX];
    int i = parse_name(s, backend_names, TBM_BACKEND_AUTO + 1);

    if (i < 0)
        return tbm_errprintf(err, "%.40s is unknown: use %s", s ? s : "",
                             tbm_backend_choices(choices, sizeof(choices)));
    *b = (tbm_backend_t)i;
    return 0;
}

const char *tbm_link_name(tbm_link_t l)
{
    return (unsigned)l <= TBM_LINK_TB5 ? link_names[l] : "unknown";
}

int tbm_link_parse(const char *s, tbm_link_t *l)
{
    int i = parse_name(s, link_names, 3);

    if (i < 0)
        return -1;
    *l = (tbm_link_t)i;
    return 0;
}

void tbm_backends_format(unsigned mask, char *buf, size_t len)
{
    size_t used = 0;
    int b;

    buf[0] = '\0';
    for (b = 0; b < TBM_BACKEND_COUNT; b++)
        if ((mask & BIT(b)) && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "", backend_names[b]);
    if (!used)
        snprintf(buf, len, "none");
}

int tbm_backends_parse(const char *s, unsigned *mask, tbm_err_t *err)
{
    char word[16], choices[TBM_BACKEND_CHOICES_MAX];
    const char *p = s;

    *mask = 0;
    if (strcmp(s, "none") == 0)
        return 0;
    for (;;) {
        size_t n = strcspn(p, ",");
        int b;
        snprintf(word, sizeof(word), "%.*s", (int)(n < sizeof(word) ? n : sizeof(word) - 1), p);
        b = n < sizeof(word) ? parse_name(word, backend_names, TBM_BACKEND_COUNT) : -1;
        if (b < 0)
            return tbm_errprintf(err, "'%.*s' is not a backend: use %s", (int)(n > 40 ? 40 : n), p,
                                 tbm_backends_choices(choices, sizeof(choices)));
        *mask |= BIT(b);
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

int tbm_group_name_valid(const char *name)
{
    size_t i;

    if (!name || !(name[0] >= 'a' && name[0] <= 'z'))
        return 0;
    for (i = 1; name[i]; i++)
        if (i >= TBM_GROUP_NAME_MAX - 1 ||
            !((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_' ||
              name[i] == '-'))
            return 0;
    return 1;
}

static void feature(const char *prefix, const char *group, char *buf, size_t len)
{
    size_t i;

    snprintf(buf, len, "%s%s", prefix, group);
    for (i = 0; buf[i]; i++)
        if (buf[i] == '-')
            buf[i] = '_';
}

void tbm_group_feature(const char *group, char *buf, size_t len)
{
    feature("tbmesh_", group, buf, len);
}

void tbm_group_rdma_feature(const char *group, char *buf, size_t len)
{
    feature("tbmesh_rdma_", group, buf, len);
}

/* ---- placement ---- */

/* Why backend b is not in the group's usable set. */
static int unusable(const tbm_group_caps_t *g, tbm_backend_t b, tbm_err_t *why)
{
    const char *name = tbm_backend_name(b);

    if (b != TBM_BACKEND_MPI && g->topology != TBM_TOPO_MESH && g->topology != TBM_TOPO_RING)
        return tbm_errprintf(why, "group %s is cabled as neither a full mesh nor a ring (%s): %s needs one; "
                             "use --mlx-backend=mpi", g->name, tbm_topo_class_name(g->topology), name);
    if (b == TBM_BACKEND_JACCL && g->topology != TBM_TOPO_MESH)
        return tbm_errprintf(why, "group %s is a ring, not a full mesh: JACCL mesh needs every pair of Macs "
                             "cabled; use --mlx-backend=jaccl-ring or ring", g->name);
    if ((TBM_BACKENDS_RDMA & BIT(b)) && !g->rdma)
        return tbm_errprintf(why, "group %s has no working RDMA (JACCL needs Thunderbolt 5 and RDMA devices "
                             "on both ends of every cable): use --mlx-backend=ring or mpi", g->name);
    return tbm_errprintf(why, "tbmesh inventory found problems that rule out %s on group %s: see its "
                         "report, or choose another --mlx-backend", name, g->name);
}

static int part_of_whole(const tbm_group_caps_t *g, tbm_backend_t b, size_t nnodes, tbm_err_t *why)
{
    if (g->topology == TBM_TOPO_MESH || nnodes == g->n_nodes)
        return 1;
    if (b == TBM_BACKEND_MPI && nnodes == 1)
        return 1;
    if (g->topology == TBM_TOPO_RING)
        tbm_errprintf(why, "group %s is a ring of %zu Macs; a job on it must use all %zu (part of a ring is not "
                      "a ring): ask for tbmesh:%zu", g->name, g->n_nodes, g->n_nodes, g->n_nodes);
    else
        tbm_errprintf(why, "group %s is neither a full mesh nor a ring; only all %zu of its Macs are sure to be "
                      "connected: ask for tbmesh:%zu", g->name, g->n_nodes, g->n_nodes);
    return 0;
}

static int supports_one(const tbm_group_caps_t *g, tbm_backend_t b, size_t nnodes, tbm_err_t *why)
{
    if (!(g->backends & BIT(b))) {
        unusable(g, b, why);
        return 0;
    }
    if (b == TBM_BACKEND_JACCL && nnodes > TBM_JACCL_MESH_MAX) {
        tbm_errprintf(why, "a JACCL mesh has at most %d Macs; you asked for %zu: use --mlx-backend=jaccl-ring "
                      "or ring", TBM_JACCL_MESH_MAX, nnodes);
        return 0;
    }
    return part_of_whole(g, b, nnodes, why);
}

int tbm_group_supports(const tbm_group_caps_t *g, tbm_backend_t b, size_t nnodes, tbm_err_t *why)
{
    char choices[TBM_BACKEND_CHOICES_MAX];
    int i;

    if (nnodes == 0)
        return tbm_errprintf(why, "ask for at least one Mac (tbmesh:N with N >= 1)"), 0;
    if (nnodes > g->n_nodes)
        return tbm_errprintf(why, "group %s has %zu Macs; you asked for %zu: ask for %zu or fewer", g->name,
                             g->n_nodes, nnodes, g->n_nodes), 0;
    if ((unsigned)b > TBM_BACKEND_AUTO)
        return tbm_errprintf(why, "unknown backend: use %s", tbm_backend_choices(choices, sizeof(choices))), 0;
    if (b != TBM_BACKEND_AUTO)
        return supports_one(g, b, nnodes, why);
    for (i = 0; i < TBM_BACKEND_COUNT; i++)
        if (supports_one(g, (tbm_backend_t)i, nnodes, why)) {
            tbm_errclear(why);
            return 1;
        }
    return 0;
}
