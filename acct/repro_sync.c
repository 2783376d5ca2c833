/* repro_sync.c: `tbmesh repro sync`: the back-fill from sacct (see repro_sync.h). */
#include "config.h"
#include "repro_sync.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hostlist.h"
#include "json_read.h"
#include "run.h"
#include "scalar.h"
#include "slurmstate.h"

#define SACCT_FIELDS "JobIDRaw,State,ExitCode,Submit,Start,End,User,UID,Account,Partition,NodeList,AdminComment"
#define SACCT_MAX (64u << 20)
#define SACCT_MS 300000   /* the longest sacct may take */

enum { F_ID, F_STATE, F_EXIT, F_SUBMIT, F_START, F_END, F_USER, F_UID, F_ACCOUNT, F_PARTITION, F_NODES, F_ADMIN, F_N };

/* sacct's output (no shell; at most SACCT_MS), malloc'd, or NULL with the reason on stderr. runs: every run of a
 * requeued job, each a line of its own (sacct -D), the earliest first. */
static char *run_sacct(const char *since, const char *jobs, int runs)
{
    extern char **environ;
    run_opts_t o = { .env = environ, .timeout_ms = SACCT_MS, .max = SACCT_MAX, .stderr_to = RUN_STDERR_PASS };
    const char *argv[16];
    tbm_err_t err = { { 0 } };
    run_out_t r;
    int n = 0, rc;

    argv[n++] = "sacct", argv[n++] = "-a", argv[n++] = "-X", argv[n++] = "-n", argv[n++] = "-P";
    argv[n++] = "-o", argv[n++] = SACCT_FIELDS;
    if (runs)
        argv[n++] = "-D";
    if (since)
        argv[n++] = "-S", argv[n++] = since;
    if (jobs)
        argv[n++] = "-j", argv[n++] = jobs;
    argv[n] = NULL;
    rc = run_command(argv, &o, &r, &err);
    if (rc < 0)
        fprintf(stderr, "tbmesh repro: cannot run sacct: %s\n", err.msg);
    else if (rc != 0)
        fprintf(stderr, "tbmesh repro: sacct failed (exit %d): is slurmdbd reachable?\n", rc);
    if (rc == 0)
        return r.out;
    run_out_free(&r);
    return NULL;
}

static void add_time(json_object *job, const char *key, const char *s)
{
    long long t = tbm_sacct_time(s, strlen(s));

    if (t > 0)
        json_object_object_add(job, key, json_object_new_int64(t));
}

/* Bring rec's job facts to what sacct says. */
static void apply_sacct(json_object *rec, char **f)
{
    json_object *j = json_object_object_get(rec, "job");
    char **names = NULL, state[64];
    size_t n = 0, i;
    long long uid, code, sig;
    tbm_err_t err;

    snprintf(state, sizeof(state), "%s", f[F_STATE]);
    strtok(state, " ");
    json_object_object_add(j, "state", json_object_new_string(state));
    json_object_object_add(j, "phase", json_object_new_string("sync"));
    json_object_object_add(j, "user", json_object_new_string(f[F_USER]));
    if (tbm_parse_ll(f[F_UID], 10, 0, 4294967294LL, &uid) == 0)
        json_object_object_add(j, "uid", json_object_new_int64(uid));
    if (*f[F_ACCOUNT])
        json_object_object_add(j, "account", json_object_new_string(f[F_ACCOUNT]));
    if (*f[F_PARTITION])
        json_object_object_add(j, "partition", json_object_new_string(f[F_PARTITION]));
    if (strcmp(f[F_NODES], "None assigned") != 0 && tbm_hostlist_expand(f[F_NODES], &names, &n, &err) == 0) {
        json_object *a = json_object_new_array();
        for (i = 0; i < n; i++)
            json_object_array_add(a, json_object_new_string(names[i]));
        json_object_object_add(j, "nodes", a);
        tbm_hostlist_free(names, n);
    }
    add_time(j, "submit_time", f[F_SUBMIT]);
    add_time(j, "start_time", f[F_START]);
    add_time(j, "end_time", f[F_END]);
    if (sscanf(f[F_EXIT], "%lld:%lld", &code, &sig) == 2) {
        json_object_object_add(j, "exit_code", json_object_new_int64(code));
        json_object_object_add(j, "signal", json_object_new_int64(sig));
    }
}

