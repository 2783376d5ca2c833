/* agent_conn.c: one authenticated connection to macnoded, in its own process (the gate, agent_gate.c, checked
 * its MUNGE hello before the fork): the welcome, then probe, spawn (with the job's files), cleanup and watch
 * (agent_watch.c) requests; every refusal is logged with its reason and answered with an error frame before
 * the connection is closed (see agent.h). */
#include "config.h"
#include "agent.h"
#include "agent_log.h"
#include "auth.h"
#include "clock.h"
#include "facts_json.h"
#include "fileio.h"
#include "probe_host.h"
#include "sweep.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define CLEANUP_SERVERS_MS 5000   /* how long a cleanup waits for its job's servers to end what their tasks left */

/* Log a refusal, tell the client, and say the connection is over (returns -1). */
static int refuse(agent_conn_t *c, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int refuse(agent_conn_t *c, const char *code, const char *fmt, ...)
{
    char msg[TBM_ERR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    agent_log("%s: refused (%s): %s", c->peer, code, msg);
    wire_send_error(c->fd, code, msg);
    return -1;
}

/* The welcome a connection the gate let in is sent first. */
static tbm_msg_t welcome_msg(const agent_conn_t *c)
{
    return (tbm_msg_t){ .type = TBM_MSG_WELCOME, .version = TBM_PROTO_VERSION, .node = c->conf->node,
                        .uid = (uint32_t)c->uid };
}

/* The gate read the socket without blocking; what is written from now on may wait for the reader. */
static int set_blocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    return fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? -1 : 0;
}

int agent_usage_inline(agent_conn_t *c)
{
    tbm_msg_t req, w = welcome_msg(c), m;
    tbm_err_t err = { { 0 } };
    tbm_frame_t fr;
    unsigned char *a = NULL, *b = NULL, *both = NULL;
    size_t alen = 0, blen = 0, off = 0;
    struct timeval bound = { .tv_sec = 1 };
    ssize_t n;
    int served = 0;

    if (!agent_is_root(c) || !tbm_fdec_only(&c->dec, &fr) || fr.kind != TBM_FRAME_JSON)
        return 0;
    if (tbm_msg_parse(&fr, &req, &err) < 0)
        return 0;   /* the server refuses it, saying why */
    if (req.type != TBM_MSG_USAGE) {
        tbm_msg_free(&req);
        return 0;
    }
    agent_usage_reply(c->conf, &req, &m);
    tbm_msg_free(&req);
    if ((a = tbm_msg_encode(&w, &alen, &err)) && (b = tbm_msg_encode(&m, &blen, &err)) &&
        alen + blen <= AGENT_USAGE_INLINE_MAX && (both = malloc(alen + blen))) {
        served = 1;
        memcpy(both, a, alen), memcpy(both + alen, b, blen);
        /* an empty send buffer takes this much at once; should it not, the rest goes within a second */
        n = write(c->fd, both, alen + blen);
        off = n > 0 ? (size_t)n : 0;
        if (off < alen + blen && (n >= 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) &&
            set_blocking(c->fd) == 0 && setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof(bound)) == 0 &&
            tbm_write_all(c->fd, both + off, alen + blen - off) == 0)
            off = alen + blen;
        if (off < alen + blen)
            agent_log("%s: cannot send the usage of job %u step %u: %s", c->peer, m.job, m.step, strerror(errno));
        else
            shutdown(c->fd, SHUT_WR);
    }
    free(a), free(b), free(both);
    free(m.tasks);
    return served;
}

/* Say who we are to the caller the gate let in, and take requests of full size from now on. */
static int welcome(agent_conn_t *c)
{
    tbm_msg_t w = welcome_msg(c);
    tbm_err_t err = { { 0 } };

    set_blocking(c->fd);   /* big frames go out from now on */
    tbm_fdec_set_limit(&c->dec, TBM_FRAME_MAX);
    return wire_send(c->fd, &w, &err) < 0 ? -1 : 0;
}

/* The grant the connection's hello was (the gate checked it: root's, for this node, unused), when the
 * spawn names it (or none): once, and while it is current. 1 when it is that one, 0 when not, -1 refused. */
