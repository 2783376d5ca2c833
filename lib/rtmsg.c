/* rtmsg.c: link news from a macOS routing socket's bytes (rtmsg.h). */
#include "rtmsg.h"

#include <stdint.h>
#include <string.h>

long tbm_rtmsg_links(const void *buf, size_t n, tbm_rtmsg_link_fn fn, void *ctx, tbm_err_t *err)
{
    const unsigned char *p = buf;
    size_t off = 0;
    long seen = 0;
    uint16_t len, index;
    int32_t flags;

    while (off < n) {
        if (n - off < 4)
            return tbm_errprintf(err, "routing message at byte %zu: %zu bytes left, under the 4 of a message's "
                                 "length, version and type; the links' states are taken afresh", off, n - off);
        memcpy(&len, p + off, sizeof(len));
        if (len < 4 || len > n - off)
            return tbm_errprintf(err, "routing message at byte %zu says it is %u bytes long, with %zu bytes "
                                 "read; the links' states are taken afresh", off, (unsigned)len, n - off);
        if (p[off + 2] == TBM_RTM_VERSION && p[off + 3] == TBM_RTM_IFINFO) {
            if (len < TBM_IFM_SIZE)
                return tbm_errprintf(err, "interface message (RTM_IFINFO) at byte %zu is %u bytes long, under "
                                     "the %d of its header; the links' states are taken afresh", off,
                                     (unsigned)len, TBM_IFM_SIZE);
            memcpy(&flags, p + off + TBM_IFM_FLAGS_OFF, sizeof(flags));
            memcpy(&index, p + off + TBM_IFM_INDEX_OFF, sizeof(index));
            if (fn)
                fn(ctx, index, (flags & TBM_RTM_IFF_UP) && (flags & TBM_RTM_IFF_RUNNING));
            seen++;
        }
        off += len;
    }
    return seen;
}
