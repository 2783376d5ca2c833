/* metrics_read.c: what `tbmesh metrics` reads: tbmesh.conf, Slurm through scontrol and squeue (lib/slurmstate.c
 * reads their text), and the health check's verdict files, each problem logged once (see metrics_read.h). */
#include "config.h"
#include "metrics_read.h"
#include "clock.h"
#include "fileio.h"
#include "json_read.h"
#include "run.h"
#include "store.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define OUTPUT_MAX (16u << 20)   /* the most taken of a command's output (squeue of a large cluster) */

void mx_log(const char *fmt, ...)
{
    char when[32], line[1024];
    time_t now = time(NULL);
    struct tm tm;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
    fprintf(stderr, "%s tbmesh metrics[%ld]: %s\n", when, (long)getpid(), line);
    fflush(stderr);
}

/* A problem said once: msg (NULL or "": none now) is logged when it differs from what was said; when the
 * problem goes, `back` is logged (when not NULL). */
static void say_once(mx_said_t said, const char *msg, const char *back)
{
    if (msg && *msg) {
        if (strcmp(said, msg)) {
            mx_log("%s", msg);
            snprintf(said, sizeof(mx_said_t), "%s", msg);
        }
    } else if (said[0]) {
        if (back)
            mx_log("%s", back);
        said[0] = '\0';
    }
}

void mx_state_init(mx_state_t *st)
{
    memset(st, 0, sizeof(*st));
    tbm_conf_init(&st->conf);
    st->records_missing = -1;
}

static void drop_nodes(mx_state_t *st)
{
    free(st->verdicts);
    free(st->have_verdict);
    free(st->said_mac);
    st->verdicts = NULL;
    st->have_verdict = NULL;
    st->said_mac = NULL;
}

void mx_state_free(mx_state_t *st)
{
    tbm_conf_free(&st->conf);
    tbm_slurm_nodes_free(&st->nodes);
    tbm_slurm_jobs_free(&st->jobs);
    drop_nodes(st);
    free(st->complete);
    st->complete = NULL;
}

/* conf becomes st's; what was said about each Mac's verdict file stays said (by the Mac's name). */
static void take_conf(mx_state_t *st, tbm_conf_t *conf)
{
    size_t n = conf->n_nodes ? conf->n_nodes : 1, i;
    tbm_health_verdict_t *verdicts = calloc(n, sizeof(*verdicts));
    const tbm_health_verdict_t **have = calloc(n, sizeof(*have));
    mx_said_t *said = calloc(n, sizeof(*said));
    int old;

    if (!verdicts || !have || !said) {
        mx_log("out of memory for %zu Macs", n);
        exit(3);
    }
    for (i = 0; st->have_conf && i < conf->n_nodes; i++)
        if ((old = tbm_conf_node(&st->conf, conf->nodes[i].name)) >= 0)
            memcpy(said[i], st->said_mac[old], sizeof(said[i]));
    drop_nodes(st);
    tbm_conf_free(&st->conf);
    st->conf = *conf;
    st->have_conf = 1;
    st->verdicts = verdicts;
    st->have_verdict = have;
    st->said_mac = said;
}

int mx_read_conf(const mx_source_t *src, mx_state_t *st)
{
    tbm_err_t err = { { 0 } };
    struct stat now;
    tbm_conf_t conf;
    char *text = NULL, msg[sizeof(mx_said_t)];
    size_t len;

    if (st->have_conf && stat(src->conf_path, &now) == 0 && now.st_ino == st->conf_st.st_ino &&
        now.st_size == st->conf_st.st_size && now.st_mtim.tv_sec == st->conf_st.st_mtim.tv_sec &&
        now.st_mtim.tv_nsec == st->conf_st.st_mtim.tv_nsec)
        return 0;
    tbm_conf_init(&conf);
    if (stat(src->conf_path, &now) < 0 || !(text = tbm_read_file(src->conf_path, TBM_CONF_MAX_BYTES, &len, &err)) ||
        tbm_conf_parse(text, len, src->conf_path, &conf, NULL, &err) < 0) {
        if (!tbm_erris(&err))
            tbm_errprintf(&err, "%s: %s", src->conf_path, strerror(errno));
        free(text);
        tbm_conf_free(&conf);
        snprintf(msg, sizeof(msg), "tbmesh.conf: %.440s%s", err.msg, st->have_conf ? " (the last one read is kept)" : "");
        say_once(st->said_conf, msg, NULL);
        return st->have_conf ? 0 : -1;
    }
    free(text);
    if (st->have_conf)
        mx_log("%s changed: read again (%zu groups, %zu Macs)", src->conf_path, conf.n_groups, conf.n_nodes);
    st->said_conf[0] = '\0';
    take_conf(st, &conf);
    st->conf_st = now;
    return 0;
}

