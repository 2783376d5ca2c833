/* strbuf.h: a growing text buffer for the writers of lib/ (tbmesh.conf, slurm.conf lines, DOT).
 * Out of memory is sticky: later appends do nothing and tbm_sb_take() returns NULL. */
#ifndef TBM_STRBUF_H
#define TBM_STRBUF_H

#include <stddef.h>

typedef struct tbm_strbuf {
    char *s;
    size_t len;
    size_t cap;
    int failed;
} tbm_strbuf_t;

void tbm_sb_init(tbm_strbuf_t *sb);
void tbm_sb_free(tbm_strbuf_t *sb);

/* Append printf-style text. */
void tbm_sb_printf(tbm_strbuf_t *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append `n` bytes. */
void tbm_sb_append(tbm_strbuf_t *sb, const char *s, size_t n);

/* Hand over the malloc'd string ("" when empty), NULL when memory ran out; the buffer is emptied. */
char *tbm_sb_take(tbm_strbuf_t *sb);

#endif
