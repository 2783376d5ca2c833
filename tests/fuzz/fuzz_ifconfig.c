/* fuzz_ifconfig.c: libFuzzer harness of tbm_parse_ifconfig (lib/parse_ifconfig.c). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one(tbm_parse_ifconfig, data, size);
    return 0;
}
