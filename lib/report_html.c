/* report_html.c: the usage report as one self-contained HTML page: its notes, inline SVG charts (usage over
 * time, utilisation, waiting times, failures, energy, coverage) and every section's table, with the cells every other
 * format shows; names from users escaped. Nothing is fetched when the page is viewed. */
#include "config.h"
#include "report_sections.h"
#include "report_svg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void html_table(tbm_strbuf_t *sb, const section_t *s)
{
    size_t k, c;

    tbm_sb_printf(sb, "<table id=\"%s\">\n<thead><tr>", s->id);
    for (c = 0; c < s->n_cols; c++) {
        tbm_sb_printf(sb, "<th>");
        tbm_html_text(sb, s->cols[c]);
        tbm_sb_printf(sb, "</th>");
    }
    tbm_sb_printf(sb, "</tr></thead>\n<tbody>\n");
    for (k = 0; k < s->n_rows; k++) {
        tbm_sb_printf(sb, "<tr>");
        for (c = 0; c < s->n_cols; c++) {
            tbm_sb_printf(sb, tbm_rsec_is_text(s, c) ? "<td>" : "<td class=\"n\">");
            tbm_html_text(sb, tbm_rsec_at(s, k, c));
            tbm_sb_printf(sb, "</td>");
        }
        tbm_sb_printf(sb, "</tr>\n");
    }
    tbm_sb_printf(sb, "</tbody></table>\n");
}

/* Column `col` of section s as chart values (rows without a value count as 0). */
static void column(const section_t *s, size_t label_col, size_t col, const char **labels, double *v, size_t max,
                   size_t *n)
{
    size_t k;

    for (k = 0, *n = 0; k < s->n_rows && *n < max; k++, (*n)++) {
        labels[*n] = tbm_rsec_at(s, k, label_col);
        v[*n] = atof(tbm_rsec_at(s, k, col));
    }
}

static size_t col_of(const section_t *s, const char *name)
{
    size_t c;

    for (c = 0; c < s->n_cols; c++)
        if (!strcmp(s->cols[c], name))
            return c;
    return 0;
}

#define CHART_MAX 64

/* A section: heading, chart, then its table (folded under "the numbers" when `fold`). */
static void chart_section(tbm_strbuf_t *sb, const char *h2, const char *chart_html, const section_t *table, int fold)
{
    tbm_sb_printf(sb, "<section>\n<h2>%s</h2>\n%s", h2, chart_html ? chart_html : "");
    if (table && fold)
        tbm_sb_printf(sb, "<details><summary>the numbers</summary>\n");
    if (table)
        html_table(sb, table);
    if (table && fold)
        tbm_sb_printf(sb, "</details>\n");
    tbm_sb_printf(sb, "</section>\n");
}

/* "minute", "5 minutes", "hour", "day", "week", "30 days" or "N s" (a long period's own size). */
static const char *bucket_name(time_t bs, char *other, size_t len)
{
    switch (bs) {
    case 60: return "minute";
    case 300: return "5 minutes";
    case 600: return "10 minutes";
    case 900: return "15 minutes";
    case 1800: return "30 minutes";
    case 3600: return "hour";
    case 86400: return "day";
    case 7 * 86400: return "week";
    case 30 * 86400: return "30 days";
    default: snprintf(other, len, "%lld s", (long long)bs); return other;
    }
}

