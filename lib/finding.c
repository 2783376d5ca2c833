/* finding.c: the bounded list of findings shared by parsers and validators (see finding.h). */
#include "config.h"
#include "finding.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tbm_findings_init(tbm_findings_t *fs)
{
    memset(fs, 0, sizeof(*fs));
}

void tbm_findings_free(tbm_findings_t *fs)
{
    free(fs->items);
    memset(fs, 0, sizeof(*fs));
}

static int grow(tbm_findings_t *fs)
{
    size_t cap = fs->cap ? fs->cap * 2 : 16;
    tbm_finding_t *items;

    if (cap > TBM_FINDINGS_MAX)
        cap = TBM_FINDINGS_MAX;
    if (cap <= fs->cap)
        return -1;
    items = realloc(fs->items, cap * sizeof(*items));
    if (!items)
        return -1;
    fs->items = items;
    fs->cap = cap;
    return 0;
}

size_t tbm_utf8_fit(const char *s, size_t max)
{
    size_t n = strlen(s);

    if (n <= max)
        return n;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)   /* s[max] continues a character */
        max--;
    return max;
}

void tbm_text_fit(char *dst, size_t len, const char *src)
{
    static const char more[] = " ...";
    size_t n = strlen(src), cut, k;

    if (!len)
        return;
    if (n < len) {
        memcpy(dst, src, n + 1);
        return;
    }
    if (len <= sizeof(more)) {   /* no room for the mark: as much as fits */
        cut = tbm_utf8_fit(src, len - 1);
        memcpy(dst, src, cut);
        dst[cut] = '\0';
        return;
    }
    cut = len - sizeof(more);   /* room for the mark and the NUL */
    for (k = cut; k > cut / 2 && src[k] != ' '; k--)
        ;
    if (src[k] == ' ')           /* at the last word's end that fits, not inside a word */
        cut = k;
    cut = tbm_utf8_fit(src, cut);   /* not inside a character either */
    while (cut > 0 && strchr(" ,;:", src[cut - 1]))
        cut--;
    memcpy(dst, src, cut);
    memcpy(dst + cut, more, sizeof(more));
}

/* Control bytes (newline, tab, ESC, DEL ...) echoed from an input become '?', in place: a finding is one line of
 * printable text wherever it goes (a terminal, a log, the facts document's "unknown" reasons). */
static void printable(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

int tbm_finding_add(tbm_findings_t *fs, tbm_severity_t sev, const char *code, const char *where,
                    const char *fix, const char *what_fmt, ...)
{
    tbm_finding_t *f;
    char *what = NULL;
    va_list ap;

    if (fs->n == fs->cap && grow(fs) < 0) {
        fs->dropped++;
        return -1;
    }
    f = &fs->items[fs->n++];
    memset(f, 0, sizeof(*f));
    f->severity = sev;
    snprintf(f->code, sizeof(f->code), "%s", code ? code : "");
    tbm_text_fit(f->where, sizeof(f->where), where ? where : "");
    tbm_text_fit(f->fix, sizeof(f->fix), fix ? fix : "");
    va_start(ap, what_fmt);
    if (vasprintf(&what, what_fmt, ap) < 0)
        what = NULL;
    va_end(ap);
    tbm_text_fit(f->what, sizeof(f->what), what ? what : "(no memory for the text)");
    free(what);
    printable(f->where);
    printable(f->what);
    printable(f->fix);
    return 0;
}

size_t tbm_findings_count(const tbm_findings_t *fs, tbm_severity_t at_least)
{
    size_t i, n = 0;

    for (i = 0; i < fs->n; i++)
        if (fs->items[i].severity >= at_least)
            n++;
    return n + fs->dropped;
}

const tbm_finding_t *tbm_findings_find(const tbm_findings_t *fs, const char *code)
{
    size_t i;

    for (i = 0; i < fs->n; i++)
        if (strcmp(fs->items[i].code, code) == 0)
            return &fs->items[i];
    return NULL;
}

const char *tbm_severity_name(tbm_severity_t sev)
{
    switch (sev) {
    case TBM_SEV_INFO:    return "info";
    case TBM_SEV_WARNING: return "warning";
    case TBM_SEV_ERROR:   return "error";
    }
    return "unknown";
}

json_object *tbm_findings_json(const tbm_findings_t *fs)
{
    json_object *arr = json_object_new_array(), *o;
    size_t i;

    for (i = 0; i < fs->n; i++) {
        const tbm_finding_t *f = &fs->items[i];
        o = json_object_new_object();
        json_object_object_add(o, "severity", json_object_new_string(tbm_severity_name(f->severity)));
        json_object_object_add(o, "code", json_object_new_string(f->code));
        json_object_object_add(o, "where", json_object_new_string(f->where));
        json_object_object_add(o, "what", json_object_new_string(f->what));
        json_object_object_add(o, "fix", json_object_new_string(f->fix));
        json_object_array_add(arr, o);
    }
    return arr;
}
