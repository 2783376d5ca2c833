/* test_report.c: unit tests of lib/report*.c: the period, the TRES reader, the waiting-time histogram,
 * the totals of a known set of jobs and node events, and the four writers showing the same numbers. */
#include "tbm_check.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"

static const char *lab_conf =
    "Group=studio-a Nodes=mac[01-04] Topology=mesh Link=tb5 Rdma=yes Mode=bridge Backends=jaccl,jaccl-ring,ring,mpi\n"
    "Cable=mac01:en2,mac02:en2 Addr=10.10.0.1/30,10.10.0.2/30 Rdma=rdma_en2,rdma_en2 Speed=80\n"
    "Cable=mac01:en3,mac03:en2 Addr=10.10.0.5/30,10.10.0.6/30 Rdma=rdma_en3,rdma_en2 Speed=80\n"
    "Cable=mac01:en4,mac04:en2 Addr=10.10.0.9/30,10.10.0.10/30 Rdma=rdma_en4,rdma_en2 Speed=80\n"
    "Cable=mac02:en3,mac03:en3 Addr=10.10.0.13/30,10.10.0.14/30 Rdma=rdma_en3,rdma_en3 Speed=80\n"
    "Cable=mac02:en4,mac04:en3 Addr=10.10.0.17/30,10.10.0.18/30 Rdma=rdma_en4,rdma_en3 Speed=80\n"
    "Cable=mac03:en4,mac04:en4 Addr=10.10.0.21/30,10.10.0.22/30 Rdma=rdma_en4,rdma_en4 Speed=80\n"
    "Group=mini-b Nodes=mac[05-08] Topology=ring Link=tb4 Rdma=no Mode=direct Backends=ring,mpi\n"
    "Cable=mac05:en3,mac06:en2 Addr=10.20.0.1/30,10.20.0.2/30 Speed=40\n"
    "Cable=mac06:en3,mac07:en2 Addr=10.20.0.5/30,10.20.0.6/30 Speed=40\n"
    "Cable=mac07:en3,mac08:en2 Addr=10.20.0.9/30,10.20.0.10/30 Speed=40\n"
    "Cable=mac08:en3,mac05:en2 Addr=10.20.0.13/30,10.20.0.14/30 Speed=40\n";

/* 2026-11-01T00:00:00 UTC */
#define T0 ((time_t)1793491200)
#define DAY 86400
#define H 3600

static void utc(void)
{
    setenv("TZ", "UTC", 1);
    tzset();
}

/* ---- the period ---- */

START_TEST(period_month_and_last)
{
    tbm_period_t p;
    tbm_err_t err = { { 0 } };
    time_t t;

    utc();
    ck_assert_int_eq(tbm_period_month("2026-11", &p, &err), 0);
    ck_assert_int_eq(p.since, T0);
    ck_assert_int_eq(p.until, T0 + 30 * DAY);
    ck_assert_int_eq(tbm_period_month("2026-12", &p, &err), 0);
    ck_assert_int_eq(p.until - p.since, 31 * DAY);
    ck_assert_int_eq(tbm_period_last("7d", T0, &p, &err), 0);
    ck_assert_int_eq(p.since, T0 - 7 * DAY);
    ck_assert_int_eq(tbm_period_last("12h", T0, &p, &err), 0);
    ck_assert_int_eq(p.since, T0 - 12 * H);
    ck_assert_int_eq(tbm_period_last("2w", T0, &p, &err), 0);
    ck_assert_int_eq(p.since, T0 - 14 * DAY);
    ck_assert_int_eq(tbm_period_last("3", T0, &p, &err), 0);
    ck_assert_int_eq(p.since, T0 - 3 * DAY);
    ck_assert_int_eq(tbm_period_parse_time("2026-11-01T01:02:03", T0, &t, &err), 0);
    ck_assert_int_eq(t, T0 + H + 2 * 60 + 3);
    ck_assert_int_eq(tbm_period_parse_time("2026-11-01 01:02", T0, &t, &err), 0);
    ck_assert_int_eq(t, T0 + H + 2 * 60);
    ck_assert_int_eq(tbm_period_parse_time("now", T0 + 5, &t, &err), 0);
    ck_assert_int_eq(t, T0 + 5);
}
END_TEST

START_TEST(period_bad_values_say_what_to_write)
{
    tbm_period_t p;
    tbm_err_t err = { { 0 } };
    time_t t;

    utc();
    ck_assert_int_eq(tbm_period_month("2026-13", &p, &err), -1);
    ck_assert_str_eq(err.msg, "'2026-13' is not a month: write YYYY-MM, e.g. --month 2026-11");
    ck_assert_int_eq(tbm_period_month("2026-1", &p, &err), -1);
    ck_assert_int_eq(tbm_period_month("November", &p, &err), -1);
    ck_assert_int_eq(tbm_period_last("7y", T0, &p, &err), -1);
    ck_assert_str_eq(err.msg, "'7y' is not a length of time: write N followed by m, h, d or w (at most 100 years), "
                              "e.g. --last 7d or --last 30m");
    ck_assert_int_eq(tbm_period_last("30m", T0, &p, &err), 0);
    ck_assert_int_eq(p.since, T0 - 30 * 60);
    ck_assert_int_eq(tbm_period_last("0d", T0, &p, &err), -1);
    ck_assert_int_eq(tbm_period_last("", T0, &p, &err), -1);
    ck_assert_int_eq(tbm_period_parse_time("2026-02-30", T0, &t, &err), -1);
    ck_assert_str_eq(err.msg, "'2026-02-30' is not a date of the calendar: check the day of the month");
    ck_assert_int_eq(tbm_period_parse_time("2026-11-01T25:00", T0, &t, &err), -1);
    ck_assert_int_eq(tbm_period_parse_time("yesterday", T0, &t, &err), -1);
    ck_assert_str_eq(err.msg, "'yesterday' is not a time: write YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] or now");
}
END_TEST

