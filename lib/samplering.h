/* samplering.h: the Mac's recent GPU and power samples, kept by the agent's sampler in a ring (a file of the
 * state folder) so that a task's server can say, when its task ends, what the Mac's GPU and package power did
 * while it ran: mean and peak GPU busy share, energy in joules. Times are of one monotonic clock (seconds).
 * The ring's bytes are laid out here (header, then points) so that a damaged or foreign file is told apart
 * and refused. */
#ifndef TBM_SAMPLERING_H
#define TBM_SAMPLERING_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

#define TBM_RING_POINTS 8640          /* a day at the default 10 s interval */

typedef struct tbm_ring_point {
    double t;                         /* monotonic seconds */
    float gpu;                        /* GPU busy share 0..1; < 0 not reported */
    float watts;                      /* package power; < 0 not reported */
} tbm_ring_point_t;

typedef struct tbm_ring_header {
    char magic[8];                    /* "TBMRING1" */
    uint32_t cap;                     /* points the ring holds */
    uint32_t point_size;              /* sizeof(tbm_ring_point_t) */
    uint64_t count;                   /* points ever written: the next goes to count % cap */
} tbm_ring_header_t;

/* The bytes of an empty ring of cap points. */
size_t tbm_ring_bytes(uint32_t cap);
void tbm_ring_header_init(tbm_ring_header_t *h, uint32_t cap);

/* Check a ring's bytes (header and length). 0, or -1 with err saying what is wrong. */
int tbm_ring_check(const void *buf, size_t len, tbm_err_t *err);

/* The same for a header read apart from the ring's len bytes (a writer that reads only the header). */
int tbm_ring_header_check(const tbm_ring_header_t *h, size_t len, tbm_err_t *err);

/* Where the next point goes (a byte offset into the ring), and the header after it is written. */
size_t tbm_ring_next_offset(const tbm_ring_header_t *h);

/* What the Mac did while a task ran. */
typedef struct tbm_task_gpu {
    int samples;                      /* samples with a GPU figure inside the window */
    double gpu_mean, gpu_peak;        /* over them, 0..1 */
    int power_samples;                /* samples with a power figure */
    double energy_j;                  /* package energy over the window: each sample's power times the time
                                         since the one before it (inside the window, at most max_gap_s); the
                                         time after the window's last sample is not counted */
} tbm_task_gpu_t;

/* The figures of the window [from, to] from a checked ring's bytes. A window with no sample gives
 * samples = power_samples = 0. */
void tbm_ring_window(const void *buf, size_t len, double from, double to, double max_gap_s, tbm_task_gpu_t *out);

#endif
