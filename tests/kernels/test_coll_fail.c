/* test_coll_fail.c: libtbmcoll never hangs: a peer killed or stopped mid-collective makes the others exit
 * non-zero within a bounded time naming it; connection and argument errors give their messages. */
#include "ranks.h"
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define VICTIM 2
#define COUNT (1u << 20)

typedef struct fail_case {
    tbmcoll_algo_t algo;
    tbmcoll_mesh_ar_t how;   /* a mesh's all-reduce: direct or halving */
    int sig;                 /* SIGKILL or SIGSTOP for the victim */
    int io_timeout_ms;
    size_t count;            /* floats per all-reduce: COUNT, or a small one (the ring sends it both ways) */
    double hit_at;           /* when the victim was hit (parent's clock) */
    tbmcoll_small_ar_t small;   /* a mesh's small all-reduce: auto, in one round or through rank 0 */
} fail_case_t;

/* Each rank: all-reduce in a loop until something fails; then the broken communicator must say so. */
static int busy_rank(int rank, int n, const char *const *addrs, void *arg)
{
    fail_case_t *fc = arg;
    tbmcoll_opts_t o = tr_opts(fc->algo, fc->io_timeout_ms);
    tbm_err_t err = { { 0 } }, again = { { 0 } };
    tbmcoll_comm_t *c;
    float *buf = calloc(fc->count, sizeof(float));
    double end = tr_now() + 30;
    const char *sticky = "the communicator is broken by an earlier failure: rank ";
    int rc = 0;

    o.mesh_allreduce = fc->how;
    o.small_allreduce = fc->small;
    c = tbmcoll_comm_from_addrs(rank, n, addrs, &o, &err);
    if (!c) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    tr_ready();
    while (rc == 0 && tr_now() < end)
        rc = tbmcoll_allreduce(c, buf, buf, fc->count, TBM_DT_F32, TBM_OP_SUM, &err);
    if (rc == 0)
        return 0;
    fprintf(stderr, "%s\n", err.msg);
    if (tbmcoll_barrier(c, &again) == 0 || strncmp(again.msg, sticky, strlen(sticky)) != 0)
        fprintf(stderr, "BROKEN-NOT-STICKY: %s\n", again.msg);
    tbmcoll_comm_free(c);
    free(buf);
    return 3;
}

static void hit_victim(const pid_t *pids, int n, void *arg)
{
    fail_case_t *fc = arg;

    if (tr_wait_ready(n, 10) < 0)
        return;
    usleep(200000);
    fc->hit_at = tr_now();
    kill(pids[VICTIM], fc->sig);
}

