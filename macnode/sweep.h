/* sweep.h: end what is left of a job on this Mac (macnoded's cleanup and the end of each task it ran,
 * `macnode cleanup --local` in a direct-mode Mac's epilog): whom lib/reap.h names among the processes procs.h
 * reads gets SIGTERM (and SIGCONT), those still there after the grace SIGKILL; the table is read again each
 * round, so that a process that forked or lost its parent meanwhile is found too. */
#ifndef MACNODE_SWEEP_H
#define MACNODE_SWEEP_H

#include <stddef.h>

#include "errbuf.h"
#include "reap.h"

#define SWEEP_KILL_MS 5000   /* how long SIGKILL is sent again to what is still there */

/* Sweep for ask (grace_ms from SIGTERM to SIGKILL; 0: SIGKILL at once). 0 with *ended (the processes
 * signalled) and why (lib/reap.h's reason, for the log), or -1 with err when the table cannot be read. */
int sweep_job(const tbm_reap_ask_t *ask, int grace_ms, int *ended, char *why, size_t len, tbm_err_t *err);

#endif
