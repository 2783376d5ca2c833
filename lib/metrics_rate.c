/* metrics_rate.c: rates from counter readings (see metrics.h): a counter that goes back was reset and counts
 * again from 0; a 32-bit counter that passed its top is counted round it. */
#include "metrics.h"

#include <inttypes.h>
#include <math.h>

#define TOP32 ((uint64_t)1 << 32)

void tbm_counter_rate_init(tbm_counter_rate_t *cr, int bits)
{
    cr->bits = bits == 32 ? 32 : 64;
    cr->have = 0;
    cr->last = 0;
    cr->last_s = 0;
}

int tbm_counter_rate_feed(tbm_counter_rate_t *cr, uint64_t value, double now_s, double *rate, tbm_err_t *err)
{
    int status = TBM_RATE_OK;
    uint64_t delta = 0;

    if (cr->bits == 32 && value >= TOP32)
        return tbm_errprintf(err, "the reading %" PRIu64 " does not fit the 32 bits the counter was declared with: "
                                  "declare it as 64-bit", value);
    if (!isfinite(now_s) || (cr->have && !(now_s > cr->last_s)))
        return tbm_errprintf(err, "a counter reading at %.6f s does not come after the last one (%.6f s): take "
                                  "readings from one monotonic clock, in order", now_s, cr->last_s);
    if (!cr->have) {
        status = TBM_RATE_FIRST;
    } else if (value >= cr->last) {
        delta = value - cr->last;
    } else if (cr->bits == 32 && TOP32 - cr->last + value <= TOP32 / 2) {
        delta = TOP32 - cr->last + value;
        status = TBM_RATE_WRAPPED;
    } else {
        delta = value;           /* reset: counted again from 0 */
        status = TBM_RATE_RESET;
    }
    if (status != TBM_RATE_FIRST)
        *rate = (double)delta / (now_s - cr->last_s);
    cr->have = 1;
    cr->last = value;
    cr->last_s = now_s;
    return status;
}