START_TEST(period_options)
{
    tbm_period_t p;
    tbm_err_t err = { { 0 } };
    time_t now = T0 + 40 * DAY;

    utc();
    ck_assert_int_eq(tbm_period_from_options(NULL, NULL, NULL, NULL, now, &p, &err), 0);
    ck_assert_int_eq(p.until, now);
    ck_assert_int_eq(p.since, now - 7 * DAY);
    ck_assert_int_eq(tbm_period_from_options("2026-11-01", "2026-11-03", NULL, NULL, now, &p, &err), 0);
    ck_assert_int_eq(p.since, T0);
    ck_assert_int_eq(p.until, T0 + 2 * DAY);
    ck_assert_int_eq(tbm_period_from_options("2026-11-01", NULL, NULL, NULL, now, &p, &err), 0);
    ck_assert_int_eq(p.until, now);
    ck_assert_int_eq(tbm_period_from_options("2026-11-03", "2026-11-01", NULL, NULL, now, &p, &err), -1);
    ck_assert_str_eq(err.msg, "the period is reversed or empty (since 2026-11-03T00:00:00, until "
                              "2026-11-01T00:00:00): --since must come before --until");
    ck_assert_int_eq(tbm_period_from_options("2026-11-01", NULL, "2026-11", NULL, now, &p, &err), -1);
    ck_assert_str_eq(err.msg, "--month cannot be combined with --since/--until: give one way of saying the period");
    ck_assert_int_eq(tbm_period_from_options(NULL, NULL, "2026-11", "7d", now, &p, &err), -1);
    ck_assert_int_eq(tbm_period_from_options(NULL, NULL, "2027-01", NULL, now, &p, &err), -1);
    ck_assert_str_eq(err.msg, "the period starts in the future (2027-01): nothing has run yet; give an earlier start");
    /* both ends in the future, the wrong way round: said as reversed, not as "in the future" */
    ck_assert_int_eq(tbm_period_from_options("2027-03-01", "2027-02-01", NULL, NULL, now, &p, &err), -1);
    ck_assert_str_eq(err.msg, "the period is reversed or empty (since 2027-03-01T00:00:00, until "
                              "2027-02-01T00:00:00): --since must come before --until");
    ck_assert_int_eq(tbm_period_from_options("2027-02-01", "2027-03-01", NULL, NULL, now, &p, &err), -1);
    ck_assert_str_eq(err.msg, "the period starts in the future (2027-02-01): nothing has run yet; give an "
                              "earlier start");
    /* the same instant twice is empty */
    ck_assert_int_eq(tbm_period_from_options("2026-11-02", "2026-11-02", NULL, NULL, now, &p, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "the period is reversed or empty"));
    ck_assert_int_eq(tbm_period_from_options(NULL, "bad", NULL, NULL, now, &p, &err), -1);
    ck_assert_str_eq(err.msg, "--until: 'bad' is not a time: write YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] or now");
    ck_assert_int_eq(tbm_period_from_options("bad", NULL, NULL, NULL, now, &p, &err), -1);
    ck_assert_str_eq(err.msg, "--since: 'bad' is not a time: write YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] or now");
}
END_TEST

START_TEST(window_sizes_follow_the_density)
{
    ck_assert_int_eq(tbm_report_next_window(DAY, 10000, 20000, 60, 366 * DAY), 2 * DAY);
    ck_assert_int_eq(tbm_report_next_window(DAY, 40000, 20000, 60, 366 * DAY), DAY / 2);
    ck_assert_int_eq(tbm_report_next_window(DAY, 0, 20000, 60, 366 * DAY), 8 * DAY);           /* empty */
    ck_assert_int_eq(tbm_report_next_window(DAY, 1, 20000, 60, 366 * DAY), 8 * DAY);           /* at most 8x */
    ck_assert_int_eq(tbm_report_next_window(8 * DAY, 1000000, 20000, 60, 366 * DAY), DAY);     /* at most /8 */
    ck_assert_int_eq(tbm_report_next_window(100, 1000000, 20000, 60, 366 * DAY), 60);          /* the floor */
    ck_assert_int_eq(tbm_report_next_window(300 * DAY, 0, 20000, 60, 366 * DAY), 366 * DAY);   /* the ceiling */
}
END_TEST

/* ---- TRES and the histogram ---- */

START_TEST(tres_counts)
{
    uint64_t v;

    ck_assert_int_eq(tbm_tres_count("1=4,2=8000,4=2,1001=3", 1001, &v), 0);
    ck_assert_uint_eq(v, 3);
    ck_assert_int_eq(tbm_tres_count("1=4,2=8000,4=2,1001=3", 1, &v), 0);
    ck_assert_uint_eq(v, 4);
    ck_assert_int_eq(tbm_tres_count("1=4", 1001, &v), 0);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(tbm_tres_count("", 1, &v), 0);
    ck_assert_int_eq(tbm_tres_count(NULL, 1, &v), 0);
    ck_assert_int_eq(tbm_tres_count("1=", 1, &v), -1);
    ck_assert_int_eq(tbm_tres_count("cpu=4", 1, &v), -1);
    ck_assert_int_eq(tbm_tres_count("1=4,,2=3", 1, &v), -1);
    ck_assert_int_eq(tbm_tres_count("1=-4", 1, &v), -1);
}
END_TEST

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

START_TEST(histogram_exact_then_bounded)
{
    static const uint64_t small[] = { 5, 1, 1023, 0, 7, 7, 300, 12, 90, 44, 2 };
    size_t n = sizeof(small) / sizeof(small[0]), i;
    uint64_t sorted[sizeof(small) / sizeof(small[0])];
    tbm_rhist_t h;
    int p;

    ck_assert_int_eq(tbm_rhist_init(&h), 0);
    ck_assert_uint_eq(tbm_rhist_percentile(&h, 50), 0);
    for (i = 0; i < n; i++)
        tbm_rhist_add(&h, small[i]);
    memcpy(sorted, small, sizeof(sorted));
    qsort(sorted, n, sizeof(sorted[0]), cmp_u64);
    for (p = 1; p <= 100; p++) {   /* nearest rank on the sorted values, exactly */
        size_t rank = (n * (size_t)p + 99) / 100;
        ck_assert_uint_eq(tbm_rhist_percentile(&h, p), sorted[rank - 1]);
    }
    ck_assert_uint_eq(tbm_rhist_percentile(&h, 50), 7);
    tbm_rhist_free(&h);

    ck_assert_int_eq(tbm_rhist_init(&h), 0);
    tbm_rhist_add(&h, 1024);
    ck_assert_uint_eq(tbm_rhist_percentile(&h, 50), 1024);
    tbm_rhist_free(&h);
    for (i = 1025; i < 40000000; i = i * 3 + 1) {
        uint64_t got;
        ck_assert_int_eq(tbm_rhist_init(&h), 0);
        tbm_rhist_add(&h, i);
        got = tbm_rhist_percentile(&h, 90);
        ck_assert_msg(got <= i && (double)(i - got) <= (double)i / 64, "%zu reported as %llu", i,
                      (unsigned long long)got);
        tbm_rhist_free(&h);
    }
    ck_assert_int_eq(tbm_rhist_init(&h), 0);
    tbm_rhist_add(&h, UINT64_MAX);           /* past the top: counted at the top, no overflow */
    ck_assert_uint_gt(tbm_rhist_percentile(&h, 50), (1ULL << 39));
    tbm_rhist_free(&h);
}
END_TEST

