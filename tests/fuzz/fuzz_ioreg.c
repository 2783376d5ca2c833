/* fuzz_ioreg.c: libFuzzer harness of tbm_parse_ioreg (lib/parse_ioreg.c). Whatever is accepted holds at most
 * TBM_IOREG_GPUS_MAX objects with bounded names, percents from 0 to 100 and memory that is a whole number;
 * whatever is refused says why, naming ioreg, and keeps no object. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse_ioreg.h"

#define FUZZ_REQUIRE(cond) do { if (!(cond)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_gpu(const tbm_ioreg_gpu_t *g)
{
    const tbm_reading_t *pct[] = { &g->device_util, &g->renderer_util, &g->tiler_util };
    const tbm_reading_t *mem[] = { &g->mem_in_use, &g->mem_alloc };
    size_t i;

    FUZZ_REQUIRE(memchr(g->ioclass, '\0', sizeof(g->ioclass)) && g->ioclass[0]);
    FUZZ_REQUIRE(memchr(g->model, '\0', sizeof(g->model)) != NULL);
    FUZZ_REQUIRE(g->gpu_cores >= -1 && g->gpu_cores <= 100000);
    for (i = 0; i < 3; i++)
        FUZZ_REQUIRE(!pct[i]->reported || (pct[i]->value >= 0 && pct[i]->value <= 100 && g->has_stats));
    for (i = 0; i < 2; i++)
        FUZZ_REQUIRE(!mem[i]->reported || (mem[i]->value >= 0 && mem[i]->value == floor(mem[i]->value)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tbm_ioreg_t out;
    tbm_err_t err;
    int i;

    if (tbm_parse_ioreg((const char *)data, size, &out, &err) == 0) {
        FUZZ_REQUIRE(out.n >= 0 && out.n <= TBM_IOREG_GPUS_MAX);
        for (i = 0; i < out.n; i++)
            check_gpu(&out.gpu[i]);
    } else {
        FUZZ_REQUIRE(out.n == 0 && strncmp(err.msg, "ioreg output", 12) == 0);
    }
    return 0;
}
