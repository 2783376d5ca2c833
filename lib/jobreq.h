/* jobreq.h: what job_submit/tbmesh decides for one submitted job. `--gres=tbmesh:N` means N Macs cabled to
 * each other: the job becomes N nodes with one tbmesh unit each, constrained to the groups that can hold it
 * with the requested backend. Jobs that do not ask for Macs are kept off the Macs in partitions shared with
 * Linux nodes, and pass untouched everywhere else. Pure: the plug-in gathers the inputs and applies the plan. */
#ifndef TBM_JOBREQ_H
#define TBM_JOBREQ_H

#include <stddef.h>
#include <stdint.h>
#include "conf.h"
#include "errbuf.h"
#include "validate.h"

#define TBM_NODES_UNSET 0xfffffffeu   /* Slurm's NO_VAL: -N not given */

/* The job control environment variable that carries --mlx-backend from srun, salloc and sbatch to
 * job_submit/tbmesh and to the job's nodes (its value: one of tbm_backend_choices()). */
#define TBM_MLX_BACKEND_ENV "TBMESH_MLX_BACKEND"
#define TBM_JOBREQ_MAX_GROUPS 64       /* groups named in one constraint */

/* What the job asked for (borrowed strings; NULL when not given). */
typedef struct tbm_jobreq {
    const char *tres_per_node;   /* "gres:tbmesh:4", "gres:gpu:1,gres:tbmesh:studio-a:4" */
    const char *features;        /* the user's --constraint */
    const char *partition;       /* "-p a,b"; NULL: Slurm's default partition */
    const char *exc_nodes;       /* the user's --exclude */
    uint32_t min_nodes;          /* TBM_NODES_UNSET when not given */
    uint32_t max_nodes;          /* TBM_NODES_UNSET when not given */
    const char *backend;         /* --mlx-backend; NULL: auto */
    const char *req_nodes;       /* -w, a host list; NULL when not given */
    uint32_t ntasks_per_node;    /* --ntasks-per-node; 0 when not given */
    uint32_t num_tasks;          /* -n; 0 when not given */
} tbm_jobreq_t;

/* Is a node usable now? 1 yes; 0 no, with `why` ("down: Not responding"). NULL callback: all usable. */
typedef int (*tbm_node_usable_fn)(const char *node, char *why, size_t len, void *arg);

/* The site's partitions (from tbmesh.conf) and, optionally, the nodes' state. */
typedef struct tbm_sched {
    const char *mac_partition;       /* where a Mac job goes when it names no partition ("mac") */
    const char *shared_partitions;   /* comma list: partitions holding Macs and Linux nodes ("all") */
    const char *default_partition;   /* Slurm's Default=YES partition, or NULL when unknown */
    tbm_node_usable_fn node_usable;
    void *arg;
} tbm_sched_t;

typedef enum tbm_jobreq_verdict {
    TBM_JOB_UNTOUCHED = 0,       /* not ours: leave every field as it is */
    TBM_JOB_KEEP_OFF_MACS,       /* not a Mac job, in a shared partition: exc_nodes set */
    TBM_JOB_MESH,                /* a Mac job: every field below set */
} tbm_jobreq_verdict_t;

/* The changes to make (malloc'd strings, NULL when that field stays as it is). */
typedef struct tbm_jobplan {
    tbm_jobreq_verdict_t verdict;
    char *tres_per_node;
    char *features;
    char *partition;
    char *exc_nodes;
    uint32_t nodes;              /* min_nodes = max_nodes = nodes */
    int exclusive;               /* the job owns its Macs whole (tbmesh.conf's ExclusiveMacs) */
    tbm_backend_t backend;       /* as asked (auto stays auto: the nodes choose at start) */
    size_t n_groups;             /* the groups that can hold the job, in the order the job's constraint names
                                    them: the smallest first (Placement=pack), else tbmesh.conf's */
    int groups[TBM_JOBREQ_MAX_GROUPS];
    unsigned char on_subset[TBM_JOBREQ_MAX_GROUPS];   /* 1: only that group's RdmaSubset= Macs can (feature
                                                         tbm_group_rdma_feature() instead of the group's) */
} tbm_jobplan_t;

/* Decide. Returns 0 with `plan` filled, or -1 with `err` holding the message for the user (what is wrong
 * and what to ask for instead); plan is then empty. A job that asks for jaccl or jaccl-ring (not auto) may go
 * to the RdmaSubset= of a group that cannot run it whole, when tbmesh.conf says JacclOnSubsets=yes: its
 * constraint then names the subset's feature (tbmesh_rdma_<group>), so Slurm places it on those Macs only. */
int tbm_jobreq_plan(const tbm_conf_t *conf, const tbm_sched_t *sched, const tbm_jobreq_t *req,
                    tbm_jobplan_t *plan, tbm_err_t *err);

void tbm_jobplan_free(tbm_jobplan_t *plan);

/* Find the tbmesh entry of a tres_per_node string. Returns 1 and fills group ("" when untyped) and count;
 * 0 when there is none; -1 with err when it is malformed. (jobreq_gres.c) */
int tbm_gres_tbmesh(const char *tres_per_node, char *group, size_t group_len, long long *count, tbm_err_t *err);

/* tres_per_node with its tbmesh entry made one unit per node ("gres:gpu:1,gres:tbmesh:1"), the other entries
 * as they are. malloc'd; NULL when out of memory. */
char *tbm_gres_tbmesh_one_per_node(const char *tres_per_node);

#endif
