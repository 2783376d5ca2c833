/* local_ranks.c: N ranks on this host (127.0.0.1, free ports), each forked with its communicator: how the
 * benchmark and the reference workload run standalone on one machine (see tbmcoll_run_local). */
#include "config.h"
#include "tbmcoll.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOCAL_MAX 64

int tbmcoll_run_local(int n, const tbmcoll_opts_t *opts, tbmcoll_rank_fn fn, void *arg, const char *prog)
{
    char addr[LOCAL_MAX][32];
    const char *addrs[LOCAL_MAX];
    pid_t pids[LOCAL_MAX];
    int fds[LOCAL_MAX], i, st, rc = 0;
    tbm_err_t err = { { 0 } };
    tbmcoll_comm_t *c;

    if (n < 1 || n > LOCAL_MAX) {
        fprintf(stderr, "%s: %d local ranks: give 1 to %d\n", prog, n, LOCAL_MAX);
        return 2;
    }
    for (i = 0; i < n; i++) {
        struct sockaddr_in sa = { .sin_family = AF_INET };
        socklen_t len = sizeof(sa);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            getsockname(fds[i], (struct sockaddr *)&sa, &len) < 0) {
            fprintf(stderr, "%s: cannot find a free port on 127.0.0.1: %s\n", prog, strerror(errno));
            return 2;
        }
        snprintf(addr[i], sizeof(addr[i]), "127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
        addrs[i] = addr[i];
    }
    for (i = 0; i < n; i++)
        close(fds[i]);
    fflush(NULL);
    for (i = 0; i < n; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            c = tbmcoll_comm_from_addrs(i, n, addrs, opts, &err);
            if (!c) {
                fprintf(stderr, "%s: %s\n", prog, err.msg);
                _exit(2);
            }
            st = fn(c, arg);
            fflush(NULL);
            _exit(st);
        }
    }
    for (i = 0; i < n; i++)
        if (pids[i] > 0 && waitpid(pids[i], &st, 0) == pids[i] && rc == 0)
            rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return rc;
}
