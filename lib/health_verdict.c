/* health_verdict.c: the health check's last verdict on a Mac, as a small JSON file (see health.h). */
#include "health.h"
#include "json_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIME_MAX 4102444800LL   /* 2100-01-01: later is no clock's time but a damaged file's */

static const char *const names[] = { "well", "unwell", "unknown" };

const char *tbm_health_state_name(tbm_health_state_t v)
{
    return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "unknown";
}

static int node_ok(const char *node)
{
    return node && tbm_hostname_valid(node) && node[0] != '.';
}

int tbm_health_verdict_file(const char *node, char *buf, size_t len)
{
    int n;

    if (!node_ok(node))
        return -1;
    n = snprintf(buf, len, "%s.json", node);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

char *tbm_health_verdict_json(const tbm_health_verdict_t *v, tbm_err_t *err)
{
    json_object *o;
    char *text = NULL;
    const char *s;

    if (!node_ok(v->node) || !tbm_valid_text(v->reason) || v->time <= 0 || v->time > TIME_MAX ||
        (unsigned)v->verdict > TBM_HEALTH_UNKNOWN)
        return tbm_errprintf(err, "the health verdict on '%s' has a field its reader would refuse (node name, "
                             "reason, time or verdict)", v->node), NULL;
    o = json_object_new_object();
    if (o && !json_object_object_add(o, "node", json_object_new_string(v->node)) &&
        !json_object_object_add(o, "verdict", json_object_new_string(tbm_health_state_name(v->verdict))) &&
        !json_object_object_add(o, "reason", json_object_new_string(v->reason)) &&
        !json_object_object_add(o, "time", json_object_new_int64(v->time)) &&
        (s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)) &&
        (text = malloc(strlen(s) + 2)))
        sprintf(text, "%s\n", s);
    json_object_put(o);
    if (!text)
        tbm_errprintf(err, "out of memory writing the health verdict");
    return text;
}

int tbm_health_verdict_parse(const char *text, size_t len, const char *node, tbm_health_verdict_t *v,
                             tbm_err_t *err)
{
    static const tbm_json_rules_t rules = { .what = "health verdict", .max_len = TBM_HEALTH_VERDICT_BYTES,
                                            .max_depth = 4, .want_object = 1,
                                            .fix = "the next health check writes it again" };
    const char *name = NULL, *verdict = NULL, *reason = "";
    json_object *o, *r;
    int64_t when = 0;
    size_t k;
    int rc = -1;

    memset(v, 0, sizeof(*v));
    if (!(o = tbm_json_read(text, len, &rules, err)))
        return -1;
    if (tbm_json_get_str(o, "health verdict", "node", 1, TBM_HOSTNAME_MAX - 1, &name, err) < 0 ||
        tbm_json_get_str(o, "health verdict", "verdict", 1, 16, &verdict, err) < 0 ||
        tbm_json_get_int(o, "health verdict", "time", 1, 1, TIME_MAX, &when, err) < 0)
        goto out;
    if (json_object_object_get_ex(o, "reason", &r) && !(reason = tbm_json_plain_string(r, NULL))) {
        tbm_errprintf(err, "health verdict: 'reason' must be a string");
        goto out;
    }
    if (!node_ok(name) || (node && strcmp(name, node))) {
        tbm_errprintf(err, "health verdict: it is about '%.64s'%s%s", name, node ? ", not " : ", not a host name",
                      node ? node : "");
        goto out;
    }
    for (k = 0; k < sizeof(names) / sizeof(names[0]) && strcmp(verdict, names[k]); k++)
        ;
    if (k == sizeof(names) / sizeof(names[0])) {
        tbm_errprintf(err, "health verdict: '%.32s' is no verdict (well, unwell or unknown)", verdict);
        goto out;
    }
    if (strlen(reason) >= sizeof(v->reason) || !tbm_valid_text(reason)) {
        tbm_errprintf(err, "health verdict: its reason is longer than %zu bytes or holds control characters",
                      sizeof(v->reason) - 1);
        goto out;
    }
    snprintf(v->node, sizeof(v->node), "%s", name);
    v->verdict = (tbm_health_state_t)k;
    snprintf(v->reason, sizeof(v->reason), "%s", reason);
    v->time = when;
    rc = 0;
out:
    json_object_put(o);
    return rc;
}
