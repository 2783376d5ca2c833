/* wire.c: frames on a socket, connect and listen (see wire.h). */
#include "config.h"
#include "wire.h"
#include "fileio.h"
#include "clock.h"
#include "scalar.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int wire_send(int fd, const tbm_msg_t *m, tbm_err_t *err)
{
    size_t len;
    unsigned char *frame = tbm_msg_encode(m, &len, err);
    int rc;

    if (!frame)
        return -1;
    rc = tbm_write_all(fd, frame, len);
    free(frame);
    if (rc < 0)
        return tbm_errprintf(err, "cannot send %s: %s", tbm_msg_type_name(m->type), strerror(errno));
    return 0;
}

void wire_send_error(int fd, const char *code, const char *message)
{
    tbm_msg_t m = { .type = TBM_MSG_ERROR, .code = code, .message = message };

    wire_send(fd, &m, NULL);
}

static int writev_all(int fd, struct iovec *iov, int n)
{
    ssize_t w;

    while (n > 0) {
        w = writev(fd, iov, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++, n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

int wire_send_data(int fd, tbm_frame_kind_t kind, const void *buf, size_t len)
{
    unsigned char hdr[TBM_DATA_HDR];
    const char *p = buf;
    struct iovec iov[2];
    size_t chunk;

    do {
        chunk = len > TBM_DATA_MAX ? TBM_DATA_MAX : len;
        tbm_data_header(hdr, kind, chunk);
        iov[0].iov_base = hdr;
        iov[0].iov_len = sizeof(hdr);
        iov[1].iov_base = (void *)p;
        iov[1].iov_len = chunk;
        if (writev_all(fd, iov, chunk ? 2 : 1) < 0)
            return -1;
        p += chunk;
        len -= chunk;
    } while (len > 0);
    return 0;
}

ssize_t wire_fill(int fd, tbm_fdec_t *d)
{
    size_t room;
    unsigned char *p = tbm_fdec_space(d, &room);
    ssize_t n;

    if (room == 0) {
        errno = ENOBUFS;
        return -1;
    }
    do
        n = read(fd, p, room);
    while (n < 0 && errno == EINTR);
    if (n > 0)
        tbm_fdec_commit(d, (size_t)n);
    return n;
}

int wire_next_frame(int fd, tbm_fdec_t *d, tbm_frame_t *f, int timeout_ms, tbm_err_t *err)
{
    long long deadline = tbm_now_ms() + timeout_ms;
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int rc, wait;
    ssize_t n;

    for (;;) {
        rc = tbm_fdec_next(d, f, err);
        if (rc < 0)
            errno = EPROTO;
        if (rc != 0)
            return rc;
        wait = timeout_ms < 0 ? -1 : (int)(deadline - tbm_now_ms());
        if (timeout_ms >= 0 && wait <= 0) {
            errno = ETIMEDOUT;
            return tbm_errprintf(err, "no whole frame within %d ms; the peer is too slow or not speaking", timeout_ms);
        }
        rc = poll(&p, 1, wait);
        if (rc < 0 && errno != EINTR)
            return tbm_errprintf(err, "poll: %s", strerror(errno));
        if (rc <= 0)
            continue;
        n = wire_fill(fd, d);
        if (n == 0 && tbm_fdec_pending(d) == 0)
            return 0;
        if (n == 0) {
            errno = ECONNRESET;
            return tbm_errprintf(err, "the connection ended inside a frame (%zu bytes of it came)",
                                 tbm_fdec_pending(d));
        }
        if (n < 0)
            return tbm_errprintf(err, "cannot read: %s", strerror(errno));
    }
}

int wire_next_msg(int fd, tbm_fdec_t *d, tbm_msg_t *m, int timeout_ms, tbm_err_t *err)
{
    tbm_frame_t f;
    int rc = wire_next_frame(fd, d, &f, timeout_ms, err);

    if (rc <= 0)
        return rc;
    if (tbm_msg_parse(&f, m, err) < 0) {
        errno = EPROTO;
        return -1;
    }
    return 1;
}

int wire_split_addr(const char *spec, int default_port, char *host, size_t hostlen, int *port, tbm_err_t *err)
{
    const char *colon = strrchr(spec, ':'), *start = spec, *close;
    long long p = default_port;
    size_t n;

    if (spec[0] == '[') {   /* "[IPv6]" or "[IPv6]:PORT" */
        if (!(close = strchr(spec, ']')) || (close[1] && close[1] != ':'))
            return tbm_errprintf(err, "address '%s' must be [IPV6] or [IPV6]:PORT", spec);
        start = spec + 1;
        n = (size_t)(close - start);
        colon = close[1] ? close + 1 : NULL;
    } else if (colon && strchr(spec, ':') != colon) {
        colon = NULL;   /* a bare IPv6 address: its colons are its own; a port needs the brackets */
        n = strlen(spec);
    } else {
        n = colon ? (size_t)(colon - spec) : strlen(spec);
    }
    if (colon && tbm_parse_ll(colon + 1, 10, 1, 65535, &p) < 0)
        return tbm_errprintf(err, "address '%s': the port must be a number from 1 to 65535", spec);
    if (n == 0 || n >= hostlen)
        return tbm_errprintf(err, "address '%s' must be HOST, HOST:PORT or [IPV6]:PORT", spec);
    memcpy(host, start, n);
    host[n] = '\0';
    *port = (int)p;
    return 0;
}

static struct addrinfo *resolve(const char *spec, int default_port, int passive, tbm_err_t *err)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai = NULL;
    char host[256], port[16];
    int p, rc;

    if (wire_split_addr(spec, default_port, host, sizeof(host), &p, err) < 0)
        return NULL;
    snprintf(port, sizeof(port), "%d", p);
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    rc = getaddrinfo(host, port, &hints, &ai);
    if (rc != 0)
        return tbm_errprintf(err, "address '%s': %s", spec, gai_strerror(rc)), NULL;
    return ai;
}

/* Connect fd to a within ms (<= 0: the system's own limit). 0, or -1 with errno. */
static int connect_within(int fd, const struct addrinfo *a, int ms)
{
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    socklen_t sl = sizeof(int);
    int flags = fcntl(fd, F_GETFL), rc, soerr = 0;

    if (ms <= 0)
        return connect(fd, a->ai_addr, a->ai_addrlen);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return -1;
    rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc < 0 && errno == EINPROGRESS) {
        while ((rc = poll(&p, 1, ms)) < 0 && errno == EINTR)
            ;
        if (rc == 0)
            errno = ETIMEDOUT;
        rc = rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0 ? 0 : -1;
        if (soerr)
            errno = soerr;
    }
    if (rc == 0 && fcntl(fd, F_SETFL, flags) < 0)
        rc = -1;
    return rc;
}

void wire_keepalive(int fd, int seconds)
{
    int on = seconds > 0, idle = seconds / 3, intvl = seconds / 6, cnt = 4;

    if (idle < 1)
        idle = 1;
    if (intvl < 1)
        intvl = 1;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
    if (!on)
        return;
#ifdef TCP_KEEPIDLE
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
#elif defined(TCP_KEEPALIVE)
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPALIVE, &idle, sizeof(idle));   /* macOS: the idle time */
#endif
#ifdef TCP_KEEPINTVL
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
#endif
#ifdef TCP_KEEPCNT
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
#endif
#ifdef TCP_USER_TIMEOUT
    {
        unsigned int ms = (unsigned int)seconds * 1000u;
        setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
    }
#elif defined(TCP_RXT_CONNDROPTIME)
    setsockopt(fd, IPPROTO_TCP, TCP_RXT_CONNDROPTIME, &seconds, sizeof(seconds));   /* macOS */
#endif
    (void)cnt;
    (void)intvl;
}

