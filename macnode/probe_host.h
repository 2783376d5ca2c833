/* probe_host.h: this host's facts through the right backend (darwin, linux or replay), shared by
 * `macnode probe` and macnoded's probe request. */
#ifndef MACNODE_PROBE_HOST_H
#define MACNODE_PROBE_HOST_H

#include "probe.h"

/* The default backend of this OS: "darwin" on macOS, "linux" elsewhere. */
const char *probe_default_backend(void);

/* Probe with `backend` (NULL: the default; "replay" reads `dir`). What is wrong with the host goes to fs;
 * -1 with err only when nothing could be probed. The host is called `name` (NULL: its own name), in the
 * facts and in the findings that name its ports. */
int probe_host(const char *backend, const char *dir, int timeout_ms, const char *name, tbm_host_facts_t *f,
               tbm_findings_t *fs, tbm_err_t *err);

#endif
