/* parse_powermetrics.h: the output of `powermetrics --samplers cpu_power,gpu_power -f plist -i MS -n 1` (root
 * only, on the Mac) read into readings: one property list per sample, samples separated by a NUL byte.
 *
 * Keys read (units as powermetrics writes them; see tests/fixtures/macos/README.md for the sources):
 *   elapsed_ns (ns), hw_model;
 *   processor/cpu_power, gpu_power, ane_power, combined_power (mW, the average over the sample);
 *   processor/cpu_energy, gpu_energy, ane_energy (mJ over the sample); processor/package_energy (mJ, macOS 12,
 *   which has no combined_power);
 *   gpu/idle_ratio (0..1), gpu/freq_hz (written in MHz despite its name), gpu/gpu_energy (mJ; used when
 *   processor/gpu_energy is absent, as with the gpu_power sampler alone).
 * A key that is absent is "not reported". A power that is absent while its energy and the sample's length are
 * there is the energy over the length. Other keys are skipped. */
#ifndef TBM_PARSE_POWERMETRICS_H
#define TBM_PARSE_POWERMETRICS_H

#include <stddef.h>

#include "errbuf.h"
#include "metrics.h"

#define TBM_PM_SAMPLES_MAX 16              /* samples in one output */
#define TBM_PM_OUTPUT_MAX (16u * 1024u * 1024u)   /* one output, all samples */

typedef struct tbm_pm_sample {
    char hw_model[32];              /* "Mac16,10"; "" when not reported */
    tbm_reading_t elapsed_s;        /* the sample's length */
    tbm_reading_t gpu_active;       /* GPU active residency, 0..1: 1 - gpu/idle_ratio */
    tbm_reading_t gpu_freq_mhz;     /* the GPU's average frequency while active */
    tbm_reading_t gpu_power_w;
    tbm_reading_t gpu_energy_j;
    tbm_reading_t cpu_power_w;
    tbm_reading_t cpu_energy_j;
    tbm_reading_t ane_power_w;
    tbm_reading_t ane_energy_j;
    tbm_reading_t package_power_w;  /* combined_power: CPU + GPU + ANE (macOS 13 and later) */
    tbm_reading_t package_energy_j; /* package_energy (macOS 12) */
} tbm_pm_sample_t;

typedef struct tbm_pm_output {
    int n;
    tbm_pm_sample_t sample[TBM_PM_SAMPLES_MAX];
} tbm_pm_output_t;

/* Read every sample of the output. Returns 0 with out->n >= 1, or -1 with err naming the sample, the line and
 * what is wrong (an empty output, a text that is not a property list, one cut short, a key of the wrong type,
 * a negative power or energy, an idle ratio outside 0..1, a sample length that is not positive, more than
 * TBM_PM_SAMPLES_MAX samples), and what to do. */
int tbm_parse_powermetrics(const char *text, size_t len, tbm_pm_output_t *out, tbm_err_t *err);

#endif
