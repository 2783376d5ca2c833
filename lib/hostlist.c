/* hostlist.c: strict expansion and compression of host name lists, "mac[01-04,07]" (see hostlist.h). */
#include "hostlist.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "scalar.h"

/* Longest expression accepted: room for the most names, each written out in full with its comma,
 * so that whatever tbm_hostlist_compress writes can be read back. */
#define EXPR_MAX ((size_t)TBM_HOSTLIST_MAX_NAMES * TBM_HOSTNAME_MAX)

/* A growing list of names being expanded. */
typedef struct names {
    char **v;
    size_t n;
    size_t cap;
} names_t;

/* One item being expanded: "prefix[ranges]suffix" or a plain name (ranges == NULL). */
typedef struct item {
    const char *expr;            /* the whole expression, for messages */
    const char *prefix, *ranges, *suffix;
    size_t prefix_len, ranges_len, suffix_len;
} item_t;

static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
}

int tbm_hostname_valid(const char *name)
{
    size_t i;

    if (!name || !*name)
        return 0;
    for (i = 0; name[i]; i++)
        if (!name_char(name[i]) || i + 1 >= TBM_HOSTNAME_MAX)
            return 0;
    return 1;
}

static int push_name(names_t *ns, const char *s, size_t len, tbm_err_t *err)
{
    char *copy;

    if (ns->n == ns->cap) {
        size_t cap = ns->cap ? ns->cap * 2 : 16;
        char **v = realloc(ns->v, cap * sizeof(*v));
        if (!v)
            return tbm_errprintf(err, "out of memory expanding a hostlist");
        ns->v = v;
        ns->cap = cap;
    }
    copy = malloc(len + 1);
    if (!copy)
        return tbm_errprintf(err, "out of memory expanding a hostlist");
    memcpy(copy, s, len);
    copy[len] = '\0';
    ns->v[ns->n++] = copy;
    return 0;
}

static int check_chars(const item_t *it, const char *s, size_t len, tbm_err_t *err)
{
    size_t i;

    for (i = 0; i < len; i++)
        if (!name_char(s[i]))
            return tbm_errprintf(err, "hostlist '%.200s': character '%c' is not allowed in a host name: "
                                 "use letters, digits, '.', '-' and '_'", it->expr, s[i]);
    return 0;
}

/* Parse one bound of a range: 1..TBM_HOSTLIST_NUM_MAX digits (the digit count is the zero padding). */
static int parse_bound(const item_t *it, const char *s, size_t len, unsigned long *v, int *width,
                       tbm_err_t *err)
{
    long long n;

    if (len == 0 || len > TBM_HOSTLIST_NUM_MAX || tbm_parse_ll_span(s, len, 10, 0, LLONG_MAX, &n) < 0)
        return tbm_errprintf(err, "hostlist '%.200s': '%.*s' is not a number of 1 to %d digits: write "
                             "ranges as N or N-M", it->expr, (int)(len > 40 ? 40 : len), s, TBM_HOSTLIST_NUM_MAX);
    *v = (unsigned long)n;
    *width = (int)len;
    return 0;
}

