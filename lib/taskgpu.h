/* taskgpu.h: a task's GPU figures and energy from what the Mac's sampler kept while the task ran
 * (lib/samplering.h), each reported or not and why (proto.h's tbm_rusage_t), and how they read for people.
 * Pure: the agent reads the ring and hands the window in. */
#ifndef TBM_TASKGPU_H
#define TBM_TASKGPU_H

#include <stddef.h>

#include "proto.h"
#include "samplering.h"

/* Set ru's GPU and energy members for a task of wall_s seconds. metrics_on: the agent runs its sampler (else
 * nothing is reported: metrics-off, and the ring, which may be an old one, is not looked at); read: 0 when the
 * sample ring of the agent was read and w holds its window of the task's time, -1 when it could not be
 * (no-ring); interval_s: the sampler's interval. A task shorter than one interval reports nothing (short: a
 * sample or none may fall in its time, and a sample tells of the interval before it, not of the task); else
 * the GPU figures when a sample of its time had one, the energy when one had the package power (no-samples
 * when none had). Never 0 for a figure not known. */
void tbm_task_gpu_fill(tbm_rusage_t *ru, const tbm_task_gpu_t *w, int read, int metrics_on, double wall_s,
                       double interval_s);

/* What a why means, for people ("the task ran less than one sample interval"); NULL for one not known. */
const char *tbm_meter_why_text(int why);

/* Energy for people: "532.4 J" below 10 kJ, "12.3 kJ (3.42 Wh)" below 3.6 MJ, then "1.23 kWh". */
void tbm_energy_text(double joules, char *buf, size_t len);

#endif
