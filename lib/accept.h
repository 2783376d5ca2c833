/* accept.h: the staged acceptance run of a Mac group (`tbmesh accept`, tbmesh-accept(1)): the plan file, the
 * seven steps' results, the verdict (one of three levels, with what kept the group from the next one and what
 * to do) and the decision record in Markdown and JSON. Pure: the command runs the Slurm jobs and hands their
 * outputs here; accept_plan.c reads the plan, accept_parse.c the jobs' outputs, accept_decide.c decides,
 * accept_write.c writes the record. */
#ifndef TBM_ACCEPT_H
#define TBM_ACCEPT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "conf.h"
#include "errbuf.h"
#include "finding.h"
#include "refwork.h"
#include "validate.h"

#define TBM_ACCEPT_STEPS      7
#define TBM_ACCEPT_TEXT_MAX   256    /* a plan's text value, a step's summary */
#define TBM_ACCEPT_JOBS_MAX   96     /* a step's Slurm job ids, "123,124" */
#define TBM_ACCEPT_CABLES_MAX 64     /* cables measured in one group */
#define TBM_ACCEPT_SIZES_MAX  48     /* sizes of one all-reduce sweep */
#define TBM_ACCEPT_END_MAX    80     /* one end of a cable: "mac01:en2" */
#define TBM_ACCEPT_PLAN_MAX   (64u << 10)   /* largest plan file */

/* The three levels, lowest first. */
typedef enum tbm_accept_level {
    TBM_ACCEPT_MACOS_ONLY = 0,   /* "macOS compatibility only": the Macs run jobs one by one, no proven mesh */
    TBM_ACCEPT_PROTOTYPE,        /* "prototype": the distributed path works through Slurm, not yet plannable */
    TBM_ACCEPT_PLANNABLE,        /* "plannable research resource": every step passed for the plan's task */
    TBM_ACCEPT_LEVELS,
} tbm_accept_level_t;

const char *tbm_accept_level_name(tbm_accept_level_t l);   /* the names above */
const char *tbm_accept_level_key(tbm_accept_level_t l);    /* "macos-only", "prototype", "plannable" */

/* How a step went. */
typedef enum tbm_step_state {
    TBM_STEP_NOT_RUN = 0,        /* not run: a step it needs did not pass, or nothing to run */
    TBM_STEP_PASSED,             /* ran, nothing wrong */
    TBM_STEP_FINDINGS,           /* ran, with findings (in the step's list) */
    TBM_STEP_FAILED,             /* could not be completed (its job did not start or failed) */
} tbm_step_state_t;

const char *tbm_step_state_name(tbm_step_state_t s);       /* "not run", "passed", "findings", "failed" */
const char *tbm_accept_step_title(int step);               /* step 1..7: "The task", ... */

/* ---- the plan (accept_plan.c) ---- */

typedef struct tbm_accept_plan {
    int present;                 /* a plan file was read */
    char file[TBM_ACCEPT_TEXT_MAX];
    char task[TBM_ACCEPT_TEXT_MAX];      /* what the group is to do */
    char model[TBM_ACCEPT_TEXT_MAX];
    char data[TBM_ACCEPT_TEXT_MAX];
    char expected[TBM_ACCEPT_TEXT_MAX];  /* the expected output */
    tbm_backend_t backend;       /* backend wanted (default jaccl); auto: any the group can run */
    int bitwise;                 /* tolerance = bitwise: the mesh's output must equal the baseline's bits */
    double rtol, atol;           /* else within |a-b| <= atol + rtol * max(|a|,|b|) */
    double link_share;           /* least share of a cable's link speed it must reach each way (0.5) */
    double busbw_share;          /* least all-reduce busbw as a share of the slowest cable (0.5) */
    tbm_refwork_t refwork;       /* the reference workload's shape (4 layers, hidden 1024, batch 16, seed 1) */
    size_t sweep_max;            /* largest all-reduce size of the sweeps, bytes (16 MiB) */
    size_t p2p_bytes;            /* message size of the per-cable measure (16 MiB) */
} tbm_accept_plan_t;

/* The defaults above, no plan read. */
void tbm_accept_plan_defaults(tbm_accept_plan_t *p);

/* The shell words of one rank's reference workload in steps 2 and 5, run as root on a Mac: `macnode` refwork
 * of the plan's shape writes its output in a folder that `mktemp -d` makes for it (mode 0700, a name nobody
 * can predict, under $TMPDIR or /tmp: never a fixed path in a shared folder), rank 0 prints the output in
 * base64 on a TBM_ACCEPT_RW_TAG line, the folder is removed and refwork's exit status kept. Holds no single
 * quote (the caller quotes it). 0, or -1 when it does not fit in len. */
