/* rendezvous.c: a communicator from MLX's environment: the ring hostfile (MLX_HOSTFILE), or the JACCL
 * device matrix and coordinator (MLX_IBV_DEVICES, MLX_JACCL_COORDINATOR), with their JACCL_* aliases. */
#include "coll.h"
#include "clock.h"
#include "fileio.h"
#include "scalar.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define COORD_MAGIC 0x54424d52u   /* "TBMR" */
#define COORD_HDR_BYTES 12        /* magic, rank, group size: 32 bits each, network order */
#define ROW_BYTES 6               /* one table cell: IPv4 (4) + port (2), network order */
#define COORD_PENDING_MAX (2 * TBM_MLX_MATRIX_MAX)   /* accepted connections not heard out yet */

/* The first set variable of a list of aliases (the first name wins); its name in *which. */
static const char *env_first(const char *const *names, const char **which)
{
    const char *v;

    for (; *names; names++)
        if ((v = getenv(*names)) && *v) {
            *which = *names;
            return v;
        }
    return NULL;
}

static int parse_rank(const char *var, const char *text, int size, int *rank, tbm_err_t *err)
{
    long long v;

    if (tbm_parse_ll(text, 10, 0, size - 1, &v) < 0)
        return tbm_errprintf(err, "%s='%s' is not a rank of this group: give a number from 0 to %d", var, text,
                             size - 1);
    *rank = (int)v;
    return 0;
}

/* Read a whole file of at most TBM_MLX_TEXT_MAX bytes; `var` names the variable that pointed at it. */
static char *read_file(const char *path, const char *var, size_t *len, tbm_err_t *err)
{
    char *text = tbm_read_file(path, TBM_MLX_TEXT_MAX, len, err);

    if (!text)
        tbm_errprefix(err, "%s=", var);
    return text;
}

static const char *const rank_vars[] = { "JACCL_RANK", "MLX_RANK", NULL };
static const char *const ring_rank_vars[] = { "MLX_RANK", NULL };
static const char *const devices_vars[] = { "JACCL_IBV_DEVICES", "MLX_IBV_DEVICES", "MLX_JACCL_DEVICES", NULL };
static const char *const coord_vars[] = { "JACCL_COORDINATOR", "MLX_JACCL_COORDINATOR", NULL };
static const char *const ring_pref_vars[] = { "JACCL_RING", "MLX_JACCL_RING", NULL };

static int env_rank(const char *const *vars, int size, int *rank, tbm_err_t *err)
{
    const char *which = vars[0], *v = env_first(vars, &which);

    if (!v)
        return tbm_errprintf(err, "%s is not set: every rank needs its rank number (0 to %d)", vars[0], size - 1);
    return parse_rank(which, v, size, rank, err);
}

/* A parser's result rc, its message (if any) prefixed with the variable that named the file. */
static int named_by(int rc, const char *var, tbm_err_t *err)
{
    if (rc < 0)
        tbm_errprefix(err, "%s: ", var);
    return rc;
}

/* ---- ring hostfile ---- */

static tbmcoll_comm_t *from_hostfile(const char *path, const tbmcoll_opts_t *o, tbm_err_t *err)
{
    static const char var[] = "MLX_HOSTFILE";
    tbm_mlx_hostfile_t *hf = calloc(1, sizeof(*hf));
    tbm_mlx_addr_t dial[TBM_MLX_RING_MAX];
    tbmcoll_comm_t *c = NULL;
    size_t len = 0;
    char *text = NULL;
    int j, rank, lfd;

    if (!hf || !(text = read_file(path, var, &len, err)) ||
        named_by(tbm_mlx_hostfile_parse(text, len, path, hf, err), var, err) < 0 ||
        env_rank(ring_rank_vars, hf->nranks, &rank, err) < 0)
        goto out;
    for (j = 0; j < hf->nranks; j++)
        dial[j] = hf->addr[j][0];
    if ((lfd = tbmcoll_listen(o, &dial[rank], err)) < 0) {
        tbm_errprefix(err, "rank %d (%s %s): ", rank, var, path);
        goto out;
    }
    c = tbmcoll_comm_connect(rank, hf->nranks, o->algo == TBMCOLL_ALGO_MESH ? TBMCOLL_ALGO_MESH : TBMCOLL_ALGO_RING,
                             o, dial, &lfd, 1, err);
    close(lfd);
out:
    free(text);
    free(hf);
    return c;
}

/* ---- JACCL device matrix and coordinator ---- */

