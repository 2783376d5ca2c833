/* impostor.c: what a local user of a Mac could put on the agent's port while macnoded is down, for the agent
 * tests: it takes one connection, keeps every byte the client sends in a file (so that the test can tell that
 * no credential came), and answers the client's prove with a proof of its own making: a MUNGE credential made
 * by whoever runs it (--as-me NODE: a proof's payload, this nonce, but not root's), or a proof frame caught
 * before (--replay FILE: a real agent's proof, for another nonce). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "fileio.h"
#include "wire.h"

/* Send the proof frame kept in file (its JSON on one line). */
static int replay(int fd, const char *file)
{
    tbm_err_t err = { { 0 } };
    tbm_frame_t fr = { .kind = TBM_FRAME_JSON };
    tbm_msg_t m;
    size_t len;
    char *text = tbm_read_file(file, TBM_FRAME_MAX, &len, &err);
    int rc = -1;

    if (text) {
        text[strcspn(text, "\n")] = '\0';
        fr.data = (const unsigned char *)text, fr.len = strlen(text);
        if (tbm_msg_parse(&fr, &m, &err) == 0) {
            rc = wire_send(fd, &m, &err);
            tbm_msg_free(&m);
        }
        free(text);
    }
    return rc < 0 ? fprintf(stderr, "impostor: %s\n", err.msg), -1 : 0;
}

/* Answer the prove in the first frame with a proof made as whoever runs this, for node. */
static int as_me(int fd, const tbm_frame_t *f, const char *node)
{
    tbm_msg_t prove, proof = { .type = TBM_MSG_PROOF, .version = TBM_PROTO_VERSION, .node = node };
    tbm_err_t err = { { 0 } };
    char *payload = NULL, *cred = NULL;
    int rc = -1;

    if (tbm_msg_parse(f, &prove, &err) < 0 || prove.type != TBM_MSG_PROVE)
        return fprintf(stderr, "impostor: the client's first frame is no prove: %s\n", err.msg), -1;
    if ((payload = tbm_proof_payload(node, prove.nonce, &err)) &&
        (cred = auth_encode(getenv("TBMESH_MUNGE_SOCKET"), payload, strlen(payload), 0, &err))) {
        proof.cred = cred;
        rc = wire_send(fd, &proof, &err);
    }
    free(payload);
    free(cred);
    tbm_msg_free(&prove);
    return rc < 0 ? fprintf(stderr, "impostor: %s\n", err.msg), -1 : 0;
}

int main(int argc, char **argv)
{
    tbm_err_t err = { { 0 } };
    tbm_fdec_t dec;
    tbm_frame_t f;
    FILE *rec;
    int lfd, fd;
    unsigned char buf[4096];
    ssize_t n;

    if (argc != 5 || (strcmp(argv[3], "--as-me") && strcmp(argv[3], "--replay"))) {
        fprintf(stderr, "usage: impostor ADDR:PORT RECORD-FILE --as-me NODE | --replay PROOF-FILE\n");
        return 2;
    }
    if ((lfd = wire_listen(argv[1], 0, &err)) < 0 || !(rec = fopen(argv[2], "w")))
        return fprintf(stderr, "impostor: %s\n", err.msg[0] ? err.msg : "cannot open the record"), 1;
    printf("listening\n");
    fflush(stdout);
    if ((fd = accept(lfd, NULL, NULL)) < 0 || tbm_fdec_init(&dec, TBM_FRAME_MAX, &err) < 0)
        return 1;
    if (wire_next_frame(fd, &dec, &f, 10000, &err) > 0) {
        fwrite(f.data, 1, f.len, rec);
        fputc('\n', rec);
        fwrite(dec.buf + dec.start, 1, tbm_fdec_pending(&dec), rec);   /* what came behind it */
        if (strcmp(argv[3], "--as-me") == 0)
            as_me(fd, &f, argv[4]);
        else
            replay(fd, argv[4]);
    }
    while ((n = read(fd, buf, sizeof(buf))) > 0)   /* whatever else the client sends, until it closes */
        fwrite(buf, 1, (size_t)n, rec);
    fclose(rec);
    close(fd);
    return 0;
}
