/* tbmcoll.h: libtbmcoll, collective communication for slurm-tbmesh's kernels: all-reduce, all-gather,
 * reduce-scatter, broadcast, send/recv and barrier over TCP (full mesh or ring) or over Open MPI. */
#ifndef TBMCOLL_H
#define TBMCOLL_H

#include <stddef.h>

#include "errbuf.h"
#include <stdint.h>

#include "reduce.h"   /* tbm_dtype_t (TBM_DT_F32, _F16, _BF16, _I32), tbm_redop_t (TBM_OP_SUM, _MAX) */

/*
 * Model
 * -----
 * A communicator joins `size` ranks (processes), numbered 0 .. size-1; every rank calls the same
 * operations in the same order with the same counts, types and roots (as with MPI or NCCL). Calls block
 * until this rank's part is done. One thread at a time may use a communicator. At most 64 ranks (16 from a
 * device matrix).
 *
 * TCP transports: opts.streams TCP connections per pair of ranks (mesh; a large transfer is split across
 * them) or one to each ring neighbour (ring), with TCP_NODELAY and large socket buffers. Every wait is bounded: a peer that closes its connection (it exited
 * or was killed) fails the operation at once; a peer that makes no progress for io_timeout_ms fails it
 * then. The message names the operation, the peer's rank and its address, and the peers still awaited
 * (the first cause may be one of them), e.g.
 *   "rank 0: all-reduce: rank 2 (127.0.0.1:40002) closed the connection: it exited or was killed; see its
 *    output; still waiting on rank 1 (127.0.0.1:40001)"
 * After a failure the communicator is broken: later calls fail at once with the first message. The caller
 * should exit non-zero, which closes its connections, so the failure reaches every rank.
 *
 * Algorithms (chunks are nearly equal: tbm_chunk() of lib/reduce.h):
 *   mesh: all-reduce = direct reduce-scatter (each rank sends chunk j straight to rank j, on all n-1 links
 *         at once; rank j folds its chunk in rank order 0, 1, ..., n-1) then direct all-gather, both fused
 *         and pipelined: each chunk is cut into segments (opts.segment_bytes), and a segment is folded as
 *         soon as it has come from every rank and sent back to every rank in the next round, while the
 *         next segments come in. Where ranks share too few cores (opts.mesh_allreduce, below), a
         power-of-two group of 4 or more ranks instead reduces by recursive halving (in step s, rank r
         exchanges half of the blocks it still holds with rank r ^ 2^s, piece by piece, and folds the half
         it keeps, the lower rank's operand first) and gathers by recursive doubling: each block is folded
         as a balanced tree in rank order, ((r0 op r1) op (r2 op r3)) for 4 ranks.
 *   ring: all-reduce = pipelined ring reduce-scatter then ring all-gather (2(n-1) steps); data flows to
 *         rank+1 and each step forwards a segment as soon as the previous step has produced it. Chunk c is
 *         folded in ring order c+1, c+2, ..., c+n (mod n), ending at its owner c.
 *   reduce-scatter and all-gather are the two halves of the above; broadcast is a scatter from the root
 *   then an all-gather on a mesh, a pipelined chain root -> root+1 -> ... on a ring.
 *   small: an all-reduce of at most TBMCOLL_MESH_SMALL_BYTES on a mesh, TBMCOLL_SMALL_BYTES on a ring
 *         (tbmcoll_small_bytes()), goes in fewer rounds for latency: on a mesh every
 *         rank sends its whole buffer to every other (one round), or, where some machine runs more of the
 *         ranks than it has cores (opts.small_allreduce), every rank sends it to rank 0, which folds and
 *         sends the result back (2(n-1) messages instead of n(n-1)); on a ring whole buffers travel around
 *         the ring both ways at once (ceil((n-1)/2) steps); then every rank (through rank 0: rank 0) folds
 *         all n buffers in rank order 0, 1, ..., n-1, so the bits are the same either way. Where a machine
 *         runs 8 ranks or more, each with a core, a mesh of 8, 16 ... goes by recursive doubling instead,
 *         folded as a balanced tree in rank order ((r0 op r1) op (r2 op r3)), the same bits on every rank;
 *         so does a ring of 4 where ranks outnumber cores, over its corners in Gray order (0, 1, 3, 2).
 * Determinism: a chunk is always folded as acc = acc op next in the fixed order above, whatever the order in
 * which data arrives, and every rank ends with the same bytes; so every rank gets identical bits, on every
 * run, for the same inputs, size and algorithm. (Mesh, its halving and ring may differ from each other in the
 * last bits of a floating-point sum above the small size.) float16/bfloat16 are reduced via float32 with
 * round-to-nearest-even.
 *
 * MPI transport (tbmcoll_comm_from_mpi, in the separate libtbmcoll_mpi): the same calls mapped onto Open
 * MPI's collectives over MPI_COMM_WORLD, for comparison; its reduction order is Open MPI's.
 */

