/* reduce.h: element-wise reductions (sum, max) for the collective kernels, float16/bfloat16 conversions,
 * and the chunking math that splits a buffer among ranks. Pure: buffers in, buffers out. */
#ifndef TBM_REDUCE_H
#define TBM_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

/* Element types of a collective. */
typedef enum tbm_dtype {
    TBM_DT_F32 = 0,    /* IEEE binary32 */
    TBM_DT_F16 = 1,    /* IEEE binary16 */
    TBM_DT_BF16 = 2,   /* bfloat16: the upper half of a binary32 */
    TBM_DT_I32 = 3,    /* two's complement int32; sums wrap around */
} tbm_dtype_t;
#define TBM_DT_COUNT 4

/* Reduction operators. */
typedef enum tbm_redop {
    TBM_OP_SUM = 0,
    TBM_OP_MAX = 1,
} tbm_redop_t;
#define TBM_OP_COUNT 2

/* Bytes per element (4 or 2); 0 for a value outside the enum. */
size_t tbm_dtype_size(tbm_dtype_t dt);

/* "f32", "f16", "bf16", "i32"; "?" for a value outside the enum. */
const char *tbm_dtype_name(tbm_dtype_t dt);

/* "sum", "max"; "?" for a value outside the enum. */
const char *tbm_redop_name(tbm_redop_t op);

/* Parse a type name ("f32", "float32", "f16", "float16", "bf16", "bfloat16", "i32", "int32").
 * Returns 0, or -1 with a message listing the accepted names. */
int tbm_dtype_parse(const char *name, tbm_dtype_t *out, tbm_err_t *err);

/* Parse an operator name ("sum", "max"). Returns 0, or -1 with a message. */
int tbm_redop_parse(const char *name, tbm_redop_t *out, tbm_err_t *err);

/* Conversions. float16 and bfloat16 are widened exactly and narrowed with round-to-nearest-even;
 * too large values become infinities, NaN stays NaN (quiet) with its sign. */
float tbm_f16_to_f32(uint16_t h);
uint16_t tbm_f32_to_f16(float f);
float tbm_bf16_to_f32(uint16_t h);
uint16_t tbm_f32_to_bf16(float f);

/* dst[i] = a[i] op b[i] for count elements. dst may be the same buffer as a or b (not a partial overlap);
 * buffers need no alignment. float16/bfloat16 are computed in float32 and rounded once
 * (round-to-nearest-even), which equals the correctly rounded result. max: a NaN in either operand gives
 * NaN. The result depends only on the operands and their order, so folding inputs in a fixed order
 * (acc = acc op next) gives the same bits every time. Returns 0, or -1 for an unknown type or operator. */
int tbm_reduce(void *dst, const void *a, const void *b, size_t count, tbm_dtype_t dt, tbm_redop_t op);

/* Fold n equal parts in order into dst: dst = part[0] op part[1] op ... op part[n-1] (n >= 1), per element in
 * that order (so the bits are those of n-1 whole passes of tbm_reduce), a block at a time so that each part
 * is read once. dst may be part[0] or part[1] (read before the block is written), no other part. */
void tbm_fold(void *dst, const unsigned char *const *part, int n, size_t count, tbm_dtype_t dt, tbm_redop_t op);

/* Chunking: count elements split into n nearly-equal chunks, in order; the first count % n chunks hold one
 * element more than the others. Chunk i starts at *off and holds *len elements (0 when count < n and
 * i >= count). n must be >= 1 and 0 <= i < n; otherwise *off = *len = 0. */
void tbm_chunk(size_t count, int n, int i, size_t *off, size_t *len);

/* Whether a mesh all-reduce above the small size should go by recursive halving and doubling (1) rather
 * than the direct pipelined reduce-scatter and all-gather (0): only for a power-of-two n from 4 up, only
 * when some machine runs more of the ranks than it has cores (host[r] names rank r's machine, the same for
 * ranks that share one kernel; cpus[r] is that machine's count of online cores, as rank r saw it): several
 * simulated hosts on one machine, like the embedded lab's Macs, or local ranks over loopback. A rule from
 * measurement (the figures are in kernels/HISTORY.md): there halving and doubling, which pairs the ranks step
 * by step, was ahead in every run (over loopback since its exchanges went in lockstep, "Exchanges in
 * pieces"); with a machine (and cores) per rank the direct all-reduce drives all n-1 links at once, which
 * halving and doubling cannot. */
int tbm_mesh_halving_pays(int n, const uint64_t *host, const uint32_t *cpus);

