/* parse_text.h: what every parser of command output shares: the checks of a raw buffer (size, UTF-8), a line
 * reader over a buffer that is not NUL-terminated, bounded copies, and findings that say where they came from. */
#ifndef TBM_PARSE_TEXT_H
#define TBM_PARSE_TEXT_H

#include <stddef.h>

#include "finding.h"

/* The largest command output a parser reads (system_profiler of a loaded host is far below 1 MiB). */
#define TBM_RAW_MAX (4u * 1024u * 1024u)

/* Length of the valid UTF-8 sequence starting at s (at most n bytes); 0 when it is not one, or a NUL. */
size_t tbm_utf8_seq(const unsigned char *s, size_t n);

/* At most this many line-level findings per output; the rest are summed up in one last finding. */
#define TBM_NOTES_MAX 8

/* A piece of a line. */
typedef struct tbm_span {
    const char *p;
    size_t n;
} tbm_span_t;

/* One parser run over one output: where its findings go and what they name. */
typedef struct tbm_parse_ctx {
    tbm_findings_t *fs;
    const char *source;   /* the command, "ifconfig", used in every finding's `where` */
    int notes;            /* line-level findings so far */
    tbm_severity_t hidden;   /* the worst of those not shown */
} tbm_parse_ctx_t;

void tbm_parse_begin(tbm_parse_ctx_t *ctx, tbm_findings_t *fs, const char *source);

/* Add a finding about line `lineno` (0: the output as a whole). Line-level ones (lineno > 0) beyond
 * TBM_NOTES_MAX are only counted; tbm_parse_end() reports how many were left out, with the severity of
 * the worst of them. */
void tbm_note(tbm_parse_ctx_t *ctx, tbm_severity_t sev, const char *code, int lineno, const char *fix,
              const char *fmt, ...) __attribute__((format(printf, 6, 7)));

void tbm_parse_end(tbm_parse_ctx_t *ctx);

/* Check a raw output before parsing it: present, not empty (unless allow_empty), at most TBM_RAW_MAX,
 * valid UTF-8 without NUL bytes. Adds an error finding and returns -1 when it cannot be parsed. */
int tbm_raw_usable(tbm_parse_ctx_t *ctx, const char *data, size_t len, int allow_empty);

/* Offset of the first byte that is not valid UTF-8 (or a NUL), or len when all of it is valid. */
size_t tbm_utf8_check(const char *data, size_t len);

tbm_span_t tbm_span_trim(const char *p, size_t n);              /* without blanks at both ends */
int tbm_span_eq(tbm_span_t s, const char *lit);                 /* equal to the C string */
int tbm_span_starts(tbm_span_t s, const char *lit);             /* begins with the C string */
tbm_span_t tbm_span_after(tbm_span_t s, size_t k);              /* without its first k bytes, trimmed */
tbm_span_t tbm_span_word(tbm_span_t *rest);                     /* next blank-separated word; rest moves past it */
size_t tbm_span_spn(const char *p, size_t n, const char *set);   /* strspn over p[0..n), which needs no NUL */

/* "Key: Value" (the separator is the first ':'); both sides trimmed. Returns 0, or -1 when no ':'. */
int tbm_span_keyval(tbm_span_t line, tbm_span_t *key, tbm_span_t *val);

/* One line handed to a line parser. */
typedef struct tbm_line {
    tbm_span_t text;      /* without blanks at both ends; empty for a blank line */
    int indented;         /* the line began with a blank */
    int lineno;           /* from 1 */
} tbm_line_t;

/* A line parser: returns 0 to go on, 1 to stop reading (what follows is a trailer to skip). */
typedef int (*tbm_line_fn)(tbm_parse_ctx_t *ctx, const tbm_line_t *line, void *state);

/* tbm_raw_usable(), then fn for every line, blank ones included. Returns -1 when the output is unusable,
 * else the number of lines read. */
int tbm_parse_lines(tbm_parse_ctx_t *ctx, const char *text, size_t len, int allow_empty, tbm_line_fn fn,
                    void *state);

/* How many bytes of p[0..n) to show in a message: at most max, cut at a UTF-8 character boundary. */
int tbm_show_len(const char *p, size_t n, size_t max);

/* printf arguments for "%.*s" showing at most 40 bytes of a span or of a C string in a message. */
#define TBM_SPAN_SHOW(s) tbm_show_len((s).p, (s).n, 40), (s).p
#define TBM_STR_SHOW(str) tbm_show_len((str), strlen(str), 40), (str)

/* Copy a span into a fixed field. Returns 0, or -1 (dst left "") when it does not fit. */
int tbm_span_copy(char *dst, size_t size, tbm_span_t s);

/* Decimal integer in [min, max], the whole span. Returns 0 or -1. */
int tbm_span_long(tbm_span_t s, long long min, long long max, long long *out);

#endif
