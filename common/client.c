/* client.c: connect, have the agent prove itself, authenticate and ask it (see client.h). */
#include "config.h"
#include "client.h"
#include "auth.h"
#include "clock.h"
#include "conf.h"
#include "facts_json.h"
#include "fileio.h"
#include "wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/random.h>
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

/* A call failed: what it was (c->fault), -1. */
static int failed(client_t *c, client_fault_t fault)
{
    c->fault = fault;
    return -1;
}

/* ms, or what is left to c->deadline when that is sooner. */
static int within(const client_t *c, int ms)
{
    long long left = c->deadline > 0 ? c->deadline - tbm_now_ms() : ms;

    return left < 0 ? 0 : left < ms ? (int)left : ms;
}

/* The next message within ms, which must be of type want; an error message becomes err. */
static int expect_within(client_t *c, tbm_msg_type_t want, tbm_msg_t *m, int ms, tbm_err_t *err)
{
    char who[160];
    int rc = wire_next_msg(c->fd, &c->dec, m, within(c, ms), err), why = errno;

    client_who(c, who, sizeof(who));
    if (rc == 0)
        return failed(c, CLIENT_CLOSED), tbm_errprintf(err, "%s closed the connection without a reply", who);
    if (rc < 0)
        return failed(c, why == EPROTO ? CLIENT_ANSWERED : why == ETIMEDOUT ? CLIENT_SILENT : CLIENT_CLOSED),
               tbm_errprefix(err, "from %s: ", who);
    if (m->type == want)
        return 0;
    c->fault = CLIENT_ANSWERED;
    if (m->type == TBM_MSG_ERROR)
        tbm_errprintf(err, "%s refused: %s", who, m->message);
    else
        tbm_errprintf(err, "%s answered %s where %s was expected", who, tbm_msg_type_name(m->type),
                      tbm_msg_type_name(want));
    tbm_msg_free(m);
    return -1;
}

