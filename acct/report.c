/* report.c: `tbmesh report`, the shim between slurmdbd and the report's core (lib/report.h): reads the
 * period's jobs through Slurm's accounting API in time windows (so memory stays flat however many jobs the
 * period holds) and the Macs' node events, and hands each record to the core. */
#include "config.h"
#include "report.h"
#include "report_main.h"
#include "report_records.h"
#include "fileio.h"
#include "scalar.h"

#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include "tbm_slurm.h"
#include <slurm/slurmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRES_CPU 1                /* Slurm's fixed TRES ids */
#define WINDOW_FIRST_S 86400      /* first window; then adapted to hold about WINDOW_TARGET jobs */
#define WINDOW_MIN_S 60
#define WINDOW_MAX_S (366 * 86400)
#define WINDOW_TARGET 20000
#define WINDOW_CAP 60000          /* a window returning more is read again, shorter: the memory bound */

typedef struct options {
    const char *since, *until, *month, *last, *by, *account, *user, *partition, *group, *html, *conf, *cluster;
    tbm_rformat_t format;
    int top, efficiency;
} options_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tbmesh report [PERIOD] [--by DIM[,DIM...]] [FILTERS] [--csv | --json | --html FILE]\n"
            "Usage of Macs and Linux nodes from Slurm's accounting: node-, CPU- and gres/tbmesh-hours, jobs by\n"
            "state, waiting times, job sizes, utilisation of each Mac group, failures, efficiency, Mac jobs'\n"
            "GPU-hours and energy (from their records), top users.\n"
            "Period (local time; default: the last 7 days):\n"
            "  --since TIME, --until TIME   YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] or now\n"
            "  --month YYYY-MM              that calendar month\n"
            "  --last N[mhdw]               the last N minutes, hours, days (default unit) or weeks\n"
            "Grouping (table, CSV and HTML; JSON holds every one):\n"
            "  --by DIM[,DIM...]            kind, group, account, user, partition, backend, state\n"
            "                               (default kind,group,account,user)\n"
            "Filters:\n"
            "  --account A[,A...]  --user U[,U...]  --partition P[,P...]  --group MACGROUP\n"
            "Output (default: an aligned table):\n"
            "  --csv, --json, --html FILE   FILE is one self-contained page with inline SVG charts\n"
            "Other:\n"
            "  --efficiency      also read each job's steps for Slurm's CPU use (TotalCPU): the efficiency\n"
            "                    tables' used and eff columns; as slow as sacct with steps\n"
            "  --top N           top users and accounts listed (default 10)\n"
            "  --conf FILE       tbmesh.conf (default: beside slurm.conf, from SLURM_CONF)\n"
            "  --cluster NAME    the cluster in slurmdbd (default: the one slurmctld names)\n"
            "See tbmesh-report(1).\n");
}

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "tbmesh report: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return 2;
}

