/* repro.c: `tbmesh repro show|diff|verify|export|rerun|sync`: reading the record store as the caller (a user
 * sees only their own records), and sync, root's back-fill of what a job could not write itself. */
#include "config.h"
#include "repro.h"
#include "repro_sync.h"
#include "store.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "conf.h"
#include "fileio.h"
#include "json_read.h"
#include "scalar.h"
#include "utctime.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tbmesh repro COMMAND [--conf TBMESH.CONF] [--record-dir DIR] ...\n"
            "  show JOBID [--json]          the job's record as a readable page (or its JSON)\n"
            "  diff JOBID_A JOBID_B [--json] every difference, classified, and whether the runs can be compared\n"
            "  verify JOBID                 the record is the one root sealed on the node (exit 0), else exit 1\n"
            "  export JOBID --ro-crate DIR  a Workflow Run RO-Crate of the record in DIR (new, or empty and yours)\n"
            "  rerun JOBID                  the sbatch line that repeats the run (same options and inputs)\n"
            "  sync [-S SINCE] [-j JOBID]   (root) fill in from Slurm's accounting what jobs could not write\n"
            "  digest [--cache FILE] PATH... what --repro-data records of PATH (SHA-256, size; folders: manifest)\n"
            "Records live in RecordDir (tbmesh.conf(5)); see tbmesh-repro(1).\n");
}

typedef struct opts {
    const char *conf, *dir, *crate, *since, *jobs, *cache;
    int json;
} opts_t;

