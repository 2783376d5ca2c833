/* parse_powermetrics.c: powermetrics' property lists (the cpu_power and gpu_power samplers) into readings: the
 * GPU's active residency and frequency, and the power and energy of the CPU, GPU, ANE and package. */
#include "parse_powermetrics.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "parse_text.h"
#include "plist.h"

#define PM_COMMAND "powermetrics --samplers cpu_power,gpu_power -f plist -i 1000 -n 1"
#define PM_FIX "capture `" PM_COMMAND "` again, as root, with all of its output"

typedef enum check {
    CHECK_POSITIVE,     /* above 0: a sample's length */
    CHECK_NONNEG,       /* 0 or more: powers, energies, a frequency */
    CHECK_IDLE,         /* an idle ratio, 0..1: the reading is 1 - it */
} check_t;

/* One sample as it is read: the GPU dict's own energy is kept aside, for when the processor has none. */
typedef struct sample_state {
    tbm_pm_sample_t s;
    tbm_reading_t gpu_dict_energy_j;
    int found;          /* readings taken, the sample's length aside */
} sample_state_t;

/* Where a key's value goes. */
typedef struct field {
    const char *dict;   /* NULL: the top dict */
    const char *key;
    size_t offset;      /* of its tbm_reading_t in sample_state_t */
    double per;         /* powermetrics' units in one of the reading's (1000 mW in a W) */
    check_t check;
} field_t;

#define AT(f) offsetof(sample_state_t, s.f)

static const field_t fields[] = {
    { NULL, "elapsed_ns", AT(elapsed_s), 1e9, CHECK_POSITIVE },
    { "processor", "cpu_power", AT(cpu_power_w), 1e3, CHECK_NONNEG },
    { "processor", "gpu_power", AT(gpu_power_w), 1e3, CHECK_NONNEG },
    { "processor", "ane_power", AT(ane_power_w), 1e3, CHECK_NONNEG },
    { "processor", "combined_power", AT(package_power_w), 1e3, CHECK_NONNEG },
    { "processor", "cpu_energy", AT(cpu_energy_j), 1e3, CHECK_NONNEG },
    { "processor", "gpu_energy", AT(gpu_energy_j), 1e3, CHECK_NONNEG },
    { "processor", "ane_energy", AT(ane_energy_j), 1e3, CHECK_NONNEG },
    { "processor", "package_energy", AT(package_energy_j), 1e3, CHECK_NONNEG },
    { "gpu", "idle_ratio", AT(gpu_active), 1.0, CHECK_IDLE },
    { "gpu", "freq_hz", AT(gpu_freq_mhz), 1.0, CHECK_NONNEG },
    { "gpu", "gpu_energy", offsetof(sample_state_t, gpu_dict_energy_j), 1e3, CHECK_NONNEG },
};

static int bad_value(const field_t *f, const tbm_plist_value_t *v, const char *what, tbm_err_t *err)
{
    return tbm_errprintf(err, "line %d: %s%s%s is %s", v->line, f->dict ? f->dict : "", f->dict ? "/" : "",
                         f->key, what);
}

static int take_number(const field_t *f, const tbm_plist_value_t *v, sample_state_t *st, tbm_err_t *err)
{
    tbm_reading_t *r = (tbm_reading_t *)((char *)st + f->offset);
    char what[96];
    double x = v->real;

    if (v->type != TBM_PLIST_INTEGER && v->type != TBM_PLIST_REAL) {
        snprintf(what, sizeof(what), "a <%s>, not a number", tbm_plist_type_name(v->type));
        return bad_value(f, v, what, err);
    }
    if (!isfinite(x))
        return bad_value(f, v, "not a finite number", err);
    snprintf(what, sizeof(what), "%.*s", tbm_show_len(v->text, v->len, 40), v->text);
    if (f->check == CHECK_POSITIVE && x <= 0)
        return bad_value(f, v, strcat(what, ": a sample's length must be above 0"), err);
    if (f->check == CHECK_NONNEG && x < 0)
        return bad_value(f, v, strcat(what, ", below 0"), err);
    if (f->check == CHECK_IDLE && (x < 0 || x > 1))
        return bad_value(f, v, strcat(what, ", outside 0..1"), err);
    *r = tbm_reported(f->check == CHECK_IDLE ? 1.0 - x : x / f->per);
    if (f->check != CHECK_POSITIVE)
        st->found++;
    return 0;
}

