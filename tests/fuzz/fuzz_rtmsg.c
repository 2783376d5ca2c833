/* fuzz_rtmsg.c: libFuzzer harness of tbm_rtmsg_links (lib/rtmsg.c): any bytes as one read of a macOS routing
 * socket; it must end, never read outside them, and report no more messages than the bytes can hold. */
#include "rtmsg.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void count(void *ctx, unsigned index, int up)
{
    (void)index;
    if (up != 0 && up != 1)
        abort();
    ++*(long *)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tbm_err_t err;
    long calls = 0, n = tbm_rtmsg_links(data, size, count, &calls, &err);

    if (n > (long)(size / TBM_IFM_SIZE) || (n >= 0 && n != calls) || (n < 0 && !tbm_erris(&err)))
        abort();
    return 0;
}
