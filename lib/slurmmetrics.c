/* slurmmetrics.c: the exposition of `tbmesh metrics`: what Slurm knows of the Macs and their groups, and the
 * health check's last verdicts (see slurmmetrics.h). */
#include "slurmmetrics.h"
#include "metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[TBM_MAC_CLASSES] = { "up", "drained", "down", "allocated" };

tbm_mac_class_t tbm_mac_class(const tbm_slurm_node_t *n)
{
    if (!n || n->not_responding || !strcmp(n->state, "down") || !strcmp(n->state, "future") ||
        !strcmp(n->state, "unknown") || !strcmp(n->state, "error"))
        return TBM_MAC_DOWN;
    if (n->drain)
        return TBM_MAC_DRAINED;
    if (!strcmp(n->state, "allocated") || !strcmp(n->state, "mixed"))
        return TBM_MAC_ALLOCATED;
    return TBM_MAC_UP;
}

const char *tbm_mac_class_name(tbm_mac_class_t c)
{
    return (unsigned)c < TBM_MAC_CLASSES ? class_names[c] : "down";
}

static const struct {
    const char *name, *help;
} families[] = {
    { "tbmesh_exporter_info", "tbmesh metrics itself: 1, with its version and Slurm's cluster" },
    { "tbmesh_slurm_up", "1 when Slurm answered at the last reading (scontrol show node, and squeue unless --no-jobs)" },
    { "tbmesh_mac_state", "1 for the Mac's base state in Slurm (idle, allocated, mixed, down, ...; absent: Slurm does "
                          "not know it)" },
    { "tbmesh_mac_drained", "1 when Slurm has the Mac drained or draining" },
    { "tbmesh_mac_drain_info", "1 for a drained Mac, with Slurm's reason" },
    { "tbmesh_health_ok", "the health check's last verdict on the Mac: 1 well, 0 not (or no facts)" },
    { "tbmesh_health_check_time_seconds", "when the health check's last verdict was made (Unix time)" },
    { "tbmesh_group_macs", "Macs of the group by state: up, drained, down, allocated (each Mac in one)" },
    { "tbmesh_group_jobs_running", "running jobs on the group's Macs" },
    { "tbmesh_job_records_missing", "Mac jobs that ran and ended (in the window read) without a complete record in "
                                    "the store: tbmesh repro sync fills them in" },
};

typedef struct out {
    tbm_metrics_t *m;
    tbm_err_t *err;
    int failed;
} out_t;

static void add(out_t *o, const char *name, const tbm_label_t *l, size_t n, double value)
{
    if (!o->failed && tbm_metrics_add(o->m, name, l, n, value, o->err) < 0)
        o->failed = 1;
}

/* The series of Mac i: Slurm's view (when a reading is shown) and the last verdict. */
static void mac_series(out_t *o, const tbm_exporter_view_t *v, size_t i, int *classes)
{
    const tbm_conf_node_t *cn = &v->conf->nodes[i];
    const char *group = v->conf->groups[cn->group].caps.name;
    const tbm_slurm_node_t *sn;
    const tbm_health_verdict_t *hv = v->verdicts ? v->verdicts[i] : NULL;
    tbm_label_t l[3] = { { "node", cn->name }, { "group", group }, { NULL, NULL } };

    if (v->nodes) {
        sn = tbm_slurm_nodes_find(v->nodes, cn->name);
        classes[tbm_mac_class(sn)]++;
        l[2] = (tbm_label_t){ "state", sn && sn->state[0] ? sn->state : TBM_MAC_STATE_ABSENT };
        add(o, "tbmesh_mac_state", l, 3, 1);
        if (sn) {
            add(o, "tbmesh_mac_drained", l, 2, sn->drain);
            l[2] = (tbm_label_t){ "reason", sn->reason };
            if (sn->drain)
                add(o, "tbmesh_mac_drain_info", l, 3, 1);
        }
    }
    if (hv) {
        add(o, "tbmesh_health_ok", l, 2, hv->verdict == TBM_HEALTH_WELL);
        add(o, "tbmesh_health_check_time_seconds", l, 2, (double)hv->time);
    }
}

/* Running jobs with a node in each group, into count[n_groups] (a job on two groups counts in both). */
static void jobs_per_group(const tbm_conf_t *c, const tbm_slurm_jobs_t *js, size_t *count, unsigned char *seen)
{
    size_t j, k;
    int n;

    for (j = 0; j < js->n; j++) {
        memset(seen, 0, c->n_groups);
        for (k = 0; k < js->v[j].n_nodes; k++)
            if ((n = tbm_conf_node(c, js->v[j].nodes[k])) >= 0 && !seen[c->nodes[n].group]) {
                seen[c->nodes[n].group] = 1;
                count[c->nodes[n].group]++;
            }
    }
}

char *tbm_exporter_text(const tbm_exporter_view_t *v, tbm_err_t *err)
{
    const tbm_conf_t *c = v->conf;
    out_t o = { tbm_metrics_new(c->n_nodes * 6 + c->n_groups * 6 + 8), err, 0 };
    tbm_label_t info[2] = { { "cluster", v->cluster ? v->cluster : "" }, { "version", v->version } }, gl[2];
    int *classes = calloc(c->n_groups * TBM_MAC_CLASSES + 1, sizeof(*classes));
    size_t *jobs = calloc(c->n_groups + 1, sizeof(*jobs)), i, f;
    unsigned char *seen = calloc(c->n_groups + 1, 1);
    char *text = NULL;
    int k;

    if (!o.m || !classes || !jobs || !seen) {
        tbm_errprintf(err, c->n_nodes * 6 + c->n_groups * 6 + 8 > TBM_METRICS_SERIES_LIMIT
                               ? "tbmesh.conf has more Macs than one exposition holds" : "out of memory");
        goto out;
    }
    for (f = 0; f < sizeof(families) / sizeof(families[0]) && !o.failed; f++)
        o.failed = tbm_metrics_family(o.m, families[f].name, TBM_METRIC_GAUGE, families[f].help, err) < 0;
    add(&o, "tbmesh_exporter_info", info, 2, 1);
    add(&o, "tbmesh_slurm_up", NULL, 0, v->slurm_up ? 1 : 0);
    if (v->nodes && v->jobs)
        jobs_per_group(c, v->jobs, jobs, seen);
    for (i = 0; i < c->n_nodes; i++)
        mac_series(&o, v, i, classes + c->nodes[i].group * TBM_MAC_CLASSES);
    for (i = 0; i < c->n_groups && v->nodes; i++) {
        gl[0] = (tbm_label_t){ "group", c->groups[i].caps.name };
        for (k = 0; k < TBM_MAC_CLASSES; k++) {
            gl[1] = (tbm_label_t){ "state", class_names[k] };
            add(&o, "tbmesh_group_macs", gl, 2, classes[i * TBM_MAC_CLASSES + (size_t)k]);
        }
        if (v->jobs)
            add(&o, "tbmesh_group_jobs_running", gl, 1, (double)jobs[i]);
    }
    if (v->records_missing >= 0)
        add(&o, "tbmesh_job_records_missing", NULL, 0, (double)v->records_missing);
    if (!o.failed)
        text = tbm_metrics_text(o.m, err);
out:
    free(classes);
    free(jobs);
    free(seen);
    tbm_metrics_free(o.m);
    return text;
}
