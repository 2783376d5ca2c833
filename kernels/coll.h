/* coll.h: libtbmcoll's inside: the communicator, its links, each transport's table of operations, and the
 * calls between the files (comm.c: the communicator; coll_halving.c: the halving all-reduce; coll_schedule.c:
 * the engine of the ring's steps; connect.c: the TCP connections; transfer.c: the transfer engine and its
 * failure messages; plain sockets are in net.h). Not installed; see tbmcoll.h for the public API. */
#ifndef TBMCOLL_COLL_H
#define TBMCOLL_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "mlxenv.h"
#include "net.h"
#include "tbmcoll.h"

#define TBMCOLL_STREAMS_MAX 4     /* TCP connections per pair of ranks on a mesh (opts.streams) */
#define TBMCOLL_STRIPE_MIN (64 * 1024)   /* a transfer is striped when each stream gets at least this */

/* The TCP connections to a peer: one, or opts.streams on a mesh (a large transfer is split across them in
 * equal parts, the same way on both sides, so each connection keeps its own order). */
typedef struct tbmcoll_link {
    int fd;                          /* stream 0; -1 when not connected */
    int peer;                        /* the peer's rank */
    char addr[TBMCOLL_ADDR_MAX];     /* the peer's address as dialled or seen ("10.0.1.2:32324") */
    int nfd;                         /* connections in use: 1 + the extra streams */
    int sfd[TBMCOLL_STREAMS_MAX - 1];   /* streams 1 ..; -1 when not connected */
    uint64_t sent, received;         /* payload bytes moved over its streams by the operations (not the
                                      * handshake): tbmcoll_peer_info */
} tbmcoll_link_t;

/* What a transport implements; the public calls check arguments and dispatch here. Each returns 0, or -1
 * after tbmcoll_fail() has recorded the message in comm->err. */
typedef struct tbmcoll_ops {
    int (*allreduce)(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                     tbm_redop_t op);
    int (*allgather)(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt);
    int (*reduce_scatter)(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                          tbm_redop_t op);
    int (*broadcast)(tbmcoll_comm_t *c, void *buf, size_t count, tbm_dtype_t dt, int root);
    /* point to point: send `bytes` of sbuf to rank `to` and receive as many into rbuf from rank `from`, at
     * once; either side may be absent (to or from < 0) */
    int (*p2p)(tbmcoll_comm_t *c, const void *sbuf, int to, void *rbuf, int from, size_t bytes);
    void (*destroy)(tbmcoll_comm_t *c);   /* transport state (MPI); may be NULL */
} tbmcoll_ops_t;

struct tbmcoll_comm {
    int rank;
    int size;
    tbmcoll_algo_t algo;
    const tbmcoll_ops_t *ops;
    tbmcoll_opts_t opts;             /* defaults filled in */
    tbmcoll_link_t *links;           /* mesh: links[peer]; ring: unused (NULL) */
    tbmcoll_link_t left, right;      /* ring: accepted from rank-1, dialled to rank+1 */
    tbm_err_t err;                   /* the first failure */
    int broken;                      /* set by tbmcoll_fail(): every later call fails */
    unsigned char *scratch;          /* grown on demand by tbmcoll_scratch() */
    size_t scratch_size;
    unsigned char *staging;          /* page-aligned, TBMCOLL_STAGING_BYTES + a page: see opts.recv_staging */
    void *transport;                 /* MPI state */
    tbmcoll_stats_t stats;           /* where the time goes, while stats_on */
    int stats_on;
    int halving;                     /* all-reduce by recursive halving and doubling (tbmcoll_plan) */
    int small;                       /* small all-reduce: TBM_SMALL_ONEROUND, _ROOTED or _DOUBLING (tbmcoll_plan) */
    int streams_auto;                /* opts.streams not given: tbmcoll_plan may use one stream only */
};

/* Counting time for tbmcoll_stats: t0 = tbmcoll_tick(c) before, tbmcoll_tock(c, &c->stats.x_us, t0) after. */
static inline long long tbmcoll_tick(const tbmcoll_comm_t *c)
{
    return c->stats_on ? tbm_now_us() : 0;
}

