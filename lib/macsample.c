/* macsample.c: a Mac's sample, its two-reading figures, Linux's /proc readers and its exposition
 * (macsample.h). */
#include "macsample.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalar.h"

static const char *const sampler_names[TBM_SAMPLER_COUNT] = { "cpu", "memory", "links", "gpu", "power" };
static const char *const part_names[TBM_POWER_COUNT] = { "cpu", "gpu", "ane", "package" };

const char *tbm_sampler_name(tbm_sampler_t s)
{
    return (unsigned)s < TBM_SAMPLER_COUNT ? sampler_names[s] : "?";
}

const char *tbm_power_part_name(tbm_power_part_t p)
{
    return (unsigned)p < TBM_POWER_COUNT ? part_names[p] : "?";
}

void tbm_mac_sample_init(tbm_mac_sample_t *s)
{
    memset(s, 0, sizeof(*s));
    s->tasks_shown = 1;
    s->health = -1;
}

int tbm_mac_sample_task(tbm_mac_sample_t *s, uint32_t job, const char *user, tbm_err_t *err)
{
    int i;

    for (i = 0; i < s->n_tasks; i++)
        if (s->tasks[i].job == job && strcmp(s->tasks[i].user, user) == 0) {
            s->tasks[i].n++;
            return 0;
        }
    if (s->n_tasks >= TBM_MS_TASKS_MAX)
        return tbm_errprintf(err, "more than %d jobs and users run tasks here; the others are not counted",
                             TBM_MS_TASKS_MAX);
    s->tasks[s->n_tasks].job = job;
    snprintf(s->tasks[s->n_tasks].user, sizeof(s->tasks[s->n_tasks].user), "%s", user);
    s->tasks[s->n_tasks].n = 1;
    s->n_tasks++;
    return 0;
}

tbm_reading_t tbm_cpu_busy(const tbm_cpu_ticks_t *before, const tbm_cpu_ticks_t *now)
{
    tbm_reading_t r = { 0, 0 };
    uint64_t busy, total;

    if (now->total <= before->total || now->busy < before->busy)
        return r;
    busy = now->busy - before->busy;
    total = now->total - before->total;
    if (busy > total)
        return r;
    return tbm_reported((double)busy / (double)total);
}

int tbm_energy_add(tbm_reading_t *joules, tbm_reading_t watts, double dt_s, double max_dt_s)
{
    if (!watts.reported || !(dt_s > 0) || dt_s > max_dt_s || !(watts.value >= 0))
        return 0;
    if (!joules->reported)
        *joules = tbm_reported(0);
    joules->value += watts.value * dt_s;
    return 1;
}

tbm_reading_t tbm_memory_pressure_level(long level)
{
    tbm_reading_t none = { 0, 0 };

    switch (level) {
    case 1: return tbm_reported(0);
    case 2: return tbm_reported(1);
    case 4: return tbm_reported(2);
    default: return none;
    }
}

/* The next line of text[*off..len) into line (NUL-terminated, cut at size - 1); 0 at the end. */
static int next_line(const char *text, size_t len, size_t *off, char *line, size_t size)
{
    size_t start = *off, n;
    const char *nl;

    if (start >= len)
        return 0;
    nl = memchr(text + start, '\n', len - start);
    n = (nl ? (size_t)(nl - text) : len) - start;
    *off = start + n + (nl ? 1 : 0);
    if (n >= size)
        n = size - 1;
    memcpy(line, text + start, n);
    line[n] = '\0';
    return 1;
}

