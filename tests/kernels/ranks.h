/* ranks.h: the integration tests' launcher: fork a group of ranks on loopback, capture each one's stderr
 * and exit status, and wait for them within a bounded time. */
#ifndef TBM_TEST_RANKS_H
#define TBM_TEST_RANKS_H

#include <sys/types.h>

#include "tbmcoll.h"

#define TR_MAX 8
#define TR_ERR_MAX 8192

typedef struct tr_result {
    int status;                  /* exit code; 128+signal when killed; -1 when it had to be killed at the end */
    double seconds;              /* from the fork to the exit */
    char err[TR_ERR_MAX];        /* what it wrote on stderr */
} tr_result_t;

/* The body of one rank: returns its exit code. */
typedef int (*tr_fn)(int rank, int size, const char *const *addrs, void *arg);

/* Called in the parent after the fork, with the children's pids (may kill or stop some). */
typedef void (*tr_during)(const pid_t *pids, int n, void *arg);

/* n distinct free TCP ports on 127.0.0.1 (bound to port 0, read back, released). 0, or -1. */
int tr_free_ports(int n, int *ports);

/* Fork n ranks on 127.0.0.1 with free ports, run fn in each, wait at most timeout_s for all; stragglers are
 * killed (status -1). Rank `spare` (or -1) is not waited for: it is killed once the others are done.
 * Returns 0 when every rank exited 0, else 1. */
int tr_run(int n, tr_fn fn, void *arg, double timeout_s, tr_during during, int spare, tr_result_t *res);

/* In a child: tell the parent this rank is connected (tr_wait_ready() in `during`). */
void tr_ready(void);

/* In the parent: wait until n ranks said ready, at most timeout_s. 0, or -1. */
int tr_wait_ready(int n, double timeout_s);

/* Options for tests: short timeouts. */
tbmcoll_opts_t tr_opts(tbmcoll_algo_t algo, int io_timeout_ms);

double tr_now(void);

/* Report a failed expectation (file:line, message) and count it. */
#define TR_EXPECT(cond, ...) \
    ((cond) ? 0 : (fprintf(stderr, "%s:%d: ", __FILE__, __LINE__), fprintf(stderr, __VA_ARGS__), \
                   fputc('\n', stderr), 1))

#endif
