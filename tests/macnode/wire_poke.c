/* wire_poke.c: a test client of macnoded that sends exactly what it is told, in order (a fresh hello, a
 * given credential, JSON frames from the command line or a file, raw bytes), then prints every frame the agent sends until it closes
 * (--keep: without closing its own side first and without a deadline, as a watch client). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "conf.h"
#include "fileio.h"
#include "wire.h"

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

static int send_hello(int fd, const char *cred)
{
    tbm_msg_t m = { .type = TBM_MSG_HELLO, .version = TBM_PROTO_VERSION, .cred = cred };
    tbm_err_t err = { { 0 } };

    if (wire_send(fd, &m, &err) < 0)
        return fprintf(stderr, "wire_poke: %s\n", err.msg), -1;
    return 0;
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
    tbm_fdec_t d;
    tbm_frame_t f;
    tbm_err_t err = { { 0 } };
    int rc;

    tbm_fdec_init(&d, TBM_FRAME_MAX, &err);
    while ((rc = wire_next_frame(fd, &d, &f, keep ? -1 : 10000, &err)) > 0) {
        if (f.kind == TBM_FRAME_JSON)
            printf("%.*s\n", (int)f.len, (const char *)f.data);
        else
            printf("data %d: %.*s\n", (int)f.kind, (int)f.len, (const char *)f.data);
        if (keep)
            fflush(stdout);
    }
    printf(rc == 0 ? "EOF\n" : "ERROR %s\n", err.msg);
    tbm_fdec_free(&d);
}

int main(int argc, char **argv)
{
    tbm_err_t err = { { 0 } };
    const char *sock = getenv("TBMESH_MUNGE_SOCKET");
    char *cred;
    int fd, i, rc = 0, keep = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: wire_poke ADDR:PORT [--keep] [--hello | --cred TEXT | --json TEXT | --json-file PATH | --raw HEX]...\n"
                "  --keep: stay connected (no half-close, no deadline) printing frames as they come\n");
        return 2;
    }
    fd = wire_connect(argv[1], TBM_CONF_AGENT_PORT, &err);
    if (fd < 0)
        return fprintf(stderr, "wire_poke: %s\n", err.msg), 1;
    for (i = 2; i < argc && rc == 0; i++) {
        if (!strcmp(argv[i], "--keep")) {
            keep = 1;
        } else if (!strcmp(argv[i], "--hello")) {
            cred = auth_encode(sock, NULL, 0, 0, &err);
            rc = cred ? send_hello(fd, cred) : -1;
            free(cred);
        } else if (i + 1 < argc && !strcmp(argv[i], "--cred")) {
            rc = send_hello(fd, argv[++i]);
        } else if (i + 1 < argc && !strcmp(argv[i], "--json")) {
            rc = send_json(fd, argv[++i]);
        } else if (i + 1 < argc && !strcmp(argv[i], "--json-file")) {
            size_t len;
            char *text = tbm_read_file(argv[++i], TBM_FRAME_MAX, &len, &err);

            rc = text ? send_json(fd, text) : (fprintf(stderr, "wire_poke: %s\n", err.msg), -1);
            free(text);
        } else if (i + 1 < argc && !strcmp(argv[i], "--raw")) {
            rc = send_raw_hex(fd, argv[++i]);
        } else {
            fprintf(stderr, "wire_poke: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!keep)
        shutdown(fd, SHUT_WR);   /* nothing more to ask: the agent ends the connection after its replies */
    print_replies(fd, keep);
    return rc < 0 ? 1 : 0;
}
