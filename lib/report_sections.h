/* report_sections.h: the usage report's sections, one set of formatted cells that every format writes
 * (report_write.c builds them and writes the table, CSV and JSON; report_html.c writes the HTML page). Inside
 * lib/ only. */
#ifndef TBM_REPORT_SECTIONS_H
#define TBM_REPORT_SECTIONS_H

#include "report.h"
#include "strbuf.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define MAX_COLS 32

typedef struct section {
    char id[48];                  /* "usage-account": the CSV's first field, the HTML table's id */
    char title[96];
    size_t n_cols;
    uint32_t text;                /* bit c: column c is text (names, remarks); the others numbers ("" = none) */
    const char *cols[MAX_COLS];
    char **cells;                 /* row-major */
    size_t n_rows, cap_rows;
} section_t;

typedef struct sections {
    section_t *s;
    size_t n;
    int failed;
} sections_t;

static inline int tbm_rsec_is_text(const section_t *s, size_t c) { return (s->text >> c) & 1u; }
static inline const char *tbm_rsec_at(const section_t *s, size_t row, size_t col) { return s->cells[row * s->n_cols + col]; }

/* The section with this id, or NULL. */
static inline const section_t *tbm_rsec_find(const sections_t *ss, const char *id)
{
    size_t i;

    for (i = 0; i < ss->n; i++)
        if (!strcmp(ss->s[i].id, id))
            return &ss->s[i];
    return NULL;
}

/* The period's ends as local ISO times, into a and b (len bytes each). */
static inline void tbm_rsec_period_text(const tbm_report_t *r, char *a, char *b, size_t len)
{
    struct tm tm;

    strftime(a, len, "%Y-%m-%dT%H:%M:%S", localtime_r(&tbm_report_opts(r)->period.since, &tm));
    strftime(b, len, "%Y-%m-%dT%H:%M:%S", localtime_r(&tbm_report_opts(r)->period.until, &tm));
}
/* The self-contained HTML page: notes, inline SVG charts, every section's table. */
void tbm_rsec_write_html(tbm_strbuf_t *sb, const tbm_report_t *r, const sections_t *ss);

#endif
