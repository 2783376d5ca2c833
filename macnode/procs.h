/* procs.h: this Mac's process table as a job's end needs it (lib/reap.h decides whom to end): one file per
 * OS behind this interface, procs_linux.c (/proc) and procs_darwin.c (sysctl KERN_PROC), as linkmon's. Used by
 * the agent's cleanup and by `macnode cleanup --local` (a direct-mode Mac's epilog). */
#ifndef MACNODE_PROCS_H
#define MACNODE_PROCS_H

#include <stddef.h>

#include "errbuf.h"
#include "reap.h"

/* Every process of this Mac (*out malloc'd, *n of them; free it). On Linux, where the embedded lab's Macs are
 * network namespaces of one host, a process is this Mac's when it shares the caller's network namespace. 0,
 * or -1 with err. */
int procs_read(tbm_proc_t **out, size_t *n, tbm_err_t *err);

/* Send sig to p when it is still the process that was read, with the same uid (on Linux through a pidfd, so
 * that a pid used again meanwhile by another process is never signalled). 0, or -1 (gone, or not the same). */
int procs_signal(const tbm_proc_t *p, int sig);

#endif
