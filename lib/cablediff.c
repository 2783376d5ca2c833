/* cablediff.c: cables of the last tbmesh.conf against the cables seen now (see cablediff.h). */
#include "cablediff.h"

#include <stdio.h>
#include <string.h>

static void end_label(const tbm_conf_t *c, const tbm_conf_end_t *e, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%s", c->nodes[e->node].name, e->iface);
}

static int same_end(const tbm_conf_t *a, const tbm_conf_end_t *ea, const tbm_conf_t *b, const tbm_conf_end_t *eb)
{
    return strcmp(a->nodes[ea->node].name, b->nodes[eb->node].name) == 0 && strcmp(ea->iface, eb->iface) == 0;
}

static int has_cable(const tbm_conf_t *c, const tbm_conf_t *in, const tbm_conf_cable_t *cable)
{
    size_t i;

    for (i = 0; i < in->n_cables; i++) {
        const tbm_conf_end_t *e = in->cables[i].end;
        if ((same_end(c, &cable->end[0], in, &e[0]) && same_end(c, &cable->end[1], in, &e[1])) ||
            (same_end(c, &cable->end[0], in, &e[1]) && same_end(c, &cable->end[1], in, &e[0])))
            return 1;
    }
    return 0;
}

static void cable_where(const tbm_conf_t *c, const tbm_conf_cable_t *cable, char *buf, size_t len)
{
    char a[TBM_HOSTNAME_MAX + TBM_IFNAME_MAX + 2], b[sizeof(a)];

    end_label(c, &cable->end[0], a, sizeof(a));
    end_label(c, &cable->end[1], b, sizeof(b));
    snprintf(buf, len, "%.75s <-> %.75s", a, b);
}

size_t tbm_cables_diff(const tbm_conf_t *before, const tbm_conf_t *now, tbm_findings_t *fs)
{
    char where[TBM_FINDING_WHERE_MAX];
    size_t i, missing = 0;

    for (i = 0; i < before->n_cables; i++) {
        if (has_cable(before, now, &before->cables[i]))
            continue;
        cable_where(before, &before->cables[i], where, sizeof(where));
        tbm_finding_add(fs, TBM_SEV_ERROR, "cable-missing", where,
                        "reseat or replace this cable, or check that both Macs are up; if it was moved on "
                        "purpose, the new tbmesh.conf written now records the change",
                        "cable %s (in the last tbmesh.conf) is seen from neither end", where);
        missing++;
    }
    for (i = 0; i < now->n_cables; i++) {
        if (has_cable(now, before, &now->cables[i]))
            continue;
        cable_where(now, &now->cables[i], where, sizeof(where));
        tbm_finding_add(fs, TBM_SEV_INFO, "cable-new", where, "nothing to do if it was cabled on purpose",
                        "cable %s is not in the last tbmesh.conf", where);
    }
    return missing;
}