typedef struct tbmcoll_comm tbmcoll_comm_t;

/* How long a rank keeps trying before it sleeps, when opts.spin_us is 0 (microseconds). */
#define TBMCOLL_SPIN_US_DEFAULT 100

/* TCP connections per pair of ranks on a mesh when opts.streams is 0. */
#define TBMCOLL_STREAMS_DEFAULT 3

/* All-reduces up to this many bytes use the small-message algorithms (see above): on a ring, and on a mesh
 * (TBMCOLL_MESH_SMALL_BYTES). Measured where each switch pays (kernels/README.md, "Which all-reduce"): the
 * ring's pipeline is ahead from 64 KiB, the mesh's from 256 KiB. */
#define TBMCOLL_SMALL_BYTES (32 * 1024)
#define TBMCOLL_MESH_SMALL_BYTES (128 * 1024)
/* The largest opts.segment_bytes (larger values are taken as this). */
#define TBMCOLL_SEGMENT_MAX ((size_t)1 << 30)

typedef enum tbmcoll_algo {
    TBMCOLL_ALGO_AUTO = 0,   /* choose: see tbmcoll_comm_from_env() and tbmcoll_comm_from_addrs() */
    TBMCOLL_ALGO_MESH = 1,   /* full mesh of connections, direct algorithms */
    TBMCOLL_ALGO_RING = 2,   /* ring neighbours only, pipelined ring algorithms */
    TBMCOLL_ALGO_MPI = 3,    /* Open MPI collectives (reported by tbmcoll_algo(), not chosen in opts) */
} tbmcoll_algo_t;

/* How a mesh runs an all-reduce above TBMCOLL_MESH_SMALL_BYTES (a ring of 4: TBMCOLL_SMALL_BYTES). At
 * creation, a mesh of a power-of-two size from 4 up learns from every rank its machine (Linux: the kernel's boot id; macOS: the boot session's UUID) and
 * count of online cores, and checks that every rank asked for the same. */
typedef enum tbmcoll_mesh_ar {
    TBMCOLL_MESH_AR_AUTO = 0,      /* halving where a machine runs more of the ranks than it has cores
                                    * (tbm_mesh_halving_pays() of lib/reduce.h), direct otherwise */
    TBMCOLL_MESH_AR_DIRECT = 1,    /* the direct pipelined reduce-scatter and all-gather, all links at once */
    TBMCOLL_MESH_AR_HALVING = 2,   /* recursive halving and doubling (other sizes than 4, 8, 16, ...: direct) */
} tbmcoll_mesh_ar_t;

/* How a mesh runs an all-reduce of at most TBMCOLL_MESH_SMALL_BYTES (learnt at creation as above). */
typedef enum tbmcoll_small_ar {
    TBMCOLL_SMALL_AR_AUTO = 0,      /* as tbm_small_plan() of lib/reduce.h says: through rank 0 where a
                                     * machine runs more of the ranks than it has cores, recursive doubling
                                     * where a machine runs 8 or more (a power of two) with a core each, one
                                     * round otherwise */
    TBMCOLL_SMALL_AR_ONEROUND = 1,  /* every rank sends its buffer to every other, all fold (one hop) */
    TBMCOLL_SMALL_AR_ROOTED = 2,    /* every rank sends to rank 0, which folds and sends the result back
                                     * (two hops, 2(n-1) messages); the same bits as one round */
    TBMCOLL_SMALL_AR_DOUBLING = 3,  /* recursive doubling: in step s rank r exchanges its partial result with
                                     * rank r ^ 2^s, both fold lower op higher (log2 n hops; 4, 8, 16 ...
                                     * ranks, one round otherwise); the bits of a balanced tree in rank order.
                                     * A ring of 4 doubles over its corners in Gray order (0, 1, 3, 2: each
                                     * exchange with a neighbour) where a mesh would not go in one round
                                     * (auto) or when asked, and sends both ways around otherwise */
} tbmcoll_small_ar_t;

