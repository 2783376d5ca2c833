/* net.c: libtbmcoll's plain sockets (net.h): listen, dial with bounded retries, accept, exact reads and
 * writes with deadlines, one non-blocking send or receive. Nothing here knows the communicator. */
#include "config.h"
#include "net.h"

#include "clock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0     /* macOS: SO_NOSIGPIPE is set on the socket instead */
#endif

#define DIAL_RETRY_MS 50

static int ms_left(int64_t deadline_ms)
{
    int64_t left = deadline_ms - tbm_now_ms();
    if (left < 0)
        return 0;
    return left > 1000000 ? 1000000 : (int)left;
}

void tbmcoll_addr_text(const tbm_mlx_addr_t *a, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s:%u", a->ip, (unsigned)a->port);
}

static void to_sockaddr(const tbm_mlx_addr_t *a, struct sockaddr_in *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_port = htons(a->port);
    memcpy(&sa->sin_addr.s_addr, &a->ip_be, 4);
}

static void set_nosigpipe(int fd)
{
#ifdef SO_NOSIGPIPE
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#else
    (void)fd;
#endif
}

/* Buffer sizes must be set before connect/listen to take effect on the window. */
static void set_buffers(int fd, const tbmcoll_opts_t *o)
{
    int sz = o->sockbuf_bytes;

    if (sz < 0)
        return;   /* the kernel's own sizes, which it tunes as the connection goes */
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
}

static int new_socket(const tbmcoll_opts_t *o, tbm_err_t *err)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0)
        return tbm_errprintf(err, "cannot create a TCP socket: %s", strerror(errno));
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    set_nosigpipe(fd);
    set_buffers(fd, o);
    return fd;
}

static int set_nonblocking(int fd, int on)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0)
        return -1;
    return fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

int tbmcoll_tune(int fd, const tbmcoll_opts_t *o, tbm_err_t *err)
{
    int one = 1;

    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
        return tbm_errprintf(err, "cannot set TCP_NODELAY: %s", strerror(errno));
    set_buffers(fd, o);
    set_nosigpipe(fd);
    if (set_nonblocking(fd, 1) < 0)
        return tbm_errprintf(err, "cannot make a socket non-blocking: %s", strerror(errno));
    return 0;
}

int tbmcoll_listen(const tbmcoll_opts_t *o, tbm_mlx_addr_t *addr, tbm_err_t *err)
{
    struct sockaddr_in sa;
    socklen_t salen = sizeof(sa);
    char text[TBMCOLL_ADDR_MAX];
    int one = 1, fd = new_socket(o, err);

    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    to_sockaddr(addr, &sa);
    tbmcoll_addr_text(addr, text, sizeof(text));
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 128) < 0) {
        tbm_errprintf(err, "cannot listen on %s: %s (is the address local to this host and the port free?)",
                      text, strerror(errno));
        close(fd);
        return -1;
    }
    if (getsockname(fd, (struct sockaddr *)&sa, &salen) == 0)
        addr->port = ntohs(sa.sin_port);
    set_nonblocking(fd, 1);
    return fd;
}

/* Wait for fd to become ready for `events` until the deadline. 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, int64_t deadline_ms)
{
    struct pollfd p = { .fd = fd, .events = events, .revents = 0 };
    int rc;

    do
        rc = poll(&p, 1, ms_left(deadline_ms));
    while (rc < 0 && errno == EINTR);
    return rc;
}

/* One connect attempt: 1 connected, 0 refused or unreachable (retry), -1 other error. */
static int dial_once(int fd, const struct sockaddr_in *sa, int64_t deadline_ms, int *soerr)
{
    socklen_t len = sizeof(*soerr);

    set_nonblocking(fd, 1);
    *soerr = 0;
    if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
        if (errno != EINPROGRESS) {
            *soerr = errno;
        } else if (wait_fd(fd, POLLOUT, deadline_ms) <= 0) {
            *soerr = ETIMEDOUT;
        } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, soerr, &len) < 0) {
            *soerr = errno;
        }
    }
    if (*soerr == 0)
        return set_nonblocking(fd, 0) < 0 ? -1 : 1;
    return (*soerr == ECONNREFUSED || *soerr == ETIMEDOUT || *soerr == EHOSTUNREACH || *soerr == ENETUNREACH ||
            *soerr == ECONNRESET || *soerr == EAGAIN) ? 0 : -1;
}

int tbmcoll_dial(const tbmcoll_opts_t *o, const tbm_mlx_addr_t *addr, int64_t deadline_ms, const char *who,
                 tbm_err_t *err)
{
    struct sockaddr_in sa;
    char text[TBMCOLL_ADDR_MAX];
    int fd, rc, soerr = 0;

    to_sockaddr(addr, &sa);
    tbmcoll_addr_text(addr, text, sizeof(text));
    for (;;) {
        fd = new_socket(o, err);
        if (fd < 0)
            return -1;
        rc = dial_once(fd, &sa, deadline_ms, &soerr);
        if (rc > 0)
            return fd;
        close(fd);
        if (rc < 0 || ms_left(deadline_ms) == 0)
            break;
        usleep(DIAL_RETRY_MS * 1000);
    }
    return tbm_errprintf(err, "cannot connect to %s at %s: %s (gave up after the %s; is it running and "
                         "listening there?)", who, text, strerror(soerr ? soerr : ETIMEDOUT),
                         rc < 0 ? "first error" : "connect timeout");
}

