/* proto.c: framing of the bridge-agent protocol (incremental decoder, data frame headers), how its JSON
 * texts are read, job grants and portable signal names (see proto.h). The messages are in proto_msg.c,
 * which builds on this file (never the other way round). */
#include "proto.h"
#include "json_read.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Framing ---------------------------------------------------------------------------------------------- */

static size_t clamp_limit(size_t limit)
{
    return limit < 1 ? 1 : limit > TBM_FRAME_MAX ? TBM_FRAME_MAX : limit;
}

int tbm_fdec_init(tbm_fdec_t *d, size_t limit, tbm_err_t *err)
{
    memset(d, 0, sizeof(*d));
    d->limit = clamp_limit(limit);
    d->cap = TBM_FRAME_HDR + (d->limit < TBM_FDEC_START ? d->limit : TBM_FDEC_START);
    d->buf = malloc(d->cap);
    if (!d->buf)
        return tbm_errprintf(err, "out of memory for a frame buffer of %zu bytes", d->cap);
    return 0;
}

void tbm_fdec_free(tbm_fdec_t *d)
{
    free(d->buf);
    memset(d, 0, sizeof(*d));
}

void tbm_fdec_set_limit(tbm_fdec_t *d, size_t limit)
{
    d->limit = clamp_limit(limit);   /* the buffer grows when a frame needs it (fdec_need_more), not here */
}

unsigned char *tbm_fdec_space(tbm_fdec_t *d, size_t *avail)
{
    *avail = d->cap - d->end;
    return d->buf + d->end;
}

void tbm_fdec_commit(tbm_fdec_t *d, size_t n)
{
    d->end += n <= d->cap - d->end ? n : d->cap - d->end;
}

size_t tbm_fdec_feed(tbm_fdec_t *d, const void *data, size_t len)
{
    size_t room;
    unsigned char *p = tbm_fdec_space(d, &room);

    if (len > room)
        len = room;
    if (len)
        memcpy(p, data, len);
    tbm_fdec_commit(d, len);
    return len;
}

size_t tbm_fdec_pending(const tbm_fdec_t *d)
{
    return d->end - d->start;
}

static int fdec_fail(tbm_fdec_t *d, tbm_err_t *err)
{
    d->failed = 1;
    if (err)
        *err = d->err;
    return -1;
}

/* Make sure the frame being received fits behind its start: grow the buffer when the frame (its header
 * read) is larger than it, up to its header and the limit (doubling, so that a stream of growing frames does
 * not realloc each time); when it would not fit behind its start, move it to the front. Moving only then (not
 * on every call) keeps a stream of large data frames from being copied twice. 0, or -1 (sticky) when memory
 * ran out. */
