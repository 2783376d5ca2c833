/* parse_ioreg.h: the output of `ioreg -r -d 1 -w 0 -c IOAccelerator` (no root needed) read into the GPU's
 * readings. ioreg prints each matching object as a line "+-o NAME  <class CLASS, id ...>" followed by its
 * properties between a "{" line and a "}" line, one `"key" = value` a line; the driver's counters are in
 * `"PerformanceStatistics" = {"Device Utilization %"=17,...}`. Read from it: "Device Utilization %",
 * "Renderer Utilization %", "Tiler Utilization %" (whole percents, 0..100), "In use system memory" and
 * "Alloc system memory" (bytes); and the object's "model" and "gpu-core-count". A key that is absent is not
 * reported. See tests/fixtures/macos/README.md for where the shape was confirmed. */
#ifndef TBM_PARSE_IOREG_H
#define TBM_PARSE_IOREG_H

#include <stddef.h>

#include "errbuf.h"
#include "metrics.h"

#define TBM_IOREG_GPUS_MAX 8       /* accelerator objects in one output */
#define TBM_IOREG_NAME_MAX 64
#define TBM_IOREG_DEPTH_MAX 8      /* dicts and arrays inside a property's value */

typedef struct tbm_ioreg_gpu {
    char ioclass[TBM_IOREG_NAME_MAX];   /* the object's class: "AGXAcceleratorG15X" */
    char model[TBM_IOREG_NAME_MAX];     /* "model": "Apple M3 Ultra"; "" when absent */
    long gpu_cores;                     /* "gpu-core-count"; -1 when absent */
    int has_stats;                      /* a PerformanceStatistics dictionary was there */
    tbm_reading_t device_util;          /* percent, 0..100 */
    tbm_reading_t renderer_util;
    tbm_reading_t tiler_util;
    tbm_reading_t mem_in_use;           /* bytes */
    tbm_reading_t mem_alloc;
} tbm_ioreg_gpu_t;

typedef struct tbm_ioreg {
    int n;
    tbm_ioreg_gpu_t gpu[TBM_IOREG_GPUS_MAX];
} tbm_ioreg_t;

/* Read every accelerator object of the output (none when the output is empty: ioreg found no accelerator).
 * Returns 0, or -1 with err naming the line and what is wrong (text that is not ioreg's, a property outside
 * an object, an output cut short, a value that is not closed, a counter that is not a whole number, a
 * percent above 100, more than TBM_IOREG_GPUS_MAX objects) and what to do. */
int tbm_parse_ioreg(const char *text, size_t len, tbm_ioreg_t *out, tbm_err_t *err);

#endif