/* The resource use of the parts in the store: all of them for a record its batch step never completed (a node
 * failed, the step was killed); for a completed one, those of steps that ended after the batch step had merged
 * the others (a node that failed answered late). 1 when the record changed. */
static int parts_usage(json_object *rec, json_object *parts, int completed)
{
    json_object *late, *usage = tbm_json_typed(rec, "usage", json_type_array);
    size_t i;

    if (!json_object_array_length(parts)) {
        if (completed)
            return 0;
        json_object_object_add(rec, "usage", tbm_record_absent("the job ended before its batch step could complete "
                                                               "the record, and no step's end left its resource "
                                                               "use"));
        return 1;
    }
    late = tbm_record_usage_of_parts(parts, 0);
    if (!completed || !usage || !json_object_is_type(late, json_type_array)) {
        json_object_object_add(rec, "usage", late);
        return 1;
    }
    for (i = 0; i < json_object_array_length(late); i++)
        json_object_array_add(usage, json_object_get(json_object_array_get_idx(late, i)));
    json_object_put(late);
    return 1;
}

static int sync_one(const tbm_store_t *st, char **f)
{
    char state[64], sha[TBM_SHA256_HEX];
    tbm_err_t err = { { 0 } };
    json_object *summary, *rec, *parts = NULL, *names = NULL;
    long long id, uid;
    const char *phase, *had;
    int fresh, merged = 0, stored = 0;

    snprintf(state, sizeof(state), "%s", f[F_STATE]);
    strtok(state, " ");
    if (strncmp(f[F_ADMIN], TBM_SUMMARY_PREFIX, strlen(TBM_SUMMARY_PREFIX)) != 0 || !tbm_slurm_state_final(state) ||
        tbm_parse_ll(f[F_ID], 10, 1, 4294967294LL, &id) < 0)
        return 0;   /* not a Mac job with records, or not over yet */
    {
        struct passwd *pw = getpwnam(f[F_USER]);
        if (pw)
            uid = (long long)pw->pw_uid;
        else if (tbm_parse_ll(f[F_UID], 10, 1, 4294967294LL, &uid) < 0) {
            fprintf(stderr, "tbmesh repro sync: job %lld: its user %s is not known here; run sync where it is\n", id,
                    f[F_USER]);
            return -1;
        }
    }
    rec = tbm_store_load(st, (uint32_t)id, NULL, &err);
    fresh = rec == NULL;
    if (rec) {
        json_object *j = json_object_object_get(rec, "job");
        int completed;
        phase = tbm_json_str(j, "phase");
        had = tbm_json_str(j, "state");
        completed = tbm_record_phase_complete(phase);
        parts = tbm_store_parts(st, (uint32_t)id, &names);
        merged = parts_usage(rec, parts, completed);
        if (completed && had && !strcmp(had, state) && !merged) {
            json_object_put(parts);
            json_object_put(names);
            json_object_put(rec);
            return 0;   /* up to date */
        }
    } else {
        if (!(summary = tbm_summary_decode(f[F_ADMIN], &err))) {
            fprintf(stderr, "tbmesh repro sync: job %lld: %s\n", id, err.msg);
            return -1;
        }
        /* a job cancelled while pending has a start time (its end) but no node */
        rec = tbm_record_of_summary(summary, (uint32_t)id, st->cluster, state,
                                    *f[F_NODES] && strcmp(f[F_NODES], "None assigned") && tbm_sacct_time(f[F_START], strlen(f[F_START])) > 0);
        json_object_put(summary);
    }
    had = fresh ? NULL : strdup(tbm_json_str(json_object_object_get(rec, "job"), "state"));
    apply_sacct(rec, f);
    tbm_redact_tree(rec, NULL, 0);
    if (tbm_record_validate(rec, &err) < 0 || (stored = tbm_store_record(st, rec, (uid_t)uid, sha, &err)) < 0) {
        fprintf(stderr, "tbmesh repro sync: job %lld: %s\n", id, err.msg);
        free((char *)had);
        json_object_put(parts);
        json_object_put(names);
        json_object_put(rec);
        return -1;
    }
    if (stored == 1)
        fprintf(stderr, "tbmesh repro sync: job %lld: %s\n", id, err.msg);
    if (parts && json_object_array_length(parts))
        tbm_store_parts_remove(st, (uint32_t)id, names);   /* merged into the record now */
    if (fresh)
        printf("job %lld: %s: record made from its AdminComment summary and Slurm's accounting\n", id, state);
    else
        printf("job %lld: %s -> %s: record brought up to date from Slurm's accounting%s\n", id, had ? had : "?",
               state, merged ? " and its steps' parts (resource use)" : "");
    free((char *)had);
    json_object_put(parts);
    json_object_put(names);
    json_object_put(rec);
    return 0;
}