static int fdec_need_more(tbm_fdec_t *d, tbm_err_t *err)
{
    const unsigned char *p = d->buf + d->start;
    size_t n = d->end - d->start, want = 0, cap;
    unsigned char *grown;

    if (n >= TBM_FRAME_HDR)
        want = (size_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
    if (TBM_FRAME_HDR + want > d->cap) {
        cap = 2 * d->cap < TBM_FRAME_HDR + d->limit ? 2 * d->cap : TBM_FRAME_HDR + d->limit;
        cap = cap > TBM_FRAME_HDR + want ? cap : TBM_FRAME_HDR + want;
        if (!(grown = realloc(d->buf, cap))) {
            tbm_errprintf(&d->err, "out of memory for a frame of %zu bytes", want);
            return fdec_fail(d, err);
        }
        d->buf = grown;
        d->cap = cap;
        p = d->buf + d->start;
    }
    if (n == 0) {
        d->start = d->end = 0;
    } else if (d->cap - d->start < TBM_FRAME_HDR + want) {
        memmove(d->buf, p, n);
        d->start = 0;
        d->end = n;
    }
    return 0;
}

static int kind_known(unsigned char k)
{
    return k == TBM_FRAME_JSON || k == TBM_FRAME_STDIN || k == TBM_FRAME_STDOUT || k == TBM_FRAME_STDERR;
}

int tbm_fdec_next(tbm_fdec_t *d, tbm_frame_t *f, tbm_err_t *err)
{
    const unsigned char *p = d->buf + d->start;
    size_t have = d->end - d->start;
    uint32_t len;

    if (d->failed)
        return fdec_fail(d, err);
    if (have < TBM_FRAME_HDR)
        return fdec_need_more(d, err);
    len = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    if (len == 0) {
        tbm_errprintf(&d->err, "frame error: empty frame (length 0); the peer does not speak this protocol");
        return fdec_fail(d, err);
    }
    if (len > d->limit) {
        tbm_errprintf(&d->err, "frame error: frame of %u bytes exceeds the limit of %zu bytes; the peer does "
                      "not speak this protocol or sent too much at once", len, d->limit);
        return fdec_fail(d, err);
    }
    if (have > TBM_FRAME_HDR && !kind_known(p[4])) {
        tbm_errprintf(&d->err, "frame error: frame starts with byte 0x%02x, which is neither a JSON object nor "
                      "a data frame; the peer does not speak this protocol", p[4]);
        return fdec_fail(d, err);
    }
    if (have < TBM_FRAME_HDR + len)
        return fdec_need_more(d, err);
    f->kind = (tbm_frame_kind_t)p[4];
    f->data = f->kind == TBM_FRAME_JSON ? p + 4 : p + 5;
    f->len = f->kind == TBM_FRAME_JSON ? len : len - 1;
    d->start += TBM_FRAME_HDR + len;
    return 1;
}

int tbm_fdec_only(const tbm_fdec_t *d, tbm_frame_t *f)
{
    const unsigned char *p = d->buf + d->start;
    size_t have = d->end - d->start;
    uint32_t len;

    if (d->failed || have <= TBM_FRAME_HDR || !kind_known(p[4]))
        return 0;
    len = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    if (len == 0 || len > d->limit || have != TBM_FRAME_HDR + (size_t)len)
        return 0;
    f->kind = (tbm_frame_kind_t)p[4];
    f->data = f->kind == TBM_FRAME_JSON ? p + 4 : p + 5;
    f->len = f->kind == TBM_FRAME_JSON ? len : len - 1;
    return 1;
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

void tbm_data_header(unsigned char hdr[TBM_DATA_HDR], tbm_frame_kind_t kind, size_t len)
{
    put_be32(hdr, (uint32_t)(len > TBM_DATA_MAX ? TBM_DATA_MAX : len) + 1u);
    hdr[4] = (unsigned char)kind;
}

unsigned char *tbm_frame_wrap(const char *json, size_t len, size_t *out_len, tbm_err_t *err)
{
    unsigned char *frame;

    if (len > TBM_FRAME_MAX)
        return tbm_errprintf(err, "message of %zu bytes exceeds the frame limit of %u bytes; send less at once",
                             len, TBM_FRAME_MAX), NULL;
    frame = malloc(TBM_FRAME_HDR + len);
    if (!frame)
        return tbm_errprintf(err, "out of memory for a frame of %zu bytes", len), NULL;
    put_be32(frame, (uint32_t)len);
    memcpy(frame + TBM_FRAME_HDR, json, len);
    *out_len = TBM_FRAME_HDR + len;
    return frame;
}

/* The protocol's JSON texts --------------------------------------------------------------------------- */

json_object *tbm_proto_json(const void *text, size_t len, const char *what, tbm_err_t *err)
{
    const tbm_json_rules_t rules = { .what = what, .max_len = TBM_FRAME_MAX, .max_depth = TBM_PROTO_DEPTH,
                                     .want_object = 1 };

    return tbm_json_read(text, len, &rules, err);
}

/* Grants ----------------------------------------------------------------------------------------------- */

static int node_name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n >= TBM_NODE_MAX)
        return 0;
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") == n;
}