static int run_fail_case(tbmcoll_algo_t algo, tbmcoll_mesh_ar_t how, int sig, int io_timeout_ms, int n,
                         size_t count)
{
    fail_case_t fc = { .algo = algo, .how = how, .sig = sig, .io_timeout_ms = io_timeout_ms, .count = count,
                       .small = TBMCOLL_SMALL_AR_ONEROUND };
    int small = count * sizeof(float) <= TBMCOLL_SMALL_BYTES;
    int halving = algo == TBMCOLL_ALGO_MESH && how == TBMCOLL_MESH_AR_HALVING && !small;
    tr_result_t res[TR_MAX];
    double t0 = tr_now(), bound = io_timeout_ms / 1000.0 * 2 + 2;
    int k, bad = 0, neighbour, named = 0;

    tr_run(n, busy_rank, &fc, 60, hit_victim, VICTIM, res);
    bad |= TR_EXPECT(fc.hit_at > 0, "the ranks never became ready");
    for (k = 0; k < n && !bad; k++) {
        double after = res[k].seconds - (fc.hit_at - t0);
        if (k == VICTIM)
            continue;
        /* who must name the victim: on a mesh everyone; on a ring the rank receiving from it, and when it
         * was killed also the rank sending to it (a stopped rank still absorbs data in its socket buffers); a
         * small all-reduce on a ring goes both ways, so both neighbours receive from it */
        neighbour = (algo == TBMCOLL_ALGO_MESH && !halving) || (algo == TBMCOLL_ALGO_RING && k == (VICTIM + 1) % n) ||
                    (algo == TBMCOLL_ALGO_RING && (sig == SIGKILL || small) && k == (VICTIM + n - 1) % n);
        /* halving pairs the ranks step by step: the first to fail is one exchanging with the victim, and it
         * names it; the others may see that rank fail first (it closes its connections), or wait on one that
         * waits on the victim */
        named += strstr(res[k].err, "rank 2 (127.0.0.1:") && strstr(res[k].err, sig == SIGKILL ?
                 "closed the connection: it exited or was killed" : "lo for 1000 ms: it hangs");
        bad |= TR_EXPECT(!halving || strstr(res[k].err, "closed the connection: it exited or was killed") ||
                         strstr(res[k].err, "ms: it hangs"), "rank %d: unexpected message: %s", k, res[k].err);
        bad |= TR_EXPECT(res[k].status == 3, "%s %s: rank %d exit %d (want 3): %s", tbmcoll_algo_name(algo),
                         strsignal(sig), k, res[k].status, res[k].err);
        bad |= TR_EXPECT(after < bound, "rank %d took %.2f s after the hit (bound %.1f s)", k, after, bound);
        bad |= TR_EXPECT(!neighbour || strstr(res[k].err, "rank 2 (127.0.0.1:"), "rank %d does not name rank 2: %s",
                         k, res[k].err);
        /* a stopped victim: a rank times out on it, saying where its connection leaves this host (the loopback
         * here), or sees another rank exit first while still waiting on it */
        bad |= TR_EXPECT(!neighbour || strstr(res[k].err, sig == SIGKILL ? "closed the connection: it exited or "
                                                                          "was killed" : "lo for 1000 ms: it hangs") ||
                         (sig == SIGSTOP && strstr(res[k].err, "still waiting on rank 2 (")),
                         "rank %d: unexpected message: %s", k, res[k].err);
        bad |= TR_EXPECT(!strstr(res[k].err, "BROKEN-NOT-STICKY"), "rank %d: %s", k, res[k].err);
    }
    bad |= TR_EXPECT(!halving || named > 0, "halving: no rank names rank 2");
    printf("%s%s, %d ranks, %zu-byte all-reduces, rank 2 %s: %s\n", tbmcoll_algo_name(algo),
           algo == TBMCOLL_ALGO_MESH ? (halving ? " (halving)" : " (direct)") : "", n, count * sizeof(float),
           sig == SIGKILL ? "killed" : "stopped", bad ? "FAIL" : "ok");
    for (k = 0; k < n; k++)
        printf("  rank %d exit %d after %.2f s: %s", k, res[k].status, res[k].seconds, res[k].err);
    return bad;
}

/* A small all-reduce through rank 0 or by recursive doubling (a mesh's, or a ring of 4's), 4 ranks, rank 2
 * killed or stopped.
 * Through rank 0: rank 0, which waits on it, names it; ranks 1 and 3 wait on rank 0 alone and name it (it
 * closes its connections as it fails, or they time out on it). By doubling: a rank that exchanges with it
 * names it, the others the rank they wait on. Every rank fails within the bound, and stays failed. */