static inline void tbmcoll_tock(const tbmcoll_comm_t *c, uint64_t *acc, long long t0)
{
    if (c->stats_on)
        *acc += (uint64_t)(tbm_now_us() - t0);
}

extern const tbmcoll_ops_t tbmcoll_mesh_ops;
extern const tbmcoll_ops_t tbmcoll_ring_ops;

/* The socket of stream k of a link. */
static inline int *tbmcoll_stream_fd(tbmcoll_link_t *l, int k)
{
    return k == 0 ? &l->fd : &l->sfd[k - 1];
}

/* Bytes of chunk i when `count` elements of `esize` bytes are split among the ranks (tbm_chunk). */
static inline void tbmcoll_chunk_bytes(const tbmcoll_comm_t *c, size_t count, size_t esize, int i, size_t *off,
                                       size_t *len)
{
    tbm_chunk(count, c->size, i, off, len);
    *off *= esize;
    *len *= esize;
}

/* Piece k (of `piece` bytes) of a part of plen bytes: its offset in the part and its length (0 past the end). */
static inline void tbmcoll_piece_of(size_t plen, size_t piece, size_t k, size_t *at, size_t *len)
{
    *at = k * piece;
    *len = *at >= plen ? 0 : plen - *at < piece ? plen - *at : piece;
}

/* ---- comm.c: the communicator ---- */

/* Fill defaults into a copy of opts (NULL: all defaults). */
void tbmcoll_opts_fill(tbmcoll_opts_t *out, const tbmcoll_opts_t *in);

/* A communicator with its links not connected yet (mesh or ring transport). NULL with a message when out of
 * memory. */
tbmcoll_comm_t *tbmcoll_comm_new(int rank, int size, tbmcoll_algo_t algo, const tbmcoll_opts_t *opts,
                                 tbm_err_t *err);

/* Decide how a connected mesh of 2 ranks or more runs: every rank's machine, cores and option
 * (opts.mesh_allreduce) are all-gathered, a difference of option is refused, c->halving is set as
 * tbm_mesh_halving_pays() says (AUTO) or as asked, and where opts.streams was not given and
 * tbm_mesh_streams_pay() says no, every link uses one stream. Returns 0, or -1 with a message. */
int tbmcoll_plan(tbmcoll_comm_t *c, tbm_err_t *err);

/* ---- coll_halving.c: all-reduce by recursive halving and doubling ---- */

/* The halving moves at most this many pieces (opts.segment_bytes) of a step as one stream: its window. */
#define TBMCOLL_HALVING_PIECES 16
/* ... and all-reduces a vector in chunks of this many pieces (2 MiB with the default 256 KiB pieces), one
 * after the other, each whole: a chunk stays in the caches through its steps (kernels/HISTORY.md, "Chunks"). */
#define TBMCOLL_HALVING_CHUNK_PIECES 8

/* All-reduce by recursive halving and doubling (c->halving): a mesh of 4, 8, 16 ... ranks, or a ring of 4
 * (each exchange then with a ring neighbour). Above the small size (tbmcoll_small_bytes). Returns 0, or -1 after
 * tbmcoll_fail() naming the peer. */
int tbmcoll_halving_allreduce(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                              tbm_redop_t op);

/* Small all-reduce by recursive doubling (c->small == TBM_SMALL_DOUBLING): a mesh of 4, 8, 16 ... ranks, or a
 * ring of 4 (each exchange with a ring neighbour, over the corners in Gray order). Returns 0, or -1 after
 * tbmcoll_fail() naming the peer. */
int tbmcoll_small_doubling(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                           tbm_redop_t op);

/* ---- coll_schedule.c: steps on one or two links, folding as the data comes ---- */

/* One step of a schedule: send send_len bytes on the out link while recv_len bytes arrive from the in link
 * (a ring: to the right, from the left), optionally folding them with this rank's contribution. A step's send
 * may only use bytes that its gate step has already received and folded: that is what pipelines the ring. */
typedef struct tbmcoll_step {
    const unsigned char *send;
    size_t send_len;
    unsigned char *recv;
    size_t recv_len;
    unsigned char *fold_dst;         /* NULL: recv is final; else fold_dst = recv op fold_b */
    const unsigned char *fold_b;
    int recv_second;                 /* fold_dst = fold_b op recv instead (the received operand second) */
    int gate;                        /* index of the gating step, or -1 */
} tbmcoll_step_t;

