/* agent_sampler.c: the agent's sampler (agent_metrics.h). Every interval it reads the machine (CPU, memory:
 * sample_os.h), the GPU (ioreg, no root needed) and power (powermetrics, root), each Thunderbolt cable end's
 * state and counters, and the running tasks (the state folder's task records), and writes the exposition of
 * that sample (lib/macsample.c) to the state folder, where the metrics server reads it. Which interfaces are
 * cable ends comes from the probe (as for the watch request), their far ends and group from tbmesh.conf when
 * it is there. A sampler that fails is logged once when it starts failing and once when it works again. */
#include "config.h"
#include "agent.h"
#include "agent_log.h"
#include "agent_metrics.h"
#include "clock.h"
#include "conf.h"
#include "fileio.h"
#include "health.h"
#include "linkmon.h"
#include "macsample.h"
#include "parse_ioreg.h"
#include "parse_powermetrics.h"
#include "probe_host.h"
#include "run.h"
#include "sample_os.h"

#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define PROBE_EVERY_S   600          /* the cable ends are looked up again this often */
#define COMMAND_MS      5000         /* ioreg's and powermetrics' time limit */
#define POWER_SAMPLE_MS "500"        /* powermetrics' own sample length */
#define USERS_CACHED    64

typedef struct user_name {
    uid_t uid;
    char name[TBM_MS_NAME_MAX];
} user_name_t;

typedef struct sampler {
    const agent_conf_t *conf;
    tbm_mac_sample_t s;                 /* the last sample: energy counters carry over */
    tbm_cpu_ticks_t cpu_before;
    int have_cpu;
    double last_s;                      /* monotonic seconds of the last sample; 0 none */
    long long probed_ms;                /* when the cable ends were looked up; 0 never */
    char conf_sig[96];                  /* tbmesh.conf's inode, size and time then: a new one is read at once */
    tbm_ms_link_t ends[TBM_MS_LINKS_MAX];
    int n_ends;
    char failing[TBM_SAMPLER_COUNT][200];   /* what the failing sampler said, "" when it works */
    char health_said[300];              /* why the health verdict is not served, as last logged; "" none */
    user_name_t users[USERS_CACHED];
    int n_users;
} sampler_t;

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
    (void)sig;
    stop = 1;
}

/* Log a sampler's change between working and failing, once each way. */
static void note(sampler_t *sp, tbm_sampler_t which, int ok, const char *why)
{
    char *was = sp->failing[which];

    sp->s.sampler_up[which] = ok;
    if (ok && *was) {
        agent_log("metrics: the %s sampler works again", tbm_sampler_name(which));
        *was = '\0';
    } else if (!ok && strcmp(was, why) != 0) {
        agent_log("metrics: no %s figures: %s", tbm_sampler_name(which), why);
        snprintf(was, sizeof(sp->failing[which]), "%s", why);
    }
}

/* The speed in bytes per second of a port's Gb/s. */
static tbm_reading_t gbps_bytes(int gbps)
{
    tbm_reading_t none = { 0, 0 };

    return gbps > 0 ? tbm_reported(gbps * 1e9 / 8) : none;
}

static int has_rdma_device(const tbm_host_facts_t *f, const char *iface)
{
    char want[TBM_IFNAME_MAX + 8];
    int i;

    snprintf(want, sizeof(want), "rdma_%s", iface);
    for (i = 0; i < f->n_rdma; i++)
        if (strcmp(f->rdma_devices[i], want) == 0)
            return 1;
    return 0;
}

static tbm_ms_link_t *end_add(sampler_t *sp, const char *iface)
{
    int i;

    if (!*iface || strncmp(iface, "bridge", 6) == 0 || strlen(iface) >= TBM_MS_IF_MAX)
        return NULL;
    for (i = 0; i < sp->n_ends; i++)
        if (strcmp(sp->ends[i].port, iface) == 0)
            return &sp->ends[i];
    if (sp->n_ends >= TBM_MS_LINKS_MAX)
        return NULL;
    memset(&sp->ends[sp->n_ends], 0, sizeof(sp->ends[0]));
    snprintf(sp->ends[sp->n_ends].port, TBM_MS_IF_MAX, "%s", iface);
    sp->ends[sp->n_ends].rdma = -1;
    return &sp->ends[sp->n_ends++];
}

