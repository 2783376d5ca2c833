/* agent_usage.c: what the agent measured of each task it ran (wait4 rusage and wall time, and the Mac's GPU and
 * energy while it ran from the sampler's ring), kept per job, step and task in its state folder until the
 * job's cleanup, and the root-only usage request that reports a step's tasks to the record's step end on the
 * bridge host (see agent.h). */
#include "config.h"
#include "agent.h"
#include "agent_log.h"
#include "agent_metrics.h"
#include "clock.h"
#include "fileio.h"
#include "json_read.h"
#include "taskgpu.h"
#include "wire.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_LEN 4096
#define USAGE_FILE_MAX 4096

/* <state>/usage/<job>.<step>.<server>.<task pid>.json: one ended task. A server serves one task after
 * another (agent_pool.h), so its pid alone is not unique; with the task's it is while the job lasts. */
int agent_usage_keep(const agent_conf_t *conf, const tbm_task_usage_t *u, pid_t server, tbm_err_t *err)
{
    char path[PATH_LEN];
    json_object *o = tbm_task_usage_json(u);
    const char *text;
    int rc;

    if (!o)
        return tbm_errprintf(err, "out of memory");
    snprintf(path, sizeof(path), "%s/usage/%u.%u.%ld.%ld.json", conf->state_dir, u->job, u->step, (long)server,
             (long)u->pid);
    text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    /* whole or not at all, but not synced: the state folder is emptied at boot (on tmpfs where the system
     * has one), and the step's end asks for it right after the exit this precedes */
    rc = tbm_write_file_replace(path, text, strlen(text), 0600, err);
    json_object_put(o);
    return rc;
}

void agent_usage_meter(const agent_conf_t *conf, long long start_us, long long end_us, tbm_rusage_t *ru)
{
    int on = conf->metrics_listen != NULL, rc = -1;
    double interval = conf->metrics_interval_s > 0 ? conf->metrics_interval_s : AGENT_METRICS_INTERVAL_S;
    tbm_err_t err = { { 0 } };
    tbm_task_gpu_t w;

    memset(&w, 0, sizeof(w));
    if (on && (rc = agent_ring_window(conf, start_us / 1e6, end_us / 1e6, &w, &err)) < 0)
        agent_log_noisy(AGENT_NOISE_METRICS, tbm_now_ms(), "metrics: a task's GPU and energy are not reported: %s",
                        err.msg);
    tbm_task_gpu_fill(ru, &w, rc, on, end_us > start_us ? (end_us - start_us) / 1e6 : 0, interval);
}

/* Does a usage file's name belong to job (and step, unless step is NULL)? Without a step, the job's
 * temporary files count too. */
static int name_of(const char *name, uint32_t job, const uint32_t *step)
{
    char prefix[48];
    size_t n = strlen(name);

    if (step)
        snprintf(prefix, sizeof(prefix), "%u.%u.", job, *step);
    else
        snprintf(prefix, sizeof(prefix), "%u.", job);
    return !strncmp(name, prefix, strlen(prefix)) && (!step || (n > 5 && !strcmp(name + n - 5, ".json")));
}

void agent_usage_forget(const agent_conf_t *conf, uint32_t job)
{
    char dir[PATH_LEN], path[PATH_LEN + 300];
    DIR *d;
    struct dirent *e;

    snprintf(dir, sizeof(dir), "%s/usage", conf->state_dir);
    if (!(d = opendir(dir)))
        return;
    while ((e = readdir(d)))
        if (name_of(e->d_name, job, NULL)) {
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
}

static int cmp_task(const void *a, const void *b)
{
    const tbm_task_usage_t *x = a, *y = b;

    return x->task != y->task ? (x->task < y->task ? -1 : 1) : (x->pid > y->pid) - (x->pid < y->pid);
}

/* The step's ended tasks, sorted by task, into *out (malloc'd; at most TBM_USAGE_TASKS_MAX). */
static size_t read_step(const agent_conf_t *conf, uint32_t job, uint32_t step, tbm_task_usage_t **out)
{
    char dir[PATH_LEN], path[PATH_LEN + 300];
    tbm_task_usage_t *tasks = NULL, *grown;
    tbm_err_t err = { { 0 } };
    size_t n = 0, cap = 0, len;
    struct dirent *e;
    json_object *o;
    char *text;
    DIR *d;

    snprintf(dir, sizeof(dir), "%s/usage", conf->state_dir);
    d = opendir(dir);
    while (d && (e = readdir(d)) && n < TBM_USAGE_TASKS_MAX) {
        if (!name_of(e->d_name, job, &step))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (n == cap) {
            if (!(grown = realloc(tasks, (cap ? 2 * cap : 8) * sizeof(*tasks))))
                break;
            tasks = grown;
            cap = cap ? 2 * cap : 8;
        }
        text = tbm_read_file(path, USAGE_FILE_MAX, &len, &err);
        o = text ? tbm_proto_json(text, len, path, &err) : NULL;
        if (o && tbm_task_usage_read(o, path, &tasks[n], &err) == 0 && tasks[n].job == job && tasks[n].step == step)
            n++;
        else
            agent_log("usage: %s is not a task usage of job %u step %u (%s); left out", path, job, step, err.msg);
        json_object_put(o);
        free(text);
    }
    if (d)
        closedir(d);
    if (n)
        qsort(tasks, n, sizeof(*tasks), cmp_task);
    *out = tasks;
    return n;
}

int agent_usage_reply(const agent_conf_t *conf, const tbm_msg_t *req, tbm_msg_t *m)
{
    memset(m, 0, sizeof(*m));
    m->type = TBM_MSG_USED;
    m->job = req->job;
    m->step = req->step;
    m->n_tasks = read_step(conf, req->job, req->step, &m->tasks);
    m->running = agent_tasks_running(conf, req->job, req->step);
    return 0;
}

int agent_usage_serve(agent_conn_t *c, const tbm_msg_t *req)
{
    tbm_msg_t m;
    tbm_err_t err = { { 0 } };
    int rc;

    if (!agent_is_root(c)) {
        agent_log("%s: refused (uid): usage of job %u step %u: only root may ask", c->peer, req->job, req->step);
        wire_send_error(c->fd, "uid", "usage refused: only root on the bridge host may read what a job's tasks "
                        "used (the reproducibility record's step end asks as root)");
        return -1;
    }
    agent_usage_reply(c->conf, req, &m);
    rc = wire_send(c->fd, &m, &err);
    if (rc < 0)
        agent_log("%s: %s", c->peer, err.msg);
    free(m.tasks);
    return -1;   /* a usage request is its connection's last, as when the gate answers it */
}
