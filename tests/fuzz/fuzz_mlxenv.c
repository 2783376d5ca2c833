/* fuzz_mlxenv.c: libFuzzer harness of MLX's file parsers: any text is a valid ring hostfile, device matrix or
 * coordinator address within its bounds, or is refused with a message naming the file. */
#include <stdint.h>
#include <string.h>

#include "mlxenv.h"

#define FUZZ_REQUIRE(cond) do { if (!(cond)) __builtin_trap(); } while (0)

static void check_addr(const tbm_mlx_addr_t *a)
{
    FUZZ_REQUIRE(memchr(a->ip, 0, sizeof(a->ip)) != NULL && a->port >= 1);
}

static void check_hostfile(const char *text, size_t len)
{
    static tbm_mlx_hostfile_t hf;
    tbm_err_t err = { { 0 } };
    int r, k;

    if (tbm_mlx_hostfile_parse(text, len, "h.json", &hf, &err) < 0) {
        FUZZ_REQUIRE(strncmp(err.msg, "h.json: ", 8) == 0);
        return;
    }
    FUZZ_REQUIRE(hf.nranks >= 1 && hf.nranks <= TBM_MLX_RING_MAX);
    FUZZ_REQUIRE(hf.naddrs >= 1 && hf.naddrs <= TBM_MLX_ADDRS_MAX);
    for (r = 0; r < hf.nranks; r++)
        for (k = 0; k < hf.naddrs; k++)
            check_addr(&hf.addr[r][k]);
}

static void check_matrix(const char *text, size_t len)
{
    static tbm_mlx_devmatrix_t m;
    tbm_err_t err = { { 0 } };
    int i, j, k;

    if (tbm_mlx_devmatrix_parse(text, len, "d.json", &m, &err) < 0) {
        FUZZ_REQUIRE(strncmp(err.msg, "d.json: ", 8) == 0);
        return;
    }
    FUZZ_REQUIRE(m.n >= 1 && m.n <= TBM_MLX_MATRIX_MAX && (m.is_mesh || m.is_ring));
    for (i = 0; i < m.n; i++)
        for (j = 0; j < m.n; j++) {
            FUZZ_REQUIRE(m.ndev[i][j] >= 0 && m.ndev[i][j] <= TBM_MLX_CELL_DEVS);
            FUZZ_REQUIRE(m.ndev[i][j] == m.ndev[j][i] && (i != j || m.ndev[i][j] == 0));
            for (k = 0; k < m.ndev[i][j]; k++)
                FUZZ_REQUIRE(memchr(m.dev[i][j][k], 0, TBM_MLX_DEVNAME_MAX) && m.dev[i][j][k][0]);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char addr[64];
    tbm_mlx_addr_t a;
    tbm_err_t err = { { 0 } };
    size_t n = size < sizeof(addr) - 1 ? size : sizeof(addr) - 1;

    check_hostfile((const char *)data, size);
    check_matrix((const char *)data, size);
    memcpy(addr, data, n);
    addr[n] = '\0';
    if (tbm_mlx_coordinator_parse(addr, &a, &err) == 0)
        check_addr(&a);
    else
        FUZZ_REQUIRE(strncmp(err.msg, "MLX_JACCL_COORDINATOR: ", 23) == 0);
    return 0;
}