static int hello_grant(agent_conn_t *c, const char *text, uint32_t want_uid, tbm_grant_t *g)
{
    tbm_err_t err = { { 0 } };
    char sum[65];

    if (!c->granted)
        return 0;
    if (text && agent_cred_digest(text, sum) < 0)
        return refuse(c, "internal", "cannot digest the spawn's grant (libcrypto)");
    if (text && strcmp(sum, c->grant_sum) != 0)
        return 0;
    c->granted = 0;
    *g = c->grant;
    if (tbm_grant_check(g, 0, c->conf->node, time(NULL), &err) < 0 || tbm_grant_allows(g, c->uid, want_uid, &err) < 0)
        return refuse(c, "grant", "%s", err.msg);
    return 1;
}

/* The grant of a spawn: the hello's (hello_grant), or one MUNGE says root made, that names this node, is
 * current and unused, and that the caller may use for want_uid. */
static int check_grant(agent_conn_t *c, const char *text, uint32_t want_uid, tbm_grant_t *g)
{
    tbm_err_t err = { { 0 } };
    auth_cred_t cred;
    const char *code = "grant";
    int rc;

    if ((rc = hello_grant(c, text, want_uid, g)) != 0)
        return rc < 0 ? -1 : 0;
    if (!text)
        return refuse(c, "grant", "refused: no job grant; a task runs only with a grant made by root on the "
                      "bridge host (macnode exec --grant or TBMESH_GRANT)");
    if (agent_cred_once(c->conf, "grant", text, &cred, &code, &err) < 0)
        return refuse(c, code, "%s", err.msg);
    rc = tbm_grant_parse(cred.payload, cred.len, g, &err) < 0 ||
                 tbm_grant_check(g, cred.uid, c->conf->node, time(NULL), &err) < 0 ||
                 tbm_grant_allows(g, c->uid, want_uid, &err) < 0
             ? -1
             : 0;
    auth_cred_free(&cred);
    return rc < 0 ? refuse(c, "grant", "%s", err.msg) : 0;
}

static int do_probe(agent_conn_t *c)
{
    tbm_host_facts_t *f = calloc(1, sizeof(*f));
    tbm_findings_t fs;
    tbm_err_t err = { { 0 } };
    tbm_msg_t m = { .type = TBM_MSG_FACTS };
    char *json = NULL;
    int rc = -1;

    tbm_findings_init(&fs);
    if (f && probe_host(c->conf->replay_dir ? "replay" : NULL, c->conf->replay_dir, 20000, NULL, f, &fs, &err) == 0 &&
        (json = tbm_facts_to_json_string(f, 0)) && (m.facts = json_tokener_parse(json)))
        rc = wire_send(c->fd, &m, &err);
    else
        refuse(c, "probe", "the probe failed: %s", tbm_erris(&err) ? err.msg : "out of memory");
    if (m.facts)
        json_object_put(m.facts);
    free(json);
    tbm_findings_free(&fs);
    free(f);
    return rc;
}

/* A granted spawn: the job's folder first (refused before anything runs when it is not this agent's), then
 * the task, whose own process writes the job's files as the user before it runs the command. The user's
 * account and groups are looked up once, here (a failed lookup is said by the task's process when it tries to
 * become the user). agent_task_run logs the agent's parts of the launch. */
static int do_spawn(agent_conn_t *c, const tbm_msg_t *req, long long welcomed, long long requested)
{
    tbm_grant_t g;
    tbm_err_t err = { { 0 } };
    agent_user_t u;
    char dir[4096];
    long long stamps[3];

    if (check_grant(c, req->grant, req->uid, &g) < 0)
        return -1;
    agent_user_lookup(g.uid, g.gid, &u, NULL);
    if (req->n_files > 0 &&
        agent_job_folder(c->conf, &g, req->files, req->n_files, dir, sizeof(dir), &err) < 0)
        return refuse(c, "files", "job %u: cannot write the job's files on %s: %s", g.job, c->conf->node, err.msg);
    stamps[0] = welcomed, stamps[1] = requested, stamps[2] = tbm_now_us();
    agent_task_run(c, req, &g, &u, req->n_files > 0 ? dir : NULL, stamps);
    return -1;
}

/* After its tasks: whatever of the job is left on this Mac, whatever it did to leave their groups (lib/reap.h:
 * every process of the job's user when the Mac was the job's alone and the user has no other job here).
 * How many processes were ended. */
