/* macsample.h: one sample of a Mac as its agent serves it to Prometheus (doc/METRICS.md lists the families):
 * the machine (CPU, GPU, memory, power, energy), its Thunderbolt cable ends and its running tasks, and which
 * samplers gave figures. The agent's OS-specific parts fill it; this file decides the figures that come from
 * two readings (CPU busy share, energy), reads Linux's /proc files (the embedded lab's simulated Macs) and
 * writes the exposition. A figure that was not reported is left out, never written as 0. */
#ifndef TBM_MACSAMPLE_H
#define TBM_MACSAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "metrics.h"

#define TBM_MS_LINKS_MAX 16      /* cable ends of one Mac (its Thunderbolt ports) */
#define TBM_MS_TASKS_MAX 512     /* (job, user) pairs of the running tasks */
#define TBM_MS_NAME_MAX  64      /* node, group, user names */
#define TBM_MS_IF_MAX    16      /* interface names */

typedef enum tbm_sampler {
    TBM_SAMPLER_CPU = 0,
    TBM_SAMPLER_MEMORY,
    TBM_SAMPLER_LINKS,
    TBM_SAMPLER_GPU,
    TBM_SAMPLER_POWER,
    TBM_SAMPLER_COUNT,
} tbm_sampler_t;

/* "cpu", "memory", "links", "gpu", "power". */
const char *tbm_sampler_name(tbm_sampler_t s);

typedef enum tbm_power_part {
    TBM_POWER_CPU = 0,
    TBM_POWER_GPU,
    TBM_POWER_ANE,
    TBM_POWER_PACKAGE,
    TBM_POWER_COUNT,
} tbm_power_part_t;

/* "cpu", "gpu", "ane", "package". */
const char *tbm_power_part_name(tbm_power_part_t p);

/* One Thunderbolt cable end of the Mac. */
typedef struct tbm_ms_link {
    char port[TBM_MS_IF_MAX];          /* the interface ("en2") */
    char peer[TBM_MS_NAME_MAX];        /* the far Mac's node name; "" when not known */
    char peer_port[TBM_MS_IF_MAX];     /* its interface; "" when not known */
    int up;                            /* 1 up and running, 0 not; -1 the interface is not there */
    tbm_reading_t speed;               /* negotiated, bytes per second */
    tbm_reading_t class_speed;         /* what its cable's class should negotiate, bytes per second */
    tbm_reading_t rx_bytes, tx_bytes, rx_packets, tx_packets, rx_errors, tx_errors;
    int rdma;                          /* 1 RDMA enabled with a device on this port, 0 not, -1 not known */
} tbm_ms_link_t;

/* The tasks of one job and user running on the Mac. */
typedef struct tbm_ms_tasks {
    uint32_t job;
    char user[TBM_MS_NAME_MAX];
    int n;
} tbm_ms_tasks_t;

typedef struct tbm_mac_sample {
    char node[TBM_MS_NAME_MAX];
    char group[TBM_MS_NAME_MAX];       /* the Mac's group in tbmesh.conf; "" when not known */
    char version[32];
    double start_time;                 /* the agent's start, Unix seconds */
    double sample_time;                /* this sample's, Unix seconds */
    int sampler_up[TBM_SAMPLER_COUNT]; /* 1 gave figures, 0 failed or not reported here */
    tbm_reading_t cpu_busy;            /* 0..1 */
    tbm_reading_t gpu_busy;            /* 0..1 */
    tbm_reading_t mem_total, mem_used; /* bytes */
    tbm_reading_t mem_pressure;        /* 0 normal, 1 warning, 2 critical */
    tbm_reading_t power[TBM_POWER_COUNT];     /* watts */
    tbm_reading_t energy[TBM_POWER_COUNT];    /* joules since the agent started */
    int n_links;
    tbm_ms_link_t links[TBM_MS_LINKS_MAX];
    int health;                        /* the health check's last verdict on this Mac, where it runs here
                                        * (direct mode): 1 well, 0 not; -1 none here (not served) */
    long long health_time;             /* when it was made, Unix seconds */
    int tasks_shown;                   /* 0: the task series are off (a site hiding jobs from other users) */
    int n_tasks;
    tbm_ms_tasks_t tasks[TBM_MS_TASKS_MAX];
} tbm_mac_sample_t;

/* An empty sample: nothing reported, no links, no tasks, tasks shown. */
void tbm_mac_sample_init(tbm_mac_sample_t *s);

/* Count one more running task of (job, user). 0, or -1 with err when TBM_MS_TASKS_MAX pairs are held. */
int tbm_mac_sample_task(tbm_mac_sample_t *s, uint32_t job, const char *user, tbm_err_t *err);

/* The exposition of the sample (malloc'd text; the caller frees it), or NULL with err. */
char *tbm_mac_sample_text(const tbm_mac_sample_t *s, tbm_err_t *err);

/* --- figures from two readings -------------------------------------------------------------------------- */

/* CPU time counters, in any one unit (ticks): busy and all. */
typedef struct tbm_cpu_ticks {
    uint64_t busy, total;
} tbm_cpu_ticks_t;

/* The share of CPU time that was busy between two readings: 0..1, or not reported when no time passed or a
 * counter went back (a reset). */
tbm_reading_t tbm_cpu_busy(const tbm_cpu_ticks_t *before, const tbm_cpu_ticks_t *now);

/* Energy: add the power `watts` drawn over `dt_s` seconds to *joules, when the power was reported and dt_s
 * is above 0 and at most max_dt_s (a longer gap, such as a Mac asleep or a sampler stuck, adds nothing: it
 * would be a guess). Returns 1 when added, 0 when not. */
int tbm_energy_add(tbm_reading_t *joules, tbm_reading_t watts, double dt_s, double max_dt_s);

/* macOS' memory pressure level (sysctl kern.memorystatus_vm_pressure_level: 1 normal, 2 warning, 4 critical)
 * as 0, 1, 2; anything else is not reported. */
tbm_reading_t tbm_memory_pressure_level(long level);

/* --- Linux's /proc (the embedded lab) --------------------------------------------------------------------- */

/* The "cpu " line of /proc/stat: busy = user+nice+system+irq+softirq+steal, total = busy+idle+iowait.
 * 0, or -1 with err naming what is wrong. */
int tbm_parse_proc_stat(const char *text, size_t len, tbm_cpu_ticks_t *t, tbm_err_t *err);

/* /proc/meminfo: MemTotal, and used = MemTotal - MemAvailable (bytes). 0, or -1 with err. */
int tbm_parse_meminfo(const char *text, size_t len, tbm_reading_t *total, tbm_reading_t *used, tbm_err_t *err);

#endif