static int parse_options(int argc, char **argv, options_t *o)
{
    static const struct option longopts[] = {
        { "since", required_argument, NULL, 's' }, { "until", required_argument, NULL, 'u' },
        { "month", required_argument, NULL, 'm' }, { "last", required_argument, NULL, 'l' },
        { "by", required_argument, NULL, 'b' },    { "account", required_argument, NULL, 'A' },
        { "user", required_argument, NULL, 'U' },  { "partition", required_argument, NULL, 'P' },
        { "group", required_argument, NULL, 'G' }, { "csv", no_argument, NULL, 'c' },
        { "json", no_argument, NULL, 'j' },        { "html", required_argument, NULL, 'H' },
        { "conf", required_argument, NULL, 'C' },  { "cluster", required_argument, NULL, 'K' },
        { "top", required_argument, NULL, 't' },   { "help", no_argument, NULL, 'h' },
        { "efficiency", no_argument, NULL, 'e' },
        { NULL, 0, NULL, 0 } };
    int c, formats = 0;
    long long n;

    memset(o, 0, sizeof(*o));
    o->by = "kind,group,account,user";
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 's': o->since = optarg; break;
        case 'u': o->until = optarg; break;
        case 'm': o->month = optarg; break;
        case 'l': o->last = optarg; break;
        case 'b': o->by = optarg; break;
        case 'A': o->account = optarg; break;
        case 'U': o->user = optarg; break;
        case 'P': o->partition = optarg; break;
        case 'G': o->group = optarg; break;
        case 'c': o->format = TBM_RFMT_CSV; formats++; break;
        case 'j': o->format = TBM_RFMT_JSON; formats++; break;
        case 'H': o->format = TBM_RFMT_HTML; o->html = optarg; formats++; break;
        case 'C': o->conf = optarg; break;
        case 'K': o->cluster = optarg; break;
        case 'e': o->efficiency = 1; break;
        case 't':
            if (tbm_parse_ll(optarg, 10, 1, 1000, &n) < 0)
                return bad("--top %s: give a number from 1 to 1000", optarg);
            o->top = (int)n;
            break;
        case 'h': usage(stdout); exit(0);
        default:
            if (optopt)
                fprintf(stderr, "tbmesh report: option -%c needs a value or is unknown; see tbmesh report --help\n",
                        optopt);
            else
                fprintf(stderr, "tbmesh report: %s is unknown or needs a value; see tbmesh report --help\n",
                        argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc)
        return bad("unexpected argument '%s'; see tbmesh report --help", argv[optind]);
    if (formats > 1)
        return bad("%s", "give one of --csv, --json and --html");
    return 0;
}

static int parse_dims(const char *by, tbm_rdim_t *dims, size_t *n)
{
    char buf[256], *save = NULL, *tok;

    snprintf(buf, sizeof(buf), "%s", by);
    *n = 0;
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == TBM_RDIM_N || tbm_rdim_parse(tok, &dims[*n]) < 0)
            return bad("--by: '%s' is not a grouping: use kind, group, account, user, partition, backend or "
                       "state (comma-separated)", tok);
        (*n)++;
    }
    if (!*n)
        return bad("--by '%s': name at least one grouping", by);
    return 0;
}

static int load_conf(const char *path_opt, tbm_conf_t *conf, char *path, size_t path_len)
{
    tbm_err_t err = { { 0 } };
    size_t len;
    char *buf;

    tbm_conf_init(conf);
    if (path_opt)
        snprintf(path, path_len, "%s", path_opt);
    else
        tbm_conf_default_path(getenv("SLURM_CONF"), path, path_len);
    if (!(buf = tbm_read_file(path, TBM_CONF_MAX_BYTES, &len, &err))) {
        fprintf(stderr, "tbmesh report: cannot read tbmesh.conf (%s): %s; give its place with --conf, or set "
                        "SLURM_CONF to the slurm.conf it sits beside\n", path, err.msg);
        return 2;
    }
    if (tbm_conf_parse(buf, len, path, conf, NULL, &err) < 0) {
        fprintf(stderr, "tbmesh report: %s\n", err.msg);
        free(buf);
        return 2;
    }
    free(buf);
    return 0;
}

/* ---- slurmdbd ---- */

static tbm_slurm_list_t str_list(const char *csv)
{
    tbm_slurm_list_t l = slurm_list_create(free);
    char *dup = strdup(csv), *save = NULL, *tok;

    for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        slurm_list_append(l, strdup(tok));
    free(dup);
    return l;
}

