/* httpreq.c: the head of an HTTP/1.x request, read strictly and bounded, and the head of a reply (see
 * httpreq.h). */
#include "httpreq.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* A token's character (RFC 9110 tchar). */
static int tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* A byte a field's value may hold: a visible character, a space or tab, or obs-text. */
static int value_char(unsigned char c)
{
    return c == ' ' || c == '\t' || (c >= 0x21 && c != 0x7f);
}

static int refuse(int *status, int code, tbm_err_t *err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int refuse(int *status, int code, tbm_err_t *err, const char *fmt, ...)
{
    char msg[TBM_ERR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    *status = code;
    return tbm_errprintf(err, "%s", msg);
}

/* The printable form of a byte for messages: "'x'" or "byte 0x1f". */
static const char *byte_name(unsigned char c, char *buf, size_t len)
{
    if (c >= 0x21 && c < 0x7f)
        snprintf(buf, len, "'%c'", c);
    else
        snprintf(buf, len, "byte 0x%02x", c);
    return buf;
}

/* How much of "HTTP/D.D" s[0..n) matches: 1 when all n bytes do (n <= 8), else 0. */
static int version_prefix(const char *s, size_t n)
{
    static const char pattern[] = "HTTP/9.9";   /* '9': any digit */
    size_t k;

    if (n > sizeof(pattern) - 1)
        return 0;
    for (k = 0; k < n; k++)
        if (pattern[k] == '9' ? s[k] < '0' || s[k] > '9' : s[k] != pattern[k])
            return 0;
    return 1;
}

/* The path of a whole target s[0..n) into path (TBM_HTTP_TARGET_MAX bytes): the origin form ("/metrics?x") as
 * it is, the absolute form ("http://host:9432/metrics") from the slash after its authority ("/" when none). */
static int target_path(const char *s, size_t n, char *path, int *status, tbm_err_t *err)
{
    const char *end = s + n, *p;

    if (s[0] != '/') {
        p = n >= 7 && !strncasecmp(s, "http://", 7) ? s + 7 : n >= 8 && !strncasecmp(s, "https://", 8) ? s + 8 : NULL;
        if (!p)
            return refuse(status, 400, err, "the request target does not start with '/' (nor http://)");
        if (p == end)
            return refuse(status, 400, err, "the request target %.*s names no host and no path after it "
                          "(http://host/metrics, or /metrics)", (int)(p - s), s);
        p = memchr(p, '/', (size_t)(end - p));
        if (!p) {
            snprintf(path, TBM_HTTP_TARGET_MAX, "/");
            return 0;
        }
        n = (size_t)(end - p);
        s = p;
    }
    memcpy(path, s, n);
    path[n] = '\0';
    return 0;
}

/* The request line s[0..n) (its line end taken off; `whole` when the line has ended). 1 when read, 0 when
 * right so far but not whole, -1 with *status. */
static int request_line(const char *s, size_t n, int whole, tbm_http_request_t *req, int *status, tbm_err_t *err)
{
    size_t i = 0, t;
    char b[16];

    while (i < n && tchar((unsigned char)s[i]))
        if (++i >= TBM_HTTP_METHOD_MAX)
            return refuse(status, 400, err, "the method is longer than %d bytes: this is not an HTTP request",
                          TBM_HTTP_METHOD_MAX - 1);
    if (i == n && !whole)
        return 0;
    if (i == n)
        return refuse(status, 400, err, "the request line is one word, not METHOD TARGET HTTP/1.1");
    if (i == 0 || s[i] != ' ')
        return refuse(status, 400, err, "the request line %s %s, not with a method and a space: this is not "
                      "an HTTP request", i ? "goes on with" : "starts with", byte_name((unsigned char)s[i], b, sizeof(b)));
    memcpy(req->method, s, i);
    req->method[i] = '\0';
    for (t = ++i; i < n && s[i] != ' '; i++) {
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] >= 0x7f)
            return refuse(status, 400, err, "the request target holds %s", byte_name((unsigned char)s[i], b, sizeof(b)));
        if (i - t + 1 >= TBM_HTTP_TARGET_MAX)
            return refuse(status, 414, err, "the request target is longer than %d bytes", TBM_HTTP_TARGET_MAX - 1);
    }
    if ((i < n && i == t) || (i > t && s[t] != '/' && s[t] != 'h' && s[t] != 'H'))
        return refuse(status, 400, err, "the request target %s does not start with '/'",
                      i == t ? "(empty)" : byte_name((unsigned char)s[t], b, sizeof(b)));
    if (i == n)
        return whole ? refuse(status, 400, err, "the request line has no HTTP version (HTTP/0.9 is not served)") : 0;
    if (target_path(s + t, i - t, req->path, status, err) < 0)
        return -1;
    s += i + 1;
    n -= i + 1;
    if (!version_prefix(s, n) || (whole && n != 8))
        return refuse(status, 400, err, "the request line does not end in HTTP/1.1 or HTTP/1.0");
    if (!whole)
        return 0;
    if (s[5] != '1' || s[7] > '1')
        return refuse(status, 505, err, "HTTP/%.3s is not served: ask with HTTP/1.1 or HTTP/1.0", s + 5);
    req->minor = s[7] - '0';
    return 1;
}

