/* wire_poke.c: a test client of macnoded that sends exactly what it is told, in order (the agent's proof asked
 * for and checked, then a fresh hello or a given credential; a hello without the proof; JSON frames from the
 * command line or a file, raw bytes), then prints every frame the agent sends until it closes (--keep: without
 * closing its own side first and without a deadline, as a watch client; --exec-fd: hand the connection to a
 * command instead, as the SPANK plug-in hands its greeted connection to the forwarder; --hold: the same on many
 * connections, held open, as a user holding the agent's servers would; --churn: new connections as fast as they
 * can be made, each sending its prove and never its hello, as a user flooding the agent's gate would). */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "auth.h"
#include "clock.h"
#include "conf.h"
#include "fileio.h"
#include "wire.h"

static tbm_fdec_t dec;

static int send_raw_hex(int fd, const char *hex)
{
    size_t n = strlen(hex) / 2, i;
    unsigned char *b = malloc(n + 1);
    unsigned int v;
    int rc;

    for (i = 0; b && i < n; i++) {
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return free(b), -1;
        b[i] = (unsigned char)v;
    }
    rc = b ? tbm_write_all(fd, b, n) : -1;
    free(b);
    return rc;
}

static int send_msg(int fd, const tbm_msg_t *m)
{
    tbm_err_t err = { { 0 } };

    if (wire_send(fd, m, &err) < 0)
        return fprintf(stderr, "wire_poke: %s\n", err.msg), -1;
    return 0;
}

/* prove with nonce (a fresh one when NULL); the proof frame is printed when print, else checked against
 * node ($SLURMD_NODENAME, else "testnode"). 0, or -1 with a message. */
static int prove(int fd, const char *agent, const char *nonce, int print)
{
    char fresh[TBM_NONCE_LEN + 1];
    unsigned char raw[TBM_NONCE_LEN / 2];
    const char *node = getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : "testnode";
    tbm_msg_t m = { .type = TBM_MSG_PROVE, .version = TBM_PROTO_VERSION, .nonce = nonce ? nonce : fresh }, p;
    tbm_err_t err = { { 0 } }, why = { { 0 } };
    tbm_frame_t f;
    tbm_proof_cred_t seen = { 0 };
    auth_cred_t cred;
    int rc;

    if (getentropy(raw, sizeof(raw)) < 0)
        return -1;
    tbm_nonce_format(raw, fresh);
    if (send_msg(fd, &m) < 0 || wire_next_frame(fd, &dec, &f, 10000, &err) <= 0)
        return fprintf(stderr, "wire_poke: no proof: %s\n", err.msg), -1;
    if (print)
        return printf("%.*s\n", (int)f.len, (const char *)f.data) < 0 ? -1 : 0;
    if (tbm_msg_parse(&f, &p, &err) < 0 || p.type != TBM_MSG_PROOF) {
        printf("%.*s\n", (int)f.len, (const char *)f.data);   /* the agent's refusal, for the test to see */
        tbm_msg_free(&p);
        return -1;
    }
    seen.decoded = auth_decode(getenv("TBMESH_MUNGE_SOCKET"), p.cred, &cred, &why) == AUTH_OK;
    seen.why = why.msg, seen.uid = (uint32_t)cred.uid, seen.payload = cred.payload, seen.len = cred.len;
    rc = tbm_proof_check(&seen, agent, node, m.nonce, &err);
    auth_cred_free(&cred);
    tbm_msg_free(&p);
    return rc < 0 ? fprintf(stderr, "wire_poke: %s\n", err.msg), -1 : 0;
}

static int send_hello(int fd, const char *cred)
{
    tbm_msg_t m = { .type = TBM_MSG_HELLO, .version = TBM_PROTO_VERSION, .cred = cred };

    return send_msg(fd, &m);
}

static int send_json(int fd, const char *text)
{
    size_t n = strlen(text);
    unsigned char hdr[4] = { (unsigned char)(n >> 24), (unsigned char)(n >> 16), (unsigned char)(n >> 8),
                             (unsigned char)n };

    return tbm_write_all(fd, hdr, 4) < 0 || tbm_write_all(fd, text, n) < 0 ? -1 : 0;
}

