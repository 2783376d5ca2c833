/* record_usage.c: a record's "usage" from what each step's end left on its node (the parts): Slurm's step
 * accounting in direct mode, the Mac's agent per task in bridge mode, or why a node could not say. */
#include "record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "proto.h"
#include "taskgpu.h"

#define SRC_SLURM "slurmstepd (Slurm's step accounting)"
#define SRC_AGENT "macnoded (the Mac's agent: wait4 of the task, and its wall time)"

static void add_str(json_object *o, const char *key, const char *v)
{
    if (v && *v)
        json_object_object_add(o, key, json_object_new_string(v));
}

static void add_int(json_object *to, const char *key, json_object *from, const char *from_key)
{
    json_object *v = tbm_json_typed(from, from_key, json_type_int);

    if (v)
        json_object_object_add(to, key, json_object_new_int64(json_object_get_int64(v)));
}

static json_object *entry(const char *node, const char *step, const char *source)
{
    json_object *u = json_object_new_object();

    add_str(u, "node", node ? node : "?");
    add_str(u, "step", step);
    add_str(u, "source", source);
    return u;
}

static void add_why(json_object *usage, const char *node, const char *step, const char *why)
{
    json_object *u = entry(node, step, SRC_AGENT);

    add_str(u, "why", why);
    json_object_array_add(usage, u);
}

static void add_num(json_object *to, const char *key, double v, int decimals)
{
    char text[64];

    snprintf(text, sizeof(text), "%.*f", decimals, v);
    json_object_object_add(to, key, json_object_new_double_s(v, text));
}

/* A task's GPU figures and energy (the "rusage" the agent reported, read again strictly: a part is a file
 * the node wrote), each reported or why not; nothing when the agent said nothing. */
static void add_gpu(json_object *u, json_object *ru)
{
    tbm_rusage_t g;

    memset(&g, 0, sizeof(g));
    if (!ru || tbm_rusage_gpu_read(ru, "usage", &g, NULL) < 0)
        return;
    if (g.gpu_samples > 0) {
        json_object_object_add(u, "gpu_samples", json_object_new_int(g.gpu_samples));
        add_num(u, "gpu_mean", g.gpu_mean, 4);
        add_num(u, "gpu_peak", g.gpu_peak, 4);
    } else if (*tbm_meter_why_name(g.gpu_why)) {
        add_str(u, "gpu_why", tbm_meter_why_name(g.gpu_why));
    }
    if (g.power_samples > 0) {
        json_object_object_add(u, "power_samples", json_object_new_int(g.power_samples));
        add_num(u, "energy_j", g.energy_j, 1);
    } else if (*tbm_meter_why_name(g.energy_why)) {
        add_str(u, "energy_why", tbm_meter_why_name(g.energy_why));
    }
}

/* The entries of one part (one step on one node). */
static void part_usage(json_object *p, json_object *usage)
{
    json_object *tasks = tbm_json_typed(p, "agent_usage", json_type_array), *v, *u;
    const char *node = tbm_json_str(p, "node");
    char step[24], why[200];
    size_t i;

    snprintf(step, sizeof(step), "%lld", (long long)json_object_get_int64(json_object_object_get(p, "step")));
    if (tbm_json_typed(p, "cpu_user_us", json_type_int)) {
        u = entry(node, step, SRC_SLURM);
        add_int(u, "cpu_user_us", p, "cpu_user_us");
        add_int(u, "cpu_system_us", p, "cpu_system_us");
        add_int(u, "max_rss_kb", p, "max_rss_kb");
        json_object_array_add(usage, u);
    }
    if (!json_object_get_boolean(json_object_object_get(p, "bridge")))
        return;
    for (i = 0; tasks && i < json_object_array_length(tasks); i++) {
        json_object *t = json_object_array_get_idx(tasks, i), *ru = tbm_json_typed(t, "rusage", json_type_object);
        u = entry(node, step, SRC_AGENT);
        add_int(u, "task", t, "task");
        add_int(u, "cpu_user_us", ru, "utime_us");
        add_int(u, "cpu_system_us", ru, "stime_us");
        add_int(u, "max_rss_kb", ru, "maxrss_kb");
        add_int(u, "wall_us", ru, "wall_us");
        add_gpu(u, ru);
        json_object_array_add(usage, u);
    }
    if ((v = tbm_json_typed(p, "agent_running", json_type_int)) && json_object_get_int64(v) > 0) {
        snprintf(why, sizeof(why), "%lld task(s) still ran on the Mac when the step ended on the bridge host; the "
                 "agent had not reaped them", (long long)json_object_get_int64(v));
        add_why(usage, node, step, why);
    } else if (!tasks) {
        v = tbm_json_typed(p, "agent_usage_why", json_type_string);
        add_why(usage, node, step, v ? json_object_get_string(v) : "the step's end did not ask the Mac's agent");
    } else if (json_object_array_length(tasks) == 0) {
        add_why(usage, node, step, "the agent ran no task of this step (the forwarder failed before the spawn)");
    }
}

