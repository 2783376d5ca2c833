/* probe.h: how macnode learns the facts of the host it runs on. One backend per OS (probe_darwin.c runs
 * the macOS commands, probe_linux.c asks hwloc and the kernel) and probe_replay.c, which reads the
 * outputs recorded for a simulated Mac. The macOS backends only capture raw outputs; lib/ parses them. */
#ifndef MACNODE_PROBE_H
#define MACNODE_PROBE_H

#include "tbmesh.h"
#include "parse_macos.h"
#include "parse_text.h"
#include "fileio.h"

/* The raw outputs of one probe and the buffers that hold them. */
typedef struct probe_capture {
    tbm_raw_outputs_t raw;
    char *bufs[16];
} probe_capture_t;

void probe_capture_free(probe_capture_t *cap);

/* Read the recorded outputs in `dir` (files named as in tbm_raw_sources). A missing file leaves its slot
 * empty (the parsers report it); a file that is a symlink, not a regular file, or larger than TBM_RAW_MAX
 * is an error. Returns 0, or -1 with err saying which file and why. */
int probe_replay_capture(const char *dir, probe_capture_t *cap, tbm_err_t *err);

/* Run the macOS commands (no shell, each with a time limit, no retries). Only on macOS; elsewhere it
 * fails with a message. */
int probe_darwin_capture(int timeout_ms, probe_capture_t *cap, tbm_err_t *err);

/* Run a `macnode netplan` script on this Mac (/bin/sh -e, as root, a time limit). macOS only: elsewhere
 * it refuses with a message. Returns 0, or 3 with err set. */
int probe_darwin_apply(const char *script, tbm_err_t *err);

/* The facts of a Linux host: name, memory, cores by kind (hwloc cpukinds), interfaces and addresses. */
int probe_linux_facts(tbm_host_facts_t *facts, tbm_findings_t *fs, tbm_err_t *err);

#endif