static int open_store(const opts_t *o, tbm_store_t *st)
{
    char conf[4096];
    const char *slurm_conf = getenv("SLURM_CONF") ? getenv("SLURM_CONF") : "/etc/slurm/slurm.conf";
    tbm_err_t err = { { 0 } };

    if (o->conf)
        snprintf(conf, sizeof(conf), "%s", o->conf);
    else
        tbm_conf_default_path(slurm_conf, conf, sizeof(conf));
    if (tbm_store_open(st, conf, slurm_conf, o->dir, &err) < 0) {
        fprintf(stderr, "tbmesh repro: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int job_arg(const char *s, uint32_t *job)
{
    long long v;

    if (!s || tbm_parse_ll(s, 10, 1, 4294967294LL, &v) < 0) {
        fprintf(stderr, "tbmesh repro: '%s' is not a job id (a whole number, e.g. 1234)\n", s ? s : "");
        return -1;
    }
    *job = (uint32_t)v;
    return 0;
}

static json_object *load(const tbm_store_t *st, uint32_t job, char *sha)
{
    tbm_err_t err = { { 0 } };
    json_object *rec = tbm_store_load(st, job, sha, &err);

    if (!rec)
        fprintf(stderr, "tbmesh repro: %s\n", err.msg);
    return rec;
}

/* ---- show ---- */

static const char *s_or(json_object *o, const char *key, const char *dflt)
{
    json_object *v;
    const char *why;

    if (!json_object_object_get_ex(o, key, &v))
        return dflt;
    if (tbm_record_is_absent(v, &why))
        return "absent";
    return json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array)
               ? dflt : json_object_get_string(v);
}

static const char *absent_why(json_object *o, const char *key)
{
    json_object *v;
    const char *why = NULL;

    return json_object_object_get_ex(o, key, &v) && tbm_record_is_absent(v, &why) ? why : NULL;
}

static void when(json_object *job, const char *key, char *buf, size_t len)
{
    json_object *v = tbm_json_typed(job, key, json_type_int);

    if (!v || tbm_utc_iso((time_t)json_object_get_int64(v), TBM_UTC_EXTENDED, buf, len) < 0)
        snprintf(buf, len, "-");
}

static void show_fact(const char *label, json_object *o, const char *key)
{
    const char *why = absent_why(o, key);

    if (why)
        printf("%s absent (%s)", label, why);
    else
        printf("%s %s", label, s_or(o, key, "-"));
}

static void show_digests(const char *label, json_object *list)
{
    size_t i, n = list ? json_object_array_length(list) : 0;

    for (i = 0; i < n; i++) {
        json_object *d = json_object_array_get_idx(list, i);
        if (tbm_json_str(d, "why"))
            printf("  %s %s: not digested (%s)\n", label, s_or(d, "path", "?"), tbm_json_str(d, "why"));
        else
            printf("  %s %s: %s sha256 %s, %s bytes%s%s%s\n", label, s_or(d, "path", "?"), s_or(d, "kind", "?"),
                   s_or(d, "sha256", "?"), s_or(d, "size", "?"), tbm_json_str(d, "kind") &&
                   !strcmp(tbm_json_str(d, "kind"), "folder") ? ", " : "",
                   tbm_json_str(d, "kind") && !strcmp(tbm_json_str(d, "kind"), "folder") ? s_or(d, "files", "?") : "",
                   tbm_json_str(d, "kind") && !strcmp(tbm_json_str(d, "kind"), "folder") ? " files" : "");
    }
}

/* One usage entry: "mac01 step 0 task 0: user 1.00 s, system 0.01 s, max RSS 2048 KiB, wall 1.20 s (source)",
 * or why the node could not say; a Mac agent's task then has a line of its GPU and energy. */
static void show_usage(json_object *u)
{
    char task[32] = "", wall[48] = "", gpu[512];
    json_object *v;

    if ((v = tbm_json_typed(u, "task", json_type_int)) && json_object_get_int64(v) >= 0)
        snprintf(task, sizeof(task), " task %lld", (long long)json_object_get_int64(v));
    if (tbm_json_str(u, "why")) {
        printf("  %s step %s%s: absent (%s) (%s)\n", s_or(u, "node", "?"), s_or(u, "step", "?"), task,
               tbm_json_str(u, "why"), s_or(u, "source", "?"));
        return;
    }
    if ((v = tbm_json_typed(u, "wall_us", json_type_int)))
        snprintf(wall, sizeof(wall), ", wall %.2f s", json_object_get_int64(v) / 1e6);
    printf("  %s step %s%s: user %.2f s, system %.2f s, max RSS %lld KiB%s (%s)\n", s_or(u, "node", "?"),
           s_or(u, "step", "?"), task, json_object_get_int64(json_object_object_get(u, "cpu_user_us")) / 1e6,
           json_object_get_int64(json_object_object_get(u, "cpu_system_us")) / 1e6,
           (long long)json_object_get_int64(json_object_object_get(u, "max_rss_kb")), wall, s_or(u, "source", "?"));
    tbm_usage_gpu_text(u, gpu, sizeof(gpu));
    if (gpu[0])
        printf("    %s\n", gpu);
}

static void show_node(json_object *n)
{
    json_object *py = tbm_json_typed(n, "python", json_type_object), *macos = tbm_json_typed(n, "macos", json_type_object);
    json_object *links = tbm_json_typed(n, "links", json_type_array), *d;
    size_t i;

    printf("  %s (rank %s, %s mode)\n    ", s_or(n, "name", "?"), s_or(n, "rank", "?"), s_or(n, "mode", "?"));
    if (macos && !tbm_record_is_absent(macos, NULL))
        printf("macOS %s (%s)", s_or(macos, "version", "?"), s_or(macos, "build", "?"));
    else
        show_fact("macOS", n, "macos");
    printf("; ");
    show_fact("chip", n, "chip");
    printf("; ");
    show_fact("memory", n, "memory_bytes");
    printf("\n    ");
    if (py && !tbm_record_is_absent(py, NULL)) {
        d = tbm_json_typed(py, "distributions", json_type_array);
        printf("Python %s (%s): ", s_or(py, "prefix", "?"), s_or(py, "source", "?"));
        show_fact("mlx", py, "mlx");
        printf(", ");
        show_fact("mlx-lm", py, "mlx_lm");
        printf(", ");
        show_fact("mlx-metal", py, "mlx_metal");
        printf("; %zu distributions", d ? json_object_array_length(d) : 0);
    } else {
        show_fact("Python", n, "python");
    }
    printf("\n    ");
    show_fact("Open MPI", n, "openmpi");
    printf("; ");
    show_fact("RDMA", n, "rdma");
    printf("\n");
    if (links && !tbm_record_is_absent(links, NULL))
        for (i = 0; i < json_object_array_length(links); i++) {
            json_object *l = json_object_array_get_idx(links, i);
            printf("    link %s: Thunderbolt %s, %s Gb/s to %s, %s\n", s_or(l, "iface", "?"), s_or(l, "port", "?"),
                   s_or(l, "speed_gbps", "?"), s_or(l, "peer", "nothing"), s_or(l, "ipv4", "no address"));
        }
    else
        printf("    links absent (%s)\n", absent_why(n, "links") ? absent_why(n, "links") : "none recorded");
    if ((d = tbm_json_typed(n, "backend_env", json_type_object)) && !tbm_record_is_absent(d, NULL)) {
        json_object_object_foreach(d, k, v)
            printf("    %s=%s\n", k, json_object_get_string(v));
    } else if (absent_why(n, "backend_env")) {
        printf("    backend variables absent (%s)\n", absent_why(n, "backend_env"));
    }
}

static void show_page(json_object *rec, const char *sha, int sealed_ok, const char *seal_msg)
{
    json_object *job = tbm_json_typed(rec, "job", json_type_object);
    json_object *submit = tbm_json_typed(rec, "submit", json_type_object);
    json_object *declared = tbm_json_typed(rec, "declared", json_type_object);
    json_object *results = tbm_json_typed(rec, "results", json_type_object);
    json_object *git = tbm_json_typed(submit, "git", json_type_object), *v, *model;
    char t1[32], t2[32], t3[32];
    size_t i;

    printf("Job %s on %s: %s, exit %s (record: %s phase, %s)\n", s_or(job, "id", "?"), s_or(job, "cluster", "?"),
           s_or(job, "state", "?"), s_or(job, "exit_code", "-"), s_or(job, "phase", "?"),
           sealed_ok ? "sealed by root" : seal_msg);
    printf("  record sha256 %s\n", sha);
    printf("  user %s, account %s, partition %s, group %s\n", s_or(job, "user", "?"), s_or(job, "account", "?"),
           s_or(job, "partition", "?"), s_or(job, "group", "?"));
    v = tbm_json_typed(job, "nodes", json_type_array);
    printf("  %zu node%s:", v ? json_object_array_length(v) : 0, v && json_object_array_length(v) == 1 ? "" : "s");
    for (i = 0; v && i < json_object_array_length(v); i++)
        printf(" %s", json_object_get_string(json_object_array_get_idx(v, i)));
    printf("\n  backend %s (asked for: %s)\n", s_or(job, "backend_chosen", "-"), s_or(job, "backend_requested", "auto"));
    when(job, "submit_time", t1, sizeof(t1));
    when(job, "start_time", t2, sizeof(t2));
    when(job, "end_time", t3, sizeof(t3));
    printf("  submitted %s, started %s, ended %s\n", t1, t2, t3);
    printf("Code\n");
    if (!submit || tbm_record_is_absent(submit, NULL))
        printf("  absent (%s)\n", absent_why(rec, "submit") ? absent_why(rec, "submit") : "no submit half");
    else {
        if (git && !tbm_record_is_absent(git, NULL))
            printf("  git %s on %s, %s, remote %s\n", s_or(git, "commit", "?"), s_or(git, "branch", "-"),
                   tbm_json_typed(git, "dirty", json_type_boolean) &&
                   json_object_get_boolean(tbm_json_typed(git, "dirty", json_type_boolean)) ? "DIRTY (uncommitted changes)"
                                                                                               : "clean",
                   s_or(git, "remote", "-"));
        else
            printf("  git absent (%s)\n", absent_why(submit, "git") ? absent_why(submit, "git") : "-");
        printf("  folder %s, script %s (sha256 %s)\n", s_or(submit, "work_dir", "-"), s_or(submit, "script", "-"),
               s_or(submit, "script_sha256", "-"));
        printf("  %s\n", s_or(submit, "sbatch_line", "-"));
    }
    printf("Declared\n");
    model = tbm_json_typed(declared, "model", json_type_object);
    printf("  model %s%s%s, seed %s, note %s\n", model ? s_or(model, "id", "?") : "-",
           model && tbm_json_str(model, "revision") ? "@" : "", model ? s_or(model, "revision", "") : "",
           s_or(declared, "seed", "-"), s_or(declared, "note", "-"));
    show_digests("data", tbm_json_typed(declared, "data", json_type_array));
    printf("Nodes\n");
    v = tbm_json_typed(rec, "nodes", json_type_array);
    for (i = 0; v && i < json_object_array_length(v); i++)
        show_node(json_object_array_get_idx(v, i));
    printf("Results\n");
    v = tbm_json_typed(results, "nodes", json_type_array);
    for (i = 0; v && i < json_object_array_length(v); i++) {
        json_object *n = json_object_array_get_idx(v, i);
        printf("  %s: exit %s%s%s\n", s_or(n, "name", "?"), s_or(n, "exit_code", "?"),
               tbm_json_typed(n, "signal", json_type_int) && json_object_get_int(json_object_object_get(n, "signal")) ? ", signal " : "",
               tbm_json_typed(n, "signal", json_type_int) && json_object_get_int(json_object_object_get(n, "signal")) ? s_or(n, "signal", "") : "");
    }
    if (tbm_json_str(results, "failed_step"))
        printf("  failed step %s\n", tbm_json_str(results, "failed_step"));
    show_digests("output", tbm_json_typed(results, "outputs", json_type_array));
    v = tbm_json_typed(results, "stderr_tail", json_type_array);
    for (i = 0; v && i < json_object_array_length(v); i++)
        printf("  stderr| %s\n", json_object_get_string(json_object_array_get_idx(v, i)));
    printf("Resource use of the work\n");
    v = tbm_json_typed(rec, "usage", json_type_array);
    if (!v)
        printf("  absent (%s)\n", absent_why(rec, "usage") ? absent_why(rec, "usage") : "none recorded");
    for (i = 0; v && i < json_object_array_length(v); i++)
        show_usage(json_object_array_get_idx(v, i));
    if (v) {   /* the tasks' GPU and energy added up (none for Slurm's entries of direct mode) */
        tbm_usage_totals_t t;
        char text[512];
        tbm_record_usage_totals(rec, &t);
        tbm_usage_totals_text(&t, text, sizeof(text));
        if (t.tasks)
            printf("  in all: %s\n", text);
    }
}

/* The seal's verdict: 0 sealed by root and matching, else -1 with err. */
static int check_seal(const tbm_store_t *st, uint32_t job, const char *sha, tbm_seal_what_t *what, tbm_err_t *err)
{
    size_t len;
    char *seal = tbm_store_get(st, job, "seal", &len, err);
    int rc;

    if (!seal)
        return -1;
    while (len > 0 && (seal[len - 1] == '\n' || seal[len - 1] == ' '))
        seal[--len] = '\0';
    rc = tbm_seal_check(st, seal, job, sha, what, err);
    free(seal);
    return rc;
}

static int cmd_show(const tbm_store_t *st, const opts_t *o, char **args, int n)
{
    char sha[TBM_SHA256_HEX];
    tbm_err_t err = { { 0 } };
    json_object *rec;
    uint32_t job;
    int ok;

    if (n != 1)
        return fprintf(stderr, "tbmesh repro show: give one job id\n"), 2;
    if (job_arg(args[0], &job) < 0)
        return 2;
    if (!(rec = load(st, job, sha)))
        return 1;
    if (o->json) {
        printf("%s\n", json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE));
    } else {
        ok = check_seal(st, job, sha, NULL, &err) == 0;
        show_page(rec, sha, ok, ok ? "" : "NOT VERIFIED: see tbmesh repro verify");
    }
    json_object_put(rec);
    return 0;
}

/* Which version of the job's record the sealed one is, told against Slurm's accounting: the end of a job
 * puts its record's digest into the job's AdminComment, which only root and SlurmUser may set. 0 it is the
 * current one (or nothing says otherwise; said), -1 an earlier one. */
static int which_version(uint32_t job, const char *sha, const tbm_seal_what_t *what)
{
    char state[64] = "", sealed[96];
    char *admin = NULL;
    const char *digest = NULL;
    json_object *sum = NULL;
    tbm_err_t err = { { 0 } };
    int rc = 0;

    snprintf(sealed, sizeof(sealed), "phase %s, run %lld", what->phase[0] ? what->phase : "not named", what->restarts);
    if (repro_acct_of(job, state, sizeof(state), &admin) < 0) {
        printf("job %u: verified: sealed by root on the node (%s), sha256 %s; Slurm's accounting could not be asked "
               "which version is the current one\n", job, sealed, sha);
        return 0;
    }
    if (!strncmp(admin, TBM_SUMMARY_PREFIX, strlen(TBM_SUMMARY_PREFIX)) && (sum = tbm_summary_decode(admin, &err)))
        digest = tbm_json_str(sum, "record");
    switch (tbm_record_version(sha, what->phase, digest)) {
    case TBM_VERSION_CURRENT:
        printf("job %u: verified: the current record, sealed by root on the node (%s) and named by Slurm's "
               "accounting, sha256 %s\n", job, sealed, sha);
        break;
    case TBM_VERSION_SYNC_LATER:
        printf("job %u: verified: sealed by root with `tbmesh repro sync` (%s) after the job's end record, which Slurm's "
               "accounting names (sha256 %.16s...), sha256 %s\n", job, sealed, digest, sha);
        break;
    case TBM_VERSION_EARLIER:
        fprintf(stderr, "tbmesh repro verify: job %u: FAILED: sealed by root (%s), but not the job's current record: "
                "Slurm's accounting names sha256 %.16s..., this is %.16s...: an earlier version was put back; ask "
                "root to run `tbmesh repro sync -j %u`\n", job, sealed, digest, sha, job);
        rc = -1;
        break;
    case TBM_VERSION_START:
        printf("job %u: verified: the start record (%s) of a job that is %s; its end record replaces it, sha256 %s\n",
               job, sealed, state[0] ? state : "not over", sha);
        break;
    case TBM_VERSION_UNNAMED:
        printf("job %u: verified: sealed by root on the node (%s), sha256 %s; Slurm's accounting names no record "
               "digest (the job's end could not set its AdminComment), so it cannot tell this from another sealed "
               "version\n", job, sealed, sha);
        break;
    }
    json_object_put(sum);
    free(admin);
    return rc;
}

static int cmd_verify(const tbm_store_t *st, char **args, int n)
{
    char sha[TBM_SHA256_HEX];
    tbm_err_t err = { { 0 } };
    tbm_seal_what_t what;
    json_object *rec;
    uint32_t job;
    size_t len;
    char *text;
    int rc;

    if (n != 1)
        return fprintf(stderr, "tbmesh repro verify: give one job id\n"), 2;
    if (job_arg(args[0], &job) < 0)
        return 2;
    /* the digest is over the stored bytes; a record that no longer reads is reported as such too */
    if (!(text = tbm_store_get(st, job, "json", &len, &err)))
        return fprintf(stderr, "tbmesh repro verify: %s\n", err.msg), 1;
    tbm_sha256_hex(text, len, sha);
    rec = tbm_record_parse(text, len, &err);
    free(text);
    if (check_seal(st, job, sha, &what, &err) < 0) {
        fprintf(stderr, "tbmesh repro verify: job %u: FAILED: %s\n", job, err.msg);
        json_object_put(rec);
        return 1;
    }
    if (!rec) {
        fprintf(stderr, "tbmesh repro verify: job %u: sealed, but it does not read: %s\n", job, err.msg);
        return 1;
    }
    json_object_put(rec);
    rc = which_version(job, sha, &what);
    return rc < 0 ? 1 : 0;
}

static int cmd_diff(const tbm_store_t *st, const opts_t *o, char **args, int n)
{
    json_object *a, *b, *out, *items;
    tbm_err_t err = { { 0 } };
    uint32_t ja, jb;
    tbm_diff_t d;
    size_t i;
    int c, rc = 0;

    if (n != 2)
        return fprintf(stderr, "tbmesh repro diff: give two job ids\n"), 2;
    if (job_arg(args[0], &ja) < 0 || job_arg(args[1], &jb) < 0)
        return 2;
    a = load(st, ja, NULL);
    b = a ? load(st, jb, NULL) : NULL;
    if (!a || !b) {
        json_object_put(a);
        return 1;
    }
    if (tbm_record_diff(a, b, &d, &err) < 0) {
        fprintf(stderr, "tbmesh repro diff: %s\n", err.msg);
        rc = 1;
    } else if (o->json) {
        out = json_object_new_object();
        items = json_object_new_array();
        for (i = 0; i < d.n; i++) {
            json_object *it = json_object_new_object();
            json_object_object_add(it, "class", json_object_new_string(tbm_diff_class_name(d.items[i].cls)));
            json_object_object_add(it, "path", json_object_new_string(d.items[i].path));
            json_object_object_add(it, "a", json_object_new_string(d.items[i].a));
            json_object_object_add(it, "b", json_object_new_string(d.items[i].b));
            json_object_array_add(items, it);
        }
        json_object_object_add(out, "differences", items);
        json_object_object_add(out, "verdict", json_object_new_string(tbm_verdict_name(d.verdict)));
        json_object_object_add(out, "why", json_object_new_string(d.why));
        printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(out);
    } else {
        printf("Job %u against job %u: %zu difference%s\n", ja, jb, d.n, d.n == 1 ? "" : "s");
        for (c = 0; c < TBM_DIFF_NCLASSES; c++) {
            int head = 0;
            for (i = 0; i < d.n; i++) {
                if ((int)d.items[i].cls != c)
                    continue;
                if (!head++)
                    printf("%s\n", tbm_diff_class_name((tbm_diff_class_t)c));
                printf("  %s: %s -> %s\n", d.items[i].path, d.items[i].a, d.items[i].b);
            }
        }
        printf("Verdict: %s: %s\n", tbm_verdict_name(d.verdict), d.why);
    }
    if (rc == 0)
        tbm_diff_free(&d);
    json_object_put(a);
    json_object_put(b);
    return rc;
}

/* Write the crate's two files into DIR, a folder of the caller's own made for them (lib/fileio_at.c): when
 * root exports, a link planted on the way or at DIR by another user cannot send its writes elsewhere, and no
 * file already there is replaced. 0, or -1 with err. */
static int export_write(const char *dir, const char *record, size_t len, const char *crate, tbm_err_t *err)
{
    int fd = tbm_dir_make_own(dir, 0755, err), rc;

    if (fd < 0)
        return -1;
    rc = tbm_write_file_at(fd, "record.json", record, len, 0644, err) < 0 ||
                 tbm_write_file_at(fd, "ro-crate-metadata.json", crate, strlen(crate), 0644, err) < 0
             ? tbm_errprefix(err, "%s/", dir)
             : 0;
    close(fd);
    return rc;
}

static int cmd_export(const tbm_store_t *st, const opts_t *o, char **args, int n)
{
    char sha[TBM_SHA256_HEX];
    tbm_err_t err = { { 0 } };
    json_object *rec;
    uint32_t job;
    size_t len;
    char *text, *crate;
    int rc = 1;

    if (n != 1 || !o->crate)
        return fprintf(stderr, "tbmesh repro export: give one job id and --ro-crate DIR\n"), 2;
    if (job_arg(args[0], &job) < 0)
        return 2;
    if (!(rec = load(st, job, sha)))
        return 1;
    tbm_redact_tree(rec, NULL, 0);   /* records are redacted when written; once more costs nothing */
    text = tbm_record_text(rec, &len, &err);
    crate = text ? tbm_record_crate(rec, "record.json", &err) : NULL;
    if (crate && export_write(o->crate, text, len, crate, &err) == 0) {
        printf("%s: Workflow Run RO-Crate of job %u (ro-crate-metadata.json, record.json)\n", o->crate, job);
        rc = 0;
    }
    if (rc)
        fprintf(stderr, "tbmesh repro export: %s\n", err.msg);
    free(text);
    free(crate);
    json_object_put(rec);
    return rc;
}

/* A word for a shell command line: as is when plain, else in single quotes. */
static void shell_word(const char *s)
{
    if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:@+%") == strlen(s)) {
        printf("%s", s);
        return;
    }
    putchar('\'');
    for (; *s; s++)
        if (*s == '\'')
            printf("'\\''");
        else
            putchar(*s);
    putchar('\'');
}