static int run_small_fail(tbmcoll_algo_t algo, tbmcoll_small_ar_t small, int sig)
{
    fail_case_t fc = { .algo = algo, .how = TBMCOLL_MESH_AR_AUTO, .sig = sig, .io_timeout_ms = 1000,
                       .count = 2, .small = small };
    int rooted = small == TBMCOLL_SMALL_AR_ROOTED, named = 0;
    const char *why = sig == SIGKILL ? "closed the connection: it exited or was killed" : "lo for 1000 ms: it hangs";
    tr_result_t res[TR_MAX];
    double t0 = tr_now(), bound = 1000 / 1000.0 * 2 + 2;
    int k, bad = 0;

    tr_run(4, busy_rank, &fc, 60, hit_victim, VICTIM, res);
    bad |= TR_EXPECT(fc.hit_at > 0, "the ranks never became ready");
    for (k = 0; k < 4 && !bad; k++) {
        double after = res[k].seconds - (fc.hit_at - t0);
        if (k == VICTIM)
            continue;
        bad |= TR_EXPECT(res[k].status == 3, "rank %d exit %d (want 3): %s", k, res[k].status, res[k].err);
        bad |= TR_EXPECT(after < bound, "rank %d took %.2f s after the hit (bound %.1f s)", k, after, bound);
        named += strstr(res[k].err, "rank 2 (127.0.0.1:") && strstr(res[k].err, why);
        bad |= TR_EXPECT(!rooted || k != 0 || (strstr(res[k].err, "rank 2 (127.0.0.1:") && strstr(res[k].err, why)),
                         "rank 0 does not name rank 2: %s", res[k].err);
        bad |= TR_EXPECT(!rooted || k == 0 || strstr(res[k].err, "rank 0 (127.0.0.1:"),
                         "rank %d does not name rank 0, where it waits: %s", k, res[k].err);
        bad |= TR_EXPECT(strstr(res[k].err, "closed the connection: it exited or was killed") ||
                         strstr(res[k].err, "lo for 1000 ms: it hangs"), "rank %d: unexpected message: %s", k,
                         res[k].err);
        bad |= TR_EXPECT(!strstr(res[k].err, "BROKEN-NOT-STICKY"), "rank %d: %s", k, res[k].err);
    }
    bad |= TR_EXPECT(named > 0, "no rank names rank 2");
    printf("%s, 4 ranks, 8-byte all-reduces %s, rank 2 %s: %s\n", tbmcoll_algo_name(algo),
           rooted ? "through rank 0" : "by recursive doubling",
           sig == SIGKILL ? "killed" : "stopped", bad ? "FAIL" : "ok");
    for (k = 0; k < 4; k++)
        printf("  rank %d exit %d after %.2f s: %s", k, res[k].status, res[k].seconds, res[k].err);
    return bad;
}

/* ---- errors without peers ---- */

static int expect_msg(const char *what, const tbm_err_t *err, const char *want)
{
    return TR_EXPECT(strcmp(err->msg, want) == 0, "%s:\n  got  %s\n  want %s", what, err->msg, want);
}

/* Rank 1 of 2 accepts from a process that speaks the first handshake (5 words, version 1). */
static int old_peer(int port, const tbmcoll_opts_t *o, const char *const *addrs, tbm_err_t *err)
{
    tbmcoll_opts_t slow = *o;
    pid_t pid;
    int st;

    slow.connect_timeout_ms = 5000;
    pid = fork();
    if (pid == 0) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
        uint32_t hello[5] = { htonl(0x54424d43u), htonl(1), htonl(0), htonl(2), htonl(1) };
        int fd, i;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        for (i = 0; i < 100; i++) {
            fd = socket(AF_INET, SOCK_STREAM, 0);
            if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
                break;
            close(fd);
            usleep(20000);
        }
        if (write(fd, hello, sizeof(hello)) != (ssize_t)sizeof(hello))
            _exit(1);
        sleep(3);
        _exit(0);
    }
    if (TR_EXPECT(!tbmcoll_comm_from_addrs(1, 2, addrs, &slow, err), "connected to an old peer")) {
        waitpid(pid, &st, 0);
        return 1;
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return 0;
}

