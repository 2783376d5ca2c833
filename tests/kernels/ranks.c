/* ranks.c: fork a group of ranks on loopback for the kernels' integration tests (see ranks.h). */
#include "ranks.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int ready_pipe[2] = { -1, -1 };

double tr_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

tbmcoll_opts_t tr_opts(tbmcoll_algo_t algo, int io_timeout_ms)
{
    tbmcoll_opts_t o = { .algo = algo, .connect_timeout_ms = 10000, .io_timeout_ms = io_timeout_ms };

    return o;
}

int tr_free_ports(int n, int *ports)
{
    int fds[TR_MAX], i, rc = 0;

    for (i = 0; i < n; i++) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = 0 };
        socklen_t len = sizeof(sa);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            getsockname(fds[i], (struct sockaddr *)&sa, &len) < 0)
            rc = -1;
        ports[i] = ntohs(sa.sin_port);
    }
    for (i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return rc;
}

void tr_ready(void)
{
    char b = 'r';

    if (write(ready_pipe[1], &b, 1) != 1)
        perror("ready pipe");
}

int tr_wait_ready(int n, double timeout_s)
{
    double end = tr_now() + timeout_s;
    char b;

    while (n > 0) {
        struct pollfd p = { .fd = ready_pipe[0], .events = POLLIN };
        int ms = (int)((end - tr_now()) * 1000);
        if (ms <= 0 || poll(&p, 1, ms) <= 0 || read(ready_pipe[0], &b, 1) != 1)
            return -1;
        n--;
    }
    return 0;
}

static pid_t spawn(int rank, int n, tr_fn fn, void *arg, const char *const *addrs, int *errfd)
{
    int p[2];
    pid_t pid;

    if (pipe(p) < 0)
        return -1;
    pid = fork();
    if (pid == 0) {
        close(p[0]);
        close(ready_pipe[0]);
        dup2(p[1], 2);
        close(p[1]);
        _exit(fn(rank, n, addrs, arg));
    }
    close(p[1]);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    *errfd = p[0];
    return pid;
}

/* Read what a child wrote on stderr so far (keeps the pipe from filling). */
static void drain(int fd, tr_result_t *r, size_t *len)
{
    ssize_t k;
    char sink[4096];

    for (;;) {
        if (*len + 1 < sizeof(r->err))
            k = read(fd, r->err + *len, sizeof(r->err) - 1 - *len);
        else
            k = read(fd, sink, sizeof(sink));
        if (k <= 0)
            break;
        if (*len + 1 < sizeof(r->err))
            *len += (size_t)k;
    }
    r->err[*len] = '\0';
}

static int status_code(int st)
{
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int tr_run(int n, tr_fn fn, void *arg, double timeout_s, tr_during during, int spare, tr_result_t *res)
{
    pid_t pids[TR_MAX];
    int ports[TR_MAX], errfd[TR_MAX], i, left = spare >= 0 ? n - 1 : n, st, failed = 0;
    size_t len[TR_MAX] = { 0 };
    char addr[TR_MAX][32];
    const char *addrs[TR_MAX];
    double start = tr_now();

    if (n > TR_MAX || tr_free_ports(n, ports) < 0 || pipe(ready_pipe) < 0)
        return 1;
    for (i = 0; i < n; i++) {
        snprintf(addr[i], sizeof(addr[i]), "127.0.0.1:%d", ports[i]);
        addrs[i] = addr[i];
    }
    fflush(NULL);
    for (i = 0; i < n; i++) {
        memset(&res[i], 0, sizeof(res[i]));
        res[i].status = -1;
        pids[i] = spawn(i, n, fn, arg, addrs, &errfd[i]);
    }
    close(ready_pipe[1]);
    if (during)
        during(pids, n, arg);
    while (left > 0 && tr_now() - start < timeout_s) {
        for (i = 0; i < n; i++) {
            drain(errfd[i], &res[i], &len[i]);
            if (i != spare && pids[i] > 0 && waitpid(pids[i], &st, WNOHANG) == pids[i]) {
                res[i].status = status_code(st);
                res[i].seconds = tr_now() - start;
                pids[i] = 0;
                left--;
            }
        }
        usleep(2000);
    }
    for (i = 0; i < n; i++) {
        if (pids[i] > 0) {
            kill(pids[i], SIGKILL);
            waitpid(pids[i], &st, 0);
        }
        drain(errfd[i], &res[i], &len[i]);
        close(errfd[i]);
        failed |= res[i].status != 0 && i != spare;
    }
    close(ready_pipe[0]);
    return failed;
}
