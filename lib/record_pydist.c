/* record_pydist.c: a Python distribution's name and version from its dist-info METADATA (the core metadata
 * header: "Name: mlx" and "Version: 0.31.2" before the first empty line), never by running pip. */
#include "record.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* The value of header `key` (case-insensitive) in the header block, trimmed, into out. 1 found, 0 not. */
static int header(const char *text, size_t len, const char *key, char *out, size_t out_len)
{
    size_t i = 0, k = strlen(key), e, vs;

    while (i < len) {
        e = i;
        while (e < len && text[e] != '\n')
            e++;
        if (e == i || (e == i + 1 && text[i] == '\r'))
            return 0;   /* end of the header block */
        if (e - i > k && !strncasecmp(text + i, key, k) && text[i + k] == ':') {
            vs = i + k + 1;
            while (vs < e && (text[vs] == ' ' || text[vs] == '\t'))
                vs++;
            while (e > vs && isspace((unsigned char)text[e - 1]))
                e--;
            if (e - vs == 0 || e - vs >= out_len)
                return 0;
            memcpy(out, text + vs, e - vs);
            out[e - vs] = '\0';
            return 1;
        }
        i = e + 1;
    }
    return 0;
}

static int printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 0;
    return 1;
}

int tbm_pydist_metadata(const char *text, size_t len, char *name, size_t name_len, char *version,
                        size_t version_len, tbm_err_t *err)
{
    if (!text || memchr(text, '\0', len))
        return tbm_errprintf(err, "METADATA is not text");
    if (!header(text, len, "Name", name, name_len) || !printable(name))
        return tbm_errprintf(err, "METADATA has no usable Name: header (a broken install? reinstall it)");
    if (!header(text, len, "Version", version, version_len) || !printable(version))
        return tbm_errprintf(err, "METADATA of %s has no usable Version: header (reinstall it)", name);
    return 0;
}

void tbm_pydist_normalize(char *name)
{
    char *w = name, *r = name;
    int sep = 0;

    for (; *r; r++) {
        if (*r == '-' || *r == '_' || *r == '.') {
            sep = 1;
            continue;
        }
        if (sep && w != name)
            *w++ = '-';
        sep = 0;
        *w++ = (char)tolower((unsigned char)*r);
    }
    *w = '\0';
}