int tbm_accept_refwork_script(const tbm_refwork_t *w, const char *macnode, char *buf, size_t len);

/* Parse a plan file's text (`file` names it in messages): `key = value` lines, `#` comments, blank lines, an
 * optional `[acceptance]` header; keys and their values in tbmesh-accept(1), PLAN FILE. Every bad line becomes
 * an error finding in `errors` (where "file:line", what, fix). Returns 0, or -1 when a line was bad (then err
 * holds the first as "file:line: what: fix" and how many more); the plan keeps its defaults for bad lines. */
int tbm_accept_plan_parse(const char *text, size_t len, const char *file, tbm_accept_plan_t *p,
                          tbm_findings_t *errors, tbm_err_t *err);

/* ---- what the jobs measured (accept_parse.c) ---- */

/* One cable, as tbmesh.conf has it and as `macnode bench -o p2p` measured it. */
typedef struct tbm_accept_cable {
    char end[2][TBM_ACCEPT_END_MAX];     /* "mac01:en2" */
    int speed_gbps;              /* link speed in tbmesh.conf (0: unknown) */
    int measured;                /* a p2p row named this cable */
    double gbs[2];               /* GB/s from end 0 to end 1, and back */
    long wrong;
    double share;                /* the slower way as a share of the link speed (-1 unknown) */
} tbm_accept_cable_t;

/* An all-reduce sweep (`macnode bench -F csv`): out-of-place rows, one per size. */
typedef struct tbm_accept_sweep {
    int ran;
    int ranks;
    size_t n;
    size_t bytes[TBM_ACCEPT_SIZES_MAX];
    double time_us[TBM_ACCEPT_SIZES_MAX];
    double busbw[TBM_ACCEPT_SIZES_MAX];  /* GB/s */
    long wrong_total;
} tbm_accept_sweep_t;

/* A run of `macnode refwork`: the summary line and, when the job sent it, the output itself. */
typedef struct tbm_accept_refwork {
    int ran;
    int ranks;
    double seconds;
    char sha256[65];
    unsigned char *out;          /* the output file's bytes (malloc'd), NULL when not received */
    size_t out_len;
} tbm_accept_refwork_t;

/* The line a rank prints with its output file (base64), for the comparison on the login side. */
#define TBM_ACCEPT_RW_TAG "tbmesh-accept-refwork-output "

/* Read an all-reduce sweep from bench's CSV (other lines ignored). Returns 0, or -1 when no row was found. */
int tbm_accept_parse_sweep(const char *text, tbm_accept_sweep_t *s, tbm_err_t *err);

/* Read bench's p2p CSV rows into the cables they measured (matched by their ends, either order); a row
 * naming no cable of the list is a finding (code "cable-unplanned"). Returns how many rows were read. */
int tbm_accept_parse_p2p(const char *text, tbm_accept_cable_t *cables, size_t n, tbm_findings_t *fs);

/* Read refwork's summary line ("... on N ranks: T s, output sha256 H") and the output line, if any.
 * Returns 0, or -1 with a message when no summary line was found. Free with tbm_accept_refwork_free. */
int tbm_accept_parse_refwork(const char *text, tbm_accept_refwork_t *rw, tbm_err_t *err);
void tbm_accept_refwork_free(tbm_accept_refwork_t *rw);

/* Each rank's backend environment, as printed by the env check (lines "tbmesh-accept-env RANK HOST NAME=VALUE"
 * and "tbmesh-accept-file RANK HOST NAME TEXT"): every one of `nranks` ranks must hold the variables of
 * `backend` (MLX_RANK = its rank, the hostfile or device matrix valid, the coordinator for JACCL) and no
 * other backend's. Findings (code "env-...", where "rank R (HOST)") for every rank that does not. Returns
 * how many ranks passed. */
#define TBM_ACCEPT_ENV_TAG  "tbmesh-accept-env "
#define TBM_ACCEPT_FILE_TAG "tbmesh-accept-file "
int tbm_accept_check_env(const char *text, tbm_backend_t backend, int nranks, tbm_findings_t *fs);

/* The two refwork outputs compared (file format of macnode refwork -o). Returns 0 with d filled, or -1 with
 * a message (not an output, different networks). */
int tbm_accept_refwork_compare(const tbm_accept_refwork_t *a, const tbm_accept_refwork_t *b, double rtol,
                               double atol, tbm_rw_diff_t *d, tbm_err_t *err);

/* ---- the run ---- */