/* Run argv; its output in *r (run_out_free it). The exit status, or -1 with why. */
static int ask(const char *const *argv, int timeout_ms, run_out_t *r, char *why, size_t len)
{
    extern char **environ;
    run_opts_t o = { .env = environ, .timeout_ms = timeout_ms, .max = OUTPUT_MAX, .stderr_to = RUN_STDERR_CAPTURE };
    tbm_err_t err = { { 0 } };
    int rc = run_command(argv, &o, r, &err);
    const char *e = r->err && r->err[0] ? r->err : r->out ? r->out : "", *last = e, *p;

    for (p = e; *p; p++)   /* its last line that says something (scontrol's "fatal: ..." comes last) */
        if (p[0] == '\n' && p[1] && p[1] != '\n')
            last = p + 1;
    if (rc < 0)
        snprintf(why, len, "%.500s", err.msg);
    else if (rc != 0)
        snprintf(why, len, "%s exited with %d: %.*s", argv[0], rc, (int)(strcspn(last, "\n") < 300 ? strcspn(last, "\n")
                 : 300), last);
    else
        why[0] = '\0';
    return rc;
}

/* scontrol --all --oneliner show node MACS: *out on an answer (1), else 0 with why. */
static int read_nodes(const mx_source_t *src, mx_state_t *st, tbm_slurm_nodes_t *out, char *why, size_t len)
{
    char **names = calloc(st->conf.n_nodes + 1, sizeof(*names)), *list = NULL, msg[sizeof(mx_said_t)];
    const char *argv[] = { "scontrol", "--all", "--oneliner", "show", "node", NULL, NULL };
    tbm_slurm_nodes_t ns;
    tbm_err_t err = { { 0 } };
    run_out_t r;
    size_t i;
    int rc;

    for (i = 0; names && i < st->conf.n_nodes; i++)
        names[i] = st->conf.nodes[i].name;
    if (!names || !(list = tbm_hostlist_compress(names, st->conf.n_nodes)))
        return free(names), snprintf(why, len, "out of memory"), 0;
    argv[5] = list[0] ? list : NULL;
    rc = ask(argv, src->timeout_ms, &r, why, len);
    free(names);
    free(list);
    if (rc >= 0 && tbm_slurm_nodes_parse(r.out, r.out_len, &ns, &err) < 0) {
        snprintf(why, len, "%.500s", err.msg);
        rc = -1;
    }
    /* scontrol says "Node NAME not found" and exits 1 for a name Slurm does not know: an answer all the same */
    if (rc == 0 || (rc == 1 && (ns.n || ns.not_found))) {
        if (ns.skipped)
            snprintf(msg, sizeof(msg), "scontrol printed %zu line%s that do not read as a node; the first: %.300s",
                     ns.skipped, ns.skipped == 1 ? "" : "s", ns.first_error);
        say_once(st->said_nodes, ns.skipped ? msg : NULL, NULL);
        *out = ns;
        why[0] = '\0';
        rc = 1;
    } else {
        if (rc >= 0)
            tbm_slurm_nodes_free(&ns);
        rc = 0;
    }
    run_out_free(&r);
    return rc;
}

/* squeue's running jobs into *out on an answer (1), else 0 with why. */
static int read_jobs(const mx_source_t *src, mx_state_t *st, tbm_slurm_jobs_t *out, char *why, size_t len)
{
    const char *argv[] = { "squeue", "--noheader", "--all", "--states=RUNNING", "--format=" TBM_SQUEUE_FORMAT, NULL };
    char msg[sizeof(mx_said_t)];
    tbm_slurm_jobs_t js;
    tbm_err_t err = { { 0 } };
    run_out_t r;
    int rc = ask(argv, src->timeout_ms, &r, why, len);

    if (rc == 0 && tbm_slurm_jobs_parse(r.out, r.out_len, &js, &err) < 0) {
        snprintf(why, len, "%.500s", err.msg);
        rc = -1;
    }
    run_out_free(&r);
    if (rc != 0)
        return 0;
    if (js.skipped)
        snprintf(msg, sizeof(msg), "squeue printed %zu line%s that do not read as a job; the first: %.300s", js.skipped,
                 js.skipped == 1 ? "" : "s", js.first_error);
    say_once(st->said_jobs, js.skipped ? msg : NULL, NULL);
    *out = js;
    return 1;
}

