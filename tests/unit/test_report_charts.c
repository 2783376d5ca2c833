/* test_report_charts.c: unit tests of the usage report's chart over time and its impossible figures: the
 * buckets follow the period down to a minute, the axis carries real values, an empty period says so in words,
 * and an efficiency above 100% carries its reason beside it in every format. */
#include "tbm_check.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static const char *conf_text =
    "Group=mini-b Nodes=mac[05-08] Topology=ring Link=tb4 Rdma=no Mode=direct Backends=ring,mpi\n"
    "Cable=mac05:en3,mac06:en2 Addr=10.20.0.1/30,10.20.0.2/30 Speed=40\n"
    "Cable=mac06:en3,mac07:en2 Addr=10.20.0.5/30,10.20.0.6/30 Speed=40\n"
    "Cable=mac07:en3,mac08:en2 Addr=10.20.0.9/30,10.20.0.10/30 Speed=40\n"
    "Cable=mac08:en3,mac05:en2 Addr=10.20.0.13/30,10.20.0.14/30 Speed=40\n";

#define T0 ((time_t)1793491200)   /* 2026-11-01T00:00:00 UTC */
#define H 3600

static const tbm_rdim_t dims[] = { TBM_RDIM_USER };
static tbm_conf_t conf;
static tbm_report_t *rep;

static void open_report(time_t len)
{
    tbm_err_t err = { { 0 } };
    tbm_report_opts_t o;

    setenv("TZ", "UTC", 1);
    tzset();
    tbm_conf_init(&conf);
    ck_assert_msg(tbm_conf_parse(conf_text, strlen(conf_text), "t.conf", &conf, NULL, &err) == 0, "%s", err.msg);
    memset(&o, 0, sizeof(o));
    o.period.since = T0;
    o.period.until = T0 + len;
    o.now = T0 + len + 60;
    o.conf = &conf;
    rep = tbm_report_new(&o, &err);
    ck_assert_msg(rep != NULL, "%s", err.msg);
}

static void close_report(void)
{
    tbm_report_free(rep);
    tbm_conf_free(&conf);
}

/* A Linux job of `cpus` CPUs on lnx01 from T0 + start for `len` s that used `used` CPU-seconds. */
static void linux_job(uint32_t id, time_t start, time_t len, uint32_t cpus, double used)
{
    tbm_rjob_t j = { id, "tbm-bob", "lab-hpc", "linux", "COMPLETED", "lnx01", NULL, T0 + start - 5, T0 + start,
                     T0 + start + len, 1, cpus, 0, used, TBM_COV_UNKNOWN, -1, 0, 0, 0, 0 };
    tbm_err_t err = { { 0 } };

    ck_assert_msg(tbm_report_add_job(rep, &j, &err) == 0, "%s", err.msg);
}

static time_t bucket_of(time_t len, size_t *n)
{
    size_t ns;
    time_t bs;
    const char *const *names;
    const uint64_t *v;

    open_report(len);
    tbm_report_timeline(rep, n, &bs, &ns, &names, &v);
    close_report();
    return bs;
}

START_TEST(buckets_follow_the_period)
{
    size_t n;

    ck_assert_int_eq(bucket_of(5 * 60, &n), 60);      /* five minutes: five buckets of a minute */
    ck_assert_uint_eq(n, 5);
    ck_assert_int_eq(bucket_of(90, &n), 60);          /* less than two: a minute still */
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(bucket_of(H, &n), 300);          /* an hour: twelve of five minutes */
    ck_assert_uint_eq(n, 12);
    ck_assert_int_eq(bucket_of(12 * H, &n), 900);
    ck_assert_uint_eq(n, 48);
    ck_assert_int_eq(bucket_of(2 * 86400 - 1, &n), 3600);
    ck_assert_int_eq(bucket_of(10 * 86400, &n), 86400);   /* longer periods as before: days */
    ck_assert_uint_eq(n, 10);
}
END_TEST

/* The chart's block of the HTML page. */
static char *timeline_svg(const char *html)
{
    const char *a = strstr(html, "<svg id=\"chart-timeline\""), *b = a ? strstr(a, "</svg>") : NULL;

    ck_assert_msg(a && b, "%s", html);
    return strndup(a, (size_t)(b - a));
}

