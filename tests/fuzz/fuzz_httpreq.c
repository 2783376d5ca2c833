/* fuzz_httpreq.c: libFuzzer harness of tbm_http_request_parse (lib/httpreq.c). A head read whole lies within the
 * bytes given and the head's bound, its path starts with '/' and its method is a token; a refusal has a 4xx or
 * 505 status and says why; and a head read whole is read the same with any bytes after it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "httpreq.h"

#define FUZZ_REQUIRE(cond) do { if (!(cond)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tbm_http_request_t req, again;
    tbm_err_t err = { { 0 } };
    int status = 0, rc = tbm_http_request_parse((const char *)data, size, &req, &status, &err), st2;

    FUZZ_REQUIRE(rc >= -1 && rc <= 1);
    if (rc < 0) {
        FUZZ_REQUIRE((status >= 400 && status <= 431) || status == 505);
        FUZZ_REQUIRE(err.msg[0] != '\0');
    } else if (rc == 1) {
        FUZZ_REQUIRE(req.head_len > 0 && req.head_len <= size && req.head_len <= TBM_HTTP_HEAD_MAX);
        FUZZ_REQUIRE(req.path[0] == '/' && req.method[0] && req.minor >= 0 && req.minor <= 1);
        FUZZ_REQUIRE(req.n_headers <= TBM_HTTP_HEADERS_MAX);
        FUZZ_REQUIRE(tbm_http_request_parse((const char *)data, req.head_len, &again, &st2, &err) == 1);
        FUZZ_REQUIRE(again.head_len == req.head_len && !strcmp(again.path, req.path));
    } else {
        FUZZ_REQUIRE(size < TBM_HTTP_HEAD_MAX);
    }
    return 0;
}
