/* envplan.h: one rank's MLX distributed environment, planned from tbmesh.conf and the job's nodes: the
 * backend (auto resolved), the rank, the variables to export and the files the agent writes on the Mac. */
#ifndef TBM_ENVPLAN_H
#define TBM_ENVPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "errbuf.h"
#include "validate.h"
#include "scalar.h"

#define TBM_ENVPLAN_MAX_RANKS   64     /* a job of more Macs is refused */
#define TBM_ENVPLAN_MAX_RAILS   4      /* cables used between two ranks (JACCL ring allows at most 4) */
#define TBM_ENVPLAN_PORT_SLOTS  32     /* job offsets cycle through this many slots ... */
#define TBM_ENVPLAN_PORT_WINDOW 256    /* ... of this many ports each */
#define TBM_ENVPLAN_DIR_MAX     200    /* longest job folder */
#define TBM_ENVPLAN_MPI_LIBNAME "libmpi.40.dylib"
#define TBM_ENVPLAN_DEVICES_FILE "jaccl-devices.json"
#define TBM_ENVPLAN_HOSTFILE    "ring-hosts.json"

/* Port rule. A job's ports start at the configured port plus its offset,
 *     offset = (job_id mod TBM_ENVPLAN_PORT_SLOTS) * TBM_ENVPLAN_PORT_WINDOW,
 * and stay within that window of 256 ports: JACCL's coordinator takes CoordinatorPort + offset; the ring
 * backend gives rank r's a-th address (k addresses per rank) RingBasePort + offset + r*k + a, which is at
 * most 64 ranks x 4 addresses = 256 ports. Two jobs whose ids differ by less than 32 therefore never share
 * a port, and a port a killed job left behind is not reused by the next 31 jobs. A plan needing a port
 * above 65535 is refused; CoordinatorPort and RingBasePort of 57344 or less fit every job id. */

typedef struct tbm_envplan_opts {
    const char *job_dir;         /* folder of the job's files on the Mac; NULL: "/tmp/tbmesh-job-<id>" */
    const char *mlx_version;     /* NULL: tbmesh.conf's MlxVersion; "" or unparsable: unknown (newest rules) */
    const char *mpi_libname;     /* NULL: TBM_ENVPLAN_MPI_LIBNAME */
} tbm_envplan_opts_t;

typedef struct tbm_envvar {
    char *name;
    char *value;
} tbm_envvar_t;

typedef struct tbm_envfile {
    char *path;                  /* absolute, under the job folder */
    char *data;                  /* NUL-terminated; the same bytes on every rank */
    size_t len;
} tbm_envfile_t;

typedef struct tbm_envplan {
    int distributed;             /* 0 for a one-Mac job: no distributed variable at all, no file */
    tbm_backend_t backend;       /* the backend chosen (auto resolved); for one Mac, what was asked */
    char group[TBM_GROUP_NAME_MAX];
    size_t size;                 /* ranks */
    int rank;                    /* this node's MLX rank (exported as TBMESH_RANK and MLX_RANK) */
    int *order;                  /* order[r]: index into the job's nodes of rank r (size entries) */
    char note[TBM_ERR_MAX];      /* one line for the job's stderr saying what was chosen and why */
    tbm_envvar_t *vars;          /* in export order */
    size_t n_vars;
    tbm_envfile_t *files;
    size_t n_files;
} tbm_envplan_t;

/* Plan the environment of the rank running on `rank_node`.
 *
 * nodes[0..n) are the job's nodes in Slurm's order. Ranks: for jaccl and mpi, rank = position in nodes.
 * For jaccl-ring and ring, neighbouring ranks must be cabled: the ranks keep Slurm's order when it already
 * goes round a cabled cycle (always so in a mesh); otherwise (a ring group whose names do not follow its
 * cables) they follow the cables' cycle from nodes[0], first towards whichever of its two neighbours comes
 * first in nodes. Every rank computes the same order from the same inputs.
 *
 * Backends (b = auto takes the first of jaccl, jaccl-ring, ring, mpi that the group allows for n Macs and
 * the MLX version supports: jaccl on an RDMA full mesh of at most 8, jaccl-ring on an RDMA ring or a larger
 * RDMA mesh, ring otherwise, mpi when the cabling is neither a mesh nor a ring; jaccl and jaccl-ring asked for
 * by name also run where every node of the job is in the group's RdmaSubset= and tbmesh.conf says
 * JacclOnSubsets=yes, by the rules of an RDMA mesh of the subset's size):
 * - every plan: TBMESH_BACKEND, TBMESH_RANK, TBMESH_SIZE. One Mac: TBMESH_BACKEND=none and nothing else.
 * - jaccl, jaccl-ring: MLX_RANK, MLX_IBV_DEVICES (MLX_JACCL_DEVICES for MLX 0.30.3 exactly) naming the
 *   device matrix, MLX_JACCL_COORDINATOR, MLX_JACCL_RING=1 for jaccl-ring; from MLX 0.31.2 (or unknown)
 *   also JACCL_RANK, JACCL_IBV_DEVICES, JACCL_COORDINATOR (and JACCL_RING). Matrix: cell [i][j] the RDMA
 *   device on rank i facing rank j, null on the diagonal; mesh: every pair, the first cable of the pair in
 *   tbmesh.conf; ring: only each rank's two neighbours, the first k cables of each neighbouring pair (k the
 *   smallest count along the ring, at most 4), a list when k > 1.
 *   Coordinator: rank 0 binds 0.0.0.0:<port> (Thunderbolt cables are point-to-point /30 links, so no
 *   single address of rank 0 is reachable from every rank); rank k > 0 connects to rank 0's address on the
 *   first cable joining them, or to rank 0's AgentAddr (an IPv4 management address) when no cable does.
 * - ring: MLX_RANK, MLX_HOSTFILE. Rank r listens on its own ends of the first k cables joining rank r-1
 *   and rank r (k the smallest cable count along the ring, at most 4): rank r-1 connects to rank r and can
 *   reach exactly those addresses.
 * - mpi: OMPI_MCA_btl=self,tcp, OMPI_MCA_btl_tcp_if_include and OMPI_MCA_oob_tcp_if_include (this node's
 *   interfaces on cables to the job's other nodes, in tbmesh.conf order), MLX_MPI_LIBNAME. No MLX_RANK:
 *   Open MPI numbers the ranks. DYLD_LIBRARY_PATH is left to the site (where its Open MPI lives).
 *   On a ring group only neighbours share a Thunderbolt link; Open MPI then needs routes between the others.
 *
 * Returns 0 with `plan` filled (free it with tbm_envplan_free), or -1 with `err` naming the cause and the
 * fix (then `plan` holds nothing to free). */
int tbm_envplan_make(const tbm_conf_t *conf, const char *const *nodes, size_t n, const char *rank_node,
                     tbm_backend_t b, uint32_t job_id, const tbm_envplan_opts_t *opts, tbm_envplan_t *plan,
                     tbm_err_t *err);

void tbm_envplan_free(tbm_envplan_t *plan);

/* The value of a planned variable, or NULL. */
const char *tbm_envplan_get(const tbm_envplan_t *plan, const char *name);

/* tbm_mlx_version_parse(), the MLX version reader, is declared in scalar.h (tbmesh.conf reads it too). */

/* The port offset of a job (see the port rule above). */
int tbm_envplan_port_offset(uint32_t job_id);

#endif