/* ---- the totals of known jobs ---- */

static tbm_conf_t conf;
static tbm_report_t *rep;

/* The lab's tbmesh.conf and November 2026 as the period; "now" is 2026-11-20, so the period is clipped there. */
static void november(tbm_report_opts_t *o)
{
    tbm_err_t err = { { 0 } };

    utc();
    tbm_conf_init(&conf);
    ck_assert_msg(tbm_conf_parse(lab_conf, strlen(lab_conf), "t.conf", &conf, NULL, &err) == 0, "%s", err.msg);
    memset(o, 0, sizeof(*o));
    o->period.since = T0;
    o->period.until = T0 + 30 * DAY;
    o->now = T0 + 19 * DAY;
    o->conf = &conf;
}

static void make_report(int records, const char *only_group)
{
    tbm_err_t err = { { 0 } };
    tbm_report_opts_t o;

    november(&o);
    o.records_in_use = records;
    o.only_group = only_group;
    rep = tbm_report_new(&o, &err);
    ck_assert_msg(rep != NULL, "%s", err.msg);
}

static void add(uint32_t id, const char *user, const char *acct, const char *part, const char *state,
                const char *nodes, uint32_t n, uint32_t cpus, uint64_t tbm, time_t submit, time_t start, time_t end,
                double cpu_used, tbm_coverage_t cov)
{
    tbm_rjob_t j = { id, user, acct, part, state, nodes, NULL, submit, start, end, n, cpus, tbm, cpu_used, cov, -1,
                      0, 0, 0, 0 };
    tbm_err_t err = { { 0 } };

    ck_assert_msg(tbm_report_add_job(rep, &j, &err) == 0, "%s", err.msg);
}

static void workload(void)
{
    tbm_revent_t drain = { "mac02", "tbmesh: cable-missing at mac01:en2 <-> mac02:en2: nothing there", T0 + DAY,
                           T0 + DAY + 10 * H };
    tbm_revent_t again = { "mac02", "tbmesh: cable-missing at mac01:en2", T0 + DAY + 5 * H, T0 + DAY + 12 * H };
    tbm_revent_t lnx = { "lnx01", "Not responding", T0 + 2 * DAY, T0 + 2 * DAY + H };
    tbm_err_t err = { { 0 } };

    /* a Linux job: 2 h on lnx01, 4 CPUs, waited 60 s, used half its CPU time */
    add(1, "tbm-bob", "lab-hpc", "linux", "COMPLETED", "lnx01", 1, 4, 0, T0 - 60, T0, T0 + 2 * H, 4 * H, TBM_COV_UNKNOWN);
    /* the whole of studio-a for 1 h, 4 CPUs per Mac, waited 10 s */
    add(2, "tbm-alice", "lab-ml", "mac", "COMPLETED", "mac[01-04]", 4, 16, 4, T0 + DAY - 10, T0 + DAY, T0 + DAY + H,
        8 * H, TBM_COV_VERIFIED);
    /* two Macs of mini-b, timed out after 30 min, waited 20 s */
    add(3, "tbm-alice", "lab-ml", "mac", "TIMEOUT", "mac[05-06]", 2, 2, 2, T0 + 2 * DAY - 20, T0 + 2 * DAY,
        T0 + 2 * DAY + 1800, 0, TBM_COV_PRESENT);
    /* started before the period: only its hour inside counts */
    add(4, "tbm-bob", "lab-hpc", "all", "NODE_FAIL", "mac07", 1, 1, 1, T0 - 2 * H - 900, T0 - 2 * H, T0 + H, 0, TBM_COV_ABSENT);
    /* cancelled while pending: counted, no hours, no waiting time */
    add(5, "tbm-bob", "lab-hpc", "mac", "CANCELLED", "None assigned", 0, 0, 2, T0 + 3 * DAY, 0, T0 + 3 * DAY + 60, 0,
        TBM_COV_ABSENT);
    /* still running on lnx01 at "now" (T0 + 19 d): 1 h so far */
    add(6, "tbm-alice", "lab-ml", "linux", "RUNNING", "lnx01", 1, 2, 0, T0 + 19 * DAY - H - 30, T0 + 19 * DAY - H, 0, 0,
        TBM_COV_UNKNOWN);
    ck_assert_int_eq(tbm_report_add_event(rep, &drain, &err), 0);
    ck_assert_int_eq(tbm_report_add_event(rep, &again, &err), 0);
    ck_assert_int_eq(tbm_report_add_event(rep, &lnx, &err), 0);
}

static void done(void)
{
    tbm_report_free(rep);
    tbm_conf_free(&conf);
}

