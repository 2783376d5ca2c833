/* proto_usage.c: what a task used, on the wire (proto.h): how it ended, its "rusage" (wait4's measures and its
 * wall time, then the Mac's GPU and energy while it ran, each reported or not) and the task usage objects of
 * the used message and of the agent's kept usage. */
#include "proto.h"
#include "json_read.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ENERGY_MAX_J 1e12   /* far above what a Mac draws in a year (500 W x 366 days = 1.6e10 J) */

static const char *const why_names[TBM_METER_N] = { "", "metrics-off", "no-ring", "short", "no-samples" };

const char *tbm_meter_why_name(int why)
{
    return why > TBM_METER_SAID_NOTHING && why < TBM_METER_N ? why_names[why] : "";
}

int tbm_meter_why_parse(const char *name)
{
    int i;

    for (i = TBM_METER_SAID_NOTHING + 1; name && i < TBM_METER_N; i++)
        if (!strcmp(name, why_names[i]))
            return i;
    return -1;
}

/* How a task ended: status, signal (a known name, or none) and core, consistent with each other. */
int tbm_task_end_read(json_object *o, const char *what, int *status, const char **signal, int *core, tbm_err_t *err)
{
    int64_t st = 0;

    if (tbm_json_get_int(o, what, "status", 1, 0, 255, &st, err) < 0 ||
        tbm_json_get_str(o, what, "signal", 0, 16, signal, err) < 0 ||
        tbm_json_get_bool(o, what, "core", core, err) < 0)
        return -1;
    *status = (int)st;
    if (*signal && !tbm_signal_by_name(*signal))
        return tbm_errprintf(err, "%s: unknown signal '%s'; use a name like TERM, INT, HUP, USR1 (no SIG)", what,
                             *signal);
    if (*signal && *status != 0)
        return tbm_errprintf(err, "%s: a task killed by signal %s cannot also have exit status %d", what, *signal,
                             *status);
    return 0;
}

/* An optional number in [min, max] (a JSON integer or fraction, finite): 1 with *out when present, 0 when
 * absent, -1 with err. */
static int get_num(json_object *o, const char *what, const char *key, double min, double max, const char *range,
                   double *out, tbm_err_t *err)
{
    json_object *v;
    double d;

    if (!json_object_object_get_ex(o, key, &v))
        return 0;
    if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
        return tbm_errprintf(err, "%s: '%s' must be a number %s, not %s", what, key, range,
                             tbm_json_type_name(json_object_get_type(v)));
    d = json_object_get_double(v);
    if (!isfinite(d) || d < min || d > max)
        return tbm_errprintf(err, "%s: '%s' must be a number %s, not %s", what, key, range,
                             json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
    *out = d;
    return 1;
}

/* An optional count of samples (1 or more): 1 with *out when present, 0 when absent, -1 with err. */
static int get_samples(json_object *o, const char *what, const char *key, int *out, tbm_err_t *err)
{
    int64_t n = 0;

    if (!json_object_object_get_ex(o, key, NULL))
        return 0;
    if (tbm_json_get_int(o, what, key, 1, 1, INT32_MAX, &n, err) < 0)
        return -1;
    *out = (int)n;
    return 1;
}

/* An optional why (one of the names): 0 (absent) or the why, -1 with err. */
static int get_why(json_object *o, const char *what, const char *key, int reported, tbm_err_t *err)
{
    const char *name = NULL;
    int why;

    if (tbm_json_get_str(o, what, key, 0, 32, &name, err) < 0)
        return -1;
    if (!name)
        return 0;
    if (reported)
        return tbm_errprintf(err, "%s: '%s' comes with the figures it says are missing; send one or the other",
                             what, key);
    if ((why = tbm_meter_why_parse(name)) < 0)
        return tbm_errprintf(err, "%s: '%s' is '%.32s', not one of metrics-off, no-ring, short, no-samples", what,
                             key, name);
    return why;
}

/* Members that go together: all of them or none (got[i] > 0: keys[i] is there). */
static int together(const char *what, const char *const *keys, const int *got, int n, tbm_err_t *err)
{
    char list[128];
    size_t len = 0;
    int i, have = 0, missing = -1;

    for (i = 0; i < n; i++) {
        have += got[i] > 0;
        if (got[i] <= 0 && missing < 0)
            missing = i;
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s'%s'", !i ? "" : i + 1 < n ? ", " : " and ",
                                keys[i]);
        if (len >= sizeof(list))
            len = sizeof(list) - 1;
    }
    if (have == 0 || have == n)
        return 0;
    return tbm_errprintf(err, "%s: '%s' is missing (%s go together, or none of them)", what, keys[missing], list);
}

int tbm_rusage_gpu_read(json_object *ru, const char *what, tbm_rusage_t *out, tbm_err_t *err)
{
    static const char *const gpu_keys[3] = { "gpu_samples", "gpu_mean", "gpu_peak" };
    static const char *const energy_keys[2] = { "power_samples", "energy_j" };
    tbm_rusage_t r = *out;
    int got[3], why;

    r.gpu_samples = r.power_samples = 0;
    r.gpu_mean = r.gpu_peak = r.energy_j = 0;
    r.gpu_why = r.energy_why = TBM_METER_SAID_NOTHING;
    if ((got[0] = get_samples(ru, what, "gpu_samples", &r.gpu_samples, err)) < 0 ||
        (got[1] = get_num(ru, what, "gpu_mean", 0, 1, "from 0 to 1", &r.gpu_mean, err)) < 0 ||
        (got[2] = get_num(ru, what, "gpu_peak", 0, 1, "from 0 to 1", &r.gpu_peak, err)) < 0 ||
        together(what, gpu_keys, got, 3, err) < 0)
        return -1;
    if (got[0] && r.gpu_mean > r.gpu_peak)
        return tbm_errprintf(err, "%s: 'gpu_mean' %.4f is above 'gpu_peak' %.4f; a mean is never above the "
                             "largest value", what, r.gpu_mean, r.gpu_peak);
    if ((why = get_why(ru, what, "gpu_why", got[0], err)) < 0)
        return -1;
    r.gpu_why = why;
    if ((got[0] = get_samples(ru, what, "power_samples", &r.power_samples, err)) < 0 ||
        (got[1] = get_num(ru, what, "energy_j", 0, ENERGY_MAX_J, "of joules from 0 to 1e12", &r.energy_j, err)) < 0 ||
        together(what, energy_keys, got, 2, err) < 0 || (why = get_why(ru, what, "energy_why", got[0], err)) < 0)
        return -1;
    r.energy_why = why;
    *out = r;
    return 0;
}