/* The IPv4 address of interface ifname (getifaddrs). */
static int iface_ipv4(const char *ifname, tbm_mlx_addr_t *out, tbm_err_t *err)
{
    struct ifaddrs *ifs, *i;
    int found = 0, rc = -1;

    if (getifaddrs(&ifs) < 0)
        return tbm_errprintf(err, "cannot list network interfaces: %s", strerror(errno));
    for (i = ifs; i; i = i->ifa_next) {
        if (strcmp(i->ifa_name, ifname) != 0)
            continue;
        found = 1;
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
            struct sockaddr_in *sa = (struct sockaddr_in *)i->ifa_addr;
            memcpy(&out->ip_be, &sa->sin_addr.s_addr, 4);
            inet_ntop(AF_INET, &sa->sin_addr, out->ip, sizeof(out->ip));
            rc = 0;
            break;
        }
    }
    freeifaddrs(ifs);
    if (rc < 0)
        tbm_errprintf(err, "interface %s %s: give every Thunderbolt interface in use an IPv4 address (JACCL "
                      "needs it too)", ifname, found ? "has no IPv4 address" : "does not exist on this host");
    return rc;
}

/* This rank's row of the address table: where it listens for each peer (one listener per distinct IP). */
static int my_row(const tbm_mlx_devmatrix_t *m, int rank, const char *path, const tbmcoll_opts_t *o,
                  tbm_mlx_addr_t *row, int *lfds, int *nl, tbm_err_t *err)
{
    char ifname[IF_NAMESIZE + 1];
    int j, k;

    for (j = 0; j < m->n; j++) {
        memset(&row[j], 0, sizeof(row[j]));
        if (j == rank || m->ndev[rank][j] == 0)
            continue;
        if (tbm_mlx_device_iface(m->dev[rank][j][0], ifname, sizeof(ifname), err) < 0 ||
            iface_ipv4(ifname, &row[j], err) < 0)
            return tbm_errprefix(err, "%s: rank %d faces rank %d through %s: ", path, rank, j, m->dev[rank][j][0]);
        for (k = 0; k < j && row[k].ip_be != row[j].ip_be; k++)
            ;
        if (k < j && row[k].port) {
            row[j].port = row[k].port;       /* same interface address: same listener */
            continue;
        }
        if ((lfds[*nl] = tbmcoll_listen(o, &row[j], err)) < 0)
            return -1;
        (*nl)++;
    }
    return 0;
}

static void put_row(unsigned char *p, const tbm_mlx_addr_t *row, int n)
{
    int j;

    for (j = 0; j < n; j++, p += ROW_BYTES) {
        uint16_t port = htons(row[j].port);
        memcpy(p, &row[j].ip_be, 4);
        memcpy(p + 4, &port, 2);
    }
}

static void get_row(const unsigned char *p, tbm_mlx_addr_t *row, int n)
{
    int j;

    for (j = 0; j < n; j++, p += ROW_BYTES) {
        uint16_t port;
        memcpy(&row[j].ip_be, p, 4);
        memcpy(&port, p + 4, 2);
        row[j].port = ntohs(port);
        inet_ntop(AF_INET, p, row[j].ip, sizeof(row[j].ip));
    }
}

/* An accepted connection the coordinator has not heard out yet: its header, then the row of the rank it
 * names. */
typedef struct coord_peer {
    int fd;
    int rank;                       /* -1 while the header is still coming */
    size_t got;                     /* bytes of the header, then of the row */
    int64_t until;                  /* the whole header by then, or it is a stray */
    unsigned char hdr[COORD_HDR_BYTES];
    char from[TBMCOLL_ADDR_MAX];
} coord_peer_t;

#define COORD_STRAYS_SAID 8   /* stray connections named on stderr, one line each; the rest are counted */

/* Close a connection that is not a rank of this job, say so on stderr (the first COORD_STRAYS_SAID of them;
 * *dropped counts them all), and forget it (the last one takes its place). */
static void drop_stray(const tbm_mlx_addr_t *coord, coord_peer_t *p, int k, int *np, long *dropped,
                       const char *why)
{
    if (++*dropped <= COORD_STRAYS_SAID)
        fprintf(stderr, "libtbmcoll: coordinator %s:%u: dropped a stray connection from %s: %s\n", coord->ip,
                coord->port, p[k].from, why);
    close(p[k].fd);
    p[k] = p[--*np];
}

/* The connection not heard out yet that came first, of those still sending their header (a rank sends its
 * header as soon as it is connected); -1 when there is none. */
