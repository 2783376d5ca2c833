/* record_build.h: the reproducibility record's assembly, data in and data out. The SPANK plug-in gathers
 * (slurmstepd's items, slurmctld's record of the job copied out of Slurm's structures, the step's MLX plan,
 * what the agents and the job's user reported) and stores; this module turns what was gathered into the
 * record's parts: the submit half, the job's facts, a step's part, the parts merged at the job's end. No
 * Slurm, no SPANK: unit-tested on its own (tests/unit/test_record_build.c). */
#ifndef TBM_RECORD_BUILD_H
#define TBM_RECORD_BUILD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "envplan.h"
#include "errbuf.h"
#include "proto.h"

#define TBM_RB_SUBMIT_ENV "TBMESH_REPRO_SUBMIT"   /* job control environment: the submit half, JSON */
#define TBM_RB_MAX_PATHS 64
#define TBM_RB_NOTE_MAX 1000
#define TBM_RB_LINE_MAX 2000                      /* the sbatch line kept, at most */

/* The --repro-* options, in this order; their names and the variables that give them too. */
enum { TBM_RB_MODEL, TBM_RB_DATA, TBM_RB_SEED, TBM_RB_OUTPUT, TBM_RB_NOTE, TBM_RB_SWITCH, TBM_RB_N };
extern const char *const tbm_rb_option_names[TBM_RB_N];   /* "repro-model", ... "repro" */
extern const char *const tbm_rb_option_envs[TBM_RB_N];    /* "TBMESH_REPRO_MODEL", ... "TBMESH_REPRO" */

/* Check option o's value v; the value to keep into *kept (malloc'd; data and output paths made absolute
 * against cwd, data paths must exist now). 0, or -1 with why saying what to give. */
int tbm_rb_option_check(int o, const char *v, const char *cwd, char **kept, char *why, size_t len);

/* The submit folder's git facts, as the caller ran git: commit NULL (with absent saying why) when there is
 * no work tree with a commit. */
typedef struct tbm_rb_git {
    const char *commit, *branch, *remote;   /* remote: origin's URL, NULL when there is none */
    int dirty;
    const char *absent;
} tbm_rb_git_t;

typedef struct tbm_rb_submit {
    const char *cwd;
    const char *cmdline;        /* the submitting command's arguments, NUL-separated (/proc/self/cmdline) */
    size_t cmdline_len;
    tbm_rb_git_t git;
    char *const *given;         /* TBM_RB_N checked values, NULL where not given */
    const char *backend;        /* --mlx-backend, NULL when not given */
} tbm_rb_submit_t;

/* The submit half: {"submit": {work_dir, script, git, sbatch_line, options}, "declared": {...}, and
 * "records":"off" when --repro=off}, redacted. */
json_object *tbm_rb_submit_half(const tbm_rb_submit_t *s);

/* The command line from cmdline (quoted where it is not plain) into line, and the batch script's path (the
 * first word after the command's options) into script. */
void tbm_rb_command_line(const char *cmdline, size_t n, char *line, size_t len, char *script, size_t slen);

/* Does the submit half (JSON text, as the nodes receive it) turn records off? 1 yes, 0 no or unreadable. */
int tbm_rb_records_off(const char *submit_text);

/* The job as slurmstepd and slurmctld know it: never from the job's environment, which its user writes. */
typedef struct tbm_rb_job {
    uint32_t job;
    uid_t uid;
    const char *user;            /* the uid's name; NULL when unknown */
    int known;                   /* slurmctld answered: the fields below hold */
    const char *name, *account, *partition, *work_dir, *std_out, *std_err, *batch_host;
    uint32_t restarts;
    int array;                   /* an array's task: array_job_id and array_task_id hold */
    uint32_t array_job_id, array_task_id;
    int64_t submit_time, start_time;
} tbm_rb_job_t;

/* The record's job object filled: user, uid, name, account, partition, work_dir, restarts, array ids, nodes,
 * group (nodes[0]'s, NULL when none), backend_requested (NULL: "auto"), start_time = now. */
void tbm_rb_job_facts(json_object *job, const tbm_rb_job_t *j, char *const *nodes, size_t n, const char *group,
                      const char *backend_requested, int64_t now);

/* The job's stderr file as Slurm names it (%j %A %a %x %u %N %%), against its folder; Slurm's default
 * (slurm-%j.out, an array task's slurm-%A_%a.out) when the job named neither stderr nor stdout. */
void tbm_rb_stderr_path(const tbm_rb_job_t *j, char *out, size_t len);

/* The values of variables in env whose names look secret (6 characters or more): pointers into env. */
size_t tbm_rb_secrets(char *const *env, const char **out, size_t max);

/* A step's end on a node: what it learnt. */
typedef struct tbm_rb_step {
    const char *node;
    uint32_t node_id, step;
    int bridge;
    char *const *argv;           /* the step's command */
    int argc;
    int tasks, status;           /* tasks seen and the worst one's wait status */
    const tbm_envplan_t *plan;   /* this rank's MLX environment as the plug-in exported it; NULL: none */
    int have_rusage;             /* direct mode: the tasks' rusage (slurmstepd's children) */
    int64_t cpu_user_us, cpu_system_us, max_rss_kb;
    const tbm_msg_t *used;       /* bridge mode: the agent's usage answer; NULL with used_why */
    const char *used_why;
} tbm_rb_step_t;

/* The step's part of the record (redacted of secrets, UTF-8 clean). */
json_object *tbm_rb_step_part(const tbm_rb_step_t *s, const char *const *secrets, size_t n_secrets);

/* The job's end: the steps' parts (as tbm_store_parts gives them) merged into rec: job.steps, per-node
 * backend variables and files, the backend chosen, results, resource use. */
void tbm_rb_merge_parts(json_object *rec, json_object *parts, int bridge);

/* The end's job fields: phase end, end time, exit code and signal, the state (NULL: COMPLETED or FAILED from
 * code and signal), Slurm's submit and start times when known. Returns the state set. */
const char *tbm_rb_end_job(json_object *rec, const tbm_rb_job_t *j, int wait_status, const char *state,
                           int64_t now);

/* The start's submit half and declared data from the job control environment's text (NULL: none): into rec
 * (submit, declared); the declared data's paths (an array of strings, to digest as the user) returned, or
 * NULL when none were declared. */
json_object *tbm_rb_start_submit(json_object *rec, const char *submit_text);

#endif
