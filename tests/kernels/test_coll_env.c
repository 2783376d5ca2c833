/* test_coll_env.c: a communicator from exactly what MLX reads: the ring hostfile (MLX_HOSTFILE), and the
 * JACCL device matrix with its coordinator (rdma_lo -> lo -> 127.0.0.1 on loopback), also with stray
 * connections to the coordinator; and every environment error with its message. */
#include "clock.h"
#include "ranks.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define STRAYS 2

typedef struct env_case {
    const char *name;
    int jaccl;               /* 0: ring hostfile; 1: device matrix and coordinator */
    int ring_matrix;         /* the matrix is a 4-cycle (not a mesh) */
    int prefer_ring;         /* set JACCL_RING */
    tbmcoll_algo_t ask;      /* the algorithm asked for */
    tbmcoll_algo_t want;     /* the algorithm the communicator must use */
    int strays;              /* 2 ranks; before rank 1 connects, stray connections to the coordinator: 1 (it
                              * waits until the coordinator drops them) or 2 (it leaves them open); 3: a
                              * flood of silent connections, kept up while rank 1 connects (flood_coordinator) */
} env_case_t;

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void hostfile_text(int n, const char *const *addrs, char *out, size_t outsz)
{
    size_t len = (size_t)snprintf(out, outsz, "[");
    int k;

    for (k = 0; k < n; k++)
        len += (size_t)snprintf(out + len, outsz - len, "%s[\"%s\"]", k ? ", " : "", addrs[k]);
    snprintf(out + len, outsz - len, "]\n");
}

/* Every off-diagonal cell "rdma_lo" (mesh), or only the ring neighbours' cells (a cycle). */
static void matrix_text(int n, int cycle, char *out, size_t outsz)
{
    size_t len = (size_t)snprintf(out, outsz, "[");
    int i, j, near;

    for (i = 0; i < n; i++) {
        len += (size_t)snprintf(out + len, outsz - len, "%s[", i ? ", " : "");
        for (j = 0; j < n; j++) {
            near = j == (i + 1) % n || j == (i + n - 1) % n;
            len += (size_t)snprintf(out + len, outsz - len, "%s%s", j ? ", " : "",
                                    i == j || (cycle && !near) ? "null" : "\"rdma_lo\"");
        }
        len += (size_t)snprintf(out + len, outsz - len, "]");
    }
    snprintf(out + len, outsz - len, "]\n");
}

/* Connections to the coordinator at addr that are not ranks: one silent, one that stops after 2 bytes of its
 * header. With wait_dropped, wait (at most 30 s) until the coordinator has closed both. 0, or 1. */
static int open_strays(const char *addr, int wait_dropped, int *fds)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    int i, k;
    char b;

    sa.sin_port = htons((uint16_t)atoi(strchr(addr, ':') + 1));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (k = 0; k < STRAYS; k++) {
        for (i = 0; i < 600; i++) {           /* rank 0 may not listen yet: retry for 30 s */
            fds[k] = socket(AF_INET, SOCK_STREAM, 0);
            if (connect(fds[k], (struct sockaddr *)&sa, sizeof(sa)) == 0)
                break;
            close(fds[k]);
            fds[k] = -1;
            usleep(50000);
        }
        if (TR_EXPECT(fds[k] >= 0, "stray %d: cannot connect to the coordinator at %s", k, addr))
            return 1;
    }
    if (TR_EXPECT(write(fds[1], "TB", 2) == 2, "stray 1: cannot write"))
        return 1;
    for (k = 0; wait_dropped && k < STRAYS; k++) {
        struct pollfd p = { .fd = fds[k], .events = POLLIN };
        if (TR_EXPECT(poll(&p, 1, 30000) == 1 && recv(fds[k], &b, 1, 0) <= 0,
                      "stray %d: the coordinator did not close it within 30 s", k))
            return 1;
    }
    return 0;
}

/* A child that opens silent connections to the coordinator at addr as fast as it can, the last 256 kept open,
 * until it is killed or 20 s have passed (a user of the host flooding it). Its pid, once it has opened 200 (by
 * then the coordinator is full of them), or -1. */
