/* record_settings.c: the record store's settings in tbmesh.conf (RecordDir=, RecordReaders=, Records=),
 * read apart from the rest of the file, and single keys of slurm.conf-style files (ClusterName=). */
#include "record.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Each non-comment line of text, trimmed, to fn; stops when fn returns non-zero. */
static int each_line(const char *text, size_t len, int (*fn)(const char *line, int no, void *arg), void *arg)
{
    char line[4096];
    size_t i = 0, e, n;
    int no = 0, rc;

    while (i < len) {
        for (e = i; e < len && text[e] != '\n'; e++)
            ;
        no++;
        n = e - i < sizeof(line) - 1 ? e - i : sizeof(line) - 1;
        memcpy(line, text + i, n);
        line[n] = '\0';
        if (strchr(line, '#'))
            *strchr(line, '#') = '\0';
        n = strlen(line);
        while (n > 0 && isspace((unsigned char)line[n - 1]))
            line[--n] = '\0';
        {
            char *p = line;
            while (isspace((unsigned char)*p))
                p++;
            if (*p && (rc = fn(p, no, arg)) != 0)
                return rc;
        }
        i = e + 1;
    }
    return 0;
}

typedef struct {
    const char *key;
    char *out;
    size_t len;
} find_t;

static int find_key(const char *line, int no, void *arg)
{
    find_t *f = arg;
    size_t k = strlen(f->key);

    (void)no;
    if (strncasecmp(line, f->key, k) != 0 || line[k] != '=' || strpbrk(line + k + 1, " \t"))
        return 0;
    if (strlen(line + k + 1) >= f->len)
        return 0;
    snprintf(f->out, f->len, "%s", line + k + 1);
    return 1;
}

int tbm_record_conf_value(const char *text, size_t len, const char *key, char *out, size_t out_len)
{
    find_t f = { key, out, out_len };

    return each_line(text, len, find_key, &f) == 1;
}

typedef struct {
    tbm_record_settings_t *s;
    const char *name;
    tbm_err_t *err;
} parse_t;

/* The store's keys, read at the start of a line only, each alone on it (tbm_conf_parse refuses them elsewhere). */
static const char *const store_keys[] = { "RecordDir=", "RecordReaders=", "Records=" };

/* A store key on this line other than at its start, or NULL. */
static const char *key_within(const char *line)
{
    size_t i, k;

    for (i = 1; line[i]; i++)
        if (line[i - 1] == ' ' || line[i - 1] == '\t')
            for (k = 0; k < sizeof(store_keys) / sizeof(store_keys[0]); k++)
                if (!strncasecmp(line + i, store_keys[k], strlen(store_keys[k])))
                    return store_keys[k];
    return NULL;
}

static int settle(const char *line, int no, void *arg)
{
    parse_t *p = arg;
    const char *v, *k;
    size_t i;

    for (i = 0; i < sizeof(store_keys) / sizeof(store_keys[0]); i++)
        if (!strncasecmp(line, store_keys[i], strlen(store_keys[i])) && (v = strpbrk(line, " \t")) && strchr(v, '='))
            return tbm_errprintf(p->err, "%s:%d: %.*s shares its line with other settings: put it on a line of its "
                                 "own", p->name, no, (int)strlen(store_keys[i]), store_keys[i]);
    if ((k = key_within(line)))
        return tbm_errprintf(p->err, "%s:%d: %s is not at the start of its line: put RecordDir=, RecordReaders= and "
                             "Records= each on a line of its own", p->name, no, k);
    if (!strncasecmp(line, "RecordDir=", 10)) {
        v = line + 10;
        if (v[0] != '/' || strstr(v, "/../") || !strcmp(v + strlen(v) - (strlen(v) >= 3 ? 3 : 0), "/..") ||
            strpbrk(v, " \t") || strlen(v) >= sizeof(p->s->dir) - 64)
            return tbm_errprintf(p->err, "%s:%d: RecordDir=%.100s is not an absolute folder path: give one, e.g. "
                                 "RecordDir=/shared/slurm/tbmesh-records", p->name, no, v);
        snprintf(p->s->dir, sizeof(p->s->dir), "%s", v);
        while (strlen(p->s->dir) > 1 && p->s->dir[strlen(p->s->dir) - 1] == '/')
            p->s->dir[strlen(p->s->dir) - 1] = '\0';
    } else if (!strncasecmp(line, "RecordReaders=", 14)) {
        v = line + 14;
        for (i = 0; v[i]; i++)
            if (!isalnum((unsigned char)v[i]) && !strchr("_.-", v[i]))
                break;
        if (!v[0] || v[i] || v[0] == '-' || i >= sizeof(p->s->readers))
            return tbm_errprintf(p->err, "%s:%d: RecordReaders=%.100s is not a Unix group name: name the group of "
                                 "the accounting operators, e.g. RecordReaders=slurm-acct", p->name, no, v);
        snprintf(p->s->readers, sizeof(p->s->readers), "%s", v);
    } else if (!strncasecmp(line, "Records=", 8)) {
        v = line + 8;
        if (!strcasecmp(v, "yes"))
            p->s->records = 1;
        else if (!strcasecmp(v, "no"))
            p->s->records = 0;
        else
            return tbm_errprintf(p->err, "%s:%d: Records=%.40s is neither yes nor no", p->name, no, v);
    }
    return 0;
}

int tbm_record_settings_parse(const char *text, size_t len, const char *name, tbm_record_settings_t *s,
                              tbm_err_t *err)
{
    parse_t p = { s, name ? name : "tbmesh.conf", err };

    return each_line(text, len, settle, &p) < 0 ? -1 : 0;
}
