/* fuzz_networksetup.c: libFuzzer harness of tbm_parse_networksetup (lib/parse_networksetup.c). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one(tbm_parse_networksetup, data, size);
    return 0;
}
