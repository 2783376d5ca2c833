/* fuzz_rdma.c: libFuzzer harness of tbm_parse_ibv_devices and tbm_parse_rdma_ctl (lib/parse_rdma.c). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one(tbm_parse_ibv_devices, data, size);
    fuzz_one(tbm_parse_rdma_ctl, data, size);
    return 0;
}
