/* agent_watch.c: the watch request of macnoded (root only): the links of this Mac's Thunderbolt interfaces
 * (those its probe binds to a Thunderbolt port) are followed through the OS's link monitor (linkmon.h); each
 * change goes to the client as a link message, coalesced (linkwatch.h), until the client goes. It runs in
 * the connection's own process, so a slow client holds up nothing else; what it does not take is dropped,
 * up to OUT_MAX bytes waiting, and counted in a missed message once it takes frames again. */
#include "config.h"
#include "agent.h"
#include "agent_log.h"
#include "clock.h"
#include "linkmon.h"
#include "linkwatch.h"
#include "probe_host.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define OUT_MAX (64 * 1024)   /* bytes of frames waiting for a slow client */

typedef struct watch {
    linkwatch_t lw;
    char tb[LINKWATCH_MAX][LINKWATCH_NAME];   /* the Thunderbolt interfaces */
    int n_tb;
    unsigned char out[OUT_MAX];
    size_t out_len;
    int64_t missed;
} watch_t;

static int is_tb(const watch_t *w, const char *name)
{
    int i;

    for (i = 0; i < w->n_tb; i++)
        if (strcmp(w->tb[i], name) == 0)
            return 1;
    return 0;
}

static void tb_add(watch_t *w, const char *name)
{
    if (*name && strncmp(name, "bridge", 6) != 0 && !is_tb(w, name) && w->n_tb < LINKWATCH_MAX &&
        strlen(name) < LINKWATCH_NAME)
        snprintf(w->tb[w->n_tb++], LINKWATCH_NAME, "%s", name);
}

/* The Thunderbolt interfaces of this Mac, from its probe. 0, or -1 with err. */
static int thunderbolt_ifaces(const agent_conf_t *conf, watch_t *w, tbm_err_t *err)
{
    tbm_host_facts_t *f = calloc(1, sizeof(*f));
    tbm_findings_t fs;
    int i, rc = -1;

    tbm_findings_init(&fs);
    if (!f)
        tbm_errprintf(err, "out of memory");
    else if (probe_host(conf->replay_dir ? "replay" : NULL, conf->replay_dir, 20000, NULL, f, &fs, err) == 0) {
        for (i = 0; i < f->n_ports; i++)
            tb_add(w, f->ports[i].iface);
        for (i = 0; i < f->n_ifaces; i++)
            if (strncmp(f->ifaces[i].hwport, "Thunderbolt ", 12) == 0)
                tb_add(w, f->ifaces[i].name);
        rc = 0;
    }
    tbm_findings_free(&fs);
    free(f);
    return rc;
}

static void on_first(void *ctx, const char *name, int up)
{
    watch_t *w = ctx;

    if (is_tb(w, name))
        linkwatch_add(&w->lw, name, up);
}

static void on_change(void *ctx, const char *name, int up)
{
    linkwatch_report(&((watch_t *)ctx)->lw, name, up);
}

/* Queue a message's frame, or count it missed when the client is behind. */
static void queue(watch_t *w, const tbm_msg_t *m)
{
    tbm_err_t err = { { 0 } };
    size_t len;
    unsigned char *frame = tbm_msg_encode(m, &len, &err);

    if (!frame || w->out_len + len > OUT_MAX)
        w->missed++;
    else {
        memcpy(w->out + w->out_len, frame, len);
        w->out_len += len;
    }
    free(frame);
}

static void queue_due(watch_t *w)
{
    tbm_msg_t m = { .type = TBM_MSG_LINK };

    while (linkwatch_due(&w->lw, tbm_now_ms(), &m.iface, &m.up, &m.seq))
        queue(w, &m);
    if (w->missed && w->out_len == 0) {
        tbm_msg_t ms = { .type = TBM_MSG_MISSED, .count = w->missed, .seq = w->lw.seq ? w->lw.seq : 1 };
        w->missed = 0;
        queue(w, &ms);
    }
}

