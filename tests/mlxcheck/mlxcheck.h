/* mlxcheck.h: a checker of MLX's distributed environment written from REFERENCE.md's rules alone (not from
 * lib/envplan.c): one rank's variables and the files they name, and all ranks of a job together. */
#ifndef TBM_MLXCHECK_H
#define TBM_MLXCHECK_H

#include <stddef.h>

#include "finding.h"

#define MLXC_MESH_MAX  8         /* JACCL mesh: at most 8 ranks */
#define MLXC_RING_MAX  4         /* JACCL ring: at most 4 devices towards each neighbour */
#define MLXC_RANKS_MAX 1024

typedef struct mlxc_file {
    const char *path;
    const char *data;
    size_t len;
} mlxc_file_t;

/* What one rank sees. addrs: this rank's own IPv4 addresses, "a.b.c.d" or "a.b.c.d/len" (with the prefix
 * length the reachability checks run too); addrs NULL means unknown and skips the checks that need them. */
typedef struct mlxc_rank {
    const char *const *env;      /* "NAME=VALUE" */
    size_t n_env;
    const mlxc_file_t *files;    /* the files the variables name, as read on this rank */
    size_t n_files;
    const char *const *addrs;
    size_t n_addrs;
} mlxc_rank_t;

/* Check one rank: exactly one backend's variables (ring wins under "any" when MLX_HOSTFILE is set, so a
 * JACCL rank must not set it), TBMESH_* agreeing with them, JACCL_* aliases equal to MLX_*, the device
 * matrix (square, null diagonal, cells set in pairs, a mesh of at most 8 or a ring of at most 4 devices a
 * side), the coordinator (ipv4:port; on rank 0 local or 0.0.0.0), the ring hostfile (a list per rank, the
 * same count each, ipv4:port, ports valid and unique, this rank's entries its own addresses), Open MPI's
 * interface selection. Each problem is added to `out` as an error whose `where` is "rank R" (or "rank ?").
 * Returns how many problems were found. */
size_t mlxc_check_rank(const mlxc_rank_t *r, tbm_findings_t *out);

/* Check every rank of a job (ranks in any order), then across them: the same backend and size, each rank
 * exactly once, the same file bytes everywhere, one coordinator port, every coordinator address one of rank
 * 0's own, every hostfile entry an address of the rank it belongs to; with prefix lengths, also that each
 * rank can reach what it connects to (the next rank's listening addresses, the coordinator) on a subnet it
 * shares. Returns how many problems were found. */
size_t mlxc_check_job(const mlxc_rank_t *ranks, size_t n, tbm_findings_t *out);

#endif
