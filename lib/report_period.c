/* report_period.c: the usage report's period from --since/--until, --month or --last, in local time, and the
 * length of the windows it is read from slurmdbd in. */
#include "config.h"
#include "report.h"
#include "scalar.h"

#include <stdio.h>
#include <string.h>

#define DEFAULT_LAST_S (7 * 86400)

static int two_digits(const char *s, int min, int max, int *out)
{
    long long v;
    char buf[3] = { s[0], s[0] ? s[1] : 0, 0 };

    if (strlen(buf) != 2 || tbm_parse_ll(buf, 10, min, max, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

static int mk_local(int y, int mon, int d, int h, int mi, int s, time_t *out)
{
    struct tm tm;

    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = mon - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    tm.tm_isdst = -1;
    *out = mktime(&tm);
    /* mktime normalises 31 February into March: refuse what it had to move */
    if (*out == (time_t)-1 || tm.tm_mday != d || tm.tm_mon != mon - 1)
        return -1;
    return 0;
}

/* "YYYY-MM" at the start of s: year and month. */
static int year_month(const char *s, int *y, int *m)
{
    char buf[5];
    long long v;

    if (strlen(s) < 7 || s[4] != '-')
        return -1;
    memcpy(buf, s, 4);
    buf[4] = 0;
    if (tbm_parse_ll(buf, 10, 1970, 9999, &v) < 0 || two_digits(s + 5, 1, 12, m) < 0)
        return -1;
    *y = (int)v;
    return 0;
}

int tbm_period_parse_time(const char *s, time_t now, time_t *out, tbm_err_t *err)
{
    int y, m, d, h = 0, mi = 0, sec = 0;
    size_t len = s ? strlen(s) : 0;

    if (s && !strcmp(s, "now")) {
        *out = now;
        return 0;
    }
    if (!s || (len != 10 && len != 16 && len != 19) || year_month(s, &y, &m) < 0 || s[7] != '-' ||
        two_digits(s + 8, 1, 31, &d) < 0 ||
        (len > 10 && ((s[10] != 'T' && s[10] != ' ') || two_digits(s + 11, 0, 23, &h) < 0 || s[13] != ':' ||
                      two_digits(s + 14, 0, 59, &mi) < 0)) ||
        (len > 16 && (s[16] != ':' || two_digits(s + 17, 0, 59, &sec) < 0)))
        return tbm_errprintf(err, "'%s' is not a time: write YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] or now",
                             s ? s : "");
    if (mk_local(y, m, d, h, mi, sec, out) < 0)
        return tbm_errprintf(err, "'%s' is not a date of the calendar: check the day of the month", s);
    return 0;
}

int tbm_period_month(const char *s, tbm_period_t *out, tbm_err_t *err)
{
    int y, m;

    if (!s || strlen(s) != 7 || year_month(s, &y, &m) < 0)
        return tbm_errprintf(err, "'%s' is not a month: write YYYY-MM, e.g. --month 2026-11", s ? s : "");
    if (mk_local(y, m, 1, 0, 0, 0, &out->since) < 0 ||
        mk_local(m == 12 ? y + 1 : y, m == 12 ? 1 : m + 1, 1, 0, 0, 0, &out->until) < 0)
        return tbm_errprintf(err, "'%s' is out of the range this system's clock can represent", s);
    return 0;
}

int tbm_period_last(const char *s, time_t now, tbm_period_t *out, tbm_err_t *err)
{
    char num[16];
    size_t len = s ? strlen(s) : 0;
    long long n, unit = 86400;

    if (len > 0 && len < sizeof(num)) {
        memcpy(num, s, len + 1);
        switch (num[len - 1]) {
        case 'm': unit = 60; num[len - 1] = 0; break;
        case 'h': unit = 3600; num[len - 1] = 0; break;
        case 'd': unit = 86400; num[len - 1] = 0; break;
        case 'w': unit = 7 * 86400; num[len - 1] = 0; break;
        default: break;
        }
        if (tbm_parse_ll(num, 10, 1, 100000, &n) == 0 && n * unit <= 100LL * 366 * 86400) {
            out->until = now;
            out->since = now - (time_t)(n * unit);
            return 0;
        }
    }
    return tbm_errprintf(err, "'%s' is not a length of time: write N followed by m, h, d or w (at most "
                         "100 years), e.g. --last 7d or --last 30m", s ? s : "");
}

int tbm_period_from_options(const char *since, const char *until, const char *month, const char *last,
                            time_t now, tbm_period_t *out, tbm_err_t *err)
{
    char a[32], b[32];
    struct tm tm;

    if ((month || last) && (since || until))
        return tbm_errprintf(err, "--%s cannot be combined with --since/--until: give one way of saying the "
                             "period", month ? "month" : "last");
    if (month && last)
        return tbm_errprintf(err, "--month and --last cannot be combined: give one of them");
    if (month) {
        if (tbm_period_month(month, out, err) < 0)
            return -1;
    } else if (last) {
        if (tbm_period_last(last, now, out, err) < 0)
            return -1;
    } else {
        out->until = now;
        out->since = now - DEFAULT_LAST_S;
        if (until && tbm_period_parse_time(until, now, &out->until, err) < 0)
            return tbm_errprefix(err, "--until: ");
        if (since && tbm_period_parse_time(since, now, &out->since, err) < 0)
            return tbm_errprefix(err, "--since: ");
        if (!since && until)
            out->since = out->until - DEFAULT_LAST_S;
    }
    /* both ends given the wrong way round is said as such, even in the future */
    if (out->since >= now && !(since && until && out->until <= out->since))
        return tbm_errprintf(err, "the period starts in the future (%s): nothing has run yet; give an "
                             "earlier start", since ? since : month ? month : "");
    if (out->until <= out->since) {
        strftime(a, sizeof(a), "%Y-%m-%dT%H:%M:%S", localtime_r(&out->since, &tm));
        strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", localtime_r(&out->until, &tm));
        return tbm_errprintf(err, "the period is reversed or empty (since %s, until %s): --since must come "
                             "before --until", a, b);
    }
    return 0;
}

time_t tbm_report_next_window(time_t w, size_t n, size_t target, time_t min_s, time_t max_s)
{
    double f = n ? (double)target / (double)n : 8.0;

    f = f < 0.125 ? 0.125 : f > 8.0 ? 8.0 : f;
    w = (time_t)((double)w * f);
    return w < min_s ? min_s : w > max_s ? max_s : w;
}