START_TEST(totals_by_kind_group_and_state)
{
    const tbm_ragg_t *a;

    make_report(0, NULL);
    workload();
    a = tbm_report_group(rep, TBM_RDIM_KIND, "linux");
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(a->jobs, 2);
    ck_assert_uint_eq(a->node_s, 3 * H);
    ck_assert_uint_eq(a->cpu_s, 4 * 2 * H + 2 * H);
    ck_assert_uint_eq(a->state[TBM_RST_RUNNING], 1);
    a = tbm_report_group(rep, TBM_RDIM_KIND, "mac");
    ck_assert_uint_eq(a->jobs, 4);
    ck_assert_uint_eq(a->node_s, 4 * H + 2 * 1800 + H);
    ck_assert_uint_eq(a->tbmesh_s, 4 * H + 2 * 1800 + H);
    ck_assert_uint_eq(a->cpu_s, 16 * H + 2 * 1800 + H);
    ck_assert_uint_eq(a->ran, 3);
    ck_assert_uint_eq(a->size[0], 1);  /* mac07 */
    ck_assert_uint_eq(a->size[1], 1);  /* mac[05-06] */
    ck_assert_uint_eq(a->size[2], 1);  /* mac[01-04] */
    ck_assert_uint_eq(tbm_rhist_percentile(&a->wait, 50), 20);
    ck_assert_uint_eq(tbm_rhist_percentile(&a->wait, 90), 900);
    ck_assert_uint_eq(a->mac_jobs, 4);
    ck_assert_uint_eq(a->rec_present, 2);
    ck_assert_uint_eq(a->rec_verified, 1);
    a = tbm_report_group(rep, TBM_RDIM_GROUP, "studio-a");
    ck_assert_uint_eq(a->jobs, 1);
    ck_assert_uint_eq(a->node_s, 4 * H);
    a = tbm_report_group(rep, TBM_RDIM_GROUP, "(none)");   /* the Mac job that never ran */
    ck_assert_uint_eq(a->jobs, 1);
    ck_assert_uint_eq(a->state[TBM_RST_CANCELLED], 1);
    ck_assert_uint_eq(tbm_report_group(rep, TBM_RDIM_BACKEND, "auto")->jobs, 4);
    ck_assert_uint_eq(tbm_report_group(rep, TBM_RDIM_BACKEND, "-")->jobs, 2);
    ck_assert_uint_eq(tbm_report_group(rep, TBM_RDIM_STATE, "timeout")->node_s, 3600);
    ck_assert_uint_eq(tbm_report_group(rep, TBM_RDIM_ACCOUNT, "lab-hpc")->jobs, 3);
    a = tbm_report_group(rep, TBM_RDIM_USER, "tbm-bob");
    ck_assert_double_eq(a->eff_alloc_s[0], 4 * 2 * H);
    ck_assert_double_eq(a->eff_used_s[0], 4 * H);
    ck_assert_double_eq(a->eff_alloc_s[1], 3 * H);   /* job 4, whole: 3 h on 1 CPU */
    ck_assert_ptr_null(tbm_report_group(rep, TBM_RDIM_USER, "nobody"));
    done();
}
END_TEST

START_TEST(utilisation_and_failures)
{
    const tbm_rgroup_use_t *u;
    const tbm_rfailure_t *f;
    size_t n, i;
    int seen = 0;

    make_report(0, NULL);
    workload();
    n = tbm_report_group_use(rep, &u);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(u[0].name, "studio-a");
    ck_assert_uint_eq(u[0].unavailable_s, 12 * H);        /* two drains of mac02, overlapping: 10 + 2 h */
    ck_assert_uint_eq(u[0].capacity_s, 4ULL * 19 * DAY - 12 * H);   /* up to "now" */
    ck_assert_uint_eq(u[0].alloc_s, 4 * H);
    ck_assert_uint_eq(u[0].whole_group_jobs, 1);
    ck_assert_uint_eq(u[1].alloc_s, 2 * 1800 + H);
    ck_assert_uint_eq(u[1].whole_group_jobs, 0);
    n = tbm_report_failures(rep, &f);
    for (i = 0; i < n; i++) {
        if (!strcmp(f[i].reason, "drain: tbmesh cable-missing")) {
            ck_assert_str_eq(f[i].kind, "node");
            ck_assert_uint_eq(f[i].count, 2);
            seen |= 1;
        } else if (!strcmp(f[i].reason, "node failure")) {
            ck_assert_uint_eq(f[i].count, 1);
            ck_assert_uint_eq(f[i].node_s, H);
            seen |= 2;
        } else if (!strcmp(f[i].reason, "down or drain: other reason")) {
            ck_assert_uint_eq(f[i].node_s, H);
            seen |= 4;
        } else if (!strcmp(f[i].reason, "cancelled") || !strcmp(f[i].reason, "timeout")) {
            ck_assert_uint_eq(f[i].count, 1);
            seen |= !strcmp(f[i].reason, "timeout") ? 8 : 16;
        }
    }
    ck_assert_int_eq(seen, 31);
    done();
}
END_TEST

START_TEST(only_one_group)
{
    make_report(0, "mini-b");
    workload();
    ck_assert_ptr_null(tbm_report_group(rep, TBM_RDIM_KIND, "linux"));
    ck_assert_uint_eq(tbm_report_group(rep, TBM_RDIM_KIND, "mac")->jobs, 2);
    done();
}
END_TEST

START_TEST(bad_node_list_is_an_error)
{
    tbm_rjob_t j = { 9, "u", "a", "p", "COMPLETED", "mac[01-", NULL, T0, T0, T0 + 1, 1, 1, 0, 0, 0, -1, 0, 0, 0, 0 };
    tbm_err_t err = { { 0 } };

    make_report(0, NULL);
    ck_assert_int_eq(tbm_report_add_job(rep, &j, &err), -1);
    ck_assert_msg(strstr(err.msg, "job 9: nodes 'mac[01-': ") == err.msg, "%s", err.msg);
    done();
}
END_TEST

/* ---- the writers ---- */

/* The CSV row of `section` whose first column is `key`, as one string. */
static char *csv_row(const char *csv, const char *section, const char *key)
{
    char want[128], *line = NULL;
    const char *p = csv;

    snprintf(want, sizeof(want), "\n%s,%s,", section, key);
    if ((p = strstr(p, want))) {
        size_t n = strcspn(p + 1, "\n");
        line = strndup(p + 1, n);
    }
    return line;
}