/* The far ends and group of this node's cables from tbmesh.conf, when it is there and names this node. */
static void from_conf(sampler_t *sp)
{
    const char *path = sp->conf->tbmesh_conf;
    tbm_conf_t c;
    tbm_err_t err = { { 0 } };
    size_t len, i;
    char *text;
    int me, k;

    if (!path)
        return;
    if (!(text = tbm_read_file(path, 4u << 20, &len, &err))) {
        agent_log("metrics: cable ends without their far ends: %s", err.msg);
        return;
    }
    tbm_conf_init(&c);
    if (tbm_conf_parse(text, len, path, &c, NULL, &err) < 0)
        agent_log("metrics: cable ends without their far ends: %s", err.msg);
    else if ((me = tbm_conf_node(&c, sp->conf->node)) >= 0) {
        snprintf(sp->s.group, sizeof(sp->s.group), "%s", c.groups[c.nodes[me].group].caps.name);
        for (i = 0; i < c.n_cables; i++)
            for (k = 0; k < 2; k++) {
                const tbm_conf_end_t *mine = &c.cables[i].end[k], *far = &c.cables[i].end[1 - k];
                tbm_ms_link_t *l;
                if (mine->node != me || !(l = end_add(sp, mine->iface)))
                    continue;
                snprintf(l->peer, sizeof(l->peer), "%s", c.nodes[far->node].name);
                snprintf(l->peer_port, sizeof(l->peer_port), "%s", far->iface);
                l->class_speed = gbps_bytes(c.cables[i].speed_gbps);
            }
    }
    tbm_conf_free(&c);
    free(text);
}

/* Which interfaces are cable ends, their negotiated speed and RDMA state: the probe's facts. */
static void find_ends(sampler_t *sp)
{
    tbm_host_facts_t *f = calloc(1, sizeof(*f));
    tbm_findings_t fs;
    tbm_err_t err = { { 0 } };
    tbm_ms_link_t *l;
    int i, j;

    sp->probed_ms = tbm_now_ms();
    sp->n_ends = 0;
    sp->s.group[0] = '\0';
    tbm_findings_init(&fs);
    if (!f || probe_host(sp->conf->replay_dir ? "replay" : NULL, sp->conf->replay_dir, 20000, NULL, f, &fs,
                         &err) < 0) {
        note(sp, TBM_SAMPLER_LINKS, 0, f ? err.msg : "out of memory");
        sp->probed_ms = 0;   /* again at the next sample */
    } else {
        /* a port with something cabled to it; one with nothing is no cable end (unless tbmesh.conf names a
         * cable there: then it is a cable that is missing, read below) */
        for (i = 0; i < f->n_ports; i++)
            if (f->ports[i].connected && (l = end_add(sp, f->ports[i].iface)))
                l->speed = gbps_bytes(f->ports[i].speed_gbps);
        for (i = 0; i < f->n_ifaces; i++)
            for (j = 0; strncmp(f->ifaces[i].hwport, "Thunderbolt ", 12) == 0 && j < f->n_ports; j++)
                if (f->ports[j].receptacle == atoi(f->ifaces[i].hwport + 12) && f->ports[j].connected &&
                    (l = end_add(sp, f->ifaces[i].name)))
                    l->speed = gbps_bytes(f->ports[j].speed_gbps);
        for (i = 0; i < sp->n_ends; i++)
            sp->ends[i].rdma = f->rdma_enabled < 0 ? -1 : f->rdma_enabled && has_rdma_device(f, sp->ends[i].port);
        from_conf(sp);
    }
    tbm_findings_free(&fs);
    free(f);
}

/* What tells one tbmesh.conf from another: "" when there is none. */
static void conf_signature(const sampler_t *sp, char *buf, size_t len)
{
    struct stat st;

    if (!sp->conf->tbmesh_conf || stat(sp->conf->tbmesh_conf, &st) < 0)
        snprintf(buf, len, "%s", "");
    else
        snprintf(buf, len, "%llu %lld %lld", (unsigned long long)st.st_ino, (long long)st.st_size,
                 (long long)st.st_mtime);
}

