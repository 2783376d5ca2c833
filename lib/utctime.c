/* utctime.c: a time of day as ISO 8601 text in UTC (see utctime.h). */
#include "utctime.h"

int tbm_utc_iso(time_t t, tbm_utc_form_t form, char *buf, size_t len)
{
    struct tm tm;
    size_t n;

    if (len == 0)
        return -1;
    buf[0] = '\0';
    if (t <= 0 || !gmtime_r(&t, &tm))
        return -1;
    if (form == TBM_UTC_BASIC)
        n = strftime(buf, len, "%Y%m%dT%H%M%SZ", &tm);
    else
        n = strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (n == 0)
        buf[0] = '\0';
    return n == 0 ? -1 : 0;
}
