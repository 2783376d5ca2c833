/* metrics.h: a Mac's readings and their Prometheus form. A reading is a value a command reported, or "not
 * reported" (never a made-up zero). The writer makes the Prometheus text exposition format, version 0.0.4:
 * families with HELP and TYPE, each written once, in the order of their names, samples in the order of their
 * labels; names checked, label values escaped, +Inf, -Inf and NaN spelled as the format spells them; memory
 * bounded by a limit on series given at the start. The counter-rate helper turns counter readings into
 * rates across resets and (for counters declared 32-bit) wraps. */
#ifndef TBM_METRICS_H
#define TBM_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

/* A value a command reported, or not. */
typedef struct tbm_reading {
    double value;
    int reported;
} tbm_reading_t;

static inline tbm_reading_t tbm_reported(double value)
{
    tbm_reading_t r = { value, 1 };
    return r;
}

/* --- the exposition writer ------------------------------------------------------------------------------ */

typedef enum tbm_metric_type {
    TBM_METRIC_GAUGE,
    TBM_METRIC_COUNTER,
} tbm_metric_type_t;

typedef struct tbm_label {
    const char *name;
    const char *value;
} tbm_label_t;

#define TBM_METRICS_FAMILIES_MAX 256     /* families in one exposition */
#define TBM_METRICS_LABELS_MAX   16      /* labels on one sample */
#define TBM_METRICS_NAME_MAX     128     /* a metric or label name, in bytes */
#define TBM_METRICS_VALUE_MAX    1024    /* a label value, in bytes */
#define TBM_METRICS_HELP_MAX     1024    /* a HELP text, in bytes */
#define TBM_METRICS_SERIES_LIMIT 100000  /* the largest max_series tbm_metrics_new() takes */

typedef struct tbm_metrics tbm_metrics_t;

/* An empty exposition that will hold at most max_series samples (1 to TBM_METRICS_SERIES_LIMIT). NULL when
 * max_series is out of range or memory ran out. */
tbm_metrics_t *tbm_metrics_new(size_t max_series);
void tbm_metrics_free(tbm_metrics_t *m);

/* Declare a family, once. The name: [a-z_][a-z0-9_]* (snake_case; no colons, which are kept for recording
 * rules), a counter's ending in "_total", no other name ending in _count, _sum or _bucket (histograms' and
 * summaries' own). help: one line of UTF-8 text, not empty. Returns 0, or -1 with err saying why. */
int tbm_metrics_family(tbm_metrics_t *m, const char *name, tbm_metric_type_t type, const char *help,
                       tbm_err_t *err);

/* One sample of a declared family. Label names: [a-z_][a-z0-9_]*, not starting "__", each once; values: UTF-8
 * (escaped on output). A counter's value is neither negative nor NaN. A second sample with the same labels
 * (in any order) is refused, as is a sample past max_series. Returns 0, or -1 with err saying why. */
int tbm_metrics_add(tbm_metrics_t *m, const char *name, const tbm_label_t *labels, size_t nlabels, double value,
                    tbm_err_t *err);

/* The same for a reading: nothing is added when it was not reported (returns 0). */
int tbm_metrics_add_reading(tbm_metrics_t *m, const char *name, const tbm_label_t *labels, size_t nlabels,
                            tbm_reading_t reading, tbm_err_t *err);

/* The exposition text (malloc'd, the caller frees it), or NULL with err set when memory ran out. */
char *tbm_metrics_text(const tbm_metrics_t *m, tbm_err_t *err);

/* The value as the format writes it: "+Inf", "-Inf", "NaN", or the shortest decimal that reads back to it. */
void tbm_metrics_value_text(double value, char *buf, size_t size);

/* --- counter rates ----------------------------------------------------------------------------------------- */

/* What a counter reading gave. */
typedef enum tbm_rate_status {
    TBM_RATE_FIRST,     /* the first reading: no rate yet */
    TBM_RATE_OK,        /* a rate over the time since the last reading */
    TBM_RATE_RESET,     /* the counter went back: it restarted from 0, and the rate counts from there */
    TBM_RATE_WRAPPED,   /* a 32-bit counter passed its top and started again from 0 */
} tbm_rate_status_t;

typedef struct tbm_counter_rate {
    int bits;           /* 32: the counter wraps at 2^32; 64: it never wraps (going back is a reset) */
    int have;           /* a reading is kept */
    uint64_t last;
    double last_s;      /* when, in seconds of a monotonic clock */
} tbm_counter_rate_t;

/* bits is 32 or 64; anything else is taken as 64. */
void tbm_counter_rate_init(tbm_counter_rate_t *cr, int bits);

/* Feed the reading `value` taken at `now_s`. *rate (per second, never negative) is set unless the status is
 * TBM_RATE_FIRST. A 32-bit counter that goes back is taken as wrapped when the way round the top is at most
 * half its range (2^31), else as reset. Returns the status, or -1 with err set (the reading is not kept)
 * when now_s does not come after the last reading's time, or a 32-bit counter's value does not fit 32 bits. */
int tbm_counter_rate_feed(tbm_counter_rate_t *cr, uint64_t value, double now_s, double *rate, tbm_err_t *err);

#endif
