/* test_metrics.c: unit tests of lib/metrics.c (the Prometheus text exposition writer) and lib/metrics_rate.c
 * (counter rates across resets and wraps). */
#include <math.h>
#include <string.h>

#include "tbm_check.h"
#include "metrics.h"

static char *text_of(tbm_metrics_t *m)
{
    tbm_err_t err;
    char *text = tbm_metrics_text(m, &err);

    ck_assert_msg(text != NULL, "%s", err.msg);
    return text;
}

#define ADD(m, name, labels, value)                                                                            \
    do {                                                                                                       \
        tbm_err_t err_;                                                                                        \
        ck_assert_msg(tbm_metrics_add((m), (name), (labels), sizeof(labels) / sizeof((labels)[0]), (value),   \
                                      &err_) == 0, "%s", err_.msg);                                           \
    } while (0)

START_TEST(stable_exposition)
{
    tbm_metrics_t *m = tbm_metrics_new(100);
    tbm_label_t mac01[] = { { "node", "mac01" } }, mac00[] = { { "node", "mac00" } };
    tbm_label_t cpu[] = { { "part", "cpu" }, { "node", "mac01" } };
    tbm_err_t err;
    char *text;

    ck_assert_int_eq(tbm_metrics_family(m, "tbm_gpu_active_ratio", TBM_METRIC_GAUGE, "GPU active residency, 0 to 1",
                                        &err), 0);
    ck_assert_int_eq(tbm_metrics_family(m, "tbm_energy_joules_total", TBM_METRIC_COUNTER, "Energy used, in joules",
                                        &err), 0);
    ck_assert_int_eq(tbm_metrics_family(m, "tbm_up", TBM_METRIC_GAUGE, "Whether the agent answered", &err), 0);
    ADD(m, "tbm_gpu_active_ratio", mac01, 0.5);
    ADD(m, "tbm_energy_joules_total", cpu, 12.5);
    ADD(m, "tbm_gpu_active_ratio", mac00, 1);
    ck_assert_int_eq(tbm_metrics_add(m, "tbm_up", NULL, 0, 1, &err), 0);
    text = text_of(m);
    ck_assert_str_eq(text, "# HELP tbm_energy_joules_total Energy used, in joules\n"
                           "# TYPE tbm_energy_joules_total counter\n"
                           "tbm_energy_joules_total{node=\"mac01\",part=\"cpu\"} 12.5\n"
                           "# HELP tbm_gpu_active_ratio GPU active residency, 0 to 1\n"
                           "# TYPE tbm_gpu_active_ratio gauge\n"
                           "tbm_gpu_active_ratio{node=\"mac00\"} 1\n"
                           "tbm_gpu_active_ratio{node=\"mac01\"} 0.5\n"
                           "# HELP tbm_up Whether the agent answered\n"
                           "# TYPE tbm_up gauge\n"
                           "tbm_up 1\n");
    free(text);
    tbm_metrics_free(m);
}
END_TEST

START_TEST(escaping)
{
    tbm_metrics_t *m = tbm_metrics_new(10);
    tbm_label_t odd[] = { { "path", "C:\\dir \"x\"\nnext" }, { "empty", "" }, { "utf8", "Mac Studio \xc3\xa9t\xc3\xa9" } };
    tbm_err_t err;
    char *text;

    ck_assert_int_eq(tbm_metrics_family(m, "odd_value", TBM_METRIC_GAUGE, "A \"help\" with \\ and\na new line",
                                        &err), 0);
    ADD(m, "odd_value", odd, -2.5);
    text = text_of(m);
    ck_assert_str_eq(text, "# HELP odd_value A \"help\" with \\\\ and\\na new line\n"
                           "# TYPE odd_value gauge\n"
                           "odd_value{empty=\"\",path=\"C:\\\\dir \\\"x\\\"\\nnext\",utf8=\"Mac Studio \xc3\xa9t\xc3\xa9\"}"
                           " -2.5\n");
    free(text);
    tbm_metrics_free(m);
}
END_TEST

