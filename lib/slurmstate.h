/* slurmstate.h: what Slurm says of its nodes and jobs, read from the text of its commands as Slurm 22.05 to
 * 24.11 print it: `scontrol --oneliner show node [LIST]` (one line per node: NodeName=, State=, Reason=, ...),
 * `squeue --noheader --states=RUNNING --format=TBM_SQUEUE_FORMAT` and, for the Mac jobs that ended,
 * `sacct -a -X -n -P -o TBM_SACCT_ENDED_FIELDS`. The one reader of a node
 * line's State= and Reason= (the health check's drain decision reads them here too). */
#ifndef TBM_SLURMSTATE_H
#define TBM_SLURMSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "hostlist.h"

#define TBM_SLURM_STATE_MAX  24     /* a base state's name, with its NUL */
#define TBM_SLURM_REASON_MAX 256    /* a reason kept, with its NUL (Slurm's may be longer: cut) */
#define TBM_SQUEUE_FORMAT    "%A %N"   /* squeue's --format: the job id and its nodes ("mac[01-04]") */

/* One node as `scontrol show node` has it. */
typedef struct tbm_slurm_node {
    char name[TBM_HOSTNAME_MAX];
    char state[TBM_SLURM_STATE_MAX];    /* the base state in lower case: "idle", "allocated", "mixed", "down",
                                         * "future", "unknown", ... (the State token before its first '+') */
    int drain;                          /* a DRAIN flag (or DRAINED, DRAINING): drained, or draining */
    int not_responding;                 /* +NOT_RESPONDING, or a '*' after the state */
    char reason[TBM_SLURM_REASON_MAX];  /* Reason= without Slurm's " [user@time]" stamp, "" when none; control
                                         * bytes and bytes that are not UTF-8 made '?', cut to fit */
} tbm_slurm_node_t;

/* One line of `scontrol --oneliner show node` (len bytes, no NUL needed). 0, or -1 with err when the line has
 * no NodeName= at its start or no State=. */
int tbm_slurm_node_parse(const char *line, size_t len, tbm_slurm_node_t *n, tbm_err_t *err);

typedef struct tbm_slurm_nodes {
    tbm_slurm_node_t *v;
    size_t n;
    size_t not_found;     /* "Node NAME not found" lines: names of the list Slurm does not know */
    size_t skipped;       /* other lines that did not read; the first one's error in first_error */
    char first_error[TBM_ERR_MAX];
} tbm_slurm_nodes_t;

/* Every line of scontrol's output: its nodes (in its order), the names it did not find, the lines it could
 * not read (blank lines and "No nodes in the system" are neither). 0, or -1 with err when out of memory. */
int tbm_slurm_nodes_parse(const char *text, size_t len, tbm_slurm_nodes_t *out, tbm_err_t *err);
void tbm_slurm_nodes_free(tbm_slurm_nodes_t *ns);

/* The node called name, or NULL. */
const tbm_slurm_node_t *tbm_slurm_nodes_find(const tbm_slurm_nodes_t *ns, const char *name);

/* One running job as squeue lists it with TBM_SQUEUE_FORMAT. */
typedef struct tbm_slurm_job {
    uint32_t id;
    char **nodes;         /* its nodes' names (tbm_hostlist_expand's) */
    size_t n_nodes;
} tbm_slurm_job_t;

typedef struct tbm_slurm_jobs {
    tbm_slurm_job_t *v;
    size_t n;
    size_t skipped;       /* lines that did not read; the first one's error in first_error */
    char first_error[TBM_ERR_MAX];
} tbm_slurm_jobs_t;

/* squeue's lines "ID NODELIST". 0, or -1 with err when out of memory. */
int tbm_slurm_jobs_parse(const char *text, size_t len, tbm_slurm_jobs_t *out, tbm_err_t *err);
void tbm_slurm_jobs_free(tbm_slurm_jobs_t *js);

/* A job state Slurm's accounting holds for a job that is over (COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL,
 * OUT_OF_MEMORY, PREEMPTED, BOOT_FAIL, DEADLINE): its first word ("CANCELLED by 1000" is CANCELLED). */
int tbm_slurm_state_final(const char *state);

/* sacct's local time "YYYY-MM-DDTHH:MM:SS" (s[0..n), no NUL needed) as seconds since the epoch; -1 for anything
 * else ("Unknown", "None"). */
long long tbm_sacct_time(const char *s, size_t n);

#define TBM_SACCT_ENDED_FIELDS "JobIDRaw,State,End,NodeList,AdminComment"   /* AdminComment last: it may hold '|' */

/* The Mac jobs that ran and ended: those sacct lists (TBM_SACCT_ENDED_FIELDS, -P) with the job submit plug-in's
 * summary in their AdminComment (TBM1:, a Mac job), nodes (not "None assigned": a job cancelled while pending
 * never ran, and only `tbmesh repro sync` makes its record), a final state and an end (local time, as sacct
 * prints it) at least grace_s before now. Job ids in sacct's order, each once. */
typedef struct tbm_ended_jobs {
    uint32_t *id;
    size_t n;
    size_t skipped;       /* lines that did not read; the first one's error in first_error */
    char first_error[TBM_ERR_MAX];
} tbm_ended_jobs_t;

/* 0, or -1 with err when out of memory. */
int tbm_sacct_ended_parse(const char *text, size_t len, long long now, int grace_s, tbm_ended_jobs_t *out,
                          tbm_err_t *err);
void tbm_ended_jobs_free(tbm_ended_jobs_t *e);

#endif