START_TEST(writers_show_the_same_numbers)
{
    static const tbm_rdim_t dims[] = { TBM_RDIM_KIND, TBM_RDIM_GROUP, TBM_RDIM_USER };
    static const char *head = "usage-kind,kind,jobs,completed,failed,cancelled,timeout,node_fail,"
                              "out_of_memory,pending,running,other,node_h,cpu_h,tbmesh_h,wait_median_s,wait_p90_s,"
                              "nodes_1,nodes_2,nodes_3_4,nodes_5_8,nodes_9_up\n";
    char *csv, *json, *html, *table, *row;
    json_object *root, *arr, *o, *v;
    size_t i;

    make_report(0, NULL);
    workload();
    tbm_report_note(rep, "records are not in use", NULL);
    csv = tbm_report_write(rep, TBM_RFMT_CSV, dims, 3);
    json = tbm_report_write(rep, TBM_RFMT_JSON, dims, 3);
    html = tbm_report_write(rep, TBM_RFMT_HTML, dims, 3);
    table = tbm_report_write(rep, TBM_RFMT_TABLE, dims, 3);
    ck_assert_ptr_nonnull(csv);
    ck_assert_ptr_nonnull(json);
    ck_assert_ptr_nonnull(html);
    ck_assert_ptr_nonnull(table);
    ck_assert_msg(!strncmp(csv, head, strlen(head)), "%.300s", csv);
    row = csv_row(csv, "usage-kind", "mac");
    ck_assert_str_eq(row, "usage-kind,mac,4,1,0,1,1,1,0,0,0,0,6.0000,18.0000,6.0000,20,900,1,1,1,0,0");
    free(row);
    row = csv_row(csv, "usage-kind", "linux");
    ck_assert_str_eq(row, "usage-kind,linux,2,1,0,0,0,0,0,0,1,0,3.0000,10.0000,0.0000,30,60,2,0,0,0,0");
    free(row);
    row = csv_row(csv, "utilisation", "studio-a");
    ck_assert_str_eq(row, "utilisation,studio-a,4,1812.0000,12.0000,4.0000,0.2,1");
    free(row);
    row = csv_row(csv, "efficiency-user", "tbm-bob");
    ck_assert_str_eq(row, "efficiency-user,tbm-bob,8.0000,4.0000,50.0,3.0000,0.0000,0.0,0.0000,0.0000,,");
    free(row);
    ck_assert_ptr_null(strstr(csv, "\ncoverage-user,"));   /* records not in use: no coverage column */
    ck_assert_ptr_null(strstr(csv, "\nusage-account,"));    /* only the groupings asked for */
    ck_assert_ptr_nonnull(strstr(csv, "\ntop-users,tbm-alice,1,6.0000,"));

    /* JSON: every grouping, the same values */
    root = json_tokener_parse(json);
    ck_assert_ptr_nonnull(root);
    ck_assert(json_object_object_get_ex(root, "usage", &o));
    ck_assert(json_object_object_get_ex(o, "account", &arr));
    ck_assert(json_object_object_get_ex(o, "kind", &arr));
    for (i = 0; i < json_object_array_length(arr); i++) {
        o = json_object_array_get_idx(arr, i);
        ck_assert(json_object_object_get_ex(o, "kind", &v));
        if (strcmp(json_object_get_string(v), "mac"))
            continue;
        ck_assert(json_object_object_get_ex(o, "node_h", &v));
        ck_assert_str_eq(json_object_to_json_string(v), "6.0000");
        ck_assert(json_object_object_get_ex(o, "wait_p90_s", &v));
        ck_assert_int_eq(json_object_get_int64(v), 900);
    }
    ck_assert(json_object_object_get_ex(root, "coverage", &v));
    ck_assert_ptr_null(v);
    ck_assert(json_object_object_get_ex(root, "notes", &v));
    ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(v, 0)), "records are not in use");
    json_object_put(root);

    /* HTML: self-contained, every chart, the same cells */
    ck_assert_ptr_null(strstr(html, "<script"));
    ck_assert_ptr_null(strstr(html, "http://www.w3.org/2000/svg\" href"));
    ck_assert_ptr_null(strstr(html, "<link"));
    ck_assert_ptr_nonnull(strstr(html, "<svg id=\"chart-timeline\""));
    ck_assert_ptr_nonnull(strstr(html, "<svg id=\"chart-utilisation\""));
    ck_assert_ptr_nonnull(strstr(html, "<svg id=\"chart-wait\""));
    ck_assert_ptr_nonnull(strstr(html, "<svg id=\"chart-failures\""));
    ck_assert_ptr_nonnull(strstr(html, "id=\"coverage-note\">records are not in use"));
    ck_assert_ptr_nonnull(strstr(html, "<td>studio-a</td><td class=\"n\">4</td><td class=\"n\">1812.0000</td>"));

    /* table: titled sections, hours to one decimal */
    ck_assert_ptr_nonnull(strstr(table, "note: records are not in use\n"));
    ck_assert_ptr_nonnull(strstr(table, "\nUtilisation of each Mac group\n"));
    ck_assert_ptr_nonnull(strstr(table, "studio-a      4      1812.0"));
    free(csv);
    free(json);
    free(html);
    free(table);
    done();
}
END_TEST

START_TEST(coverage_when_records_are_in_use)
{
    static const tbm_rdim_t dims[] = { TBM_RDIM_KIND };
    char *csv, *html, *row;

    make_report(1, NULL);
    workload();
    csv = tbm_report_write(rep, TBM_RFMT_CSV, dims, 1);
    html = tbm_report_write(rep, TBM_RFMT_HTML, dims, 1);
    row = csv_row(csv, "coverage-user", "tbm-alice");
    ck_assert_str_eq(row, "coverage-user,tbm-alice,2,2,1,50.0");
    free(row);
    row = csv_row(csv, "coverage-user", "tbm-bob");
    ck_assert_str_eq(row, "coverage-user,tbm-bob,2,0,0,0.0");
    free(row);
    ck_assert_ptr_nonnull(strstr(html, "<svg id=\"chart-coverage\""));
    free(csv);
    free(html);
    done();
}
END_TEST

/* The record store's hook: asked once for each Mac job counted and for nothing else; its answer replaces the
 * job's own coverage and record CPU use. */
static uint32_t asked[16];
static size_t n_asked;