static int connect_errors(void)
{
    tbmcoll_opts_t o = tr_opts(TBMCOLL_ALGO_MESH, 1000);
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t len = sizeof(sa);
    char a0[32], a1[32], want[512];
    const char *addrs[2] = { a0, a1 };
    const char *bad_addrs[2] = { "127.0.0.1:1", "localhost:5" };
    int ports[2], lfd, bad = 0;
    tbm_err_t err;

    o.connect_timeout_ms = 300;
    tr_free_ports(2, ports);
    snprintf(a0, sizeof(a0), "127.0.0.1:%d", ports[0]);
    snprintf(a1, sizeof(a1), "127.0.0.1:%d", ports[1]);
    bad |= TR_EXPECT(!tbmcoll_comm_from_addrs(0, 2, addrs, &o, &err), "rank 0 alone connected");
    snprintf(want, sizeof(want), "rank 0: cannot connect to rank 1 at %s: Connection refused (gave up after the "
             "connect timeout; is it running and listening there?)", a1);
    bad |= expect_msg("peer never starts", &err, want);
    bad |= TR_EXPECT(!tbmcoll_comm_from_addrs(1, 2, addrs, &o, &err), "rank 1 alone connected");
    bad |= expect_msg("nobody dials", &err, "rank 1: waited 300 ms for 1 of 1 lower or left rank(s) to connect: "
                      "they did not start, or cannot reach this rank's address");
    /* a peer of an older release: its hello (version 1) is shorter; it is named at once, not waited for */
    tr_free_ports(2, ports);
    snprintf(a0, sizeof(a0), "127.0.0.1:%d", ports[0]);
    snprintf(a1, sizeof(a1), "127.0.0.1:%d", ports[1]);
    bad |= old_peer(ports[1], &o, addrs, &err);
    bad |= TR_EXPECT(strstr(err.msg, "speaks version 1 of libtbmcoll's handshake, this rank 3: run the same "
                            "slurm-tbmesh on every Mac") != NULL, "old peer: %s", err.msg);
    bad |= TR_EXPECT(!tbmcoll_comm_from_addrs(0, 2, bad_addrs, &o, &err), "bad address accepted");
    bad |= expect_msg("bad address", &err, "address of rank 1: 'localhost' is not an IPv4 address: write a dotted "
                      "quad such as 10.0.0.1");
    bad |= TR_EXPECT(!tbmcoll_comm_from_addrs(2, 2, addrs, &o, &err), "rank 2 of 2 accepted");
    bad |= expect_msg("bad rank", &err, "rank 2 of 2: give 1 to 64 ranks, a rank from 0 to size-1 and one address "
                      "per rank");
    /* a port already taken by a listener */
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    lfd = socket(AF_INET, SOCK_STREAM, 0);
    bind(lfd, (struct sockaddr *)&sa, sizeof(sa));
    listen(lfd, 1);
    getsockname(lfd, (struct sockaddr *)&sa, &len);
    snprintf(a0, sizeof(a0), "127.0.0.1:%d", ntohs(sa.sin_port));
    bad |= TR_EXPECT(!tbmcoll_comm_from_addrs(0, 1, addrs, &o, &err), "bound twice");
    snprintf(want, sizeof(want), "cannot listen on %s: Address already in use (is the address local to this host "
             "and the port free?)", a0);
    bad |= expect_msg("port in use", &err, want);
    close(lfd);
    return bad;
}

