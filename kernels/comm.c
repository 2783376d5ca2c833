/* comm.c: libtbmcoll's communicator: options, errors, the public calls (argument checks, dispatch to the
 * transport) and the TCP connections (dial, accept, hello/ack handshake) of a mesh or a ring. */
#include "coll.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HELLO_MAGIC 0x54424d43u   /* "TBMC" */
#define ACK_MAGIC   0x54424d41u   /* "TBMA" */
#define PROTO_VERSION 2u         /* 2: the hello names the stream */
#define HELLO_WORDS 7
#define STRAY_HELLO_MS 2000       /* how long an accepted connection may take to say hello */

static const char *const algo_names[] = { "auto", "mesh", "ring", "mpi" };

const char *tbmcoll_algo_name(tbmcoll_algo_t algo)
{
    return (unsigned)algo <= TBMCOLL_ALGO_MPI ? algo_names[algo] : "?";
}

int tbmcoll_algo_parse(const char *name, tbmcoll_algo_t *out, tbm_err_t *err)
{
    int i;

    for (i = 0; name && i <= TBMCOLL_ALGO_RING; i++)
        if (strcmp(name, algo_names[i]) == 0) {
            *out = (tbmcoll_algo_t)i;
            return 0;
        }
    return tbm_errprintf(err, "unknown algorithm '%s': use auto, mesh or ring", name ? name : "");
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
    if (out->sockbuf_bytes == 0)
        out->sockbuf_bytes = 4 * 1024 * 1024;
    if (out->spin_us == 0)
        out->spin_us = TBMCOLL_SPIN_US_DEFAULT;
    if (out->streams <= 0)
        out->streams = TBMCOLL_STREAMS_DEFAULT;
    if (out->streams > TBMCOLL_STREAMS_MAX)
        out->streams = TBMCOLL_STREAMS_MAX;
}

int tbmcoll_fail(tbmcoll_comm_t *c, const char *fmt, ...)
{
    char msg[TBM_ERR_MAX];
    va_list ap;

    if (c->broken)
        return -1;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tbm_errprintf(&c->err, "rank %d: %s", c->rank, msg);
    c->broken = 1;
    return -1;
}

unsigned char *tbmcoll_scratch(tbmcoll_comm_t *c, size_t bytes)
{
    unsigned char *p;

    if (bytes <= c->scratch_size)
        return c->scratch;
    p = realloc(c->scratch, bytes);
    if (!p) {
        tbmcoll_fail(c, "out of memory for %zu bytes of scratch space", bytes);
        return NULL;
    }
    c->scratch = p;
    c->scratch_size = bytes;
    return p;
}

void tbmcoll_chunk_bytes(const tbmcoll_comm_t *c, size_t count, size_t esize, int i, size_t *off, size_t *len)
{
    tbm_chunk(count, c->size, i, off, len);
    *off *= esize;
    *len *= esize;
}

/* Elements folded at a time: every part's block and dst's stay in cache while the n-1 reductions run, so a
 * large fold reads each part once and writes dst once. The order per element is the same as n-1 whole passes,
 * so are the bits. */
#define FOLD_BLOCK_BYTES (16 * 1024)

