/* strbuf.c: the growing text buffer of lib/ writers (see strbuf.h). */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tbm_sb_init(tbm_strbuf_t *sb)
{
    memset(sb, 0, sizeof(*sb));
}

void tbm_sb_free(tbm_strbuf_t *sb)
{
    free(sb->s);
    memset(sb, 0, sizeof(*sb));
}

static int reserve(tbm_strbuf_t *sb, size_t more)
{
    size_t cap = sb->cap ? sb->cap : 256;
    char *s;

    if (sb->failed)
        return -1;
    if (more > ((size_t)-1) / 4 - sb->len) {
        sb->failed = 1;
        return -1;
    }
    while (cap < sb->len + more + 1)
        cap *= 2;
    if (cap == sb->cap)
        return 0;
    s = realloc(sb->s, cap);
    if (!s) {
        sb->failed = 1;
        return -1;
    }
    sb->s = s;
    sb->cap = cap;
    return 0;
}

void tbm_sb_append(tbm_strbuf_t *sb, const char *s, size_t n)
{
    if (reserve(sb, n) < 0)
        return;
    memcpy(sb->s + sb->len, s, n);
    sb->len += n;
    sb->s[sb->len] = '\0';
}

void tbm_sb_printf(tbm_strbuf_t *sb, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || reserve(sb, (size_t)n) < 0) {
        sb->failed = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(sb->s + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

char *tbm_sb_take(tbm_strbuf_t *sb)
{
    char *s;

    if (sb->failed) {
        tbm_sb_free(sb);
        return NULL;
    }
    s = sb->s ? sb->s : strdup("");
    memset(sb, 0, sizeof(*sb));
    return s;
}