/* Run the n steps st: sends go out in order on `out`, receives come in order on `in` (which may be the same
 * link), each received segment (opts.segment_bytes) folded as soon as it is in. Moves data while it moves,
 * yields briefly (and spins up to opts.spin_us), then sleeps in poll, bounded by opts.io_timeout_ms. `what`
 * names the operation in messages. Returns 0, or -1 after tbmcoll_fail() naming the neighbours. */
int tbmcoll_schedule_run(tbmcoll_comm_t *c, tbmcoll_link_t *in, tbmcoll_link_t *out, const tbmcoll_step_t *st,
                         int n, tbm_dtype_t dt, tbm_redop_t op, const char *what);

/* Exchange with one peer over one link (its first stream) and fold as the data comes: send send_len bytes
 * while recv_len bytes arrive into recv, each segment (opts.segment_bytes) folded into fold_dst as soon as it
 * is in, while it is in cache: fold_dst = recv op fold_b, or fold_b op recv when recv_second (recv may be
 * fold_dst itself). A schedule of one step, with both sides on one link, in lockstep: the send is at most a
 * segment ahead of what has come in, until all of it has (a connection holding megabytes both ways runs at
 * half the rate: kernels/HISTORY.md, "Exchanges in pieces"); the peer runs the same exchange. Returns 0, or
 * -1 after tbmcoll_fail() naming the peer. */
int tbmcoll_pair_fold(tbmcoll_comm_t *c, tbmcoll_link_t *l, const void *send, size_t send_len, void *recv,
                      size_t recv_len, void *fold_dst, const void *fold_b, int recv_second, tbm_dtype_t dt,
                      tbm_redop_t op, const char *what);

/* ---- connect.c: the TCP connections ---- */

/* Where each rank can be reached: dial[j] is the address rank j listens on for this rank. The listeners are
 * already bound (lfds, owned by the caller). Connects mesh or ring and returns the communicator. */
tbmcoll_comm_t *tbmcoll_comm_connect(int rank, int size, tbmcoll_algo_t algo, const tbmcoll_opts_t *opts,
                                     const tbm_mlx_addr_t *dial, const int *lfds, int nl, tbm_err_t *err);

/* ---- transfer.c: the transfer engine and its failure messages ---- */

/* Record a failure (the first one wins) and mark the communicator broken; returns -1. The message is
 * prefixed with "rank R: ". */
