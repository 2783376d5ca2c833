/* report.h: the usage report's pure core (`tbmesh report`): the period, jobs and node events folded into
 * per-group totals as they stream by (memory independent of the number of jobs), then written as a table,
 * CSV, JSON or a self-contained HTML page. The Slurm side (acct/report.c) only moves records in. */
#ifndef TBM_REPORT_H
#define TBM_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "conf.h"
#include "errbuf.h"

/* ---- the period ---- */

typedef struct tbm_period {
    time_t since;                 /* first second in it */
    time_t until;                 /* first second after it */
} tbm_period_t;

/* A point in time in local time, as sacct reads it: YYYY-MM-DD, YYYY-MM-DDTHH:MM, YYYY-MM-DDTHH:MM:SS
 * (a space may stand for the T), or "now" (= `now`). Returns 0, or -1 with err saying what to write. */
int tbm_period_parse_time(const char *s, time_t now, time_t *out, tbm_err_t *err);

/* `--month YYYY-MM`: from the first of that month, 00:00 local time, to the first of the next. */
int tbm_period_month(const char *s, tbm_period_t *out, tbm_err_t *err);

/* `--last N[hdw]` (hours, days, weeks; days when no unit): [now - N, now). */
int tbm_period_last(const char *s, time_t now, tbm_period_t *out, tbm_err_t *err);

/* The period of the options given (any may be NULL; month and last exclude since/until and each other).
 * Nothing given: the last 7 days. Refuses a reversed or empty period and one that starts in the future. */
int tbm_period_from_options(const char *since, const char *until, const char *month, const char *last,
                            time_t now, tbm_period_t *out, tbm_err_t *err);

/* The length of the next window of jobs read from slurmdbd: the last one's (w seconds, which held n jobs)
 * scaled to hold about `target` jobs at that density, changed at most eightfold at a time (an empty window
 * grows eightfold), within [min_s, max_s]. */
time_t tbm_report_next_window(time_t w, size_t n, size_t target, time_t min_s, time_t max_s);

/* ---- what streams in ---- */

/* Reproducibility coverage of one Mac job, as the record store says. */
typedef enum tbm_coverage {
    TBM_COV_UNKNOWN = 0,          /* records are not in use: no coverage column */
    TBM_COV_ABSENT,               /* no record */
    TBM_COV_PRESENT,              /* a record, not (or not successfully) verified */
    TBM_COV_VERIFIED,             /* a complete record whose seal checks */
} tbm_coverage_t;

/* One job as slurmdbd keeps it (strings are borrowed for the call). Times are seconds since the epoch,
 * 0 when unknown (start: never started; end: still running). */
typedef struct tbm_rjob {
    uint32_t id;
    const char *user, *account, *partition;
    const char *state;            /* Slurm's base state name: "COMPLETED", "NODE_FAIL", ... */
    const char *nodes;            /* hostlist expression; NULL, "" or "None assigned" when none */
    const char *backend;          /* requested MLX backend of a Mac job ("auto" when not asked); NULL else */
    time_t submit, start, end;
    uint32_t alloc_nodes;         /* 0: never ran */
    uint32_t alloc_cpus;
    uint64_t tbmesh_units;        /* gres/tbmesh allocated (from tres_alloc_str), or requested if it never ran */
    double cpu_used_s;            /* Slurm's TotalCPU (user + system), seconds */
    tbm_coverage_t coverage;
    double rec_cpu_used_s;        /* the record's per-task CPU use summed (Mac jobs); < 0 when not known;
                                   * counted only as tbm_rtrust_cpu says (a verified record, within the
                                   * allocation) */
    int rec_gpu, rec_energy;      /* 1: the record holds the job's GPU-seconds, its energy (else not known) */
    double rec_gpu_s;             /* the job's GPU-seconds: per node and step, the largest GPU mean x wall
                                   * time of its tasks, summed (lib/record.h tbm_usage_totals_t) */
    double rec_energy_j;          /* the job's energy in joules: per node and step, the largest task's, summed;
                                   * both counted only as tbm_rtrust_gpu says (a verified record) */
} tbm_rjob_t;

/* A node event: the node was down or drained in [start, end) (end 0: still). */
typedef struct tbm_revent {
    const char *node;
    const char *reason;           /* the admin's or the health check's reason, e.g. "tbmesh: cable-missing at ..." */
    time_t start, end;
} tbm_revent_t;

/* ---- the report ---- */

typedef enum tbm_rdim {
    TBM_RDIM_KIND = 0,            /* mac or linux */
    TBM_RDIM_GROUP,               /* the Mac group of tbmesh.conf; "linux" for Linux jobs */
    TBM_RDIM_ACCOUNT,
    TBM_RDIM_USER,
    TBM_RDIM_PARTITION,
    TBM_RDIM_BACKEND,             /* requested backend of Mac jobs; "-" for Linux jobs */
    TBM_RDIM_STATE,
    TBM_RDIM_N
} tbm_rdim_t;

const char *tbm_rdim_name(tbm_rdim_t d);            /* "kind", "group", "account", ... */
int tbm_rdim_parse(const char *s, tbm_rdim_t *out); /* 0 or -1 */