/* Split one line of sacct's output into its fields; 1 when it holds them all (AdminComment last). */
static int split_line(char *line, char **f)
{
    char *p = line;
    int n;

    for (n = 0; n < F_N; n++) {
        f[n] = p;
        if ((p = strchr(p, '|')))
            *p++ = '\0';
        else
            break;
    }
    return n == F_ADMIN;   /* AdminComment is the last field; the split stopped there */
}

int repro_acct_of(uint32_t job, char *state, size_t len, char **admin_comment)
{
    char id[16], *out, *line, *save = NULL, *f[F_N];
    int rc = -1;

    *admin_comment = NULL;
    snprintf(id, sizeof(id), "%u", job);
    if (!(out = run_sacct(NULL, id, 0)))
        return -1;
    for (line = strtok_r(out, "\n", &save); line && rc < 0; line = strtok_r(NULL, "\n", &save))
        if (split_line(line, f) && !strcmp(f[F_ID], id)) {
            snprintf(state, len, "%s", f[F_STATE]);
            state[strcspn(state, " ")] = '\0';
            *admin_comment = strdup(f[F_ADMIN]);
            rc = *admin_comment ? 0 : -1;
        }
    free(out);
    return rc;
}

/* An earlier run of a requeued job (sacct -D's line f, its run-th): the record its start left (JOB.runN.json,
 * kept when the next run wrote its own) is brought to what Slurm recorded of that run (a node failure, a
 * requeue), when it is not complete yet. 0 (done or nothing to do), -1 said on stderr. */
static int sync_earlier(const tbm_store_t *st, char **f, long long run)
{
    char state[64];
    tbm_err_t err = { { 0 } };
    json_object *rec;
    const char *phase, *had;
    char *was;
    long long id, uid;
    int rc;

    snprintf(state, sizeof(state), "%s", f[F_STATE]);
    strtok(state, " ");
    if (tbm_parse_ll(f[F_ID], 10, 1, 4294967294LL, &id) < 0 || tbm_parse_ll(f[F_UID], 10, 0, 4294967294LL, &uid) < 0 ||
        !(rec = tbm_store_load_run(st, (uint32_t)id, run, &err)))
        return 0;   /* that run left no record (it was queued again before it started) */
    phase = tbm_json_str(json_object_object_get(rec, "job"), "phase");
    if (tbm_record_phase_complete(phase)) {
        json_object_put(rec);
        return 0;
    }
    had = tbm_json_str(json_object_object_get(rec, "job"), "state");
    was = strdup(had ? had : "?");
    apply_sacct(rec, f);
    tbm_redact_tree(rec, NULL, 0);
    rc = tbm_record_validate(rec, &err) < 0 ? -1 : tbm_store_record_run(st, rec, (uid_t)uid, &err);
    if (rc != 0)
        fprintf(stderr, "tbmesh repro sync: job %lld run %lld: %s\n", id, run, err.msg);
    else
        printf("job %lld run %lld: %s -> %s: the earlier run's record brought up to date from Slurm's accounting\n",
               id, run, was ? was : "?", state);
    free(was);
    json_object_put(rec);
    return rc < 0 ? -1 : 0;
}

