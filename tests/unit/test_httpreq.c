/* test_httpreq.c: unit tests of lib/httpreq.c: the requests curl and Prometheus send, read whole and in every
 * piece; garbage, oversized heads and forbidden forms refused with their status; the head of a reply. */
#include "tbm_check.h"

#include <string.h>

#include "httpreq.h"

static const char curl_get[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9432\r\nUser-Agent: curl/7.88.1\r\n"
                               "Accept: */*\r\n\r\n";

/* What Prometheus 2.42 sends for a scrape. */
static const char prometheus_get[] =
    "GET /metrics HTTP/1.1\r\n"
    "Host: bridge:9432\r\n"
    "User-Agent: Prometheus/2.42.0\r\n"
    "Accept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n"
    "Accept-Encoding: gzip\r\n"
    "X-Prometheus-Scrape-Timeout-Seconds: 10\r\n"
    "\r\n";

static int parse(const char *text, size_t len, tbm_http_request_t *req, int *status, tbm_err_t *err)
{
    return tbm_http_request_parse(text, len, req, status, err);
}

/* text is refused with status, and err holds `words`. */
static void refused(const char *text, size_t len, int status, const char *words)
{
    tbm_http_request_t req;
    tbm_err_t err = { { 0 } };
    int st = 0;

    ck_assert_int_eq(parse(text, len, &req, &st, &err), -1);
    ck_assert_int_eq(st, status);
    ck_assert_msg(strstr(err.msg, words), "[%s] has no [%s]", err.msg, words);
}

#define REFUSED(text, status, words) refused(text, strlen(text), status, words)

START_TEST(curl_request_is_read)
{
    tbm_http_request_t req;
    tbm_err_t err = { { 0 } };
    int st;

    ck_assert_int_eq(parse(curl_get, strlen(curl_get), &req, &st, &err), 1);
    ck_assert_str_eq(req.method, "GET");
    ck_assert_str_eq(req.path, "/metrics");
    ck_assert_str_eq(req.query, "");
    ck_assert_int_eq(req.minor, 1);
    ck_assert_int_eq(req.head_only, 0);
    ck_assert_uint_eq(req.n_headers, 3);
    ck_assert_uint_eq(req.head_len, strlen(curl_get));
    ck_assert_int_eq(parse(prometheus_get, strlen(prometheus_get), &req, &st, &err), 1);
    ck_assert_str_eq(req.path, "/metrics");
    ck_assert_uint_eq(req.n_headers, 5);
}
END_TEST

/* Every piece shorter than the whole head is "read on"; the whole head is read at its last byte. */
START_TEST(every_piece_waits_for_more)
{
    tbm_http_request_t req;
    tbm_err_t err = { { 0 } };
    size_t n, len = strlen(prometheus_get);
    int st;

    for (n = 0; n < len; n++)
        ck_assert_msg(parse(prometheus_get, n, &req, &st, &err) == 0, "piece of %zu bytes: %s", n, err.msg);
    ck_assert_int_eq(parse(prometheus_get, len, &req, &st, &err), 1);
}
END_TEST

START_TEST(forms_that_are_accepted)
{
    static const char pipelined[] = "GET /a HTTP/1.0\r\n\r\nGET /b HTTP/1.0\r\n\r\n";
    static const char fields[] = "GET / HTTP/1.1\r\nHost: x\r\nX-Empty:\r\nX-Text: caf\xc3\xa9\t ok\r\n\r\n";
    tbm_http_request_t req;
    tbm_err_t err = { { 0 } };
    int st;

    ck_assert_int_eq(parse("GET /metrics?x=1&y HTTP/1.0\r\n\r\n", 31, &req, &st, &err), 1);
    ck_assert_str_eq(req.path, "/metrics");
    ck_assert_str_eq(req.query, "x=1&y");
    ck_assert_int_eq(req.minor, 0);   /* HTTP/1.0 needs no Host */
    ck_assert_int_eq(parse("GET / HTTP/1.1\nHost: x\n\n", 24, &req, &st, &err), 1);   /* bare LF */
    ck_assert_uint_eq(req.head_len, 24);
    ck_assert_int_eq(parse("\r\n\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", 30, &req, &st, &err), 1);
    ck_assert_str_eq(req.path, "/");
    ck_assert_int_eq(parse("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 35, &req, &st, &err), 1);
    ck_assert_int_eq(req.head_only, 1);
    ck_assert_int_eq(parse("POST /metrics HTTP/1.1\r\nhost:x\r\nContent-Length: 3\r\n\r\nabc", 56, &req, &st, &err), 1);
    ck_assert_str_eq(req.method, "POST");   /* read: the server answers it 405 */
    ck_assert_int_eq(parse("GET http://bridge:9432/metrics?a HTTP/1.1\r\nHost: bridge\r\n\r\n", 59, &req, &st, &err), 1);
    ck_assert_str_eq(req.path, "/metrics");
    ck_assert_str_eq(req.query, "a");
    ck_assert_int_eq(parse("GET http://bridge HTTP/1.1\r\nHost: bridge\r\n\r\n", 44, &req, &st, &err), 1);
    ck_assert_str_eq(req.path, "/");
    ck_assert_int_eq(parse(pipelined, strlen(pipelined), &req, &st, &err), 1);
    ck_assert_str_eq(req.path, "/a");
    ck_assert_uint_eq(req.head_len, 19);
    ck_assert_int_eq(parse(fields, strlen(fields), &req, &st, &err), 1);
    ck_assert_uint_eq(req.n_headers, 3);
}
END_TEST

START_TEST(garbage_is_refused_at_once)
{
    static const char tls_hello[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03";
    static const char nul_target[] = "GET /me\0trics HTTP/1.1\r\n";

    refused(tls_hello, sizeof(tls_hello) - 1, 400, "starts with byte 0x16");
    refused(nul_target, sizeof(nul_target) - 1, 400, "target holds byte 0x00");
    REFUSED("GET\t/ HTTP/1.1", 400, "goes on with byte 0x09");
    REFUSED("GET  / HTTP/1.1\r\n", 400, "(empty)");
    REFUSED("GET metrics HTTP/1.1\r\n", 400, "does not start with '/'");
    REFUSED("GET ftp://x/ HTTP/1.1\r\n\r\n", 400, "does not start with '/'");
    REFUSED("GET hxxp://x/ HTTP/1.1\r\n\r\n", 400, "nor http://");
    REFUSED("GET http:// HTTP/1.1\r\n\r\n", 400, "the request target http:// names no host and no path after it "
            "(http://host/metrics, or /metrics)");
    REFUSED("GET HTTPS:// HTTP/1.1\r\n\r\n", 400, "target HTTPS:// names no host and no path");
    REFUSED("GET / HTTP/1.1 \r\n", 400, "does not end in HTTP/1.1");
    REFUSED("GET / HTTX", 400, "does not end in HTTP/1.1");
    REFUSED("GET /\r\n\r\n", 400, "HTTP/0.9");
    REFUSED("GET\r\n", 400, "one word");
    REFUSED("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 400, "longer than 15");
    REFUSED("GET / HTTP/2.0\r\n\r\n", 505, "HTTP/2.0 is not served");
    REFUSED("GET / HTTP/1.2\r\n\r\n", 505, "HTTP/1.2");
    REFUSED("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, "'*'");
    REFUSED("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400, "obs-fold");
    REFUSED("GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400, "no space before its ':'");
    REFUSED("GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 400, "no ':'");
    REFUSED("GET / HTTP/1.1\r\nHost: x\r\n: empty\r\n\r\n", 400, "no name");
    REFUSED("GET / HTTP/1.1\r\nHost: a\x01z\r\n", 400, "value holds byte 0x01");
    REFUSED("GET / HTTP/1.1\r\nHost: a\rz\r\n", 400, "bare CR");
    REFUSED("GET / HTTP/1.1\r\nX: 1\r\n\r\n", 400, "needs one Host field; it has none");
    REFUSED("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", 400, "more than one");
}
END_TEST

START_TEST(oversized_heads_are_refused)
{
    char *big = malloc(TBM_HTTP_HEAD_MAX + 64);
    size_t n;

    /* a target past its bound: 414 before the line ends */
    n = (size_t)snprintf(big, TBM_HTTP_HEAD_MAX, "GET /");
    memset(big + n, 'a', TBM_HTTP_TARGET_MAX);
    refused(big, n + TBM_HTTP_TARGET_MAX, 414, "target is longer than 2047");
    /* a field that takes the head past 8 KiB: 431 */
    n = (size_t)snprintf(big, TBM_HTTP_HEAD_MAX, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: ");
    memset(big + n, 'b', TBM_HTTP_HEAD_MAX + 10 - n);
    refused(big, TBM_HTTP_HEAD_MAX + 10, 431, "longer than 8192");
    /* 65 fields */
    n = (size_t)snprintf(big, TBM_HTTP_HEAD_MAX, "GET / HTTP/1.1\r\nHost: x\r\n");
    while (n < 64 * 6 + 30)
        n += (size_t)snprintf(big + n, TBM_HTTP_HEAD_MAX - n, "X: 1\r\n");
    n += (size_t)snprintf(big + n, TBM_HTTP_HEAD_MAX - n, "\r\n");
    refused(big, n, 431, "more than 64 header fields");
    /* empty lines without end: the head's bound, and no request line */
    memset(big, '\n', TBM_HTTP_HEAD_MAX);
    refused(big, TBM_HTTP_HEAD_MAX, 400, "the request's first 8192 bytes are blank lines, with no request line "
            "(METHOD TARGET HTTP/1.1)");
    for (n = 0; n + 2 <= TBM_HTTP_HEAD_MAX + 64; n += 2)
        memcpy(big + n, "\r\n", 2);
    refused(big, n, 400, "the request's first 8192 bytes are blank lines");
    /* a request line after blank lines that does not end within the head's bound */
    memset(big, '\n', 100);
    memcpy(big + 100, "GET /", 5);
    memset(big + 105, 'a', TBM_HTTP_HEAD_MAX - 105);
    refused(big, TBM_HTTP_HEAD_MAX, 414, "target is longer than 2047");
    free(big);
}
END_TEST

/* Bytes of every kind, in every length up to 64: an answer each time, a status with each refusal. */
START_TEST(random_bytes_get_an_answer)
{
    static const char alphabet[] = "GET /HTP1.\r\n:\t \x01\x80hs";
    unsigned long long x = 88172645463325252ull;
    tbm_http_request_t req;
    tbm_err_t err;
    char buf[64];
    int i, st, rc;
    size_t n, k;

    for (i = 0; i < 20000; i++) {
        n = (size_t)(i % 64);
        for (k = 0; k < n; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[k] = (x >> 8) & 1 ? alphabet[x % (sizeof(alphabet) - 1)] : (char)(x >> 16);
        }
        err.msg[0] = '\0';
        rc = parse(buf, n, &req, &st, &err);
        ck_assert(rc >= -1 && rc <= 1);
        if (rc < 0)
            ck_assert(st >= 400 && err.msg[0]);
        if (rc == 1)
            ck_assert(req.head_len <= n && req.path[0] == '/');
    }
}
END_TEST

START_TEST(reply_head_is_written)
{
    char buf[512];
    int n;

    n = tbm_http_reply_head(200, "text/plain; version=0.0.4; charset=utf-8", 1234, NULL, buf, sizeof(buf));
    ck_assert_str_eq(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                          "Content-Length: 1234\r\nConnection: close\r\n\r\n");
    ck_assert_int_eq(n, (int)strlen(buf));
    n = tbm_http_reply_head(405, "text/plain", 0, "Allow: GET, HEAD\r\n", buf, sizeof(buf));
    ck_assert_int_gt(n, 0);
    ck_assert_ptr_nonnull(strstr(buf, "HTTP/1.1 405 Method Not Allowed\r\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\r\nAllow: GET, HEAD\r\nConnection: close\r\n\r\n"));
    ck_assert_int_eq(tbm_http_reply_head(200, "text/plain\r\nX: injected", 0, NULL, buf, sizeof(buf)), -1);
    ck_assert_int_eq(tbm_http_reply_head(200, "text/plain", 0, "X: 1\nY: 2\r\n", buf, sizeof(buf)), -1);
    ck_assert_int_eq(tbm_http_reply_head(200, "text/plain", 0, "X: 1", buf, sizeof(buf)), -1);
    ck_assert_int_eq(tbm_http_reply_head(200, "text/plain", 0, NULL, buf, 20), -1);
    ck_assert_str_eq(tbm_http_reason(431), "Request Header Fields Too Large");
    ck_assert_str_eq(tbm_http_reason(299), "Error");
}
END_TEST

static Suite *httpreq_suite(void)
{
    Suite *s = suite_create("httpreq");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, curl_request_is_read);
    tcase_add_test(tc, every_piece_waits_for_more);
    tcase_add_test(tc, forms_that_are_accepted);
    tcase_add_test(tc, garbage_is_refused_at_once);
    tcase_add_test(tc, oversized_heads_are_refused);
    tcase_add_test(tc, random_bytes_get_an_answer);
    tcase_add_test(tc, reply_head_is_written);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(httpreq_suite)