/* keep: the client stays (no half-close, no deadline, each frame printed at once), as a watch needs. */
static void print_replies(int fd, int keep)
{
    tbm_frame_t f;
    tbm_err_t err = { { 0 } };
    int rc;

    while ((rc = wire_next_frame(fd, &dec, &f, keep ? -1 : 10000, &err)) > 0) {
        if (f.kind == TBM_FRAME_JSON)
            printf("%.*s\n", (int)f.len, (const char *)f.data);
        else
            printf("data %d: %.*s\n", (int)f.kind, (int)f.len, (const char *)f.data);
        if (keep)
            fflush(stdout);
    }
    printf(rc == 0 ? "EOF\n" : "ERROR %s\n", err.msg);
}

/* One argument (and its value, *i moved past it): 0, -1 failed (the agent's answer is still printed), -2 bad. */
static int step(int fd, const char *agent, int argc, char **argv, int *i)
{
    tbm_err_t err = { { 0 } };
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    char *cred, *text;
    size_t len;
    int rc;

    if (!strcmp(a, "--hello")) {
        cred = prove(fd, agent, NULL, 0) < 0 ? NULL : auth_encode(getenv("TBMESH_MUNGE_SOCKET"), NULL, 0, 0, &err);
        rc = cred ? send_hello(fd, cred) : -1;
        free(cred);
        return rc;
    }
    if (!v)
        return -2;
    ++*i;
    if (!strcmp(a, "--cred"))
        return prove(fd, agent, NULL, 0) < 0 ? -1 : send_hello(fd, v);
    if (!strcmp(a, "--unproved-cred"))
        return send_hello(fd, v);
    if (!strcmp(a, "--prove"))
        return prove(fd, agent, strcmp(v, "-") ? v : NULL, 1);
    if (!strcmp(a, "--json"))
        return send_json(fd, v);
    if (!strcmp(a, "--json-file")) {
        text = tbm_read_file(v, TBM_FRAME_MAX, &len, &err);
        rc = text ? send_json(fd, text) : (fprintf(stderr, "wire_poke: %s\n", err.msg), -1);
        free(text);
        return rc;
    }
    if (!strcmp(a, "--raw"))
        return send_raw_hex(fd, v);
    return -2;
}

/* --hold N: the steps (from argv[first] on) on N connections one after another, each left open once its
 * answer came ("conn K facts", "conn K error CODE: MESSAGE"), then "conn K EOF" as the agent closes each. */
static int hold(const char *agent, int n, int argc, char **argv, int first)
{
    struct pollfd *p = calloc((size_t)n, sizeof(*p));
    tbm_err_t err = { { 0 } };
    tbm_msg_t m;
    char b[256];
    int k, i, open = 0;

    for (k = 0; p && k < n; k++) {
        p[k] = (struct pollfd){ .fd = wire_connect(agent, TBM_CONF_AGENT_PORT, &err), .events = POLLIN };
        tbm_fdec_free(&dec);
        tbm_fdec_init(&dec, TBM_FRAME_MAX, &err);
        for (i = first; p[k].fd >= 0 && i < argc && step(p[k].fd, agent, argc, argv, &i) == 0; i++)
            ;
        memset(&m, 0, sizeof(m));
        while (p[k].fd >= 0 && wire_next_msg(p[k].fd, &dec, &m, 10000, &err) > 0 && m.type == TBM_MSG_WELCOME)
            tbm_msg_free(&m);
        if (m.type == TBM_MSG_ERROR)
            printf("conn %d error %s: %s\n", k, m.code, m.message);
        else
            printf("conn %d %s\n", k, m.type ? tbm_msg_type_name(m.type) : "nothing");
        open += m.type != 0 && m.type != TBM_MSG_ERROR;
        if (m.type == 0 || m.type == TBM_MSG_ERROR)
            p[k].fd = -1;   /* kept open, not watched: it is over */
        tbm_msg_free(&m);
        fflush(stdout);
    }
    while (p && open > 0 && poll(p, (nfds_t)n, -1) > 0)
        for (k = 0; k < n; k++)
            if (p[k].revents && read(p[k].fd, b, sizeof(b)) <= 0) {
                printf("conn %d EOF\n", k);
                fflush(stdout);
                p[k].fd = -1;
                open--;
            }
    free(p);
    return 0;
}

/* --churn SECONDS K: for SECONDS, a connection after another, each sending a prove with a fresh nonce at once and
 * nothing more, the last K of them kept open (the oldest closed as the next opens); "churn: K open" once K are,
 * and at the end "churn: N connections opened, F failed". */