/* Options; zero-filled means the defaults. */
typedef struct tbmcoll_opts {
    tbmcoll_algo_t algo;       /* AUTO, MESH or RING */
    int connect_timeout_ms;    /* how long rendezvous may take (peers starting late); 0: 30000 */
    int io_timeout_ms;         /* longest wait without any progress inside an operation; 0: 30000 */
    size_t segment_bytes;      /* pipeline granularity (ring segments, mesh all-reduce segments); 0: 256 KiB;
                                * at most TBMCOLL_SEGMENT_MAX; every rank must give the same (the handshake
                                * refuses a peer with another) */
    int sockbuf_bytes;         /* SO_SNDBUF/SO_RCVBUF asked for; 0: 4 MiB; negative: none (the kernel's
                                  own, tuned as the connection goes); the kernel may cap it */
    int spin_us;               /* nothing to move: keep trying (yielding the core between tries, so ranks
                                  that share cores still take turns) this long before sleeping in poll;
                                  0: TBMCOLL_SPIN_US_DEFAULT; negative: sleep after a few tries */
    int streams;               /* mesh: TCP connections per pair of ranks, 1 to 4; a transfer of at least
                                  streams x 64 KiB is split across them (more of the kernel's network work
                                  in parallel); every rank must use the same; 0:
                                  TBMCOLL_STREAMS_DEFAULT, or 1 where some machine has no core to spare
                                  (tbmcoll_streams_in_use) */
    tbmcoll_mesh_ar_t mesh_allreduce;   /* mesh (or ring of 4), above the small size; every rank must
                                           give the same */
    tbmcoll_small_ar_t small_allreduce; /* mesh up to TBMCOLL_MESH_SMALL_BYTES, ring of 4 up to
                                           TBMCOLL_SMALL_BYTES; every rank must give the same */
    int recv_staging;          /* receives into memory 1 to 31 bytes past a 64-byte boundary land in a
                                  page-aligned staging buffer first, then are copied (tbm_recv_staged() in
                                  lib/reduce.h says why): 0: where this CPU's copy to such addresses is the
                                  slow case, as measured once per process (tbmcoll_copy_probe); positive:
                                  always; negative: never */
    int bind_local;            /* ranks started by tbmcoll_run_local: 0, each bound to a CPU of its own when
                                  every rank can have one (tbm_local_cpu() in lib/reduce.h); negative: none
                                  bound (the scheduler places them) */
} tbmcoll_opts_t;

/* "auto", "direct", "halving" ("?" otherwise). */
const char *tbmcoll_mesh_ar_name(tbmcoll_mesh_ar_t how);

/* Parse "auto", "direct" or "halving". Returns 0, or -1 with a message. */
int tbmcoll_mesh_ar_parse(const char *name, tbmcoll_mesh_ar_t *out, tbm_err_t *err);

/* "auto", "oneround", "rooted", "doubling" ("?" otherwise). */
const char *tbmcoll_small_ar_name(tbmcoll_small_ar_t how);

/* Parse "auto", "oneround", "rooted" or "doubling". Returns 0, or -1 with a message. */
int tbmcoll_small_ar_parse(const char *name, tbmcoll_small_ar_t *out, tbm_err_t *err);

/* "auto", "mesh", "ring", "mpi" ("?" otherwise). */
const char *tbmcoll_algo_name(tbmcoll_algo_t algo);

/* Parse "auto", "mesh" or "ring". Returns 0, or -1 with a message. */
int tbmcoll_algo_parse(const char *name, tbmcoll_algo_t *out, tbm_err_t *err);

/*
 * Create a communicator from explicit addresses: addrs[r] is "ipv4:port" where rank r listens (for tests
 * and single-host runs, e.g. "127.0.0.1:40000" .. "127.0.0.1:40003"). This rank binds addrs[rank], dials
 * the peers it must and accepts the others, within connect_timeout_ms. AUTO means mesh. A size of 1 is
 * allowed (every operation is then a local copy). Returns NULL with a message on failure.
 */
tbmcoll_comm_t *tbmcoll_comm_from_addrs(int rank, int size, const char *const *addrs,
                                        const tbmcoll_opts_t *opts, tbm_err_t *err);

/*
 * Create a communicator from exactly what MLX reads (REFERENCE.md, "MLX distributed"):
 *  - ring: MLX_RANK and MLX_HOSTFILE (a JSON list of lists of "ip:port"; rank r listens on the first
 *    address of its list; further addresses, one per extra cable, are not used yet). AUTO means ring
 *    (the hostfile of a ring reaches only neighbours); MESH dials every rank's first address.
 *  - jaccl: MLX_RANK (or JACCL_RANK), MLX_IBV_DEVICES (or JACCL_IBV_DEVICES, or MLX 0.30.3's
 *    MLX_JACCL_DEVICES) and MLX_JACCL_COORDINATOR (or JACCL_COORDINATOR); the JACCL_* names win. The
 *    device "rdma_enX" facing a peer (the first of its cell) is mapped to interface enX and its IPv4 address
 *    (getifaddrs); this rank listens there on a free port. Rank 0 binds the coordinator, the others
 *    connect to it with bounded retries, and the coordinator hands every rank the table of all addresses.
 *    AUTO means mesh when the matrix is a mesh and MLX_JACCL_RING (or JACCL_RING) is unset, ring otherwise.
 * MLX_HOSTFILE wins when both sets are present, as in MLX's backend="any". Every problem (missing
 * variable, unreadable or invalid file, interface without IPv4, rank out of range) is a message naming
 * the variable or file. Returns NULL with a message on failure.
 */
