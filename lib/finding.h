/* finding.h: a list of findings: each says how bad, which hosts and ports, what is wrong and what to do.
 * Parsers and validators add findings instead of failing, so one bad input never hides the others. */
#ifndef TBM_FINDING_H
#define TBM_FINDING_H

#include <stddef.h>

typedef enum tbm_severity {
    TBM_SEV_INFO = 0,
    TBM_SEV_WARNING = 1,
    TBM_SEV_ERROR = 2,
} tbm_severity_t;

#define TBM_FINDING_CODE_MAX  40
#define TBM_FINDING_WHERE_MAX 160
#define TBM_FINDING_TEXT_MAX  512

typedef struct tbm_finding {
    tbm_severity_t severity;
    char code[TBM_FINDING_CODE_MAX];     /* stable id for tools and tests: "cable-one-sided" */
    char where[TBM_FINDING_WHERE_MAX];   /* hosts and ports: "mac01:en2 <-> mac02:en2", or "file:line" */
    char what[TBM_FINDING_TEXT_MAX];     /* what is wrong */
    char fix[TBM_FINDING_TEXT_MAX];      /* what to do about it */
} tbm_finding_t;

/* At most this many findings are kept; more are counted in `dropped`. */
#define TBM_FINDINGS_MAX 4096

typedef struct tbm_findings {
    tbm_finding_t *items;
    size_t n;
    size_t cap;
    size_t dropped;
} tbm_findings_t;

struct json_object;

void tbm_findings_init(tbm_findings_t *fs);
void tbm_findings_free(tbm_findings_t *fs);

/* The findings as a JSON array of {severity, code, where, what, fix} (json-c; the caller owns it). */
struct json_object *tbm_findings_json(const tbm_findings_t *fs);

/* Add one finding; `what` is printf-style. Returns 0, or -1 when it had to be dropped (full or no memory). */
int tbm_finding_add(tbm_findings_t *fs, tbm_severity_t sev, const char *code, const char *where,
                    const char *fix, const char *what_fmt, ...) __attribute__((format(printf, 6, 7)));

/* src into dst (len bytes with the NUL); what does not fit is cut at the end of the last whole word that does,
 * and marked " ..." (a text without spaces is cut where it must, between two UTF-8 characters). Used for every
 * text a finding keeps. */
void tbm_text_fit(char *dst, size_t len, const char *src);

/* The length of s's longest start of at most max bytes that does not end inside a UTF-8 character (for
 * "%.*s": a text cut inside one is no longer UTF-8, which a JSON document must be). */
size_t tbm_utf8_fit(const char *s, size_t max);

/* How many findings have at least this severity (dropped ones count as errors). */
size_t tbm_findings_count(const tbm_findings_t *fs, tbm_severity_t at_least);

/* The first finding with this code, or NULL. */
const tbm_finding_t *tbm_findings_find(const tbm_findings_t *fs, const char *code);

const char *tbm_severity_name(tbm_severity_t sev);

#endif