START_TEST(a_short_period_is_drawn_with_real_values)
{
    char *html, *svg;

    open_report(5 * 60);
    linux_job(1, 60, 180, 1, 90);   /* 3 minutes on one node: 1/60 node-hour in each of 3 buckets */
    html = tbm_report_write(rep, TBM_RFMT_HTML, dims, 1);
    svg = timeline_svg(html);
    ck_assert_msg(strstr(svg, "Node-hours per minute") != NULL, "%s", svg);
    /* the axis from 0 to 0.02 (the round value above 0.0167) in quarters, not "0" at both ends */
    ck_assert_msg(strstr(svg, ">0.02</text>") && strstr(svg, ">0.01</text>") && strstr(svg, ">0.005</text>") &&
                  strstr(svg, ">0</text>"), "%s", svg);
    ck_assert_msg(strstr(svg, "2026-11-01T00:00") && strstr(svg, "2026-11-01T00:04"), "%s", svg);
    ck_assert_ptr_null(strstr(svg, "no use in this period"));
    free(svg);
    free(html);
    close_report();
}
END_TEST

START_TEST(an_empty_period_says_so)
{
    char *html, *svg;

    open_report(5 * 60);
    html = tbm_report_write(rep, TBM_RFMT_HTML, dims, 1);
    svg = timeline_svg(html);
    ck_assert_msg(strstr(svg, "no use in this period") != NULL, "%s", svg);
    ck_assert_ptr_null(strstr(svg, "<polyline"));
    free(svg);
    free(html);
    close_report();
}
END_TEST

START_TEST(efficiency_above_100_says_why)
{
    const char *why = "above 100% (linux_eff_pct 200.0%): used above allocated is not an efficiency; Slurm counted";
    char *csv, *json, *table, *html;
    json_object *root, *eff, *arr, *row, *v;

    open_report(86400);
    linux_job(1, 0, H, 1, 2 * H);   /* one CPU for an hour, two CPU-hours used: not held to its CPU */
    csv = tbm_report_write(rep, TBM_RFMT_CSV, dims, 1);
    ck_assert_msg(strstr(csv, "\nefficiency-user,tbm-bob,1.0000,2.0000,200.0,0.0000,0.0000,,0.0000,0.0000,,") &&
                  strstr(csv, why) && strstr(csv, "ConstrainCores=yes"), "%s", csv);
    json = tbm_report_write(rep, TBM_RFMT_JSON, dims, 1);
    root = json_tokener_parse(json);
    ck_assert(json_object_object_get_ex(root, "efficiency", &eff) && json_object_object_get_ex(eff, "user", &arr));
    row = json_object_array_get_idx(arr, 0);
    ck_assert(json_object_object_get_ex(row, "remark", &v));
    ck_assert_msg(strstr(json_object_get_string(v), why) != NULL, "%s", json);
    json_object_put(root);
    table = tbm_report_write(rep, TBM_RFMT_TABLE, dims, 1);
    ck_assert_msg(strstr(table, "200.0") && strstr(table, why), "%s", table);
    html = tbm_report_write(rep, TBM_RFMT_HTML, dims, 1);
    ck_assert_msg(strstr(html, "above 100% (linux_eff_pct 200.0%)") != NULL, "%s", html);
    free(csv);
    free(json);
    free(table);
    free(html);
    close_report();
}
END_TEST

START_TEST(efficiency_at_or_below_100_has_no_remark)
{
    char *csv;

    open_report(86400);
    linux_job(1, 0, H, 2, 2 * H);   /* exactly its two CPUs */
    csv = tbm_report_write(rep, TBM_RFMT_CSV, dims, 1);
    ck_assert_msg(strstr(csv, "\nefficiency-user,tbm-bob,2.0000,2.0000,100.0,0.0000,0.0000,,0.0000,0.0000,,\n") != NULL,
                  "%s", csv);
    free(csv);
    close_report();
}
END_TEST

static Suite *charts_suite(void)
{
    Suite *s = suite_create("report_charts");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, buckets_follow_the_period);
    tcase_add_test(tc, a_short_period_is_drawn_with_real_values);
    tcase_add_test(tc, an_empty_period_says_so);
    tcase_add_test(tc, efficiency_above_100_says_why);
    tcase_add_test(tc, efficiency_at_or_below_100_has_no_remark);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(charts_suite)