static int argument_errors(void)
{
    tbmcoll_opts_t o = tr_opts(TBMCOLL_ALGO_MESH, 1000);
    int ports[1], bad = 0;
    char a0[32];
    const char *addrs[1] = { a0 };
    float x[4] = { 1, 2, 3, 4 }, y[4];
    tbm_err_t err;
    tbmcoll_comm_t *c;

    tr_free_ports(1, ports);
    snprintf(a0, sizeof(a0), "127.0.0.1:%d", ports[0]);
    c = tbmcoll_comm_from_addrs(0, 1, addrs, &o, &err);
    if (TR_EXPECT(c != NULL, "a group of one: %s", err.msg))
        return 1;
    bad |= TR_EXPECT(tbmcoll_allreduce(c, x, y, 4, TBM_DT_F32, TBM_OP_MAX, &err) == 0 && y[3] == 4, "1 rank");
    bad |= TR_EXPECT(tbmcoll_allreduce(c, x, y, 4, (tbm_dtype_t)9, TBM_OP_SUM, &err) == -1, "bad type");
    bad |= expect_msg("bad type", &err, "unknown element type 9: use TBM_DT_F32, _F16, _BF16 or _I32");
    bad |= TR_EXPECT(tbmcoll_allreduce(c, x, y, 4, TBM_DT_F32, (tbm_redop_t)7, &err) == -1, "bad op");
    bad |= expect_msg("bad op", &err, "unknown reduction 7: use TBM_OP_SUM or TBM_OP_MAX");
    bad |= TR_EXPECT(tbmcoll_allgather(c, NULL, y, 4, TBM_DT_F32, &err) == -1, "NULL");
    bad |= expect_msg("NULL", &err, "a NULL buffer for 4 elements");
    bad |= TR_EXPECT(tbmcoll_reduce_scatter(c, x, y, SIZE_MAX / 4, TBM_DT_F32, TBM_OP_SUM, &err) == -1, "huge");
    bad |= TR_EXPECT(strstr(err.msg, "are too many") != NULL, "huge: %s", err.msg);
    bad |= TR_EXPECT(tbmcoll_broadcast(c, x, 4, TBM_DT_F32, 1, &err) == -1, "root");
    bad |= expect_msg("root", &err, "root 1 is not a rank of this group (0 to 0)");
    bad |= TR_EXPECT(tbmcoll_send(c, x, 4, TBM_DT_F32, 0, &err) == -1, "self");
    bad |= expect_msg("self", &err, "rank 0 cannot send to or receive from itself");
    bad |= TR_EXPECT(tbmcoll_barrier(NULL, &err) == -1, "NULL comm");
    bad |= expect_msg("NULL comm", &err, "no communicator (NULL)");
    tbmcoll_comm_free(c);
    tbmcoll_comm_free(NULL);
    bad |= TR_EXPECT(strcmp(tbmcoll_algo_name(TBMCOLL_ALGO_RING), "ring") == 0, "algo name");
    bad |= TR_EXPECT(tbmcoll_algo_parse("tree", &o.algo, &err) == -1, "algo parse");
    bad |= expect_msg("algo parse", &err, "unknown algorithm 'tree': use auto, mesh or ring");
    return bad;
}

/* Two ranks whose options disagree where they must agree: rank 0's differ from the defaults rank 1 keeps, and
 * the handshake refuses; rank 1 accepts rank 0's connection and must say `want`. */
typedef struct mismatch {
    const char *name;
    tbmcoll_algo_t algo;
    int streams;             /* rank 0's (rank 1: 3) */
    size_t segment_bytes;    /* rank 0's (rank 1: 0, the default 256 KiB) */
    const char *want;
    tbmcoll_mesh_ar_t how;   /* rank 0's mesh all-reduce (the others: auto) */
    tbmcoll_small_ar_t small;   /* rank 0's small all-reduce (the others: auto) */
} mismatch_t;

static int mismatch_rank(int rank, int n, const char *const *addrs, void *arg)
{
    const mismatch_t *mm = arg;
    tbmcoll_opts_t o = tr_opts(mm->algo, 2000);
    tbm_err_t err = { { 0 } };
    tbmcoll_comm_t *c;

    o.connect_timeout_ms = 2000;
    o.streams = rank == 0 ? mm->streams : 3;
    o.segment_bytes = rank == 0 ? mm->segment_bytes : 0;
    o.mesh_allreduce = rank == 0 ? mm->how : TBMCOLL_MESH_AR_AUTO;
    o.small_allreduce = rank == 0 ? mm->small : TBMCOLL_SMALL_AR_AUTO;
    c = tbmcoll_comm_from_addrs(rank, n, addrs, &o, &err);
    if (c) {
        tbmcoll_comm_free(c);
        return fprintf(stderr, "connected with %s\n", mm->name), 1;
    }
    fprintf(stderr, "%s\n", err.msg);
    return rank == 1 && !strstr(err.msg, mm->want) ? 1 : 0;
}

