/* comm.c: libtbmcoll's public API: the communicator (options, creation, freeing, accessors), the calls
 * (argument checks, dispatch to the transport's operations) and the peer information. The connections are
 * made in connect.c, the data moved by the transports (coll_mesh.c, coll_ring.c over transfer.c). */
#include "coll.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#ifdef __APPLE__
#include <sys/sysctl.h>
#endif

static const char *const algo_names[] = { "auto", "mesh", "ring", "mpi" };
static const char *const mesh_ar_names[] = { "auto", "direct", "halving" };
static const char *const small_ar_names[] = { "auto", "oneround", "rooted", "doubling" };

/* The index of name among the first n names, or -1. */
static int name_index(const char *const *names, int n, const char *name)
{
    int i;

    for (i = 0; name && i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

const char *tbmcoll_algo_name(tbmcoll_algo_t algo)
{
    return (unsigned)algo <= TBMCOLL_ALGO_MPI ? algo_names[algo] : "?";
}

int tbmcoll_algo_parse(const char *name, tbmcoll_algo_t *out, tbm_err_t *err)
{
    int i = name_index(algo_names, TBMCOLL_ALGO_RING + 1, name);   /* mpi is not chosen here */

    if (i < 0)
        return tbm_errprintf(err, "unknown algorithm '%s': use auto, mesh or ring", name ? name : "");
    *out = (tbmcoll_algo_t)i;
    return 0;
}

const char *tbmcoll_small_ar_name(tbmcoll_small_ar_t how)
{
    return (unsigned)how <= TBMCOLL_SMALL_AR_DOUBLING ? small_ar_names[how] : "?";
}

int tbmcoll_small_ar_parse(const char *name, tbmcoll_small_ar_t *out, tbm_err_t *err)
{
    int i = name_index(small_ar_names, TBMCOLL_SMALL_AR_DOUBLING + 1, name);

    if (i < 0)
        return tbm_errprintf(err, "unknown small all-reduce '%s': use auto, oneround, rooted or doubling",
                             name ? name : "");
    *out = (tbmcoll_small_ar_t)i;
    return 0;
}

const char *tbmcoll_mesh_ar_name(tbmcoll_mesh_ar_t how)
{
    return (unsigned)how <= TBMCOLL_MESH_AR_HALVING ? mesh_ar_names[how] : "?";
}

int tbmcoll_mesh_ar_parse(const char *name, tbmcoll_mesh_ar_t *out, tbm_err_t *err)
{
    int i = name_index(mesh_ar_names, TBMCOLL_MESH_AR_HALVING + 1, name);

    if (i < 0)
        return tbm_errprintf(err, "unknown mesh all-reduce '%s': use auto, direct or halving", name ? name : "");
    *out = (tbmcoll_mesh_ar_t)i;
    return 0;
}

/* This machine, the same for every process under one kernel: a hash of the boot's identity. 0 when it
 * cannot be read (the rank is then taken to have a machine of its own). */
static uint64_t machine_id(void)
{
    char id[64] = "";
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    const char *p;
#ifdef __APPLE__
    size_t len = sizeof(id) - 1;

    if (sysctlbyname("kern.bootsessionuuid", id, &len, NULL, 0) != 0)
        return 0;
    id[len < sizeof(id) ? len : sizeof(id) - 1] = '\0';
#else
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

    if (!f)
        return 0;
    if (!fgets(id, sizeof(id), f))
        id[0] = '\0';
    fclose(f);
#endif
    if (!id[0])
        return 0;
    for (p = id; *p && *p != '\n'; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h ? h : 1;
}

int tbmcoll_plan(tbmcoll_comm_t *c, tbm_err_t *err)
{
    uint32_t mine[4], *all, cpus[TBM_MLX_RING_MAX];
    uint64_t host[TBM_MLX_RING_MAX], id;
    long online;
    char pre[32];
    int r, rc = 0;

    c->halving = 0;
    c->small = TBM_SMALL_ONEROUND;
    if (c->size < 2 || (c->algo != TBMCOLL_ALGO_MESH && !(c->algo == TBMCOLL_ALGO_RING && c->size == 4)))
        return 0;
    id = machine_id();
    online = sysconf(_SC_NPROCESSORS_ONLN);
    mine[0] = (uint32_t)(id >> 32);
    mine[1] = (uint32_t)id;
    mine[2] = online > 0 ? (uint32_t)online : 1;
    /* the options: mesh all-reduce in bits 0-7, small all-reduce in bits 16-23 */
    mine[3] = (uint32_t)c->opts.mesh_allreduce | (uint32_t)c->opts.small_allreduce << 16;
    if (!(all = malloc(sizeof(mine) * (size_t)c->size)))
        return tbm_errprintf(err, "out of memory");
    if (c->ops->allgather(c, mine, all, 4, TBM_DT_I32) < 0) {
        /* without tbmcoll_fail's "rank R: ": tbmcoll_comm_connect() puts it before every message */
        snprintf(pre, sizeof(pre), "rank %d: ", c->rank);
        tbm_errprintf(err, "telling the ranks' machines and cores: %s",
                      c->err.msg + (strncmp(c->err.msg, pre, strlen(pre)) == 0 ? strlen(pre) : 0));
        free(all);
        return -1;
    }
    for (r = 0; r < c->size; r++) {
        const uint32_t *v = all + 4 * r;
        uint64_t h = (uint64_t)v[0] << 32 | v[1];
        host[r] = h ? h : ~(uint64_t)r;   /* an unknown machine (0) is a machine of its own */
        cpus[r] = v[2];
        if ((v[3] & 0xff) != (uint32_t)c->opts.mesh_allreduce && rc == 0)
            rc = tbm_errprintf(err, "rank %d asks for the mesh all-reduce '%s' but this rank for '%s': give every "
                               "rank the same", r, tbmcoll_mesh_ar_name((tbmcoll_mesh_ar_t)(v[3] & 0xff)),
                               tbmcoll_mesh_ar_name(c->opts.mesh_allreduce));
        if (((v[3] >> 16) & 0xff) != (uint32_t)c->opts.small_allreduce && rc == 0)
            rc = tbm_errprintf(err, "rank %d asks for the small all-reduce '%s' but this rank for '%s': give every "
                               "rank the same", r, tbmcoll_small_ar_name((tbmcoll_small_ar_t)((v[3] >> 16) & 0xff)),
                               tbmcoll_small_ar_name(c->opts.small_allreduce));
    }
    free(all);
    if (rc < 0)
        return -1;
    /* every rank decides from the same table: the same answer everywhere */
    c->halving = c->size >= 4 && (c->size & (c->size - 1)) == 0 &&
                 (c->opts.mesh_allreduce == TBMCOLL_MESH_AR_HALVING ||
                  (c->opts.mesh_allreduce == TBMCOLL_MESH_AR_AUTO &&
                   tbm_mesh_halving_pays(c->size, host, cpus)));
    /* a ring of 4 (a square: its exchanges in Gray order are between neighbours) doubles where a mesh would
     * not go in one round, or when asked; otherwise it sends both ways around */
    if (c->algo == TBMCOLL_ALGO_RING && c->size == 4 &&
        (c->opts.small_allreduce == TBMCOLL_SMALL_AR_DOUBLING ||
         (c->opts.small_allreduce == TBMCOLL_SMALL_AR_AUTO &&
          tbm_small_plan(c->size, host, cpus) != TBM_SMALL_ONEROUND)))
        c->small = TBM_SMALL_DOUBLING;
    if (c->algo == TBMCOLL_ALGO_MESH && c->size >= 3) {
        switch (c->opts.small_allreduce) {
        case TBMCOLL_SMALL_AR_ROOTED: c->small = TBM_SMALL_ROOTED; break;
        case TBMCOLL_SMALL_AR_DOUBLING:
            c->small = (c->size & (c->size - 1)) == 0 ? TBM_SMALL_DOUBLING : TBM_SMALL_ONEROUND;
            break;
        case TBMCOLL_SMALL_AR_AUTO: c->small = tbm_small_plan(c->size, host, cpus); break;
        default: c->small = TBM_SMALL_ONEROUND; break;
        }
    }
    /* the same table on every rank, so both ends of each link agree on the streams in use; the others stay
     * connected, idle, until the communicator goes */
    if (c->streams_auto && c->opts.streams > 1 && !tbm_mesh_streams_pay(c->size, host, cpus)) {
        for (r = 0; r < c->size; r++)
            c->links[r].nfd = 1;
        c->opts.streams = 1;
    }
    return 0;
}

/* The plan of a communicator that runs none of libtbmcoll's algorithms ("?", "mpi", "copy"), or NULL. */
static const char *plan_without_algorithm(const tbmcoll_comm_t *c)
{
    if (!c)
        return "?";
    if (c->algo == TBMCOLL_ALGO_MPI)
        return "mpi";
    return c->size == 1 ? "copy" : NULL;
}

const char *tbmcoll_allreduce_plan(const tbmcoll_comm_t *c)
{
    const char *none = plan_without_algorithm(c);

    if (none)
        return none;
    if (c->halving)
        return "halving";
    return c->algo == TBMCOLL_ALGO_RING ? "ring" : "direct";
}

size_t tbmcoll_small_bytes(const tbmcoll_comm_t *c)
{
    if (!c || c->size == 1 || c->algo == TBMCOLL_ALGO_MPI)
        return 0;
    return c->algo == TBMCOLL_ALGO_RING ? TBMCOLL_SMALL_BYTES : TBMCOLL_MESH_SMALL_BYTES;
}

const char *tbmcoll_small_plan(const tbmcoll_comm_t *c)
{
    const char *none = plan_without_algorithm(c);

    if (none)
        return none;
    if (c->algo == TBMCOLL_ALGO_RING)
        return c->small == TBM_SMALL_DOUBLING ? "recursive doubling" : "both ways around";
    return c->small == TBM_SMALL_ROOTED ? "through rank 0" : c->small == TBM_SMALL_DOUBLING ? "recursive doubling"
                                                                                           : "one round";
}

int tbmcoll_streams_in_use(const tbmcoll_comm_t *c)
{
    if (!c || c->algo == TBMCOLL_ALGO_MPI)
        return 0;
    return c->algo == TBMCOLL_ALGO_MESH ? c->opts.streams : 1;
}

void tbmcoll_opts_fill(tbmcoll_opts_t *out, const tbmcoll_opts_t *in)
{
    if (in)
        *out = *in;
    else
        memset(out, 0, sizeof(*out));
    if (out->connect_timeout_ms <= 0)
        out->connect_timeout_ms = 30000;
    if (out->io_timeout_ms <= 0)
        out->io_timeout_ms = 30000;
    if (out->segment_bytes == 0)
        out->segment_bytes = 256 * 1024;
    if (out->segment_bytes > TBMCOLL_SEGMENT_MAX)
        out->segment_bytes = TBMCOLL_SEGMENT_MAX;
    if (out->sockbuf_bytes == 0)
        out->sockbuf_bytes = 4 * 1024 * 1024;
    if (out->spin_us == 0)
        out->spin_us = TBMCOLL_SPIN_US_DEFAULT;
    if (out->streams < 0)
        out->streams = 0;   /* 0 stays: the communicator chooses (tbmcoll_comm_new, tbmcoll_plan) */
    if (out->streams > TBMCOLL_STREAMS_MAX)
        out->streams = TBMCOLL_STREAMS_MAX;
    if (out->recv_staging == 0) {
        tbmcoll_copy_probe_t probe;

        tbmcoll_copy_probe(&probe);
        out->recv_staging = probe.stage ? 1 : -1;
    }
}

static void link_init(tbmcoll_link_t *l, int peer)
{
    int k;

    memset(l, 0, sizeof(*l));
    l->fd = -1;
    l->peer = peer;
    l->nfd = 1;
    for (k = 0; k < TBMCOLL_STREAMS_MAX - 1; k++)
        l->sfd[k] = -1;
}

tbmcoll_comm_t *tbmcoll_comm_new(int rank, int size, tbmcoll_algo_t algo, const tbmcoll_opts_t *opts,
                                 tbm_err_t *err)
{
    tbmcoll_comm_t *c = calloc(1, sizeof(*c));
    int j;

    if (!c || (algo == TBMCOLL_ALGO_MESH && !(c->links = calloc((size_t)size, sizeof(*c->links))))) {
        free(c);
        tbm_errprintf(err, "out of memory creating a communicator of %d ranks", size);
        return NULL;
    }
    c->rank = rank;
    c->size = size;
    c->algo = algo;
    c->ops = algo == TBMCOLL_ALGO_RING ? &tbmcoll_ring_ops : &tbmcoll_mesh_ops;
    tbmcoll_opts_fill(&c->opts, opts);
    if ((c->streams_auto = c->opts.streams == 0))
        c->opts.streams = TBMCOLL_STREAMS_DEFAULT;
    for (j = 0; c->links && j < size; j++)
        link_init(&c->links[j], j);
    link_init(&c->left, (rank + size - 1) % size);
    link_init(&c->right, (rank + 1) % size);
    if (algo != TBMCOLL_ALGO_MESH)
        c->opts.streams = 1;   /* a ring pipelines its segments on one connection per neighbour */
    return c;
}

static void close_link(tbmcoll_link_t *l)
{
    int k;

    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
    for (k = 0; k < TBMCOLL_STREAMS_MAX - 1; k++) {
        if (l->sfd[k] >= 0)
            close(l->sfd[k]);
        l->sfd[k] = -1;
    }
}

void tbmcoll_comm_free(tbmcoll_comm_t *c)
{
    int j;

    if (!c)
        return;
    if (c->ops && c->ops->destroy)
        c->ops->destroy(c);
    for (j = 0; c->links && j < c->size; j++)
        close_link(&c->links[j]);
    close_link(&c->left);
    close_link(&c->right);
    free(c->links);
    free(c->scratch);
    free(c->staging);
    free(c);
}

int tbmcoll_rank(const tbmcoll_comm_t *c)
{
    return c ? c->rank : -1;
}

int tbmcoll_size(const tbmcoll_comm_t *c)
{
    return c ? c->size : 0;
}

tbmcoll_algo_t tbmcoll_algo(const tbmcoll_comm_t *c)
{
    return c ? c->algo : TBMCOLL_ALGO_AUTO;
}

/* ---- the public calls ---- */

static int usable(tbmcoll_comm_t *c, tbm_err_t *err)
{
    if (!c)
        return tbm_errprintf(err, "no communicator (NULL)");
    if (c->broken)
        return tbm_errprintf(err, "the communicator is broken by an earlier failure: %s", c->err.msg);
    return 0;
}

/* Check type, operator, buffers and that count * blocks elements fit in memory; bytes of one block out. */
static int check_args(tbmcoll_comm_t *c, const void *a, const void *b, size_t count, size_t blocks,
                      tbm_dtype_t dt, tbm_redop_t op, size_t *bytes, tbm_err_t *err)
{
    size_t esize = tbm_dtype_size(dt);

    if (usable(c, err) < 0)
        return -1;
    if (esize == 0)
        return tbm_errprintf(err, "unknown element type %d: use TBM_DT_F32, _F16, _BF16 or _I32", (int)dt);
    if ((unsigned)op >= TBM_OP_COUNT)
        return tbm_errprintf(err, "unknown reduction %d: use TBM_OP_SUM or TBM_OP_MAX", (int)op);
    if (count > SIZE_MAX / esize / blocks / 2)
        return tbm_errprintf(err, "%zu elements of %zu blocks are too many", count, blocks);
    if (count > 0 && (!a || !b))
        return tbm_errprintf(err, "a NULL buffer for %zu elements", count);
    *bytes = count * esize;
    return 0;
}

static int finish(tbmcoll_comm_t *c, int rc, tbm_err_t *err)
{
    if (rc < 0)
        tbm_errprintf(err, "%s", c->err.msg);
    return rc;
}

int tbmcoll_allreduce(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                      tbm_redop_t op, tbm_err_t *err)
{
    size_t bytes;

    if (check_args(c, send, recv, count, 1, dt, op, &bytes, err) < 0)
        return -1;
    return finish(c, c->ops->allreduce(c, send, recv, count, dt, op), err);
}

int tbmcoll_allgather(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                      tbm_err_t *err)
{
    size_t bytes;

    if (check_args(c, send, recv, count, c ? (size_t)c->size : 1, dt, TBM_OP_SUM, &bytes, err) < 0)
        return -1;
    return finish(c, c->ops->allgather(c, send, recv, count, dt), err);
}

int tbmcoll_reduce_scatter(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                           tbm_redop_t op, tbm_err_t *err)
{
    size_t bytes;

    if (check_args(c, send, recv, count, c ? (size_t)c->size : 1, dt, op, &bytes, err) < 0)
        return -1;
    return finish(c, c->ops->reduce_scatter(c, send, recv, count, dt, op), err);
}

static int check_rank(tbmcoll_comm_t *c, int r, const char *what, tbm_err_t *err)
{
    if (r < 0 || r >= c->size)
        return tbm_errprintf(err, "%s %d is not a rank of this group (0 to %d)", what, r, c->size - 1);
    return 0;
}

int tbmcoll_broadcast(tbmcoll_comm_t *c, void *buf, size_t count, tbm_dtype_t dt, int root, tbm_err_t *err)
{
    size_t bytes;

    if (check_args(c, buf, buf, count, 1, dt, TBM_OP_SUM, &bytes, err) < 0 || check_rank(c, root, "root", err) < 0)
        return -1;
    return finish(c, c->ops->broadcast(c, buf, count, dt, root), err);
}

static int check_peer(tbmcoll_comm_t *c, int peer, tbm_err_t *err)
{
    if (check_rank(c, peer, "peer", err) < 0)
        return -1;
    if (peer == c->rank)
        return tbm_errprintf(err, "rank %d cannot send to or receive from itself", peer);
    if (c->algo == TBMCOLL_ALGO_RING && peer != c->left.peer && peer != c->right.peer)
        return tbm_errprintf(err, "rank %d is not a ring neighbour of rank %d: on a ring only ranks %d and %d are "
                             "connected", peer, c->rank, c->left.peer, c->right.peer);
    return 0;
}

int tbmcoll_send(tbmcoll_comm_t *c, const void *buf, size_t count, tbm_dtype_t dt, int peer, tbm_err_t *err)
{
    size_t bytes;

    if (check_args(c, buf, buf, count, 1, dt, TBM_OP_SUM, &bytes, err) < 0 || check_peer(c, peer, err) < 0)
        return -1;
    return finish(c, c->ops->p2p(c, buf, peer, NULL, -1, bytes), err);
}

int tbmcoll_recv(tbmcoll_comm_t *c, void *buf, size_t count, tbm_dtype_t dt, int peer, tbm_err_t *err)
{
    size_t bytes;

    if (check_args(c, buf, buf, count, 1, dt, TBM_OP_SUM, &bytes, err) < 0 || check_peer(c, peer, err) < 0)
        return -1;
    return finish(c, c->ops->p2p(c, NULL, -1, buf, peer, bytes), err);
}

int tbmcoll_sendrecv(tbmcoll_comm_t *c, const void *send, int to, void *recv, int from, size_t count,
                     tbm_dtype_t dt, tbm_err_t *err)
{
    size_t bytes;

    if (check_args(c, send, recv, count, 1, dt, TBM_OP_SUM, &bytes, err) < 0 || check_peer(c, to, err) < 0 ||
        check_peer(c, from, err) < 0)
        return -1;
    return finish(c, c->ops->p2p(c, send, to, recv, from, bytes), err);
}

int tbmcoll_barrier(tbmcoll_comm_t *c, tbm_err_t *err)
{
    int32_t one = 1, all = 0;

    if (tbmcoll_allreduce(c, &one, &all, 1, TBM_DT_I32, TBM_OP_SUM, err) < 0)
        return -1;
    if (all != c->size)
        return tbm_errprintf(err, "barrier: %d ranks arrived, expected %d: the ranks' calls are out of step",
                             all, c->size);
    return 0;
}

/* The interface that holds IPv4 address ip_be (network order), or "" when none does. */
static void iface_of(uint32_t ip_be, char *out, size_t outsz)
{
    struct ifaddrs *ifs, *i;

    out[0] = '\0';
    if (getifaddrs(&ifs) < 0)
        return;
    for (i = ifs; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
            ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == ip_be) {
            snprintf(out, outsz, "%s", i->ifa_name);
            break;
        }
    freeifaddrs(ifs);
}

static void sock_text(const struct sockaddr_in *sa, char *out, size_t outsz)
{
    char ip[INET_ADDRSTRLEN] = "?";

    inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof(ip));
    snprintf(out, outsz, "%s:%u", ip, (unsigned)ntohs(sa->sin_port));
}

int tbmcoll_peer_info(const tbmcoll_comm_t *c, int peer, tbmcoll_peer_info_t *out, tbm_err_t *err)
{
    const tbmcoll_link_t *l = NULL;
    struct sockaddr_in me, them;
    socklen_t len = sizeof(me);

    memset(out, 0, sizeof(*out));
    if (!c || peer < 0 || peer >= c->size || peer == c->rank)
        return tbm_errprintf(err, "rank %d is not a peer of rank %d (0 to %d)", peer, c ? c->rank : -1,
                             c ? c->size - 1 : -1);
    if (c->algo == TBMCOLL_ALGO_MPI) {
        out->connected = 1;
        return 0;
    }
    if (c->algo != TBMCOLL_ALGO_RING)
        l = &c->links[peer];
    else if (peer == c->right.peer)
        l = &c->right;
    else if (peer == c->left.peer)
        l = &c->left;
    if (!l || l->fd < 0)
        return 0;
    out->connected = 1;
    out->sent = l->sent;
    out->received = l->received;
    if (c->algo == TBMCOLL_ALGO_RING && c->left.peer == c->right.peer && l == &c->right) {
        out->sent += c->left.sent;   /* two ranks on a ring: both links lead to the one peer */
        out->received += c->left.received;
    }
    if (getsockname(l->fd, (struct sockaddr *)&me, &len) == 0 && me.sin_family == AF_INET) {
        sock_text(&me, out->local_addr, sizeof(out->local_addr));
        iface_of(me.sin_addr.s_addr, out->local_if, sizeof(out->local_if));
    }
    len = sizeof(them);
    if (getpeername(l->fd, (struct sockaddr *)&them, &len) == 0 && them.sin_family == AF_INET)
        sock_text(&them, out->peer_addr, sizeof(out->peer_addr));
    return 0;
}
