/* report_svg.c: inline SVG charts of the usage report: bars and lines, sized from the data, text in the
 * page's own font, nothing fetched. */
#include "config.h"
#include "report_svg.h"

#include <stdio.h>

#define WIDTH 760
#define LABEL_W 240
#define BAR_H 18
#define GAP 8

static const char *const palette[] = { "#3b6fb6", "#e08a2c", "#4a9a5b", "#b84a4a", "#7b5fb0", "#8a6d3b",
                                       "#c25a9a", "#5f8f8f" };
#define N_COLORS (sizeof(palette) / sizeof(palette[0]))

void tbm_html_text(tbm_strbuf_t *sb, const char *v)
{
    for (; *v; v++) {
        switch (*v) {
        case '<': tbm_sb_printf(sb, "&lt;"); break;
        case '>': tbm_sb_printf(sb, "&gt;"); break;
        case '&': tbm_sb_printf(sb, "&amp;"); break;
        case '"': tbm_sb_printf(sb, "&quot;"); break;
        case '\'': tbm_sb_printf(sb, "&#39;"); break;
        default: tbm_sb_append(sb, v, 1);
        }
    }
}

static void open_svg(tbm_strbuf_t *sb, const char *id, const char *title, int height)
{
    tbm_sb_printf(sb, "<svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                      "viewBox=\"0 0 %d %d\" role=\"img\" font-family=\"sans-serif\" font-size=\"12\">\n<title>",
                  id, WIDTH, height, WIDTH, height);
    tbm_html_text(sb, title);
    tbm_sb_printf(sb, "</title>\n");
}

char *tbm_svg_bars(const char *id, const char *title, const char *const *labels, const double *v,
                   const double *v2, const char *const *legend, size_t n, const char *unit, double max)
{
    tbm_strbuf_t sb;
    int per = v2 ? 2 * BAR_H + GAP : BAR_H + GAP, top = v2 && legend ? BAR_H + GAP : 0;
    int height = top + (int)n * per + 2 * GAP + (n ? 0 : BAR_H);
    double span = WIDTH - LABEL_W - 90;
    size_t i;

    for (i = 0; !max && i < n; i++) {
        if (v[i] > max)
            max = v[i];
        if (v2 && v2[i] > max)
            max = v2[i];
    }
    if (max <= 0)
        max = 1;
    tbm_sb_init(&sb);
    open_svg(&sb, id, title, height);
    if (!n)
        tbm_sb_printf(&sb, "<text x=\"0\" y=\"%d\">nothing in this period</text>\n", BAR_H);
    if (top) {
        int k;
        for (k = 0; k < 2; k++) {
            tbm_sb_printf(&sb, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" "
                               "y=\"%d\">", LABEL_W + 160 * k, GAP, k ? "#9db7dc" : palette[0], LABEL_W + 160 * k + 18,
                          GAP + 11);
            tbm_html_text(&sb, legend[k]);
            tbm_sb_printf(&sb, "</text>\n");
        }
    }
    for (i = 0; i < n; i++) {
        int y = top + GAP + (int)i * per, k;
        tbm_sb_printf(&sb, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LABEL_W - 6, y + BAR_H - 5);
        tbm_html_text(&sb, labels[i]);
        tbm_sb_printf(&sb, "</text>\n");
        for (k = 0; k < (v2 ? 2 : 1); k++) {
            double x = k ? v2[i] : v[i], w = x > 0 ? span * (x > max ? 1 : x / max) : 0;
            tbm_sb_printf(&sb, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>"
                               "<text x=\"%.1f\" y=\"%d\">%g%s</text>\n",
                          LABEL_W, y + k * BAR_H, w, BAR_H - 2, k ? "#9db7dc" : palette[0], LABEL_W + w + 4,
                          y + k * BAR_H + BAR_H - 5, x, unit);
        }
    }
    tbm_sb_printf(&sb, "</svg>\n");
    return tbm_sb_take(&sb);
}

