/* fuzz_sysinfo.c: libFuzzer harness of tbm_parse_sw_vers, tbm_parse_sysctl and tbm_parse_perflevels
 * (lib/parse_sysinfo.c). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one(tbm_parse_sw_vers, data, size);
    fuzz_one(tbm_parse_sysctl, data, size);
    fuzz_one(tbm_parse_perflevels, data, size);
    return 0;
}