START_TEST(value_spelling)
{
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        { 0, "0" }, { 1, "1" }, { -0.0, "-0" }, { 0.1, "0.1" }, { 1.0 / 3, "0.3333333333333333" }, { 0.1 + 0.2, "0.30000000000000004" },
        { 123456789012.0, "123456789012" }, { 1e21, "1e+21" }, { 2.5e-7, "2.5e-07" },
        { 68719476736.0, "68719476736" }, { 66.46906, "66.46906" }, { 1378000000.0, "1378000000" },
        { -42, "-42" }, { 9007199254740991.0, "9007199254740991" }, { 9007199254740992.0, "9007199254740992" }, { 1e17, "1e+17" },
    };
    char buf[40];
    size_t i;
    double x;

    tbm_metrics_value_text(NAN, buf, sizeof(buf));
    ck_assert_str_eq(buf, "NaN");
    tbm_metrics_value_text(INFINITY, buf, sizeof(buf));
    ck_assert_str_eq(buf, "+Inf");
    tbm_metrics_value_text(-INFINITY, buf, sizeof(buf));
    ck_assert_str_eq(buf, "-Inf");
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tbm_metrics_value_text(cases[i].v, buf, sizeof(buf));
        ck_assert_str_eq(buf, cases[i].text);
    }
    /* whatever the value, the text reads back to it exactly */
    for (i = 0, x = 1e-300; i < 2000; i++, x *= -1.4142135623730951) {
        tbm_metrics_value_text(x, buf, sizeof(buf));
        ck_assert_msg(strtod(buf, NULL) == x, "%s is not %.17g", buf, x);
    }
}
END_TEST

START_TEST(special_values_in_exposition)
{
    tbm_metrics_t *m = tbm_metrics_new(10);
    tbm_label_t a[] = { { "k", "a" } }, b[] = { { "k", "b" } }, c[] = { { "k", "c" } };
    tbm_err_t err;
    char *text;

    ck_assert_int_eq(tbm_metrics_family(m, "temperature_celsius", TBM_METRIC_GAUGE, "Temperature", &err), 0);
    ADD(m, "temperature_celsius", a, NAN);
    ADD(m, "temperature_celsius", b, INFINITY);
    ADD(m, "temperature_celsius", c, -INFINITY);
    text = text_of(m);
    ck_assert_str_eq(text, "# HELP temperature_celsius Temperature\n# TYPE temperature_celsius gauge\n"
                           "temperature_celsius{k=\"a\"} NaN\ntemperature_celsius{k=\"b\"} +Inf\n"
                           "temperature_celsius{k=\"c\"} -Inf\n");
    free(text);
    tbm_metrics_free(m);
}
END_TEST

/* Family names and types refused, with their messages. */
static const struct {
    const char *name;
    tbm_metric_type_t type;
    const char *help;
    const char *msg;
} bad_families[] = {
    { "", TBM_METRIC_GAUGE, "h", "a metric name is empty: give it a name of [a-z_][a-z0-9_]*" },
    { NULL, TBM_METRIC_GAUGE, "h", "a metric name is empty: give it a name of [a-z_][a-z0-9_]*" },
    { "9lives", TBM_METRIC_GAUGE, "h", "the metric name \"9lives\" has '9' at byte 1: a name is [a-z_][a-z0-9_]*" },
    { "gpu-util", TBM_METRIC_GAUGE, "h", "the metric name \"gpu-util\" has '-' at byte 4: a name is [a-z_][a-z0-9_]*" },
    { "gpu util", TBM_METRIC_GAUGE, "h", "the metric name \"gpu util\" has ' ' at byte 4: a name is [a-z_][a-z0-9_]*" },
    { "gpuUtil", TBM_METRIC_GAUGE, "h", "the metric name \"gpuUtil\" has an upper-case letter: names are snake_case, "
                                        "write it in lower case" },
    { "job:gpu:rate", TBM_METRIC_GAUGE, "h", "the metric name \"job:gpu:rate\" has a ':', which is kept for recording "
                                             "rules: use '_'" },
    { "gpu_\xc3\xa9", TBM_METRIC_GAUGE, "h", "the metric name \"gpu_\xc3\xa9\" has '?' at byte 5: a name is "
                                             "[a-z_][a-z0-9_]*" },
    { "energy_joules", TBM_METRIC_COUNTER, "h", "the counter \"energy_joules\" does not end in \"_total\": name it "
                                                "\"energy_joules_total\"" },
    { "_total", TBM_METRIC_COUNTER, "h", "the counter \"_total\" does not end in \"_total\": name it \"_total_total\"" },
    { "latency_seconds_count", TBM_METRIC_GAUGE, "h", "the metric name \"latency_seconds_count\" ends in \"_count\", "
                                                      "which histograms and summaries use: choose another ending" },
    { "x_bucket", TBM_METRIC_GAUGE, "h", "the metric name \"x_bucket\" ends in \"_bucket\", which histograms and "
                                         "summaries use: choose another ending" },
    { "x_sum", TBM_METRIC_GAUGE, "h", "the metric name \"x_sum\" ends in \"_sum\", which histograms and summaries use: "
                                      "choose another ending" },
    { "x", TBM_METRIC_GAUGE, "", "the metric family \"x\" has no help text: say what it measures, in what unit" },
    { "x", TBM_METRIC_GAUGE, NULL, "the metric family \"x\" has no help text: say what it measures, in what unit" },
    { "x", TBM_METRIC_GAUGE, "bad \xff", "metric family \"x\": the help text is not UTF-8 text at byte 5: give it "
                                         "as UTF-8" },
    { "x", (tbm_metric_type_t)7, "h", "metric family \"x\": the type is neither gauge nor counter" },
    { "dup", TBM_METRIC_GAUGE, "h", "the metric family \"dup\" is declared twice: declare it once" },
};

