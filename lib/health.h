/* health.h: is this Mac still what tbmesh.conf says it is? One Mac's facts (macnode probe) checked against its
 * cables in tbmesh.conf: a Thunderbolt port bound to each cable's interface with a Mac at the other end at the
 * cable's speed, the interface up and active with its planned address, the RDMA device where the group has
 * RDMA (or the cable joins two Macs of its RdmaSubset=), and bridge0 not up. `macnode check` drains a Mac that fails, with the first error as the reason. */
#ifndef TBM_HEALTH_H
#define TBM_HEALTH_H

#include <stddef.h>

#include "conf.h"
#include "facts.h"
#include "finding.h"

/* Drain reasons that slurm-tbmesh set start with this; only those are lifted when the Mac is well again. */
#define TBM_HEALTH_REASON_PREFIX "tbmesh: "

/* How long the health check waits for each reply of a bridge-mode Mac's agent (ms). Slurm kills a
 * HealthCheckProgram after 60 s, which would leave a Mac whose agent hangs as it is: the check gives up well
 * before, with time left to drain the Mac (scontrol) saying why. */
#define TBM_HEALTH_AGENT_MS 20000

/* Append what is wrong with `node` (a node of conf) to fs. Returns how many errors were found; a node that
 * is not in conf is one error. Warnings (a slower link than the cable's Speed=) do not count. */
size_t tbm_health_check(const tbm_conf_t *conf, const char *node, const tbm_host_facts_t *facts,
                        tbm_findings_t *fs);

/* The first error of fs as a Slurm drain reason: "tbmesh: <code> at <where>: <what>" and, when there are
 * more, " (and N more)", cut to fit len bytes (Slurm keeps reasons short: 128 is plenty). */
void tbm_health_reason(const tbm_findings_t *fs, char *buf, size_t len);

/* How Slurm has a node, from the first line of `scontrol show node NAME --oneliner` (read by
 * lib/slurmstate.c): not drained, drained by slurm-tbmesh (its State token has DRAIN and its Reason starts
 * with TBM_HEALTH_REASON_PREFIX), drained for another reason (an admin's: never to be touched), or unknown
 * (not a node line, or no State in it). */
typedef enum tbm_drain_state {
    TBM_DRAIN_NONE = 0,
    TBM_DRAIN_OURS,
    TBM_DRAIN_OTHER,
    TBM_DRAIN_UNKNOWN,
} tbm_drain_state_t;

tbm_drain_state_t tbm_health_drain_state(const char *show_node_line);

/* ---- the last verdict (health_verdict.c) ---------------------------------------------------------------- */

/* `macnode check --verdict-dir DIR` leaves its verdict on a Mac in DIR/NODE.json, written by root atomically,
 * for `tbmesh metrics` to export:
 *   {"node":"mac01","verdict":"unwell","reason":"tbmesh: cable-missing at ...","time":1736850067}
 * Unknown members are skipped (a later release may add some). */
#define TBM_HEALTH_VERDICT_DIR   "/run/tbmesh/health"   /* the folder both sides use by default */
#define TBM_HEALTH_VERDICT_BYTES 4096                   /* the largest verdict file read */
#define TBM_HEALTH_VERDICT_REASON_MAX 256               /* a reason, with its NUL */

typedef enum tbm_health_state {
    TBM_HEALTH_WELL = 0,     /* nothing wrong (warnings aside) */
    TBM_HEALTH_UNWELL,       /* errors: the reason names the first */
    TBM_HEALTH_UNKNOWN,      /* no facts (the probe or the agent failed): cannot tell */
} tbm_health_state_t;

typedef struct tbm_health_verdict {
    char node[TBM_HOSTNAME_MAX];
    tbm_health_state_t verdict;
    char reason[TBM_HEALTH_VERDICT_REASON_MAX];   /* "" when well */
    long long time;                                /* when the check ended, Unix seconds */
} tbm_health_verdict_t;

/* "well", "unwell", "unknown". */
const char *tbm_health_state_name(tbm_health_state_t v);

/* The file's name in the folder: "NODE.json". 0, or -1 when node is not a host name (tbm_hostname_valid, not
 * starting with '.') or it does not fit. */
int tbm_health_verdict_file(const char *node, char *buf, size_t len);

/* The verdict as the file holds it (malloc'd, one line with its line end), or NULL with err when a field is
 * not one the reader takes back (bad node name, a reason with control bytes, time <= 0) or memory ran out. */
char *tbm_health_verdict_json(const tbm_health_verdict_t *v, tbm_err_t *err);

/* Read a verdict file's text (at most TBM_HEALTH_VERDICT_BYTES): JSON, an object with node (a host name,
 * equal to `node` when not NULL), verdict (one of the three), reason (printable, shorter than
 * TBM_HEALTH_VERDICT_REASON_MAX; may be absent when well) and time (1 to 4102444800: the years 1970 to 2100).
 * 0, or -1 with err saying what was wrong. */
int tbm_health_verdict_parse(const char *text, size_t len, const char *node, tbm_health_verdict_t *v,
                             tbm_err_t *err);

#endif