/* The current record's run (job.restarts) of job id, or -1. */
static long long current_run(const tbm_store_t *st, const char *id_text)
{
    tbm_err_t err = { { 0 } };
    json_object *rec, *rs;
    long long id, run = -1;

    if (tbm_parse_ll(id_text, 10, 1, 4294967294LL, &id) < 0 || !(rec = tbm_store_load(st, (uint32_t)id, NULL, &err)))
        return -1;
    rs = tbm_json_typed(tbm_json_typed(rec, "job", json_type_object), "restarts", json_type_int);
    if (rs)
        run = (long long)json_object_get_int64(rs);
    json_object_put(rec);
    return run;
}

typedef struct {
    uint32_t id;
    size_t pos;
} job_line_t;

static int by_job_then_place(const void *a, const void *b)
{
    const job_line_t *x = a, *y = b;

    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* sacct's lines, split into their fields (*fields[i] NULL for a line that does not split), in *fields, their
 * number in *count. 0, or -1 when out of memory (what was split is in *fields all the same, to free). */
static int split_lines(char *out, char ****fields, size_t *count)
{
    char *line, *save = NULL, ***f = NULL, ***grown;
    size_t n = 0, cap = 0;

    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (n == cap) {
            if (!(grown = realloc(f, (cap = cap ? 2 * cap : 256) * sizeof(*f))))
                break;
            f = grown;
        }
        if ((f[n] = malloc(F_N * sizeof(char *))) && !split_line(line, f[n])) {
            free(f[n]);
            f[n] = NULL;
        }
        n++;
    }
    *fields = f;
    *count = n;
    return line ? -1 : 0;   /* stopped early: out of memory */
}

/* Each job of the lines: its last run's line brings its record (JOB.json) up to date; its earlier runs' lines
 * (sacct -D, the earliest first) their records (JOB.runN.json) when the job's every run is there (as many lines
 * as the current record's run and one; else its runs began before the window). 0, or -1 when one failed. */
static int sync_jobs(const tbm_store_t *st, char ***fields, size_t n)
{
    job_line_t *order = calloc(n ? n : 1, sizeof(*order));
    size_t i, j, k = 0, nth;
    long long id;
    int rc = 0;

    if (!order) {
        fprintf(stderr, "tbmesh repro sync: out of memory\n");
        return -1;
    }
    for (i = 0; i < n; i++)
        if (fields[i] && tbm_parse_ll(fields[i][F_ID], 10, 1, 4294967294LL, &id) == 0)
            order[k].id = (uint32_t)id, order[k++].pos = i;
    qsort(order, k, sizeof(*order), by_job_then_place);
    for (i = 0; i < k; i = j) {
        for (j = i; j < k && order[j].id == order[i].id; j++)
            ;
        if (sync_one(st, fields[order[j - 1].pos]) < 0)
            rc = -1;
        if (j - i > 1 && current_run(st, fields[order[i].pos][F_ID]) == (long long)(j - i) - 1)
            for (nth = 0; i + nth + 1 < j; nth++)
                if (sync_earlier(st, fields[order[i + nth].pos], (long long)nth) < 0)
                    rc = -1;
    }
    free(order);
    return rc;
}

int repro_sync(const tbm_store_t *st, const char *since, const char *jobs)
{
    char *out, ***fields = NULL;
    size_t n, i;
    int rc;

    if (geteuid() != 0) {
        fprintf(stderr, "tbmesh repro sync: run it as root (it writes records and seals them)\n");
        return 1;
    }
    if (!(out = run_sacct(since, jobs, 1)))
        return 1;
    if (split_lines(out, &fields, &n) < 0) {
        fprintf(stderr, "tbmesh repro sync: out of memory\n");
        rc = 1;
    } else {
        rc = sync_jobs(st, fields, n) < 0;
    }
    for (i = 0; i < n; i++)
        free(fields[i]);
    free(fields);
    free(out);
    return rc;
}
