/* metrics_read.h: what `tbmesh metrics` reads for each exposition: tbmesh.conf (read again when it changed),
 * Slurm's view of the Macs and their running jobs (scontrol and squeue, no shell, a time limit each), and the
 * health check's last verdicts (root's files in the health folder). Each problem is logged once, when it
 * starts, and its end once. */
#ifndef TBMESH_METRICS_READ_H
#define TBMESH_METRICS_READ_H

#include <stdint.h>
#include <sys/stat.h>

#include "conf.h"
#include "health.h"
#include "slurmstate.h"

/* Where a reading comes from. */
typedef struct mx_source {
    const char *conf_path;
    const char *health_dir;
    int no_jobs;          /* squeue is not asked */
    int timeout_ms;       /* each command's time limit */
    int records_window_s; /* Mac jobs that ended in this window are looked up in the record store; 0: none */
    int records_every_s;  /* at most this often (sacct asks slurmdbd) */
    int records_grace_s;  /* a job is looked for once it has been over this long */
} mx_source_t;

/* A problem being logged once: what was said, "" when none. */
typedef char mx_said_t[512];

/* A job's record found complete, and its file as it was then. */
typedef struct mx_seen_record {
    uint32_t job;
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
    off_t size;
} mx_seen_record_t;

/* What the readings keep. */
typedef struct mx_state {
    tbm_conf_t conf;
    int have_conf;
    struct stat conf_st;              /* the file read last: read again when it changes */
    int slurm_up;                     /* the last reading's answer */
    tbm_slurm_nodes_t nodes;          /* the last reading Slurm answered in full (scontrol, and squeue unless */
    tbm_slurm_jobs_t jobs;            /* --no-jobs) */
    int have_nodes, have_jobs;
    long long nodes_at;               /* when it was read (tbm_now_ms) */
    tbm_health_verdict_t *verdicts;   /* conf.n_nodes of them ... */
    const tbm_health_verdict_t **have_verdict;   /* ... and for each, itself or NULL (none, or refused) */
    long records_missing;             /* Mac jobs of the window without a complete record; -1: not known */
    long long records_at;             /* when they were last looked up (tbm_now_ms); 0: never */
    mx_seen_record_t *complete;       /* the window's jobs found complete, sorted by job: read again only when
                                       * their file changed */
    size_t n_complete;
    mx_said_t said_conf, said_slurm, said_nodes, said_jobs, said_dir, said_records, said_missing, said_sacct;
    mx_said_t *said_mac;              /* conf.n_nodes of them */
} mx_state_t;

void mx_state_init(mx_state_t *st);
void mx_state_free(mx_state_t *st);

/* Read tbmesh.conf into st (when it changed since the last time). 0, or -1 (said) when there is no
 * configuration to use: the first reading failed. A later failure keeps the last one (said once). */
int mx_read_conf(const mx_source_t *src, mx_state_t *st);

/* One reading: tbmesh.conf, Slurm, the verdicts; the records of the Mac jobs that ended, when it is time. */
void mx_read(const mx_source_t *src, mx_state_t *st);

/* The log line: time, the command's name, the message. */
void mx_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