static int oldest_stray(const coord_peer_t *p, int np)
{
    int k, best = -1;

    for (k = 0; k < np; k++)
        if (p[k].rank < 0 && (best < 0 || p[k].until < p[best].until))
            best = k;
    return best;
}

/* With COORD_PENDING_MAX connections not heard out yet, close the stray that came first, so that the new one
 * can be taken. */
static void make_room(const tbm_mlx_addr_t *coord, coord_peer_t *p, int *np, long *dropped)
{
    char why[96];
    int k;

    if (*np < COORD_PENDING_MAX || (k = oldest_stray(p, *np)) < 0)
        return;
    snprintf(why, sizeof(why), "closed to make room for a new connection (at most %d wait for their header)",
             COORD_PENDING_MAX);
    drop_stray(coord, p, k, np, dropped, why);
}

/* Why a connection is not a rank: what it sent of its header before it stopped. */
static const char *stray_why(const coord_peer_t *p, const char *how, char *out, size_t outsz)
{
    if (p->got == 0)
        snprintf(out, outsz, "it sent nothing %s", how);
    else
        snprintf(out, outsz, "it sent %zu of the %d header bytes %s", p->got, COORD_HDR_BYTES, how);
    return out;
}

/* The header in: 1 a rank (its slot claimed in fds), 0 a stray (not our magic), -1 a wrong rank (err). */
static int coord_header(coord_peer_t *p, int n, int *fds, tbm_err_t *err)
{
    uint32_t v[3];
    int i;

    for (i = 0; i < 3; i++) {
        memcpy(&v[i], p->hdr + 4 * i, 4);
        v[i] = ntohl(v[i]);
    }
    if (v[0] != COORD_MAGIC)
        return 0;
    if (v[2] != (uint32_t)n || v[1] == 0 || v[1] >= (uint32_t)n || fds[v[1]] >= 0)
        return tbm_errprintf(err, "coordinator: the peer at %s says rank %u of %u: expected a distinct rank from 1 "
                             "to %d of %d (every rank must read the same matrix and have its own rank)", p->from,
                             v[1], v[2], n - 1, n);
    p->rank = (int)v[1];
    p->got = 0;
    fds[p->rank] = p->fd;
    return 1;
}

/* A new connection to hear out (its header by TBMCOLL_STRAY_HELLO_MS from now). Returns -1 (err) when the
 * listener failed, else 0 (a connection that went away before it was accepted is no error). */
static int coord_accept(int lfd, coord_peer_t *p, int *np, tbm_err_t *err)
{
    int fd = tbmcoll_accept(&lfd, 1, tbm_now_ms(), p[*np].from, sizeof(p[*np].from), err);

    if (fd == -2)
        return -1;
    if (fd >= 0) {
        p[*np].fd = fd;
        p[*np].rank = -1;
        p[*np].got = 0;
        p[*np].until = tbm_now_ms() + TBMCOLL_STRAY_HELLO_MS;
        (*np)++;
    }
    tbm_errclear(err);
    return 0;
}

/* Rank 0's side: accept every other rank's row, then send the whole table back to each. The listener and
 * every connection not heard out yet are watched together, and a connection that does not send its whole
 * header within TBMCOLL_STRAY_HELLO_MS is dropped as a stray: a silent or slow client holds up nobody. */
