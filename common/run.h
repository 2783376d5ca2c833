/* run.h: run a command without a shell, with a time limit and bounded output: its stdout captured, its stderr
 * captured, passed on or dropped. The one way every room outside lib/ runs a program. */
#ifndef TBM_COMMON_RUN_H
#define TBM_COMMON_RUN_H

#include <stddef.h>
#include <sys/types.h>
#include "errbuf.h"

/* What becomes of the command's stderr. */
typedef enum run_stderr {
    RUN_STDERR_NULL = 0,   /* /dev/null */
    RUN_STDERR_CAPTURE,    /* into run_out_t.err, bounded as stdout */
    RUN_STDERR_PASS        /* ours */
} run_stderr_t;

typedef struct run_opts {
    const char *path;         /* where argv[0] is looked up (PATH-style; a name with '/' is taken as it is);
                               * NULL: $PATH, else /usr/bin:/bin */
    char *const *env;         /* its environment; NULL: only PATH (the list above) and LC_ALL=C */
    const char *const *env_add;   /* NULL-terminated NAME=VALUE set on top of env (replacing the same names) */
    int timeout_ms;           /* its time limit; <= 0: none */
    int grace_ms;             /* > 0: SIGTERM at the limit, SIGKILL that much later; 0: SIGKILL at the limit */
    size_t max;               /* the most bytes taken of stdout (and of a captured stderr); 0: RUN_MAX */
    int truncate;             /* more output than max: keep the first max bytes and read on (1), or kill the
                               * command and refuse (0) */
    run_stderr_t stderr_to;
} run_opts_t;

#define RUN_MAX (1u << 20)

/* What the command did. */
typedef struct run_out {
    char *out;                /* stdout, NUL-terminated (malloc'd; "" when none) */
    size_t out_len;
    char *err;                /* stderr when captured, the same; else NULL */
    size_t err_len;
    int status;               /* exit status 0..255; 128+N when killed by signal N; -1 when it did not run */
    int timed_out;            /* killed at its time limit */
} run_out_t;

/* Run argv (stdin /dev/null; its own process group, killed as a whole) as o says, into *r (run_out_free it,
 * whatever the result). Returns the exit status (0..255), or -1 with err saying why: not found or not started,
 * killed by a signal, timed out, more output than o->max (unless o->truncate), a read error. r->out and r->err
 * hold what came before, r->status and r->timed_out what happened. */
int run_command(const char *const *argv, const run_opts_t *o, run_out_t *r, tbm_err_t *err);
void run_out_free(run_out_t *r);

/* The same in two halves, for commands that run while the caller does other work: run_start starts argv and
 * returns at once (p: its pid and stdout/stderr pipes); run_finish reads until its end, the time limit (counted
 * from run_finish) or the bound, and collects it, as run_command. run_finish with p->pid -1 (not started) gives
 * -1 with "not started". */
typedef struct run_proc {
    pid_t pid;
    int out, err;             /* read ends of its pipes; -1: none */
    char name[64];            /* argv[0], for messages */
} run_proc_t;

int run_start(const char *const *argv, const run_opts_t *o, run_proc_t *p, tbm_err_t *err);
int run_finish(run_proc_t *p, const run_opts_t *o, run_out_t *r, tbm_err_t *err);

/* run_command with the environment PATH=path, LC_ALL=C, stderr dropped, output refused past max: the stdout
 * in *out (malloc'd, NUL-terminated; NULL on failure) and *len. */
int run_capture(const char *const *argv, const char *path, int timeout_ms, size_t max, char **out, size_t *len,
                tbm_err_t *err);

#endif