char *tbm_grant_payload(const tbm_grant_t *g, tbm_err_t *err)
{
    json_object *o;
    char *text;

    if (!node_name_ok(g->node))
        return tbm_errprintf(err, "grant: node name '%.*s' must be 1 to %d letters, digits, '.', '-' or '_'",
                             TBM_NODE_MAX, g->node, TBM_NODE_MAX - 1), NULL;
    o = json_object_new_object();
    json_object_object_add(o, "tbmesh_grant", json_object_new_int(1));
    json_object_object_add(o, "job", json_object_new_int64(g->job));
    json_object_object_add(o, "step", json_object_new_int64(g->step));
    json_object_object_add(o, "node", json_object_new_string(g->node));
    json_object_object_add(o, "uid", json_object_new_int64(g->uid));
    json_object_object_add(o, "gid", json_object_new_int64(g->gid));
    json_object_object_add(o, "expires", json_object_new_int64(g->expires));
    if (g->hello)
        json_object_object_add(o, "hello", json_object_new_int(1));
    text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    if (!text)
        tbm_errprintf(err, "grant: out of memory");
    return text;
}

static int grant_members(json_object *o, tbm_grant_t *g, tbm_err_t *err)
{
    int64_t v = 0, job = 0, step = 0, uid = 0, gid = 0, hello = 0;
    const char *node = NULL;

    if (tbm_json_get_int(o, "grant", "tbmesh_grant", 1, 1, 1, &v, err) < 0 ||
        tbm_json_get_int(o, "grant", "job", 1, 0, UINT32_MAX, &job, err) < 0 ||
        tbm_json_get_int(o, "grant", "step", 1, 0, UINT32_MAX, &step, err) < 0 ||
        tbm_json_get_str(o, "grant", "node", 1, TBM_NODE_MAX - 1, &node, err) < 0 ||
        tbm_json_get_int(o, "grant", "uid", 1, 0, UINT32_MAX, &uid, err) < 0 ||
        tbm_json_get_int(o, "grant", "gid", 1, 0, UINT32_MAX, &gid, err) < 0 ||
        tbm_json_get_int(o, "grant", "expires", 1, 0, INT64_MAX, &g->expires, err) < 0 ||
        tbm_json_get_int(o, "grant", "hello", 0, 0, 1, &hello, err) < 0)
        return -1;
    if (!node_name_ok(node))
        return tbm_errprintf(err, "grant: 'node' must be letters, digits, '.', '-' or '_'");
    g->job = (uint32_t)job;
    g->step = (uint32_t)step;
    g->uid = (uint32_t)uid;
    g->gid = (uint32_t)gid;
    g->hello = (int)hello;
    snprintf(g->node, sizeof(g->node), "%s", node);
    return 0;
}

int tbm_grant_parse(const void *payload, size_t len, tbm_grant_t *g, tbm_err_t *err)
{
    json_object *o;
    int rc;

    memset(g, 0, sizeof(*g));
    o = tbm_proto_json(payload, len, "grant", err);
    if (!o)
        return -1;
    rc = grant_members(o, g, err);
    json_object_put(o);
    if (rc < 0)
        memset(g, 0, sizeof(*g));
    return rc;
}

/* What is wrong with a decoded grant here and now (tbm_grant_check), said after a prefix of the caller's. */
static int grant_fault(const tbm_grant_t *g, uint32_t cred_uid, const char *node, int64_t now, const char *prefix,
                       tbm_err_t *err)
{
    if (cred_uid != 0)
        return tbm_errprintf(err, "%smade by uid %u, not by root on the bridge host; only slurmstepd (root) may "
                             "grant a task", prefix, cred_uid);
    if (strcmp(g->node, node) != 0)
        return tbm_errprintf(err, "%sit is for node '%s', this is '%s'; a grant is good on its own node only",
                             prefix, g->node, node);
    if (g->expires <= now)
        return tbm_errprintf(err, "%sexpired %lld s ago; make a new one (are the clocks of the bridge and the "
                             "Mac in step?)", prefix, (long long)(now - g->expires));
    if (g->expires - now > TBM_GRANT_TTL_MAX)
        return tbm_errprintf(err, "%sit expires in %lld s, more than the %d s a grant may live", prefix,
                             (long long)(g->expires - now), TBM_GRANT_TTL_MAX);
    return 0;
}

