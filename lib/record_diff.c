/* record_diff.c: why two runs differ. Both records are flattened to "path = value" (the nodes' facts merged
 * over all nodes as nodes[*].x), every difference is classified, and a verdict answers "can these two runs
 * be compared?". */
#include "record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "strbuf.h"

/* What a path is about; the first matching prefix wins (NULL class: ignored, e.g. ids and times). */
static const struct {
    const char *prefix;
    int cls;   /* tbm_diff_class_t, or -1 to ignore */
} classes[] = {
    { "schema", -1 }, { "version", -1 }, { "job.id", -1 }, { "job.name", -1 }, { "job.user", -1 },
    { "job.uid", -1 }, { "job.account", -1 }, { "job.submit_time", -1 }, { "job.start_time", -1 },
    { "job.end_time", -1 }, { "job.phase", -1 }, { "job.work_dir", -1 }, { "job.restarts", -1 },
    { "submit.work_dir", -1 }, { "declared.note", -1 }, { "declared.outputs", -1 },
    { "job.steps", TBM_DIFF_PARAMS },
    { "job.state", TBM_DIFF_RESULTS }, { "job.exit_code", TBM_DIFF_RESULTS }, { "job.signal", TBM_DIFF_RESULTS },
    { "results", TBM_DIFF_RESULTS }, { "usage", TBM_DIFF_RESULTS },
    { "declared.data", TBM_DIFF_DATA }, { "declared.model", TBM_DIFF_DATA },
    { "submit.git", TBM_DIFF_CODE }, { "submit.script_sha256", TBM_DIFF_CODE },
    { "declared.seed", TBM_DIFF_PARAMS }, { "submit.sbatch_line", TBM_DIFF_PARAMS },
    { "submit.options", TBM_DIFF_PARAMS },
    { "nodes[*].macos", TBM_DIFF_VERSIONS }, { "nodes[*].python", TBM_DIFF_VERSIONS },
    { "nodes[*].openmpi", TBM_DIFF_VERSIONS },
    { "job.", TBM_DIFF_HOSTS }, { "nodes[*]", TBM_DIFF_HOSTS }, { "node_count", TBM_DIFF_HOSTS },
};

static int class_of(const char *path)
{
    size_t i, n;

    for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
        n = strlen(classes[i].prefix);
        if (!strncmp(path, classes[i].prefix, n) &&
            (path[n] == '\0' || path[n] == '.' || path[n] == '[' || classes[i].prefix[n - 1] == '.' ||
             classes[i].prefix[n - 1] == ']'))
            return classes[i].cls;
    }
    return TBM_DIFF_VERSIONS;   /* anything else about the environment */
}

const char *tbm_diff_class_name(tbm_diff_class_t c)
{
    static const char *const names[] = { "data and inputs", "code", "versions and environment",
                                         "hosts, communication and backend", "parameters and seeds", "results" };
    return c < TBM_DIFF_NCLASSES ? names[c] : "?";
}

const char *tbm_verdict_name(tbm_verdict_t v)
{
    return v == TBM_COMPARABLE ? "comparable"
           : v == TBM_COMPARABLE_WITH_DIFFERENCES ? "comparable with stated differences"
                                                  : "not comparable";
}

/* Add value v at path; several values at one path (nodes[*]) are kept as a set. */
static void put(json_object *flat, const char *path, const char *v)
{
    json_object *set;
    size_t i, n;

    if (!json_object_object_get_ex(flat, path, &set)) {
        set = json_object_new_array();
        json_object_object_add(flat, path, set);
    }
    n = json_object_array_length(set);
    for (i = 0; i < n; i++)
        if (!strcmp(json_object_get_string(json_object_array_get_idx(set, i)), v))
            return;
    json_object_array_add(set, json_object_new_string(v));
}

static const char *element_key(json_object *e)
{
    static const char *const keys[] = { "name", "path", "id", "node" };
    size_t i;

    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (tbm_json_str(e, keys[i]))
            return keys[i];
    return NULL;
}

static void flatten(json_object *flat, json_object *v, const char *path);

static void flatten_array(json_object *flat, json_object *v, const char *path)
{
    size_t i, n = json_object_array_length(v);
    tbm_strbuf_t sb;
    char sub[1024];
    char *joined;
    const char *k;

    if (n == 0 || !json_object_is_type(json_object_array_get_idx(v, 0), json_type_object)) {
        tbm_sb_init(&sb);
        for (i = 0; i < n; i++)
            tbm_sb_printf(&sb, "%s%s", i ? "," : "", json_object_get_string(json_object_array_get_idx(v, i)));
        joined = tbm_sb_take(&sb);
        put(flat, path, joined ? joined : "");
        free(joined);
        return;
    }
    for (i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(v, i);
        k = element_key(e);
        if (k)
            tbm_record_fmt(sub, sizeof(sub), "%s[%s]", path, tbm_json_str(e, k));
        else
            tbm_record_fmt(sub, sizeof(sub), "%s[%zu]", path, i);
        json_object_object_foreach(e, key, val) {
            char leaf[1100];
            if (k && !strcmp(key, k))
                continue;
            tbm_record_fmt(leaf, sizeof(leaf), "%s.%s", sub, key);
            flatten(flat, val, leaf);
        }
    }
}

