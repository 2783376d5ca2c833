/* reap.c: whom to end on a Mac when a job has ended (see reap.h). */
#include "reap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pid_index {
    long pid, i;
} pid_index_t;

typedef struct table {
    const tbm_proc_t *t;
    size_t n;
    pid_index_t *by_pid; /* every process's pid and index into t, sorted by pid */
    long *parent;        /* parent[i]: the index of t[i]'s parent, or -1 */
} table_t;

static int by_pid(const void *a, const void *b)
{
    long x = ((const pid_index_t *)a)->pid, y = ((const pid_index_t *)b)->pid;

    return x < y ? -1 : x > y;
}

/* The index of pid in the table, or -1. */
static long find(const table_t *tb, long pid)
{
    pid_index_t key = { pid, -1 }, *hit = bsearch(&key, tb->by_pid, tb->n, sizeof(key), by_pid);

    return hit ? hit->i : -1;
}

static int table_make(table_t *tb, const tbm_proc_t *t, size_t n)
{
    size_t i;

    tb->t = t, tb->n = n;
    tb->by_pid = calloc(n ? n : 1, sizeof(*tb->by_pid));
    tb->parent = calloc(n ? n : 1, sizeof(long));
    if (!tb->by_pid || !tb->parent)
        return -1;
    for (i = 0; i < n; i++)
        tb->by_pid[i] = (pid_index_t){ t[i].pid, (long)i };
    qsort(tb->by_pid, n, sizeof(*tb->by_pid), by_pid);
    for (i = 0; i < n; i++)
        tb->parent[i] = t[i].ppid > 0 && t[i].ppid != t[i].pid ? find(tb, t[i].ppid) : -1;
    return 0;
}

static void table_free(table_t *tb)
{
    free(tb->by_pid);
    free(tb->parent);
}

/* Mark pid and its ancestors (mark[] holds 1 for them). */
static void mark_ancestors(const table_t *tb, long pid, char *mark)
{
    long i = find(tb, pid);
    int depth;

    for (depth = 0; i >= 0 && depth < TBM_REAP_DEPTH && !mark[i]; depth++) {
        mark[i] = 1;
        i = tb->parent[i];
    }
}

/* Mark (1) every descendant of a process already marked. */
static void mark_descendants(const table_t *tb, char *mark)
{
    size_t i;
    int changed = 1, rounds;

    for (rounds = 0; changed && rounds < TBM_REAP_DEPTH; rounds++) {
        changed = 0;
        for (i = 0; i < tb->n; i++)
            if (!mark[i] && tb->parent[i] >= 0 && mark[tb->parent[i]])
                mark[i] = changed = 1;
    }
}

/* A live slurmstepd: root's (real uid 0: a user can name a process slurmstepd, or run a set-uid program
 * through a link of that name, but not get a real uid of 0). */
static int is_stepd(const tbm_proc_t *p)
{
    return p->stepd && p->ruid == 0;
}

/* Does a process of uid run under a live slurmstepd (a step of another job of the user's)? */
static int under_stepd(const table_t *tb, uint32_t uid, char *mark)
{
    size_t i;
    int found = 0;

    for (i = 0; i < tb->n; i++)
        mark[i] = is_stepd(&tb->t[i]);
    mark_descendants(tb, mark);
    for (i = 0; i < tb->n && !found; i++)
        found = mark[i] && !is_stepd(&tb->t[i]) && tb->t[i].uid == uid;
    memset(mark, 0, tb->n);
    return found;
}

/* Every process of uid (keep[] says which), or the descendants of the roots that are uid's. */
static void choose(const table_t *tb, const tbm_reap_ask_t *ask, int by_uid, char *keep)
{
    size_t i;
    long r;

    if (!by_uid) {
        for (i = 0; i < ask->n_roots; i++)
            if ((r = find(tb, ask->roots[i])) >= 0)
                keep[r] = 1;
        mark_descendants(tb, keep);
    }
    for (i = 0; i < tb->n; i++)
        keep[i] = (by_uid || keep[i]) && tb->t[i].uid == ask->uid && tb->t[i].pid > 1;
}

static void say_why(const tbm_reap_ask_t *ask, int by_uid, int stepd, tbm_reap_t *out)
{
    if (by_uid)
        snprintf(out->why, sizeof(out->why), "every process of uid %u: the Mac was job %u's alone (ExclusiveMacs=yes) "
                 "and the user has no other job on it", ask->uid, ask->job);
    else if (!ask->exclusive)
        snprintf(out->why, sizeof(out->why), "job %u's own processes only (those of its tasks): the Macs are "
                 "shared (ExclusiveMacs=no)", ask->job);
    else
        snprintf(out->why, sizeof(out->why), "job %u's own processes only (those of its tasks): uid %u has another "
                 "job on this Mac (%s)", ask->job, ask->uid, stepd ? "a step of it runs" : "a task of it "
                 "runs");
}

int tbm_reap_plan(const tbm_proc_t *t, size_t n, const tbm_reap_ask_t *ask, tbm_reap_t *out, tbm_err_t *err)
{
    table_t tb = { 0 };
    char *keep = NULL, *spare = NULL;
    int stepd = 0, by_uid;
    size_t i;

    memset(out, 0, sizeof(*out));
    if (ask->uid == 0 || ask->uid == TBM_PROC_UID_MIXED) {
        snprintf(out->why, sizeof(out->why), "nothing beyond job %u's tasks: its user is root, whose other "
                 "processes are never ended", ask->job);
        return 0;
    }
    if (table_make(&tb, t, n) < 0 || !(keep = calloc(n ? n : 1, 1)) || !(spare = calloc(n ? n : 1, 1)) ||
        !(out->pids = calloc(n ? n : 1, sizeof(*out->pids)))) {
        table_free(&tb), free(keep), free(spare);
        return tbm_errprintf(err, "out of memory for a table of %zu processes", n);
    }
    if (ask->exclusive && ask->other_jobs == 0)
        stepd = under_stepd(&tb, ask->uid, keep);
    by_uid = ask->exclusive && ask->other_jobs == 0 && !stepd;
    choose(&tb, ask, by_uid, keep);
    mark_ancestors(&tb, ask->self, spare);
    for (i = 0; i < n; i++)
        if (keep[i] && !spare[i])
            out->pids[out->n++] = t[i].pid;
    out->by_uid = by_uid;
    say_why(ask, by_uid, stepd, out);
    table_free(&tb);
    free(keep);
    free(spare);
    return 0;
}

void tbm_reap_free(tbm_reap_t *r)
{
    free(r->pids);
    r->pids = NULL;
    r->n = 0;
}