int tbm_rusage_read(json_object *o, const char *what, tbm_rusage_t *ru, tbm_err_t *err)
{
    json_object *v;
    char in[96];

    if (!json_object_object_get_ex(o, "rusage", &v) || !json_object_is_type(v, json_type_object))
        return tbm_errprintf(err, "%s: member 'rusage' must be an object", what);
    snprintf(in, sizeof(in), "%s rusage", what);
    return tbm_json_get_int(v, in, "utime_us", 1, 0, INT64_MAX, &ru->utime_us, err) < 0 ||
                   tbm_json_get_int(v, in, "stime_us", 1, 0, INT64_MAX, &ru->stime_us, err) < 0 ||
                   tbm_json_get_int(v, in, "maxrss_kb", 1, 0, INT64_MAX, &ru->maxrss_kb, err) < 0 ||
                   tbm_json_get_int(v, in, "wall_us", 1, 0, INT64_MAX, &ru->wall_us, err) < 0 ||
                   tbm_rusage_gpu_read(v, in, ru, err) < 0
               ? -1
               : 0;
}

/* A number written as `fmt` makes it (so that it reads back, and is stored, as written). */
static void add_num(json_object *o, const char *key, double v, int decimals)
{
    char text[64];

    snprintf(text, sizeof(text), "%.*f", decimals, v);
    json_object_object_add(o, key, json_object_new_double_s(v, text));
}

void tbm_rusage_add(json_object *o, const tbm_rusage_t *r)
{
    json_object *ru = json_object_new_object();

    json_object_object_add(ru, "utime_us", json_object_new_int64(r->utime_us));
    json_object_object_add(ru, "stime_us", json_object_new_int64(r->stime_us));
    json_object_object_add(ru, "maxrss_kb", json_object_new_int64(r->maxrss_kb));
    json_object_object_add(ru, "wall_us", json_object_new_int64(r->wall_us));
    if (r->gpu_samples > 0) {
        json_object_object_add(ru, "gpu_samples", json_object_new_int(r->gpu_samples));
        add_num(ru, "gpu_mean", r->gpu_mean, 4);
        add_num(ru, "gpu_peak", r->gpu_peak, 4);
    } else if (*tbm_meter_why_name(r->gpu_why)) {
        json_object_object_add(ru, "gpu_why", json_object_new_string(tbm_meter_why_name(r->gpu_why)));
    }
    if (r->power_samples > 0) {
        json_object_object_add(ru, "power_samples", json_object_new_int(r->power_samples));
        add_num(ru, "energy_j", r->energy_j, 1);
    } else if (*tbm_meter_why_name(r->energy_why)) {
        json_object_object_add(ru, "energy_why", json_object_new_string(tbm_meter_why_name(r->energy_why)));
    }
    json_object_object_add(o, "rusage", ru);
}

json_object *tbm_task_usage_json(const tbm_task_usage_t *u)
{
    json_object *o = json_object_new_object();

    if (!o)
        return NULL;
    json_object_object_add(o, "job", json_object_new_int64(u->job));
    json_object_object_add(o, "step", json_object_new_int64(u->step));
    json_object_object_add(o, "task", json_object_new_int64(u->task));
    json_object_object_add(o, "pid", json_object_new_int64(u->pid));
    json_object_object_add(o, "status", json_object_new_int(u->status));
    if (u->signal[0])
        json_object_object_add(o, "signal", json_object_new_string(u->signal));
    json_object_object_add(o, "core", json_object_new_boolean(u->core));
    tbm_rusage_add(o, &u->rusage);
    return o;
}

int tbm_task_usage_read(json_object *o, const char *what, tbm_task_usage_t *u, tbm_err_t *err)
{
    int64_t job = 0, step = 0, pid = 0;
    const char *sig = NULL;

    memset(u, 0, sizeof(*u));
    if (!json_object_is_type(o, json_type_object))
        return tbm_errprintf(err, "%s: a task usage must be a JSON object", what);
    if (tbm_json_get_int(o, what, "job", 1, 0, UINT32_MAX, &job, err) < 0 ||
        tbm_json_get_int(o, what, "step", 1, 0, UINT32_MAX, &step, err) < 0 ||
        tbm_json_get_int(o, what, "task", 1, -1, INT32_MAX, &u->task, err) < 0 ||
        tbm_json_get_int(o, what, "pid", 1, 1, INT32_MAX, &pid, err) < 0 ||
        tbm_task_end_read(o, what, &u->status, &sig, &u->core, err) < 0 ||
        tbm_rusage_read(o, what, &u->rusage, err) < 0)
        return -1;
    u->job = (uint32_t)job, u->step = (uint32_t)step, u->pid = (long)pid;
    snprintf(u->signal, sizeof(u->signal), "%s", sig ? sig : "");
    return 0;
}