static void flatten(json_object *flat, json_object *v, const char *path)
{
    char sub[1024], why[600];
    const char *w;

    if (tbm_record_is_absent(v, &w)) {
        tbm_record_fmt(why, sizeof(why), "(absent: %s)", w);
        put(flat, path, why);
        return;
    }
    switch (json_object_get_type(v)) {
    case json_type_object: {
        int env = strstr(path, "backend_env") != NULL;
        json_object_object_foreach(v, key, val) {
            tbm_record_fmt(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
            if (env)   /* ports and folders carry the job id: the variables set is what matters */
                put(flat, sub, "set");
            else
                flatten(flat, val, sub);
        }
        return;
    }
    case json_type_array:
        if (strstr(path, "backend_files")) {
            size_t i, n = json_object_array_length(v);
            for (i = 0; i < n; i++) {
                const char *name = tbm_json_str(json_object_array_get_idx(v, i), "name");
                tbm_record_fmt(sub, sizeof(sub), "%s[%s]", path, name ? name : "?");
                put(flat, sub, "present");
            }
            return;
        }
        flatten_array(flat, v, path);
        return;
    default:
        put(flat, path, json_object_get_string(v));
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(json_object_get_string(*(json_object *const *)a), json_object_get_string(*(json_object *const *)b));
}

/* Flatten a record: every path to one string (the sorted set of the nodes' values joined by " | "). */
static json_object *flat_record(json_object *rec)
{
    json_object *flat = json_object_new_object(), *out = json_object_new_object(), *nodes, *jn;
    size_t i, n;
    char count[32];

    json_object_object_foreach(rec, top, tv) {
        if (strcmp(top, "nodes") != 0)
            flatten(flat, tv, top);
    }
    nodes = tbm_json_typed(rec, "nodes", json_type_array);
    n = nodes ? json_object_array_length(nodes) : 0;
    for (i = 0; i < n; i++) {
        json_object_object_foreach(json_object_array_get_idx(nodes, i), key, val) {
            char sub[300];
            if (!strcmp(key, "name") || !strcmp(key, "rank"))
                continue;
            tbm_record_fmt(sub, sizeof(sub), "nodes[*].%s", key);
            flatten(flat, val, sub);
        }
    }
    jn = tbm_json_typed(tbm_json_typed(rec, "job", json_type_object), "nodes", json_type_array);
    tbm_record_fmt(count, sizeof(count), "%zu", jn ? json_object_array_length(jn) : n);
    put(flat, "node_count", count);
    json_object_object_foreach(flat, path, set) {
        tbm_strbuf_t sb;
        char *s;
        json_object_array_sort(set, cmp_str);
        tbm_sb_init(&sb);
        for (i = 0; i < json_object_array_length(set); i++)
            tbm_sb_printf(&sb, "%s%s", i ? " | " : "", json_object_get_string(json_object_array_get_idx(set, i)));
        s = tbm_sb_take(&sb);
        json_object_object_add(out, path, json_object_new_string(s ? s : ""));
        free(s);
    }
    json_object_put(flat);
    return out;
}

static int add_item(tbm_diff_t *d, int cls, const char *path, const char *a, const char *b)
{
    tbm_diff_item_t *grown = realloc(d->items, (d->n + 1) * sizeof(*grown));

    if (!grown)
        return -1;
    d->items = grown;
    grown[d->n].cls = (tbm_diff_class_t)cls;
    grown[d->n].path = strdup(path);
    grown[d->n].a = strdup(a ? a : "(none)");
    grown[d->n].b = strdup(b ? b : "(none)");
    d->n++;
    return grown[d->n - 1].path && grown[d->n - 1].a && grown[d->n - 1].b ? 0 : -1;
}

static int cmp_item(const void *x, const void *y)
{
    const tbm_diff_item_t *a = x, *b = y;
    return a->cls != b->cls ? (int)a->cls - (int)b->cls : strcmp(a->path, b->path);
}

static const char *item_value(const tbm_diff_t *d, const char *path, int which)
{
    size_t i;

    for (i = 0; i < d->n; i++)
        if (!strcmp(d->items[i].path, path))
            return which ? d->items[i].b : d->items[i].a;
    return NULL;
}

static void verdict(tbm_diff_t *d, json_object *a, json_object *b)
{
    const char *sa = tbm_json_str(tbm_json_typed(a, "job", json_type_object), "state");
    const char *sb_ = tbm_json_str(tbm_json_typed(b, "job", json_type_object), "state");
    size_t per[TBM_DIFF_NCLASSES] = { 0 }, i;
    tbm_strbuf_t sb;
    const char *v1, *v2;

    for (i = 0; i < d->n; i++)
        per[d->items[i].cls]++;
    tbm_sb_init(&sb);
    if (!sa || !sb_ || strcmp(sa, "COMPLETED") != 0 || strcmp(sb_, "COMPLETED") != 0) {
        d->verdict = TBM_NOT_COMPARABLE;
        tbm_sb_printf(&sb, "a run did not complete (%s vs %s); ", sa ? sa : "?", sb_ ? sb_ : "?");
    }
    if (per[TBM_DIFF_DATA] || per[TBM_DIFF_CODE]) {
        d->verdict = TBM_NOT_COMPARABLE;
        tbm_sb_printf(&sb, "different %s%s%s; ", per[TBM_DIFF_DATA] ? "data or inputs" : "",
                      per[TBM_DIFF_DATA] && per[TBM_DIFF_CODE] ? " and " : "", per[TBM_DIFF_CODE] ? "code" : "");
    }
    if (d->verdict != TBM_NOT_COMPARABLE &&
        (per[TBM_DIFF_VERSIONS] || per[TBM_DIFF_HOSTS] || per[TBM_DIFF_PARAMS]))
        d->verdict = TBM_COMPARABLE_WITH_DIFFERENCES;
    if ((v1 = item_value(d, "node_count", 0)) && (v2 = item_value(d, "node_count", 1)))
        tbm_sb_printf(&sb, "node count %s vs %s; ", v1, v2);
    if ((v1 = item_value(d, "job.backend_chosen", 0)) && (v2 = item_value(d, "job.backend_chosen", 1)))
        tbm_sb_printf(&sb, "backend %s vs %s; ", v1, v2);
    if (per[TBM_DIFF_VERSIONS])
        tbm_sb_printf(&sb, "%zu version or environment difference%s; ", per[TBM_DIFF_VERSIONS],
                      per[TBM_DIFF_VERSIONS] > 1 ? "s" : "");
    if (per[TBM_DIFF_PARAMS])
        tbm_sb_printf(&sb, "%zu parameter or seed difference%s; ", per[TBM_DIFF_PARAMS],
                      per[TBM_DIFF_PARAMS] > 1 ? "s" : "");
    if (per[TBM_DIFF_HOSTS] && !item_value(d, "node_count", 0) && !item_value(d, "job.backend_chosen", 0))
        tbm_sb_printf(&sb, "%zu host or communication difference%s; ", per[TBM_DIFF_HOSTS],
                      per[TBM_DIFF_HOSTS] > 1 ? "s" : "");
    if (d->verdict == TBM_COMPARABLE)
        tbm_sb_printf(&sb, "same data, code, versions, hosts, backend and parameters; ");
    if (sb.len >= 2 && !sb.failed)
        sb.s[sb.len -= 2] = '\0';   /* drop the last "; " */
    d->why = tbm_sb_take(&sb);
}

int tbm_record_diff(json_object *a, json_object *b, tbm_diff_t *out, tbm_err_t *err)
{
    json_object *fa, *fb, *v;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (tbm_record_validate(a, err) < 0 || tbm_record_validate(b, err) < 0)
        return -1;
    fa = flat_record(a);
    fb = flat_record(b);
    json_object_object_foreach(fa, path, va) {
        int cls = class_of(path);
        if (cls < 0)
            continue;
        if (!json_object_object_get_ex(fb, path, &v))
            rc |= add_item(out, cls, path, json_object_get_string(va), NULL);
        else if (strcmp(json_object_get_string(va), json_object_get_string(v)) != 0)
            rc |= add_item(out, cls, path, json_object_get_string(va), json_object_get_string(v));
    }
    json_object_object_foreach(fb, path2, vb) {
        int cls = class_of(path2);
        if (cls >= 0 && !json_object_object_get_ex(fa, path2, NULL))
            rc |= add_item(out, cls, path2, NULL, json_object_get_string(vb));
    }
    json_object_put(fa);
    json_object_put(fb);
    if (out->n)
        qsort(out->items, out->n, sizeof(*out->items), cmp_item);
    verdict(out, a, b);
    if (rc < 0 || !out->why) {
        tbm_diff_free(out);
        return tbm_errprintf(err, "diff: out of memory");
    }
    return 0;
}

void tbm_diff_free(tbm_diff_t *d)
{
    size_t i;

    for (i = 0; i < d->n; i++) {
        free(d->items[i].path);
        free(d->items[i].a);
        free(d->items[i].b);
    }
    free(d->items);
    free(d->why);
    memset(d, 0, sizeof(*d));
}
