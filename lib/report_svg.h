/* report_svg.h: the usage report's charts, drawn as inline SVG (no scripts, no fonts fetched): horizontal
 * bars (one or two series) and lines over time. Each returns a malloc'd <svg> element, NULL on no memory. */
#ifndef TBM_REPORT_SVG_H
#define TBM_REPORT_SVG_H

#include <stddef.h>

#include "strbuf.h"

typedef struct tbm_svg_series {
    const char *name;
    double *v;                    /* one value per x */
} tbm_svg_series_t;

/* Bars for labels[i] with value v[i] (and v2[i] beside it when v2 is not NULL: drawn lighter, with a legend
 * naming the two series from legend[0] and legend[1]), the value written at the end of each bar followed by
 * `unit`; the scale runs to `max` (0: the largest value). */
char *tbm_svg_bars(const char *id, const char *title, const char *const *labels, const double *v,
                   const double *v2, const char *const *legend, size_t n, const char *unit, double max);

/* One line per series over nx points labelled x[i]; a legend names the series. */
char *tbm_svg_lines(const char *id, const char *title, const char *const *x, size_t nx,
                    const tbm_svg_series_t *series, size_t ns, const char *unit);

/* Append text with <, >, &, " and ' escaped for HTML and SVG (in text and in quoted attributes). */
void tbm_html_text(tbm_strbuf_t *sb, const char *v);

#endif