START_TEST(bad_names_refused)
{
    tbm_metrics_t *m = tbm_metrics_new(10);
    char long_name[TBM_METRICS_NAME_MAX + 2], want[512], *text;
    tbm_err_t err;
    size_t i;

    ck_assert_int_eq(tbm_metrics_family(m, "dup", TBM_METRIC_GAUGE, "h", &err), 0);
    for (i = 0; i < sizeof(bad_families) / sizeof(bad_families[0]); i++) {
        ck_assert_int_eq(tbm_metrics_family(m, bad_families[i].name, bad_families[i].type, bad_families[i].help,
                                            &err), -1);
        ck_assert_str_eq(err.msg, bad_families[i].msg);
    }
    memset(long_name, 'a', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    ck_assert_int_eq(tbm_metrics_family(m, long_name, TBM_METRIC_GAUGE, "h", &err), -1);
    ck_assert_str_eq(err.msg, "the metric name \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\" is 129 bytes, more "
                              "than 128: shorten it");
    long_name[TBM_METRICS_NAME_MAX] = '\0';
    ck_assert_int_eq(tbm_metrics_family(m, long_name, TBM_METRIC_GAUGE, "h", &err), 0);
    /* nothing refused was written */
    text = text_of(m);
    snprintf(want, sizeof(want), "# HELP %s h\n# TYPE %s gauge\n# HELP dup h\n# TYPE dup gauge\n", long_name,
             long_name);
    ck_assert_str_eq(text, want);
    free(text);
    tbm_metrics_free(m);
}
END_TEST

START_TEST(bad_samples_refused)
{
    tbm_metrics_t *m = tbm_metrics_new(10);
    tbm_label_t many[TBM_METRICS_LABELS_MAX + 1], one[] = { { "node", "mac01" } };
    tbm_label_t same[] = { { "a", "1" }, { "b", "2" } }, turned[] = { { "b", "2" }, { "a", "1" } };
    tbm_label_t twice[] = { { "a", "1" }, { "a", "2" } }, reserved[] = { { "__name__", "x" } };
    tbm_label_t badname[] = { { "Node", "x" } }, novalue[] = { { "node", NULL } }, badutf[] = { { "node", "\xc3" } };
    char longv[TBM_METRICS_VALUE_MAX + 2];
    tbm_label_t toolong[] = { { "node", longv } };
    tbm_err_t err;
    size_t i;

    ck_assert_int_eq(tbm_metrics_family(m, "g", TBM_METRIC_GAUGE, "h", &err), 0);
    ck_assert_int_eq(tbm_metrics_family(m, "c_total", TBM_METRIC_COUNTER, "h", &err), 0);
    ck_assert_int_eq(tbm_metrics_add(m, "nope", one, 1, 1, &err), -1);
    ck_assert_str_eq(err.msg, "no metric family \"nope\" is declared: declare it, with its type and help, before its "
                              "samples");
    ck_assert_int_eq(tbm_metrics_add(m, "c_total", one, 1, -1, &err), -1);
    ck_assert_str_eq(err.msg, "the counter \"c_total\" cannot be -1: a counter counts up from 0");
    ck_assert_int_eq(tbm_metrics_add(m, "c_total", one, 1, NAN, &err), -1);
    ck_assert_int_eq(tbm_metrics_add(m, "c_total", one, 1, INFINITY, &err), -1);
    ADD(m, "g", same, 1);
    ck_assert_int_eq(tbm_metrics_add(m, "g", turned, 2, 2, &err), -1);
    ck_assert_str_eq(err.msg, "the series g{a=\"1\",b=\"2\"} is given twice: give each series once");
    ck_assert_int_eq(tbm_metrics_add(m, "g", twice, 2, 1, &err), -1);
    ck_assert_str_eq(err.msg, "metric \"g\": the label \"a\" is given twice: give it once");
    ck_assert_int_eq(tbm_metrics_add(m, "g", reserved, 1, 1, &err), -1);
    ck_assert_str_eq(err.msg, "metric \"g\": the label name \"__name__\" starts with \"__\", which Prometheus keeps for "
                              "itself: rename it");
    ck_assert_int_eq(tbm_metrics_add(m, "g", badname, 1, 1, &err), -1);
    ck_assert_str_eq(err.msg, "metric \"g\": the label name \"Node\" has an upper-case letter: names are snake_case, "
                              "write it in lower case");
    ck_assert_int_eq(tbm_metrics_add(m, "g", novalue, 1, 1, &err), -1);
    ck_assert_str_eq(err.msg, "metric \"g\": the label \"node\" has no value: give \"\" for an empty one");
    ck_assert_int_eq(tbm_metrics_add(m, "g", badutf, 1, 1, &err), -1);
    ck_assert_str_eq(err.msg, "metric \"g\": the label \"node\": its value is not UTF-8 text at byte 1: give it as "
                              "UTF-8");
    memset(longv, 'v', sizeof(longv) - 1);
    longv[sizeof(longv) - 1] = '\0';
    ck_assert_int_eq(tbm_metrics_add(m, "g", toolong, 1, 1, &err), -1);
    ck_assert_str_eq(err.msg, "metric \"g\": the label \"node\": its value is 1025 bytes, more than 1024: shorten it");
    for (i = 0; i < TBM_METRICS_LABELS_MAX + 1; i++)
        many[i] = (tbm_label_t){ "l", "v" };
    ck_assert_int_eq(tbm_metrics_add(m, "g", many, TBM_METRICS_LABELS_MAX + 1, 1, &err), -1);
    ck_assert_str_eq(err.msg, "metric \"g\": 17 labels, more than 16 on one sample: use fewer");
    tbm_metrics_free(m);
}
END_TEST

START_TEST(series_limit)
{
    tbm_metrics_t *m = tbm_metrics_new(3);
    char node[16], *text;
    tbm_label_t l[] = { { "node", node } };
    tbm_err_t err;
    int i;

    ck_assert_ptr_null(tbm_metrics_new(0));
    ck_assert_ptr_null(tbm_metrics_new(TBM_METRICS_SERIES_LIMIT + 1));
    ck_assert_int_eq(tbm_metrics_family(m, "g", TBM_METRIC_GAUGE, "h", &err), 0);
    for (i = 0; i < 3; i++) {
        snprintf(node, sizeof(node), "mac%02d", i);
        ADD(m, "g", l, i);
    }
    ck_assert_int_eq(tbm_metrics_add(m, "g", l, 1, 9, &err), -1);
    ck_assert_str_eq(err.msg, "metric \"g\": there are already 3 series, the most this exposition holds: export fewer "
                              "series or raise the limit");
    text = text_of(m);
    ck_assert_ptr_null(strstr(text, " 9\n"));
    free(text);
    tbm_metrics_free(m);
    /* many series, many families: the hash keeps duplicates found, the order stays by name */
    m = tbm_metrics_new(TBM_METRICS_SERIES_LIMIT);
    for (i = TBM_METRICS_FAMILIES_MAX - 1; i >= 0; i--) {
        snprintf(node, sizeof(node), "f%03d", i);
        ck_assert_int_eq(tbm_metrics_family(m, node, TBM_METRIC_GAUGE, "h", &err), 0);
    }
    ck_assert_int_eq(tbm_metrics_family(m, "one_more", TBM_METRIC_GAUGE, "h", &err), -1);
    ck_assert_str_eq(err.msg, "metric family \"one_more\": there are already 256 families, the most one exposition "
                              "holds");
    for (i = 0; i < 20000; i++) {
        snprintf(node, sizeof(node), "n%05d", 19999 - i);
        ck_assert_int_eq(tbm_metrics_add(m, i % 2 ? "f000" : "f255", l, 1, i, &err), 0);
    }
    snprintf(node, sizeof(node), "n%05d", 5);
    ck_assert_int_eq(tbm_metrics_add(m, "f255", l, 1, 1, &err), -1);
    ck_assert_str_eq(err.msg, "the series f255{node=\"n00005\"} is given twice: give each series once");
    text = text_of(m);
    ck_assert_ptr_nonnull(strstr(text, "# TYPE f000 gauge\nf000{node=\"n00000\"} 19999\nf000{node=\"n00002\"} 19997\n"));
    ck_assert(strstr(text, "# HELP f001") < strstr(text, "# HELP f002"));
    ck_assert_ptr_nonnull(strstr(text, "f255{node=\"n19999\"} 0\n"));
    free(text);
    tbm_metrics_free(m);
}
END_TEST

START_TEST(readings)
{
    tbm_metrics_t *m = tbm_metrics_new(10);
    tbm_reading_t none = { 0 };
    tbm_err_t err;
    char *text;

    ck_assert_int_eq(tbm_metrics_family(m, "gpu_power_watts", TBM_METRIC_GAUGE, "GPU power", &err), 0);
    ck_assert_int_eq(tbm_metrics_add_reading(m, "gpu_power_watts", NULL, 0, none, &err), 0);
    text = text_of(m);
    ck_assert_str_eq(text, "# HELP gpu_power_watts GPU power\n# TYPE gpu_power_watts gauge\n");
    free(text);
    ck_assert_int_eq(tbm_metrics_add_reading(m, "gpu_power_watts", NULL, 0, tbm_reported(0), &err), 0);
    ck_assert_int_eq(tbm_metrics_add_reading(m, "nope", NULL, 0, tbm_reported(1), &err), -1);
    text = text_of(m);
    ck_assert_str_eq(text, "# HELP gpu_power_watts GPU power\n# TYPE gpu_power_watts gauge\ngpu_power_watts 0\n");
    free(text);
    tbm_metrics_free(m);
}
END_TEST

START_TEST(counter_rates)
{
    tbm_counter_rate_t cr;
    tbm_err_t err;
    double rate = -1;

    tbm_counter_rate_init(&cr, 64);
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 1000, 10.0, &rate, &err), TBM_RATE_FIRST);
    ck_assert(rate == -1);
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 3000, 12.0, &rate, &err), TBM_RATE_OK);
    ck_assert(rate == 1000);
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 3000, 13.0, &rate, &err), TBM_RATE_OK);
    ck_assert(rate == 0);
    /* back: a reset, counted again from 0, never negative */
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 400, 17.0, &rate, &err), TBM_RATE_RESET);
    ck_assert(rate == 100);
    /* a 64-bit counter near its top that goes back is a reset too */
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, UINT64_MAX - 5, 18.0, &rate, &err), TBM_RATE_OK);
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 10, 20.0, &rate, &err), TBM_RATE_RESET);
    ck_assert(rate == 5);
    /* time must go on; the refused reading is not kept */
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 20, 20.0, &rate, &err), -1);
    ck_assert_str_eq(err.msg, "a counter reading at 20.000000 s does not come after the last one (20.000000 s): take "
                              "readings from one monotonic clock, in order");
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 20, NAN, &rate, &err), -1);
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 30, 22.0, &rate, &err), TBM_RATE_OK);
    ck_assert(rate == 10);
}
END_TEST