static tbm_coverage_t store_says(void *ctx, uint32_t job, tbm_ruse_t *use)
{
    ck_assert_ptr_eq(ctx, &n_asked);
    ck_assert_uint_lt(n_asked, 16);
    ck_assert(use->cpu_used_s == -1 && !use->gpu && !use->energy);
    asked[n_asked++] = job;
    use->cpu_used_s = job == 2 ? 6 * H : -1;      /* job 2's record holds its tasks' CPU use */
    return job == 2 ? TBM_COV_VERIFIED : job == 4 ? TBM_COV_PRESENT : TBM_COV_ABSENT;
}

START_TEST(coverage_from_the_store_hook)
{
    tbm_err_t err = { { 0 } };
    tbm_report_opts_t o;
    const tbm_ragg_t *a;

    november(&o);
    o.records_in_use = 1;
    o.coverage = store_says;
    o.coverage_ctx = &n_asked;
    n_asked = 0;
    rep = tbm_report_new(&o, &err);
    ck_assert_msg(rep != NULL, "%s", err.msg);
    workload();                     /* the jobs' own coverage values are overridden by the hook */
    ck_assert_uint_eq(n_asked, 4);  /* Mac jobs 2, 3, 4 and 5 (never ran, asked gres/tbmesh); not Linux 1, 6 */
    ck_assert_uint_eq(asked[0], 2);
    ck_assert_uint_eq(asked[1], 3);
    ck_assert_uint_eq(asked[2], 4);
    ck_assert_uint_eq(asked[3], 5);
    a = tbm_report_group(rep, TBM_RDIM_KIND, "mac");
    ck_assert_uint_eq(a->mac_jobs, 4);
    ck_assert_uint_eq(a->rec_present, 2);          /* jobs 2 and 4 */
    ck_assert_uint_eq(a->rec_verified, 1);         /* job 2 */
    ck_assert_double_eq(a->rec_used_s, 6 * H);
    ck_assert_double_eq(a->rec_alloc_s, 16 * H);   /* job 2: 16 CPUs for 1 h */
    a = tbm_report_group(rep, TBM_RDIM_USER, "tbm-bob");
    ck_assert_uint_eq(a->mac_jobs, 2);
    ck_assert_uint_eq(a->rec_present, 1);          /* job 4 */
    ck_assert_uint_eq(a->rec_verified, 0);
    done();
}
END_TEST

/* A Mac job whose record gives GPU-seconds (gpu_s >= 0) and energy (energy_j >= 0), or not (< 0). */
static void gpu_job(uint32_t id, const char *user, const char *nodes, uint32_t n, uint32_t cpus, time_t start,
                    time_t end, tbm_coverage_t cov, double gpu_s, double energy_j)
{
    tbm_rjob_t j = { id, user, "lab-ml", "mac", "COMPLETED", nodes, NULL, start - 10, start, end, n, cpus, n, 0, cov,
                     -1, gpu_s >= 0, energy_j >= 0, gpu_s, energy_j };
    tbm_err_t err = { { 0 } };

    ck_assert_msg(tbm_report_add_job(rep, &j, &err) == 0, "%s", err.msg);
}

/* GPU-hours and energy beside CPU-hours, per user and per group: from verified records only (the others are
 * counted in a note), each job's share within the period, empty where no job gave a figure. */
START_TEST(gpu_and_energy_per_user_and_group)
{
    static const tbm_rdim_t dims[] = { TBM_RDIM_USER };
    const char *const *notes;
    char *csv, *json, *html, *table, *row;
    json_object *root, *v;
    size_t n;

    make_report(1, NULL);
    /* all of studio-a for 1 h: 2 GPU-hours over its four Macs, 1 kWh */
    gpu_job(20, "tbm-alice", "mac[01-04]", 4, 16, T0 + DAY, T0 + DAY + H, TBM_COV_VERIFIED, 2 * H, 3.6e6);
    /* a record that does not verify: its figures are left out */
    gpu_job(21, "tbm-alice", "mac[05-06]", 2, 2, T0 + 2 * DAY, T0 + 2 * DAY + 1800, TBM_COV_PRESENT, 100, 1000);
    /* a verified record of an older agent: no figures, so none counted (and no 0) */
    gpu_job(22, "tbm-bob", "mac07", 1, 1, T0 + 2 * DAY, T0 + 2 * DAY + H, TBM_COV_VERIFIED, -1, -1);
    /* half of it inside the period: half its figures count */
    gpu_job(23, "tbm-bob", "mac08", 1, 4, T0 - H, T0 + H, TBM_COV_VERIFIED, H, 7.2e6);
    gpu_job(25, "tbm-dave", "mac07", 1, 1, T0 + 3 * DAY, T0 + 3 * DAY + H, TBM_COV_VERIFIED, -1, -1);
    add(24, "tbm-carol", "lab-hpc", "linux", "COMPLETED", "lnx01", 1, 4, 0, T0, T0 + 10, T0 + H, 0, TBM_COV_UNKNOWN);

    csv = tbm_report_write(rep, TBM_RFMT_CSV, dims, 1);
    ck_assert_ptr_nonnull(strstr(csv, "\ngpu-user,user,mac_jobs,mac_cpu_h,gpu_jobs,gpu_h,energy_jobs,energy_kwh\n"));
    row = csv_row(csv, "gpu-user", "tbm-alice");
    ck_assert_str_eq(row, "gpu-user,tbm-alice,2,17.0000,1,2.0000,1,1.0000");
    free(row);
    row = csv_row(csv, "gpu-user", "tbm-bob");
    ck_assert_str_eq(row, "gpu-user,tbm-bob,2,5.0000,1,0.5000,1,1.0000");
    free(row);
    row = csv_row(csv, "gpu-user", "tbm-dave");
    ck_assert_str_eq(row, "gpu-user,tbm-dave,1,1.0000,0,,0,");
    free(row);
    ck_assert_ptr_null(csv_row(csv, "gpu-user", "tbm-carol"));      /* Linux jobs have no Mac GPU */
    row = csv_row(csv, "gpu-group", "studio-a");
    ck_assert_str_eq(row, "gpu-group,studio-a,1,16.0000,1,2.0000,1,1.0000");
    free(row);
    row = csv_row(csv, "gpu-group", "mini-b");
    ck_assert_str_eq(row, "gpu-group,mini-b,4,7.0000,1,0.5000,1,1.0000");
    free(row);
    ck_assert_uint_ge(tbm_report_notes(rep, &notes), 1);
    ck_assert_str_eq(notes[0], "Mac jobs' GPU-hours and energy from their records (gpu-user, gpu-group: gpu_h, "
                               "energy_kwh) count only records that verify; left out: 1 whose record does not verify "
                               "(anyone may have written its figures: see tbmesh repro verify)");

    json = tbm_report_write(rep, TBM_RFMT_JSON, dims, 1);
    root = json_tokener_parse(json);
    ck_assert_ptr_nonnull(root);
    ck_assert(json_object_object_get_ex(root, "gpu", &v));
    v = json_object_object_get(v, "user");
    n = json_object_array_length(v);
    ck_assert_uint_eq(n, 3);
    ck_assert_double_eq(json_object_get_double(json_object_object_get(json_object_array_get_idx(v, 0),
                                                                      "energy_kwh")), 1.0);
    ck_assert(json_object_is_type(json_object_object_get(json_object_array_get_idx(v, 2), "gpu_h"), json_type_null));
    ck_assert_int_eq(json_object_get_int(json_object_object_get(json_object_array_get_idx(v, 2), "gpu_jobs")), 0);
    json_object_put(root);

    html = tbm_report_write(rep, TBM_RFMT_HTML, dims, 1);
    ck_assert_ptr_nonnull(strstr(html, "<svg id=\"chart-energy\""));
    ck_assert_ptr_nonnull(strstr(html, "<table id=\"gpu-user\">"));
    ck_assert_ptr_nonnull(strstr(html, "<table id=\"gpu-group\">"));
    ck_assert_ptr_null(strstr(strstr(html, "<table id=\"gpu-user\">") + 1, "<table id=\"gpu-user\">")); /* once */
    table = tbm_report_write(rep, TBM_RFMT_TABLE, dims, 1);
    ck_assert_ptr_nonnull(strstr(table, "\nGPU and energy of Mac jobs by user (from their records)\n"));
    ck_assert_ptr_nonnull(strstr(table, "hours are node-, CPU-, GPU- and gres/tbmesh-hours; energy in kWh"));
    free(csv);
    free(json);
    free(html);
    free(table);
    done();
}
END_TEST

