/* spank_step.h: the one description of a step on a node (spank_step.c), which every other context file of
 * spank_tbmesh.so reads and none writes: the plug-in's arguments, the step's facts and decisions. */
#ifndef SPANK_STEP_H
#define SPANK_STEP_H

#include <stddef.h>
#include <stdint.h>
#include <slurm/spank.h>

#include "tbmesh.h"

#define TBM_SPANK_NAME "tbmesh"
#define TBM_SPANK_FILES_MAX 8                /* files of one step (device matrix, hostfile) */
#define TBM_SPANK_REFUSED 125                /* exit status of each task of a step the plug-in refuses */

/* plugstack.conf arguments: conf=PATH macnode=PATH forwarder=PATH munge_socket=PATH jobs_dir=PATH state_dir=PATH. */
typedef struct tbm_spank_args {
    char conf[4096];             /* tbmesh.conf; "" beside slurm.conf */
    char macnode[4096];          /* the macnode command (job cleanup; the forwarder's fallback) */
    char forwarder[4096];        /* bridge mode's forwarder; "": macnode-forward in ../libexec/slurm-tbmesh
                                  * beside macnode's folder (an installed tree, wherever it was copied) */
    char munge_socket[4096];     /* munged's socket; "" libmunge's default */
    char jobs_dir[1024];         /* the Macs' jobs folder (made by root; agent and direct mode alike) */
    char state_dir[1024];        /* root's folder on the node for what the job's prolog hands its steps */
} tbm_spank_args_t;

/* One step on one node, worked out once (slurm_spank_init and init_post_opt, as root) and read by every later
 * callback, including those of each task (forked from slurmstepd after it). */
typedef struct tbm_spank_step {
    uint32_t job, step, node_id, uid, gid;
    int task_step;               /* a step that runs tasks (not the batch, extern or interactive step) */
    int have_conf;
    tbm_conf_t conf;             /* tbmesh.conf, read once for the step */
    char **nodes;                /* the step's nodes in Slurm's order (the batch step: the job's), as
                                  * slurmctld knows them; NULL when it could not say (refusal says why) */
    size_t n_nodes;
    char node[TBM_HOSTNAME_MAX]; /* this node */
    int mac_node;                /* this node is a Mac of tbmesh.conf */
    int bridge;                  /* ... a bridge-mode Mac: its tasks are forwarded */
    char agent[TBM_HOSTNAME_MAX + 8];   /* its agent, "addr:port" */
    tbm_jobtag_t tag;            /* what job_submit/tbmesh decided, as the job's prolog kept it */
    int mac_job;                 /* the job asked for Macs (--gres=tbmesh) */
    int active;                  /* a task step that tbmesh sets up or refuses (on a Mac, or where it cannot tell) */
    int planned;                 /* `plan` holds this rank's MLX environment */
    tbm_envplan_t plan;
    char job_dir[1100];          /* direct mode: this job's folder on the Mac (made by root) */
    char note[TBM_ERR_MAX];      /* said once on the job's stderr (node 0) */
    char refusal[TBM_ERR_MAX];   /* non-empty: every task of the step fails with this on its stderr */
} tbm_spank_step_t;

/* The plug-in's arguments (read at slurm_spank_init and at the job's prolog and epilog) and this step's
 * description: read-only outside spank_step.c. */
const tbm_spank_args_t *tbm_spank_args(void);
const tbm_spank_step_t *tbm_spank_step(void);

/* The job's prolog (root): job_submit's tag, which reaches the prolog but not the steps' environment, is
 * kept in state_dir for them (a job without one as "macs=0"); the epilog removes it. */
void tbm_spank_tag_keep(uint32_t job);
void tbm_spank_tag_drop(uint32_t job);

void tbm_spank_read_args(int ac, char **av);
/* Where tbmesh.conf is: the plugstack argument conf=, else beside slurm.conf. */
void tbm_spank_conf_path(char *path, size_t len);
int tbm_spank_load_conf(tbm_conf_t *conf, tbm_err_t *err);
enum { TBM_SPANK_NOT_A_MAC = 0, TBM_SPANK_DIRECT_MAC, TBM_SPANK_BRIDGE_MAC };
/* What `name` is in tbmesh.conf; a bridge-mode Mac's agent ("addr:port") in agent. */
int tbm_spank_node_kind(const tbm_conf_t *conf, const char *name, char *agent, size_t len);
/* The step described (slurm_spank_init: job, nodes, tbmesh.conf, the node's kind, the job's tag), then planned
 * (init_post_opt: this rank's MLX environment); fini frees it at the step's end. */
int tbm_spank_step_describe(spank_t sp);
int tbm_spank_step_plan(spank_t sp);
void tbm_spank_step_fini(void);
/* The step is refused: every task fails with this on its stderr. */
void tbm_spank_step_refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A message into one of the step's fixed buffers (note, refusal), cut when too long. */
void tbm_spank_say(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
