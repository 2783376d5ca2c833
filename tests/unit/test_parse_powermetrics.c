/* test_parse_powermetrics.c: unit tests of lib/parse_powermetrics.c (powermetrics' plist samples). */
#include <math.h>
#include <string.h>

#include "tbm_fixture.h"
#include "parse_powermetrics.h"

#define FIX "capture `powermetrics --samplers cpu_power,gpu_power -f plist -i 1000 -n 1` again, as root, with all " \
            "of its output"
#define HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<dict>\n"
#define TAIL "</dict>\n</plist>\n"

static void near(tbm_reading_t r, double want, const char *what)
{
    ck_assert_msg(r.reported, "%s is not reported", what);
    ck_assert_msg(fabs(r.value - want) <= 1e-9 * fmax(1.0, fabs(want)), "%s is %.12g, not %.12g", what, r.value,
                  want);
}

static int parse_fixture(const char *rel, tbm_pm_output_t *out, tbm_err_t *err)
{
    size_t len;
    char *text = tbm_fixture(rel, &len);
    int rc = tbm_parse_powermetrics(text, len, out, err);

    free(text);
    return rc;
}

static int parse_text(const char *text, tbm_pm_output_t *out, tbm_err_t *err)
{
    return tbm_parse_powermetrics(text, strlen(text), out, err);
}

