/* utctime.h: a time of day as ISO 8601 text in UTC, the one way the project writes one (records, logs, file
 * names, what `tbmesh repro show` prints). */
#ifndef TBM_UTCTIME_H
#define TBM_UTCTIME_H

#include <stddef.h>
#include <time.h>

typedef enum tbm_utc_form {
    TBM_UTC_EXTENDED,   /* 2026-12-04T23:18:26Z */
    TBM_UTC_BASIC       /* 20261204T231826Z: for file names */
} tbm_utc_form_t;

/* t (seconds since the epoch) in that form into buf. 0, or -1 with buf "" when t is not after the epoch or
 * the text does not fit. */
int tbm_utc_iso(time_t t, tbm_utc_form_t form, char *buf, size_t len);

#endif
