/* sample_os.h: what the agent's sampler reads from the OS itself, one file per OS: sample_linux.c (the
 * embedded lab's simulated Macs) and sample_darwin.c (macOS). The decisions on what these readings mean are
 * in lib/macsample.c. */
#ifndef MACNODE_SAMPLE_OS_H
#define MACNODE_SAMPLE_OS_H

#include "errbuf.h"
#include "macsample.h"

/* The CPU time counters of the whole machine. 0, or -1 with err. */
int sample_os_cpu(tbm_cpu_ticks_t *t, tbm_err_t *err);

/* Physical memory, memory in use and (macOS) the pressure level into s. 0, or -1 with err. */
int sample_os_memory(tbm_mac_sample_t *s, tbm_err_t *err);

/* The interface's state (l->up: 1 up and running, 0 not, -1 not there) and its counters. 0 (also when the
 * interface is not there), or -1 with err when it cannot be read. */
int sample_os_link(const char *iface, tbm_ms_link_t *l, tbm_err_t *err);

#endif