int tbm_grant_check(const tbm_grant_t *g, uint32_t cred_uid, const char *node, int64_t now, tbm_err_t *err)
{
    return grant_fault(g, cred_uid, node, now, "grant refused: ", err);
}

int tbm_grant_hello(const void *payload, size_t len, uint32_t cred_uid, const char *node, int64_t now,
                    tbm_grant_t *g, tbm_err_t *err)
{
    char prefix[128];
    tbm_err_t why = { { 0 } };

    if (tbm_grant_parse(payload, len, g, &why) < 0)
        return tbm_errprintf(err, "a hello of root's may carry a job grant and nothing else: %s", why.msg);
    snprintf(prefix, sizeof(prefix), "the hello's grant (job %u step %u, uid %u) ", g->job, g->step, g->uid);
    if (grant_fault(g, cred_uid, node, now, "", &why) < 0)
        return tbm_errprintf(err, "%sis refused: %s", prefix, why.msg);
    if (!g->hello)
        return tbm_errprintf(err, "%swas not made to be a hello: it is good in a spawn only, on a connection of "
                             "uid %u's (or root's)", prefix, g->uid);
    return 0;
}

int tbm_grant_allows(const tbm_grant_t *g, uint32_t caller_uid, uint32_t want_uid, tbm_err_t *err)
{
    if (caller_uid != 0 && caller_uid != g->uid)
        return tbm_errprintf(err, "grant refused: it is for uid %u but the connection is uid %u; a user may "
                             "use only their own grants", g->uid, caller_uid);
    if (want_uid != g->uid)
        return tbm_errprintf(err, "grant refused: the spawn asks for uid %u but the grant is for uid %u",
                             want_uid, g->uid);
    return 0;
}

/* The agent's proof ------------------------------------------------------------------------------------ */

int tbm_nonce_ok(const char *s)
{
    return s && strlen(s) == TBM_NONCE_LEN && strspn(s, "0123456789abcdef") == TBM_NONCE_LEN;
}

