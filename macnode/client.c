/* client.c: connect, authenticate and ask the agent (see client.h). */
#include "config.h"
#include "client.h"
#include "auth.h"
#include "clock.h"
#include "conf.h"
#include "facts_json.h"
#include "fileio.h"
#include "wire.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *client_who(const client_t *c, char *buf, size_t len)
{
    const char *name = c->node[0] ? c->node : c->mac;

    if (name && *name)
        snprintf(buf, len, "the agent of %s at %s", name, c->agent);
    else
        snprintf(buf, len, "the agent at %s", c->agent);
    return buf;
}

/* The next message, which must be of type want; an error message becomes err. */
static int expect(client_t *c, tbm_msg_type_t want, tbm_msg_t *m, tbm_err_t *err)
{
    char who[160];
    int rc = wire_next_msg(c->fd, &c->dec, m, c->reply_ms > 0 ? c->reply_ms : CLIENT_REPLY_MS, err);

    client_who(c, who, sizeof(who));
    if (rc == 0)
        return tbm_errprintf(err, "%s closed the connection without a reply", who);
    if (rc < 0)
        return tbm_errprefix(err, "from %s: ", who);
    if (m->type == want)
        return 0;
    if (m->type == TBM_MSG_ERROR)
        tbm_errprintf(err, "%s refused: %s", who, m->message);
    else
        tbm_errprintf(err, "%s answered %s where %s was expected", who, tbm_msg_type_name(m->type),
                      tbm_msg_type_name(want));
    tbm_msg_free(m);
    return -1;
}

/* Why the connection failed, and what to look at. */
static int unreachable(client_t *c, tbm_err_t *err)
{
    char who[160];
    const char *name = c->mac && *c->mac ? c->mac : "the Mac";

    if (errno == 0)   /* the address itself was wrong; wire_connect said how */
        return tbm_errprefix(err, "%s: ", client_who(c, who, sizeof(who)));
    return tbm_errprintf(err, "cannot reach %s: %s; check that macnoded runs on %s (launchd job "
                         "org.slurm-tbmesh.macnoded) and that tbmesh.conf's AgentAddr and AgentPort for it are "
                         "right", client_who(c, who, sizeof(who)), strerror(errno), name);
}

/* The hello, and req (when not NULL) right behind it, in one write. */
static int send_hello(client_t *c, const char *cred, const tbm_msg_t *req, tbm_err_t *err)
{
    size_t n;
    unsigned char *both = tbm_msg_encode_hello(cred, req, &n, err);
    int rc;

    if (!both)
        return -1;
    rc = tbm_write_all(c->fd, both, n);
    free(both);
    if (rc < 0)
        return tbm_errprintf(err, "cannot send %s: %s", req ? tbm_msg_type_name(req->type) : "hello",
                             strerror(errno));
    return 0;
}

/* The welcome m read: when, and the agent's name for its node. */
static int welcomed(client_t *c, tbm_msg_t *m)
{
    c->times.welcome = tbm_now_us();
    snprintf(c->node, sizeof(c->node), "%s", m->node);
    tbm_msg_free(m);
    return 0;
}

int client_open_with(client_t *c, const tbm_msg_t *req, tbm_err_t *err)
{
    tbm_msg_t m;
    char *cred;
    int rc;

    memset(&c->times, 0, sizeof(c->times));
    c->node[0] = '\0';
    if (!c->greeted)
        c->fd = -1;
    if (tbm_fdec_init(&c->dec, TBM_FRAME_MAX, err) < 0)
        return -1;
    if (c->greeted) {   /* connected, the hello said: its welcome (there already, as a rule), then the request */
        c->times.cred = c->times.connect = tbm_now_us();
        if (expect(c, TBM_MSG_WELCOME, &m, err) < 0)
            return -1;
        welcomed(c, &m);
        return req ? wire_send(c->fd, req, err) : 0;
    }
    /* the credential first: the agent gives a connection only a few seconds to say hello */
    cred = auth_encode(c->socket, NULL, 0, 0, err);
    if (!cred)
        return -1;
    c->times.cred = tbm_now_us();
    errno = 0;
    c->fd = wire_connect(c->agent, TBM_CONF_AGENT_PORT, err);
    c->times.connect = tbm_now_us();
    if (c->fd < 0) {
        free(cred);
        return unreachable(c, err);
    }
    rc = send_hello(c, cred, req, err);
    free(cred);
    if (rc < 0 || expect(c, TBM_MSG_WELCOME, &m, err) < 0)
        return -1;
    return welcomed(c, &m);
}

int client_open(client_t *c, tbm_err_t *err)
{
    return client_open_with(c, NULL, err);
}

int client_call(client_t *c, const tbm_msg_t *req, tbm_msg_type_t want, tbm_msg_t *reply, tbm_err_t *err)
{
    if (wire_send(c->fd, req, err) < 0)
        return -1;
    return expect(c, want, reply, err);
}

int client_ask(client_t *c, const tbm_msg_t *req, tbm_msg_type_t want, tbm_msg_t *reply, tbm_err_t *err)
{
    if (client_open_with(c, req, err) < 0)
        return -1;
    return expect(c, want, reply, err);
}

