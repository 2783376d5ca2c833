/* conf_tokens.c: the lowest layer of the tbmesh.conf parser: errors reported with file:line, a line split
 * into Key=Value tokens, and tokens applied through the table of keys of their kind of line. */
#include "conf_parser.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Report an error of the file at `line`; returns -1. */
int tbm_conf_bad_at(conf_parser_t *p, int line, const char *code, const char *fix, const char *fmt, ...)
{
    char where[TBM_FINDING_WHERE_MAX], what[TBM_FINDING_TEXT_MAX];
    va_list ap;

    snprintf(where, sizeof(where), "%.120s:%d", p->file, line);
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    tbm_finding_add(p->errors, TBM_SEV_ERROR, code, where, fix, "%s", what);
    p->n_errors++;
    return -1;
}

void tbm_conf_key_names(const conf_key_t *keys, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (; keys->name && used < len; keys++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", keys->name);
}

/* Apply every token of a line through its table of keys. */
void tbm_conf_apply_keys(conf_parser_t *p, const conf_key_t *keys, const char *kind, conf_token_t *tok, size_t n)
{
    unsigned seen = 0;
    size_t i;
    int k;

    for (i = 0; i < n; i++) {
        for (k = 0; keys[k].name && strcasecmp(keys[k].name, tok[i].key) != 0; k++)
            ;
        if (!keys[k].name) {
            char list[400], fix[440];
            tbm_conf_key_names(keys, list, sizeof(list));
            snprintf(fix, sizeof(fix), "known keys there: %s", list);
            BAD(p, fix, "unknown key '%.40s' on a %s line", tok[i].key, kind);
            continue;
        }
        if (seen & (1u << k)) {
            BAD(p, "keep one of them", "%s= is given twice on this line", keys[k].name);
            continue;
        }
        seen |= 1u << k;
        keys[k].set(p, keys[k].name, tok[i].val);
    }
}

/* The Key=Value words of s, separated by blanks. */
static int tokenize(conf_parser_t *p, char *s, conf_token_t *tok, size_t *n)
{
    char *save = NULL, *w, *bare = NULL, fix[120];

    *n = 0;
    for (w = strtok_r(s, " \t\r\f\v", &save); w; w = strtok_r(NULL, " \t\r\f\v", &save)) {
        char *eq = strchr(w, '=');
        if (bare && !eq) {   /* "AgentPort= 80": the value is the next word */
            snprintf(fix, sizeof(fix), "write %.40s=%.40s", bare, w);
            return BAD(p, fix, "%.40s= has a space after '='", bare);
        }
        if (bare)
            break;
        if (*n == TBM_CONF_MAX_TOKENS)
            return BAD(p, "split the line", "more than %d settings on one line", TBM_CONF_MAX_TOKENS);
        if (!eq || eq == w)
            return BAD(p, "write settings as Key=Value separated by spaces", "'%.40s' is not Key=Value", w);
        *eq = '\0';
        if (!eq[1]) {
            bare = w;
            continue;
        }
        tok[*n].key = w;
        tok[(*n)++].val = eq + 1;
    }
    if (bare)
        return BAD(p, "give it a value or remove it", "%.40s= has no value", bare);
    return 0;
}

int tbm_conf_is_key(const conf_key_t *keys, const char *key)
{
    for (; keys->name; keys++)
        if (strcasecmp(keys->name, key) == 0)
            return 1;
    return 0;
}

int tbm_conf_tokenize_line(conf_parser_t *p, const char *s, size_t len, char *buf, conf_token_t *tok, size_t *n)
{
    char *hash;

    *n = 0;
    if (len > TBM_CONF_LINE_MAX)
        return BAD(p, "split it: one Group, NodeName or Cable per line", "the line is longer than %d bytes",
                   TBM_CONF_LINE_MAX);
    if (memchr(s, '\0', len))
        return BAD(p, "save the file as plain text", "the line holds a NUL byte");
    memcpy(buf, s, len);
    buf[len] = '\0';
    hash = strchr(buf, '#');
    if (hash)
        *hash = '\0';
    return tokenize(p, buf, tok, n);
}
