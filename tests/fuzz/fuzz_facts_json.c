/* fuzz_facts_json.c: libFuzzer harness of tbm_facts_from_json (lib/facts_json.c): any document it accepts
 * must write back and read again to the same facts. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tbm_host_facts_t f;
    tbm_err_t err;

    if (tbm_facts_from_json((const char *)data, size, &f, &err) == 0)
        fuzz_check_facts(&f);
    else
        FUZZ_REQUIRE(strncmp(err.msg, "facts: ", 7) == 0);
    return 0;
}