json_object *tbm_record_usage_of_parts(json_object *parts, int bridge)
{
    json_object *usage = json_object_new_array();
    size_t i;

    for (i = 0; parts && i < json_object_array_length(parts); i++) {
        json_object *p = json_object_array_get_idx(parts, i);
        if (json_object_is_type(p, json_type_object) && !json_object_object_get_ex(p, "unreadable", NULL)) {
            bridge |= json_object_get_boolean(json_object_object_get(p, "bridge"));
            part_usage(p, usage);
        }
    }
    if (json_object_array_length(usage))
        return usage;
    json_object_put(usage);
    return tbm_record_absent(bridge ? "no srun step ran on the Macs (a bridge-mode batch script itself runs on "
                                      "the bridge host)"
                                    : "no step of the job reported its resource use");
}

/* ---- the GPU and energy of a record's tasks ---- */

typedef struct gpu_task {
    const char *node, *step;
    int gpu, energy;
    double gpu_s, energy_j;
} gpu_task_t;

static int cmp_task(const void *a, const void *b)
{
    const gpu_task_t *x = a, *y = b;
    int c = strcmp(x->node, y->node);

    return c ? c : strcmp(x->step, y->step);
}

/* A number of the entry: 1 with *out when it is there, finite and 0 or more. */
static int num_of(json_object *u, const char *key, double *out)
{
    json_object *v;

    if (!json_object_object_get_ex(u, key, &v) ||
        (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int)))
        return 0;
    *out = json_object_get_double(v);
    return isfinite(*out) && *out >= 0;
}

static int is_agent_task(json_object *u)
{
    const char *src = tbm_json_str(u, "source");

    return src && !strncmp(src, "macnoded", 8) && !tbm_json_str(u, "why");
}

/* One (node, step)'s tasks, sorted together from t[0] on: their largest figures into tot; how many there are. */
static size_t fold_part(const gpu_task_t *t, size_t n, tbm_usage_totals_t *tot)
{
    double gpu = -1, energy = -1;
    size_t k;

    for (k = 0; k < n && !cmp_task(&t[0], &t[k]); k++) {
        if (t[k].gpu && t[k].gpu_s > gpu)
            gpu = t[k].gpu_s;
        if (t[k].energy && t[k].energy_j > energy)
            energy = t[k].energy_j;
    }
    if (gpu >= 0)
        tot->gpu_s += gpu, tot->gpu_parts++;
    if (energy >= 0)
        tot->energy_j += energy, tot->energy_parts++;
    return k;
}