static int on_value(const tbm_plist_path_t *path, const tbm_plist_value_t *v, void *arg, tbm_err_t *err)
{
    sample_state_t *st = arg;
    const char *keys[2];
    size_t i;

    if (path->depth == 0)
        return v->type == TBM_PLIST_DICT ? 0 : tbm_errprintf(err, "line %d: the property list holds a <%s>, not "
                                                             "the <dict> of a sample", v->line, tbm_plist_type_name(v->type));
    if (path->depth > 2 || !path->step[path->depth - 1].key)
        return 0;
    if (path->depth == 1) {
        for (i = 0; i < 2; i++) {
            keys[0] = i ? "gpu" : "processor";
            if (tbm_plist_path_is(path, 1, keys) && v->type != TBM_PLIST_DICT)
                return tbm_errprintf(err, "line %d: %s is a <%s>, not a <dict>", v->line, keys[0],
                                     tbm_plist_type_name(v->type));
        }
        keys[0] = "hw_model";
        if (tbm_plist_path_is(path, 1, keys) && v->type == TBM_PLIST_STRING)
            tbm_span_copy(st->s.hw_model, sizeof(st->s.hw_model), (tbm_span_t){ v->text, v->len });
    }
    for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        const field_t *f = &fields[i];

        keys[0] = f->dict ? f->dict : f->key;
        keys[1] = f->key;
        if (tbm_plist_path_is(path, f->dict ? 2 : 1, keys))
            return take_number(f, v, st, err);
    }
    return 0;
}

/* A power powermetrics left out (macOS 12 writes energies only) is the energy over the sample's length. */
static void power_from_energy(tbm_reading_t *power, tbm_reading_t energy, tbm_reading_t elapsed)
{
    if (!power->reported && energy.reported && elapsed.reported)
        *power = tbm_reported(energy.value / elapsed.value);
}

static int blank(const char *p, size_t n)
{
    return tbm_span_trim(p, n).n == 0;
}

/* Put "powermetrics output, sample N: " in front of the message and what to do after it. */
static int refuse(tbm_err_t *err, int number, const char *fix)
{
    char what[TBM_ERR_MAX];

    memcpy(what, err->msg, sizeof(what));
    return tbm_errprintf(err, "powermetrics output, sample %d: %s; %s", number, what, fix);
}

static int read_sample(const char *text, size_t len, int number, tbm_pm_sample_t *out, tbm_err_t *err)
{
    sample_state_t st;
    tbm_span_t head = tbm_span_trim(text, len);

    memset(&st, 0, sizeof(st));
    if (head.p[0] != '<') {
        const char *nl = memchr(head.p, '\n', head.n);

        if (nl)
            head.n = (size_t)(nl - head.p);
        tbm_errprintf(err, "it is not a property list (it starts with \"%.*s\")", TBM_SPAN_SHOW(head));
        return refuse(err, number, "run powermetrics with -f plist");
    }
    if (tbm_plist_read(text, len, on_value, &st, err) < 0)
        return refuse(err, number, PM_FIX);
    if (st.found == 0) {
        tbm_errprintf(err, "it has no CPU, GPU or package reading (no processor or gpu dict with known keys)");
        return refuse(err, number, "run powermetrics with --samplers cpu_power,gpu_power");
    }
    if (!st.s.gpu_energy_j.reported)
        st.s.gpu_energy_j = st.gpu_dict_energy_j;
    power_from_energy(&st.s.cpu_power_w, st.s.cpu_energy_j, st.s.elapsed_s);
    power_from_energy(&st.s.gpu_power_w, st.s.gpu_energy_j, st.s.elapsed_s);
    power_from_energy(&st.s.ane_power_w, st.s.ane_energy_j, st.s.elapsed_s);
    power_from_energy(&st.s.package_power_w, st.s.package_energy_j, st.s.elapsed_s);
    *out = st.s;
    return 0;
}

int tbm_parse_powermetrics(const char *text, size_t len, tbm_pm_output_t *out, tbm_err_t *err)
{
    size_t pos = 0, end;
    const char *nul;

    memset(out, 0, sizeof(*out));
    tbm_errclear(err);
    if (len > TBM_PM_OUTPUT_MAX)
        return tbm_errprintf(err, "powermetrics output is %zu bytes, more than the %u read; run it with -n 1",
                             len, TBM_PM_OUTPUT_MAX);
    while (text && pos < len) {
        nul = memchr(text + pos, '\0', len - pos);
        end = nul ? (size_t)(nul - text) : len;
        if (!blank(text + pos, end - pos)) {
            if (out->n == TBM_PM_SAMPLES_MAX)
                return tbm_errprintf(err, "powermetrics output has more than %d samples; run it with -n 1",
                                     TBM_PM_SAMPLES_MAX);
            if (read_sample(text + pos, end - pos, out->n + 1, &out->sample[out->n], err) < 0) {
                out->n = 0;
                return -1;
            }
            out->n++;
        }
        pos = end + 1;
    }
    if (out->n == 0)
        return tbm_errprintf(err, "powermetrics printed no sample: it runs only as root; run `%s` as root and "
                                  "read what it says on its error output", PM_COMMAND);
    return 0;
}
