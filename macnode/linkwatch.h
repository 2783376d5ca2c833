/* linkwatch.h: what macnoded's watch request keeps of the link states it follows (pure, no I/O): the last
 * state of each watched interface, a change counter that only grows, and the coalescing of the changes
 * into at most one link message per interface per LINKWATCH_GAP_MS (the state it has then). The link
 * monitor of the OS (linkmon.h) feeds it; agent_watch.c sends what it says is due. */
#ifndef MACNODE_LINKWATCH_H
#define MACNODE_LINKWATCH_H

#include <stdint.h>

#define LINKWATCH_MAX    32     /* interfaces followed; more are ignored (counted in .ignored) */
#define LINKWATCH_GAP_MS 200    /* at most one message per interface in this long */
#define LINKWATCH_NAME   16     /* an interface's name with its NUL (IFNAMSIZ) */

typedef struct linkwatch_if {
    char name[LINKWATCH_NAME];
    int up;             /* the state now (as the OS last said) */
    int sent_up;        /* the state last sent (or the first one seen) */
    int dirty;          /* changed since the last message */
    int64_t sent_ms;    /* when the last message about it was sent; INT64_MIN: never */
    int64_t seq;        /* the counter at its last change */
} linkwatch_if_t;

typedef struct linkwatch {
    linkwatch_if_t ifs[LINKWATCH_MAX];
    int n;
    int64_t seq;        /* changes seen so far */
    unsigned ignored;   /* reports about interfaces that did not fit */
} linkwatch_t;

void linkwatch_init(linkwatch_t *w);

/* Follow interface `name` (no message about its first state). 0, or -1 when the table is full or the name
 * is too long. Following one twice is harmless. */
int linkwatch_add(linkwatch_t *w, const char *name, int up);

/* The OS says `name`'s link is `up` now: a change (of an interface followed) counts and waits to be sent.
 * Returns 1 for a change, 0 when nothing changed or it is not followed. */
int linkwatch_report(linkwatch_t *w, const char *name, int up);

/* The next message due at now_ms: 1 with *name, *up and *seq (the interface's last change) and the
 * interface marked sent; 0 when none is due. A change undone within the gap (down and up again) sends
 * nothing. */
int linkwatch_due(linkwatch_t *w, int64_t now_ms, const char **name, int *up, int64_t *seq);

/* Milliseconds until the next message may be due (0: now), -1 when none waits. */
int linkwatch_wait_ms(const linkwatch_t *w, int64_t now_ms);

#endif