/* The declared inputs as --repro-* options. */
static void declared_options(json_object *declared, uint32_t id)
{
    json_object *data, *model;
    char note[300];
    size_t i;

    if ((model = tbm_json_typed(declared, "model", json_type_object))) {
        char m[1200];
        snprintf(m, sizeof(m), "%s%s%s", s_or(model, "id", ""), tbm_json_str(model, "revision") ? "@" : "",
                 s_or(model, "revision", ""));
        printf(" --repro-model=");
        shell_word(m);
    }
    if ((data = tbm_json_typed(declared, "data", json_type_array)) && json_object_array_length(data)) {
        printf(" --repro-data=");
        for (i = 0; i < json_object_array_length(data); i++) {
            printf("%s", i ? "," : "");
            shell_word(s_or(json_object_array_get_idx(data, i), "path", ""));
        }
    }
    if (tbm_json_str(declared, "seed"))
        printf(" --repro-seed=%s", tbm_json_str(declared, "seed"));
    if ((data = tbm_json_typed(declared, "outputs", json_type_array)) && json_object_array_length(data)) {
        printf(" --repro-output=");
        for (i = 0; i < json_object_array_length(data); i++) {
            printf("%s", i ? "," : "");
            shell_word(json_object_get_string(json_object_array_get_idx(data, i)));
        }
    }
    snprintf(note, sizeof(note), "rerun of job %u", id);
    printf(" --repro-note=");
    shell_word(note);
}