int tbm_parse_proc_stat(const char *text, size_t len, tbm_cpu_ticks_t *t, tbm_err_t *err)
{
    char line[512], *p, *end;
    size_t off = 0;
    uint64_t v[8] = { 0 };
    int n;

    while (next_line(text, len, &off, line, sizeof(line))) {
        if (strncmp(line, "cpu ", 4) != 0)
            continue;
        p = line + 4;
        for (n = 0; n < 8; n++) {
            while (*p == ' ')
                p++;
            if (!*p)
                break;
            if (*p < '0' || *p > '9')
                return tbm_errprintf(err, "/proc/stat: the cpu line's field %d is not a number: %.40s", n + 1, p);
            v[n] = strtoull(p, &end, 10);
            p = end;
        }
        if (n < 4)
            return tbm_errprintf(err, "/proc/stat: the cpu line has %d counters, at least 4 expected "
                                 "(user nice system idle)", n);
        /* user nice system idle iowait irq softirq steal */
        t->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
        t->total = t->busy + v[3] + v[4];
        return 0;
    }
    return tbm_errprintf(err, "/proc/stat: no \"cpu \" line (is this /proc/stat?)");
}

/* "Name:   12345 kB" -> bytes. 1 when the line is that field, 0 when it is another, -1 when it is malformed. */
static int meminfo_field(const char *line, const char *name, uint64_t *bytes, tbm_err_t *err)
{
    size_t n = strlen(name);
    const char *p;
    char *end;
    unsigned long long v;

    if (strncmp(line, name, n) != 0 || line[n] != ':')
        return 0;
    p = line + n + 1;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p < '0' || *p > '9')
        return tbm_errprintf(err, "/proc/meminfo: %s is not a number: %.40s", name, p);
    v = strtoull(p, &end, 10);
    while (*end == ' ')
        end++;
    if (strcmp(end, "kB") != 0 || v > UINT64_MAX / 1024)
        return tbm_errprintf(err, "/proc/meminfo: %s is not a count of kB: %.40s", name, line);
    *bytes = (uint64_t)v * 1024;
    return 1;
}

int tbm_parse_meminfo(const char *text, size_t len, tbm_reading_t *total, tbm_reading_t *used, tbm_err_t *err)
{
    char line[256];
    size_t off = 0;
    uint64_t t = 0, a = 0;
    int have_t = 0, have_a = 0, rc;

    while (next_line(text, len, &off, line, sizeof(line))) {
        if ((rc = meminfo_field(line, "MemTotal", &t, err)) < 0)
            return -1;
        have_t |= rc;
        if ((rc = meminfo_field(line, "MemAvailable", &a, err)) < 0)
            return -1;
        have_a |= rc;
    }
    if (!have_t || !have_a)
        return tbm_errprintf(err, "/proc/meminfo: no %s line (a kernel before 3.14 lacks MemAvailable)",
                             have_t ? "MemAvailable" : "MemTotal");
    if (a > t)
        return tbm_errprintf(err, "/proc/meminfo: MemAvailable (%llu kB) above MemTotal (%llu kB)",
                             (unsigned long long)(a / 1024), (unsigned long long)(t / 1024));
    *total = tbm_reported((double)t);
    *used = tbm_reported((double)(t - a));
    return 0;
}

/* --- the exposition ----------------------------------------------------------------------------------- */

typedef struct fam {
    const char *name;
    tbm_metric_type_t type;
    const char *help;
} fam_t;

