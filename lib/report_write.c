/* report_write.c: the usage report's sections (one set of formatted cells) written as an aligned table,
 * CSV, JSON or one self-contained HTML page with inline SVG charts. Every format shows the same cells; names
 * come from users (accounts, backends from the submit line), so CSV text cells cannot start a formula, the
 * table's text has no control characters, and HTML, SVG and JSON escape what they must. */
#include "config.h"
#include "report.h"
#include "strbuf.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_sections.h"

/* ---- building the cells ---- */

static section_t *sec_new(sections_t *ss, const char *id, const char *title, size_t n_text, ...)
{
    section_t *n = realloc(ss->s, (ss->n + 1) * sizeof(*n)), *s;
    const char *c;
    va_list ap;

    if (!n) {
        ss->failed = 1;
        return NULL;
    }
    ss->s = n;
    s = &n[ss->n++];
    memset(s, 0, sizeof(*s));
    snprintf(s->id, sizeof(s->id), "%s", id);
    snprintf(s->title, sizeof(s->title), "%s", title);
    va_start(ap, n_text);
    while ((c = va_arg(ap, const char *)) && s->n_cols < MAX_COLS) {
        if (s->n_cols < n_text)
            s->text |= 1u << s->n_cols;
        s->cols[s->n_cols++] = c;
    }
    va_end(ap);
    return s;
}

/* Add a column to a section that has no rows yet (columns that depend on the options). */
static void sec_col(section_t *s, const char *c)
{
    if (s && !s->n_rows && s->n_cols < MAX_COLS)
        s->cols[s->n_cols++] = c;
}

/* Add a text column (a remark) after the numbers, to a section that has no rows yet. */
static void sec_text_col(section_t *s, const char *c)
{
    if (s && !s->n_rows && s->n_cols < MAX_COLS) {
        s->text |= 1u << s->n_cols;
        s->cols[s->n_cols++] = c;
    }
}

/* Append one row; cells given printf-style one by one through row_cell. */
static char **sec_row(sections_t *ss, section_t *s)
{
    if (!s)
        return NULL;
    if (s->n_rows == s->cap_rows) {
        size_t cap = s->cap_rows ? s->cap_rows * 2 : 16;
        char **c = realloc(s->cells, cap * s->n_cols * sizeof(*c));
        if (!c) {
            ss->failed = 1;
            return NULL;
        }
        s->cells = c;
        s->cap_rows = cap;
    }
    memset(&s->cells[s->n_rows * s->n_cols], 0, s->n_cols * sizeof(char *));
    return &s->cells[s->n_rows++ * s->n_cols];
}