void client_close(client_t *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    tbm_fdec_free(&c->dec);
}

int client_defaults(client_t *c, const char *cmd)
{
    if (!c->agent && !(c->agent = getenv("TBMESH_AGENT"))) {
        fprintf(stderr, "macnode %s: no agent: give --agent ADDR:PORT or set TBMESH_AGENT\n", cmd);
        return -1;
    }
    if (!c->socket)
        c->socket = getenv("TBMESH_MUNGE_SOCKET");
    if (!c->mac)
        c->mac = getenv("SLURMD_NODENAME");
    return 0;
}

/* The grant text: from FILE, one line of stdin ('-'), or $TBMESH_GRANT; NULL when there is none. */
char *client_load_grant(const char *arg, tbm_err_t *err)
{
    char line[TBM_HELLO_MAX + 2], *text;
    size_t len;

    if (!arg)
        return getenv("TBMESH_GRANT") && *getenv("TBMESH_GRANT") ? strdup(getenv("TBMESH_GRANT")) : NULL;
    if (strcmp(arg, "-") == 0) {
        /* byte by byte: what follows the line is the task's stdin and must stay unread */
        for (len = 0; len + 1 < sizeof(line) && read(STDIN_FILENO, line + len, 1) == 1 && line[len] != '\n';)
            len++;
        line[len] = '\0';
        if (len == 0)
            return tbm_errprintf(err, "--grant -: no grant on the first line of stdin"), NULL;
        text = strdup(line);
    } else {
        text = tbm_read_file(arg, TBM_HELLO_MAX, &len, err);
    }
    if (text)
        text[strcspn(text, " \t\r\n")] = '\0';
    return text;
}

int client_probe(const char *agent, const char *socket, int reply_ms, tbm_host_facts_t *f, tbm_err_t *err)
{
    client_t cl = { .agent = agent, .socket = socket, .reply_ms = reply_ms, .fd = -1 };
    tbm_msg_t req = { .type = TBM_MSG_PROBE }, reply;
    const char *text;
    int rc = -1;

    memset(&reply, 0, sizeof(reply));
    if (client_open(&cl, err) == 0 && client_call(&cl, &req, TBM_MSG_FACTS, &reply, err) == 0) {
        text = reply.facts ? json_object_to_json_string_ext(reply.facts, JSON_C_TO_STRING_PLAIN) : NULL;
        if (!text)
            tbm_errprintf(err, "the agent sent no facts");
        else
            rc = tbm_facts_from_json(text, strlen(text), f, err);
        tbm_msg_free(&reply);
    }
    client_close(&cl);
    if (rc < 0 && !strstr(err->msg, agent))   /* name the agent once (a drain reason keeps 128 bytes) */
        tbm_errprefix(err, "agent %s: ", agent);
    return rc;
}

int client_launch_stamps(const char *text, client_launch_t *l)
{
    long long v[3];
    int n = -1;

    if (!text || sscanf(text, "%lld %lld %lld%n", &v[0], &v[1], &v[2], &n) != 3 || n < 0 || text[n] != '\0' ||
        v[0] <= 0 || v[1] < v[0] || v[2] < v[1])
        return -1;
    l->grant_start = v[0], l->grant_end = v[1], l->exec = v[2];
    return 0;
}

/* " name=1.23", or " name=-" when either stamp is missing. */
static size_t part(char *buf, size_t len, const char *name, long long from, long long to)
{
    int n = from > 0 && to >= from ? snprintf(buf, len, " %s=%.2f", name, (double)(to - from) / 1000.0)
                                   : snprintf(buf, len, " %s=-", name);

    return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

void client_launch_line(const client_launch_t *l, char *buf, size_t len)
{
    const long long *first = NULL, *last = NULL;
    const long long order[] = { l->grant_start, l->grant_end, l->exec, l->main, l->open.cred, l->open.connect,
                                l->open.welcome, l->started, l->first_output };
    size_t n = 0, i;

    if (len == 0)
        return;
    buf[0] = '\0';
    for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        if (order[i] > 0) {
            first = first ? first : &order[i];
            last = &order[i];
        }
    n += part(buf + n, len - n, "grant", l->grant_start, l->grant_end);
    n += part(buf + n, len - n, "stepd", l->grant_end, l->exec);
    n += part(buf + n, len - n, "exec", l->exec, l->main);
    n += part(buf + n, len - n, "credential", l->main, l->open.cred);
    n += part(buf + n, len - n, "connect", l->open.cred, l->open.connect);
    n += part(buf + n, len - n, "authenticate", l->open.connect, l->open.welcome);
    n += part(buf + n, len - n, "spawn", l->open.welcome, l->started);
    n += part(buf + n, len - n, "first_output", l->started, l->first_output);
    n += part(buf + n, len - n, "total", first ? *first : 0, last ? *last : 0);
    part(buf + n, len - n, "end", l->first_output ? l->first_output : l->started, l->exit);
    if (buf[0] == ' ')
        memmove(buf, buf + 1, strlen(buf));
}