static void sample_links(sampler_t *sp)
{
    tbm_err_t err = { { 0 } };
    char sig[sizeof(sp->conf_sig)];
    int i, ok = 1;

    conf_signature(sp, sig, sizeof(sig));
    if (!sp->probed_ms || tbm_now_ms() - sp->probed_ms > PROBE_EVERY_S * 1000LL || strcmp(sig, sp->conf_sig) != 0) {
        snprintf(sp->conf_sig, sizeof(sp->conf_sig), "%s", sig);
        find_ends(sp);
    }
    if (!sp->probed_ms)
        return;
    sp->s.n_links = 0;
    for (i = 0; i < sp->n_ends; i++) {
        tbm_ms_link_t *l = &sp->s.links[sp->s.n_links++];
        *l = sp->ends[i];
        if (sample_os_link(l->port, l, &err) < 0)
            ok = 0;
    }
    note(sp, TBM_SAMPLER_LINKS, ok, ok ? "" : err.msg);
}

/* A command's output: on the Mac, run it; in the lab (--replay), the recorded output in the replay folder
 * when there is one. NULL with why set when there is none. */
static char *command_output(const sampler_t *sp, const char *const *argv, const char *replay_file, size_t max,
                            size_t *len, char *why, size_t whylen)
{
    tbm_err_t err = { { 0 } };
    char path[1024];
    char *out = NULL;

    if (sp->conf->replay_dir) {
        snprintf(path, sizeof(path), "%s/%s", sp->conf->replay_dir, replay_file);
        if (!(out = tbm_read_file(path, max, len, &err)))
            snprintf(why, whylen, "%.190s", errno == ENOENT ? "not recorded for this simulated Mac" : err.msg);
        return out;
    }
#ifdef __APPLE__
    if (run_capture(argv, "/usr/sbin:/usr/bin:/bin", COMMAND_MS, max, &out, len, &err) < 0)
        snprintf(why, whylen, "%.190s", err.msg);
    return out;
#else
    (void)argv;
    snprintf(why, whylen, "%s", "not reported on this OS (macOS' ioreg and powermetrics)");
    return NULL;
#endif
}

static void sample_gpu(sampler_t *sp)
{
    const char *argv[] = { "ioreg", "-r", "-d", "1", "-w", "0", "-c", "IOAccelerator", NULL };
    tbm_ioreg_t io;
    tbm_err_t err = { { 0 } };
    char why[200];
    size_t len = 0;
    char *out = command_output(sp, argv, "ioreg.txt", 1u << 20, &len, why, sizeof(why));

    sp->s.gpu_busy = (tbm_reading_t){ 0, 0 };
    if (!out)
        return note(sp, TBM_SAMPLER_GPU, 0, why);
    if (tbm_parse_ioreg(out, len, &io, &err) < 0)
        note(sp, TBM_SAMPLER_GPU, 0, err.msg);
    else if (io.n == 0 || !io.gpu[0].device_util.reported)
        note(sp, TBM_SAMPLER_GPU, 0, "ioreg shows no GPU utilisation (no PerformanceStatistics)");
    else {
        sp->s.gpu_busy = tbm_reported(io.gpu[0].device_util.value / 100.0);
        note(sp, TBM_SAMPLER_GPU, 1, "");
    }
    free(out);
}

static void sample_power(sampler_t *sp, double dt)
{
    const char *argv[] = { "powermetrics", "--samplers", "cpu_power,gpu_power", "-f", "plist", "-i",
                           POWER_SAMPLE_MS, "-n", "1", NULL };
    tbm_pm_output_t *pm = calloc(1, sizeof(*pm));
    tbm_err_t err = { { 0 } };
    char why[200];
    size_t len = 0;
    char *out = geteuid() == 0 || sp->conf->replay_dir
                    ? command_output(sp, argv, "powermetrics.plist", TBM_PM_OUTPUT_MAX, &len, why, sizeof(why))
                    : (snprintf(why, sizeof(why), "powermetrics needs root"), NULL);
    int i;

    for (i = 0; i < TBM_POWER_COUNT; i++)
        sp->s.power[i] = (tbm_reading_t){ 0, 0 };
    if (!pm)
        note(sp, TBM_SAMPLER_POWER, 0, "out of memory");
    else if (!out)
        note(sp, TBM_SAMPLER_POWER, 0, why);
    else if (tbm_parse_powermetrics(out, len, pm, &err) < 0)
        note(sp, TBM_SAMPLER_POWER, 0, err.msg);
    else {
        const tbm_pm_sample_t *x = &pm->sample[pm->n - 1];
        sp->s.power[TBM_POWER_CPU] = x->cpu_power_w;
        sp->s.power[TBM_POWER_GPU] = x->gpu_power_w;
        sp->s.power[TBM_POWER_ANE] = x->ane_power_w;
        sp->s.power[TBM_POWER_PACKAGE] = x->package_power_w;
        if (!sp->s.gpu_busy.reported && x->gpu_active.reported)
            sp->s.gpu_busy = x->gpu_active;
        for (i = 0; i < TBM_POWER_COUNT; i++)
            tbm_energy_add(&sp->s.energy[i], sp->s.power[i], dt, 3.0 * sp->conf->metrics_interval_s + 5);
        note(sp, TBM_SAMPLER_POWER, 1, "");
    }
    free(out);
    free(pm);
}