static void cell(sections_t *ss, char **row, size_t i, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void cell(sections_t *ss, char **row, size_t i, const char *fmt, ...)
{
    va_list ap;

    if (!row)
        return;
    va_start(ap, fmt);
    if (vasprintf(&row[i], fmt, ap) < 0) {
        row[i] = NULL;
        ss->failed = 1;
    }
    va_end(ap);
}

static void cell_hours(sections_t *ss, char **row, size_t i, double s) { cell(ss, row, i, "%.4f", s / 3600.0); }

static void cell_pct(sections_t *ss, char **row, size_t i, double num, double den)
{
    if (den > 0)
        cell(ss, row, i, "%.1f", 100.0 * num / den);
    else
        cell(ss, row, i, "%s", "");
}

static void sections_free(sections_t *ss)
{
    size_t i, k;

    for (i = 0; i < ss->n; i++) {
        for (k = 0; k < ss->s[i].n_rows * ss->s[i].n_cols; k++)
            free(ss->s[i].cells[k]);
        free(ss->s[i].cells);
    }
    free(ss->s);
}

static void build_usage(sections_t *ss, tbm_report_t *r, tbm_rdim_t d)
{
    char id[48], title[96];
    const tbm_ragg_t *a;
    size_t n = tbm_report_groups(r, d, &a), i, k, c;
    section_t *s;

    snprintf(id, sizeof(id), "usage-%s", tbm_rdim_name(d));
    snprintf(title, sizeof(title), "Usage by %s", tbm_rdim_name(d));
    s = sec_new(ss, id, title, 1, tbm_rdim_name(d), "jobs", NULL);
    for (k = 0; k < TBM_RST_N; k++)
        sec_col(s, tbm_rstate_name((tbm_rstate_t)k));
    sec_col(s, "node_h");
    sec_col(s, "cpu_h");
    sec_col(s, "tbmesh_h");
    sec_col(s, "wait_median_s");
    sec_col(s, "wait_p90_s");
    for (k = 0; k < TBM_RSIZE_N; k++)
        sec_col(s, tbm_rsize_name((int)k));
    for (i = 0; i < n; i++) {
        char **row = sec_row(ss, s);
        c = 0;
        cell(ss, row, c++, "%s", a[i].name);
        cell(ss, row, c++, "%llu", (unsigned long long)a[i].jobs);
        for (k = 0; k < TBM_RST_N; k++)
            cell(ss, row, c++, "%llu", (unsigned long long)a[i].state[k]);
        cell_hours(ss, row, c++, (double)a[i].node_s);
        cell_hours(ss, row, c++, (double)a[i].cpu_s);
        cell_hours(ss, row, c++, (double)a[i].tbmesh_s);
        if (a[i].ran) {
            cell(ss, row, c++, "%llu", (unsigned long long)tbm_rhist_percentile(&a[i].wait, 50));
            cell(ss, row, c++, "%llu", (unsigned long long)tbm_rhist_percentile(&a[i].wait, 90));
        } else {
            cell(ss, row, c++, "%s", "");
            cell(ss, row, c++, "%s", "");
        }
        for (k = 0; k < TBM_RSIZE_N; k++)
            cell(ss, row, c++, "%llu", (unsigned long long)a[i].size[k]);
    }
}

static void build_utilisation(sections_t *ss, tbm_report_t *r)
{
    const tbm_rgroup_use_t *u;
    size_t n = tbm_report_group_use(r, &u), i;
    section_t *s = sec_new(ss, "utilisation", "Utilisation of each Mac group", 1, "group", "nodes", "capacity_h",
                           "unavailable_h", "alloc_h", "util_pct", "whole_group_jobs", NULL);

    for (i = 0; i < n; i++) {
        const char *only = tbm_report_opts(r)->only_group;
        char **row;
        if (only && strcmp(only, u[i].name))
            continue;
        row = sec_row(ss, s);
        cell(ss, row, 0, "%s", u[i].name);
        cell(ss, row, 1, "%d", u[i].nodes);
        cell_hours(ss, row, 2, (double)u[i].capacity_s);
        cell_hours(ss, row, 3, (double)u[i].unavailable_s);
        cell_hours(ss, row, 4, (double)u[i].alloc_s);
        cell_pct(ss, row, 5, (double)u[i].alloc_s, (double)u[i].capacity_s);
        cell(ss, row, 6, "%llu", (unsigned long long)u[i].whole_group_jobs);
    }
}

static int fail_cmp(const void *a, const void *b)
{
    const tbm_rfailure_t *x = a, *y = b;
    int c = strcmp(x->kind, y->kind);

    return c ? c : strcmp(x->reason, y->reason);
}

static void build_failures(sections_t *ss, tbm_report_t *r)
{
    const tbm_rfailure_t *f;
    size_t n = tbm_report_failures(r, &f), i;
    section_t *s = sec_new(ss, "failures", "Failures by reason", 2, "kind", "reason", "count", "node_h", NULL);

    if (n)
        qsort((void *)f, n, sizeof(*f), fail_cmp);
    for (i = 0; i < n; i++) {
        char **row = sec_row(ss, s);
        cell(ss, row, 0, "%s", f[i].kind);
        cell(ss, row, 1, "%s", f[i].reason);
        cell(ss, row, 2, "%llu", (unsigned long long)f[i].count);
        cell_hours(ss, row, 3, (double)f[i].node_s);
    }
}

/* Used above allocated is not an efficiency: the row says why such a figure can be there, beside it. */
static void eff_remark(sections_t *ss, char **row, size_t i, const tbm_ragg_t *a, int slurm_known)
{
    static const char *const what[3] = { "linux_eff_pct", "mac_slurm_eff_pct", "mac_record_eff_pct" };
    char over[3][48], text[1024];
    int k, n = 0, slurm = 0;
    size_t len = 0;

    for (k = 0; k < 3; k++) {
        double used = k < 2 ? a->eff_used_s[k] : a->rec_used_s, alloc = k < 2 ? a->eff_alloc_s[k] : a->rec_alloc_s;
        over[k][0] = '\0';
        if ((k < 2 && !slurm_known) || alloc <= 0 || used <= alloc)
            continue;
        snprintf(over[k], sizeof(over[k]), "%s %.1f%%", what[k], 100.0 * used / alloc);
        n++;
        slurm |= k < 2;
    }
    text[0] = '\0';
    if (n) {
        len = (size_t)snprintf(text, sizeof(text), "above 100%% (%s%s%s%s%s): used above allocated is not an efficiency",
                               over[0], *over[0] && (*over[1] || *over[2]) ? ", " : "", over[1],
                               *over[1] && *over[2] ? ", " : "", over[2]);
        if (slurm && len < sizeof(text))
            len += (size_t)snprintf(text + len, sizeof(text) - len, "; Slurm counted more CPU time than the jobs' "
                                    "CPUs could give while they ran: their processes were not held to their CPUs "
                                    "(task/cgroup with ConstrainCores=yes holds them), so the jobs used CPUs "
                                    "beyond their allocation");
        if (*over[2] && len < sizeof(text))
            snprintf(text + len, sizeof(text) - len, "; the records counted are those whose CPU time fits the "
                     "allocation with %d s of slack per job (Slurm keeps whole seconds): above 100%% only within "
                     "that slack", TBM_RTRUST_SLACK_S);
    }
    cell(ss, row, i, "%s", text);
}

static void build_efficiency(sections_t *ss, tbm_report_t *r, tbm_rdim_t d)
{
    char id[48], title[96];
    const tbm_ragg_t *a;
    size_t n = tbm_report_groups(r, d, &a), i;
    section_t *s;

    snprintf(id, sizeof(id), "efficiency-%s", tbm_rdim_name(d));
    snprintf(title, sizeof(title), "CPU efficiency by %s (used / allocated)", tbm_rdim_name(d));
    s = sec_new(ss, id, title, 1, tbm_rdim_name(d), "linux_alloc_h", "linux_used_h", "linux_eff_pct",
                "mac_alloc_h", "mac_slurm_used_h", "mac_slurm_eff_pct", "mac_record_alloc_h", "mac_record_used_h",
                "mac_record_eff_pct", NULL);
    sec_text_col(s, "remark");
    for (i = 0; i < n; i++) {
        char **row = sec_row(ss, s);
        cell(ss, row, 0, "%s", a[i].name);
        cell_hours(ss, row, 1, a[i].eff_alloc_s[0]);
        cell_hours(ss, row, 4, a[i].eff_alloc_s[1]);
        if (!tbm_report_opts(r)->slurm_cpu_unknown) {   /* else Slurm's CPU use was not read: no value */
            cell_hours(ss, row, 2, a[i].eff_used_s[0]);
            cell_pct(ss, row, 3, a[i].eff_used_s[0], a[i].eff_alloc_s[0]);
            cell_hours(ss, row, 5, a[i].eff_used_s[1]);
            cell_pct(ss, row, 6, a[i].eff_used_s[1], a[i].eff_alloc_s[1]);
        } else {
            cell(ss, row, 2, "%s", "");
            cell(ss, row, 3, "%s", "");
            cell(ss, row, 5, "%s", "");
            cell(ss, row, 6, "%s", "");
        }
        cell_hours(ss, row, 7, a[i].rec_alloc_s);
        cell_hours(ss, row, 8, a[i].rec_used_s);
        cell_pct(ss, row, 9, a[i].rec_used_s, a[i].rec_alloc_s);
        eff_remark(ss, row, 10, a + i, !tbm_report_opts(r)->slurm_cpu_unknown);
    }
}

/* The Mac jobs' GPU-hours and energy beside their CPU-hours, per user or group: only from records that verify
 * (report_trust.c), each job's figure the largest task's per node and step (lib/record.h); empty, not 0,
 * where no job gave one. */
static void build_gpu(sections_t *ss, tbm_report_t *r, tbm_rdim_t d)
{
    char id[48], title[96];
    const tbm_ragg_t *a;
    size_t n = tbm_report_groups(r, d, &a), i;
    section_t *s;

    snprintf(id, sizeof(id), "gpu-%s", tbm_rdim_name(d));
    snprintf(title, sizeof(title), "GPU and energy of Mac jobs by %s (from their records)", tbm_rdim_name(d));
    s = sec_new(ss, id, title, 1, tbm_rdim_name(d), "mac_jobs", "mac_cpu_h", "gpu_jobs", "gpu_h", "energy_jobs",
                "energy_kwh", NULL);
    for (i = 0; i < n; i++) {
        char **row;
        if (!a[i].mac_jobs)
            continue;
        row = sec_row(ss, s);
        cell(ss, row, 0, "%s", a[i].name);
        cell(ss, row, 1, "%llu", (unsigned long long)a[i].mac_jobs);
        cell_hours(ss, row, 2, a[i].mac_cpu_s);
        cell(ss, row, 3, "%llu", (unsigned long long)a[i].gpu_jobs);
        if (a[i].gpu_jobs)
            cell_hours(ss, row, 4, a[i].gpu_s);
        else
            cell(ss, row, 4, "%s", "");
        cell(ss, row, 5, "%llu", (unsigned long long)a[i].energy_jobs);
        if (a[i].energy_jobs)
            cell(ss, row, 6, "%.4f", a[i].energy_j / 3.6e6);
        else
            cell(ss, row, 6, "%s", "");
    }
}

static void build_coverage(sections_t *ss, tbm_report_t *r)
{
    const tbm_ragg_t *a;
    size_t n = tbm_report_groups(r, TBM_RDIM_USER, &a), i;
    section_t *s = sec_new(ss, "coverage-user", "Reproducibility coverage of Mac jobs", 1, "user", "mac_jobs",
                           "with_record", "verified", "coverage_pct", NULL);

    for (i = 0; i < n; i++) {
        char **row;
        if (!a[i].mac_jobs)
            continue;
        row = sec_row(ss, s);
        cell(ss, row, 0, "%s", a[i].name);
        cell(ss, row, 1, "%llu", (unsigned long long)a[i].mac_jobs);
        cell(ss, row, 2, "%llu", (unsigned long long)a[i].rec_present);
        cell(ss, row, 3, "%llu", (unsigned long long)a[i].rec_verified);
        cell_pct(ss, row, 4, (double)a[i].rec_verified, (double)a[i].mac_jobs);
    }
}

static int top_cmp(const void *a, const void *b)
{
    const tbm_ragg_t *x = *(const tbm_ragg_t *const *)a, *y = *(const tbm_ragg_t *const *)b;

    if (x->node_s != y->node_s)
        return x->node_s > y->node_s ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void build_top(sections_t *ss, tbm_report_t *r, tbm_rdim_t d, const char *id, const char *title)
{
    const tbm_ragg_t *a, **p;
    size_t n = tbm_report_groups(r, d, &a), i;
    section_t *s = sec_new(ss, id, title, 1, tbm_rdim_name(d), "rank", "node_h", "cpu_h", "jobs", NULL);

    if (!n || !(p = malloc(n * sizeof(*p)))) {
        ss->failed |= n > 0;
        return;
    }
    for (i = 0; i < n; i++)
        p[i] = &a[i];
    qsort(p, n, sizeof(*p), top_cmp);
    for (i = 0; i < n && i < (size_t)tbm_report_opts(r)->top; i++) {
        char **row = sec_row(ss, s);
        cell(ss, row, 0, "%s", p[i]->name);
        cell(ss, row, 1, "%zu", i + 1);
        cell_hours(ss, row, 2, (double)p[i]->node_s);
        cell_hours(ss, row, 3, (double)p[i]->cpu_s);
        cell(ss, row, 4, "%llu", (unsigned long long)p[i]->jobs);
    }
    free(p);
}

static void build_timeline(sections_t *ss, tbm_report_t *r)
{
    size_t nb, nser, b, g;
    time_t bs;
    const char *const *names;
    const uint64_t *v;
    section_t *s;

    tbm_report_timeline(r, &nb, &bs, &nser, &names, &v);
    s = sec_new(ss, "timeline", "Node-hours over time", 1, "bucket_start", NULL);
    for (g = 0; g < nser; g++)
        sec_col(s, names[g]);
    for (b = 0; b < nb; b++) {
        char **row = sec_row(ss, s), when[32];
        time_t t = tbm_report_opts(r)->period.since + (time_t)b * bs;
        struct tm tm;
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M", localtime_r(&t, &tm));
        cell(ss, row, 0, "%s", when);
        for (g = 0; g < nser; g++)
            cell_hours(ss, row, 1 + g, (double)v[g * nb + b]);
    }
}

static void build(sections_t *ss, tbm_report_t *r, const tbm_rdim_t *dims, size_t n_dims)
{
    size_t i;

    for (i = 0; i < n_dims; i++)
        build_usage(ss, r, dims[i]);
    build_utilisation(ss, r);
    build_failures(ss, r);
    build_efficiency(ss, r, TBM_RDIM_USER);
    build_efficiency(ss, r, TBM_RDIM_GROUP);
    build_gpu(ss, r, TBM_RDIM_USER);
    build_gpu(ss, r, TBM_RDIM_GROUP);
    if (tbm_report_opts(r)->records_in_use)
        build_coverage(ss, r);
    build_top(ss, r, TBM_RDIM_USER, "top-users", "Top users by node-hours");
    build_top(ss, r, TBM_RDIM_ACCOUNT, "top-accounts", "Top accounts by node-hours");
    build_timeline(ss, r);
}

/* ---- table ---- */

/* The bytes of the printable character at s (a valid UTF-8 sequence that is no C0 or C1 control, nor DEL),
 * or 0. */
static size_t printable_len(const unsigned char *s)
{
    size_t n, k;
    unsigned cp;

    if (*s < 0x80)
        return *s >= 0x20 && *s != 0x7f;
    n = *s >= 0xf0 && *s <= 0xf4 ? 4 : *s >= 0xe0 ? 3 : *s >= 0xc2 && *s <= 0xdf ? 2 : 0;
    if (!n || (n == 3 && *s > 0xef))
        return 0;
    for (cp = *s & (0x7f >> n), k = 1; k < n; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[k] & 0x3f);
    }
    if ((n == 2 && cp < 0xa0) || (n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;   /* C1 controls, overlong forms, surrogates */
    return n;
}

/* Text for a terminal: every control character (ESC, newline, C1) and every byte that is not UTF-8 becomes
 * '?', in place (the text never grows). */
static void printable(char *s)
{
    const unsigned char *r = (const unsigned char *)s;
    char *w = s;
    size_t n;

    while (*r) {
        if ((n = printable_len(r))) {
            memmove(w, r, n);
            w += n, r += n;
        } else {
            *w++ = '?', r++;
        }
    }
    *w = '\0';
}

/* The table's text cells made printable (the numbers are the report's own). */
static void sections_printable(sections_t *ss)
{
    size_t i, k, c;

    for (i = 0; i < ss->n; i++)
        for (k = 0; k < ss->s[i].n_rows; k++)
            for (c = 0; c < ss->s[i].n_cols; c++)
                if (tbm_rsec_is_text(&ss->s[i], c) && ss->s[i].cells[k * ss->s[i].n_cols + c])
                    printable(ss->s[i].cells[k * ss->s[i].n_cols + c]);
}

static int is_hours(const char *col)
{
    size_t n = strlen(col);
    return n > 2 && !strcmp(col + n - 2, "_h");
}

static void write_table(tbm_strbuf_t *sb, const tbm_report_t *r, const sections_t *ss)
{
    char a[32], b[32], buf[64];
    const char *const *notes;
    size_t n_notes = tbm_report_notes(r, &notes), i, k, c;

    tbm_rsec_period_text(r, a, b, sizeof(a));
    tbm_sb_printf(sb, "Usage report, %s to %s (hours are node-, CPU-, GPU- and gres/tbmesh-hours; energy in "
                      "kWh)\n", a, b);
    for (i = 0; i < n_notes; i++) {
        char *note = strdup(notes[i]);
        if (note)
            printable(note);
        tbm_sb_printf(sb, "note: %s\n", note ? note : "?");
        free(note);
    }
    for (i = 0; i < ss->n; i++) {
        const section_t *s = &ss->s[i];
        size_t w[MAX_COLS];
        if (!strcmp(s->id, "timeline"))
            continue;
        for (c = 0; c < s->n_cols; c++) {
            w[c] = strlen(s->cols[c]);
            for (k = 0; k < s->n_rows; k++) {
                size_t l = is_hours(s->cols[c]) && *tbm_rsec_at(s, k, c) ? (size_t)snprintf(buf, sizeof(buf), "%.1f",
                           atof(tbm_rsec_at(s, k, c))) : strlen(*tbm_rsec_at(s, k, c) ? tbm_rsec_at(s, k, c) : "-");
                if (l > w[c])
                    w[c] = l;
            }
        }
        tbm_sb_printf(sb, "\n%s\n", s->title);
        for (c = 0; c < s->n_cols; c++)
            tbm_sb_printf(sb, tbm_rsec_is_text(s, c) ? "%-*s%s" : "%*s%s", c + 1 < s->n_cols || !tbm_rsec_is_text(s, c) ? (int)w[c] : 0,
                          s->cols[c], c + 1 < s->n_cols ? "  " : "\n");
        if (!s->n_rows)
            tbm_sb_printf(sb, "(none)\n");
        for (k = 0; k < s->n_rows; k++)
            for (c = 0; c < s->n_cols; c++) {
                const char *v = *tbm_rsec_at(s, k, c) ? tbm_rsec_at(s, k, c) : "-";
                if (is_hours(s->cols[c]) && *tbm_rsec_at(s, k, c)) {
                    snprintf(buf, sizeof(buf), "%.1f", atof(v));
                    v = buf;
                }
                tbm_sb_printf(sb, tbm_rsec_is_text(s, c) ? "%-*s%s" : "%*s%s", c + 1 < s->n_cols || !tbm_rsec_is_text(s, c) ? (int)w[c] : 0,
                              v, c + 1 < s->n_cols ? "  " : "\n");
            }
    }
}

/* ---- CSV ---- */

/* A text cell that a spreadsheet would take for a formula (=, +, -, @, or a tab or CR first) gets a single
 * quote before it, inside the CSV quoting; a lone "-" (the report's own "none") is no formula. */
static int formula_like(const char *v)
{
    return v[0] && strchr("=+-@\t\r", v[0]) && strcmp(v, "-") != 0;
}

static void csv_field(tbm_strbuf_t *sb, const char *v, int text)
{
    int neutralise = text && formula_like(v);

    if (!neutralise && !strpbrk(v, ",\"\n\r")) {
        tbm_sb_printf(sb, "%s", v);
        return;
    }
    tbm_sb_append(sb, neutralise ? "\"'" : "\"", neutralise ? 2 : 1);
    for (; *v; v++) {
        if (*v == '"')
            tbm_sb_append(sb, "\"", 1);
        tbm_sb_append(sb, v, 1);
    }
    tbm_sb_append(sb, "\"", 1);
}

static void write_csv(tbm_strbuf_t *sb, const sections_t *ss)
{
    size_t i, k, c;

    for (i = 0; i < ss->n; i++) {
        const section_t *s = &ss->s[i];
        if (i)
            tbm_sb_printf(sb, "\n");
        tbm_sb_printf(sb, "%s", s->id);
        for (c = 0; c < s->n_cols; c++) {
            tbm_sb_append(sb, ",", 1);
            csv_field(sb, s->cols[c], 1);
        }
        tbm_sb_printf(sb, "\n");
        for (k = 0; k < s->n_rows; k++) {
            tbm_sb_printf(sb, "%s", s->id);
            for (c = 0; c < s->n_cols; c++) {
                tbm_sb_append(sb, ",", 1);
                csv_field(sb, tbm_rsec_at(s, k, c), tbm_rsec_is_text(s, c));
            }
            tbm_sb_printf(sb, "\n");
        }
    }
}

/* ---- JSON ---- */

static json_object *json_rows(const section_t *s)
{
    json_object *arr = json_object_new_array();
    size_t k, c;

    for (k = 0; arr && k < s->n_rows; k++) {
        json_object *o = json_object_new_object();
        for (c = 0; o && c < s->n_cols; c++) {
            const char *v = tbm_rsec_at(s, k, c);
            json_object_object_add(o, s->cols[c], tbm_rsec_is_text(s, c) ? json_object_new_string(v) : !*v ? NULL
                                   : strchr(v, '.') ? json_object_new_double_s(atof(v), v)
                                   : json_object_new_int64(atoll(v)));
        }
        json_object_array_add(arr, o);
    }
    return arr;
}

static char *write_json(const tbm_report_t *r, const sections_t *ss)
{
    json_object *root = json_object_new_object(), *period = json_object_new_object(), *groups, *notes, *eff;
    const char *const *nt;
    size_t n_notes = tbm_report_notes(r, &nt), i;
    char a[32], b[32], *out;
    const section_t *s;

    tbm_rsec_period_text(r, a, b, sizeof(a));
    json_object_object_add(period, "since", json_object_new_string(a));
    json_object_object_add(period, "until", json_object_new_string(b));
    json_object_object_add(period, "since_epoch", json_object_new_int64(tbm_report_opts(r)->period.since));
    json_object_object_add(period, "until_epoch", json_object_new_int64(tbm_report_opts(r)->period.until));
    json_object_object_add(root, "period", period);
    notes = json_object_new_array();
    for (i = 0; i < n_notes; i++)
        json_object_array_add(notes, json_object_new_string(nt[i]));
    json_object_object_add(root, "notes", notes);
    json_object_object_add(root, "records_in_use", json_object_new_boolean(tbm_report_opts(r)->records_in_use));
    groups = json_object_new_object();
    for (i = 0; i < TBM_RDIM_N; i++) {
        char id[48];
        snprintf(id, sizeof(id), "usage-%s", tbm_rdim_name((tbm_rdim_t)i));
        if ((s = tbm_rsec_find(ss, id)))
            json_object_object_add(groups, tbm_rdim_name((tbm_rdim_t)i), json_rows(s));
    }
    json_object_object_add(root, "usage", groups);
    json_object_object_add(root, "utilisation", json_rows(tbm_rsec_find(ss, "utilisation")));
    json_object_object_add(root, "failures", json_rows(tbm_rsec_find(ss, "failures")));
    eff = json_object_new_object();
    json_object_object_add(eff, "user", json_rows(tbm_rsec_find(ss, "efficiency-user")));
    json_object_object_add(eff, "group", json_rows(tbm_rsec_find(ss, "efficiency-group")));
    json_object_object_add(root, "efficiency", eff);
    eff = json_object_new_object();
    json_object_object_add(eff, "user", json_rows(tbm_rsec_find(ss, "gpu-user")));
    json_object_object_add(eff, "group", json_rows(tbm_rsec_find(ss, "gpu-group")));
    json_object_object_add(root, "gpu", eff);
    json_object_object_add(root, "coverage", (s = tbm_rsec_find(ss, "coverage-user")) ? json_rows(s) : NULL);
    json_object_object_add(root, "top_users", json_rows(tbm_rsec_find(ss, "top-users")));
    json_object_object_add(root, "top_accounts", json_rows(tbm_rsec_find(ss, "top-accounts")));
    json_object_object_add(root, "timeline", json_rows(tbm_rsec_find(ss, "timeline")));
    out = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(root);
    if (out) {
        char *o2 = realloc(out, strlen(out) + 2);
        if (o2)
            strcat(o2, "\n");
        else
            free(out);
        out = o2;
    }
    return out;
}

char *tbm_report_write(tbm_report_t *r, tbm_rformat_t f, const tbm_rdim_t *dims, size_t n_dims)
{
    static const tbm_rdim_t all[TBM_RDIM_N] = { TBM_RDIM_KIND, TBM_RDIM_GROUP, TBM_RDIM_ACCOUNT, TBM_RDIM_USER,
                                                TBM_RDIM_PARTITION, TBM_RDIM_BACKEND, TBM_RDIM_STATE };
    sections_t ss = { NULL, 0, 0 };
    tbm_strbuf_t sb;
    char *out = NULL;

    build(&ss, r, f == TBM_RFMT_JSON ? all : dims, f == TBM_RFMT_JSON ? TBM_RDIM_N : n_dims);
    if (ss.failed) {
        sections_free(&ss);
        return NULL;
    }
    tbm_sb_init(&sb);
    switch (f) {
    case TBM_RFMT_TABLE: sections_printable(&ss); write_table(&sb, r, &ss); out = tbm_sb_take(&sb); break;
    case TBM_RFMT_CSV: write_csv(&sb, &ss); out = tbm_sb_take(&sb); break;
    case TBM_RFMT_JSON: out = write_json(r, &ss); break;
    case TBM_RFMT_HTML: tbm_rsec_write_html(&sb, r, &ss); out = tbm_sb_take(&sb); break;
    }
    tbm_sb_free(&sb);
    sections_free(&ss);
    return out;
}