/* Slurm's CPU use not read (no steps asked of slurmdbd): its columns are empty, never a made-up zero. */
START_TEST(efficiency_without_slurm_cpu)
{
    static const tbm_rdim_t dims[] = { TBM_RDIM_KIND };
    tbm_err_t err = { { 0 } };
    tbm_report_opts_t o;
    char *csv, *row;

    november(&o);
    o.slurm_cpu_unknown = 1;
    rep = tbm_report_new(&o, &err);
    ck_assert_msg(rep != NULL, "%s", err.msg);
    workload();
    csv = tbm_report_write(rep, TBM_RFMT_CSV, dims, 1);
    row = csv_row(csv, "efficiency-user", "tbm-bob");
    ck_assert_str_eq(row, "efficiency-user,tbm-bob,8.0000,,,3.0000,,,0.0000,0.0000,,");
    free(row);
    free(csv);
    done();
}
END_TEST

START_TEST(names_are_escaped)
{
    static const tbm_rdim_t dims[] = { TBM_RDIM_ACCOUNT };
    char *csv, *html;

    make_report(0, NULL);
    add(1, "u", "a,<b>\"c\"", "p", "COMPLETED", "lnx01", 1, 1, 0, T0, T0, T0 + 1, 0, 0);
    csv = tbm_report_write(rep, TBM_RFMT_CSV, dims, 1);
    html = tbm_report_write(rep, TBM_RFMT_HTML, dims, 1);
    ck_assert_ptr_nonnull(strstr(csv, "\nusage-account,\"a,<b>\"\"c\"\"\",1,"));
    ck_assert_ptr_nonnull(strstr(html, "<td>a,&lt;b&gt;&quot;c&quot;</td>"));
    ck_assert_ptr_null(strstr(html, "<b>"));
    free(csv);
    free(html);
    done();
}
END_TEST

/* CSV: a text cell a spreadsheet would run as a formula gets a ' inside its quotes; the report's own numbers
 * (a negative one too) and its "-" stay as they are. */
START_TEST(csv_cells_start_no_formula)
{
    static const tbm_rdim_t dims[] = { TBM_RDIM_ACCOUNT };
    static const char *const accounts[] = { "=HYPERLINK(\"http://x\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)",
                                             "\tx", "\rx", "plain" };
    static const char *const want[] = { "\n\"'=HYPERLINK(\"\"http://x\"\")\",1,", "\n\"'+1+cmd|' /C calc'!A0\",1,",
                                        "\n\"'-2+3\",1,", "\n\"'@SUM(A1)\",1,", "\n\"'\tx\",1,", "\n\"'\rx\",1,",
                                        "\nplain,1," };
    char *csv, line[128];
    size_t i;

    make_report(0, NULL);
    for (i = 0; i < sizeof(accounts) / sizeof(accounts[0]); i++)
        add((uint32_t)i + 1, "u", accounts[i], "p", "COMPLETED", "lnx01", 1, 1, 0, T0, T0, T0 + 1, 0, 0);
    csv = tbm_report_write(rep, TBM_RFMT_CSV, dims, 1);
    ck_assert_ptr_nonnull(csv);
    for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        snprintf(line, sizeof(line), "\nusage-account,%s", want[i] + 1);
        ck_assert_msg(strstr(csv, line) != NULL, "no %s in\n%s", line + 1, csv);
    }
    ck_assert_ptr_nonnull(strstr(csv, "\nusage-account,plain,1,1,"));
    free(csv);
    done();
}
END_TEST