/* On a ring of 4, rank r+2 is not connected: refused with a message. */
static int ring_neighbours_rank(int rank, int n, const char *const *addrs, void *arg)
{
    tbmcoll_opts_t o = tr_opts(TBMCOLL_ALGO_RING, 5000);
    tbm_err_t err = { { 0 } };
    tbmcoll_comm_t *c = tbmcoll_comm_from_addrs(rank, n, addrs, &o, &err);
    char want[200];
    float x = 1;
    int bad;

    if (!c)
        return fprintf(stderr, "%s\n", err.msg), 2;
    bad = TR_EXPECT(tbmcoll_send(c, &x, 1, TBM_DT_F32, (rank + 2) % n, &err) == -1, "non-neighbour send");
    snprintf(want, sizeof(want), "rank %d is not a ring neighbour of rank %d: on a ring only ranks %d and %d are "
             "connected", (rank + 2) % n, rank, (rank + n - 1) % n, (rank + 1) % n);
    bad |= expect_msg("non-neighbour", &err, want);
    bad |= TR_EXPECT(tbmcoll_barrier(c, &err) == 0, "barrier after a refused call: %s", err.msg);
    tbmcoll_comm_free(c);
    return bad;
}

/* A peer's end is seen as closed even with data it sent still unread (a killed rank's last bytes): before
 * its close tbmcoll_peer_closed() says 0, after it EPIPE, and the data is still there to read. */
static int peer_closed_behind_unread_data(void)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t len = sizeof(sa);
    int lfd = socket(AF_INET, SOCK_STREAM, 0), a = -1, b = -1, bad = 0;
    char buf[100] = { 0 };

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 1) < 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &len) < 0 || (a = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
        connect(a, (struct sockaddr *)&sa, sizeof(sa)) < 0 || (b = accept(lfd, NULL, NULL)) < 0) {
        printf("peer closed: cannot set up a loopback connection: %s\n", strerror(errno));
        bad = 1;
        goto out;
    }
    if (send(a, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
        printf("peer closed: send failed\n");
        bad = 1;
        goto out;
    }
    usleep(20000);
    if (tbmcoll_peer_closed(b) != 0) {
        printf("peer closed: said closed while the peer is still there\n");
        bad = 1;
    }
    close(a);
    a = -1;
    usleep(20000);
    if (tbmcoll_peer_closed(b) != EPIPE) {
        printf("peer closed: not seen behind 100 unread bytes\n");
        bad = 1;
    }
    if (recv(b, buf, sizeof(buf), MSG_DONTWAIT) != (ssize_t)sizeof(buf)) {
        printf("peer closed: the unread data was lost\n");
        bad = 1;
    }
    printf("peer closed behind unread data: %s\n", bad ? "FAIL" : "ok");
out:
    if (a >= 0)
        close(a);
    if (b >= 0)
        close(b);
    if (lfd >= 0)
        close(lfd);
    return bad;
}

/* A send call moves at most TBMCOLL_SEND_CALL_MAX, even where the socket would take far more at once (send
 * buffers of 8 MiB, forced: the suite runs as root); the rest follows in later calls, in order. */