START_TEST(counter_wraps)
{
    tbm_counter_rate_t cr;
    tbm_err_t err;
    double rate = -1;

    tbm_counter_rate_init(&cr, 32);
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 4294967000u, 1.0, &rate, &err), TBM_RATE_FIRST);
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 100, 3.0, &rate, &err), TBM_RATE_WRAPPED);
    ck_assert(rate == (296.0 + 100.0) / 2);
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 2147483748u, 4.0, &rate, &err), TBM_RATE_OK);
    /* exactly half the range round the top is still a wrap; a step back by a little is a reset */
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 100, 5.0, &rate, &err), TBM_RATE_WRAPPED);
    ck_assert(rate == 2147483648.0);
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 5000, 6.0, &rate, &err), TBM_RATE_OK);
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 4000, 8.0, &rate, &err), TBM_RATE_RESET);
    ck_assert(rate == 2000);
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 4294967296u, 9.0, &rate, &err), -1);
    ck_assert_str_eq(err.msg, "the reading 4294967296 does not fit the 32 bits the counter was declared with: declare "
                              "it as 64-bit");
    /* any other width is 64 bits: the same step back is a reset */
    tbm_counter_rate_init(&cr, 16);
    ck_assert_int_eq(cr.bits, 64);
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 4294967000u, 1.0, &rate, &err), TBM_RATE_FIRST);
    ck_assert_int_eq(tbm_counter_rate_feed(&cr, 100, 3.0, &rate, &err), TBM_RATE_RESET);
    ck_assert(rate == 50);
}
END_TEST

static Suite *metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, stable_exposition);
    tcase_add_test(tc, escaping);
    tcase_add_test(tc, value_spelling);
    tcase_add_test(tc, special_values_in_exposition);
    tcase_add_test(tc, bad_names_refused);
    tcase_add_test(tc, bad_samples_refused);
    tcase_add_test(tc, series_limit);
    tcase_add_test(tc, readings);
    tcase_add_test(tc, counter_rates);
    tcase_add_test(tc, counter_wraps);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(metrics_suite)