static int expect(client_t *c, tbm_msg_type_t want, tbm_msg_t *m, tbm_err_t *err)
{
    return expect_within(c, want, m, c->reply_ms > 0 ? c->reply_ms : CLIENT_REPLY_MS, err);
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

/* The node tbmesh.conf puts at the agent's address, into buf: 0, or -1 (no tbmesh.conf, no such node). */
static int node_in_conf(const char *agent, char *buf, size_t len)
{
    const char *path = getenv("TBMESH_CONF");
    char def[4096], *text;
    size_t n;
    tbm_conf_t conf;
    int i = -1;

    if (!path || !*path) {
        tbm_conf_default_path(getenv("SLURM_CONF"), def, sizeof(def));
        path = def;
    }
    if (!(text = tbm_read_file(path, TBM_CONF_MAX_BYTES, &n, NULL)))
        return -1;
    if (tbm_conf_parse(text, n, path, &conf, NULL, NULL) == 0) {
        if ((i = tbm_conf_node_at(&conf, agent)) >= 0)
            snprintf(buf, len, "%s", conf.nodes[i].name);
        tbm_conf_free(&conf);
    }
    free(text);
    return i >= 0 ? 0 : -1;
}

/* The host of "HOST[:PORT]" when it is a name (its first label), not an address: 0, or -1. */
static int node_in_name(const char *agent, char *buf, size_t len)
{
    char host[256];
    unsigned char addr[16];
    size_t n = strcspn(agent, ":");

    if (n == 0 || n >= sizeof(host) || strchr(agent + n + (agent[n] ? 1 : 0), ':'))
        return -1;   /* empty, too long, or an IPv6 address */
    memcpy(host, agent, n);
    host[n] = '\0';
    if (inet_pton(AF_INET, host, addr) == 1)
        return -1;
    host[strcspn(host, ".")] = '\0';
    snprintf(buf, len, "%s", host);
    return 0;
}

int client_expected_node(const client_t *c, char *buf, size_t len, tbm_err_t *err)
{
    if (c->want && *c->want)
        snprintf(buf, len, "%s", c->want);
    else if (node_in_conf(c->agent, buf, len) == 0)
        return 0;
    else if (c->mac && *c->mac)
        snprintf(buf, len, "%s", c->mac);
    else if (node_in_name(c->agent, buf, len) < 0)
        return tbm_errprintf(err, "cannot tell which Mac's agent %s should be, so it cannot prove itself: give "
                             "--node NAME (the Mac's name in tbmesh.conf), or list the Mac with AgentAddr in "
                             "tbmesh.conf ($TBMESH_CONF)", c->agent);
    return 0;
}

/* A fresh nonce of random bytes. */
static int fresh_nonce(char out[TBM_NONCE_LEN + 1], tbm_err_t *err)
{
    unsigned char raw[TBM_NONCE_LEN / 2];

    if (getentropy(raw, sizeof(raw)) < 0)
        return tbm_errprintf(err, "no random bytes for the agent's challenge: %s", strerror(errno));
    tbm_nonce_format(raw, out);
    return 0;
}

/* The agent proves itself before anything else is sent: a prove with a fresh nonce, its proof within
 * CLIENT_PROOF_MS, decoded by our munged and checked (root's, a proof, our nonce, node `want`). 0, or -1 with
 * err (the connection is to be closed then, with nothing of ours sent). */
static int agent_proves(client_t *c, const char *want, tbm_err_t *err)
{
    char nonce[TBM_NONCE_LEN + 1];
    tbm_msg_t prove = { .type = TBM_MSG_PROVE, .version = TBM_PROTO_VERSION, .nonce = nonce }, m;
    tbm_err_t why = { { 0 } };
    auth_cred_t cred;
    tbm_proof_cred_t seen = { 0 };
    int ms = c->reply_ms > 0 && c->reply_ms < CLIENT_PROOF_MS ? c->reply_ms : CLIENT_PROOF_MS, rc;

    if (fresh_nonce(nonce, err) < 0)
        return failed(c, CLIENT_LOCAL);
    if (wire_send(c->fd, &prove, err) < 0)
        return failed(c, CLIENT_CLOSED);
    if (expect_within(c, TBM_MSG_PROOF, &m, ms, err) < 0) {
        why = *err;
        if (c->fault == CLIENT_ANSWERED)
            c->fault = CLIENT_UNPROVED;
        return tbm_errprintf(err, "%s%s; it did not prove itself, so nothing was sent to it", why.msg,
                             strstr(why.msg, "unknown type 'prove'") ? " (an older macnoded? install the same "
                             "slurm-tbmesh release on the bridge and the Macs)" : "");
    }
    seen.decoded = auth_decode(c->socket, m.cred, &cred, &why) == AUTH_OK;
    seen.why = why.msg;
    seen.uid = (uint32_t)cred.uid, seen.payload = cred.payload, seen.len = cred.len;
    rc = tbm_proof_check(&seen, c->agent, want, nonce, err);
    if (rc == 0)
        snprintf(c->node, sizeof(c->node), "%s", want);
    else
        c->fault = CLIENT_UNPROVED;
    auth_cred_free(&cred);
    tbm_msg_free(&m);
    c->times.proof = tbm_now_us();
    return rc;
}

/* The hello, and req (when not NULL) right behind it, in one write. */
static int send_hello(client_t *c, const char *cred, const tbm_msg_t *req, tbm_err_t *err)
{
    size_t n;
    unsigned char *both = tbm_msg_encode_hello(cred, req, &n, err);
    int rc;

    if (!both)
        return failed(c, CLIENT_LOCAL);
    rc = tbm_write_all(c->fd, both, n);
    free(both);
    if (rc < 0)
        return failed(c, CLIENT_CLOSED), tbm_errprintf(err, "cannot send %s: %s", req ? tbm_msg_type_name(req->type) : "hello",
                             strerror(errno));
    return 0;
}

/* Send req on the open connection. 0, or -1 with err. */
static int client_send(client_t *c, const tbm_msg_t *req, tbm_err_t *err)
{
    return wire_send(c->fd, req, err) < 0 ? failed(c, CLIENT_CLOSED) : 0;
}

/* The welcome m read: when, and the agent's name for its node (the one it proved itself for, when it did). */
static int welcomed(client_t *c, tbm_msg_t *m)
{
    c->times.welcome = tbm_now_us();
    if (!c->node[0])
        snprintf(c->node, sizeof(c->node), "%s", m->node);
    tbm_msg_free(m);
    return 0;
}

/* A fresh start: the times, the node, the fault, the decoder. 0, or -1 with err. */
static int begin(client_t *c, tbm_err_t *err)
{
    memset(&c->times, 0, sizeof(c->times));
    c->node[0] = '\0';
    c->fault = CLIENT_OK;
    c->fault_errno = 0;
    if (!c->greeted)
        c->fd = -1;
    return tbm_fdec_init(&c->dec, TBM_FRAME_MAX, err) < 0 ? failed(c, CLIENT_LOCAL) : 0;
}

/* Connect to c->agent and have it prove itself as want's. An agent whose proof did not come in time, or that
 * closed the connection before it (a gate flooded by others: its proofs come at a bounded rate, and it closes
 * the oldest waiting connections to make room), is asked again on a new connection, up to CLIENT_PROOF_TRIES
 * times in all: nothing of ours was sent to it. 0, or -1 with err. */
static int connect_proved(client_t *c, const char *want, tbm_err_t *err)
{
    int tries;

    for (tries = 1;; tries++) {
        errno = 0;
        c->fd = wire_connect_lane(c->agent, TBM_CONF_AGENT_PORT, c->connect_ms,
                                  c->task_lane ? WIRE_LANE_TASK : WIRE_LANE_ROOT, err);
        c->times.connect = tbm_now_us();
        if (c->fd < 0) {
            c->fault_errno = errno;
            failed(c, CLIENT_UNREACHABLE);
            return unreachable(c, err);
        }
        if (agent_proves(c, want, err) == 0)
            return 0;
        if (tries >= CLIENT_PROOF_TRIES || (c->fault != CLIENT_SILENT && c->fault != CLIENT_CLOSED) ||
            (c->deadline && tbm_now_ms() >= c->deadline))
            break;
        close(c->fd);
        c->fd = -1;
        tbm_fdec_free(&c->dec);
        if (tbm_fdec_init(&c->dec, TBM_FRAME_MAX, err) < 0)
            return failed(c, CLIENT_LOCAL);
        c->fault = CLIENT_OK;
    }
    if (tries > 1) {
        tbm_err_t one = *err;
        tbm_errprintf(err, "%s (asked %d times)", one.msg, tries);
    }
    return -1;
}

int client_open_with(client_t *c, const tbm_msg_t *req, tbm_err_t *err)
{
    tbm_msg_t m;
    char *cred, want[TBM_NODE_MAX];
    int rc;

    if (begin(c, err) < 0)
        return -1;
    if (c->greeted) {   /* connected, the hello said: its welcome (there already, as a rule), then the request */
        c->times.cred = c->times.connect = tbm_now_us();
        if (expect(c, TBM_MSG_WELCOME, &m, err) < 0)
            return -1;
        welcomed(c, &m);
        return req ? client_send(c, req, err) : 0;
    }
    /* whom to expect, and the credential, first: the agent gives a connection only a few seconds to say hello;
     * the credential is sent only once the agent has proved itself */
    if (client_expected_node(c, want, sizeof(want), err) < 0 || !(cred = auth_encode(c->socket, NULL, 0, 0, err)))
        return failed(c, CLIENT_LOCAL);
    c->times.cred = tbm_now_us();
    rc = connect_proved(c, want, err) < 0 ? -1 : send_hello(c, cred, req, err);
    free(cred);
    if (rc < 0 || expect(c, TBM_MSG_WELCOME, &m, err) < 0)
        return -1;
    return welcomed(c, &m);
}

int client_greet(client_t *c, const char *cred, tbm_err_t *err)
{
    char want[TBM_NODE_MAX];
    int fd = -1;

    c->greeted = 0;
    if (begin(c, err) < 0)
        return -1;
    if (client_expected_node(c, want, sizeof(want), err) < 0)
        failed(c, CLIENT_LOCAL);
    else if (connect_proved(c, want, err) == 0 && send_hello(c, cred, NULL, err) == 0 &&
             fcntl(c->fd, F_SETFD, 0) == 0) {
        fd = c->fd;
        c->fd = -1;
    }
    client_close(c);
    return fd;
}

int client_open(client_t *c, tbm_err_t *err)
{
    return client_open_with(c, NULL, err);
}

int client_call(client_t *c, const tbm_msg_t *req, tbm_msg_type_t want, tbm_msg_t *reply, tbm_err_t *err)
{
    if (client_send(c, req, err) < 0)
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

int client_probe(const char *agent, const char *node, const char *socket, int reply_ms, tbm_host_facts_t *f,
                 tbm_err_t *err)
{
    client_t cl = { .agent = agent, .want = node, .socket = socket, .reply_ms = reply_ms, .fd = -1 };
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
                                l->open.proof, l->open.welcome, l->started, l->first_output };
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
    n += part(buf + n, len - n, "proof", l->open.connect, l->open.proof);
    n += part(buf + n, len - n, "authenticate", l->open.proof ? l->open.proof : l->open.connect, l->open.welcome);
    n += part(buf + n, len - n, "spawn", l->open.welcome, l->started);
    n += part(buf + n, len - n, "first_output", l->started, l->first_output);
    n += part(buf + n, len - n, "total", first ? *first : 0, last ? *last : 0);
    part(buf + n, len - n, "end", l->first_output ? l->first_output : l->started, l->exit);
    if (buf[0] == ' ')
        memmove(buf, buf + 1, strlen(buf));
}
