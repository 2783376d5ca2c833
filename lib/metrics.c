/* metrics.c: the Prometheus text exposition writer (format 0.0.4; see metrics.h). Families and series are
 * checked as they are added, kept in one bounded list of series with a hash for duplicates, and written in a
 * stable order: families by name, series by their labels. */
#include "metrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_text.h"
#include "strbuf.h"

#define LABEL_BYTES_MAX (32u * 1024u * 1024u)   /* the labels of all series, as written */

typedef struct family {
    char name[TBM_METRICS_NAME_MAX + 1];
    tbm_metric_type_t type;
    char *help;             /* escaped for the HELP line */
} family_t;

typedef struct series {
    int fam;
    char *labels;           /* "{a=\"x\",b=\"y\"}", or "" */
    double value;
} series_t;

struct tbm_metrics {
    size_t max_series;
    family_t *fam;
    size_t n_fam, cap_fam;
    series_t *series;
    size_t n_series, cap_series;
    size_t *slots;          /* hash of series: index + 1, 0 when empty; a power of two long */
    size_t n_slots;
    size_t label_bytes;
};

tbm_metrics_t *tbm_metrics_new(size_t max_series)
{
    tbm_metrics_t *m;

    if (max_series == 0 || max_series > TBM_METRICS_SERIES_LIMIT)
        return NULL;
    m = calloc(1, sizeof(*m));
    if (m)
        m->max_series = max_series;
    return m;
}

void tbm_metrics_free(tbm_metrics_t *m)
{
    size_t i;

    if (!m)
        return;
    for (i = 0; i < m->n_fam; i++)
        free(m->fam[i].help);
    for (i = 0; i < m->n_series; i++)
        free(m->series[i].labels);
    free(m->fam);
    free(m->series);
    free(m->slots);
    free(m);
}

/* --- names and texts ---------------------------------------------------------------------------------------- */

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);

    return n >= k && strcmp(s + n - k, tail) == 0;
}

/* [a-z_][a-z0-9_]*, 1 to TBM_METRICS_NAME_MAX bytes. what: "metric" or "label". */
static int check_name(const char *name, const char *what, tbm_err_t *err)
{
    size_t i, n = name ? strlen(name) : 0;

    if (n == 0)
        return tbm_errprintf(err, "a %s name is empty: give it a name of [a-z_][a-z0-9_]*", what);
    if (n > TBM_METRICS_NAME_MAX)
        return tbm_errprintf(err, "the %s name \"%.40s...\" is %zu bytes, more than %d: shorten it", what, name, n,
                             TBM_METRICS_NAME_MAX);
    for (i = 0; i < n; i++) {
        char c = name[i];

        if (c == '_' || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9'))
            continue;
        if (c >= 'A' && c <= 'Z')
            return tbm_errprintf(err, "the %s name \"%.*s\" has an upper-case letter: names are snake_case, write "
                                      "it in lower case", what, tbm_show_len(name, n, 60), name);
        if (c == ':')
            return tbm_errprintf(err, "the %s name \"%.*s\" has a ':', which is kept for recording rules: use '_'",
                                 what, tbm_show_len(name, n, 60), name);
        return tbm_errprintf(err, "the %s name \"%.*s\" has '%c' at byte %zu: a name is [a-z_][a-z0-9_]*", what,
                             tbm_show_len(name, n, 60), name, (c >= 0x20 && c < 0x7f) ? c : '?', i + 1);
    }
    return 0;
}

static int check_metric_name(const char *name, tbm_metric_type_t type, tbm_err_t *err)
{
    static const char *const reserved[] = { "_count", "_sum", "_bucket" };
    size_t i;

    if (check_name(name, "metric", err) < 0)
        return -1;
    if (type == TBM_METRIC_COUNTER && (!ends_with(name, "_total") || strcmp(name, "_total") == 0))
        return tbm_errprintf(err, "the counter \"%s\" does not end in \"_total\": name it \"%s_total\"", name, name);
    for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
        if (ends_with(name, reserved[i]))
            return tbm_errprintf(err, "the metric name \"%s\" ends in \"%s\", which histograms and summaries use: "
                                      "choose another ending", name, reserved[i]);
    return 0;
}

/* A text that is valid UTF-8 without NUL, at most max bytes. */
static int check_text(const char *s, size_t max, const char *what, tbm_err_t *err)
{
    size_t n = strlen(s), bad = tbm_utf8_check(s, n);

    if (n > max)
        return tbm_errprintf(err, "%s is %zu bytes, more than %zu: shorten it", what, n, max);
    if (bad < n)
        return tbm_errprintf(err, "%s is not UTF-8 text at byte %zu: give it as UTF-8", what, bad + 1);
    return 0;
}

/* s escaped: backslash and newline always, the double quote too when `quote`. */
static void escape(tbm_strbuf_t *sb, const char *s, int quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            tbm_sb_append(sb, "\\\\", 2);
        else if (*s == '\n')
            tbm_sb_append(sb, "\\n", 2);
        else if (*s == '"' && quote)
            tbm_sb_append(sb, "\\\"", 2);
        else
            tbm_sb_append(sb, s, 1);
    }
}

