/* slurmmetrics.h: the exposition `tbmesh metrics` serves (doc/METRICS.md, "what Slurm knows"): each Mac of
 * tbmesh.conf as Slurm has it (base state, drained, drain reason), the health check's last verdict on it,
 * each group's Macs by state and its running jobs, the Mac jobs that ended without a complete record, whether
 * Slurm answered, and the exporter itself. Data in
 * (tbmesh.conf, scontrol's nodes and squeue's jobs read by lib/slurmstate.c, the verdict files read by
 * lib/health_verdict.c), text out. */
#ifndef TBM_SLURMMETRICS_H
#define TBM_SLURMMETRICS_H

#include "conf.h"
#include "errbuf.h"
#include "health.h"
#include "slurmstate.h"

/* How a Mac counts in its group's tbmesh_group_macs (each Mac in one class, so the four add up to the group's
 * size): down (its base state down, future, unknown or error; not responding; or Slurm does not know it),
 * else drained (drained or draining), else allocated (allocated or mixed), else up. */
typedef enum tbm_mac_class {
    TBM_MAC_UP = 0,
    TBM_MAC_DRAINED,
    TBM_MAC_DOWN,
    TBM_MAC_ALLOCATED,
    TBM_MAC_CLASSES
} tbm_mac_class_t;

/* n: the Mac as Slurm has it, NULL when Slurm does not know it. */
tbm_mac_class_t tbm_mac_class(const tbm_slurm_node_t *n);

/* "up", "drained", "down", "allocated": the state label of tbmesh_group_macs. */
const char *tbm_mac_class_name(tbm_mac_class_t c);

/* The base state a Mac's tbmesh_mac_state carries when Slurm does not know it. */
#define TBM_MAC_STATE_ABSENT "absent"

typedef struct tbm_exporter_view {
    const tbm_conf_t *conf;            /* the Macs and their groups */
    const char *version;               /* tbmesh_exporter_info's labels */
    const char *cluster;               /* "" when not known */
    int slurm_up;                      /* Slurm answered at the last reading */
    const tbm_slurm_nodes_t *nodes;    /* the Slurm reading shown; NULL: none recent enough (no Mac or group
                                        * series from Slurm then) */
    const tbm_slurm_jobs_t *jobs;      /* its running jobs; NULL: not read (--no-jobs, or squeue failed) */
    const tbm_health_verdict_t *const *verdicts;   /* conf->n_nodes of them, by node index; NULL where there is
                                                    * none (the whole array may be NULL) */
    long records_missing;              /* Mac jobs that ended without a complete record; -1: not known (not
                                        * served) */
} tbm_exporter_view_t;

/* The exposition (malloc'd): every family declared with its HELP and TYPE, the samples the view holds. NULL
 * with err when memory ran out or a label would not pass the writer (it says which). */
char *tbm_exporter_text(const tbm_exporter_view_t *v, tbm_err_t *err);

#endif