static const fam_t families[] = {
    { "tbmesh_agent_info", TBM_METRIC_GAUGE, "1 while the slurm-tbmesh agent (macnoded) serves; its version" },
    { "tbmesh_agent_start_time_seconds", TBM_METRIC_GAUGE, "When the agent started, in seconds since the epoch" },
    { "tbmesh_sample_time_seconds", TBM_METRIC_GAUGE, "When the figures of this Mac were sampled" },
    { "tbmesh_sampler_up", TBM_METRIC_GAUGE,
      "1 when the sampler gave figures at the last sample; 0 when it failed or the Mac does not report them" },
    { "tbmesh_tasks_running", TBM_METRIC_GAUGE, "Tasks of the job running on this Mac" },
    { "tbmesh_health_ok", TBM_METRIC_GAUGE,
      "The health check's last verdict on the Mac, where it runs on the Mac (direct mode): 1 well, 0 not" },
    { "tbmesh_health_check_time_seconds", TBM_METRIC_GAUGE, "When the health check's last verdict was made" },
    { "tbmesh_cpu_busy_ratio", TBM_METRIC_GAUGE, "Share of all CPU time that was busy over the last interval" },
    { "tbmesh_gpu_busy_ratio", TBM_METRIC_GAUGE, "The GPU's device utilisation, 0 to 1" },
    { "tbmesh_memory_total_bytes", TBM_METRIC_GAUGE, "Physical memory" },
    { "tbmesh_memory_used_bytes", TBM_METRIC_GAUGE, "Memory in use (not free, not reclaimable)" },
    { "tbmesh_memory_pressure", TBM_METRIC_GAUGE, "Memory pressure level: 0 normal, 1 warning, 2 critical" },
    { "tbmesh_power_watts", TBM_METRIC_GAUGE, "Power drawn by a part of the Mac (powermetrics)" },
    { "tbmesh_energy_joules_total", TBM_METRIC_COUNTER, "Energy drawn by a part since the agent started" },
    { "tbmesh_link_up", TBM_METRIC_GAUGE, "1 when the Thunderbolt cable end's interface is up and running" },
    { "tbmesh_link_speed_bytes", TBM_METRIC_GAUGE, "The cable end's negotiated speed, bytes per second" },
    { "tbmesh_link_class_speed_bytes", TBM_METRIC_GAUGE,
      "The speed the cable's class should negotiate, bytes per second" },
    { "tbmesh_link_receive_bytes_total", TBM_METRIC_COUNTER, "Bytes received on the cable end" },
    { "tbmesh_link_transmit_bytes_total", TBM_METRIC_COUNTER, "Bytes sent on the cable end" },
    { "tbmesh_link_receive_packets_total", TBM_METRIC_COUNTER, "Packets received on the cable end" },
    { "tbmesh_link_transmit_packets_total", TBM_METRIC_COUNTER, "Packets sent on the cable end" },
    { "tbmesh_link_receive_errors_total", TBM_METRIC_COUNTER, "Receive errors on the cable end" },
    { "tbmesh_link_transmit_errors_total", TBM_METRIC_COUNTER, "Transmit errors on the cable end" },
    { "tbmesh_link_rdma_enabled", TBM_METRIC_GAUGE,
      "1 when RDMA is enabled on the Mac and the cable end has an RDMA device" },
};

typedef struct out {
    tbm_metrics_t *m;
    tbm_err_t *err;
    int failed;
} out_t;

static void add(out_t *o, const char *name, const tbm_label_t *l, size_t n, tbm_reading_t r)
{
    if (!o->failed && tbm_metrics_add_reading(o->m, name, l, n, r, o->err) < 0)
        o->failed = 1;
}

static void add_links(out_t *o, const tbm_mac_sample_t *s)
{
    static const struct { const char *name; size_t off; } counters[] = {
        { "tbmesh_link_receive_bytes_total", offsetof(tbm_ms_link_t, rx_bytes) },
        { "tbmesh_link_transmit_bytes_total", offsetof(tbm_ms_link_t, tx_bytes) },
        { "tbmesh_link_receive_packets_total", offsetof(tbm_ms_link_t, rx_packets) },
        { "tbmesh_link_transmit_packets_total", offsetof(tbm_ms_link_t, tx_packets) },
        { "tbmesh_link_receive_errors_total", offsetof(tbm_ms_link_t, rx_errors) },
        { "tbmesh_link_transmit_errors_total", offsetof(tbm_ms_link_t, tx_errors) },
    };
    tbm_label_t l[5];
    size_t n, k;
    int i;

    for (i = 0; i < s->n_links; i++) {
        const tbm_ms_link_t *x = &s->links[i];
        n = 0;
        l[n++] = (tbm_label_t){ "node", s->node };
        l[n++] = (tbm_label_t){ "port", x->port };
        if (*s->group)
            l[n++] = (tbm_label_t){ "group", s->group };
        if (*x->peer)
            l[n++] = (tbm_label_t){ "peer", x->peer };
        if (*x->peer_port)
            l[n++] = (tbm_label_t){ "peer_port", x->peer_port };
        if (x->up >= 0)
            add(o, "tbmesh_link_up", l, n, tbm_reported(x->up));
        else
            add(o, "tbmesh_link_up", l, n, tbm_reported(0));
        add(o, "tbmesh_link_speed_bytes", l, n, x->speed);
        add(o, "tbmesh_link_class_speed_bytes", l, n, x->class_speed);
        for (k = 0; k < sizeof(counters) / sizeof(counters[0]); k++)
            add(o, counters[k].name, l, n, *(const tbm_reading_t *)((const char *)x + counters[k].off));
        if (x->rdma >= 0)
            add(o, "tbmesh_link_rdma_enabled", l, n, tbm_reported(x->rdma));
    }
}

