/* fuzz_powermetrics.c: libFuzzer harness of tbm_parse_powermetrics (lib/parse_powermetrics.c) and the property
 * list reader under it (lib/plist.c). Whatever is accepted holds 1 to TBM_PM_SAMPLES_MAX samples whose readings
 * are finite and in range; whatever is refused says why, naming powermetrics. The input is also read as one
 * property list, which must accept or refuse it with a "line N: " message and hand on only bounded paths. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse_powermetrics.h"
#include "plist.h"

#define FUZZ_REQUIRE(cond) do { if (!(cond)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_reading(tbm_reading_t r, double max)
{
    FUZZ_REQUIRE(r.reported == 0 || r.reported == 1);
    if (r.reported)
        FUZZ_REQUIRE(isfinite(r.value) && r.value >= 0 && r.value <= max);
}

static void check_sample(const tbm_pm_sample_t *s)
{
    const tbm_reading_t *all[] = { &s->gpu_freq_mhz, &s->gpu_power_w, &s->gpu_energy_j, &s->cpu_power_w,
                                   &s->cpu_energy_j, &s->ane_power_w, &s->ane_energy_j, &s->package_power_w,
                                   &s->package_energy_j };
    size_t i;

    FUZZ_REQUIRE(memchr(s->hw_model, '\0', sizeof(s->hw_model)) != NULL);
    check_reading(s->gpu_active, 1.0);
    FUZZ_REQUIRE(!s->elapsed_s.reported || s->elapsed_s.value > 0);
    for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        check_reading(*all[i], INFINITY);
}

static int check_path(const tbm_plist_path_t *path, const tbm_plist_value_t *v, void *arg, tbm_err_t *err)
{
    char text[256];

    (void)arg;
    (void)err;
    FUZZ_REQUIRE(path->depth >= 0 && path->depth <= TBM_PLIST_DEPTH_MAX);
    FUZZ_REQUIRE(v->line >= 1 && v->len <= TBM_PLIST_TEXT_MAX && (unsigned)v->type <= TBM_PLIST_DATA);
    tbm_plist_path_text(path, text, sizeof(text));
    FUZZ_REQUIRE(memchr(text, '\0', sizeof(text)) != NULL);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tbm_pm_output_t out;
    tbm_err_t err;
    int i;

    if (tbm_parse_powermetrics((const char *)data, size, &out, &err) == 0) {
        FUZZ_REQUIRE(out.n >= 1 && out.n <= TBM_PM_SAMPLES_MAX);
        for (i = 0; i < out.n; i++)
            check_sample(&out.sample[i]);
    } else {
        FUZZ_REQUIRE(out.n == 0 && strncmp(err.msg, "powermetrics ", 13) == 0);
    }
    if (tbm_plist_read((const char *)data, size, check_path, NULL, &err) < 0)
        FUZZ_REQUIRE(strncmp(err.msg, "line ", 5) == 0 || strncmp(err.msg, "the document is ", 16) == 0);
    return 0;
}