START_TEST(csv_leaves_the_reports_own_values)
{
    static const tbm_rdim_t dims[] = { TBM_RDIM_BACKEND };
    tbm_rjob_t j = { 9, "u", "a", "p", "COMPLETED", "lnx01", NULL, T0, T0, T0 + 1, 1, 1, 0, 0, 0, -1, 0, 0, 0, 0 };
    tbm_rjob_t m = { 10, "u", "a", "p", "COMPLETED", "mac05", "=1+1", T0, T0, T0 + 1, 1, 1, 1, 0, 0, -1, 0, 0, 0, 0 };
    tbm_err_t err = { { 0 } };
    char *csv;

    make_report(0, NULL);
    ck_assert_int_eq(tbm_report_add_job(rep, &j, &err), 0);
    ck_assert_int_eq(tbm_report_add_job(rep, &m, &err), 0);
    csv = tbm_report_write(rep, TBM_RFMT_CSV, dims, 1);
    ck_assert_ptr_nonnull(strstr(csv, "\nusage-backend,-,1,"));           /* a Linux job: the report's "-" */
    ck_assert_ptr_nonnull(strstr(csv, "\nusage-backend,\"'=1+1\",1,"));   /* the submit line's backend */
    free(csv);
    done();
}
END_TEST

/* Text output: no escape sequence, newline or C1 control of a name reaches the terminal; UTF-8 stays. */
START_TEST(table_text_has_no_control_characters)
{
    static const tbm_rdim_t dims[] = { TBM_RDIM_ACCOUNT };
    char *table;
    const char *p;

    make_report(0, NULL);
    add(1, "u", "\033[31mred\033[0m\nfake line", "p", "COMPLETED", "lnx01", 1, 1, 0, T0, T0, T0 + 1, 0, 0);
    add(2, "u", "c1\xc2\x9b" "2J and \x9b" "2J", "p", "COMPLETED", "lnx01", 1, 1, 0, T0, T0, T0 + 1, 0, 0);
    add(3, "u", "caf\xc3\xa9", "p", "COMPLETED", "lnx01", 1, 1, 0, T0, T0, T0 + 1, 0, 0);
    tbm_report_note(rep, "a note with \033]0;title\007 in it", NULL);
    table = tbm_report_write(rep, TBM_RFMT_TABLE, dims, 1);
    ck_assert_ptr_nonnull(table);
    for (p = table; *p; p++)
        ck_assert_msg(*p == '\n' || ((unsigned char)*p >= 0x20 && *p != 0x7f), "control byte 0x%02x in\n%s",
                      (unsigned char)*p, table);
    ck_assert_ptr_null(strstr(table, "\xc2\x9b"));
    ck_assert_ptr_null(strstr(table, "\x9b"));
    ck_assert_ptr_nonnull(strstr(table, "?[31mred?[0m?fake line "));
    ck_assert_ptr_nonnull(strstr(table, "c1??2J and ?2J "));
    ck_assert_ptr_nonnull(strstr(table, "caf\xc3\xa9 "));
    ck_assert_ptr_nonnull(strstr(table, "note: a note with ?]0;title? in it\n"));
    free(table);
    done();
}
END_TEST

/* HTML (and its SVG) escape < > & " '; JSON keeps the text whole and escaped. */
START_TEST(html_and_json_stay_escaped)
{
    static const tbm_rdim_t dims[] = { TBM_RDIM_ACCOUNT, TBM_RDIM_GROUP };
    static const char *name = "<script>alert('x')</script>&\"\033";
    char *html, *json;
    json_object *root, *arr, *v;

    make_report(0, NULL);
    add(1, "u", name, "p", "COMPLETED", "mac05", 1, 1, 1, T0, T0, T0 + 1, 0, 0);
    html = tbm_report_write(rep, TBM_RFMT_HTML, dims, 2);
    json = tbm_report_write(rep, TBM_RFMT_JSON, dims, 2);
    ck_assert_ptr_null(strstr(html, "<script"));
    ck_assert_ptr_null(strstr(html, "alert('x')"));
    ck_assert_ptr_nonnull(strstr(html, "<td>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;\033</td>"));
    root = json_tokener_parse(json);
    ck_assert_ptr_nonnull(root);
    ck_assert(json_object_object_get_ex(root, "usage", &v));
    ck_assert(json_object_object_get_ex(v, "account", &arr));
    ck_assert(json_object_object_get_ex(json_object_array_get_idx(arr, 0), "account", &v));
    ck_assert_str_eq(json_object_get_string(v), name);
    ck_assert_ptr_null(strstr(json, "\033"));
    ck_assert_ptr_nonnull(strstr(json, "\\u001b"));
    json_object_put(root);
    free(html);
    free(json);
    done();
}
END_TEST

START_TEST(dimensions_by_name)
{
    tbm_rdim_t d;

    ck_assert_int_eq(tbm_rdim_parse("backend", &d), 0);
    ck_assert_int_eq(d, TBM_RDIM_BACKEND);
    ck_assert_int_eq(tbm_rdim_parse("nodes", &d), -1);
    ck_assert_int_eq(tbm_rstate_of("OUT_OF_MEMORY"), TBM_RST_OUT_OF_MEMORY);
    ck_assert_int_eq(tbm_rstate_of("PREEMPTED"), TBM_RST_OTHER);
}
END_TEST

static Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, period_month_and_last);
    tcase_add_test(tc, period_bad_values_say_what_to_write);
    tcase_add_test(tc, period_options);
    tcase_add_test(tc, window_sizes_follow_the_density);
    tcase_add_test(tc, tres_counts);
    tcase_add_test(tc, histogram_exact_then_bounded);
    tcase_add_test(tc, totals_by_kind_group_and_state);
    tcase_add_test(tc, utilisation_and_failures);
    tcase_add_test(tc, only_one_group);
    tcase_add_test(tc, bad_node_list_is_an_error);
    tcase_add_test(tc, writers_show_the_same_numbers);
    tcase_add_test(tc, coverage_when_records_are_in_use);
    tcase_add_test(tc, coverage_from_the_store_hook);
    tcase_add_test(tc, gpu_and_energy_per_user_and_group);
    tcase_add_test(tc, efficiency_without_slurm_cpu);
    tcase_add_test(tc, names_are_escaped);
    tcase_add_test(tc, csv_cells_start_no_formula);
    tcase_add_test(tc, csv_leaves_the_reports_own_values);
    tcase_add_test(tc, table_text_has_no_control_characters);
    tcase_add_test(tc, html_and_json_stay_escaped);
    tcase_add_test(tc, dimensions_by_name);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(report_suite)