/* One header field s[0..n) (or the start of one, when not whole). 0 when right, -1 with *status. Counts Host
 * fields in *hosts. */
static int field(const char *s, size_t n, int whole, int *hosts, int *status, tbm_err_t *err)
{
    size_t i;
    char b[16];

    if (n && (s[0] == ' ' || s[0] == '\t'))
        return refuse(status, 400, err, "a header field is folded onto the next line (obs-fold): not accepted");
    for (i = 0; i < n && tchar((unsigned char)s[i]); i++)
        ;
    if (i == n)
        return whole ? refuse(status, 400, err, "a header field has no ':'") : 0;
    if (s[i] != ':')
        return refuse(status, 400, err, "a header field's name holds %s (no space before its ':')",
                      byte_name((unsigned char)s[i], b, sizeof(b)));
    if (i == 0)
        return refuse(status, 400, err, "a header field has no name before its ':'");
    if (i == 4 && !strncasecmp(s, "host", 4))
        (*hosts)++;
    for (i++; i < n; i++)
        if (!value_char((unsigned char)s[i]))
            return refuse(status, 400, err, "a header field's value holds %s",
                          byte_name((unsigned char)s[i], b, sizeof(b)));
    return 0;
}

/* The line at s[0..avail): its length without its line end in *n and with it in *used; 0 when it has not
 * ended. A CR is a line end only before LF. */
static int next_line(const char *s, size_t avail, size_t *n, size_t *used)
{
    const char *lf = memchr(s, '\n', avail);

    if (!lf) {
        *n = avail && s[avail - 1] == '\r' ? avail - 1 : avail;
        return 0;
    }
    *used = (size_t)(lf - s) + 1;
    *n = (size_t)(lf - s);
    if (*n && s[*n - 1] == '\r')
        (*n)--;
    return 1;
}

/* A CR inside s[0..n) (not part of a line end): -1 with *status. */
static int stray_cr(const char *s, size_t n, int *status, tbm_err_t *err)
{
    return memchr(s, '\r', n) ? refuse(status, 400, err, "a bare CR inside a line") : 0;
}

int tbm_http_request_parse(const char *buf, size_t len, tbm_http_request_t *req, int *status, tbm_err_t *err)
{
    size_t avail = len < TBM_HTTP_HEAD_MAX ? len : TBM_HTTP_HEAD_MAX, pos = 0, n = 0, used = 0;
    int whole, rc, hosts = 0, line_read = 0;
    char *q;

    memset(req, 0, sizeof(*req));
    *status = 0;
    while (pos < avail && (buf[pos] == '\n' || (buf[pos] == '\r' && pos + 1 < avail && buf[pos + 1] == '\n')))
        pos += buf[pos] == '\r' ? 2 : 1;
    for (;;) {
        whole = next_line(buf + pos, avail - pos, &n, &used);
        if (stray_cr(buf + pos, n, status, err) < 0)
            return -1;
        if (!line_read) {
            rc = request_line(buf + pos, n, whole, req, status, err);
            if (rc < 0)
                return -1;
            line_read = rc;
        } else if (whole && n == 0) {
            break;
        } else if (field(buf + pos, n, whole, &hosts, status, err) < 0) {
            return -1;
        } else if (whole && ++req->n_headers > TBM_HTTP_HEADERS_MAX) {
            return refuse(status, 431, err, "more than %d header fields", TBM_HTTP_HEADERS_MAX);
        }
        if (!whole)
            break;
        pos += used;
    }
    if (!whole) {
        if (len < TBM_HTTP_HEAD_MAX)
            return 0;
        if (!line_read && n == 0)
            return refuse(status, 400, err, "the request's first %d bytes are blank lines, with no request "
                          "line (METHOD TARGET HTTP/1.1)", TBM_HTTP_HEAD_MAX);
        return line_read ? refuse(status, 431, err, "the request's head is longer than %d bytes", TBM_HTTP_HEAD_MAX)
                         : refuse(status, 414, err, "the request line is longer than %d bytes", TBM_HTTP_HEAD_MAX);
    }
    req->head_len = pos + used;
    if (req->minor == 1 && hosts != 1)
        return refuse(status, 400, err, "an HTTP/1.1 request needs one Host field; it has %s",
                      hosts ? "more than one" : "none");
    if ((q = strchr(req->path, '?'))) {
        snprintf(req->query, sizeof(req->query), "%s", q + 1);
        *q = '\0';
    }
    req->head_only = !strcmp(req->method, "HEAD");
    return 1;
}

const char *tbm_http_reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
    }
}

int tbm_http_reply_head(int status, const char *content_type, size_t body_len, const char *extra, char *buf,
                        size_t size)
{
    size_t xl = extra ? strlen(extra) : 0, i;
    int n;

    if (strpbrk(content_type, "\r\n") || (xl && (xl < 2 || strcmp(extra + xl - 2, "\r\n"))))
        return -1;
    for (i = 0; i < xl; i++)   /* every line end of extra is a CRLF */
        if ((extra[i] == '\n' && (i == 0 || extra[i - 1] != '\r')) || (extra[i] == '\r' && extra[i + 1] != '\n'))
            return -1;
    n = snprintf(buf, size, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
                 status, tbm_http_reason(status), content_type, body_len, extra ? extra : "");
    return n < 0 || (size_t)n >= size ? -1 : n;
}