tbmcoll_comm_t *tbmcoll_comm_from_env(const tbmcoll_opts_t *opts, tbm_err_t *err);

/*
 * The MPI transport: initialises MPI if needed (MPI_Init_thread, MPI_THREAD_SINGLE) and wraps
 * MPI_COMM_WORLD. Defined only in libtbmcoll_mpi (link it with $(MPI_LIBS)). tbmcoll_comm_free()
 * finalises MPI if this call initialised it. Returns NULL with a message on failure.
 */
tbmcoll_comm_t *tbmcoll_comm_from_mpi(int *argc, char ***argv, tbm_err_t *err);

/* Close every connection and free the communicator. NULL is allowed. */
void tbmcoll_comm_free(tbmcoll_comm_t *comm);

int tbmcoll_rank(const tbmcoll_comm_t *comm);
int tbmcoll_size(const tbmcoll_comm_t *comm);
tbmcoll_algo_t tbmcoll_algo(const tbmcoll_comm_t *comm);

/* The largest all-reduce (bytes) this communicator runs by its small algorithm: TBMCOLL_MESH_SMALL_BYTES on
 * a mesh, TBMCOLL_SMALL_BYTES on a ring, 0 otherwise (Open MPI, one rank). */
size_t tbmcoll_small_bytes(const tbmcoll_comm_t *comm);

/* How this communicator runs an all-reduce above tbmcoll_small_bytes(): "direct" or "halving" (mesh), "ring",
 * "mpi", or "copy" (one rank). */
const char *tbmcoll_allreduce_plan(const tbmcoll_comm_t *comm);

/* How it runs an all-reduce of at most tbmcoll_small_bytes(): "one round", "through rank 0" or "recursive
 * doubling" (mesh), "both ways around" (ring), "mpi", or "copy" (one rank). */
const char *tbmcoll_small_plan(const tbmcoll_comm_t *comm);

/*
 * The operations. Counts are in elements of dt. Every call returns 0, or -1 with a message in err (and
 * the communicator is broken from then on). Buffers may be unaligned.
 */

/* recv[i] = op over all ranks of send[i], for count elements. In place when send == recv. */
int tbmcoll_allreduce(tbmcoll_comm_t *comm, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                      tbm_redop_t op, tbm_err_t *err);

/* recv (size * count elements) receives rank r's send (count elements) at offset r * count. In place when
 * send == recv + rank * count. */
int tbmcoll_allgather(tbmcoll_comm_t *comm, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                      tbm_err_t *err);

/* send holds size * count elements; rank r receives in recv (count elements) the reduction over all ranks
 * of send's block r (elements r*count .. r*count + count - 1). recv must not overlap send unless it is
 * exactly send's block r (in place). */
int tbmcoll_reduce_scatter(tbmcoll_comm_t *comm, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                           tbm_redop_t op, tbm_err_t *err);

/* Every rank's buf (count elements) receives root's buf. */
int tbmcoll_broadcast(tbmcoll_comm_t *comm, void *buf, size_t count, tbm_dtype_t dt, int root, tbm_err_t *err);

/* Point to point: count elements to / from rank peer (not this rank). The receiver must call
 * tbmcoll_recv with the same count. On a ring only the two neighbours are connected; other peers are
 * refused with a message.
 * Both sides sending large messages to each other at once can block until io_timeout: alternate them. */
int tbmcoll_send(tbmcoll_comm_t *comm, const void *buf, size_t count, tbm_dtype_t dt, int peer, tbm_err_t *err);
int tbmcoll_recv(tbmcoll_comm_t *comm, void *buf, size_t count, tbm_dtype_t dt, int peer, tbm_err_t *err);

/* Send count elements to rank `to` while receiving count elements from rank `from`, both at once (no
 * deadlock when every rank does it, e.g. to = rank+1 and from = rank-1). send and recv must not overlap. */
int tbmcoll_sendrecv(tbmcoll_comm_t *comm, const void *send, int to, void *recv, int from, size_t count,
                     tbm_dtype_t dt, tbm_err_t *err);