/* Slurm's nodes and (unless --no-jobs) jobs: kept as one reading when every command answered. */
static void read_slurm(const mx_source_t *src, mx_state_t *st)
{
    char why[600] = "", msg[sizeof(mx_said_t)];
    tbm_slurm_nodes_t ns;
    tbm_slurm_jobs_t js = { 0 };
    int nodes = read_nodes(src, st, &ns, why, sizeof(why)), jobs = 1;

    if (nodes && !src->no_jobs)
        jobs = read_jobs(src, st, &js, why, sizeof(why));
    st->slurm_up = nodes && jobs;
    if (st->slurm_up) {
        tbm_slurm_nodes_free(&st->nodes);
        tbm_slurm_jobs_free(&st->jobs);
        st->nodes = ns;
        st->jobs = js;
        st->have_nodes = 1;
        st->have_jobs = !src->no_jobs;
        st->nodes_at = tbm_now_ms();
    } else if (nodes) {
        tbm_slurm_nodes_free(&ns);
    }
    snprintf(msg, sizeof(msg), "Slurm did not answer: %s (tbmesh_slurm_up is 0; the Macs' series from Slurm "
             "go once the last answer is older than --max-age)", why);
    say_once(st->said_slurm, st->slurm_up ? NULL : msg, "Slurm answers again");
}

/* The verdict files of the health folder, for every Mac of tbmesh.conf. */
static void read_verdicts(const mx_source_t *src, mx_state_t *st)
{
    char name[TBM_HOSTNAME_MAX + 8], msg[sizeof(mx_said_t)];
    tbm_err_t err = { { 0 } };
    size_t i, len;
    char *text;
    int dir = tbm_dir_open_owned(src->health_dir, 0, &err);

    for (i = 0; i < st->conf.n_nodes; i++)
        st->have_verdict[i] = NULL;
    if (dir < 0) {
        snprintf(msg, sizeof(msg), "no health verdicts: %s%s", err.msg, errno == ENOENT ? " (the health check "
                 "makes it: macnode check --verdict-dir, as etc/tbmesh-healthcheck runs it)" : "");
        say_once(st->said_dir, msg, "the health folder reads again");
        return;
    }
    say_once(st->said_dir, NULL, "the health folder reads again");
    for (i = 0; i < st->conf.n_nodes; i++) {
        const char *node = st->conf.nodes[i].name;
        msg[0] = '\0';
        err.msg[0] = '\0';
        if (tbm_health_verdict_file(node, name, sizeof(name)) < 0)
            continue;
        text = tbm_read_file_owned_at(dir, src->health_dir, name, TBM_HEALTH_VERDICT_BYTES, 0, &len, &err);
        if (text && tbm_health_verdict_parse(text, len, node, &st->verdicts[i], &err) == 0)
            st->have_verdict[i] = &st->verdicts[i];
        else if (text || errno != ENOENT)
            snprintf(msg, sizeof(msg), "%s/%s not used: %s", src->health_dir, name, err.msg);
        free(text);
        say_once(st->said_mac[i], msg, NULL);
    }
    close(dir);
}

static int cmp_id(const void *a, const void *b)
{
    uint32_t x = ((const mx_seen_record_t *)a)->job, y = ((const mx_seen_record_t *)b)->job;

    return x < y ? -1 : x > y;
}

/* 1 when the job's record file is the one found complete before (same file, size and time), else 0. */
static int seen_unchanged(const mx_state_t *st, const mx_seen_record_t *now)
{
    const mx_seen_record_t *was = st->complete ? bsearch(now, st->complete, st->n_complete, sizeof(*now), cmp_id)
                                               : NULL;

    return was && was->dev == now->dev && was->ino == now->ino && was->size == now->size &&
           was->mtime.tv_sec == now->mtime.tv_sec && was->mtime.tv_nsec == now->mtime.tv_nsec;
}

/* 1 when job's record in the store is complete (its end, or `tbmesh repro sync`, wrote it last), else 0. */
static int record_complete(const tbm_store_t *store, uint32_t job)
{
    tbm_err_t err = { { 0 } };
    json_object *rec = tbm_store_load(store, job, NULL, &err);
    const char *phase = rec ? tbm_json_str(json_object_object_get(rec, "job"), "phase") : NULL;
    int done = tbm_record_phase_complete(phase);

    json_object_put(rec);
    return done;
}

/* The Mac jobs that ended in the window (sacct) looked up in the record store: how many lack a complete
 * record, into st->records_missing (-1 when it cannot be told). A job found complete is read again only when
 * its record's file changed (a stat each time: a record removed or rewritten is seen). */
