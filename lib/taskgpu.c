/* taskgpu.c: a task's GPU figures and energy, reported or not (taskgpu.h). */
#include "taskgpu.h"

#include <math.h>
#include <stdio.h>

static double share(double v)
{
    return !isfinite(v) || v < 0 ? 0 : v > 1 ? 1 : v;
}

void tbm_task_gpu_fill(tbm_rusage_t *ru, const tbm_task_gpu_t *w, int read, int metrics_on, double wall_s,
                       double interval_s)
{
    int why = !metrics_on ? TBM_METER_OFF : read < 0 || !w ? TBM_METER_NO_RING
              : !(wall_s >= interval_s) ? TBM_METER_SHORT : TBM_METER_SAID_NOTHING;

    ru->gpu_samples = ru->power_samples = 0;
    ru->gpu_mean = ru->gpu_peak = ru->energy_j = 0;
    ru->gpu_why = ru->energy_why = why;
    if (why != TBM_METER_SAID_NOTHING)
        return;
    if (w->samples > 0) {
        ru->gpu_samples = w->samples;
        ru->gpu_peak = share(w->gpu_peak);
        ru->gpu_mean = share(w->gpu_mean) < ru->gpu_peak ? share(w->gpu_mean) : ru->gpu_peak;
    } else {
        ru->gpu_why = TBM_METER_NO_SAMPLES;
    }
    if (w->power_samples > 0 && isfinite(w->energy_j) && w->energy_j >= 0) {
        ru->power_samples = w->power_samples;
        ru->energy_j = w->energy_j;
    } else {
        ru->energy_why = TBM_METER_NO_SAMPLES;
    }
}

const char *tbm_meter_why_text(int why)
{
    switch (why) {
    case TBM_METER_OFF: return "the Mac's agent samples nothing: its metrics are off (macnoded --metrics off)";
    case TBM_METER_NO_RING: return "the Mac's agent could not read its samples (its log says why)";
    case TBM_METER_SHORT: return "the task ran less than one sample interval";
    case TBM_METER_NO_SAMPLES: return "no sample of the task's time had the figure (the Mac does not report it, or "
                                      "its sampler did not run then)";
    default: return NULL;
    }
}

void tbm_energy_text(double j, char *buf, size_t len)
{
    if (!isfinite(j) || j < 0)
        snprintf(buf, len, "?");
    else if (j < 10e3)
        snprintf(buf, len, "%.1f J", j);
    else if (j < 3.6e6)
        snprintf(buf, len, "%.1f kJ (%.2f Wh)", j / 1e3, j / 3600);
    else
        snprintf(buf, len, "%.2f kWh", j / 3.6e6);
}