static int send_calls_are_bounded(void)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t len = sizeof(sa), ol = sizeof(int);
    int lfd = socket(AF_INET, SOCK_STREAM, 0), a = -1, b = -1, bad = 0, big = 8 << 20, got = 0;
    size_t total = 4u << 20, sent = 0, rcvd = 0, k;
    unsigned char *out = malloc(total), *in = malloc(total);
    long n, first = -1;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (!out || !in || lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 1) < 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &len) < 0 || (a = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
        (setsockopt(a, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)) < 0 &&
         setsockopt(a, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big)) < 0) ||
        connect(a, (struct sockaddr *)&sa, sizeof(sa)) < 0 || (b = accept(lfd, NULL, NULL)) < 0) {
        printf("send calls: cannot set up a loopback connection: %s\n", strerror(errno));
        bad = 1;
        goto out;
    }
    if (setsockopt(b, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0)
        (void)setsockopt(b, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
    if (getsockopt(a, SOL_SOCKET, SO_SNDBUF, &got, &ol) < 0 || got < (int)(2 * TBMCOLL_SEND_CALL_MAX)) {
        printf("send calls: a send buffer of %d bytes (not root?): cannot tell a bounded call\n", got);
        bad = 1;
        goto out;
    }
    for (k = 0; k < total; k++)
        out[k] = (unsigned char)(k * 7 + k / 4093);
    while (rcvd < total) {
        if (sent < total) {
            if ((n = tbmcoll_sock_io(a, 1, out + sent, total - sent)) < 0)
                break;
            if (first < 0 && n > 0)
                first = n;
            if (n > (long)TBMCOLL_SEND_CALL_MAX) {
                printf("send calls: one call moved %ld bytes (at most %u)\n", n, TBMCOLL_SEND_CALL_MAX);
                bad = 1;
            }
            sent += (size_t)n;
        }
        if ((n = tbmcoll_sock_io(b, 0, in + rcvd, total - rcvd)) < 0)
            break;
        rcvd += (size_t)n;
    }
    if (rcvd != total || memcmp(in, out, total) != 0) {
        printf("send calls: %zu of %zu bytes arrived, %s\n", rcvd, total,
               rcvd == total ? "not in order" : "the rest lost");
        bad = 1;
    }
    printf("send calls bounded (the first moved %ld bytes, the socket takes %d): %s\n", first, got,
           bad ? "FAIL" : "ok");
out:
    free(out);
    free(in);
    if (a >= 0)
        close(a);
    if (b >= 0)
        close(b);
    if (lfd >= 0)
        close(lfd);
    return bad;
}

int main(void)
{
    tr_result_t res[TR_MAX];
    /* streams and segments: 2 against 3 streams; segments of 64 against 256 KiB, on a mesh and on a ring */
    static const mismatch_t mismatches[] = {
        { "streams 2 against 3", TBMCOLL_ALGO_MESH, 2, 0,
          "uses 2 connection(s) per pair of ranks but this rank 3: give every rank the same number of streams",
          TBMCOLL_MESH_AR_AUTO, TBMCOLL_SMALL_AR_AUTO },
        { "mesh, segments of 64 against 256 KiB", TBMCOLL_ALGO_MESH, 3, 65536,
          "(rank 0) cuts its transfers in segments of 65536 bytes but this rank in segments of 262144: give every "
          "rank the same segment size", TBMCOLL_MESH_AR_AUTO, TBMCOLL_SMALL_AR_AUTO },
        { "ring, segments of 64 against 256 KiB", TBMCOLL_ALGO_RING, 3, 65536,
          "(rank 0) cuts its transfers in segments of 65536 bytes but this rank in segments of 262144: give every "
          "rank the same segment size", TBMCOLL_MESH_AR_AUTO, TBMCOLL_SMALL_AR_AUTO },
    };
    /* 4 ranks (a mesh learns every rank's choice as it is made): rank 0 asks for halving, the others for auto */
    static const mismatch_t how_mismatch = {
        "mesh all-reduce halving against auto", TBMCOLL_ALGO_MESH, 3, 0,
        "rank 1: rank 0 asks for the mesh all-reduce 'halving' but this rank for 'auto': give every rank the "
        "same", TBMCOLL_MESH_AR_HALVING, TBMCOLL_SMALL_AR_AUTO };
    static const mismatch_t small_mismatch = {
        "small all-reduce rooted against auto", TBMCOLL_ALGO_MESH, 3, 0,
        "rank 1: rank 0 asks for the small all-reduce 'rooted' but this rank for 'auto': give every rank the "
        "same", TBMCOLL_MESH_AR_AUTO, TBMCOLL_SMALL_AR_ROOTED };
    size_t m;
    int bad = 0, k;

    signal(SIGPIPE, SIG_IGN);
    bad |= peer_closed_behind_unread_data();
    bad |= send_calls_are_bounded();
    bad |= connect_errors();
    bad |= argument_errors();
    bad |= tr_run(4, ring_neighbours_rank, NULL, 30, NULL, -1, res);
    for (k = 0; k < 4; k++)
        if (res[k].status)
            printf("ring neighbours: rank %d exit %d: %s", k, res[k].status, res[k].err);
    for (m = 0; m < sizeof(mismatches) / sizeof(mismatches[0]); m++) {
        bad |= tr_run(2, mismatch_rank, (void *)&mismatches[m], 30, NULL, -1, res);
        for (k = 0; k < 2; k++)
            printf("%s: rank %d exit %d: %s", mismatches[m].name, k, res[k].status, res[k].err);
    }
    bad |= tr_run(4, mismatch_rank, (void *)&how_mismatch, 30, NULL, -1, res);
    for (k = 0; k < 4; k++)
        printf("%s: rank %d exit %d: %s", how_mismatch.name, k, res[k].status, res[k].err);
    bad |= tr_run(3, mismatch_rank, (void *)&small_mismatch, 30, NULL, -1, res);
    for (k = 0; k < 3; k++)
        printf("%s: rank %d exit %d: %s", small_mismatch.name, k, res[k].status, res[k].err);
    bad |= run_fail_case(TBMCOLL_ALGO_MESH, TBMCOLL_MESH_AR_DIRECT, SIGKILL, 4000, 4, COUNT);
    bad |= run_fail_case(TBMCOLL_ALGO_RING, 0, SIGKILL, 4000, 4, COUNT);
    bad |= run_fail_case(TBMCOLL_ALGO_MESH, TBMCOLL_MESH_AR_DIRECT, SIGSTOP, 1000, 3, COUNT);
    bad |= run_fail_case(TBMCOLL_ALGO_RING, 0, SIGSTOP, 1000, 3, COUNT);
    /* the mesh's halving all-reduce, 4 ranks */
    bad |= run_fail_case(TBMCOLL_ALGO_MESH, TBMCOLL_MESH_AR_HALVING, SIGKILL, 4000, 4, COUNT);
    bad |= run_fail_case(TBMCOLL_ALGO_MESH, TBMCOLL_MESH_AR_HALVING, SIGSTOP, 1000, 4, COUNT);
    /* the ring's small all-reduce (both ways around), with 4 and 5 ranks */
    bad |= run_fail_case(TBMCOLL_ALGO_RING, 0, SIGKILL, 4000, 4, 2);
    bad |= run_fail_case(TBMCOLL_ALGO_RING, 0, SIGSTOP, 1000, 4, 2);
    bad |= run_fail_case(TBMCOLL_ALGO_RING, 0, SIGSTOP, 1000, 5, 2);
    /* the mesh's small all-reduce in one round (forced: auto goes through rank 0 where ranks outnumber cores),
     * through rank 0 and by recursive doubling */
    bad |= run_fail_case(TBMCOLL_ALGO_MESH, TBMCOLL_MESH_AR_DIRECT, SIGKILL, 4000, 4, 2);
    bad |= run_small_fail(TBMCOLL_ALGO_MESH, TBMCOLL_SMALL_AR_ROOTED, SIGKILL);
    bad |= run_small_fail(TBMCOLL_ALGO_MESH, TBMCOLL_SMALL_AR_ROOTED, SIGSTOP);
    bad |= run_small_fail(TBMCOLL_ALGO_MESH, TBMCOLL_SMALL_AR_DOUBLING, SIGKILL);
    bad |= run_small_fail(TBMCOLL_ALGO_MESH, TBMCOLL_SMALL_AR_DOUBLING, SIGSTOP);
    /* a ring of 4 doubling over its corners (each exchange with a neighbour) */
    bad |= run_small_fail(TBMCOLL_ALGO_RING, TBMCOLL_SMALL_AR_DOUBLING, SIGKILL);
    bad |= run_small_fail(TBMCOLL_ALGO_RING, TBMCOLL_SMALL_AR_DOUBLING, SIGSTOP);
    return bad ? 1 : 0;
}