/* Job states counted apart. */
typedef enum tbm_rstate {
    TBM_RST_COMPLETED = 0, TBM_RST_FAILED, TBM_RST_CANCELLED, TBM_RST_TIMEOUT, TBM_RST_NODE_FAIL,
    TBM_RST_OUT_OF_MEMORY, TBM_RST_PENDING, TBM_RST_RUNNING, TBM_RST_OTHER, TBM_RST_N
} tbm_rstate_t;

tbm_rstate_t tbm_rstate_of(const char *slurm_state);
const char *tbm_rstate_name(tbm_rstate_t s);        /* lower case column names: "completed", ... */

/* Job sizes in nodes: 1, 2, 3-4, 5-8, 9 and more. */
#define TBM_RSIZE_N 5
const char *tbm_rsize_name(int i);                  /* "nodes_1", "nodes_2", "nodes_3_4", ... */

/* Waiting times are kept in a fixed histogram: exact to the second up to TBM_RHIST_EXACT seconds, then
 * TBM_RHIST_SUB buckets per power of two (a value is reported as its bucket's lower bound: at most 1/64
 * = 1.6% low), up to 2^TBM_RHIST_BITS seconds (larger values count as that). Percentiles are nearest-rank:
 * the p-th is the smallest value with at least ceil(p/100 * n) values at or below it. */
#define TBM_RHIST_EXACT 1024
#define TBM_RHIST_SUB   64
#define TBM_RHIST_BITS  40

typedef struct tbm_rhist {
    uint32_t *count;
    uint64_t n;
} tbm_rhist_t;

int tbm_rhist_init(tbm_rhist_t *h);                 /* 0, or -1 out of memory */
void tbm_rhist_free(tbm_rhist_t *h);
void tbm_rhist_add(tbm_rhist_t *h, uint64_t v);
uint64_t tbm_rhist_percentile(const tbm_rhist_t *h, int p);   /* 0 when empty */

/* The totals of one group (one value of one dimension). Seconds are clipped to the period. */
typedef struct tbm_ragg {
    char *name;
    uint64_t jobs;
    uint64_t state[TBM_RST_N];
    uint64_t node_s, cpu_s, tbmesh_s;
    uint64_t size[TBM_RSIZE_N];   /* jobs that ran, by nodes */
    uint64_t ran;                 /* jobs that started (with a waiting time) */
    tbm_rhist_t wait;
    double eff_alloc_s[2], eff_used_s[2];  /* whole jobs, [0] Linux [1] Mac: CPUs x elapsed, Slurm's TotalCPU */
    double rec_alloc_s, rec_used_s;        /* Mac jobs with a record's per-task use */
    uint64_t mac_jobs, rec_present, rec_verified;
    double mac_cpu_s;             /* CPU-seconds allocated to Mac jobs (within the period, as cpu_s) */
    uint64_t gpu_jobs, energy_jobs;        /* Mac jobs whose (verified) record gave GPU figures, energy */
    double gpu_s, energy_j;       /* their GPU-seconds and joules, each job's share within the period (the
                                   * job's figure x the part of its run inside the period) */
} tbm_ragg_t;

/* A Mac group's capacity and use over the period. */
typedef struct tbm_rgroup_use {
    const char *name;
    int nodes;
    uint64_t capacity_s;          /* node-seconds that existed and were neither down nor drained */
    uint64_t unavailable_s;       /* node-seconds down or drained */
    uint64_t alloc_s;             /* node-seconds allocated to jobs */
    uint64_t whole_group_jobs;    /* jobs that took every node of the group */
} tbm_rgroup_use_t;

/* A failure reason and how often it happened. */
typedef struct tbm_rfailure {
    char *kind;                   /* "job" or "node" */
    char *reason;                 /* "node failure", "timeout", "cancelled", "failed", "out of memory",
                                   * "drain: tbmesh cable-missing", "drain: other" */
    uint64_t count;
    uint64_t node_s;              /* node-seconds of those jobs, or drained node-seconds */
} tbm_rfailure_t;

typedef struct tbm_report tbm_report_t;

/* What a Mac job's record says it used (the tbm_rjob_t members of the same names). */
typedef struct tbm_ruse {
    double cpu_used_s;            /* < 0: not known */
    int gpu, energy;              /* 1: gpu_s, energy_j hold the record's figures */
    double gpu_s, energy_j;
} tbm_ruse_t;

/* The record store's word on one Mac job: its coverage, and in *use what its record says the job used (the
 * caller sets cpu_used_s to -1 and the rest to 0 first; the report counts them only for a verified record). */
typedef tbm_coverage_t (*tbm_coverage_fn)(void *ctx, uint32_t job, tbm_ruse_t *use);