int tbmcoll_fail(tbmcoll_comm_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Page-aligned scratch space of at least `bytes` (its contents are not kept when it grows): the pipelines'
 * pieces are received there, and the kernel copies into page-aligned memory at full speed (lib/reduce.h,
 * tbm_recv_staged). NULL, with the communicator broken, when out of memory. */
unsigned char *tbmcoll_scratch(tbmcoll_comm_t *c, size_t bytes);

/* The most one staged receive moves (opts.recv_staging). */
#define TBMCOLL_STAGING_BYTES (256u << 10)

/* Point to point over the TCP links (the p2p of the mesh and ring transports). */
int tbmcoll_tcp_p2p(tbmcoll_comm_t *c, const void *sbuf, int to, void *rbuf, int from, size_t bytes);

/* One transfer in a batch: send or receive `len` bytes on a link. */
typedef struct tbmcoll_xfer {
    tbmcoll_link_t *link;
    int is_send;
    unsigned char *buf;
    size_t len;
    size_t done;
    int stream;                      /* which of the link's connections (0: link->fd) */
    size_t goal;                     /* a batch may end once this much is done (0: len); until it ends the
                                      * transfer moves on towards len, so a peer sending more is read */
} tbmcoll_xfer_t;

/* The socket of a transfer. */
static inline int tbmcoll_xfer_fd(const tbmcoll_xfer_t *x)
{
    return x->stream ? x->link->sfd[x->stream - 1] : x->link->fd;
}

/* Add a transfer to a batch xs of *n (on `stream` of the link); nothing to move adds nothing. */
static inline void tbmcoll_xfer_add(tbmcoll_xfer_t *xs, int *n, tbmcoll_link_t *l, int is_send, const void *buf,
                                    size_t len, int stream)
{
    if (len == 0)
        return;
    xs[*n] = (tbmcoll_xfer_t){ .link = l, .is_send = is_send, .buf = (unsigned char *)buf, .len = len,
                               .stream = stream };
    (*n)++;
}

/* Move every transfer of the batch at once (poll), until all are done; a transfer on a link of several
 * streams is striped across them when it is large enough. `what` names the operation in messages
 * ("all-reduce"). Returns 0, or -1 after tbmcoll_fail() naming the peer. */
int tbmcoll_xfer_run(tbmcoll_comm_t *c, tbmcoll_xfer_t *xs, int n, const char *what);

/* The same for a batch that sends to a peer and receives from it at once (an exchange on a link), moved in
 * rounds: in each, every transfer on a link of one connection moves its next piece of opts.segment_bytes.
 * One round's pieces are all in the kernel or in place before the next begins, so each connection holds a
 * piece or two each way, not megabytes: sending megabytes on a connection the peer sends on too runs at half
 * the rate or less (kernels/HISTORY.md, "Exchanges in pieces"). How a transfer is cut never changes the bytes
 * on a single connection, whatever the peer does; a transfer on a link of several streams is striped across
 * them by its length, and the peer stripes its side whole, so it moves whole, in the first round. A batch
 * with no single-connection link used both ways, or whose transfers fit in a piece, is moved whole
 * (tbmcoll_xfer_run): there the rounds would only add waits. */
int tbmcoll_xfer_run_pieces(tbmcoll_comm_t *c, tbmcoll_xfer_t *xs, int n, const char *what);

/* The same for a batch whose transfers name their streams (tbmcoll_xfer_t.stream) and are not striped; at
 * most one send and one receive per stream of a link. */
int tbmcoll_xfer_run_streams(tbmcoll_comm_t *c, tbmcoll_xfer_t *xs, int n, const char *what);

/* One non-blocking step of a transfer (when poll says its socket is ready). Returns 0 (progress, or nothing
 * to do yet) or an error code: EPIPE when the peer closed the connection, else the errno. */
int tbmcoll_xfer_step(tbmcoll_comm_t *c, tbmcoll_xfer_t *x);

/* tbm_fold and tbm_reduce, their time counted in the communicator's stats. */
void tbmcoll_fold(tbmcoll_comm_t *c, void *dst, const unsigned char *const *part, int n, size_t count,
                  tbm_dtype_t dt, tbm_redop_t op);
void tbmcoll_reduce(tbmcoll_comm_t *c, void *dst, const void *a, const void *b, size_t count, tbm_dtype_t dt,
                    tbm_redop_t op);

/* Nothing moved: yield the CPU a few times (TBMCOLL_SPINS), then keep yielding and trying until
 * opts.spin_us have passed (when the core has nothing else to run, a yield returns at once: a spin),
 * returning 1 each time; then return 0 once (and start over): time to sleep in poll. Reset rounds to 0
 * whenever something moves. Sleeping and waking through poll costs tens of microseconds; the spin keeps
 * small messages fast, the yields keep ranks that share cores taking turns. */
#define TBMCOLL_SPINS 4
typedef struct tbmcoll_idle {
    int rounds;
    int64_t since_us;
} tbmcoll_idle_t;
int tbmcoll_idle(const tbmcoll_comm_t *c, tbmcoll_idle_t *st);

/* Fail naming every peer of the n transfers: they closed (codes EPIPE, ECONNRESET) or failed (others); the
 * peers of the nw `waiting` transfers are named as still awaited (the first cause may be one of them). */
int tbmcoll_fail_xfers(tbmcoll_comm_t *c, tbmcoll_xfer_t *const *xs, const int *codes, int n,
                       tbmcoll_xfer_t *const *waiting, int nw, const char *what);

/* Fail for lack of progress, naming the peers of the n pending transfers; returns -1. */
int tbmcoll_fail_stalled(tbmcoll_comm_t *c, tbmcoll_xfer_t *const *xs, int n, const char *what);

#endif