/* The recorded command line after "sbatch", less its --repro-* options (given again from the record), words
 * as the plug-in quoted them; without a recorded line, the recorded options and the script. */
static void rest_of_line(json_object *submit)
{
    const char *line = tbm_json_str(submit, "sbatch_line"), *p;
    json_object *opts = tbm_json_typed(submit, "options", json_type_object);
    char word[8192];
    int first = 1, skip_next = 0;
    size_t n;

    if (!line) {
        if (opts) {
            json_object_object_foreach(opts, k, v) {
                if (!strncmp(k, "repro", 5))
                    continue;
                printf(" --%s=", k);
                shell_word(json_object_get_string(v));
            }
        }
        printf(" ");
        shell_word(s_or(submit, "script", "SCRIPT"));
        return;
    }
    for (p = line; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        n = 0;
        while (*p && *p != ' ' && n < sizeof(word) - 1) {
            if (*p == '\'') {   /* a quoted part, as the plug-in wrote it */
                for (p++; *p && *p != '\'' && n < sizeof(word) - 1; p++)
                    word[n++] = *p;
                if (*p)
                    p++;
            } else {
                word[n++] = *p++;
            }
        }
        word[n] = '\0';
        if (first) {   /* sbatch itself */
            first = 0;
            continue;
        }
        if (skip_next) {
            skip_next = 0;
            continue;
        }
        if (!strncmp(word, "--repro", 7)) {
            skip_next = !strchr(word, '=');
            continue;
        }
        printf(" ");
        shell_word(word);
    }
}