/* The axis's top: the smallest 1, 2 or 5 times a power of ten at or above max, so that its ticks are round. */
static double nice_top(double max)
{
    double p = 1;

    while (p * 10 <= max)
        p *= 10;
    while (p > max && p > 1e-300)
        p /= 10;
    if (p > max)   /* a value too small for a power of ten: its own top */
        return max;
    return max <= p ? p : max <= 2 * p ? 2 * p : max <= 5 * p ? 5 * p : 10 * p;
}

char *tbm_svg_lines(const char *id, const char *title, const char *const *x, size_t nx,
                    const tbm_svg_series_t *series, size_t ns, const char *unit)
{
    const int left = 70, top = 10, plot_w = WIDTH - left - 20, plot_h = 220, legend = 20 * (int)ns;
    tbm_strbuf_t sb;
    double max = 0;
    size_t s, i;
    int k;

    for (s = 0; s < ns; s++)
        for (i = 0; i < nx; i++)
            if (series[s].v[i] > max)
                max = series[s].v[i];
    tbm_sb_init(&sb);
    open_svg(&sb, id, title, top + plot_h + 40 + legend);
    tbm_sb_printf(&sb, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n"
                       "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n"
                       "<text x=\"%d\" y=\"%d\" transform=\"rotate(-90 %d %d)\" text-anchor=\"middle\">%s</text>\n",
                  left, top, left, top + plot_h, left, top + plot_h, left + plot_w, top + plot_h, 16, top + plot_h / 2,
                  16, top + plot_h / 2, unit);
    if (nx) {
        tbm_sb_printf(&sb, "<text x=\"%d\" y=\"%d\">", left, top + plot_h + 16);
        tbm_html_text(&sb, x[0]);
        tbm_sb_printf(&sb, "</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left + plot_w, top + plot_h + 16);
        tbm_html_text(&sb, x[nx - 1]);
        tbm_sb_printf(&sb, "</text>\n");
    }
    if (max <= 0) {   /* nothing to draw: said in words, not as flat lines on an axis from 0 to 0 */
        tbm_sb_printf(&sb, "<text class=\"empty\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">no use in this "
                           "period</text>\n</svg>\n", left + plot_w / 2, top + plot_h / 2);
        return tbm_sb_take(&sb);
    }
    max = nice_top(max);
    for (k = 0; k <= 4; k++) {   /* five ticks with their values: 0, a quarter of the top, ..., the top */
        int y = top + plot_h - plot_h * k / 4;
        tbm_sb_printf(&sb, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>"
                           "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%.3g</text>\n",
                      left + 1, y, left + plot_w, y, left - 4, y + 4, max * k / 4);
    }
    for (s = 0; s < ns; s++) {
        const char *color = palette[s % N_COLORS];
        tbm_sb_printf(&sb, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
        for (i = 0; i < nx; i++)
            tbm_sb_printf(&sb, "%s%.1f,%.1f", i ? " " : "",
                          left + (nx > 1 ? (double)plot_w * (double)i / (double)(nx - 1) : plot_w / 2.0),
                          top + plot_h - plot_h * series[s].v[i] / max);
        tbm_sb_printf(&sb, "\"/>\n");
        if (nx == 1)   /* one bucket: a point, which a line of one vertex does not draw */
            tbm_sb_printf(&sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", left + plot_w / 2.0,
                          top + plot_h - plot_h * series[s].v[0] / max, color);
        tbm_sb_printf(&sb, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" "
                           "y=\"%d\">", left, top + plot_h + 28 + 20 * (int)s, color, left + 18,
                      top + plot_h + 38 + 20 * (int)s);
        tbm_html_text(&sb, series[s].name);
        tbm_sb_printf(&sb, "</text>\n");
    }
    tbm_sb_printf(&sb, "</svg>\n");
    return tbm_sb_take(&sb);
}
