/* utctime.c: a time of day as ISO 8601 text in UTC (see utctime.h). */
#include "utctime.h"

int tbm_utc_iso(time_t t, tbm_utc_form_t form, char *buf, size_t len)
{
    struct tm tm;
    const char *fmt = form == TBM_UTC_BASIC ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ";

    if (len == 0)
        return -1;
    buf[0] = '\0';
    if (t <= 0 || !gmtime_r(&t, &tm) || strftime(buf, len, fmt, &tm) == 0) {
        buf[0] = '\0';
        return -1;
    }
    return 0;
}