void tbm_metrics_value_text(double value, char *buf, size_t size)
{
    int prec;
    char *c;

    if (isnan(value)) {
        snprintf(buf, size, "NaN");
        return;
    }
    if (isinf(value)) {
        snprintf(buf, size, value > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (value == floor(value) && fabs(value) < 9007199254740992.0 && !(value == 0 && signbit(value))) {
        snprintf(buf, size, "%.0f", value);     /* a whole number up to 2^53, in full */
        return;
    }
    for (prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, value);
        if (strtod(buf, NULL) == value)
            break;
    }
    for (c = buf; *c; c++)     /* a locale's decimal comma is not the format's */
        if (*c == ',')
            *c = '.';
}

/* --- families and series ------------------------------------------------------------------------------------ */

static family_t *find_family(const tbm_metrics_t *m, const char *name)
{
    size_t i;

    for (i = 0; i < m->n_fam; i++)
        if (strcmp(m->fam[i].name, name) == 0)
            return &m->fam[i];
    return NULL;
}

static char *escaped_copy(const char *s, int quote)
{
    tbm_strbuf_t sb;

    tbm_sb_init(&sb);
    escape(&sb, s, quote);
    return tbm_sb_take(&sb);
}

int tbm_metrics_family(tbm_metrics_t *m, const char *name, tbm_metric_type_t type, const char *help,
                       tbm_err_t *err)
{
    family_t *f;

    if (type != TBM_METRIC_GAUGE && type != TBM_METRIC_COUNTER)
        return tbm_errprintf(err, "metric family \"%.60s\": the type is neither gauge nor counter", name ? name : "");
    if (check_metric_name(name, type, err) < 0)
        return -1;
    if (find_family(m, name))
        return tbm_errprintf(err, "the metric family \"%s\" is declared twice: declare it once", name);
    if (!help || !help[0])
        return tbm_errprintf(err, "the metric family \"%s\" has no help text: say what it measures, in what unit",
                             name);
    if (check_text(help, TBM_METRICS_HELP_MAX, "the help text", err) < 0)
        return tbm_errprefix(err, "metric family \"%s\": ", name);
    if (m->n_fam == TBM_METRICS_FAMILIES_MAX)
        return tbm_errprintf(err, "metric family \"%s\": there are already %d families, the most one exposition "
                                  "holds", name, TBM_METRICS_FAMILIES_MAX);
    if (m->n_fam == m->cap_fam) {
        size_t cap = m->cap_fam ? m->cap_fam * 2 : 16;
        family_t *fam = realloc(m->fam, cap * sizeof(*fam));

        if (!fam)
            return tbm_errprintf(err, "metric family \"%s\": out of memory", name);
        m->fam = fam;
        m->cap_fam = cap;
    }
    f = &m->fam[m->n_fam];
    memset(f, 0, sizeof(*f));
    snprintf(f->name, sizeof(f->name), "%s", name);
    f->type = type;
    if (!(f->help = escaped_copy(help, 0)))
        return tbm_errprintf(err, "metric family \"%s\": out of memory", name);
    m->n_fam++;
    return 0;
}

static int label_cmp(const void *a, const void *b)
{
    return strcmp(((const tbm_label_t *)a)->name, ((const tbm_label_t *)b)->name);
}

/* Label names [a-z_][a-z0-9_]*, not "__...", each once (sorted holds them by name); values UTF-8. */
static int check_labels(const tbm_label_t *labels, size_t n, tbm_label_t *sorted, tbm_err_t *err)
{
    size_t i;

    if (n > TBM_METRICS_LABELS_MAX)
        return tbm_errprintf(err, "%zu labels, more than %d on one sample: use fewer", n, TBM_METRICS_LABELS_MAX);
    for (i = 0; i < n; i++) {
        sorted[i] = labels[i];
        if (check_name(labels[i].name, "label", err) < 0)
            return -1;
        if (labels[i].name[0] == '_' && labels[i].name[1] == '_')
            return tbm_errprintf(err, "the label name \"%s\" starts with \"__\", which Prometheus keeps for itself: "
                                      "rename it", labels[i].name);
        if (!labels[i].value)
            return tbm_errprintf(err, "the label \"%s\" has no value: give \"\" for an empty one", labels[i].name);
        if (check_text(labels[i].value, TBM_METRICS_VALUE_MAX, "its value", err) < 0)
            return tbm_errprefix(err, "the label \"%s\": ", labels[i].name);
    }
    qsort(sorted, n, sizeof(sorted[0]), label_cmp);
    for (i = 1; i < n; i++)
        if (strcmp(sorted[i - 1].name, sorted[i].name) == 0)
            return tbm_errprintf(err, "the label \"%s\" is given twice: give it once", sorted[i].name);
    return 0;
}

/* The labels checked and written as "{a=\"x\",b=\"y\"}" (by name), "" when there are none; NULL on error. */
static char *render_labels(const tbm_label_t *labels, size_t n, tbm_err_t *err)
{
    tbm_label_t sorted[TBM_METRICS_LABELS_MAX];
    tbm_strbuf_t sb;
    size_t i;
    char *text;

    if (check_labels(labels, n, sorted, err) < 0)
        return NULL;
    tbm_sb_init(&sb);
    for (i = 0; i < n; i++) {
        tbm_sb_printf(&sb, "%s%s=\"", i ? "," : "{", sorted[i].name);
        escape(&sb, sorted[i].value, 1);
        tbm_sb_append(&sb, "\"", 1);
    }
    if (n > 0)
        tbm_sb_append(&sb, "}", 1);
    text = tbm_sb_take(&sb);
    if (!text)
        tbm_errprintf(err, "out of memory");
    return text;
}

static uint64_t series_hash(int fam, const char *labels)
{
    uint64_t h = 14695981039346656037ull ^ (uint64_t)fam;

    for (; *labels; labels++) {
        h ^= (unsigned char)*labels;
        h *= 1099511628211ull;
    }
    return h;
}

/* The slot of the series (fam, labels): where it is, or the empty one where it would go. */
static size_t *series_slot(const tbm_metrics_t *m, int fam, const char *labels)
{
    size_t mask = m->n_slots - 1, i = (size_t)series_hash(fam, labels) & mask;

    while (m->slots[i]) {
        const series_t *s = &m->series[m->slots[i] - 1];

        if (s->fam == fam && strcmp(s->labels, labels) == 0)
            break;
        i = (i + 1) & mask;
    }
    return &m->slots[i];
}

/* Room for one more series: the list and the hash (kept at most half full). */
static int series_room(tbm_metrics_t *m)
{
    size_t i, n;

    if (m->n_series == m->cap_series) {
        size_t cap = m->cap_series ? m->cap_series * 2 : 64;
        series_t *s = realloc(m->series, cap * sizeof(*s));

        if (!s)
            return -1;
        m->series = s;
        m->cap_series = cap;
    }
    if ((m->n_series + 1) * 2 <= m->n_slots)
        return 0;
    n = m->n_slots ? m->n_slots * 2 : 128;
    free(m->slots);
    if (!(m->slots = calloc(n, sizeof(*m->slots)))) {
        m->n_slots = 0;
        return -1;
    }
    m->n_slots = n;
    for (i = 0; i < m->n_series; i++)
        *series_slot(m, m->series[i].fam, m->series[i].labels) = i + 1;
    return 0;
}

int tbm_metrics_add(tbm_metrics_t *m, const char *name, const tbm_label_t *labels, size_t nlabels, double value,
                    tbm_err_t *err)
{
    const family_t *f = find_family(m, name ? name : "");
    char *text;
    size_t *slot;

    if (!f)
        return tbm_errprintf(err, "no metric family \"%.60s\" is declared: declare it, with its type and help, "
                                  "before its samples", name ? name : "");
    if (f->type == TBM_METRIC_COUNTER && !(value >= 0 && isfinite(value)))
        return tbm_errprintf(err, "the counter \"%s\" cannot be %g: a counter counts up from 0", name, value);
    if (m->n_series == m->max_series)
        return tbm_errprintf(err, "metric \"%s\": there are already %zu series, the most this exposition holds: "
                                  "export fewer series or raise the limit", name, m->max_series);
    if (!(text = render_labels(labels, nlabels, err)))
        return tbm_errprefix(err, "metric \"%s\": ", name);
    if (m->label_bytes + strlen(text) > LABEL_BYTES_MAX) {
        free(text);
        return tbm_errprintf(err, "metric \"%s\": the labels of all series pass %u bytes: export fewer or shorter "
                                  "labels", name, LABEL_BYTES_MAX);
    }
    if (series_room(m) < 0) {
        free(text);
        return tbm_errprintf(err, "metric \"%s\": out of memory", name);
    }
    slot = series_slot(m, (int)(f - m->fam), text);
    if (*slot) {
        tbm_errprintf(err, "the series %s%s is given twice: give each series once", name, text);
        free(text);
        return -1;
    }
    m->series[m->n_series] = (series_t){ (int)(f - m->fam), text, value };
    *slot = ++m->n_series;
    m->label_bytes += strlen(text);
    return 0;
}

int tbm_metrics_add_reading(tbm_metrics_t *m, const char *name, const tbm_label_t *labels, size_t nlabels,
                            tbm_reading_t reading, tbm_err_t *err)
{
    return reading.reported ? tbm_metrics_add(m, name, labels, nlabels, reading.value, err) : 0;
}

/* --- the text ----------------------------------------------------------------------------------------------- */

typedef struct item {
    size_t rank;            /* of its family, in the order of names */
    const series_t *s;
} item_t;

static int family_cmp(const void *a, const void *b)
{
    return strcmp((*(const family_t *const *)a)->name, (*(const family_t *const *)b)->name);
}

static int item_cmp(const void *a, const void *b)
{
    const item_t *x = a, *y = b;

    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return strcmp(x->s->labels, y->s->labels);
}

static void write_families(tbm_strbuf_t *sb, const family_t *const *order, size_t n_fam, const item_t *items,
                           size_t n_items)
{
    char value[40];
    size_t r, j = 0;

    for (r = 0; r < n_fam; r++) {
        const family_t *f = order[r];

        tbm_sb_printf(sb, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name,
                      f->type == TBM_METRIC_COUNTER ? "counter" : "gauge");
        for (; j < n_items && items[j].rank == r; j++) {
            tbm_metrics_value_text(items[j].s->value, value, sizeof(value));
            tbm_sb_printf(sb, "%s%s %s\n", f->name, items[j].s->labels, value);
        }
    }
}

char *tbm_metrics_text(const tbm_metrics_t *m, tbm_err_t *err)
{
    const family_t **order = calloc(m->n_fam + 1, sizeof(*order));
    size_t *rank = calloc(m->n_fam + 1, sizeof(*rank)), i;
    item_t *items = calloc(m->n_series + 1, sizeof(*items));
    tbm_strbuf_t sb;
    char *text = NULL;

    if (order && rank && items) {
        for (i = 0; i < m->n_fam; i++)
            order[i] = &m->fam[i];
        qsort(order, m->n_fam, sizeof(*order), family_cmp);
        for (i = 0; i < m->n_fam; i++)
            rank[order[i] - m->fam] = i;
        for (i = 0; i < m->n_series; i++)
            items[i] = (item_t){ rank[m->series[i].fam], &m->series[i] };
        qsort(items, m->n_series, sizeof(*items), item_cmp);
        tbm_sb_init(&sb);
        write_families(&sb, order, m->n_fam, items, m->n_series);
        text = tbm_sb_take(&sb);
    }
    free(order);
    free(rank);
    free(items);
    if (!text)
        tbm_errprintf(err, "out of memory writing the metrics");
    return text;
}