void tbm_nonce_format(const unsigned char *raw, char out[TBM_NONCE_LEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    int i;

    for (i = 0; i < TBM_NONCE_LEN / 2; i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    out[TBM_NONCE_LEN] = '\0';
}

char *tbm_proof_payload(const char *node, const char *nonce, tbm_err_t *err)
{
    json_object *o;
    char *text;

    if (!node_name_ok(node))
        return tbm_errprintf(err, "proof: node name '%.*s' must be 1 to %d letters, digits, '.', '-' or '_'",
                             TBM_NODE_MAX, node, TBM_NODE_MAX - 1), NULL;
    if (!tbm_nonce_ok(nonce))
        return tbm_errprintf(err, "proof: a nonce is %d lowercase hex digits", TBM_NONCE_LEN), NULL;
    o = json_object_new_object();
    json_object_object_add(o, "tbmesh_proof", json_object_new_int(1));
    json_object_object_add(o, "kind", json_object_new_string(TBM_PROOF_KIND));
    json_object_object_add(o, "node", json_object_new_string(node));
    json_object_object_add(o, "nonce", json_object_new_string(nonce));
    text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    if (!text)
        tbm_errprintf(err, "proof: out of memory");
    return text;
}

/* A proof's payload: its node and nonce (pointing into o). 0, or -1 with err. */
static int proof_members(json_object *o, const char **node, const char **nonce, tbm_err_t *err)
{
    const char *kind = NULL;
    int64_t v = 0;

    if (tbm_json_get_int(o, "proof", "tbmesh_proof", 1, 1, 1, &v, err) < 0 ||
        tbm_json_get_str(o, "proof", "kind", 1, 64, &kind, err) < 0 ||
        tbm_json_get_str(o, "proof", "node", 1, TBM_NODE_MAX - 1, node, err) < 0 ||
        tbm_json_get_str(o, "proof", "nonce", 1, TBM_NONCE_LEN, nonce, err) < 0)
        return -1;
    if (strcmp(kind, TBM_PROOF_KIND) != 0)
        return tbm_errprintf(err, "proof: its kind is '%s', not '%s'", kind, TBM_PROOF_KIND);
    return 0;
}

#define PROOF_FIX "something other than macnoded holds the port; check the Mac"

int tbm_proof_check(const tbm_proof_cred_t *p, const char *agent, const char *node, const char *nonce,
                    tbm_err_t *err)
{
    tbm_err_t why = { { 0 } };
    const char *said_node = NULL, *said_nonce = NULL;
    json_object *o;
    int rc = -1;

    if (!p->decoded)
        return tbm_errprintf(err, "the agent at %s did not prove itself (its credential does not decode: %s): it does "
                             "not share this cluster's MUNGE key, or " PROOF_FIX, agent, p->why ? p->why : "?");
    if (p->uid != 0)
        return tbm_errprintf(err, "the agent at %s did not prove itself (the credential was made by uid %u, not root): "
                             PROOF_FIX, agent, p->uid);
    o = tbm_proto_json(p->payload, p->len, "proof", &why);
    if (!o || proof_members(o, &said_node, &said_nonce, &why) < 0)
        tbm_errprintf(err, "the agent at %s did not prove itself (the credential is root's but no agent's proof: %s): "
                      PROOF_FIX, agent, why.msg);
    else if (strcmp(said_nonce, nonce) != 0)
        tbm_errprintf(err, "the agent at %s did not prove itself (its proof answers another connection's nonce: a "
                      "replayed proof): " PROOF_FIX, agent);
    else if (strcmp(said_node, node) != 0)
        tbm_errprintf(err, "the agent at %s proved itself as %s's, not %s's: the address tbmesh.conf gives %s "
                      "(AgentAddr, AgentPort) leads to another Mac's agent; correct it, or check the Mac", agent,
                      said_node, node, node);
    else
        rc = 0;
    if (o)
        json_object_put(o);
    return rc;
}

/* Signals ---------------------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    int signo;
} signals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},     {"QUIT", SIGQUIT},   {"ILL", SIGILL},   {"TRAP", SIGTRAP},
    {"ABRT", SIGABRT}, {"BUS", SIGBUS},     {"FPE", SIGFPE},     {"KILL", SIGKILL}, {"USR1", SIGUSR1},
    {"SEGV", SIGSEGV}, {"USR2", SIGUSR2},   {"PIPE", SIGPIPE},   {"ALRM", SIGALRM}, {"TERM", SIGTERM},
    {"CHLD", SIGCHLD}, {"CONT", SIGCONT},   {"STOP", SIGSTOP},   {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN},
    {"TTOU", SIGTTOU}, {"URG", SIGURG},     {"XCPU", SIGXCPU},   {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM},
    {"PROF", SIGPROF}, {"WINCH", SIGWINCH}, {"SYS", SIGSYS},
};

int tbm_signal_by_name(const char *name)
{
    size_t i;

    for (i = 0; name && i < sizeof(signals) / sizeof(signals[0]); i++)
        if (strcmp(signals[i].name, name) == 0)
            return signals[i].signo;
    return 0;
}

const char *tbm_signal_name(int signo)
{
    size_t i;

    for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
        if (signals[i].signo == signo)
            return signals[i].name;
    return NULL;
}