/* What this rank knows of its connection to a peer: the ends of the TCP connection and the interface it
 * leaves by (on a Mac, the Thunderbolt port's interface: "en2"). */
typedef struct tbmcoll_peer_info {
    int connected;          /* 1: send/recv with that rank work (on a ring: the two neighbours) */
    char local_if[16];      /* the interface of this end, from its address (getifaddrs); "" if unknown */
    char local_addr[32];    /* "a.b.c.d:port" of this end; "" over MPI */
    char peer_addr[32];     /* "a.b.c.d:port" of the peer's end; "" over MPI */
    uint64_t sent;          /* payload bytes this rank's operations sent to the peer since the communicator
                             * was made (the handshake's not counted; over MPI: 0, not known) */
    uint64_t received;      /* ... and received from it */
} tbmcoll_peer_info_t;

/* Fill out for rank peer (not this rank). Returns 0, or -1 with a message (no such rank). */
int tbmcoll_peer_info(const tbmcoll_comm_t *comm, int peer, tbmcoll_peer_info_t *out, tbm_err_t *err);

/* Where this rank's time went (TCP transports), summed while counting is on: in the send and receive system
 * calls (and the bytes they moved), in reductions, and waiting (poll, and the yields of the spin). Counting
 * costs two clock reads per system call; it is off until tbmcoll_stats_reset(comm, 1). Over MPI all stay 0. */
typedef struct tbmcoll_stats {
    uint64_t io_us;        /* in send/recv */
    uint64_t io_calls;     /* send/recv calls */
    uint64_t io_bytes;     /* bytes those calls moved */
    uint64_t reduce_us;    /* in reductions and folds */
    uint64_t wait_us;      /* in poll and the spin's yields */
    uint64_t polls;        /* sleeps in poll */
    uint64_t staged_bytes; /* received through the staging buffer (opts.recv_staging) */
} tbmcoll_stats_t;

/* Zero the counters and turn counting on (on = 1) or off. */
void tbmcoll_stats_reset(tbmcoll_comm_t *comm, int on);
void tbmcoll_stats_get(const tbmcoll_comm_t *comm, tbmcoll_stats_t *out);

/* TCP connections in use per pair of ranks: opts.streams on a mesh, or 1 where it was not given and some
 * machine has no core to spare for more (tbm_mesh_streams_pay(), decided when the communicator is made); 1 on
 * a ring; 0 over MPI or for NULL. */
int tbmcoll_streams_in_use(const tbmcoll_comm_t *comm);

/* Whether receives are staged on this CPU by default (opts.recv_staging 0): the best times of a 64 KiB copy
 * (`rep movsb`, as the kernel copies socket data on x86-64) into a 64-byte aligned destination and into one 16
 * bytes past, measured once per process, and the decision tbm_staging_pays() takes from them. Elsewhere than
 * on x86-64 nothing is measured (both times 0) and receives are not staged. */
typedef struct tbmcoll_copy_probe {
    double aligned_ns;
    double past_ns;
    int stage;          /* 1: staged */
} tbmcoll_copy_probe_t;
void tbmcoll_copy_probe(tbmcoll_copy_probe_t *out);

/* Returns once every rank has entered the barrier. */
int tbmcoll_barrier(tbmcoll_comm_t *comm, tbm_err_t *err);

/* Run fn on n ranks of this host: free ports on 127.0.0.1 are picked, each rank is forked, bound to its CPU
 * (tbmcoll_local_cpus), with its communicator (tbmcoll_comm_from_addrs with opts), and fn's return value is
 * its exit status. Returns the first non-zero status (128 + signal for a rank killed by one), 0 when all
 * succeeded, 2 when the ranks could not be set up (the reason on stderr, prefixed with prog). A rank that
 * cannot be bound says so on stderr and runs unbound. */
typedef int (*tbmcoll_rank_fn)(tbmcoll_comm_t *comm, void *arg);
int tbmcoll_run_local(int n, const tbmcoll_opts_t *opts, tbmcoll_rank_fn fn, void *arg, const char *prog);

/* A socket bound to a free port of 127.0.0.1 (*port), to be closed once the port has been told to the rank
 * that will listen there: while it is open no other socket gets that port. -1, with errno, on failure. */
int tbmcoll_loopback_socket(int *port);

/* Where tbmcoll_run_local puts its n ranks (opts.bind_local): cpu[r] is rank r's CPU, or -1 for all when
 * they are left unbound. cpu has room for n. Returns 1 when the ranks are bound, 0 when not. */
int tbmcoll_local_cpus(int n, const tbmcoll_opts_t *opts, int *cpu);

#endif