static int sweep_after(agent_conn_t *c, const tbm_msg_t *req)
{
    tbm_reap_ask_t ask = { .job = req->job, .uid = (uint32_t)req->job_uid, .exclusive = req->exclusive,
                           .self = (long)getpid() };
    tbm_err_t err = { { 0 } };
    char why[TBM_ERR_MAX];
    int ended = 0;

    if (req->job_uid < 0)
        return 0;
    ask.other_jobs = agent_other_jobs(c->conf, req->job, ask.uid);
    if (sweep_job(&ask, c->conf->grace_s * 1000, &ended, why, sizeof(why), &err) < 0)
        agent_log("%s: job %u: what it left cannot be looked for: %s", c->peer, req->job, err.msg);
    else
        agent_log("%s: job %u: %d processes it left ended (%s)", c->peer, req->job, ended, why);
    return ended;
}

static int do_cleanup(agent_conn_t *c, const tbm_msg_t *req)
{
    tbm_err_t err = { { 0 } };
    tbm_msg_t m = { .type = TBM_MSG_CLEANED, .job = req->job };

    if (!agent_is_root(c))
        return refuse(c, "uid", "cleanup of job %u refused: only root on the bridge host may clean up a job",
                      req->job);
    m.killed = agent_kill_tasks(c->conf, req->job, 0, 0);
    if (agent_tasks_wait(c->conf, req->job, CLEANUP_SERVERS_MS) > 0)
        agent_log("%s: job %u: its tasks' servers have not finished after %d ms", c->peer, req->job,
                  CLEANUP_SERVERS_MS);
    m.swept = sweep_after(c, req);
    agent_usage_forget(c->conf, req->job);
    if (agent_job_remove(c->conf, req->job, &err) < 0)
        return refuse(c, "cleanup", "job %u: %s", req->job, err.msg);
    agent_log("%s: job %u cleaned up (%d tasks killed, %d other processes)", c->peer, req->job, m.killed, m.swept);
    return wire_send(c->fd, &m, &err);
}

static int do_watch(agent_conn_t *c)
{
    if (!agent_is_root(c))
        return refuse(c, "uid", "watch refused: only root on the bridge host may watch a Mac's links "
                      "(macnode watch runs as root)");
    return agent_watch(c);
}

/* One request (read at `requested`, the welcome sent at `welcomed`: tbm_now_us); -1 ends the connection. */
static int serve_one(agent_conn_t *c, const tbm_msg_t *m, long long welcomed, long long requested)
{
    switch (m->type) {
    case TBM_MSG_PROBE: return do_probe(c);
    case TBM_MSG_SPAWN: return do_spawn(c, m, welcomed, requested);
    case TBM_MSG_CLEANUP: return do_cleanup(c, m);
    case TBM_MSG_WATCH: return do_watch(c);
    case TBM_MSG_USAGE: return agent_usage_serve(c, m);
    default:
        return refuse(c, "request", "%s is not a request an agent serves", tbm_msg_type_name(m->type));
    }
}

/* The replies are all sent: say so (FIN), then read and drop what the client still sends until it closes,
 * LINGER_MS at most. Closing with input unread would reset the connection, and a reset can make the client
 * lose the end of what it was sent (the task's last output, its exit). */
#define LINGER_MS 2000
static void linger_close(int fd)
{
    char buf[4096];
    struct pollfd p = { .fd = fd, .events = POLLIN };
    long long end = tbm_now_ms() + LINGER_MS, left;
    ssize_t n;

    if (shutdown(fd, SHUT_WR) < 0)
        return;
    while ((left = end - tbm_now_ms()) > 0 && poll(&p, 1, (int)left) > 0) {
        n = read(fd, buf, sizeof(buf));
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
            break;
    }
}

void agent_serve(agent_conn_t *c)
{
    tbm_err_t err = { { 0 } };
    tbm_msg_t m;
    int rc, timeout = c->conf->request_timeout_ms;
    long long welcomed;

    if (welcome(c) == 0) {
        welcomed = tbm_now_us();
        while ((rc = wire_next_msg(c->fd, &c->dec, &m, timeout, &err)) > 0) {
            rc = serve_one(c, &m, welcomed, tbm_now_us());
            tbm_msg_free(&m);
            if (rc < 0)
                break;
            timeout = agent_is_root(c) ? c->conf->idle_timeout_ms : c->conf->user_idle_timeout_ms;
        }
        if (rc < 0 && tbm_erris(&err))
            refuse(c, "frame", "malformed request: %s", err.msg);
    }
    tbm_fdec_free(&c->dec);
    linger_close(c->fd);
}