/* Each name of `csv` must be known to slurmdbd as an account (or user): else a clear message. */
static int check_known(void *db, const char *csv, int users)
{
    char *dup = strdup(csv), *save = NULL, *tok;
    int rc = 0;

    for (tok = strtok_r(dup, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        slurmdb_assoc_cond_t cond;
        tbm_slurm_list_t got;
        memset(&cond, 0, sizeof(cond));
        if (users)
            cond.user_list = str_list(tok);
        else
            cond.acct_list = str_list(tok);
        got = slurmdb_associations_get(db, &cond);
        if (!got || slurm_list_count(got) == 0) {
            fprintf(stderr, "tbmesh report: %s '%s' is not known to Slurm's accounting: see `sacctmgr show %s` "
                            "for the names\n", users ? "user" : "account", tok, users ? "user" : "account");
            rc = 2;
        }
        if (got)
            slurm_list_destroy(got);
        slurm_list_destroy(users ? cond.user_list : cond.acct_list);
    }
    free(dup);
    return rc;
}

/* --cluster NAME must be a cluster slurmdbd keeps: else a clear message (and not an empty report). */
static int check_cluster(void *db, const char *name)
{
    slurmdb_cluster_cond_t cond;
    tbm_slurm_list_t got;
    int rc = 0;

    slurmdb_init_cluster_cond(&cond, 0);
    cond.cluster_list = str_list(name);
    got = slurmdb_clusters_get(db, &cond);
    if (!got || slurm_list_count(got) == 0) {
        fprintf(stderr, "tbmesh report: cluster '%s' is not known to Slurm's accounting: see `sacctmgr show "
                        "cluster` for the names\n", name);
        rc = 2;
    }
    if (got)
        slurm_list_destroy(got);
    slurm_list_destroy(cond.cluster_list);
    return rc;
}

static int tbmesh_tres_id(void *db)
{
    slurmdb_tres_cond_t cond;
    tbm_slurm_list_t l;
    tbm_slurm_list_iter_t it;
    slurmdb_tres_rec_t *t;
    int id = -1;

    memset(&cond, 0, sizeof(cond));
    if (!(l = slurmdb_tres_get(db, &cond)))
        return -1;
    it = slurm_list_iterator_create(l);
    while ((t = slurm_list_next(it)))
        if (t->type && t->name && !strcmp(t->type, "gres") && !strcmp(t->name, "tbmesh"))
            id = (int)t->id;
    slurm_list_iterator_destroy(it);
    slurm_list_destroy(l);
    return id;
}

static const char *state_name(uint32_t state)
{
    switch (state & JOB_STATE_BASE) {
    case JOB_PENDING: return "PENDING";
    case JOB_RUNNING: return "RUNNING";
    case JOB_SUSPENDED: return "SUSPENDED";
    case JOB_COMPLETE: return "COMPLETED";
    case JOB_CANCELLED: return "CANCELLED";
    case JOB_FAILED: return "FAILED";
    case JOB_TIMEOUT: return "TIMEOUT";
    case JOB_NODE_FAIL: return "NODE_FAIL";
    case JOB_PREEMPTED: return "PREEMPTED";
    case JOB_BOOT_FAIL: return "BOOT_FAIL";
    case JOB_DEADLINE: return "DEADLINE";
    case JOB_OOM: return "OUT_OF_MEMORY";
    default: return "OTHER";
    }
}

/* The backend a job asked for: `--mlx-backend=X` or `--mlx-backend X` on the submit line it was sent with. */
static const char *backend_of(const char *submit_line, char *buf, size_t len)
{
    const char *p = submit_line ? strstr(submit_line, "--mlx-backend") : NULL;
    size_t n;

    if (!p)
        return NULL;
    p += strlen("--mlx-backend");
    if (*p != '=' && *p != ' ')
        return NULL;
    p++;
    n = strcspn(p, " \t");
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
    return buf;
}

typedef struct run {
    void *db;
    tbm_report_t *r;
    int tbmesh_id;
    tbm_period_t period;
    size_t peak_window_jobs;
    unsigned long long jobs, queries, rows, redone;
    double t_get, t_add;
} run_t;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Slurm's TotalCPU of a job (user + system): slurmdbd keeps it per step, so it is the sum over the job's
 * ended steps, as sacct sums it. */
static double total_cpu_s(const slurmdb_job_rec_t *j)
{
    slurmdb_step_rec_t *st;
    tbm_slurm_list_iter_t it;
    double s = 0;

    if (!j->steps || slurm_list_count(j->steps) == 0)
        return (double)j->tot_cpu_sec + (double)j->tot_cpu_usec / 1e6;
    it = slurm_list_iterator_create(j->steps);
    while ((st = slurm_list_next(it)))
        if ((st->state & JOB_STATE_BASE) >= JOB_COMPLETE)
            s += (double)st->tot_cpu_sec + (double)st->tot_cpu_usec / 1e6;
    slurm_list_iterator_destroy(it);
    return s;
}

static int add_job(run_t *x, const slurmdb_job_rec_t *j)
{
    char backend[32], uid[16];
    tbm_rjob_t rj;
    uint64_t v;
    tbm_err_t err = { { 0 } };

    memset(&rj, 0, sizeof(rj));
    rj.id = j->jobid;
    snprintf(uid, sizeof(uid), "%u", j->uid);
    rj.user = j->user ? j->user : uid;
    rj.account = j->account;
    rj.partition = j->partition;
    rj.state = state_name(j->state);
    rj.nodes = j->nodes;
    rj.backend = backend_of(j->submit_line, backend, sizeof(backend));
    rj.submit = j->submit;
    rj.start = j->start;
    rj.end = j->end;
    rj.alloc_nodes = j->alloc_nodes;
    if (tbm_tres_count(j->tres_alloc_str, TRES_CPU, &v) == 0 && v)
        rj.alloc_cpus = (uint32_t)v;
    else
        rj.alloc_cpus = j->alloc_nodes ? j->req_cpus : 0;
    if (x->tbmesh_id > 0)
        tbm_tres_count(j->alloc_nodes ? j->tres_alloc_str : j->tres_req_str, x->tbmesh_id, &rj.tbmesh_units);
    rj.cpu_used_s = total_cpu_s(j);
    rj.rec_cpu_used_s = -1;           /* the record store's word comes through the report's coverage hook */
    if (tbm_report_add_job(x->r, &rj, &err) < 0) {
        fprintf(stderr, "tbmesh report: %s\n", err.msg);
        return -1;
    }
    x->jobs++;
    return 0;
}

/* One query; its jobs that `keep` accepts are added. *n gets how many slurmdbd returned. */
typedef int (*keep_fn)(const run_t *x, const slurmdb_job_rec_t *j, time_t from, time_t to);

static int fetch(run_t *x, slurmdb_job_cond_t *cond, keep_fn keep, time_t from, time_t to, size_t *n, int *redo)
{
    tbm_slurm_list_iter_t it;
    slurmdb_job_rec_t *j;
    double t0 = now_s(), t1;
    tbm_slurm_list_t l;
    int rc = 0;

    x->queries++;
    if (!(l = slurmdb_jobs_get(x->db, cond))) {
        fprintf(stderr, "tbmesh report: slurmdbd gave no job list (%s): check that slurmdbd runs and that you may "
                        "read the cluster's jobs (sacct should work)\n", tbm_slurm_errstr());
        return -1;
    }
    *n = (size_t)slurm_list_count(l);
    t1 = now_s();
    x->t_get += t1 - t0;
    x->rows += *n;
    if (redo && *n > WINDOW_CAP) {           /* more than memory allows: the caller asks again, shorter */
        *redo = 1;
        x->redone++;
        slurm_list_destroy(l);
        return 0;
    }
    if (*n > x->peak_window_jobs)
        x->peak_window_jobs = *n;
    it = slurm_list_iterator_create(l);
    while (!rc && (j = slurm_list_next(it)))
        if (keep(x, j, from, to))
            rc = add_job(x, j);
    slurm_list_iterator_destroy(it);
    slurm_list_destroy(l);
    x->t_add += now_s() - t1;
    return rc;
}

/* The period's jobs are those sacct -S -E selects: eligible before its end, and ended in it or later or not
 * yet. They are read in two kinds of queries, each job once:
 *   - jobs that ended inside the period, window by window, by their end time and final state: slurmdbd then
 *     asks MariaDB for a range of the job table's time_end index, so a window costs what it holds;
 *   - one query for the jobs still pending or running at the period's end, or ending after it (slurmdbd's
 *     plain time condition, which MariaDB answers by reading the whole job table: once, not per window).
 * Windows adapt to hold about WINDOW_TARGET jobs; one returning more than WINDOW_CAP is read again, shorter:
 * memory is bounded by the window, not by the period. */
static const uint32_t ended_states[] = { JOB_COMPLETE, JOB_CANCELLED, JOB_FAILED, JOB_TIMEOUT, JOB_NODE_FAIL,
                                         JOB_PREEMPTED, JOB_BOOT_FAIL, JOB_DEADLINE, JOB_OOM };

static int keep_ended(const run_t *x, const slurmdb_job_rec_t *j, time_t from, time_t to)
{
    return j->eligible && j->eligible < x->period.until && j->end >= from && j->end < to;
}

static int keep_open(const run_t *x, const slurmdb_job_rec_t *j, time_t from, time_t to)
{
    (void)from;
    (void)to;
    /* an earlier run of a requeued (or resized) job is left out, as sacct leaves it out */
    if (j->end && (j->state & (JOB_REQUEUE | JOB_RESIZING)))
        return 0;
    return j->eligible && j->eligible < x->period.until && (!j->end || j->end >= x->period.until);
}

static int stream_jobs(run_t *x, slurmdb_job_cond_t *cond)
{
    time_t t = x->period.since, w = WINDOW_FIRST_S;
    char num[16];
    size_t i, n;

    /* still open at the period's end: eligible before it, not ended before it */
    cond->usage_start = x->period.until;
    cond->usage_end = x->period.until + 1;
    if (fetch(x, cond, keep_open, 0, 0, &n, NULL) < 0)
        return -1;
    /* ended inside the period */
    cond->state_list = slurm_list_create(free);
    for (i = 0; i < sizeof(ended_states) / sizeof(ended_states[0]); i++) {
        snprintf(num, sizeof(num), "%u", ended_states[i]);
        slurm_list_append(cond->state_list, strdup(num));
    }
    while (t < x->period.until) {
        time_t end = t + w < x->period.until ? t + w : x->period.until;
        int redo = 0;

        cond->usage_start = t;
        cond->usage_end = end - 1;            /* slurmdbd's "time_end between" includes both ends */
        if (fetch(x, cond, keep_ended, t, end, &n, w > WINDOW_MIN_S ? &redo : NULL) < 0) {
            slurm_list_destroy(cond->state_list);
            cond->state_list = NULL;
            return -1;
        }
        if (!redo)
            t = end;
        w = tbm_report_next_window(w, n, WINDOW_TARGET, WINDOW_MIN_S, WINDOW_MAX_S);
    }
    slurm_list_destroy(cond->state_list);
    cond->state_list = NULL;
    return 0;
}

static int stream_events(run_t *x, tbm_slurm_list_t clusters)
{
    slurmdb_event_cond_t cond;
    slurmdb_event_rec_t *e;
    tbm_slurm_list_iter_t it;
    tbm_slurm_list_t l;
    tbm_err_t err = { { 0 } };
    int rc = 0;

    memset(&cond, 0, sizeof(cond));
    cond.cluster_list = clusters;
    cond.event_type = SLURMDB_EVENT_NODE;
    cond.period_start = x->period.since;
    cond.period_end = x->period.until;
    if (!(l = slurmdb_events_get(x->db, &cond))) {
        fprintf(stderr, "tbmesh report: slurmdbd gave no node events (%s): check that slurmdbd runs\n",
                tbm_slurm_errstr());
        return -1;
    }
    it = slurm_list_iterator_create(l);
    while (!rc && (e = slurm_list_next(it))) {
        tbm_revent_t ev = { e->node_name, e->reason, e->period_start, e->period_end };
        if (tbm_report_add_event(x->r, &ev, &err) < 0) {
            fprintf(stderr, "tbmesh report: %s\n", err.msg);
            rc = -1;
        }
    }
    slurm_list_iterator_destroy(it);
    slurm_list_destroy(l);
    return rc;
}

static tbm_slurm_list_t cluster_list(const char *name)
{
    slurm_conf_t *ctl = NULL;
    tbm_slurm_list_t l;

    if (name)
        return str_list(name);
    if (slurm_load_ctl_conf((time_t)0, &ctl) != SLURM_SUCCESS || !ctl || !ctl->cluster_name) {
        if (ctl)
            slurm_free_ctl_conf(ctl);
        return NULL;                  /* slurmctld not reachable: every cluster slurmdbd keeps */
    }
    l = str_list(ctl->cluster_name);
    slurm_free_ctl_conf(ctl);
    return l;
}

static int write_out(tbm_report_t *r, const options_t *o, const tbm_rdim_t *dims, size_t n_dims)
{
    tbm_err_t err = { { 0 } };
    char *text = tbm_report_write(r, o->format, dims, n_dims);
    int rc = 0;

    if (!text) {
        fprintf(stderr, "tbmesh report: out of memory writing the report\n");
        return 1;
    }
    if (o->format == TBM_RFMT_HTML) {
        if (tbm_write_file_atomic(o->html, text, strlen(text), 0644, &err) < 0) {
            fprintf(stderr, "tbmesh report: --html %s: %s\n", o->html, err.msg);
            rc = 1;
        }
    } else if (fputs(text, stdout) == EOF || fflush(stdout) == EOF) {
        fprintf(stderr, "tbmesh report: cannot write the report to standard output\n");
        rc = 1;
    }
    free(text);
    return rc;
}

/* The report's options (ro) from the command line's and tbmesh.conf's (read into conf): the period, the group,
 * the record store (opened into rr). Returns 0, or the exit status (conf is then not held). */
static int report_setup(const options_t *o, tbm_report_opts_t *ro, tbm_conf_t *conf, report_records_t *rr)
{
    tbm_err_t err = { { 0 } };
    char conf_path[PATH_MAX];
    int rc;

    memset(ro, 0, sizeof(*ro));
    ro->now = time(NULL);
    if (tbm_period_from_options(o->since, o->until, o->month, o->last, ro->now, &ro->period, &err) < 0) {
        fprintf(stderr, "tbmesh report: %s\n", err.msg);
        return 2;
    }
    if ((rc = load_conf(o->conf, conf, conf_path, sizeof(conf_path))))
        return rc;
    if (o->group && !tbm_conf_group(conf, o->group)) {
        fprintf(stderr, "tbmesh report: --group %s: no such Mac group in tbmesh.conf; the groups are:", o->group);
        for (size_t i = 0; i < conf->n_groups; i++)
            fprintf(stderr, " %s", conf->groups[i].caps.name);
        fprintf(stderr, "\n");
        tbm_conf_free(conf);
        return 2;
    }
    report_records_open(rr, conf_path, getenv("SLURM_CONF") ? getenv("SLURM_CONF") : "/etc/slurm/slurm.conf",
                        o->cluster);
    ro->conf = conf;
    ro->records_in_use = rr->in_use;
    if (rr->in_use) {
        ro->coverage = report_records_coverage;
        ro->coverage_ctx = rr;
    }
    ro->top = o->top;
    ro->slurm_cpu_unknown = !o->efficiency;
    ro->only_group = o->group;
    return 0;
}

/* Connects to slurmdbd (x->db), checks the names the options filter on and makes the report (x->r) with its
 * notes on what it could not read. Returns 0, or the exit status. */
static int report_open(run_t *x, const options_t *o, const tbm_report_opts_t *ro, const report_records_t *rr)
{
    tbm_err_t err = { { 0 } };
    uint16_t persist_flags = 0;
    int rc = 0;

    if (!(x->db = slurmdb_connection_get(&persist_flags))) {
        fprintf(stderr, "tbmesh report: cannot reach slurmdbd (%s): check AccountingStorageHost in slurm.conf "
                        "and that slurmdbd runs\n", tbm_slurm_errstr());
        return 1;
    }
    if ((o->cluster && (rc = check_cluster(x->db, o->cluster))) ||
        (o->account && (rc = check_known(x->db, o->account, 0))) || (o->user && (rc = check_known(x->db, o->user, 1))))
        return rc;
    x->tbmesh_id = tbmesh_tres_id(x->db);
    if (!(x->r = tbm_report_new(ro, &err))) {
        fprintf(stderr, "tbmesh report: %s\n", err.msg);
        return 1;
    }
    if (!rr->in_use)
        tbm_report_note(x->r, rr->why_not, NULL);
    if (!o->efficiency)
        tbm_report_note(x->r, "Slurm's CPU use (TotalCPU) was not read: the efficiency tables' used and eff columns "
                              "for Linux jobs and Slurm's figure for Mac jobs are empty; add --efficiency to read "
                              "it (each job's steps: as slow as sacct)", NULL);
    if (x->tbmesh_id <= 0)
        tbm_report_note(x->r, "gres/tbmesh is not an accounted TRES (AccountingStorageTRES=gres/tbmesh in "
                              "slurm.conf): its hours are shown as 0", NULL);
    return 0;
}

/* What slurmdbd is asked for: whole jobs, of the cluster, accounts, partitions and users the options name. */
static void job_cond_make(slurmdb_job_cond_t *cond, const options_t *o)
{
    memset(cond, 0, sizeof(*cond));
    cond->flags = JOBCOND_FLAG_NO_TRUNC;      /* whole jobs: the core clips them to the period itself */
    if (!o->efficiency)
        cond->flags |= JOBCOND_FLAG_NO_STEP;     /* steps are one more query each in slurmdbd: only for CPU use */
    cond->db_flags = SLURMDB_JOB_FLAG_NOTSET; /* 0 would mean "only jobs without scheduling flags" */
    cond->cluster_list = cluster_list(o->cluster);
    if (o->account)
        cond->acct_list = str_list(o->account);
    if (o->partition)
        cond->partition_list = str_list(o->partition);
    if (o->user) {
        /* slurmdbd filters on uids */
        char *dup = strdup(o->user), *save = NULL, *tok;
        cond->userid_list = slurm_list_create(free);
        for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            char idbuf[16];
            struct passwd *pw = getpwnam(tok);
            snprintf(idbuf, sizeof(idbuf), "%u", pw ? pw->pw_uid : (unsigned)-2);
            slurm_list_append(cond->userid_list, strdup(idbuf));
        }
        free(dup);
    }
}