static const char *user_of(sampler_t *sp, uid_t uid)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    user_name_t *u;
    int i;

    for (i = 0; i < sp->n_users; i++)
        if (sp->users[i].uid == uid)
            return sp->users[i].name;
    u = &sp->users[sp->n_users < USERS_CACHED ? sp->n_users++ : (int)(uid % USERS_CACHED)];
    u->uid = uid;
    if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
        snprintf(u->name, sizeof(u->name), "%s", pw.pw_name);
    else
        snprintf(u->name, sizeof(u->name), "%u", (unsigned)uid);
    return u->name;
}

static void one_task(const agent_task_rec_t *r, void *ctx)
{
    sampler_t *sp = ctx;
    tbm_err_t err = { { 0 } };

    if (tbm_mac_sample_task(&sp->s, r->job, user_of(sp, r->uid), &err) < 0)
        agent_log_noisy(AGENT_NOISE_METRICS, tbm_now_ms(), "metrics: %s", err.msg);
}

/* The health check's last verdict on this Mac (--health-dir; direct mode): a file of root's in a folder of
 * root's alone, about this node. Absent: not served, nothing said; refused: not served, said once. */
static void sample_health(sampler_t *sp)
{
    char name[TBM_HOSTNAME_MAX + 8], why[300] = "";
    tbm_health_verdict_t v;
    tbm_err_t err = { { 0 } };
    size_t len;
    char *text = NULL;
    int dir;

    sp->s.health = -1;
    if (!sp->conf->health_dir || tbm_health_verdict_file(sp->conf->node, name, sizeof(name)) < 0)
        return;
    if ((dir = tbm_dir_open_owned(sp->conf->health_dir, 0, &err)) < 0) {
        if (errno != ENOENT)
            snprintf(why, sizeof(why), "%.280s", err.msg);
    } else {
        text = tbm_read_file_owned_at(dir, sp->conf->health_dir, name, TBM_HEALTH_VERDICT_BYTES, 0, &len, &err);
        if (text && tbm_health_verdict_parse(text, len, sp->conf->node, &v, &err) == 0) {
            sp->s.health = v.verdict == TBM_HEALTH_WELL;
            sp->s.health_time = v.time;
        } else if (text || errno != ENOENT) {
            snprintf(why, sizeof(why), "%s/%s: %.200s", sp->conf->health_dir, name, err.msg);
        }
        free(text);
        close(dir);
    }
    if (strcmp(why, sp->health_said) != 0 && why[0])
        agent_log("metrics: the health verdict is not served: %s", why);
    snprintf(sp->health_said, sizeof(sp->health_said), "%s", why);
}

static void sample_once(sampler_t *sp)
{
    tbm_err_t err = { { 0 } };
    tbm_cpu_ticks_t now;
    struct timeval tv;
    double mono = tbm_now_ms() / 1000.0, dt = sp->last_s > 0 ? mono - sp->last_s : 0;

    gettimeofday(&tv, NULL);
    sp->s.sample_time = (double)tv.tv_sec + tv.tv_usec / 1e6;
    sp->last_s = mono;
    if (sample_os_cpu(&now, &err) < 0) {
        sp->s.cpu_busy = (tbm_reading_t){ 0, 0 };
        note(sp, TBM_SAMPLER_CPU, 0, err.msg);
    } else {
        sp->s.cpu_busy = sp->have_cpu ? tbm_cpu_busy(&sp->cpu_before, &now) : (tbm_reading_t){ 0, 0 };
        sp->cpu_before = now;
        sp->have_cpu = 1;
        note(sp, TBM_SAMPLER_CPU, 1, "");
    }
    sp->s.mem_total = sp->s.mem_used = sp->s.mem_pressure = (tbm_reading_t){ 0, 0 };
    if (sample_os_memory(&sp->s, &err) < 0)
        note(sp, TBM_SAMPLER_MEMORY, 0, err.msg);
    else
        note(sp, TBM_SAMPLER_MEMORY, 1, "");
    sample_links(sp);
    sample_gpu(sp);
    sample_power(sp, dt);
    sample_health(sp);
    sp->s.n_tasks = 0;
    agent_tasks_each(sp->conf, one_task, sp);
}

