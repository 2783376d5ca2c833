/* bench.h: the parts of `macnode bench` (the program macnode-bench): options (bench_options.c), the check's
 * values (bench_values.c), the sweep of sizes (bench_sweep.c), every cable alone (bench_p2p.c), the output
 * (bench_output.c), progress on stderr (bench_progress.c), and the ranks' start (bench_main.c). */
#ifndef TBMCOLL_BENCH_H
#define TBMCOLL_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "tbmcoll.h"

#define BENCH_PROG "macnode bench"

typedef enum bench_op { OP_ALLREDUCE, OP_ALLGATHER, OP_REDUCESCATTER, OP_BROADCAST, OP_SENDRECV, OP_P2P,
                        OP_COUNT } bench_op_t;
extern const char *const bench_op_names[OP_COUNT];

enum { FMT_TABLE, FMT_CSV, FMT_JSON };
enum { TRANSPORT_TCP, TRANSPORT_MPI, TRANSPORT_BOTH };
enum { PROGRESS_AUTO, PROGRESS_ON, PROGRESS_OFF };
#define LOCAL_MAX 16         /* -l: ranks on one host */
#define LOCAL_MAX_RANKS 64   /* ranks of a communicator (tbmcoll.h) */
#define HOST_MAX 64

typedef struct bench {
    int use_mpi;                 /* -T: TRANSPORT_TCP, _MPI or _BOTH */
    int local_ranks;             /* -l N: fork N ranks on 127.0.0.1; 0: MLX's environment (or MPI) */
    tbmcoll_opts_t opts;
    bench_op_t op;
    tbm_dtype_t dt;
    tbm_redop_t redop;
    int root;
    size_t minb, maxb;
    unsigned factor;
    int iters, warmup, check, format;
    int lat_iters;               /* -L: ping-pong round trips per cable (p2p) */
    int progress;                /* --progress auto|on|off */
    int verbose;                 /* -V: where the time goes, per size (tbmcoll_stats) */
    int traffic;                 /* --traffic: the bytes sent to each peer, after the sweep */
    tbmcoll_comm_t *c;           /* the communicator measured now */
    tbmcoll_comm_t *turn[2];     /* -T both: libtbmcoll's TCP mesh and Open MPI, in the same ranks */
    int turns;                   /* -T both (--turns): how often the two take turns at each size */
    int rank, n;                 /* in the communicator measured now */
    int speaker;                 /* this rank prints the tables: rank 0 (of the TCP mesh with -T both) */
    unsigned char *sendbuf, *recvbuf;
    unsigned char *sendmem, *recvmem;   /* what was allocated (the buffers lie -O bytes into it) */
    int offset;                  /* -O: the buffers this far past a page boundary; -1: where calloc puts them */
    int cpu[LOCAL_MAX];          /* -l: the CPU of each rank (--bind), -1 unbound */
    double busbw_sum;
    int busbw_count;
    long wrong_total;
    /* progress (rank 0): work done and to do, in bytes moved per rank */
    double work_total, work_done, t_start, t_said;
    int said, tty;
} bench_t;

/* One measured placement. */
typedef struct result {
    int ran;
    double us, algbw, busbw;
    long wrong;
    /* -V: per operation, the largest over the ranks: time in send/recv, those calls and their bytes, time
     * in reductions, time waiting (poll, yields), sleeps in poll and bytes received through staging */
    double io_us, io_calls, io_bytes, reduce_us, wait_us, polls, staged;
} result_t;

/* One size of the sweep. */
typedef struct shape {
    size_t count;      /* elements in the size (allgather / reducescatter: per * n) */
    size_t per;        /* elements per rank block (allgather / reducescatter) */
    size_t bytes;      /* bytes of the size */
} shape_t;

/* What each rank tells the others about itself (p2p): its host and, per peer, whether they are connected and
 * the interface its end leaves by. Whole 32-bit words, to travel as TBM_DT_I32. */
typedef struct rank_card {
    char host[HOST_MAX];
    struct {
        char ifname[16];
        int32_t connected;
    } peer[LOCAL_MAX_RANKS];
} rank_card_t;

/* What each rank moved to and from each peer over the sweep (--traffic), and the interface it left by; the
 * 64-bit counts as two 32-bit words (low first), to travel as TBM_DT_I32. */
typedef struct traffic_card {
    char host[HOST_MAX];
    struct {
        char ifname[16];
        uint32_t sent[2], received[2];
        int32_t connected;
    } peer[LOCAL_MAX_RANKS];
} traffic_card_t;

/* Per cable, summed over ranks (each field is written by one rank only). */
enum { P_AB, P_BA, P_BOTH, P_LAT, P_WRONG, P_FIELDS };

/* ---- bench_options.c ---- */
/* Parse the command line into b (defaults already there). Returns 0, 1 after --help (printed), or -1 after
 * a message on stderr. */
int bench_parse_args(bench_t *b, int argc, char **argv);

/* ---- bench_values.c: inputs of the check, small integers exact in every type (sums too) ---- */
int bench_value_of(int rank, size_t i);
void bench_fill(tbm_dtype_t dt, unsigned char *p, size_t count, int rank, size_t first);
double bench_get(tbm_dtype_t dt, const unsigned char *p, size_t i);
/* The value element i of the operation's output must hold (shape s, this rank). */
int bench_expected(const bench_t *b, const shape_t *s, size_t i);
/* Elements of buf (count) that differ from what rank `sender` sent (bench_fill). */
long bench_count_wrong(const bench_t *b, const unsigned char *buf, size_t count, int sender);

/* ---- bench_sweep.c ---- */
/* The nccl-tests-style sweep of sizes. Exit code: 0, 1 (a wrong value), 3 (a rank failed). */
int bench_sweep(bench_t *b);

/* ---- bench_p2p.c ---- */
/* Every cable alone in turn. Exit code: 0, 1 (a wrong value), 2 (nothing connected), 3 (a rank failed). */
int bench_p2p(bench_t *b);
/* --traffic: every rank's counts (tbmcoll_peer_info), gathered on every rank (b->n cards, malloc'd); NULL
 * after a message on stderr. */
traffic_card_t *bench_traffic(bench_t *b);

/* ---- bench_output.c (rank 0, stdout) ---- */
const char *bench_transport_name(const bench_t *b);
void bench_print_header(const bench_t *b);
void bench_print_size(const bench_t *b, const shape_t *s);
void bench_print_result(bench_t *b, const shape_t *s, const result_t *r, int in_place, int *first_json);
void bench_print_row_end(const bench_t *b);
/* The end of the output; with --traffic, every rank's card (b->n of them; else NULL). */
void bench_print_footer(const bench_t *b, const traffic_card_t *cards);
/* -V: the counters of both placements of a size (r[0] out of place, r[1] in place): '#' lines on stdout in
 * a table, on stderr with CSV or JSON. */
void bench_print_counters(const bench_t *b, const shape_t *s, const result_t *r);
/* The p2p table: np cables (pairs), res holding P_FIELDS per cable; size and lat are the message sizes. */
void bench_print_cables(bench_t *b, const rank_card_t *cards, const int (*pairs)[2], int np, const float *res,
                        size_t size, size_t lat);

/* ---- bench_progress.c (rank 0, stderr) ---- */
double bench_now_s(void);
void bench_progress_start(bench_t *b, double work_total);
void bench_progress_step(bench_t *b, double work, const char *what);
void bench_progress_end(bench_t *b);

#endif
