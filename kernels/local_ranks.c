/* local_ranks.c: N ranks on this host (127.0.0.1, free ports), each forked, bound to a CPU of its own when
 * they fit, with its communicator: how the benchmark and the reference workload run standalone on one
 * machine (see tbmcoll_run_local). */
#include "config.h"
#include "tbmcoll.h"
#include "reduce.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define LOCAL_MAX 64

int tbmcoll_loopback_socket(int *port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0), e;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        e = errno;
        if (fd >= 0)
            close(fd);
        errno = e;
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

/* Linux only: macOS has no call that binds a process to a core, so there the ranks are left unbound. */
int tbmcoll_local_cpus(int n, const tbmcoll_opts_t *opts, int *cpu)
{
    int i, bound = 0;

    for (i = 0; i < n; i++)
        cpu[i] = -1;
#ifdef __linux__
    {
        cpu_set_t set;
        int cpus[CPU_SETSIZE], ncpus = 0;

        if (opts->bind_local < 0 || sched_getaffinity(0, sizeof(set), &set) < 0)
            return 0;
        for (i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &set))
                cpus[ncpus++] = i;
        for (i = 0; i < n; i++)
            bound = (cpu[i] = tbm_local_cpu(i, n, cpus, ncpus)) >= 0;
    }
#else
    (void)opts;
#endif
    return bound;
}

/* In the forked rank: it ends with the process that started it (killed, it would leave its ranks running
 * their whole sweep), and runs on its CPU, if it has one. */
static void settle_rank(int rank, int cpu, pid_t parent, const char *prog)
{
#ifdef __linux__
    cpu_set_t set;

    if (prctl(PR_SET_PDEATHSIG, SIGTERM) == 0 && getppid() != parent)
        _exit(2);   /* the parent has gone already */
    if (cpu < 0)
        return;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) < 0)
        fprintf(stderr, "%s: rank %d: cannot bind to CPU %d (%s): it runs unbound\n", prog, rank, cpu,
                strerror(errno));
#else
    (void)rank, (void)cpu, (void)parent, (void)prog;
#endif
}

int tbmcoll_run_local(int n, const tbmcoll_opts_t *opts, tbmcoll_rank_fn fn, void *arg, const char *prog)
{
    char addr[LOCAL_MAX][32];
    const char *addrs[LOCAL_MAX];
    pid_t pids[LOCAL_MAX], parent;
    int fds[LOCAL_MAX], cpu[LOCAL_MAX], i, st, rc = 0;
    tbm_err_t err = { { 0 } };
    tbmcoll_comm_t *c;

    if (n < 1 || n > LOCAL_MAX) {
        fprintf(stderr, "%s: %d local ranks: give 1 to %d\n", prog, n, LOCAL_MAX);
        return 2;
    }
    for (i = 0; i < n; i++) {   /* all held open until every rank has one: n different ports */
        int port;
        if ((fds[i] = tbmcoll_loopback_socket(&port)) < 0) {
            fprintf(stderr, "%s: cannot find a free port on 127.0.0.1: %s\n", prog, strerror(errno));
            while (i-- > 0)
                close(fds[i]);
            return 2;
        }
        snprintf(addr[i], sizeof(addr[i]), "127.0.0.1:%d", port);
        addrs[i] = addr[i];
    }
    for (i = 0; i < n; i++)
        close(fds[i]);
    tbmcoll_local_cpus(n, opts, cpu);
    parent = getpid();
    fflush(NULL);
    for (i = 0; i < n; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            settle_rank(i, cpu[i], parent, prog);
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
