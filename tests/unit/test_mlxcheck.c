/* test_mlxcheck.c: unit tests of the independent MLX environment checker (tests/mlxcheck). */
#include "tbm_check.h"

static Suite *mlxcheck_suite(void)
{
    return suite_create("mlxcheck");
}

TBM_CHECK_MAIN(mlxcheck_suite)
