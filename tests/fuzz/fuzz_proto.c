/* fuzz_proto.c: libFuzzer harness of the wire codec (lib/proto.c, lib/proto_msg.c): bytes fed in pieces of
 * varying size to the frame decoder; every JSON frame parsed as a message, and every message that parses
 * must encode to a frame that decodes and encodes again to the same bytes. The input is also tried as a
 * grant payload. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

#define FUZZ_REQUIRE(cond) do { if (!(cond)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A parsed message encodes, and the encoding is a fixed point of parse + encode. */
static void check_message(const tbm_msg_t *m)
{
    tbm_err_t err;
    tbm_fdec_t d;
    tbm_frame_t f;
    tbm_msg_t back;
    size_t n1, n2;
    unsigned char *one = tbm_msg_encode(m, &n1, &err), *two;

    FUZZ_REQUIRE(one != NULL);
    FUZZ_REQUIRE(tbm_fdec_init(&d, TBM_FRAME_MAX, &err) == 0);
    FUZZ_REQUIRE(tbm_fdec_feed(&d, one, n1) == n1);
    FUZZ_REQUIRE(tbm_fdec_next(&d, &f, &err) == 1 && f.kind == TBM_FRAME_JSON);
    FUZZ_REQUIRE(tbm_msg_parse(&f, &back, &err) == 0 && back.type == m->type);
    two = tbm_msg_encode(&back, &n2, &err);
    FUZZ_REQUIRE(two != NULL && n1 == n2 && memcmp(one, two, n1) == 0);
    tbm_msg_free(&back);
    tbm_fdec_free(&d);
    free(one);
    free(two);
}

static void check_frame(const tbm_frame_t *f)
{
    tbm_msg_t m;
    tbm_err_t err;

    if (f->kind != TBM_FRAME_JSON) {
        FUZZ_REQUIRE(f->len <= TBM_DATA_MAX);
        return;
    }
    if (tbm_msg_parse(f, &m, &err) == 0) {
        check_message(&m);
        tbm_msg_free(&m);
    } else {
        FUZZ_REQUIRE(err.msg[0] != '\0' && m.doc == NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tbm_fdec_t d;
    tbm_frame_t f;
    tbm_err_t err;
    tbm_grant_t g;
    size_t at = 1, piece = size ? (size_t)data[0] % 17 + 1 : 1, took;
    int rc = 0;

    FUZZ_REQUIRE(tbm_fdec_init(&d, size && (data[0] & 0x80) ? TBM_HELLO_MAX : TBM_FRAME_MAX, &err) == 0);
    while (at < size && rc >= 0) {
        took = tbm_fdec_feed(&d, data + at, at + piece <= size ? piece : size - at);
        at += took;
        while ((rc = tbm_fdec_next(&d, &f, &err)) == 1)
            check_frame(&f);
        FUZZ_REQUIRE(rc == 0 || strncmp(err.msg, "frame error: ", 13) == 0);
        FUZZ_REQUIRE(took > 0 || rc < 0);
    }
    tbm_fdec_free(&d);
    if (tbm_grant_parse(data, size, &g, &err) == 0)
        FUZZ_REQUIRE(memchr(g.node, 0, sizeof(g.node)) != NULL && g.node[0] != '\0');
    else
        FUZZ_REQUIRE(strncmp(err.msg, "grant: ", 7) == 0);
    return 0;
}
