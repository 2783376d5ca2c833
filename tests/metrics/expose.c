/* expose.c: writes a sample Prometheus exposition for tests/metrics/promtool.sh: the readings of a fixture folder
 * (powermetrics.plist, powermetrics_n2.plist, ioreg.txt) through lib/'s parsers and writer, and the cases the
 * format spells specially (escaped label values and help, NaN, +Inf, -Inf, counters, a family with no sample).
 * The metric names here are examples of the format's rules, not the agent's names.
 * Usage: expose FIXTURE-FOLDER   (the exposition on stdout; exit 1 with the message when a step is refused) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "parse_ioreg.h"
#include "parse_powermetrics.h"

static tbm_err_t err;

#define CHECK(call)                                                                      \
    do {                                                                                 \
        if ((call) < 0) {                                                                \
            fprintf(stderr, "expose: %s: %s\n", #call, err.msg);                         \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

static char *slurp(const char *dir, const char *name, size_t *len)
{
    char path[4096];
    FILE *f;
    char *buf;
    long n;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (!(f = fopen(path, "rb")) || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
        !(buf = malloc((size_t)n + 1))) {
        fprintf(stderr, "expose: cannot read %s\n", path);
        exit(1);
    }
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

static void declare(tbm_metrics_t *m)
{
    CHECK(tbm_metrics_family(m, "tbmesh_example_gpu_active_ratio", TBM_METRIC_GAUGE,
                             "GPU active residency over the last powermetrics sample (1 - idle ratio), 0 to 1", &err));
    CHECK(tbm_metrics_family(m, "tbmesh_example_gpu_frequency_hertz", TBM_METRIC_GAUGE,
                             "The GPU's average frequency while active, in hertz", &err));
    CHECK(tbm_metrics_family(m, "tbmesh_example_power_watts", TBM_METRIC_GAUGE,
                             "Average power over the last powermetrics sample, in watts, by part", &err));
    CHECK(tbm_metrics_family(m, "tbmesh_example_energy_joules_total", TBM_METRIC_COUNTER,
                             "Energy used, summed over powermetrics samples, in joules, by part", &err));
    CHECK(tbm_metrics_family(m, "tbmesh_example_gpu_utilization_ratio", TBM_METRIC_GAUGE,
                             "The GPU driver's utilization (ioreg PerformanceStatistics), 0 to 1, by engine", &err));
    CHECK(tbm_metrics_family(m, "tbmesh_example_gpu_memory_bytes", TBM_METRIC_GAUGE,
                             "GPU memory from ioreg PerformanceStatistics, in bytes", &err));
    CHECK(tbm_metrics_family(m, "tbmesh_example_gpu_info", TBM_METRIC_GAUGE,
                             "The GPU's model, class and core count as labels; always 1", &err));
    CHECK(tbm_metrics_family(m, "tbmesh_example_special_values", TBM_METRIC_GAUGE,
                             "Values the format spells as words; help with a backslash \\ and a \"quote\"", &err));
    CHECK(tbm_metrics_family(m, "tbmesh_example_not_reported", TBM_METRIC_GAUGE,
                             "A family whose reading was not reported: HELP and TYPE only", &err));
}

static void powermetrics(tbm_metrics_t *m, const char *dir)
{
    static tbm_pm_output_t one, two;
    static const char *const parts[] = { "cpu", "gpu", "ane", "package" };
    tbm_label_t l[2] = { { "node", "mac01" }, { "part", NULL } };
    const tbm_pm_sample_t *s = &one.sample[0];
    size_t len, i;
    char *text = slurp(dir, "powermetrics.plist", &len);
    int k;

    CHECK(tbm_parse_powermetrics(text, len, &one, &err));
    free(text);
    text = slurp(dir, "powermetrics_n2.plist", &len);
    CHECK(tbm_parse_powermetrics(text, len, &two, &err));
    free(text);
    CHECK(tbm_metrics_add_reading(m, "tbmesh_example_gpu_active_ratio", l, 1, s->gpu_active, &err));
    if (s->gpu_freq_mhz.reported)
        CHECK(tbm_metrics_add(m, "tbmesh_example_gpu_frequency_hertz", l, 1, s->gpu_freq_mhz.value * 1e6, &err));
    for (i = 0; i < 4; i++) {
        const tbm_reading_t *power[] = { &s->cpu_power_w, &s->gpu_power_w, &s->ane_power_w, &s->package_power_w };
        double joules = 0;

        l[1].value = parts[i];
        CHECK(tbm_metrics_add_reading(m, "tbmesh_example_power_watts", l, 2, *power[i], &err));
        for (k = 0; k < two.n; k++) {
            const tbm_pm_sample_t *t = &two.sample[k];
            const tbm_reading_t *energy[] = { &t->cpu_energy_j, &t->gpu_energy_j, &t->ane_energy_j, &t->package_energy_j };

            joules += energy[i]->reported ? energy[i]->value : 0;
        }
        if (i < 3)
            CHECK(tbm_metrics_add(m, "tbmesh_example_energy_joules_total", l, 2, joules, &err));
    }
}

static void ioreg(tbm_metrics_t *m, const char *dir)
{
    static const char *const engines[] = { "device", "renderer", "tiler" };
    tbm_ioreg_t out;
    tbm_label_t l[2] = { { "node", "mac01" }, { "engine", NULL } };
    char cores[24];
    size_t len, i;
    char *text = slurp(dir, "ioreg.txt", &len);

    CHECK(tbm_parse_ioreg(text, len, &out, &err));
    free(text);
    for (i = 0; i < 3; i++) {
        const tbm_reading_t *pct[] = { &out.gpu[0].device_util, &out.gpu[0].renderer_util, &out.gpu[0].tiler_util };

        l[1].value = engines[i];
        if (pct[i]->reported)
            CHECK(tbm_metrics_add(m, "tbmesh_example_gpu_utilization_ratio", l, 2, pct[i]->value / 100, &err));
    }
    l[1] = (tbm_label_t){ "kind", "in_use" };
    CHECK(tbm_metrics_add_reading(m, "tbmesh_example_gpu_memory_bytes", l, 2, out.gpu[0].mem_in_use, &err));
    l[1].value = "allocated";
    CHECK(tbm_metrics_add_reading(m, "tbmesh_example_gpu_memory_bytes", l, 2, out.gpu[0].mem_alloc, &err));
    snprintf(cores, sizeof(cores), "%ld", out.gpu[0].gpu_cores);
    {
        tbm_label_t info[] = { { "node", "mac01" }, { "model", out.gpu[0].model }, { "class", out.gpu[0].ioclass },
                               { "cores", cores } };

        CHECK(tbm_metrics_add(m, "tbmesh_example_gpu_info", info, 4, 1, &err));
    }
}

static void special(tbm_metrics_t *m)
{
    tbm_label_t l[] = { { "case", NULL }, { "note", "a \\ backslash, a \"quote\",\na new line and UTF-8: \xc3\xa9t\xc3\xa9" } };
    tbm_reading_t none = { 0 };

    l[0].value = "nan";
    CHECK(tbm_metrics_add(m, "tbmesh_example_special_values", l, 2, NAN, &err));
    l[0].value = "plus_inf";
    CHECK(tbm_metrics_add(m, "tbmesh_example_special_values", l, 2, INFINITY, &err));
    l[0].value = "minus_inf";
    CHECK(tbm_metrics_add(m, "tbmesh_example_special_values", l, 2, -INFINITY, &err));
    l[0].value = "tiny";
    CHECK(tbm_metrics_add(m, "tbmesh_example_special_values", l, 2, -2.5e-300, &err));
    CHECK(tbm_metrics_add_reading(m, "tbmesh_example_not_reported", NULL, 0, none, &err));
}

int main(int argc, char **argv)
{
    tbm_metrics_t *m;
    char *text;

    if (argc != 2) {
        fprintf(stderr, "usage: expose FIXTURE-FOLDER\n");
        return 2;
    }
    m = tbm_metrics_new(1000);
    declare(m);
    powermetrics(m, argv[1]);
    ioreg(m, argv[1]);
    special(m);
    if (!(text = tbm_metrics_text(m, &err))) {
        fprintf(stderr, "expose: %s\n", err.msg);
        return 1;
    }
    fputs(text, stdout);
    free(text);
    tbm_metrics_free(m);
    return 0;
}
