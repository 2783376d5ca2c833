/* mlxenv.h: what MLX's distributed backends read from a rank's environment, parsed and validated:
 * the ring hostfile (MLX_HOSTFILE), the JACCL device matrix (MLX_IBV_DEVICES) and the coordinator address
 * (MLX_JACCL_COORDINATOR). Pure: the caller reads the files and passes their text and name. */
#ifndef TBM_MLXENV_H
#define TBM_MLXENV_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

#define TBM_MLX_IPV4_MAX     16  /* dotted quad with NUL */
#define TBM_MLX_RING_MAX     64  /* ranks in a ring hostfile */
#define TBM_MLX_ADDRS_MAX     8  /* addresses one rank listens on (one per cable) */
#define TBM_MLX_MATRIX_MAX   16  /* ranks in a device matrix (a JACCL mesh has at most 8, a ring more) */
#define TBM_MLX_MESH_MAX      8  /* ranks of a JACCL mesh */
#define TBM_MLX_CELL_DEVS     4  /* devices in one matrix cell (cables between two ranks) */
#define TBM_MLX_DEVNAME_MAX  24  /* "rdma_en12" with NUL */
#define TBM_MLX_TEXT_MAX  (1 << 20)  /* largest file text accepted */

/* An IPv4 address and a TCP port. */
typedef struct tbm_mlx_addr {
    char ip[TBM_MLX_IPV4_MAX];   /* "10.0.1.1" */
    uint32_t ip_be;              /* the same in network byte order */
    uint16_t port;               /* 1..65535 */
} tbm_mlx_addr_t;

/* The ring hostfile: rank r listens on addr[r][0 .. naddrs-1]. */
typedef struct tbm_mlx_hostfile {
    int nranks;
    int naddrs;
    tbm_mlx_addr_t addr[TBM_MLX_RING_MAX][TBM_MLX_ADDRS_MAX];
} tbm_mlx_hostfile_t;

/* The JACCL device matrix: cell [i][j] holds ndev[i][j] device names of rank i facing rank j. */
typedef struct tbm_mlx_devmatrix {
    int n;
    int ndev[TBM_MLX_MATRIX_MAX][TBM_MLX_MATRIX_MAX];
    char dev[TBM_MLX_MATRIX_MAX][TBM_MLX_MATRIX_MAX][TBM_MLX_CELL_DEVS][TBM_MLX_DEVNAME_MAX];
    int is_mesh;   /* every off-diagonal cell set and n <= 8 */
    int is_ring;   /* each rank's left and right cells set, with the same number of devices (at most 4) */
} tbm_mlx_devmatrix_t;

/* Parse "a.b.c.d:port" (decimal dotted quad, port 1..65535). `what` names the value in messages
 * ("MLX_JACCL_COORDINATOR", "hosts.json: rank 1, address 0"). Returns 0, or -1 with a message. */
int tbm_mlx_addr_parse(const char *text, const char *what, tbm_mlx_addr_t *out, tbm_err_t *err);

/* The coordinator address as MLX reads it (ipv4:port). Same as tbm_mlx_addr_parse, with the
 * variable's name in messages. */
int tbm_mlx_coordinator_parse(const char *text, tbm_mlx_addr_t *out, tbm_err_t *err);

/* Parse and validate a ring hostfile's text (len bytes, need not end in NUL); `name` is the file's name,
 * put at the front of every message. Rules: a JSON list indexed by rank, at most TBM_MLX_RING_MAX ranks;
 * each element a non-empty list of "ip:port" strings (IPv4 only), every rank the same number, at most
 * TBM_MLX_ADDRS_MAX; no address listed twice. Returns 0, or -1 with a message. */
int tbm_mlx_hostfile_parse(const char *text, size_t len, const char *name, tbm_mlx_hostfile_t *out,
                           tbm_err_t *err);

/* Parse and validate a JACCL device matrix's text; `name` is the file's name. Rules: N x N JSON list of
 * lists (1 <= N <= TBM_MLX_MATRIX_MAX); null on the diagonal; every other cell null, a device name or a
 * non-empty list of at most TBM_MLX_CELL_DEVS names; a cable shows at both ends (cell [i][j] set exactly
 * when [j][i] is, with as many devices); and the whole is a valid mesh or a valid ring (sets is_mesh and
 * is_ring). Returns 0, or -1 with a message. */
int tbm_mlx_devmatrix_parse(const char *text, size_t len, const char *name, tbm_mlx_devmatrix_t *out,
                            tbm_err_t *err);

/* The network interface behind an RDMA device name: "rdma_en5" -> "en5". out has room for outsz bytes.
 * Returns 0, or -1 with a message when the name does not start with "rdma_" or is too long. */
int tbm_mlx_device_iface(const char *dev, char *out, size_t outsz, tbm_err_t *err);

#endif
