/* addrclash.c: cables whose addresses collide with another cable's or with a management network
 * (see addrclash.h). Sorted by each network's first address, so only overlapping neighbours are compared. */
#include "addrclash.h"

#include <stdio.h>
#include <stdlib.h>

static uint32_t mask_of(int prefix)
{
    if (prefix < 0 || prefix > 32)
        prefix = 32;
    return prefix == 0 ? 0 : 0xffffffffu << (32 - prefix);
}

void tbm_addr_net_range(const tbm_addr_net_t *n, uint32_t *first, uint32_t *last)
{
    uint32_t m = mask_of(n->prefix);

    *first = n->addr & m;
    *last = n->addr | ~m;
}

void tbm_addr_net_text(const tbm_addr_net_t *n, char *buf, size_t len)
{
    uint32_t first, last;

    tbm_addr_net_range(n, &first, &last);
    snprintf(buf, len, "%u.%u.%u.%u/%d", first >> 24, (first >> 16) & 255, (first >> 8) & 255, first & 255,
             n->prefix < 0 || n->prefix > 32 ? 32 : n->prefix);
}

typedef struct span {
    uint32_t first, last;
    size_t net;
} span_t;

static int by_first(const void *x, const void *y)
{
    const span_t *a = x, *b = y;

    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    return a->net < b->net ? -1 : a->net > b->net;
}

/* Two overlapping nets: do they collide? */
static int collide(const tbm_addr_net_t *x, const tbm_addr_net_t *y)
{
    if (x->owner == y->owner || (x->owner < 0 && y->owner < 0))
        return 0;
    if (x->owner < 0 || y->owner < 0 || x->group == y->group)
        return 1;
    return x->addr == y->addr;
}

static int by_owners(const void *x, const void *y, const tbm_addr_net_t *nets)
{
    const tbm_addr_clash_t *a = x, *b = y;
    int a0 = nets[a->a].owner, a1 = nets[a->b].owner, b0 = nets[b->a].owner, b1 = nets[b->b].owner;

    if (a0 != b0)
        return a0 < b0 ? -1 : 1;
    return a1 < b1 ? -1 : a1 > b1;
}

static const tbm_addr_net_t *sort_nets;

static int by_owners_sorted(const void *x, const void *y)
{
    return by_owners(x, y, sort_nets);
}

/* Keep one clash per pair of owners. */
static size_t unique(tbm_addr_clash_t *c, size_t n, const tbm_addr_net_t *nets)
{
    size_t i, m = 0;

    if (n < 2)   /* nothing to sort (c may be NULL then) */
        return n;
    sort_nets = nets;
    qsort(c, n, sizeof(*c), by_owners_sorted);
    for (i = 0; i < n; i++)
        if (m == 0 || by_owners(&c[m - 1], &c[i], nets) != 0)
            c[m++] = c[i];
    return m;
}

/* Record the clash of nets i and j, the lower owner first; grows *out. Returns -1 when out of memory. */
static int add(tbm_addr_clash_t **out, size_t *n, size_t *cap, const tbm_addr_net_t *nets, size_t i, size_t j)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        tbm_addr_clash_t *p = realloc(*out, c * sizeof(*p));
        if (!p)
            return -1;
        *out = p;
        *cap = c;
    }
    (*out)[*n].a = nets[i].owner < nets[j].owner ? i : j;
    (*out)[(*n)++].b = nets[i].owner < nets[j].owner ? j : i;
    return 0;
}

long tbm_addr_clashes(const tbm_addr_net_t *nets, size_t n, tbm_addr_clash_t **out)
{
    span_t *s = malloc((n ? n : 1) * sizeof(*s));
    size_t i, j, count = 0, cap = 0;

    *out = NULL;
    if (!s)
        return -1;
    for (i = 0; i < n; i++) {
        tbm_addr_net_range(&nets[i], &s[i].first, &s[i].last);
        s[i].net = i;
    }
    qsort(s, n, sizeof(*s), by_first);
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n && s[j].first <= s[i].last; j++)
            if (collide(&nets[s[i].net], &nets[s[j].net]) && add(out, &count, &cap, nets, s[i].net, s[j].net) < 0) {
                free(s);
                free(*out);
                *out = NULL;
                return -1;
            }
    free(s);
    count = unique(*out, count, nets);
    if (!count) {
        free(*out);
        *out = NULL;
    }
    return (long)count;
}