static void read_records(const mx_source_t *src, mx_state_t *st)
{
    char since[32], why[600] = "", msg[sizeof(mx_said_t)], ids[200] = "";
    const char *argv[] = { "sacct", "-a", "-X", "-n", "-P", "-o", TBM_SACCT_ENDED_FIELDS, "-S", since, "-E", "now",
                           NULL };
    tbm_err_t err = { { 0 } };
    tbm_ended_jobs_t e = { 0 };
    tbm_store_t store;
    run_out_t r;
    mx_seen_record_t *complete, now;
    struct stat sb;
    char path[TBM_RECORD_PATH_MAX + 128];
    size_t i, n = 0, used = 0;
    long missing = 0;
    int rc;

    if (!src->records_window_s || src->no_jobs) {
        st->records_missing = -1;
        return;
    }
    if (st->records_at && tbm_now_ms() - st->records_at < (long long)src->records_every_s * 1000)
        return;
    st->records_at = tbm_now_ms();
    snprintf(since, sizeof(since), "now-%d", src->records_window_s);
    if (tbm_store_open(&store, src->conf_path, getenv("SLURM_CONF"), NULL, &err) < 0) {
        snprintf(why, sizeof(why), "the record store: %.500s", err.msg);
        rc = -1;
    } else if ((rc = ask(argv, src->timeout_ms, &r, why, sizeof(why))) == 0) {
        if (tbm_sacct_ended_parse(r.out, r.out_len, (long long)time(NULL), src->records_grace_s, &e, &err) < 0) {
            snprintf(why, sizeof(why), "%.500s", err.msg);
            rc = -1;
        }
        run_out_free(&r);
    } else {
        run_out_free(&r);
    }
    if (rc != 0) {
        st->records_missing = -1;
        snprintf(msg, sizeof(msg), "Mac jobs' records not looked up: %s (tbmesh_job_records_missing is left out)", why);
        say_once(st->said_records, msg, "Mac jobs' records are looked up again");
        return;
    }
    say_once(st->said_records, NULL, "Mac jobs' records are looked up again");
    complete = calloc(e.n + 1, sizeof(*complete));
    for (i = 0; complete && i < e.n; i++) {
        tbm_store_path(&store, e.id[i], "json", path, sizeof(path));
        memset(&now, 0, sizeof(now));
        now.job = e.id[i];
        if (lstat(path, &sb) == 0) {
            now.dev = sb.st_dev, now.ino = sb.st_ino, now.size = sb.st_size, now.mtime = sb.st_mtim;
            if (seen_unchanged(st, &now) || record_complete(&store, e.id[i])) {
                complete[n++] = now;
                continue;
            }
        }
        e.id[missing++] = e.id[i];   /* the missing ones, kept in place (i >= missing) */
    }
    for (i = (size_t)missing; i-- > 0 && used < sizeof(ids) - 16;)   /* the latest first */
        used += (size_t)snprintf(ids + used, sizeof(ids) - used, "%s%u", used ? "," : "", e.id[i]);
    if (!complete) {
        mx_log("out of memory looking up %zu jobs' records", e.n);
        st->records_missing = -1;
        tbm_ended_jobs_free(&e);
        return;
    }
    qsort(complete, n, sizeof(*complete), cmp_id);
    free(st->complete);
    st->complete = complete;
    st->n_complete = n;
    st->records_missing = missing;
    if (missing)
        snprintf(msg, sizeof(msg), "%ld Mac job%s ended without a complete record in %.150s/%s (job%s %s%s%s): run "
                 "`tbmesh repro sync -j JOBS` as root", missing, missing == 1 ? "" : "s", store.set.dir,
                 store.cluster, missing == 1 ? "" : "s", ids, i != (size_t)-1 ? ",..." : "",
                 missing > 1 ? ", the latest first" : "");
    say_once(st->said_missing, missing ? msg : NULL, "every Mac job that ended has its record");
    if (e.skipped)
        snprintf(msg, sizeof(msg), "sacct printed %zu line%s that do not read; the first: %.300s", e.skipped,
                 e.skipped == 1 ? "" : "s", e.first_error);
    say_once(st->said_sacct, e.skipped ? msg : NULL, NULL);
    tbm_ended_jobs_free(&e);
}

void mx_read(const mx_source_t *src, mx_state_t *st)
{
    mx_read_conf(src, st);
    read_slurm(src, st);
    read_verdicts(src, st);
    read_records(src, st);
}
