/* accept_run.c: running what `tbmesh accept` needs (see accept_run.h): a program with a time limit and both its
 * outputs captured (no shell; common/run.c), and a step's Slurm job through salloc, its job id read from
 * salloc's lines. */
#include "config.h"
#include "accept_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "finding.h"
#include "run.h"

extern char **environ;

#define KILL_GRACE_MS 5000

void accept_out_free(accept_out_t *o)
{
    free(o->out);
    free(o->err);
    o->out = o->err = NULL;
}

int accept_run(char *const argv[], int seconds, accept_out_t *o)
{
    run_opts_t opts = { .env = environ, .timeout_ms = seconds * 1000, .grace_ms = KILL_GRACE_MS,
                        .max = ACCEPT_OUT_MAX, .truncate = 1, .stderr_to = RUN_STDERR_CAPTURE };
    tbm_err_t err = { { 0 } };
    run_out_t r;
    char *why;

    memset(o, 0, sizeof(*o));
    run_command((const char *const *)argv, &opts, &r, &err);
    o->status = r.status;
    o->timed_out = r.timed_out;
    if (r.status < 0 && asprintf(&why, "%s\n", err.msg) >= 0) {   /* it did not run: why, as its stderr */
        free(r.err);
        r.err = why;
    }
    o->out = r.out ? r.out : strdup("");
    o->err = r.err ? r.err : strdup("");
    return o->status;
}

/* The job id in salloc's "... job allocation N" lines, else in the script's "tbmesh-accept-job N" line. */
static uint32_t job_id(const accept_job_t *j)
{
    const char *s = j->o.err ? strstr(j->o.err, "job allocation ") : NULL;
    unsigned long v = 0;

    if (s)
        v = strtoul(s + strlen("job allocation "), NULL, 10);
    if (!v && j->o.out && (s = strstr(j->o.out, "tbmesh-accept-job ")))
        v = strtoul(s + strlen("tbmesh-accept-job "), NULL, 10);
    return v <= UINT32_MAX ? (uint32_t)v : 0;
}

int accept_job_run(const char *name, const char *partition, char *const opts[], const char *script, int wait_s,
                   int run_min, accept_job_t *j)
{
    char jname[96], imm[32], tlim[32], part[96], wrapped[16384];
    char *argv[32];
    int n = 0, i;

    memset(j, 0, sizeof(*j));
    snprintf(jname, sizeof(jname), "--job-name=%s", name);
    snprintf(imm, sizeof(imm), "--immediate=%d", wait_s);
    snprintf(tlim, sizeof(tlim), "--time=%d", run_min);
    snprintf(wrapped, sizeof(wrapped), "echo \"tbmesh-accept-job $SLURM_JOB_ID\"\n%s", script);
    argv[n++] = "salloc";
    argv[n++] = jname;
    argv[n++] = imm;
    argv[n++] = tlim;
    if (partition && *partition) {
        snprintf(part, sizeof(part), "--partition=%s", partition);
        argv[n++] = part;
    }
    for (i = 0; opts[i] && n < 26; i++)
        argv[n++] = opts[i];
    argv[n++] = "sh";
    argv[n++] = "-c";
    argv[n++] = wrapped;
    argv[n] = NULL;
    accept_run(argv, wait_s + run_min * 60 + 30, &j->o);
    j->id = job_id(j);
    j->started = j->o.out && strstr(j->o.out, "tbmesh-accept-job ") != NULL;
    return j->o.status;
}

void accept_job_error(const accept_job_t *j, char *buf, size_t len)
{
    const char *s = j->o.err ? strstr(j->o.err, "error: ") : NULL;

    buf[0] = '\0';
    if (s) {
        char *line = strndup(s + 7, strcspn(s + 7, "\n"));
        tbm_text_fit(buf, len, line ? line : "");   /* a long one cut between words, marked */
        free(line);
    } else if (j->o.timed_out)
        snprintf(buf, len, "the job did not end within its time limit");
}