static int cmd_rerun(const tbm_store_t *st, char **args, int n)
{
    json_object *rec, *submit, *declared, *git, *job;
    uint32_t id;

    if (n != 1)
        return fprintf(stderr, "tbmesh repro rerun: give one job id\n"), 2;
    if (job_arg(args[0], &id) < 0 || !(rec = load(st, id, NULL)))
        return 2;
    job = tbm_json_typed(rec, "job", json_type_object);
    submit = tbm_json_typed(rec, "submit", json_type_object);
    declared = tbm_json_typed(rec, "declared", json_type_object);
    git = tbm_json_typed(submit, "git", json_type_object);
    if (!submit || (!tbm_json_str(submit, "script") && !tbm_json_str(submit, "sbatch_line"))) {
        fprintf(stderr, "tbmesh repro rerun: job %u has no submit half (its batch script is not known): it was "
                "not submitted with sbatch, or before records were on\n", id);
        json_object_put(rec);
        return 1;
    }
    printf("# job %u, recorded %s\n", id, s_or(job, "state", "?"));
    if (git && tbm_json_str(git, "commit")) {
        printf("# code: git checkout %s in %s", tbm_json_str(git, "commit"), s_or(submit, "work_dir", "."));
        if (tbm_json_typed(git, "dirty", json_type_boolean) && json_object_get_boolean(json_object_object_get(git, "dirty")))
            printf(" (the run's tree had uncommitted changes, which the record does not hold)");
        printf("\n");
    }
    printf("# check the batch script against sha256 %s and the inputs with tbmesh repro diff %u NEWJOB\n",
           s_or(submit, "script_sha256", "?"), id);
    printf("cd ");
    shell_word(s_or(submit, "work_dir", "."));
    printf(" && sbatch");
    declared_options(declared, id);
    rest_of_line(submit);
    printf("\n");
    json_object_put(rec);
    return 0;
}