static pid_t flood_coordinator(const char *addr)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    int ready[2], ring[256] = { 0 }, i = 0, n = 0;
    long long end;
    pid_t pid;
    char b;

    sa.sin_port = htons((uint16_t)atoi(strchr(addr, ':') + 1));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (pipe(ready) < 0 || (pid = fork()) < 0)
        return -1;
    if (pid > 0) {
        close(ready[1]);
        i = (int)read(ready[0], &b, 1);
        close(ready[0]);
        return i == 1 ? pid : -1;
    }
    close(ready[0]);
    for (end = tbm_now_ms() + 20000; tbm_now_ms() < end; i = (i + 1) % 256) {
        if (ring[i] > 0)
            close(ring[i]);
        ring[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (ring[i] >= 0 && connect(ring[i], (struct sockaddr *)&sa, sizeof(sa)) < 0) {
            close(ring[i]);
            ring[i] = -1;
            usleep(10000);   /* rank 0 may not listen yet */
        } else if (++n == 200 && write(ready[1], "r", 1) != 1) {
            _exit(1);
        }
    }
    _exit(0);
}

/* One rank: write its own copy of the file (as each Mac has its own), set the variables, connect, reduce. */
static int env_rank(int rank, int n, const char *const *addrs, void *arg)
{
    const env_case_t *ec = arg;
    tbmcoll_opts_t o = tr_opts(ec->ask, 5000);
    char path[64], text[2048], num[16];
    tbm_err_t err = { { 0 } };
    tbmcoll_comm_t *c;
    int32_t v[3] = { rank, 1, -rank }, sum[3];
    int bad, k, strays[STRAYS] = { -1, -1 };
    pid_t flood = -1;

    snprintf(path, sizeof(path), "env-%d-%d.json", (int)getppid(), rank);
    snprintf(num, sizeof(num), "%d", rank);
    if (ec->jaccl) {
        matrix_text(n, ec->ring_matrix, text, sizeof(text));
        setenv("MLX_IBV_DEVICES", path, 1);
        setenv("MLX_JACCL_COORDINATOR", addrs[0], 1);  /* rank 0's address: free, rank 0 binds it */
        setenv("JACCL_RANK", num, 1);
        setenv("MLX_RANK", "not a number", 1);         /* the JACCL_* alias wins */
        if (ec->prefer_ring)
            setenv("JACCL_RING", "1", 1);
    } else {
        hostfile_text(n, addrs, text, sizeof(text));
        setenv("MLX_HOSTFILE", path, 1);
        setenv("MLX_RANK", num, 1);
    }
    write_text(path, text);
    if (ec->strays && ec->strays < 3 && rank == 0)
        o.connect_timeout_ms = 60000;   /* generous; and rank 1 (10 s) must be heard while strays are open */
    if (ec->strays == 3)
        o.connect_timeout_ms = 6000;    /* a coordinator that left its ranks in the backlog behind the flood's
                                         * connections, 32 every 2 s, took 12 s here */
    if (ec->strays && ec->strays < 3 && rank == 1 && open_strays(addrs[0], ec->strays == 1, strays))
        return unlink(path), 3;
    if (ec->strays == 3 && rank == 1 && (flood = flood_coordinator(addrs[0])) < 0)
        return unlink(path), 3;
    c = tbmcoll_comm_from_env(&o, &err);
    if (flood > 0) {
        kill(flood, SIGKILL);
        waitpid(flood, NULL, 0);
    }
    unlink(path);
    for (k = 0; k < STRAYS; k++)
        if (strays[k] >= 0)
            close(strays[k]);
    if (!c)
        return fprintf(stderr, "%s\n", err.msg), 2;
    bad = TR_EXPECT(tbmcoll_algo(c) == ec->want, "%s: algorithm %s", ec->name, tbmcoll_algo_name(tbmcoll_algo(c)));
    bad |= TR_EXPECT(tbmcoll_allreduce(c, v, sum, 3, TBM_DT_I32, TBM_OP_SUM, &err) == 0, "%s", err.msg);
    bad |= TR_EXPECT(sum[0] == n * (n - 1) / 2 && sum[1] == n && sum[2] == -sum[0], "%s: wrong sums", ec->name);
    tbmcoll_comm_free(c);
    return bad;
}