void tbmcoll_fold(unsigned char *dst, const unsigned char *const *part, int n, size_t count, tbm_dtype_t dt,
                  tbm_redop_t op)
{
    size_t es = tbm_dtype_size(dt), step = FOLD_BLOCK_BYTES / es, at, len;
    int j;

    if (n == 1) {
        memmove(dst, part[0], count * es);
        return;
    }
    for (at = 0; at < count; at += len) {
        size_t off = at * es;
        len = count - at < step ? count - at : step;
        tbm_reduce(dst + off, part[0] + off, part[1] + off, len, dt, op);
        for (j = 2; j < n; j++)
            tbm_reduce(dst + off, dst + off, part[j] + off, len, dt, op);
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

static tbmcoll_comm_t *comm_new(int rank, int size, tbmcoll_algo_t algo, const tbmcoll_opts_t *opts,
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

/* The socket of stream k of a link. */
static int *stream_fd(tbmcoll_link_t *l, int k)
{
    return k == 0 ? &l->fd : &l->sfd[k - 1];
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

/* ---- connecting ---- */

/* The links this rank dials (mesh: higher ranks; ring: the right neighbour) and accepts. */
static int dial_links(tbmcoll_comm_t *c, tbmcoll_link_t **out)
{
    int j, n = 0;

    if (c->size == 1)
        return 0;
    if (c->algo == TBMCOLL_ALGO_RING) {
        out[n++] = &c->right;
        return n;
    }
    for (j = c->rank + 1; j < c->size; j++)
        out[n++] = &c->links[j];
    return n;
}

static tbmcoll_link_t *accept_slot(tbmcoll_comm_t *c, int from)
{
    if (c->algo == TBMCOLL_ALGO_RING)
        return from == c->left.peer ? &c->left : NULL;
    return from >= 0 && from < c->rank ? &c->links[from] : NULL;
}

static int accepts_expected(const tbmcoll_comm_t *c)
{
    if (c->size == 1)
        return 0;
    return c->algo == TBMCOLL_ALGO_RING ? 1 : c->rank * c->opts.streams;
}

static void put_u32s(unsigned char *p, const uint32_t *v, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        uint32_t be = htonl(v[i]);
        memcpy(p + 4 * i, &be, 4);
    }
}

static void get_u32s(const unsigned char *p, uint32_t *v, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        memcpy(&v[i], p + 4 * i, 4);
        v[i] = ntohl(v[i]);
    }
}

static int say_hello(tbmcoll_comm_t *c, tbmcoll_link_t *l, int stream, int64_t deadline, tbm_err_t *err)
{
    uint32_t v[HELLO_WORDS] = { HELLO_MAGIC, PROTO_VERSION, (uint32_t)c->rank, (uint32_t)c->size,
                                (uint32_t)c->algo, (uint32_t)c->opts.streams, (uint32_t)stream };
    unsigned char buf[4 * HELLO_WORDS];
    char who[64];

    snprintf(who, sizeof(who), "rank %d (%s)", l->peer, l->addr);
    put_u32s(buf, v, HELLO_WORDS);
    return tbmcoll_write_full(*stream_fd(l, stream), buf, sizeof(buf), deadline, who, err);
}

/* Read and check a hello on an accepted connection. Returns the link it fills, NULL to ignore a stray
 * connection (closed), or NULL with err set for a fatal mismatch. */
static tbmcoll_link_t *hear_hello(tbmcoll_comm_t *c, int fd, const char *from, int64_t deadline, tbm_err_t *err)
{
    unsigned char buf[4 * HELLO_WORDS];
    uint32_t v[HELLO_WORDS];
    tbmcoll_link_t *l;
    tbm_err_t ignored;
    int64_t d = tbmcoll_now_ms() + STRAY_HELLO_MS;

    /* magic and version first: an older peer's hello is shorter, and it must be told, not waited for */
    if (tbmcoll_read_full(fd, buf, 8, d < deadline ? d : deadline, from, &ignored) < 0)
        return NULL;
    get_u32s(buf, v, 2);
    if (v[0] != HELLO_MAGIC)
        return NULL;
    if (v[1] != PROTO_VERSION) {
        tbm_errprintf(err, "the peer at %s speaks version %u of libtbmcoll's handshake, this rank %u: run the "
                      "same slurm-tbmesh on every Mac", from, v[1], PROTO_VERSION);
        return NULL;
    }
    if (tbmcoll_read_full(fd, buf + 8, sizeof(buf) - 8, d < deadline ? d : deadline, from, &ignored) < 0)
        return NULL;
    get_u32s(buf, v, HELLO_WORDS);
    if (v[3] != (uint32_t)c->size || v[4] != (uint32_t)c->algo) {
        tbm_errprintf(err, "the peer at %s (rank %u) runs a %s group of %u ranks but this rank a %s group of %d: "
                      "every rank must read the same hostfile or matrix and use the same algorithm", from,
                      v[2], tbmcoll_algo_name((tbmcoll_algo_t)(v[4] <= 3 ? v[4] : 0)), v[3],
                      tbmcoll_algo_name(c->algo), c->size);
        return NULL;
    }
    if (v[5] != (uint32_t)c->opts.streams || v[6] >= v[5]) {
        tbm_errprintf(err, "the peer at %s (rank %u) uses %u connection(s) per pair of ranks but this rank %d: "
                      "give every rank the same number of streams", from, v[2], v[5], c->opts.streams);
        return NULL;
    }
    l = accept_slot(c, (int)v[2]);
    if (!l || *stream_fd(l, (int)v[6]) >= 0) {
        tbm_errprintf(err, "the peer at %s says it is rank %u, which this rank did not expect%s: check that "
                      "every rank has its own MLX_RANK", from, v[2], l ? " twice" : "");
        return NULL;
    }
    *stream_fd(l, (int)v[6]) = fd;
    if ((int)v[6] + 1 > l->nfd)
        l->nfd = (int)v[6] + 1;
    return l;
}

static int send_ack(tbmcoll_comm_t *c, tbmcoll_link_t *l, int fd, int64_t deadline, tbm_err_t *err)
{
    uint32_t v[2] = { ACK_MAGIC, (uint32_t)c->rank };
    unsigned char buf[8];

    put_u32s(buf, v, 2);
    return tbmcoll_write_full(fd, buf, sizeof(buf), deadline, l->addr, err);
}

static int hear_ack(tbmcoll_link_t *l, int fd, int64_t deadline, tbm_err_t *err)
{
    unsigned char buf[8];
    uint32_t v[2];
    char who[64];

    snprintf(who, sizeof(who), "rank %d (%s)", l->peer, l->addr);
    if (tbmcoll_read_full(fd, buf, sizeof(buf), deadline, who, err) < 0)
        return -1;
    get_u32s(buf, v, 2);
    if (v[0] != ACK_MAGIC || v[1] != (uint32_t)l->peer)
        return tbm_errprintf(err, "%s answered as rank %u: the address belongs to another rank; check the "
                             "hostfile", who, v[1]);
    return 0;
}

/* How many of the ranks this rank accepts from have not connected all their streams yet. */
static int ranks_missing(tbmcoll_comm_t *c)
{
    int j, k, n = 0;

    for (j = 0; j < c->size; j++) {
        tbmcoll_link_t *l = accept_slot(c, j);
        if (!l)
            continue;
        for (k = 0; k < c->opts.streams && *stream_fd(l, k) >= 0; k++)
            ;
        n += k < c->opts.streams;
    }
    return n;
}

static int accept_all(tbmcoll_comm_t *c, const int *lfds, int nl, int64_t deadline, tbm_err_t *err)
{
    char from[TBMCOLL_ADDR_MAX];
    tbmcoll_link_t *l;
    int fd, got = 0, want = accepts_expected(c);

    while (got < want) {
        fd = tbmcoll_accept(lfds, nl, deadline, from, sizeof(from), err);
        if (fd == -2)
            return -1;
        if (fd < 0)
            return tbm_errprintf(err, "waited %d ms for %d of %d lower or left rank(s) to connect: they did not "
                                 "start, or cannot reach this rank's address", c->opts.connect_timeout_ms,
                                 ranks_missing(c), want / c->opts.streams);
        tbm_errclear(err);
        l = hear_hello(c, fd, from, deadline, err);
        if (!l) {
            close(fd);
            if (tbm_erris(err))
                return -1;
            continue;
        }
        if (send_ack(c, l, fd, deadline, err) < 0)
            return -1;
        got++;
    }
    return 0;
}

static int connect_all(tbmcoll_comm_t *c, const tbm_mlx_addr_t *dial, const int *lfds, int nl, tbm_err_t *err)
{
    tbmcoll_link_t *out[TBM_MLX_RING_MAX];
    int64_t deadline = tbmcoll_now_ms() + c->opts.connect_timeout_ms;
    int i, j, k, nd = dial_links(c, out);
    char who[48];

    for (j = 0; c->links && j < c->size; j++)
        tbmcoll_addr_text(&dial[j], c->links[j].addr, sizeof(c->links[j].addr));
    tbmcoll_addr_text(&dial[c->left.peer], c->left.addr, sizeof(c->left.addr));
    tbmcoll_addr_text(&dial[c->right.peer], c->right.addr, sizeof(c->right.addr));
    for (i = 0; i < nd; i++) {
        snprintf(who, sizeof(who), "rank %d", out[i]->peer);
        for (k = 0; k < c->opts.streams; k++) {
            *stream_fd(out[i], k) = tbmcoll_dial(&c->opts, &dial[out[i]->peer], deadline, who, err);
            if (*stream_fd(out[i], k) < 0 || say_hello(c, out[i], k, deadline, err) < 0)
                return -1;
        }
        out[i]->nfd = c->opts.streams;
    }
    if (accept_all(c, lfds, nl, deadline, err) < 0)
        return -1;
    for (i = 0; i < nd; i++)
        for (k = 0; k < c->opts.streams; k++)
            if (hear_ack(out[i], *stream_fd(out[i], k), deadline, err) < 0)
                return -1;
    return 0;
}

static int tune_all(tbmcoll_comm_t *c, tbm_err_t *err)
{
    int j, k;

    for (j = 0; c->links && j < c->size; j++)
        for (k = 0; k < c->opts.streams; k++)
            if (*stream_fd(&c->links[j], k) >= 0 && tbmcoll_tune(*stream_fd(&c->links[j], k), &c->opts, err) < 0)
                return -1;
    if (c->left.fd >= 0 && tbmcoll_tune(c->left.fd, &c->opts, err) < 0)
        return -1;
    if (c->right.fd >= 0 && tbmcoll_tune(c->right.fd, &c->opts, err) < 0)
        return -1;
    return 0;
}

tbmcoll_comm_t *tbmcoll_comm_connect(int rank, int size, tbmcoll_algo_t algo, const tbmcoll_opts_t *opts,
                                     const tbm_mlx_addr_t *dial, const int *lfds, int nl, tbm_err_t *err)
{
    tbmcoll_comm_t *c = comm_new(rank, size, algo, opts, err);

    if (!c)
        return NULL;
    if (connect_all(c, dial, lfds, nl, err) < 0 || tune_all(c, err) < 0) {
        tbm_errprefix(err, "rank %d: ", rank);
        tbmcoll_comm_free(c);
        return NULL;
    }
    return c;
}

tbmcoll_comm_t *tbmcoll_comm_from_addrs(int rank, int size, const char *const *addrs,
                                        const tbmcoll_opts_t *opts, tbm_err_t *err)
{
    tbm_mlx_addr_t *dial;
    tbmcoll_comm_t *c = NULL;
    tbmcoll_opts_t o;
    char what[48];
    int j, lfd;

    tbmcoll_opts_fill(&o, opts);
    if (size < 1 || size > TBM_MLX_RING_MAX || rank < 0 || rank >= size || !addrs) {
        tbm_errprintf(err, "rank %d of %d: give 1 to %d ranks, a rank from 0 to size-1 and one address per rank",
                      rank, size, TBM_MLX_RING_MAX);
        return NULL;
    }
    if (!(dial = calloc((size_t)size, sizeof(*dial)))) {
        tbm_errprintf(err, "out of memory");
        return NULL;
    }
    for (j = 0; j < size; j++) {
        snprintf(what, sizeof(what), "address of rank %d", j);
        if (tbm_mlx_addr_parse(addrs[j], what, &dial[j], err) < 0)
            goto out;
    }
    if ((lfd = tbmcoll_listen(&o, &dial[rank], err)) < 0)
        goto out;
    c = tbmcoll_comm_connect(rank, size, o.algo == TBMCOLL_ALGO_RING ? TBMCOLL_ALGO_RING : TBMCOLL_ALGO_MESH,
                             &o, dial, &lfd, 1, err);
    close(lfd);
out:
    free(dial);
    return c;
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

/* The link to a peer: on a ring, sends prefer the right link and receives the left one (for two ranks both
 * neighbours are the same rank: each direction then has its own connection, as the peer expects). */
static tbmcoll_link_t *link_to(tbmcoll_comm_t *c, int peer, int is_send)
{
    if (c->algo != TBMCOLL_ALGO_RING)
        return &c->links[peer];
    if (is_send)
        return peer == c->right.peer ? &c->right : &c->left;
    return peer == c->left.peer ? &c->left : &c->right;
}

int tbmcoll_tcp_p2p(tbmcoll_comm_t *c, const void *sbuf, int to, void *rbuf, int from, size_t bytes)
{
    tbmcoll_xfer_t xs[2];
    int n = 0;

    if (to >= 0)
        xs[n++] = (tbmcoll_xfer_t){ .link = link_to(c, to, 1), .is_send = 1, .buf = (unsigned char *)sbuf,
                                    .len = bytes };
    if (from >= 0)
        xs[n++] = (tbmcoll_xfer_t){ .link = link_to(c, from, 0), .is_send = 0, .buf = rbuf, .len = bytes };
    return tbmcoll_xfer_run(c, xs, n, to >= 0 && from >= 0 ? "send/recv" : to >= 0 ? "send" : "recv");
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
    if (c->algo == TBMCOLL_ALGO_RING)
        l = peer == c->right.peer ? &c->right : peer == c->left.peer ? &c->left : NULL;
    else
        l = &c->links[peer];
    if (!l || l->fd < 0)
        return 0;
    out->connected = 1;
    if (getsockname(l->fd, (struct sockaddr *)&me, &len) == 0 && me.sin_family == AF_INET) {
        sock_text(&me, out->local_addr, sizeof(out->local_addr));
        iface_of(me.sin_addr.s_addr, out->local_if, sizeof(out->local_if));
    }
    len = sizeof(them);
    if (getpeername(l->fd, (struct sockaddr *)&them, &len) == 0 && them.sin_family == AF_INET)
        sock_text(&them, out->peer_addr, sizeof(out->peer_addr));
    return 0;
}