static int churn(const char *agent, int seconds, int k)
{
    int *ring = calloc((size_t)(k > 0 ? k : 1), sizeof(*ring)), i, fd, failed = 0;
    long long n = 0, end = tbm_now_ms() + 1000LL * seconds;
    unsigned char raw[TBM_NONCE_LEN / 2];
    char nonce[TBM_NONCE_LEN + 1];
    tbm_msg_t m = { .type = TBM_MSG_PROVE, .version = TBM_PROTO_VERSION, .nonce = nonce };
    tbm_err_t err = { { 0 } };

    if (!ring || k < 1)
        return free(ring), fprintf(stderr, "wire_poke: --churn needs SECONDS and K > 0\n"), 2;
    for (i = 0; i < k; i++)
        ring[i] = -1;
    for (i = 0; tbm_now_ms() < end; i = (i + 1) % k) {
        if (ring[i] >= 0)
            close(ring[i]);
        ring[i] = fd = wire_connect(agent, TBM_CONF_AGENT_PORT, &err);
        if (fd < 0 || getentropy(raw, sizeof(raw)) < 0) {
            failed++;
            continue;
        }
        tbm_nonce_format(raw, nonce);
        if (wire_send(fd, &m, &err) < 0)
            failed++;
        if (++n == k) {   /* for the caller to wait on: the flood is on */
            printf("churn: %d open\n", k);
            fflush(stdout);
        }
    }
    for (i = 0; i < k; i++)
        if (ring[i] >= 0)
            close(ring[i]);
    free(ring);
    printf("churn: %lld connections opened, %d failed\n", n, failed);
    return 0;
}

int main(int argc, char **argv)
{
    tbm_err_t err = { { 0 } };
    int fd, i, rc = 0, keep = 0, exec_fd = -1;

    if (argc > 3 && !strcmp(argv[2], "--hold"))
        return hold(argv[1], atoi(argv[3]), argc, argv, 4);
    if (argc == 5 && !strcmp(argv[2], "--churn"))
        return churn(argv[1], atoi(argv[3]), atoi(argv[4]));

    if (argc < 2) {
        fprintf(stderr, "usage: wire_poke ADDR:PORT [--hold N | --churn SECONDS K] [--keep] [--hello | --cred TEXT | --unproved-cred TEXT | --prove NONCE|- "
                "| --json TEXT | --json-file PATH | --raw HEX]... [--exec-fd N -- CMD...]\n"
                "  --hello, --cred: the agent's proof asked for and checked (as node $SLURMD_NODENAME, else testnode)\n"
                "  first; --unproved-cred: a hello without it; --prove: a prove only, its answer printed\n"
                "  --keep: stay connected (no half-close, no deadline) printing frames as they come\n"
                "  --exec-fd N -- CMD: run CMD with the connection as its descriptor N instead of reading it\n"
                "  --hold N (first): the steps on N connections, each held open once answered, one line each\n"
                "  --churn SECONDS K (alone): new connections for SECONDS, each sending a prove only, K kept open\n");
        return 2;
    }
    fd = wire_connect(argv[1], TBM_CONF_AGENT_PORT, &err);
    if (fd < 0 || tbm_fdec_init(&dec, TBM_FRAME_MAX, &err) < 0)
        return fprintf(stderr, "wire_poke: %s\n", err.msg), 1;
    for (i = 2; i < argc && rc == 0 && exec_fd < 0; i++) {
        if (!strcmp(argv[i], "--keep")) {
            keep = 1;
        } else if (!strcmp(argv[i], "--exec-fd") && i + 2 < argc && !strcmp(argv[i + 2], "--")) {
            exec_fd = atoi(argv[i + 1]);
            i += 2;
        } else if ((rc = step(fd, argv[1], argc, argv, &i)) == -2) {
            fprintf(stderr, "wire_poke: unknown argument '%s' (or its value is missing)\n", argv[i]);
            return 2;
        }
    }
    if (exec_fd >= 0 && rc == 0) {
        if (dup2(fd, exec_fd) < 0)
            return 1;
        execvp(argv[i], argv + i);
        return fprintf(stderr, "wire_poke: cannot run %s\n", argv[i]), 1;
    }
    if (!keep)
        shutdown(fd, SHUT_WR);   /* nothing more to ask: the agent ends the connection after its replies */
    print_replies(fd, keep);
    tbm_fdec_free(&dec);
    return rc < 0 ? 1 : 0;
}