typedef struct tbm_accept_step {
    tbm_step_state_t state;
    char jobs[TBM_ACCEPT_JOBS_MAX];      /* Slurm job ids of the step, comma-separated; "" none */
    char summary[TBM_ACCEPT_TEXT_MAX];   /* one line: what was found */
    tbm_findings_t findings;
} tbm_accept_step_t;

typedef struct tbm_accept {
    char group[TBM_GROUP_NAME_MAX];
    char nodes[TBM_ACCEPT_TEXT_MAX];     /* "mac[01-04]" */
    int n_macs;
    char cluster[64];
    char command[TBM_ACCEPT_TEXT_MAX * 2];   /* the command line that ran it, to run it again */
    time_t started, ended;
    tbm_accept_plan_t plan;
    tbm_accept_step_t step[TBM_ACCEPT_STEPS];    /* step[0] is step 1 */
    /* step 2: one Mac */
    char base_mac[TBM_ACCEPT_END_MAX];
    tbm_accept_refwork_t base_rw;
    tbm_accept_sweep_t base_sweep;
    /* step 3: the distributed path */
    tbm_group_caps_t caps;       /* from tbmesh.conf */
    tbm_link_t link;
    unsigned possible;           /* backends the group can run on all its Macs (mask) */
    char why_not[TBM_BACKEND_COUNT][TBM_FINDING_TEXT_MAX];  /* why a backend is not possible */
    tbm_backend_t chosen;        /* the backend steps 5 and 6 ran (the plan's, or the best possible) */
    /* step 4: health of every Mac */
    int macs_checked, macs_healthy;
    /* step 5: the group's job */
    int env_ranks, env_ok;
    tbm_accept_cable_t cables[TBM_ACCEPT_CABLES_MAX];
    size_t n_cables;
    tbm_accept_sweep_t mesh_sweep;
    tbm_accept_refwork_t mesh_rw;
    /* step 6: computed by tbm_accept_decide */
    int compared;                /* the two refwork outputs were compared */
    tbm_rw_diff_t diff;
    double slowest_gbs;          /* the slowest cable's slower way */
    double busbw_gbs;            /* the sweep's busbw at its largest size */
    double busbw_share;          /* busbw_gbs / slowest_gbs (-1 unknown) */
    /* step 7 */
    char owner[TBM_OWNER_ROLES][TBM_OWNER_MAX];
    /* the verdict */
    tbm_accept_level_t level;
    tbm_findings_t kept[TBM_ACCEPT_LEVELS];      /* kept[L]: what keeps the group from level L (L > level) */
} tbm_accept_t;

void tbm_accept_init(tbm_accept_t *a);
void tbm_accept_free(tbm_accept_t *a);

/* Add a Slurm job id to a step's list. */
void tbm_accept_add_job(tbm_accept_t *a, int step, uint32_t job);

/* Add a finding to step `step` (1..7). */
void tbm_accept_step_add(tbm_accept_t *a, int step, tbm_severity_t sev, const char *code, const char *where,
                         const char *fix, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* ---- the decision (accept_decide.c) ---- */

/* Step 3 from caps, link and n_macs (the inventory's verdict, or tbmesh.conf's): the backends the group can
 * run on all its Macs (why_not filled for the others where the caller left it empty) and the one steps 5 and
 * 6 run: the plan's when possible; else (or for auto) the first possible of jaccl, jaccl-ring, ring, mpi;
 * TBM_BACKEND_AUTO when none is. The command calls it before step 5; tbm_accept_decide again. */
void tbm_accept_choose_backend(tbm_accept_t *a);

/* Steps 1, 3, 6 and 7 judged from what is filled in (plan, caps and possible, the runs, owners), then the
 * level and what kept the group from each higher level, with what to do. Steps 2, 4 and 5 keep the state the
 * command gave them. Returns the level. Deterministic: the same inputs give the same record. */
tbm_accept_level_t tbm_accept_decide(tbm_accept_t *a);

/* The exit status of a level for scripts: 0 plannable, 10 prototype, 20 macOS compatibility only. */
int tbm_accept_exit_status(tbm_accept_level_t l);

/* ---- the decision record (accept_write.c) ---- */

/* The record as Markdown, and as JSON text (both malloc'd; NULL when out of memory, or, for the JSON, when a
 * step's job list is not job ids: tbm_accept_write_json says which). */
char *tbm_accept_markdown(const tbm_accept_t *a);
char *tbm_accept_json(const tbm_accept_t *a);

/* The record as JSON text (malloc'd), or NULL with err saying why: out of memory, or a step's job list that
 * is not Slurm job ids ("123,124"). tbm_accept_json is this without the message. */
char *tbm_accept_write_json(const tbm_accept_t *a, tbm_err_t *err);

#endif