/* digest: what --repro-data records, with the speed; --cache FILE keeps digests of unchanged files. */
static int cmd_digest(const opts_t *o, char **args, int n)
{
    tbm_digest_cache_t *c = tbm_digest_cache_new();
    tbm_err_t err = { { 0 } };
    long long t0 = tbm_now_us(), us, cpu;
    struct rusage ru;
    size_t len;
    char *text;
    int i, rc = 0;

    if (n < 1)
        return fprintf(stderr, "tbmesh repro digest: give one or more paths\n"), 2;
    if (o->cache && (text = tbm_read_file(o->cache, TBM_RECORD_MAX, &len, &err))) {
        if (tbm_digest_cache_load(c, text, len, &err) < 0)
            fprintf(stderr, "tbmesh repro digest: %s\n", err.msg);
        free(text);
    }
    for (i = 0; i < n; i++) {
        json_object *e = tbm_digest_path(args[i], c);
        rc |= tbm_json_str(e, "why") != NULL;
        printf("%s\n", json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(e);
    }
    us = tbm_now_us() - t0;
    getrusage(RUSAGE_SELF, &ru);
    cpu = ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec;
    fprintf(stderr, "digest: %zu files read, %llu bytes in %.3f s (%.2f GB/s); CPU %.3f s (%.2f GB/s per core)\n",
            tbm_digest_cache_reads(c), (unsigned long long)tbm_digest_cache_bytes(c), us / 1e6,
            us > 0 ? (double)tbm_digest_cache_bytes(c) / (double)us / 1e3 : 0.0, cpu / 1e6,
            cpu > 0 ? (double)tbm_digest_cache_bytes(c) / (double)cpu / 1e3 : 0.0);
    if (o->cache && (text = tbm_digest_cache_text(c))) {
        if (tbm_write_file_atomic(o->cache, text, strlen(text), 0600, &err) < 0)
            fprintf(stderr, "tbmesh repro digest: %s\n", err.msg);
        free(text);
    }
    tbm_digest_cache_free(c);
    return rc;
}

int repro_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "conf", required_argument, NULL, 'c' }, { "record-dir", required_argument, NULL, 'd' },
        { "json", no_argument, NULL, 'J' }, { "ro-crate", required_argument, NULL, 'r' },
        { "since", required_argument, NULL, 'S' }, { "jobs", required_argument, NULL, 'j' },
        { "cache", required_argument, NULL, 'C' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
    };
    opts_t o = { NULL, NULL, NULL, NULL, NULL, NULL, 0 };
    tbm_store_t st;
    const char *cmd;
    int c;

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
        return usage(argc < 2 ? stderr : stdout), argc < 2 ? 2 : 0;
    cmd = argv[1];
    argc--, argv++;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hS:j:", longopts, NULL)) != -1) {   /* options anywhere */
        switch (c) {
        case 'c': o.conf = optarg; break;
        case 'd': o.dir = optarg; break;
        case 'J': o.json = 1; break;
        case 'r': o.crate = optarg; break;
        case 'S': o.since = optarg; break;
        case 'j': o.jobs = optarg; break;
        case 'C': o.cache = optarg; break;
        case 'h': usage(stdout); return 0;
        default: return 2;
        }
    }
    if (!strcmp(cmd, "digest"))
        return cmd_digest(&o, argv + optind, argc - optind);
    if (open_store(&o, &st) < 0)
        return 1;
    if (!strcmp(cmd, "show"))
        return cmd_show(&st, &o, argv + optind, argc - optind);
    if (!strcmp(cmd, "diff"))
        return cmd_diff(&st, &o, argv + optind, argc - optind);
    if (!strcmp(cmd, "verify"))
        return cmd_verify(&st, argv + optind, argc - optind);
    if (!strcmp(cmd, "export"))
        return cmd_export(&st, &o, argv + optind, argc - optind);
    if (!strcmp(cmd, "rerun"))
        return cmd_rerun(&st, argv + optind, argc - optind);
    if (!strcmp(cmd, "sync"))
        return argc - optind ? (fprintf(stderr, "tbmesh repro sync: unexpected '%s'\n", argv[optind]), 2)
                             : repro_sync(&st, o.since, o.jobs);
    fprintf(stderr, "tbmesh repro: unknown command '%s'; see tbmesh repro --help\n", cmd);
    return 2;
}