/* Whether a mesh's extra TCP streams per pair (opts.streams) pay: they spread the kernel's network work of
 * one transfer over cores the ranks do not use, so only where every machine has more cores (cpus[r], of
 * rank r's machine host[r]) than ranks. Measured (kernels/HISTORY.md): the lab's 4 ranks on 2 cores moved 1.2x
 * more with one stream than with three, and 2 ranks on 2 cores over loopback the same with either. 0 with
 * host or cpus NULL or n < 1. */
int tbm_mesh_streams_pay(int n, const uint64_t *host, const uint32_t *cpus);

/* How a mesh all-reduce of the small size goes (host[r] names rank r's machine, cpus[r] its count of online
 * cores):
 *   TBM_SMALL_ROOTED where some machine runs more of the ranks than it has cores, loopback or not: every rank
 *     sends its buffer to rank 0, which folds all n in rank order (the one round's order: the same bits) and
 *     sends the result back; 2(n-1) messages where one round moves n(n-1), in two hops instead of one, and
 *     there the ranks' CPU time (sends, receives, wake-ups), not the wire, is what it waits for. Measured
 *     (kernels/HISTORY.md): 8 ranks on 2 cores over loopback, 8 bytes, one round 153 us, through rank 0
 *     53 us, Open MPI's linear reduce and broadcast 90 us;
 *   TBM_SMALL_DOUBLING where a machine runs 8 ranks or more, each with a core, and n is a power of two:
 *     recursive doubling, log2(n) exchanges with one peer each (hops between ranks of one machine cost
 *     little, each rank's 2(n-1) sends and receives of one round much: 40.4 us in one round against Open
 *     MPI's 29.4 us, 8 ranks on a 16-core machine);
 *   TBM_SMALL_ONEROUND otherwise (a machine per rank, as Macs in a mesh: each rank's n-1 sends leave at once
 *     on links of their own, one hop), and for n < 3 (two ranks: the same exchange either way) or with host
 *     or cpus NULL. */
enum { TBM_SMALL_ONEROUND = 0, TBM_SMALL_ROOTED = 1, TBM_SMALL_DOUBLING = 2 };
int tbm_small_plan(int n, const uint64_t *host, const uint32_t *cpus);

/* Receives through a staging buffer. Linux on x86-64 copies socket data to user memory with `rep movsb`
 * where the CPU has fast short rep movs (FSRM); on AMD Zen 3 that copy runs about 15 times slower when the
 * destination lies 1 to 31 bytes past the source modulo 4096 (measured here: 2.5 against 40 GB/s; glibc's
 * memcpy does the same). The kernel's socket data usually starts at a 64-byte boundary of its pages, and a
 * large malloc() block starts 16 bytes past a page boundary, so a receive straight into such a block is
 * the slow case. Whether a receive of len bytes starting at `start` should land in a page-aligned staging
 * buffer first (1): only one of TBM_STAGE_MIN bytes or more into memory 1 to 31 bytes past a 64-byte
 * boundary. The receive goes on in as many calls as the data comes; each call's data lands at *where bytes
 * into the staging buffer (0 to 4095), 32 bytes past `at` (where that call starts) modulo 4096, so that
 * neither the receive (then 32 to 63 bytes ahead of the socket data, which moves along with `at`) nor the
 * copy out (32 bytes behind) is 1 to 31 bytes ahead of its source. The decision is the whole receive's:
 * `at` past `start` keeps the same distance to the socket data. */
#define TBM_STAGE_MIN 4096
#define TBM_STAGE_PAGE 4096
int tbm_recv_staged(uintptr_t start, size_t len, uintptr_t at, size_t *where);

/* Whether staging pays on this CPU: the slow case above is a property of the CPU (Zen 3 has it; Zen 5, measured
 * here, copies to 16 bytes past a boundary at 0.7 of the aligned speed, and the staging's extra copy then only
 * costs). From the best times of the same copy (64 KiB, `rep movsb`, a page-aligned source) into a destination
 * 64-byte aligned and into one 16 bytes past: 1 when the second is TBM_STAGE_SLOWER times the first or more.
 * Times of 0 or less (not measured) give 0. */
#define TBM_STAGE_SLOWER 3.0
int tbm_staging_pays(double aligned_ns, double past_ns);

/* Where rank `rank` of n ranks started on one machine (tbmcoll_run_local) runs, when the starting process
 * may use the CPUs cpus[0..ncpus-1]: on cpus[rank] of its own when every rank can have one, as Open MPI's
 * mpirun binds its ranks to cores when they fit. Unbound, the scheduler moves two busy ranks onto one core
 * now and then, and each such moment costs both (measured here, 2 ranks on 2 cores: the 8-byte all-reduce's
 * median 12.5 us bound against 15.0 unbound; kernels/HISTORY.md). Returns the CPU, or -1: leave the rank
 * unbound (more ranks than CPUs, rank out of range). */
int tbm_local_cpu(int rank, int n, const int *cpus, int ncpus);

#endif
