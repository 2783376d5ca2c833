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

/* The end of the cable on a Mac that `now` left out (its Thunderbolt facts are unknown), or -1. */
static int end_left_out(const tbm_conf_t *c, const tbm_conf_cable_t *cable, const tbm_conf_t *now)
{
    size_t i;
    int e;

    for (e = 0; e < 2; e++)
        for (i = 0; i < now->n_left_out; i++)
            if (strcmp(c->nodes[cable->end[e].node].name, now->left_out[i].name) == 0)
                return e;
    return -1;
}

size_t tbm_cables_diff(const tbm_conf_t *before, const tbm_conf_t *now, tbm_findings_t *fs)
{
    char where[TBM_FINDING_WHERE_MAX];
    size_t i, missing = 0;
    int e;

    for (i = 0; i < before->n_cables; i++) {
        if (has_cable(before, now, &before->cables[i]))
            continue;
        cable_where(before, &before->cables[i], where, sizeof(where));
        if ((e = end_left_out(before, &before->cables[i], now)) >= 0) {
            const char *mac = before->nodes[before->cables[i].end[e].node].name;
            tbm_finding_add(fs, TBM_SEV_INFO, "cable-unchecked", where,
                            "probe that Mac again, then run tbmesh inventory again",
                            "cable %s (in the last tbmesh.conf) is not checked: the Thunderbolt facts of %s are "
                            "unknown", where, mac);
            continue;
        }
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