typedef struct tbm_report_opts {
    tbm_period_t period;
    time_t now;                   /* what "still running" is clipped to */
    const tbm_conf_t *conf;       /* the Mac groups and nodes (borrowed; may hold no group) */
    int records_in_use;           /* the coverage column is shown */
    int top;                      /* top users and accounts to list (default 10) */
    const char *only_group;       /* count only the jobs of this Mac group (NULL: all jobs) */
    int slurm_cpu_unknown;        /* Slurm's CPU use of the jobs was not read (cpu_used_s means nothing): the
                                   * efficiency tables leave its columns empty */
    tbm_coverage_fn coverage;     /* when set, asked for each Mac job counted (and only for those), in place
                                   * of the job's own coverage and rec_* members */
    void *coverage_ctx;
} tbm_report_opts_t;

/* A new, empty report. NULL with err set when out of memory. */
tbm_report_t *tbm_report_new(const tbm_report_opts_t *o, tbm_err_t *err);
void tbm_report_free(tbm_report_t *r);

/* Fold one job in (each job once). Returns 0, or -1 with err set (out of memory). */
int tbm_report_add_job(tbm_report_t *r, const tbm_rjob_t *j, tbm_err_t *err);

/* Fold one node event in (events of non-Mac nodes count as failures only). Returns 0 or -1. */
int tbm_report_add_event(tbm_report_t *r, const tbm_revent_t *e, tbm_err_t *err);

/* Add a note shown with the report (e.g. "records are not in use"). */
int tbm_report_note(tbm_report_t *r, const char *note, tbm_err_t *err);

/* Read access for the writers and tests. */
const tbm_report_opts_t *tbm_report_opts(const tbm_report_t *r);
size_t tbm_report_groups(tbm_report_t *r, tbm_rdim_t d, const tbm_ragg_t **out); /* sorted by name */
const tbm_ragg_t *tbm_report_group(const tbm_report_t *r, tbm_rdim_t d, const char *name);
size_t tbm_report_group_use(tbm_report_t *r, const tbm_rgroup_use_t **out);           /* per Mac group */
size_t tbm_report_failures(const tbm_report_t *r, const tbm_rfailure_t **out);
size_t tbm_report_notes(const tbm_report_t *r, const char *const **out);
/* Usage over time: n_buckets buckets of bucket_s seconds from the period's start; series are the Mac
 * groups in tbmesh.conf order then "linux"; node-seconds in series[s * n_buckets + b]. */
void tbm_report_timeline(const tbm_report_t *r, size_t *n_buckets, time_t *bucket_s, size_t *n_series,
                         const char *const **series_names, const uint64_t **series);

/* ---- the records' CPU figures (report_trust.c) ---- */

/* A Mac job's CPU use from its record counts in the efficiency tables only when the record verified
 * (TBM_COV_VERIFIED: anyone may have written an unverified one) and the use fits what the job's CPUs could give
 * while it ran, (elapsed + TBM_RTRUST_SLACK_S) x CPUs (Slurm keeps the times in whole seconds). The jobs left
 * out are counted, for the note that says so (the report adds and updates it as jobs come in). */
#define TBM_RTRUST_SLACK_S 2

typedef struct tbm_rtrust {
    uint64_t unverified;          /* records with a CPU figure that did not verify */
    uint64_t gpu_unverified;      /* records with GPU figures or energy that did not verify */
    uint64_t over;                /* verified records with more CPU time than the job's CPUs could give */
    uint32_t over_job;            /* the first of those, and its use in percent of its allocated CPU time */
    double over_pct;
} tbm_rtrust_t;

/* The record CPU use of job j (which ran whole_s seconds) to count, in seconds; -1 when it has none, or when
 * it is left out (then counted in t). */
double tbm_rtrust_cpu(tbm_rtrust_t *t, const tbm_rjob_t *j, double whole_s);

/* The note on the jobs left out and why, in buf; 0 (buf empty) when none was. */
int tbm_rtrust_note(const tbm_rtrust_t *t, char *buf, size_t len);

/* The record GPU and energy figures of job j to count: *gpu_s and *energy_j (-1 each when it has none, or when
 * its record did not verify: then counted in t). Any verified figure is counted: a GPU share is 0..1 and the
 * energy the Mac's own measure. */
void tbm_rtrust_gpu(tbm_rtrust_t *t, const tbm_rjob_t *j, double *gpu_s, double *energy_j);

/* The note on the jobs whose GPU and energy figures were left out, in buf; 0 (buf empty) when none was. */
int tbm_rtrust_gpu_note(const tbm_rtrust_t *t, char *buf, size_t len);

/* ---- writers ---- */

typedef enum tbm_rformat { TBM_RFMT_TABLE = 0, TBM_RFMT_CSV, TBM_RFMT_JSON, TBM_RFMT_HTML } tbm_rformat_t;

/* The report as text (malloc'd), NULL when out of memory. `dims` lists the dimensions shown by the table,
 * CSV and HTML (JSON holds them all). */
char *tbm_report_write(tbm_report_t *r, tbm_rformat_t f, const tbm_rdim_t *dims, size_t n_dims);

/* The count of TRES `id` in a tres string such as "1=4,2=8000,4=2,1001=2" (0 when absent). Returns 0, or
 * -1 when the string is malformed. */
int tbm_tres_count(const char *tres, int id, uint64_t *out);

#endif
