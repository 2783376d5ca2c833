/* linkwatch.c: link states and the coalescing of their changes (linkwatch.h). */
#include "config.h"
#include "linkwatch.h"

#include <stdio.h>
#include <string.h>

void linkwatch_init(linkwatch_t *w)
{
    memset(w, 0, sizeof(*w));
}

static linkwatch_if_t *find(linkwatch_t *w, const char *name)
{
    int i;

    for (i = 0; i < w->n; i++)
        if (strcmp(w->ifs[i].name, name) == 0)
            return &w->ifs[i];
    return NULL;
}

int linkwatch_add(linkwatch_t *w, const char *name, int up)
{
    linkwatch_if_t *x;

    if (find(w, name))
        return 0;
    if (w->n >= LINKWATCH_MAX || strlen(name) >= LINKWATCH_NAME || !*name) {
        w->ignored++;
        return -1;
    }
    x = &w->ifs[w->n++];
    memset(x, 0, sizeof(*x));
    snprintf(x->name, sizeof(x->name), "%s", name);
    x->up = x->sent_up = !!up;
    x->sent_ms = INT64_MIN;
    return 0;
}

int linkwatch_report(linkwatch_t *w, const char *name, int up)
{
    linkwatch_if_t *x = find(w, name);

    if (!x || x->up == !!up)
        return 0;
    x->up = !!up;
    x->dirty = 1;
    x->seq = ++w->seq;
    return 1;
}

/* When x's next message may go. */
static int64_t next_ms(const linkwatch_if_t *x)
{
    return x->sent_ms == INT64_MIN ? INT64_MIN : x->sent_ms + LINKWATCH_GAP_MS;
}

int linkwatch_due(linkwatch_t *w, int64_t now_ms, const char **name, int *up, int64_t *seq)
{
    int i;

    for (i = 0; i < w->n; i++) {
        linkwatch_if_t *x = &w->ifs[i];
        if (!x->dirty || next_ms(x) > now_ms)
            continue;
        x->dirty = 0;
        if (x->up == x->sent_up)   /* down and up again within the gap: nothing to say */
            continue;
        x->sent_up = x->up;
        x->sent_ms = now_ms;
        *name = x->name;
        *up = x->up;
        *seq = x->seq;
        return 1;
    }
    return 0;
}

int linkwatch_wait_ms(const linkwatch_t *w, int64_t now_ms)
{
    int64_t best = -1, t;
    int i;

    for (i = 0; i < w->n; i++) {
        if (!w->ifs[i].dirty)
            continue;
        t = next_ms(&w->ifs[i]) - now_ms;
        if (next_ms(&w->ifs[i]) == INT64_MIN || t < 0)
            t = 0;
        if (best < 0 || t < best)
            best = t;
    }
    return (int)best;
}