int tbmcoll_accept(const int *lfds, int nl, int64_t deadline_ms, char *peer_text, size_t ptsz, tbm_err_t *err)
{
    struct pollfd p[TBM_MLX_MATRIX_MAX + 1];
    struct sockaddr_in sa;
    socklen_t salen;
    int i, rc, fd;

    if (nl > TBM_MLX_MATRIX_MAX + 1)
        nl = TBM_MLX_MATRIX_MAX + 1;
    for (;;) {
        for (i = 0; i < nl; i++)
            p[i] = (struct pollfd){ .fd = lfds[i], .events = POLLIN, .revents = 0 };
        rc = poll(p, (nfds_t)nl, ms_left(deadline_ms));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            return tbm_errprintf(err, "%s", rc == 0 ? "timed out" : strerror(errno));
        for (i = 0; i < nl; i++) {
            if (!(p[i].revents & POLLIN))
                continue;
            salen = sizeof(sa);
            fd = accept(lfds[i], (struct sockaddr *)&sa, &salen);
            if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
                tbm_errprintf(err, "cannot accept a connection: %s (each pair of ranks takes `streams` "
                              "connections: raise ulimit -n, or give fewer streams)", strerror(errno));
                return -2;
            }
            if (fd < 0)
                continue;   /* the client went away already (or EAGAIN): keep waiting */
            fcntl(fd, F_SETFD, FD_CLOEXEC);
            set_nonblocking(fd, 0);
            snprintf(peer_text, ptsz, "%s:%u", inet_ntoa(sa.sin_addr), (unsigned)ntohs(sa.sin_port));
            return fd;
        }
    }
}

/* Blocking-style exact I/O on a socket of either mode, bounded by the deadline. */
static int io_full(int fd, void *buf, size_t len, int64_t deadline_ms, int is_write, const char *who,
                   tbm_err_t *err)
{
    unsigned char *p = buf;
    size_t done = 0;
    ssize_t n;

    while (done < len) {
        if (wait_fd(fd, is_write ? POLLOUT : POLLIN, deadline_ms) <= 0)
            return tbm_errprintf(err, "%s: timed out %s", who, is_write ? "sending" : "waiting for data");
        n = is_write ? send(fd, p + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT)
                     : recv(fd, p + done, len - done, MSG_DONTWAIT);
        if (n > 0)
            done += (size_t)n;
        else if (n == 0)
            return tbm_errprintf(err, "%s: the connection was closed", who);
        else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            return tbm_errprintf(err, "%s: %s", who, strerror(errno));
    }
    return 0;
}

int tbmcoll_read_full(int fd, void *buf, size_t len, int64_t deadline_ms, const char *who, tbm_err_t *err)
{
    return io_full(fd, buf, len, deadline_ms, 0, who, err);
}

int tbmcoll_write_full(int fd, const void *buf, size_t len, int64_t deadline_ms, const char *who,
                       tbm_err_t *err)
{
    return io_full(fd, (void *)buf, len, deadline_ms, 1, who, err);
}

long tbmcoll_sock_io(int fd, int is_send, unsigned char *buf, size_t len)
{
    ssize_t n;

    if (is_send && len > TBMCOLL_SEND_CALL_MAX)
        len = TBMCOLL_SEND_CALL_MAX;
    do
        n = is_send ? send(fd, buf, len, MSG_NOSIGNAL) : recv(fd, buf, len, 0);
    while (n < 0 && errno == EINTR);
    if (n > 0)
        return (long)n;
    if (n == 0)
        return -EPIPE;         /* the peer closed its end */
    if (errno == EAGAIN || errno == EWOULDBLOCK)
        return 0;
    return -errno;
}

int tbmcoll_peer_closed(int fd)
{
    char b;
    ssize_t n;
#ifdef POLLRDHUP
    /* the peer's end seen even behind data it sent that nobody has read yet (a peek would return that data) */
    struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };
    int e = 0;
    socklen_t el = sizeof(e);

    if (poll(&p, 1, 0) > 0) {
        if (p.revents & POLLERR)
            return getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e ? e : ECONNRESET;
        if (p.revents & (POLLRDHUP | POLLHUP))
            return EPIPE;
    }
#endif
    n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

    if (n == 0)
        return EPIPE;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return errno;
    return 0;
}

void tbmcoll_local_end(int fd, char *out, size_t outsz)
{
    struct sockaddr_in me;
    socklen_t len = sizeof(me);
    struct ifaddrs *ifs = NULL, *i;
    char host[64] = "";

    out[0] = '\0';
    if (getsockname(fd, (struct sockaddr *)&me, &len) < 0 || me.sin_family != AF_INET || getifaddrs(&ifs) < 0)
        return;
    for (i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
            ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr != me.sin_addr.s_addr)
            continue;
        if (gethostname(host, sizeof(host) - 1) < 0)
            host[0] = '\0';
        host[strcspn(host, ".")] = '\0';
        snprintf(out, outsz, "%s%s%s", host, host[0] ? "'s " : "", i->ifa_name);
        break;
    }
    freeifaddrs(ifs);
}
