/* httpreq.h: the head of an HTTP/1.x request (request line and header fields, RFC 9112) read strictly and
 * bounded, for the small metrics servers (common/httpd.c); and the head of their replies. Pure: bytes in, a
 * request or a refusal with its status out. The server reads a request, answers it and closes: no bodies, no
 * keep-alive, so only what that needs is kept. */
#ifndef TBM_HTTPREQ_H
#define TBM_HTTPREQ_H

#include <stddef.h>

#include "errbuf.h"

#define TBM_HTTP_HEAD_MAX    8192   /* request line and header fields, with their line ends */
#define TBM_HTTP_HEADERS_MAX 64     /* header fields in one request */
#define TBM_HTTP_METHOD_MAX  16     /* a method's name, with its NUL */
#define TBM_HTTP_TARGET_MAX  2048   /* a request target, with its NUL */

typedef struct tbm_http_request {
    char method[TBM_HTTP_METHOD_MAX];   /* "GET" (case kept: methods are case-sensitive) */
    char path[TBM_HTTP_TARGET_MAX];     /* "/metrics": the target up to '?', percent-encoding left as it is */
    char query[TBM_HTTP_TARGET_MAX];    /* what follows '?'; "" when none */
    int minor;                          /* HTTP/1.minor: 0 or 1 */
    int head_only;                      /* HEAD: the reply's head without its body */
    size_t n_headers;
    size_t head_len;                    /* bytes of the head, its empty line included */
} tbm_http_request_t;

/* Read the head of a request from the start of buf[0..len). Returns 1 with *req when the head is whole; 0 when
 * what came so far is right but the head is not whole yet (read on; len reaching TBM_HTTP_HEAD_MAX is a
 * refusal, not 0); -1 with *status and err saying why:
 *   400  not HTTP: a malformed request line or header field, a control byte, a line folded onto the next
 *        (obs-fold), a space before a field's colon, an HTTP/1.1 request without one Host field;
 *   414  a target longer than TBM_HTTP_TARGET_MAX - 1 bytes (or a request line that does not end within
 *        TBM_HTTP_HEAD_MAX);
 *   431  a head longer than TBM_HTTP_HEAD_MAX, or more than TBM_HTTP_HEADERS_MAX fields;
 *   505  an HTTP version other than 1.0 and 1.1.
 * Lines end in CRLF or a bare LF; empty lines before the request line are skipped. A method other than GET
 * and HEAD is read as any other (the server answers it 405). Garbage is refused as soon as its line is seen. */
int tbm_http_request_parse(const char *buf, size_t len, tbm_http_request_t *req, int *status, tbm_err_t *err);

/* The reason phrase of a status this server sends ("OK", "Not Found"); "Error" for others. */
const char *tbm_http_reason(int status);

/* The head of a reply that closes its connection after the body:
 *   HTTP/1.1 STATUS REASON\r\nContent-Type: TYPE\r\nContent-Length: LEN\r\n[EXTRA]Connection: close\r\n\r\n
 * extra: more header fields, each ending in "\r\n", or NULL. Into buf; returns its length, or -1 when it does
 * not fit in size bytes, or content_type or extra hold a line end where none belongs. */
int tbm_http_reply_head(int status, const char *content_type, size_t body_len, const char *extra, char *buf,
                        size_t size);

#endif
