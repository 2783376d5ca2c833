/* connect.c: the TCP connections of a mesh or a ring: who dials whom, the hello/ack handshake (version,
 * group, algorithm, streams, segment size), accepting with deadlines, the data-path settings; a communicator
 * from explicit addresses. */
#include "coll.h"
#include "net.h"

#include "clock.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HELLO_MAGIC 0x54424d43u   /* "TBMC" */
#define ACK_MAGIC   0x54424d41u   /* "TBMA" */
#define PROTO_VERSION 3u         /* 2: the hello names the stream; 3: and the pipelines' segment size */
#define HELLO_WORDS 8

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
                                (uint32_t)c->algo, (uint32_t)c->opts.streams, (uint32_t)stream,
                                (uint32_t)c->opts.segment_bytes };
    unsigned char buf[4 * HELLO_WORDS];
    char who[64];

    snprintf(who, sizeof(who), "rank %d (%s)", l->peer, l->addr);
    put_u32s(buf, v, HELLO_WORDS);
    return tbmcoll_write_full(*tbmcoll_stream_fd(l, stream), buf, sizeof(buf), deadline, who, err);
}

/* Read and check a hello on an accepted connection. Returns the link it fills, NULL to ignore a stray
 * connection (closed), or NULL with err set for a fatal mismatch. */
static tbmcoll_link_t *hear_hello(tbmcoll_comm_t *c, int fd, const char *from, int64_t deadline, tbm_err_t *err)
{
    unsigned char buf[4 * HELLO_WORDS];
    uint32_t v[HELLO_WORDS];
    tbmcoll_link_t *l;
    tbm_err_t ignored;
    int64_t d = tbm_now_ms() + TBMCOLL_STRAY_HELLO_MS;

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
    if (v[7] != (uint32_t)c->opts.segment_bytes) {
        tbm_errprintf(err, "the peer at %s (rank %u) cuts its transfers in segments of %u bytes but this rank in "
                      "segments of %zu: give every rank the same segment size", from, v[2], v[7],
                      c->opts.segment_bytes);
        return NULL;
    }
    l = accept_slot(c, (int)v[2]);
    if (!l || *tbmcoll_stream_fd(l, (int)v[6]) >= 0) {
        tbm_errprintf(err, "the peer at %s says it is rank %u, which this rank did not expect%s: check that "
                      "every rank has its own MLX_RANK", from, v[2], l ? " twice" : "");
        return NULL;
    }
    *tbmcoll_stream_fd(l, (int)v[6]) = fd;
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
        for (k = 0; k < c->opts.streams && *tbmcoll_stream_fd(l, k) >= 0; k++)
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
    int64_t deadline = tbm_now_ms() + c->opts.connect_timeout_ms;
    int i, j, k, nd = dial_links(c, out);
    char who[48];

    for (j = 0; c->links && j < c->size; j++)
        tbmcoll_addr_text(&dial[j], c->links[j].addr, sizeof(c->links[j].addr));
    tbmcoll_addr_text(&dial[c->left.peer], c->left.addr, sizeof(c->left.addr));
    tbmcoll_addr_text(&dial[c->right.peer], c->right.addr, sizeof(c->right.addr));
    for (i = 0; i < nd; i++) {
        snprintf(who, sizeof(who), "rank %d", out[i]->peer);
        for (k = 0; k < c->opts.streams; k++) {
            *tbmcoll_stream_fd(out[i], k) = tbmcoll_dial(&c->opts, &dial[out[i]->peer], deadline, who, err);
            if (*tbmcoll_stream_fd(out[i], k) < 0 || say_hello(c, out[i], k, deadline, err) < 0)
                return -1;
        }
        out[i]->nfd = c->opts.streams;
    }
    if (accept_all(c, lfds, nl, deadline, err) < 0)
        return -1;
    for (i = 0; i < nd; i++)
        for (k = 0; k < c->opts.streams; k++)
            if (hear_ack(out[i], *tbmcoll_stream_fd(out[i], k), deadline, err) < 0)
                return -1;
    return 0;
}

static int tune_all(tbmcoll_comm_t *c, tbm_err_t *err)
{
    int j, k;

    for (j = 0; c->links && j < c->size; j++)
        for (k = 0; k < c->opts.streams; k++)
            if (*tbmcoll_stream_fd(&c->links[j], k) >= 0 && tbmcoll_tune(*tbmcoll_stream_fd(&c->links[j], k), &c->opts, err) < 0)
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
    tbmcoll_comm_t *c = tbmcoll_comm_new(rank, size, algo, opts, err);

    if (!c)
        return NULL;
    if (connect_all(c, dial, lfds, nl, err) < 0 || tune_all(c, err) < 0 || tbmcoll_plan(c, err) < 0) {
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