static int run_env_cases(void)
{
    static const env_case_t cases[] = {
        { "ring hostfile, 3 ranks", 0, 0, 0, TBMCOLL_ALGO_AUTO, TBMCOLL_ALGO_RING, 0 },
        { "ring hostfile asked for a mesh, 3 ranks", 0, 0, 0, TBMCOLL_ALGO_MESH, TBMCOLL_ALGO_MESH, 0 },
        { "jaccl mesh, 3 ranks", 1, 0, 0, TBMCOLL_ALGO_AUTO, TBMCOLL_ALGO_MESH, 0 },
        { "jaccl mesh with JACCL_RING, 3 ranks", 1, 0, 1, TBMCOLL_ALGO_AUTO, TBMCOLL_ALGO_RING, 0 },
        { "jaccl ring (4-cycle), 4 ranks", 1, 1, 0, TBMCOLL_ALGO_AUTO, TBMCOLL_ALGO_RING, 0 },
        { "jaccl mesh, strays dropped by the coordinator, 2 ranks", 1, 0, 0, TBMCOLL_ALGO_AUTO,
          TBMCOLL_ALGO_MESH, 1 },
        { "jaccl mesh, strays still open, 2 ranks", 1, 0, 0, TBMCOLL_ALGO_AUTO, TBMCOLL_ALGO_MESH, 2 },
        { "jaccl mesh, a flood of silent connections, 2 ranks", 1, 0, 0, TBMCOLL_ALGO_AUTO, TBMCOLL_ALGO_MESH, 3 },
    };
    tr_result_t res[TR_MAX];
    int i, k, n, rc, bad = 0;
    const char *line, *tag = "dropped a stray connection from 127.0.0.1:";

    for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
        n = cases[i].strays ? 2 : cases[i].ring_matrix ? 4 : 3;
        rc = tr_run(n, env_rank, (void *)&cases[i], 90, NULL, -1, res);
        if (!rc && cases[i].strays == 1) {
            /* each stray named on the coordinator's stderr, with its address */
            for (k = 0, line = res[0].err; (line = strstr(line, tag)); k++, line++)
                ;
            printf("%s: rank 0 said:\n%s", cases[i].name, res[0].err);
            rc = TR_EXPECT(k == STRAYS, "%s: %d of %d strays reported by rank 0", cases[i].name, k, STRAYS);
        }
        if (cases[i].strays == 3)
            printf("%s: rank 0 said:\n%s", cases[i].name, res[0].err);
        printf("%s: %s\n", cases[i].name, rc ? "FAIL" : "ok");
        for (k = 0; rc && k < n; k++)
            printf("  rank %d exit %d: %s", k, res[k].status, res[k].err);
        bad |= rc;
    }
    return bad;
}

/* ---- environment errors (one process, nothing connects) ---- */

static void clear_env(void)
{
    static const char *const vars[] = { "MLX_HOSTFILE", "MLX_RANK", "MLX_IBV_DEVICES", "MLX_JACCL_DEVICES",
                                        "MLX_JACCL_COORDINATOR", "MLX_JACCL_RING", "JACCL_RANK",
                                        "JACCL_IBV_DEVICES", "JACCL_COORDINATOR", "JACCL_RING", NULL };
    int i;

    for (i = 0; vars[i]; i++)
        unsetenv(vars[i]);
}

static int expect_env_error(const char *what, const char *want)
{
    tbmcoll_opts_t o = tr_opts(TBMCOLL_ALGO_AUTO, 1000);
    tbm_err_t err = { { 0 } };
    tbmcoll_comm_t *c;

    o.connect_timeout_ms = 200;
    c = tbmcoll_comm_from_env(&o, &err);
    tbmcoll_comm_free(c);
    return TR_EXPECT(!c && strcmp(err.msg, want) == 0, "%s:\n  got  %s\n  want %s", what, err.msg, want);
}