static int digits(unsigned long v)
{
    int d = 1;

    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

/* Expand one range "N" or "N-M" of an item. */
static int expand_range(const item_t *it, const char *r, size_t len, names_t *ns, tbm_err_t *err)
{
    const char *dash = memchr(r, '-', len);
    unsigned long lo, hi, v;
    int wlo, whi, width;
    char buf[TBM_HOSTNAME_MAX + 16];

    if (parse_bound(it, r, dash ? (size_t)(dash - r) : len, &lo, &wlo, err) < 0)
        return -1;
    hi = lo;
    if (dash && parse_bound(it, dash + 1, len - (size_t)(dash - r) - 1, &hi, &whi, err) < 0)
        return -1;
    if (hi < lo)
        return tbm_errprintf(err, "hostlist '%.200s': range %.*s goes downwards: write the lower bound "
                             "first", it->expr, (int)len, r);
    if (hi - lo + 1 > TBM_HOSTLIST_MAX_NAMES - ns->n)
        return tbm_errprintf(err, "hostlist '%.200s' names more than %d hosts: split it into smaller "
                             "lists", it->expr, TBM_HOSTLIST_MAX_NAMES);
    width = digits(hi) > wlo ? digits(hi) : wlo;
    if (it->prefix_len + (size_t)width + it->suffix_len >= TBM_HOSTNAME_MAX)
        return tbm_errprintf(err, "hostlist '%.200s': a host name would be longer than %d characters: "
                             "use shorter names", it->expr, TBM_HOSTNAME_MAX - 1);
    for (v = lo; v <= hi; v++) {
        int n = snprintf(buf, sizeof(buf), "%.*s%0*lu%.*s", (int)it->prefix_len, it->prefix, wlo, v,
                         (int)it->suffix_len, it->suffix);
        if (push_name(ns, buf, (size_t)n, err) < 0)
            return -1;
    }
    return 0;
}

static int expand_ranges(const item_t *it, names_t *ns, tbm_err_t *err)
{
    const char *r = it->ranges, *end = it->ranges + it->ranges_len;

    if (it->ranges_len == 0)
        return tbm_errprintf(err, "hostlist '%.200s': empty brackets: put ranges such as [01-04] in them",
                             it->expr);
    while (r <= end) {
        const char *comma = memchr(r, ',', (size_t)(end - r));
        const char *stop = comma ? comma : end;
        if (expand_range(it, r, (size_t)(stop - r), ns, err) < 0)
            return -1;
        r = stop + 1;
    }
    return 0;
}

/* Split "prefix[ranges]suffix" (s, len) into an item and check its characters. */
static int split_item(const char *expr, const char *s, size_t len, item_t *it, tbm_err_t *err)
{
    const char *open = memchr(s, '[', len), *close;

    memset(it, 0, sizeof(*it));
    it->expr = expr;
    it->prefix = s;
    it->prefix_len = open ? (size_t)(open - s) : len;
    if (len == 0)
        return tbm_errprintf(err, "hostlist '%.200s': empty name: remove the extra ','", expr);
    if (check_chars(it, s, it->prefix_len, err) < 0)
        return -1;
    if (!open)
        return it->prefix_len >= TBM_HOSTNAME_MAX
                   ? tbm_errprintf(err, "hostlist '%.200s': host name '%.*s...' is longer than %d "
                                   "characters: use shorter names", expr, 20, s, TBM_HOSTNAME_MAX - 1)
                   : 0;
    close = memchr(open, ']', len - it->prefix_len);
    if (!close)
        return tbm_errprintf(err, "hostlist '%.200s': '[' without a matching ']': close the bracket", expr);
    it->ranges = open + 1;
    it->ranges_len = (size_t)(close - open - 1);
    it->suffix = close + 1;
    it->suffix_len = len - (size_t)(it->suffix - s);
    if (memchr(it->suffix, '[', it->suffix_len) || memchr(it->suffix, ']', it->suffix_len))
        return tbm_errprintf(err, "hostlist '%.200s': more than one bracket in '%.*s': write one bracket "
                             "per name", expr, (int)(len > 80 ? 80 : len), s);
    return check_chars(it, it->suffix, it->suffix_len, err);
}

/* The end of the item starting at s: the next ',' outside brackets, or the end of the string. */
static const char *item_end(const char *expr, const char *s, tbm_err_t *err)
{
    int depth = 0;

    for (; *s; s++) {
        if (*s == '[' && depth++ > 0)
            break;
        if (*s == ']' && --depth < 0)
            break;
        if (*s == ',' && depth == 0)
            return s;
    }
    if (*s == '[')
        tbm_errprintf(err, "hostlist '%.200s': brackets inside brackets: write one bracket per name", expr);
    else if (*s == ']')
        tbm_errprintf(err, "hostlist '%.200s': ']' without a matching '[': remove it", expr);
    return *s ? NULL : s;
}

int tbm_hostlist_expand(const char *expr, char ***names, size_t *n, tbm_err_t *err)
{
    names_t ns = {0};
    const char *s = expr;
    item_t it;

    *names = NULL;
    *n = 0;
    if (!expr || !*expr)
        return tbm_errprintf(err, "hostlist is empty: name at least one host");
    if (strlen(expr) > EXPR_MAX)
        return tbm_errprintf(err, "hostlist is longer than %zu characters: split it", EXPR_MAX);
    for (;;) {
        const char *end = item_end(expr, s, err);
        if (!end || split_item(expr, s, (size_t)(end - s), &it, err) < 0)
            goto fail;
        if (it.ranges ? expand_ranges(&it, &ns, err) < 0 : push_name(&ns, s, it.prefix_len, err) < 0)
            goto fail;
        if (ns.n > TBM_HOSTLIST_MAX_NAMES) {
            tbm_errprintf(err, "hostlist '%.200s' names more than %d hosts: split it into smaller lists",
                          expr, TBM_HOSTLIST_MAX_NAMES);
            goto fail;
        }
        if (!*end)
            break;
        s = end + 1;
    }
    *names = ns.v;
    *n = ns.n;
    return 0;
fail:
    tbm_hostlist_free(ns.v, ns.n);
    return -1;
}

void tbm_hostlist_free(char **names, size_t n)
{
    size_t i;

    if (!names)
        return;
    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* ---- compression ---- */

/* A name seen as prefix + number + suffix around its last digit run (width 0: no number). */
typedef struct entry {
    const char *name;
    size_t prefix_len;
    int width;
    unsigned long num;
    size_t first;       /* first appearance of this entry's prefix/suffix among the names */
    size_t order;       /* its own position */
} entry_t;

static void split_entry(entry_t *e, const char *name, size_t order)
{
    size_t len = strlen(name), end = len, start;
    long long num;

    memset(e, 0, sizeof(*e));
    e->name = name;
    e->order = order;
    e->prefix_len = len;
    while (end > 0 && !(name[end - 1] >= '0' && name[end - 1] <= '9'))
        end--;
    start = end;
    while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9')
        start--;
    if (end == start || end - start > TBM_HOSTLIST_NUM_MAX)
        return;
    if (tbm_parse_ll_span(name + start, end - start, 10, 0, LLONG_MAX, &num) < 0)
        return;
    e->prefix_len = start;
    e->width = (int)(end - start);
    e->num = (unsigned long)num;
}

static const char *suffix_of(const entry_t *e)
{
    return e->name + e->prefix_len + (size_t)e->width;
}

/* Same prefix and suffix (and both numbered, or the very same plain name). */
static int same_key(const entry_t *a, const entry_t *b)
{
    if ((a->width == 0) != (b->width == 0))
        return 0;
    if (a->width == 0)
        return strcmp(a->name, b->name) == 0;
    return a->prefix_len == b->prefix_len && memcmp(a->name, b->name, a->prefix_len) == 0 &&
           strcmp(suffix_of(a), suffix_of(b)) == 0;
}

static int cmp_key(const entry_t *a, const entry_t *b)
{
    size_t la = a->width ? a->prefix_len : strlen(a->name), lb = b->width ? b->prefix_len : strlen(b->name);
    int c = memcmp(a->name, b->name, la < lb ? la : lb);

    if (c)
        return c;
    if (la != lb)
        return la < lb ? -1 : 1;
    if ((a->width == 0) != (b->width == 0))
        return a->width == 0 ? -1 : 1;
    return a->width ? strcmp(suffix_of(a), suffix_of(b)) : 0;
}

static int by_key_then_number(const void *pa, const void *pb)
{
    const entry_t *a = pa, *b = pb;
    int c = cmp_key(a, b);

    if (c)
        return c;
    if (a->num != b->num)
        return a->num < b->num ? -1 : 1;
    return a->width - b->width;
}

static int by_first_then_number(const void *pa, const void *pb)
{
    const entry_t *a = pa, *b = pb;

    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    if (a->num != b->num)
        return a->num < b->num ? -1 : 1;
    return a->width - b->width;
}

/* After sorting by key, mark each entry with its key's first appearance. */
static void mark_first(entry_t *es, size_t n)
{
    size_t i = 0, j, k;

    while (i < n) {
        size_t first = es[i].order;
        for (j = i + 1; j < n && same_key(&es[i], &es[j]); j++)
            if (es[j].order < first)
                first = es[j].order;
        for (k = i; k < j; k++)
            es[k].first = first;
        i = j;
    }
}

/* True when b continues a range that started with width w and ended at a. */
static int continues(const entry_t *a, const entry_t *b, int w)
{
    return b->num == a->num + 1 && b->width == (digits(b->num) > w ? digits(b->num) : w);
}

/* Write the bracket of one key's entries es[0..n) (sorted, distinct). */
static void emit_ranges(tbm_strbuf_t *sb, const entry_t *es, size_t n)
{
    size_t i = 0, j;

    while (i < n) {
        for (j = i; j + 1 < n && continues(&es[j], &es[j + 1], es[i].width); j++)
            ;
        tbm_sb_printf(sb, "%s%0*lu", i ? "," : "", es[i].width, es[i].num);
        if (j > i)
            tbm_sb_printf(sb, "-%0*lu", es[i].width, es[j].num);
        i = j + 1;
    }
}

static void emit_key(tbm_strbuf_t *sb, const entry_t *es, size_t n)
{
    if (n == 1) {
        tbm_sb_printf(sb, "%s", es[0].name);
        return;
    }
    tbm_sb_append(sb, es[0].name, es[0].prefix_len);
    tbm_sb_append(sb, "[", 1);
    emit_ranges(sb, es, n);
    tbm_sb_printf(sb, "]%s", suffix_of(&es[0]));
}

/* Drop repeated names from the sorted entries; returns the new count. */
static size_t drop_repeats(entry_t *es, size_t n)
{
    size_t i, m = 0;

    for (i = 0; i < n; i++)
        if (m == 0 || strcmp(es[m - 1].name, es[i].name) != 0)
            es[m++] = es[i];
    return m;
}

char *tbm_hostlist_compress(char *const *names, size_t n)
{
    tbm_strbuf_t sb;
    entry_t *es;
    size_t i, j;

    tbm_sb_init(&sb);
    if (n == 0)
        return tbm_sb_take(&sb);
    es = calloc(n, sizeof(*es));
    if (!es)
        return NULL;
    for (i = 0; i < n; i++)
        split_entry(&es[i], names[i], i);
    qsort(es, n, sizeof(*es), by_key_then_number);
    mark_first(es, n);
    qsort(es, n, sizeof(*es), by_first_then_number);
    n = drop_repeats(es, n);
    for (i = 0; i < n; i = j) {
        for (j = i + 1; j < n && es[j].first == es[i].first; j++)
            ;
        if (i)
            tbm_sb_append(&sb, ",", 1);
        emit_key(&sb, es + i, j - i);
    }
    free(es);
    return tbm_sb_take(&sb);
}