/* The sample's GPU and package power into the ring, for the tasks' records. */
static void keep_point(sampler_t *sp)
{
    tbm_ring_point_t p = { sp->last_s, sp->s.gpu_busy.reported ? (float)sp->s.gpu_busy.value : -1,
                           sp->s.power[TBM_POWER_PACKAGE].reported ? (float)sp->s.power[TBM_POWER_PACKAGE].value : -1 };
    tbm_err_t err = { { 0 } };

    if (agent_ring_append(sp->conf, &p, &err) < 0)
        agent_log_noisy(AGENT_NOISE_METRICS, tbm_now_ms(), "metrics: a sample is not kept for the tasks: %s",
                        err.msg);
}

/* Write the sample's exposition where the server reads it. */
static void publish(sampler_t *sp)
{
    char path[1024];
    tbm_err_t err = { { 0 } };
    char *text = tbm_mac_sample_text(&sp->s, &err);

    agent_metrics_path(sp->conf, path, sizeof(path));
    if (!text || tbm_write_file_atomic(path, text, strlen(text), 0600, &err) < 0)
        agent_log_noisy(AGENT_NOISE_METRICS, tbm_now_ms(), "metrics: the sample is not published: %s", err.msg);
    free(text);
}

/* Link news: a cable end's link changed (or news was lost): its state is sampled and published at once, so
 * that a cut cable shows at the next scrape, not only after the interval. */
static void on_link(void *ctx, const char *name, int up)
{
    int *changed = ctx;

    (void)name;
    (void)up;
    *changed = 1;
}

/* Wait until `next` (tbm_now_ms), or until a link changes. 1 when one did. */
static int wait_news(int lm, long long next, pid_t parent)
{
    struct pollfd p = { .fd = lm, .events = POLLIN };
    tbm_err_t err = { { 0 } };
    long long left;
    int changed = 0, n;

    while (!stop && getppid() == parent && (left = next - tbm_now_ms()) > 0) {
        n = poll(&p, lm >= 0 ? 1 : 0, left > 500 ? 500 : (int)left);
        if (n > 0 && linkmon_read(lm, on_link, &changed, &err) != 0)
            changed = 1;
        if (changed)
            return 1;
    }
    return 0;
}

void agent_sampler_run(const agent_conf_t *conf, double start_time, pid_t parent)
{
    sampler_t *sp = calloc(1, sizeof(*sp));
    struct sigaction sa;
    tbm_err_t err = { { 0 } };
    const struct timespec news_gap = { 0, 200 * 1000 * 1000 };
    long long next;
    int lm;

    if (!sp) {
        agent_log("metrics: the sampler has no memory");
        return;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    tbm_mac_sample_init(&sp->s);
    sp->conf = conf;
    snprintf(sp->s.node, sizeof(sp->s.node), "%s", conf->node);
    snprintf(sp->s.version, sizeof(sp->s.version), "%s", PACKAGE_VERSION);
    sp->s.start_time = start_time;
    sp->s.tasks_shown = conf->metrics_tasks;
    if ((lm = linkmon_open(&err)) < 0)
        agent_log("metrics: cable ends are sampled every %d s only: %s", conf->metrics_interval_s, err.msg);
    next = 0;
    while (!stop && getppid() == parent) {
        if (tbm_now_ms() >= next) {
            next = tbm_now_ms() + conf->metrics_interval_s * 1000LL;
            sample_once(sp);
            keep_point(sp);
        } else
            sample_links(sp);
        publish(sp);
        if (wait_news(lm, next, parent))
            nanosleep(&news_gap, NULL);   /* a link that flaps is published at most 5 times a second */
    }
    if (lm >= 0)
        close(lm);
    free(sp);
}