/* Frees the lists job_cond_make made. */
static void job_cond_free(slurmdb_job_cond_t *cond)
{
    if (cond->cluster_list)
        slurm_list_destroy(cond->cluster_list);
    if (cond->acct_list)
        slurm_list_destroy(cond->acct_list);
    if (cond->partition_list)
        slurm_list_destroy(cond->partition_list);
    if (cond->userid_list)
        slurm_list_destroy(cond->userid_list);
}

int report_main(int argc, char **argv)
{
    options_t o;
    tbm_rdim_t dims[TBM_RDIM_N];
    size_t n_dims;
    tbm_conf_t conf;
    tbm_report_opts_t ro;
    report_records_t rr;
    slurmdb_job_cond_t cond;
    run_t x;
    int rc;

    if ((rc = parse_options(argc, argv, &o)) || (rc = parse_dims(o.by, dims, &n_dims)))
        return rc;
    if ((rc = report_setup(&o, &ro, &conf, &rr)))
        return rc;

    slurm_init(NULL);
    memset(&x, 0, sizeof(x));
    x.period = ro.period;
    if ((rc = report_open(&x, &o, &ro, &rr)))
        goto out;
    job_cond_make(&cond, &o);
    rc = stream_jobs(&x, &cond) < 0 || stream_events(&x, cond.cluster_list) < 0 ? 1 : 0;
    job_cond_free(&cond);
    if (!rc) {
        report_records_notes(&rr, x.r);
        rc = write_out(x.r, &o, dims, n_dims);
    }
    if (getenv("TBMESH_REPORT_STATS"))
        fprintf(stderr, "tbmesh report: %llu jobs in %llu queries, at most %zu jobs held at once; %llu rows "
                "fetched, %llu windows read again; %.1f s in slurmdb_jobs_get, %.1f s adding\n", x.jobs,
                x.queries, x.peak_window_jobs, x.rows, x.redone, x.t_get, x.t_add);
out:
    tbm_report_free(x.r);
    if (x.db)
        slurmdb_connection_close(&x.db);
    tbm_conf_free(&conf);
    slurm_fini();
    return rc;
}
