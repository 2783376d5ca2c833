/* fuzz_report.c: libFuzzer harness of the report's text inputs: the period options (--since, --until,
 * --month, --last) and the TRES strings slurmdbd hands over. Anything is read or refused with a message;
 * a period read is never reversed or empty, and a job with any node list and TRES string folds in or is
 * refused with a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define REQUIRE(cond) do { if (!(cond)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const time_t now = 1793491200;   /* 2026-11-01 */
    char *s = malloc(size + 1);
    tbm_err_t err = { { 0 } };
    tbm_period_t p;
    uint64_t v;
    time_t t;

    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    setenv("TZ", "UTC", 1);
    if (tbm_period_from_options(s, NULL, NULL, NULL, now, &p, &err) == 0)
        REQUIRE(p.since < p.until && p.since < now);
    else
        REQUIRE(err.msg[0]);
    err.msg[0] = 0;
    if (tbm_period_from_options(NULL, NULL, s, NULL, now, &p, &err) == 0)
        REQUIRE(p.since < p.until);
    else
        REQUIRE(err.msg[0]);
    err.msg[0] = 0;
    if (tbm_period_from_options(NULL, NULL, NULL, s, now, &p, &err) == 0)
        REQUIRE(p.since < p.until && p.until == now);
    else
        REQUIRE(err.msg[0]);
    if (tbm_period_parse_time(s, now, &t, &err) < 0)
        REQUIRE(err.msg[0]);
    (void)tbm_tres_count(s, 1, &v);
    {
        tbm_report_opts_t o;
        tbm_report_t *r;
        tbm_rjob_t j = { 1, "u", "a", "p", "COMPLETED", s, NULL, now - 10, now - 9, now - 1, 1, 1, 0, 0, 0, -1 };
        memset(&o, 0, sizeof(o));
        o.period.since = now - 100;
        o.period.until = now;
        o.now = now;
        if ((r = tbm_report_new(&o, &err))) {
            err.msg[0] = 0;
            if (tbm_report_add_job(r, &j, &err) < 0)
                REQUIRE(err.msg[0]);
            tbm_report_free(r);
        }
    }
    free(s);
    return 0;
}