static void html_charts(tbm_strbuf_t *sb, const tbm_report_t *r, const sections_t *ss)
{
    const char *labels[CHART_MAX], *lab2[CHART_MAX];
    double v[CHART_MAX], v2[CHART_MAX];
    size_t n, n2, c;
    const section_t *s;
    char *svg;

    /* usage over time: one line per series */
    s = tbm_rsec_find(ss, "timeline");
    {
        tbm_svg_series_t ser[CHART_MAX];
        size_t ns = s->n_cols - 1 < CHART_MAX ? s->n_cols - 1 : CHART_MAX, k;
        double *vals = calloc(ns * (s->n_rows ? s->n_rows : 1), sizeof(*vals));
        const char **x = calloc(s->n_rows ? s->n_rows : 1, sizeof(*x));
        for (c = 0; vals && x && c < ns; c++) {
            ser[c].name = s->cols[c + 1];
            ser[c].v = vals + c * s->n_rows;
            for (k = 0; k < s->n_rows; k++)
                ser[c].v[k] = atof(tbm_rsec_at(s, k, c + 1));
        }
        for (k = 0; x && k < s->n_rows; k++)
            x[k] = tbm_rsec_at(s, k, 0);
        size_t nb, nser;
        time_t bs;
        const char *const *names;
        const uint64_t *tv;
        char title[96], bname[32];

        tbm_report_timeline(r, &nb, &bs, &nser, &names, &tv);
        snprintf(title, sizeof(title), "Node-hours per %s, per Mac group and Linux", bucket_name(bs, bname, sizeof(bname)));
        svg = vals && x ? tbm_svg_lines("chart-timeline", title, x, s->n_rows, ser, ns, "node-hours") : NULL;
        chart_section(sb, "Usage over time", svg, s, 1);
        free(svg);
        free(vals);
        free(x);
    }
    s = tbm_rsec_find(ss, "utilisation");
    column(s, 0, col_of(s, "util_pct"), labels, v, CHART_MAX, &n);
    svg = tbm_svg_bars("chart-utilisation", "Allocated share of each Mac group's available node-hours", labels, v,
                       NULL, NULL, n, "%", 100);
    chart_section(sb, "Utilisation of the Mac groups", svg, s, 0);
    free(svg);

    s = tbm_rsec_find(ss, "usage-group");
    if (!s)
        s = tbm_rsec_find(ss, "usage-kind");
    if (s) {
        column(s, 0, col_of(s, "wait_median_s"), labels, v, CHART_MAX, &n);
        column(s, 0, col_of(s, "wait_p90_s"), lab2, v2, CHART_MAX, &n2);
        static const char *const legend[2] = { "median", "90th percentile" };
        svg = tbm_svg_bars("chart-wait", "Waiting time before start: median and 90th percentile", labels, v, v2,
                           legend, n, "s", 0);
        chart_section(sb, "Waiting times", svg, NULL, 0);
        free(svg);
    }
    s = tbm_rsec_find(ss, "failures");
    {
        char rl[CHART_MAX][160];
        column(s, 1, col_of(s, "count"), labels, v, CHART_MAX, &n);
        for (c = 0; c < n; c++) {
            snprintf(rl[c], sizeof(rl[c]), "%s: %s", tbm_rsec_at(s, c, 0), tbm_rsec_at(s, c, 1));
            labels[c] = rl[c];
        }
        svg = tbm_svg_bars("chart-failures", "Failed jobs and node drains, by reason", labels, v, NULL, NULL, n, "",
                           0);
        chart_section(sb, "Failures", svg, s, 0);
        free(svg);
    }
    if ((s = tbm_rsec_find(ss, "gpu-user"))) {
        size_t k, e = col_of(s, "energy_kwh");
        for (k = 0, n = 0; k < s->n_rows && n < CHART_MAX; k++)
            if (*tbm_rsec_at(s, k, e)) {   /* a user whose jobs reported none has no bar, not a bar of 0 */
                labels[n] = tbm_rsec_at(s, k, 0);
                v[n++] = atof(tbm_rsec_at(s, k, e));
            }
        svg = tbm_svg_bars("chart-energy", "Energy of each user's Mac jobs (kWh), from their records", labels, v,
                           NULL, NULL, n, "kWh", 0);
        chart_section(sb, "GPU and energy of Mac jobs", svg, s, 0);
        free(svg);
    }
    if ((s = tbm_rsec_find(ss, "coverage-user"))) {
        column(s, 0, col_of(s, "coverage_pct"), labels, v, CHART_MAX, &n);
        svg = tbm_svg_bars("chart-coverage", "Share of Mac jobs with a complete, verified record", labels, v, NULL,
                           NULL, n, "%", 100);
        chart_section(sb, "Reproducibility coverage", svg, s, 0);
        free(svg);
    } else {
        chart_section(sb, "Reproducibility coverage",
                      "<p class=\"note\" id=\"coverage-note\">records are not in use: no coverage to show</p>\n",
                      NULL, 0);
    }
    (void)r;
}

void tbm_rsec_write_html(tbm_strbuf_t *sb, const tbm_report_t *r, const sections_t *ss)
{
    char a[32], b[32];
    const char *const *notes;
    size_t n_notes = tbm_report_notes(r, &notes), i;

    tbm_rsec_period_text(r, a, b, sizeof(a));
    tbm_sb_printf(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                      "<title>Usage report %s to %s</title>\n<style>\n"
                      "body{font-family:sans-serif;margin:2em;color:#222;max-width:72em}\n"
                      "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}\n"
                      "table{border-collapse:collapse;font-size:.85em;margin:.8em 0}\n"
                      "th,td{padding:.2em .6em;border-bottom:1px solid #eee;text-align:left}\n"
                      "td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
                      ".note{color:#8a5a00}svg{display:block;margin:.5em 0}section{overflow-x:auto}td{white-space:nowrap}\n"
                      "summary{cursor:pointer;color:#555;font-size:.9em}\n"
                      "</style>\n</head>\n<body>\n<h1>Usage report</h1>\n<p>%s to %s. Hours are node-, CPU-, GPU- and "
                      "gres/tbmesh-hours within the period; energy in kWh; waiting times in seconds."
                      "</p>\n", a, b, a, b);
    for (i = 0; i < n_notes; i++) {
        tbm_sb_printf(sb, "<p class=\"note\">");
        tbm_html_text(sb, notes[i]);
        tbm_sb_printf(sb, "</p>\n");
    }
    html_charts(sb, r, ss);
    for (i = 0; i < ss->n; i++) {
        const section_t *s = &ss->s[i];
        if (!strcmp(s->id, "timeline") || !strcmp(s->id, "utilisation") || !strcmp(s->id, "failures") ||
            !strcmp(s->id, "coverage-user") || !strcmp(s->id, "gpu-user"))
            continue;
        tbm_sb_printf(sb, "<section>\n<h2>");
        tbm_html_text(sb, s->title);
        tbm_sb_printf(sb, "</h2>\n");
        html_table(sb, s);
        tbm_sb_printf(sb, "</section>\n");
    }
    tbm_sb_printf(sb, "</body>\n</html>\n");
}