START_TEST(m3_ultra_sample)
{
    static tbm_pm_output_t out;
    const tbm_pm_sample_t *s = &out.sample[0];
    tbm_err_t err;

    ck_assert_msg(parse_fixture("macos/gpu-m3-ultra/powermetrics.plist", &out, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(out.n, 1);
    ck_assert_str_eq(s->hw_model, "Mac15,14");
    near(s->elapsed_s, 1.002345678, "elapsed");
    near(s->gpu_active, 1 - 0.0623, "GPU active residency");
    near(s->gpu_freq_mhz, 1378, "GPU frequency");
    near(s->gpu_power_w, 61.2345, "GPU power");
    near(s->gpu_energy_j, 61.378, "GPU energy");
    near(s->cpu_power_w, 5.23456, "CPU power");
    near(s->cpu_energy_j, 5.247, "CPU energy");
    near(s->ane_power_w, 0, "ANE power");
    near(s->ane_energy_j, 0, "ANE energy");
    near(s->package_power_w, 66.46906, "package power");
    ck_assert(!s->package_energy_j.reported);
}
END_TEST

START_TEST(two_samples_nul_separated)
{
    static tbm_pm_output_t out;
    tbm_err_t err;

    ck_assert_msg(parse_fixture("macos/gpu-m3-ultra/powermetrics_n2.plist", &out, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(out.n, 2);
    near(out.sample[0].gpu_active, 0.9377, "first GPU active residency");
    near(out.sample[1].elapsed_s, 0.998765432, "second elapsed");
    near(out.sample[1].gpu_active, 1 - 0.0871, "second GPU active residency");
    near(out.sample[1].ane_power_w, 0.0125, "second ANE power");
    near(out.sample[1].gpu_energy_j, 58.693, "second GPU energy");
}
END_TEST

START_TEST(missing_keys_not_reported)
{
    static tbm_pm_output_t out;
    const tbm_pm_sample_t *s = &out.sample[0];
    tbm_err_t err;

    /* the cpu_power sampler alone, and no combined_power: no GPU dict, no package */
    ck_assert_msg(parse_fixture("macos/malformed/powermetrics_missing_keys.plist", &out, &err) == 0, "%s", err.msg);
    ck_assert(!s->gpu_active.reported && !s->gpu_freq_mhz.reported && !s->package_power_w.reported);
    ck_assert(!s->package_energy_j.reported);
    near(s->gpu_power_w, 61.2345, "GPU power from the processor");
    near(s->cpu_power_w, 5.23456, "CPU power");
    /* the gpu_power sampler alone (macOS 15): the GPU dict's energy, the power from it */
    ck_assert_msg(parse_text(HEAD "<key>elapsed_ns</key><integer>5005449083</integer>\n<key>gpu</key>\n<dict>\n"
                             "<key>freq_hz</key><real>338</real>\n<key>idle_ratio</key><real>0.995324</real>\n"
                             "<key>gpu_energy</key><integer>9</integer>\n</dict>\n" TAIL, &out, &err) == 0, "%s",
                  err.msg);
    ck_assert(!s->cpu_power_w.reported && !s->cpu_energy_j.reported && !s->package_power_w.reported);
    ck_assert_str_eq(s->hw_model, "");
    near(s->gpu_active, 1 - 0.995324, "GPU active residency");
    near(s->gpu_freq_mhz, 338, "GPU frequency");
    near(s->gpu_energy_j, 0.009, "GPU energy");
    near(s->gpu_power_w, 0.009 / 5.005449083, "GPU power from its energy");
    /* macOS 12: energies only, package_energy instead of combined_power; no elapsed_ns, no power */
    ck_assert_msg(parse_text(HEAD "<key>elapsed_ns</key><integer>500000000</integer>\n<key>processor</key><dict>\n"
                             "<key>ane_energy</key><integer>0</integer><key>cpu_energy</key><integer>640</integer>"
                             "<key>gpu_energy</key><integer>305</integer><key>dram_energy</key><integer>89</integer>"
                             "<key>package_energy</key><integer>1046</integer></dict>\n" TAIL, &out, &err) == 0, "%s",
                  err.msg);
    near(s->package_energy_j, 1.046, "package energy");
    near(s->package_power_w, 2.092, "package power from its energy");
    near(s->cpu_power_w, 1.28, "CPU power from its energy");
    ck_assert_int_eq(parse_text(HEAD "<key>processor</key><dict><key>cpu_energy</key><integer>640</integer></dict>\n"
                                TAIL, &out, &err), 0);
    near(s->cpu_energy_j, 0.64, "CPU energy");
    ck_assert(!s->cpu_power_w.reported && !s->elapsed_s.reported);
}
END_TEST

START_TEST(damaged_fixtures)
{
    static tbm_pm_output_t out;
    tbm_err_t err;

    ck_assert_int_eq(parse_fixture("macos/malformed/powermetrics_truncated.plist", &out, &err), -1);
    ck_assert_str_eq(err.msg, "powermetrics output, sample 1: line 264: the text ends inside <real>: the output was "
                              "cut short (at processor/cpu_power); " FIX);
    ck_assert_int_eq(out.n, 0);
    ck_assert_int_eq(parse_fixture("macos/malformed/powermetrics_wrong_types.plist", &out, &err), -1);
    ck_assert_str_eq(err.msg, "powermetrics output, sample 1: line 264: processor/cpu_power is a <string>, not a "
                              "number; " FIX);
    ck_assert_int_eq(parse_fixture("macos/malformed/powermetrics_text.txt", &out, &err), -1);
    ck_assert_str_eq(err.msg, "powermetrics output, sample 1: it is not a property list (it starts with \"Machine "
                              "model: Mac15,14\"); run powermetrics with -f plist");
    ck_assert_int_eq(parse_fixture("macos/malformed/empty.txt", &out, &err), -1);
    ck_assert_str_eq(err.msg, "powermetrics printed no sample: it runs only as root; run `powermetrics --samplers "
                              "cpu_power,gpu_power -f plist -i 1000 -n 1` as root and read what it says on its error "
                              "output");
    ck_assert_int_eq(parse_fixture("macos/malformed/blank.txt", &out, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "printed no sample"));
    ck_assert_int_eq(tbm_parse_powermetrics(NULL, 0, &out, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "printed no sample"));
}
END_TEST

/* Values the reader accepts but a sample cannot have, each with its message. */
static const struct {
    const char *body;
    const char *msg;
} bad_values[] = {
    { "<key>gpu</key><dict><key>idle_ratio</key><real>1.5</real></dict>\n",
      "line 4: gpu/idle_ratio is 1.5, outside 0..1" },
    { "<key>gpu</key><dict><key>idle_ratio</key><real>-0.01</real></dict>\n",
      "line 4: gpu/idle_ratio is -0.01, outside 0..1" },
    { "<key>processor</key><dict><key>gpu_power</key><real>-3</real></dict>\n",
      "line 4: processor/gpu_power is -3, below 0" },
    { "<key>processor</key><dict><key>combined_power</key><real>nan</real></dict>\n",
      "line 4: processor/combined_power is not a finite number" },
    { "<key>elapsed_ns</key><integer>0</integer>\n<key>gpu</key><dict><key>idle_ratio</key><real>0</real></dict>\n",
      "line 4: elapsed_ns is 0: a sample's length must be above 0" },
    { "<key>gpu</key><dict><key>freq_hz</key><true/></dict>\n", "line 4: gpu/freq_hz is a <bool>, not a number" },
    { "<key>processor</key><array/>\n", "line 4: processor is a <array>, not a <dict>" },
    { "<key>gpu</key><string>none</string>\n", "line 4: gpu is a <string>, not a <dict>" },
};

START_TEST(bad_values_refused)
{
    static tbm_pm_output_t out;
    char text[1024], want[1024];
    tbm_err_t err;
    size_t i;

    for (i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
        snprintf(text, sizeof(text), HEAD "%s" TAIL, bad_values[i].body);
        snprintf(want, sizeof(want), "powermetrics output, sample 1: %s; " FIX, bad_values[i].msg);
        ck_assert_int_eq(parse_text(text, &out, &err), -1);
        ck_assert_str_eq(err.msg, want);
    }
    ck_assert_int_eq(parse_text("<plist><array/></plist>", &out, &err), -1);
    ck_assert_str_eq(err.msg, "powermetrics output, sample 1: line 1: the property list holds a <array>, not the "
                              "<dict> of a sample; " FIX);
    /* a sample of other samplers: no reading at all */
    ck_assert_int_eq(parse_text(HEAD "<key>elapsed_ns</key><integer>5</integer><key>thermal_pressure</key>"
                                "<string>Nominal</string>\n<key>processor</key><dict><key>clusters</key><array/>"
                                "</dict>\n" TAIL, &out, &err), -1);
    ck_assert_str_eq(err.msg, "powermetrics output, sample 1: it has no CPU, GPU or package reading (no processor or "
                              "gpu dict with known keys); run powermetrics with --samplers cpu_power,gpu_power");
}
END_TEST

START_TEST(samples_bounded)
{
    static tbm_pm_output_t out;
    static const char one[] = HEAD "<key>gpu</key><dict><key>idle_ratio</key><real>0.5</real></dict>\n" TAIL;
    char *text = malloc(TBM_PM_OUTPUT_MAX + 2), *p = text;
    tbm_err_t err;
    int i;

    for (i = 0; i < TBM_PM_SAMPLES_MAX; i++) {
        memcpy(p, one, sizeof(one));      /* with its NUL */
        p += sizeof(one);
    }
    ck_assert_msg(tbm_parse_powermetrics(text, (size_t)(p - text), &out, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(out.n, TBM_PM_SAMPLES_MAX);
    near(out.sample[TBM_PM_SAMPLES_MAX - 1].gpu_active, 0.5, "the last sample");
    memcpy(p, one, sizeof(one) - 1);
    ck_assert_int_eq(tbm_parse_powermetrics(text, (size_t)(p - text) + sizeof(one) - 1, &out, &err), -1);
    ck_assert_str_eq(err.msg, "powermetrics output has more than 16 samples; run it with -n 1");
    /* the second sample cut short: the message names it, and nothing is kept */
    ck_assert_int_eq(tbm_parse_powermetrics(text, sizeof(one) + 40, &out, &err), -1);
    ck_assert_int_eq(out.n, 0);
    ck_assert_msg(strncmp(err.msg, "powermetrics output, sample 2: line 2: the text ends", 52) == 0, "%s", err.msg);
    /* more than the output limit */
    memset(text, ' ', TBM_PM_OUTPUT_MAX + 1);
    ck_assert_int_eq(tbm_parse_powermetrics(text, TBM_PM_OUTPUT_MAX + 1, &out, &err), -1);
    ck_assert_str_eq(err.msg, "powermetrics output is 16777217 bytes, more than the 16777216 read; run it with -n 1");
    free(text);
}
END_TEST

static Suite *powermetrics_suite(void)
{
    Suite *s = suite_create("parse_powermetrics");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, m3_ultra_sample);
    tcase_add_test(tc, two_samples_nul_separated);
    tcase_add_test(tc, missing_keys_not_reported);
    tcase_add_test(tc, damaged_fixtures);
    tcase_add_test(tc, bad_values_refused);
    tcase_add_test(tc, samples_bounded);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(powermetrics_suite)