/* Send what the socket takes now. 0, or -1 when the client is gone. */
static int flush(int fd, watch_t *w)
{
    ssize_t n;

    while (w->out_len > 0) {
        n = send(fd, w->out, w->out_len, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        memmove(w->out, w->out + n, w->out_len - (size_t)n);
        w->out_len -= (size_t)n;
    }
    return 0;
}

static void loop(agent_conn_t *c, watch_t *w, int mon)
{
    struct pollfd p[3];
    tbm_err_t err = { { 0 } };
    char junk[512];
    ssize_t n;
    int rc;

    for (;;) {
        queue_due(w);
        if (flush(c->fd, w) < 0)
            return;
        p[0] = (struct pollfd){ .fd = c->fd, .events = POLLIN | (w->out_len ? POLLOUT : 0) };
        p[1] = (struct pollfd){ .fd = mon, .events = POLLIN };
        p[2] = (struct pollfd){ .fd = c->main_ch, .events = POLLIN };   /* -1 (no agent behind it): ignored */
        if (poll(p, 3, linkwatch_wait_ms(&w->lw, tbm_now_ms())) < 0) {
            if (errno == EINTR)
                continue;
            agent_log("%s: watch: poll: %s", c->peer, strerror(errno));
            return;
        }
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            n = recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT);   /* the client says nothing more: only its end counts */
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
                return;
        }
        if (p[2].revents & (POLLIN | POLLHUP | POLLERR)) {
            /* the agent that started this server is gone (killed, restarted) or let it go: the watch ends, and
             * the watcher opens its watch on the agent there is now; no server outlives its agent idle */
            agent_log("%s: watch ends: the agent that served it is gone or let it go", c->peer);
            return;
        }
        if (p[1].revents & POLLIN) {
            tbm_errclear(&err);
            rc = linkmon_read(mon, on_change, w, &err);
            if (rc == 1 && tbm_erris(&err))
                agent_log("%s: watch: %s", c->peer, err.msg);
            if (rc < 0) {
                agent_log("%s: watch ends: %s", c->peer, err.msg);
                return;
            }
            if (rc == 1 && linkmon_states(on_change, w, &err) < 0) {   /* the OS dropped news: take the states */
                agent_log("%s: watch ends: %s", c->peer, err.msg);
                return;
            }
        }
    }
}

int agent_watch(agent_conn_t *c)
{
    watch_t *w = calloc(1, sizeof(*w));
    tbm_err_t err = { { 0 } };
    char names[LINKWATCH_MAX * (LINKWATCH_NAME + 1) + 1] = "";
    int mon = -1, i, one = 1;

    if (!w) {
        wire_send_error(c->fd, "internal", "out of memory");
        return -1;
    }
    linkwatch_init(&w->lw);
    if (thunderbolt_ifaces(c->conf, w, &err) < 0 || (mon = linkmon_open(&err)) < 0 ||
        linkmon_states(on_first, w, &err) < 0) {
        agent_log("%s: refused (watch): %s", c->peer, err.msg);
        wire_send_error(c->fd, "watch", err.msg);
    } else {
        const char *list[LINKWATCH_MAX];
        tbm_msg_t m = { .type = TBM_MSG_WATCHING, .ifaces = list, .n_ifaces = (size_t)w->n_tb };
        for (i = 0; i < w->n_tb; i++) {
            linkwatch_add(&w->lw, w->tb[i], 0);   /* one without an interface now: down */
            list[i] = w->tb[i];
            strcat(names, " ");
            strcat(names, w->tb[i]);
        }
        setsockopt(c->fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
        agent_log("%s: watching the links of%s", c->peer, w->n_tb ? names : " no Thunderbolt interface");
        if (wire_send(c->fd, &m, &err) == 0)
            loop(c, w, mon);
        agent_log("%s: watch ended", c->peer);
    }
    if (mon >= 0)
        close(mon);
    free(w);
    return -1;
}