void tbm_record_usage_totals(json_object *rec, tbm_usage_totals_t *tot)
{
    json_object *usage = tbm_json_typed(rec, "usage", json_type_array), *v;
    size_t n = usage ? json_object_array_length(usage) : 0, i, m = 0;
    gpu_task_t *t = n ? calloc(n, sizeof(*t)) : NULL;
    double mean, wall, cpu_us = 0;

    memset(tot, 0, sizeof(*tot));
    for (i = 0; i < n; i++) {
        json_object *u = json_object_array_get_idx(usage, i);
        if ((v = tbm_json_typed(u, "cpu_user_us", json_type_int)))
            cpu_us += (double)json_object_get_int64(v);
        if ((v = tbm_json_typed(u, "cpu_system_us", json_type_int)))
            cpu_us += (double)json_object_get_int64(v);
        if (!t || !is_agent_task(u))
            continue;
        tot->tasks++;
        t[m].node = tbm_json_str(u, "node") ? tbm_json_str(u, "node") : "?";
        t[m].step = tbm_json_str(u, "step") ? tbm_json_str(u, "step") : "?";
        t[m].gpu = num_of(u, "gpu_mean", &mean) && mean <= 1 && num_of(u, "wall_us", &wall);
        t[m].gpu_s = t[m].gpu ? mean * wall / 1e6 : 0;
        t[m].energy = num_of(u, "energy_j", &t[m].energy_j);
        tot->gpu_tasks += t[m].gpu;
        tot->energy_tasks += t[m].energy;
        m++;
    }
    tot->cpu_s = n ? cpu_us / 1e6 : -1;
    if (m)
        qsort(t, m, sizeof(*t), cmp_task);
    for (i = 0; i < m;)
        i += fold_part(t + i, m - i, tot);
    free(t);
}

/* A why of the entry for people: "short: the task ran less than one sample interval". */
static void why_text(const char *why, char *buf, size_t len)
{
    const char *text = tbm_meter_why_text(tbm_meter_why_parse(why));

    if (!why)
        snprintf(buf, len, "not-said: the Mac's agent did not say (it is older than these figures)");
    else
        snprintf(buf, len, "%s%s%s", why, text ? ": " : "", text ? text : "");
}

void tbm_usage_gpu_text(json_object *u, char *buf, size_t len)
{
    char gpu[320] = "", energy[320] = "", e[64], gwhy[200], ewhy[200];
    double mean = 0, peak = 0, joules = 0;
    int g, en;

    buf[0] = '\0';
    if (!is_agent_task(u))
        return;
    g = num_of(u, "gpu_mean", &mean) && num_of(u, "gpu_peak", &peak);
    en = num_of(u, "energy_j", &joules);
    why_text(tbm_json_str(u, "gpu_why"), gwhy, sizeof(gwhy));
    why_text(tbm_json_str(u, "energy_why"), ewhy, sizeof(ewhy));
    if (!g && !en && !strcmp(gwhy, ewhy)) {
        snprintf(buf, len, "GPU and energy not reported (%s)", gwhy);
        return;
    }
    if (g)
        snprintf(gpu, sizeof(gpu), "GPU mean %.1f%%, peak %.1f%% (%lld samples)", 100 * mean, 100 * peak,
                 (long long)json_object_get_int64(json_object_object_get(u, "gpu_samples")));
    else
        snprintf(gpu, sizeof(gpu), "GPU not reported (%s)", gwhy);
    if (en) {
        tbm_energy_text(joules, e, sizeof(e));
        snprintf(energy, sizeof(energy), "energy %s", e);
    } else {
        snprintf(energy, sizeof(energy), "energy not reported (%s)", ewhy);
    }
    snprintf(buf, len, "%s; %s", gpu, energy);
}

void tbm_usage_totals_text(const tbm_usage_totals_t *t, char *buf, size_t len)
{
    char e[64], energy[128], gpu[128];

    if (!t->tasks) {
        snprintf(buf, len, "no task measured by a Mac's agent");
        return;
    }
    if (!t->energy_tasks && !t->gpu_tasks) {
        snprintf(buf, len, "GPU and energy not reported by any of the %d tasks", t->tasks);
        return;
    }
    tbm_energy_text(t->energy_j, e, sizeof(e));
    if (t->energy_tasks)
        snprintf(energy, sizeof(energy), "energy %s from %d of %d tasks", e, t->energy_tasks, t->tasks);
    else
        snprintf(energy, sizeof(energy), "energy not reported by any task");
    if (t->gpu_tasks)
        snprintf(gpu, sizeof(gpu), "GPU %.4f GPU-hours from %d of %d tasks", t->gpu_s / 3600, t->gpu_tasks, t->tasks);
    else
        snprintf(gpu, sizeof(gpu), "GPU not reported by any task");
    snprintf(buf, len, "%s, %s; per node and step the largest task's figure (a step's tasks share their Mac)",
             energy, gpu);
}