/* Whether port is one the services database names (a daemon may want to listen on it later: a connection of
 * ours holding it, perhaps for as long as a task runs, would keep that daemon from starting). */
static int port_named(int port)
{
#if defined(__GLIBC__)
    struct servent se, *found = NULL;
    char buf[1024];

    return getservbyport_r(htons((uint16_t)port), "tcp", &se, buf, sizeof(buf), &found) == 0 && found;
#else
    (void)port;
    return 0;   /* elsewhere (macOS) there is no getservbyport_r, and getservbyport is not safe in a threaded
                 * process: no port is skipped there */
#endif
}

int wire_reserved_port(int fd, int family, wire_lane_t lane)
{
    static unsigned turn;
    unsigned start, i;
    int port;
    struct sockaddr_storage ss;
    struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

    if (geteuid() != 0 || (family != AF_INET && family != AF_INET6))
        return 0;
    start = (unsigned)getpid() * 31u + __atomic_fetch_add(&turn, 7u, __ATOMIC_RELAXED) + (unsigned)time(NULL);
    for (i = 0; i < WIRE_LANE_PORTS; i++) {
        port = WIRE_LANE_FIRST(lane) + (int)((start + i) % WIRE_LANE_PORTS);
        if (port_named(port))
            continue;
        memset(&ss, 0, sizeof(ss));
        if (family == AF_INET)
            in4->sin_family = AF_INET, in4->sin_port = htons((uint16_t)port);
        else
            in6->sin6_family = AF_INET6, in6->sin6_port = htons((uint16_t)port);
        if (bind(fd, (struct sockaddr *)&ss, family == AF_INET ? sizeof(*in4) : sizeof(*in6)) == 0)
            return port;
        if (errno != EADDRINUSE)
            return 0;   /* EACCES: root without the right to bind them (a container's), nothing to gain */
    }
    return 0;
}