static int coord_serve(const tbm_mlx_addr_t *coord, int n, unsigned char *table, int64_t deadline,
                       const tbmcoll_opts_t *o, tbm_err_t *err)
{
    tbm_mlx_addr_t bind_addr = *coord;
    size_t rowb = (size_t)n * ROW_BYTES;
    coord_peer_t p[COORD_PENDING_MAX];
    struct pollfd pf[COORD_PENDING_MAX + 1];
    char why[160], how[32], ended[96];
    int fds[TBM_MLX_MATRIX_MAX], lfd, got = 0, np = 0, rc = -1, i, k, first;
    long dropped = 0;
    int64_t now, wake;

    for (i = 0; i < n; i++)
        fds[i] = -1;
    if ((lfd = tbmcoll_listen(o, &bind_addr, err)) < 0)
        return tbm_errprefix(err, "coordinator: ");
    snprintf(how, sizeof(how), "in %d ms", TBMCOLL_STRAY_HELLO_MS);
    while (got < n - 1) {
        now = tbm_now_ms();
        wake = deadline;
        for (k = np - 1; k >= 0; k--) {
            if (p[k].rank < 0 && now >= p[k].until)
                drop_stray(coord, p, k, &np, &dropped, stray_why(&p[k], how, why, sizeof(why)));
            else if (p[k].rank < 0 && p[k].until < wake)
                wake = p[k].until;
        }
        if (now >= deadline) {
            tbm_errprintf(err, "coordinator %s:%u: only %d of %d ranks connected before the connect timeout: the "
                          "others did not start or cannot reach it", coord->ip, coord->port, got + 1, n);
            goto out;
        }
        /* full: a new connection is still taken, the stray that came first closed for it (a rank sends its
         * header at once, so a flood of silent connections cannot hold the ranks in the backlog) */
        first = np < COORD_PENDING_MAX || oldest_stray(p, np) >= 0;
        if (first)
            pf[0] = (struct pollfd){ .fd = lfd, .events = POLLIN, .revents = 0 };
        for (k = 0; k < np; k++)
            pf[first + k] = (struct pollfd){ .fd = p[k].fd, .events = POLLIN, .revents = 0 };
        if (poll(pf, (nfds_t)(first + np), (int)(wake - now)) < 0) {
            if (errno == EINTR)
                continue;
            tbm_errprintf(err, "coordinator: %s", strerror(errno));
            goto out;
        }
        for (k = np - 1; k >= 0; k--) {
            int head = p[k].rank < 0;
            unsigned char *buf = head ? p[k].hdr : table + (size_t)p[k].rank * rowb;
            size_t want = head ? COORD_HDR_BYTES : rowb;
            ssize_t r;

            if (!pf[first + k].revents)
                continue;
            r = recv(p[k].fd, buf + p[k].got, want - p[k].got, MSG_DONTWAIT);
            if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
                continue;
            if (r <= 0 && head) {
                snprintf(ended, sizeof(ended), "%s%s%s", r == 0 ? "and closed the connection" : "(",
                         r == 0 ? "" : strerror(errno), r == 0 ? "" : ")");
                drop_stray(coord, p, k, &np, &dropped, stray_why(&p[k], ended, why, sizeof(why)));
                continue;
            }
            if (r <= 0) {
                tbm_errprintf(err, "%s: %s", p[k].from, r == 0 ? "the connection was closed" : strerror(errno));
                goto out;
            }
            if ((p[k].got += (size_t)r) < want)
                continue;
            if (!head) {
                p[k] = p[--np];     /* the row is in; the connection stays in fds */
                got++;
                continue;
            }
            if ((i = coord_header(&p[k], n, fds, err)) < 0)
                goto out;
            if (i == 0)
                drop_stray(coord, p, k, &np, &dropped, "its header is not a rank's");
        }
        if (first && pf[0].revents)
            make_room(coord, p, &np, &dropped);
        if (first && pf[0].revents && coord_accept(lfd, p, &np, err) < 0)
            goto out;
    }
    for (i = 1; i < n; i++)
        if (tbmcoll_write_full(fds[i], table, rowb * (size_t)n, deadline, "a rank", err) < 0)
            goto out;
    rc = 0;
out:
    if (dropped > COORD_STRAYS_SAID)
        fprintf(stderr, "libtbmcoll: coordinator %s:%u: dropped %ld stray connections in all (the first %d "
                "named above)\n", coord->ip, coord->port, dropped, COORD_STRAYS_SAID);
    for (k = 0; k < np; k++)
        if (p[k].rank < 0)
            close(p[k].fd);     /* a rank's connection is in fds */
    for (i = 1; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    close(lfd);
    return rc;
}

/* Any other rank: send this rank's row to the coordinator and read the whole table. */
static int coord_ask(const tbm_mlx_addr_t *coord, int rank, int n, unsigned char *table, int64_t deadline,
                     const tbmcoll_opts_t *o, tbm_err_t *err)
{
    uint32_t v[3] = { htonl(COORD_MAGIC), htonl((uint32_t)rank), htonl((uint32_t)n) };
    size_t rowb = (size_t)n * ROW_BYTES;
    int fd = tbmcoll_dial(o, coord, deadline, "the coordinator (rank 0)", err), rc;

    if (fd < 0)
        return -1;
    rc = tbmcoll_write_full(fd, v, sizeof(v), deadline, "the coordinator", err) < 0 ||
         tbmcoll_write_full(fd, table + (size_t)rank * rowb, rowb, deadline, "the coordinator", err) < 0 ||
         tbmcoll_read_full(fd, table, rowb * (size_t)n, deadline, "the coordinator", err) < 0 ? -1 : 0;
    close(fd);
    return rc;
}

static tbmcoll_comm_t *jaccl_connect(const tbm_mlx_devmatrix_t *m, int rank, const char *path,
                                     const tbm_mlx_addr_t *coord, tbmcoll_algo_t algo, const tbmcoll_opts_t *o,
                                     tbm_err_t *err)
{
    unsigned char table[TBM_MLX_MATRIX_MAX * TBM_MLX_MATRIX_MAX * ROW_BYTES];
    tbm_mlx_addr_t row[TBM_MLX_MATRIX_MAX], dial[TBM_MLX_MATRIX_MAX];
    int lfds[TBM_MLX_MATRIX_MAX], nl = 0, j, rc;
    int64_t deadline = tbm_now_ms() + o->connect_timeout_ms;
    size_t rowb = (size_t)m->n * ROW_BYTES;
    tbmcoll_comm_t *c = NULL;

    if (my_row(m, rank, path, o, row, lfds, &nl, err) < 0)
        goto out;
    put_row(table + (size_t)rank * rowb, row, m->n);
    if (m->n == 1)
        rc = 0;
    else if (rank == 0)
        rc = coord_serve(coord, m->n, table, deadline, o, err);
    else
        rc = coord_ask(coord, rank, m->n, table, deadline, o, err);
    if (rc < 0) {
        tbm_errprefix(err, "rank %d: ", rank);
        goto out;
    }
    for (j = 0; j < m->n; j++)
        get_row(table + (size_t)j * rowb + (size_t)rank * ROW_BYTES, &dial[j], 1);
    c = tbmcoll_comm_connect(rank, m->n, algo, o, dial, lfds, nl, err);
out:
    for (j = 0; j < nl; j++)
        close(lfds[j]);
    return c;
}

static tbmcoll_comm_t *from_matrix(const char *var, const char *path, const tbmcoll_opts_t *o, tbm_err_t *err)
{
    tbm_mlx_devmatrix_t *m = calloc(1, sizeof(*m));
    tbmcoll_comm_t *c = NULL;
    tbm_mlx_addr_t coord;
    const char *cvar = coord_vars[1], *ctext, *which;
    tbmcoll_algo_t algo = o->algo;
    size_t len = 0;
    char *text = NULL;
    int rank;

    if (!m || !(text = read_file(path, var, &len, err)) ||
        named_by(tbm_mlx_devmatrix_parse(text, len, path, m, err), var, err) < 0 ||
        env_rank(rank_vars, m->n, &rank, err) < 0)
        goto out;
    if (!(ctext = env_first(coord_vars, &cvar))) {
        tbm_errprintf(err, "MLX_JACCL_COORDINATOR is not set: give rank 0's ipv4:port (rank 0 binds it)");
        goto out;
    }
    if (tbm_mlx_addr_parse(ctext, cvar, &coord, err) < 0)
        goto out;
    if (algo == TBMCOLL_ALGO_AUTO)
        algo = m->is_mesh && !env_first(ring_pref_vars, &which) ? TBMCOLL_ALGO_MESH : TBMCOLL_ALGO_RING;
    if ((algo == TBMCOLL_ALGO_MESH && !m->is_mesh) || (algo == TBMCOLL_ALGO_RING && !m->is_ring)) {
        tbm_errprintf(err, "%s=%s: the matrix is not a %s: use the other algorithm", var, path,
                      tbmcoll_algo_name(algo));
        goto out;
    }
    c = jaccl_connect(m, rank, path, &coord, algo, o, err);
out:
    free(text);
    free(m);
    return c;
}

tbmcoll_comm_t *tbmcoll_comm_from_env(const tbmcoll_opts_t *opts, tbm_err_t *err)
{
    const char *hostfile = getenv("MLX_HOSTFILE"), *devices, *which = devices_vars[1];
    tbmcoll_opts_t o;

    tbmcoll_opts_fill(&o, opts);
    if (hostfile && *hostfile)
        return from_hostfile(hostfile, &o, err);
    if ((devices = env_first(devices_vars, &which)))
        return from_matrix(which, devices, &o, err);
    tbm_errprintf(err, "neither MLX_HOSTFILE (ring) nor MLX_IBV_DEVICES (jaccl) is set: run inside a tbmesh job, "
                  "or set MLX_RANK with MLX_HOSTFILE, or MLX_RANK with MLX_IBV_DEVICES and MLX_JACCL_COORDINATOR");
    return NULL;
}
