/* fuzz_thunderbolt.c: libFuzzer harness of tbm_parse_thunderbolt (lib/parse_thunderbolt.c). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one(tbm_parse_thunderbolt, data, size);
    return 0;
}