int wire_connect_lane(const char *spec, int default_port, int ms, wire_lane_t lane, tbm_err_t *err)
{
    struct addrinfo *ai = resolve(spec, default_port, 0, err), *a;
    int fd = -1, one = 1, saved = 0;

    for (a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd >= 0) {
            fcntl(fd, F_SETFD, FD_CLOEXEC);
            wire_reserved_port(fd, a->ai_family, lane);
        }
        if (fd >= 0 && connect_within(fd, a, ms) < 0) {
            saved = errno;
            close(fd);
            fd = -1;
        }
    }
    if (ai)
        freeaddrinfo(ai);
    if (fd < 0 && ai)
        tbm_errprintf(err, "cannot connect to the agent at %s: %s (is macnoded running there?)", spec,
                      strerror(saved));
    if (fd >= 0) {
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        wire_keepalive(fd, WIRE_PEER_TIMEOUT_S);
    } else {
        errno = saved;
    }
    return fd;
}

int wire_connect_within(const char *spec, int default_port, int ms, tbm_err_t *err)
{
    return wire_connect_lane(spec, default_port, ms, WIRE_LANE_ROOT, err);
}

int wire_connect(const char *spec, int default_port, tbm_err_t *err)
{
    return wire_connect_within(spec, default_port, 0, err);
}

int wire_listen(const char *spec, int default_port, tbm_err_t *err)
{
    struct addrinfo *ai = resolve(spec, default_port, 1, err);
    int fd, one = 1;

    if (!ai)
        return -1;
    fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd >= 0)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, SOMAXCONN) < 0) {
        tbm_errprintf(err, "cannot listen on %s: %s", spec, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

void wire_peer_name(const struct sockaddr *sa, socklen_t len, char *buf, size_t buflen)
{
    char host[NI_MAXHOST], serv[NI_MAXSERV];

    if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        snprintf(buf, buflen, "?");
    else
        snprintf(buf, buflen, "%s:%s", host, serv);
}