static void add_machine(out_t *o, const tbm_mac_sample_t *s)
{
    tbm_label_t l[3] = { { "node", s->node } };
    char job[16];
    int i;

    l[1] = (tbm_label_t){ "version", s->version };
    add(o, "tbmesh_agent_info", l, 2, tbm_reported(1));
    add(o, "tbmesh_agent_start_time_seconds", l, 1, tbm_reported(s->start_time));
    add(o, "tbmesh_sample_time_seconds", l, 1, tbm_reported(s->sample_time));
    for (i = 0; i < TBM_SAMPLER_COUNT; i++) {
        l[1] = (tbm_label_t){ "sampler", tbm_sampler_name((tbm_sampler_t)i) };
        add(o, "tbmesh_sampler_up", l, 2, tbm_reported(s->sampler_up[i] == 1));
    }
    add(o, "tbmesh_cpu_busy_ratio", l, 1, s->cpu_busy);
    add(o, "tbmesh_gpu_busy_ratio", l, 1, s->gpu_busy);
    add(o, "tbmesh_memory_total_bytes", l, 1, s->mem_total);
    add(o, "tbmesh_memory_used_bytes", l, 1, s->mem_used);
    add(o, "tbmesh_memory_pressure", l, 1, s->mem_pressure);
    for (i = 0; i < TBM_POWER_COUNT; i++) {
        l[1] = (tbm_label_t){ "part", tbm_power_part_name((tbm_power_part_t)i) };
        add(o, "tbmesh_power_watts", l, 2, s->power[i]);
        add(o, "tbmesh_energy_joules_total", l, 2, s->energy[i]);
    }
    if (s->health >= 0) {
        size_t n = 1;
        if (*s->group)
            l[n++] = (tbm_label_t){ "group", s->group };
        add(o, "tbmesh_health_ok", l, n, tbm_reported(s->health == 1));
        add(o, "tbmesh_health_check_time_seconds", l, n, tbm_reported((double)s->health_time));
    }
    for (i = 0; s->tasks_shown && i < s->n_tasks; i++) {
        snprintf(job, sizeof(job), "%u", (unsigned)s->tasks[i].job);
        l[1] = (tbm_label_t){ "jobid", job };
        l[2] = (tbm_label_t){ "user", s->tasks[i].user };
        add(o, "tbmesh_tasks_running", l, 3, tbm_reported(s->tasks[i].n));
    }
}

char *tbm_mac_sample_text(const tbm_mac_sample_t *s, tbm_err_t *err)
{
    size_t series = 64 + (size_t)s->n_links * 16 + (size_t)s->n_tasks, i;
    out_t o = { tbm_metrics_new(series), err, 0 };
    char *text = NULL;

    if (!o.m) {
        tbm_errprintf(err, "out of memory for the exposition");
        return NULL;
    }
    if (!*s->node) {
        tbm_errprintf(err, "the sample names no node");
        goto done;
    }
    for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
        if (tbm_metrics_family(o.m, families[i].name, families[i].type, families[i].help, err) < 0)
            goto done;
    add_machine(&o, s);
    add_links(&o, s);
    if (!o.failed)
        text = tbm_metrics_text(o.m, err);
done:
    tbm_metrics_free(o.m);
    return text;
}
