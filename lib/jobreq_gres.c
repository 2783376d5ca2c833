/* jobreq_gres.c: the tbmesh entry of a job's tres_per_node ("gres:tbmesh[:GROUP][:N]" among the others):
 * reading it, strictly, and rewriting it to one unit per node (see jobreq.h). */
#include "jobreq.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "strbuf.h"
#include "scalar.h"

#define GRES_NAME "tbmesh"

static int all_digits(const char *s, size_t n)
{
    size_t i;

    if (n == 0)
        return 0;
    for (i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

/* One entry "gres:tbmesh[:type][:count]" (the "gres:" or "gres/" prefix already stripped to `p`). */
static int parse_entry(const char *entry, size_t n, char *group, size_t group_len, long long *count,
                       tbm_err_t *err)
{
    const char *f[3];
    size_t len[3], k = 0, i, start = 0;

    for (i = 0; i <= n && k < 3; i++) {
        if (i == n || entry[i] == ':') {
            f[k] = entry + start;
            len[k++] = i - start;
            start = i + 1;
        }
    }
    if (i <= n || (k >= 2 && len[k - 1] == 0))
        return tbm_errprintf(err, "cannot read --gres '%.*s': use --gres=tbmesh:N (N Macs cabled to each other) "
                             "or --gres=tbmesh:GROUP:N", (int)n, entry);
    group[0] = '\0';
    *count = 1;
    if (k == 1)
        return 0;
    if (k == 3 || !all_digits(f[1], len[1])) {
        if (len[1] == 0 || len[1] >= group_len)
            return tbm_errprintf(err, "cannot read --gres '%.*s': use --gres=tbmesh:N or --gres=tbmesh:GROUP:N",
                                 (int)n, entry);
        memcpy(group, f[1], len[1]);
        group[len[1]] = '\0';
        if (k == 2)
            return 0;
    }
    i = k - 1;
    if (len[i] > 9 || tbm_parse_ll_span(f[i], len[i], 10, 0, 999999999, count) < 0)
        return tbm_errprintf(err, "--gres=%.*s: '%.*s' is not a number of Macs: use --gres=tbmesh:N with N a "
                             "whole number, e.g. --gres=tbmesh:4", (int)n, entry, (int)len[i], f[i]);
    if (*count == 0)
        return tbm_errprintf(err, "--gres=%.*s asks for no Mac: ask for 1 or more, e.g. --gres=tbmesh:4", (int)n,
                             entry);
    return 0;
}

/* Walk the entries of tres_per_node; `fn` sees each with its prefix length. */
typedef int (*entry_fn)(const char *entry, size_t n, size_t prefix, void *arg);

static int each_entry(const char *tres, entry_fn fn, void *arg)
{
    const char *p = tres, *entry;
    size_t n, prefix;
    int rc;

    while ((entry = tbm_list_next(&p, ",;", &n)) != NULL) {
        prefix = (n > 5 && (!strncmp(entry, "gres:", 5) || !strncmp(entry, "gres/", 5))) ? 5 : 0;
        if ((rc = fn(entry, n, prefix, arg)) != 0)
            return rc;
    }
    return 0;
}

static int is_tbmesh(const char *entry, size_t n, size_t prefix)
{
    size_t len = strlen(GRES_NAME);

    return prefix && n - prefix >= len && !strncmp(entry + prefix, GRES_NAME, len) &&
           (n - prefix == len || entry[prefix + len] == ':');
}

typedef struct find_ctx {
    char *group;
    size_t group_len;
    long long *count;
    tbm_err_t *err;
    int found;
} find_ctx_t;

static int find_entry(const char *entry, size_t n, size_t prefix, void *arg)
{
    find_ctx_t *c = arg;

    if (!is_tbmesh(entry, n, prefix))
        return 0;
    if (c->found)
        return tbm_errprintf(c->err, "--gres names tbmesh twice: ask once, --gres=tbmesh:N");
    c->found = 1;
    return parse_entry(entry + prefix, n - prefix, c->group, c->group_len, c->count, c->err) < 0 ? -1 : 0;
}

int tbm_gres_tbmesh(const char *tres_per_node, char *group, size_t group_len, long long *count, tbm_err_t *err)
{
    find_ctx_t c = { group, group_len, count, err, 0 };

    if (each_entry(tres_per_node, find_entry, &c) < 0)
        return -1;
    return c.found;
}

static int rewrite_entry(const char *entry, size_t n, size_t prefix, void *arg)
{
    tbm_strbuf_t *sb = arg;

    if (sb->len)
        tbm_sb_append(sb, ",", 1);
    if (is_tbmesh(entry, n, prefix))
        tbm_sb_printf(sb, "%.*s" GRES_NAME ":1", (int)prefix, entry);
    else
        tbm_sb_append(sb, entry, n);
    return 0;
}

char *tbm_gres_tbmesh_one_per_node(const char *tres_per_node)
{
    tbm_strbuf_t sb;

    tbm_sb_init(&sb);
    each_entry(tres_per_node, rewrite_entry, &sb);
    return tbm_sb_take(&sb);
}