static int env_errors(void)
{
    char hosts[64], devs[64], want[512];
    int bad = 0;

    snprintf(hosts, sizeof(hosts), "env-%d-hosts.json", (int)getpid());
    snprintf(devs, sizeof(devs), "env-%d-devices.json", (int)getpid());
    clear_env();
    bad |= expect_env_error("nothing set", "neither MLX_HOSTFILE (ring) nor MLX_IBV_DEVICES (jaccl) is set: run "
                            "inside a tbmesh job, or set MLX_RANK with MLX_HOSTFILE, or MLX_RANK with "
                            "MLX_IBV_DEVICES and MLX_JACCL_COORDINATOR");
    setenv("MLX_HOSTFILE", "/nonexistent/hosts.json", 1);
    bad |= expect_env_error("missing hostfile", "MLX_HOSTFILE=/nonexistent/hosts.json: cannot open: No such file "
                            "or directory");
    write_text(hosts, "[[\"127.0.0.1:1\"], [\"127.0.0.1\"]]");
    setenv("MLX_HOSTFILE", hosts, 1);
    snprintf(want, sizeof(want), "MLX_HOSTFILE: %s: rank 1, address 0: '127.0.0.1' has no port: write it as "
             "ipv4:port (e.g. 10.0.0.1:32323)", hosts);
    bad |= expect_env_error("bad hostfile", want);
    write_text(hosts, "[[\"127.0.0.1:1\"], [\"127.0.0.1:2\"]]");
    bad |= expect_env_error("no rank", "MLX_RANK is not set: every rank needs its rank number (0 to 1)");
    setenv("MLX_RANK", "2", 1);
    bad |= expect_env_error("rank too big", "MLX_RANK='2' is not a rank of this group: give a number from 0 to 1");
    setenv("MLX_RANK", "1x", 1);
    bad |= expect_env_error("rank not a number", "MLX_RANK='1x' is not a rank of this group: give a number from 0 "
                            "to 1");
    clear_env();
    write_text(devs, "[[null, \"rdma_nosuch9\"], [\"rdma_nosuch9\", null]]");
    setenv("MLX_JACCL_DEVICES", devs, 1);              /* MLX 0.30.3's name is read too */
    setenv("MLX_RANK", "0", 1);
    bad |= expect_env_error("no coordinator", "MLX_JACCL_COORDINATOR is not set: give rank 0's ipv4:port (rank 0 "
                            "binds it)");
    setenv("JACCL_COORDINATOR", "host:1", 1);
    bad |= expect_env_error("bad coordinator", "JACCL_COORDINATOR: 'host' is not an IPv4 address: write a dotted "
                            "quad such as 10.0.0.1");
    setenv("JACCL_COORDINATOR", "127.0.0.1:1", 1);
    snprintf(want, sizeof(want), "%s: rank 0 faces rank 1 through rdma_nosuch9: interface nosuch9 does not exist "
             "on this host: give every Thunderbolt interface in use an IPv4 address (JACCL needs it too)", devs);
    bad |= expect_env_error("no such interface", want);
    write_text(devs, "[[null, \"rdma_lo\"], [null, null]]");
    snprintf(want, sizeof(want), "MLX_JACCL_DEVICES: %s: cell [0][1] lists 1 devices but [1][0] lists 0: every "
             "cable has a device at both ends, so both cells must name as many", devs);
    bad |= expect_env_error("bad matrix", want);
    write_text(devs, "[[null,\"rdma_lo\",null,\"rdma_lo\"],[\"rdma_lo\",null,\"rdma_lo\",null],"
                     "[null,\"rdma_lo\",null,\"rdma_lo\"],[\"rdma_lo\",null,\"rdma_lo\",null]]");
    {
        tbmcoll_opts_t o = tr_opts(TBMCOLL_ALGO_MESH, 1000);
        tbm_err_t err = { { 0 } };
        tbmcoll_comm_t *c = tbmcoll_comm_from_env(&o, &err);
        snprintf(want, sizeof(want), "MLX_JACCL_DEVICES=%s: the matrix is not a mesh: use the other algorithm", devs);
        bad |= TR_EXPECT(!c && strcmp(err.msg, want) == 0, "mesh on a ring matrix: %s", err.msg);
        tbmcoll_comm_free(c);
    }
    setenv("MLX_RANK", "1", 1);
    bad |= expect_env_error("coordinator never answers", "rank 1: cannot connect to the coordinator (rank 0) at "
                            "127.0.0.1:1: Connection refused (gave up after the connect timeout; is it running and "
                            "listening there?)");
    clear_env();
    unlink(hosts);
    unlink(devs);
    printf("environment errors: %s\n", bad ? "FAIL" : "ok");
    return bad;
}

int main(void)
{
    int bad = env_errors();

    bad |= run_env_cases();
    return bad ? 1 : 0;
}
