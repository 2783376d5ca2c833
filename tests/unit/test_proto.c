/* test_proto.c: unit tests of lib/proto.c and lib/proto_msg.c: framing, the incremental decoder, every
 * message's round trip and every refusal message, grants and signal names. */
#include "tbm_check.h"

#include <signal.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

#include "proto.h"

/* A frame around text, in buf; returns its size. */
static size_t frame_of(const char *text, unsigned char *buf)
{
    size_t n = strlen(text);

    buf[0] = (unsigned char)(n >> 24), buf[1] = (unsigned char)(n >> 16);
    buf[2] = (unsigned char)(n >> 8), buf[3] = (unsigned char)n;
    memcpy(buf + 4, text, n);
    return n + 4;
}

/* Parse JSON text as a message; returns the error message ("" when it parsed). */
static const char *parse_error(const char *json)
{
    static tbm_err_t err;
    tbm_frame_t f = { TBM_FRAME_JSON, (const unsigned char *)json, strlen(json) };
    tbm_msg_t m;

    tbm_errclear(&err);
    if (tbm_msg_parse(&f, &m, &err) == 0)
        tbm_msg_free(&m);
    return err.msg;
}

/* Encode m, decode it again through the decoder (fed one byte at a time), return the parsed message. */
static void round_trip(const tbm_msg_t *m, tbm_msg_t *back)
{
    tbm_err_t err = { { 0 } };
    tbm_fdec_t d;
    tbm_frame_t f;
    size_t len, i;
    unsigned char *frame = tbm_msg_encode(m, &len, &err);

    ck_assert_msg(frame != NULL, "%s", err.msg);
    ck_assert_int_eq(tbm_fdec_init(&d, TBM_FRAME_MAX, &err), 0);
    for (i = 0; i + 1 < len; i++) {
        ck_assert_uint_eq(tbm_fdec_feed(&d, frame + i, 1), 1);
        ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 0);
    }
    tbm_fdec_feed(&d, frame + len - 1, 1);
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 1);
    ck_assert_int_eq(f.kind, TBM_FRAME_JSON);
    ck_assert_msg(tbm_msg_parse(&f, back, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(back->type, m->type);
    tbm_fdec_free(&d);
    free(frame);
}

START_TEST(decoder_splits_frames_across_feeds)
{
    unsigned char buf[256];
    tbm_fdec_t d;
    tbm_frame_t f;
    tbm_err_t err = { { 0 } };
    size_t n = frame_of("{\"type\":\"probe\"}", buf);

    tbm_data_header(buf + n, TBM_FRAME_STDOUT, 3);
    memcpy(buf + n + 5, "abc", 3);
    n += 8;
    tbm_data_header(buf + n, TBM_FRAME_STDIN, 0);
    n += 5;
    ck_assert_int_eq(tbm_fdec_init(&d, TBM_FRAME_MAX, &err), 0);
    tbm_fdec_feed(&d, buf, 10);
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 0);
    ck_assert_uint_eq(tbm_fdec_pending(&d), 10);
    tbm_fdec_feed(&d, buf + 10, n - 10);
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 1);
    ck_assert_int_eq(f.kind, TBM_FRAME_JSON);
    ck_assert_uint_eq(f.len, 16);
    ck_assert(memcmp(f.data, "{\"type\":\"probe\"}", 16) == 0);
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 1);
    ck_assert_int_eq(f.kind, TBM_FRAME_STDOUT);
    ck_assert_uint_eq(f.len, 3);
    ck_assert(memcmp(f.data, "abc", 3) == 0);
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 1);
    ck_assert_int_eq(f.kind, TBM_FRAME_STDIN);
    ck_assert_uint_eq(f.len, 0);
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 0);
    ck_assert_uint_eq(tbm_fdec_pending(&d), 0);
    tbm_fdec_free(&d);
}
END_TEST

static const char *decode_error(const unsigned char *bytes, size_t n, size_t limit)
{
    static tbm_err_t err;
    tbm_fdec_t d;
    tbm_frame_t f;
    int rc;

    tbm_errclear(&err);
    ck_assert_int_eq(tbm_fdec_init(&d, limit, &err), 0);
    tbm_fdec_feed(&d, bytes, n);
    rc = tbm_fdec_next(&d, &f, &err);
    ck_assert_int_eq(rc, -1);
    /* sticky */
    ck_assert_int_eq(tbm_fdec_next(&d, &f, NULL), -1);
    tbm_fdec_free(&d);
    return err.msg;
}

START_TEST(decoder_refuses_bad_frames)
{
    static const unsigned char empty[] = { 0, 0, 0, 0 }, huge[] = { 0x7f, 0xff, 0xff, 0xff, '{' },
                               garbage[] = { 0, 0, 0, 3, 'G', 'E', 'T' }, hello_big[] = { 0, 0, 0x10, 0x01, '{' };

    ck_assert_str_eq(decode_error(empty, 4, TBM_FRAME_MAX),
                     "frame error: empty frame (length 0); the peer does not speak this protocol");
    ck_assert_str_eq(decode_error(huge, 5, TBM_FRAME_MAX),
                     "frame error: frame of 2147483647 bytes exceeds the limit of 1048576 bytes; the peer does not "
                     "speak this protocol or sent too much at once");
    ck_assert_str_eq(decode_error(garbage, 7, TBM_FRAME_MAX),
                     "frame error: frame starts with byte 0x47, which is neither a JSON object nor a data frame; "
                     "the peer does not speak this protocol");
    ck_assert_str_eq(decode_error(hello_big, 5, TBM_HELLO_MAX),
                     "frame error: frame of 4097 bytes exceeds the limit of 4096 bytes; the peer does not speak "
                     "this protocol or sent too much at once");
}
END_TEST

START_TEST(decoder_reports_garbage_before_the_frame_is_whole)
{
    static const unsigned char partial[] = { 0, 0, 1, 0, 'X' };

    ck_assert(strstr(decode_error(partial, 5, TBM_FRAME_MAX), "byte 0x58") != NULL);
}
END_TEST

START_TEST(decoder_takes_a_maximal_data_frame_and_limits)
{
    tbm_fdec_t d;
    tbm_frame_t f;
    tbm_err_t err = { { 0 } };
    unsigned char hdr[5], *p;
    size_t room;

    ck_assert_int_eq(tbm_fdec_init(&d, TBM_FRAME_MAX, &err), 0);
    tbm_data_header(hdr, TBM_FRAME_STDERR, TBM_DATA_MAX + 100);   /* clamped */
    ck_assert_int_eq(hdr[0] << 24 | hdr[1] << 16 | hdr[2] << 8 | hdr[3], TBM_FRAME_MAX);
    tbm_fdec_feed(&d, hdr, 5);
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 0);   /* the header read: room for the whole frame */
    p = tbm_fdec_space(&d, &room);
    ck_assert_uint_eq(room, TBM_DATA_MAX);
    memset(p, 'z', room);
    tbm_fdec_commit(&d, room + 10);   /* over-commit is clamped */
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 1);
    ck_assert_uint_eq(f.len, TBM_DATA_MAX);
    ck_assert_int_eq(f.data[TBM_DATA_MAX - 1], 'z');
    ck_assert_uint_eq(tbm_fdec_feed(&d, "", 0), 0);
    tbm_fdec_set_limit(&d, 0);
    ck_assert_uint_eq(d.limit, 1);
    tbm_fdec_set_limit(&d, TBM_FRAME_MAX * 2);
    ck_assert_uint_eq(d.limit, TBM_FRAME_MAX);
    tbm_fdec_free(&d);
}
END_TEST

/* A decoder for a hello holds a hello, no more; after the hello it grows and keeps what came already. */
START_TEST(decoder_grows_after_the_hello)
{
    tbm_fdec_t d;
    tbm_frame_t f;
    tbm_err_t err = { { 0 } };
    unsigned char hdr[5];
    char *big = malloc(TBM_HELLO_MAX * 2);
    size_t room;

    ck_assert_int_eq(tbm_fdec_init(&d, TBM_HELLO_MAX, &err), 0);
    ck_assert_uint_eq(d.cap, TBM_FRAME_HDR + TBM_HELLO_MAX);
    tbm_fdec_space(&d, &room);
    ck_assert_uint_eq(room, TBM_FRAME_HDR + TBM_HELLO_MAX);
    tbm_data_header(hdr, TBM_FRAME_STDIN, TBM_HELLO_MAX * 2 - 1);
    memset(big, 'q', TBM_HELLO_MAX * 2);
    tbm_fdec_feed(&d, hdr, 5);
    tbm_fdec_feed(&d, big, 100);
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), -1);   /* over the hello's limit */
    tbm_fdec_free(&d);

    ck_assert_int_eq(tbm_fdec_init(&d, TBM_HELLO_MAX, &err), 0);
    tbm_fdec_feed(&d, hdr, 5);
    tbm_fdec_feed(&d, big, 100);
    tbm_fdec_set_limit(&d, TBM_FRAME_MAX);
    ck_assert_uint_eq(d.cap, TBM_FRAME_HDR + TBM_HELLO_MAX);   /* grown by the frame, not by the limit */
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 0);
    ck_assert_uint_ge(d.cap, TBM_FRAME_HDR + TBM_HELLO_MAX * 2 - 1);
    ck_assert_uint_le(d.cap, 2 * (TBM_FRAME_HDR + TBM_HELLO_MAX));   /* doubled */
    ck_assert_uint_eq(tbm_fdec_feed(&d, big + 100, TBM_HELLO_MAX * 2 - 100 - 1), TBM_HELLO_MAX * 2 - 100 - 1);
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 1);
    ck_assert_uint_eq(f.len, TBM_HELLO_MAX * 2 - 1);
    ck_assert_int_eq(f.data[0], 'q');
    tbm_fdec_free(&d);
    free(big);
}
END_TEST

/* A decoder of the largest limit starts at TBM_FDEC_START: small frames leave it so; a larger frame grows
 * it (doubling, at least to the frame), never beyond one frame of the limit; what came is kept. */
START_TEST(decoder_starts_small_and_grows_by_the_frame)
{
    tbm_fdec_t d;
    tbm_frame_t f;
    tbm_err_t err = { { 0 } };
    unsigned char hdr[5];
    char *big = malloc(TBM_FRAME_MAX);
    size_t i, sizes[] = { 10, TBM_FDEC_START - 1, TBM_FDEC_START + 1, 200 * 1024, TBM_DATA_MAX, 10 };
    size_t caps[] = { TBM_FRAME_HDR + TBM_FDEC_START, TBM_FRAME_HDR + TBM_FDEC_START,
                      2 * (TBM_FRAME_HDR + TBM_FDEC_START), 4 * (TBM_FRAME_HDR + TBM_FDEC_START),
                      TBM_FRAME_HDR + TBM_FRAME_MAX, TBM_FRAME_HDR + TBM_FRAME_MAX };

    ck_assert_ptr_nonnull(big);
    memset(big, 'm', TBM_FRAME_MAX);
    ck_assert_int_eq(tbm_fdec_init(&d, TBM_FRAME_MAX, &err), 0);
    ck_assert_uint_eq(d.cap, TBM_FRAME_HDR + TBM_FDEC_START);
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i], fed = 0, piece;

        ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 0);   /* nothing left: the buffer's start is free */
        tbm_data_header(hdr, TBM_FRAME_STDOUT, n);
        ck_assert_uint_eq(tbm_fdec_feed(&d, hdr, 5), 5);
        big[0] = (char)('a' + i);
        big[n - 1] = (char)('A' + i);
        while (fed < n) {   /* in pieces of whatever fits, as a socket would give them */
            ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 0);
            piece = tbm_fdec_feed(&d, big + fed, n - fed < 70000 ? n - fed : 70000);
            ck_assert_uint_gt(piece, 0);
            fed += piece;
        }
        ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 1);
        ck_assert_uint_eq(f.len, n);
        ck_assert_int_eq(f.data[0], 'a' + (int)i);
        ck_assert_int_eq(f.data[n - 1], 'A' + (int)i);
        ck_assert_uint_eq(d.cap, caps[i]);
        big[0] = big[n - 1] = 'm';
    }
    /* one over the limit is still refused, however large the buffer has grown */
    tbm_data_header(hdr, TBM_FRAME_STDOUT, 10);
    hdr[0] = 0, hdr[1] = 0x10, hdr[2] = 0, hdr[3] = 1;
    tbm_fdec_feed(&d, hdr, 5);
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "exceeds the limit"));
    tbm_fdec_free(&d);
    free(big);
}
END_TEST

START_TEST(spawn_round_trip)
{
    const char *argv[] = { "echo", "hi there" }, *env[] = { "PATH=/usr/bin", "A=b=c" };
    tbm_msg_t m = { .type = TBM_MSG_SPAWN, .grant = "MUNGE:x", .uid = 501, .argv = argv, .argc = 2, .env = env,
                    .envc = 2, .cwd = "/Users/alice", .pty = 1, .rows = 24, .cols = 80, .time_limit = 60 },
              b;

    round_trip(&m, &b);
    ck_assert_str_eq(b.grant, "MUNGE:x");
    ck_assert_uint_eq(b.uid, 501);
    ck_assert_uint_eq(b.argc, 2);
    ck_assert_str_eq(b.argv[1], "hi there");
    ck_assert_ptr_null(b.argv[2]);
    ck_assert_uint_eq(b.envc, 2);
    ck_assert_str_eq(b.env[1], "A=b=c");
    ck_assert_str_eq(b.cwd, "/Users/alice");
    ck_assert_int_eq(b.pty, 1);
    ck_assert_int_eq(b.rows, 24);
    ck_assert_int_eq(b.cols, 80);
    ck_assert_int_eq(b.time_limit, 60);
    tbm_msg_free(&b);
    ck_assert_ptr_null(b.doc);
}
END_TEST

START_TEST(spawn_with_files_round_trip)
{
    const char *argv[] = { "true" };
    tbm_msg_t m = { .type = TBM_MSG_SPAWN, .grant = "MUNGE:g", .argv = argv, .argc = 1, .cwd = "/", .n_files = 2 },
              b;

    m.files[0] = (tbm_jobfile_t){ "hostfile.json", "[[\"a\"]]\n", 8 };
    m.files[1] = (tbm_jobfile_t){ "devices.json", "", 0 };
    round_trip(&m, &b);
    ck_assert_int_eq(b.n_files, 2);
    ck_assert_str_eq(b.files[0].name, "hostfile.json");
    ck_assert_uint_eq(b.files[0].len, 8);
    ck_assert_str_eq(b.files[0].data, "[[\"a\"]]\n");
    ck_assert_str_eq(b.files[1].name, "devices.json");
    ck_assert_uint_eq(b.files[1].len, 0);
    tbm_msg_free(&b);
    m.n_files = 0;
    round_trip(&m, &b);
    ck_assert_int_eq(b.n_files, 0);
    tbm_msg_free(&b);
}
END_TEST

START_TEST(small_messages_round_trip)
{
    tbm_msg_t b, m;

    m = (tbm_msg_t){ .type = TBM_MSG_HELLO, .cred = "MUNGE:abc" };
    round_trip(&m, &b);
    ck_assert_str_eq(b.cred, "MUNGE:abc");
    ck_assert_int_eq(b.version, TBM_PROTO_VERSION);
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_WELCOME, .uid = 7, .node = "mac01" };
    round_trip(&m, &b);
    ck_assert_uint_eq(b.uid, 7);
    ck_assert_str_eq(b.node, "mac01");
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_SIGNAL, .signal = "USR1" };
    round_trip(&m, &b);
    ck_assert_str_eq(b.signal, "USR1");
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_RESIZE, .rows = 50, .cols = 132 };
    round_trip(&m, &b);
    ck_assert_int_eq(b.rows * 1000 + b.cols, 50132);
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_STARTED, .pid = 4242 };
    round_trip(&m, &b);
    ck_assert_int_eq(b.pid, 4242);
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_CLEANUP, .job = 4000000000u };
    round_trip(&m, &b);
    ck_assert_uint_eq(b.job, 4000000000u);
    ck_assert(b.job_uid == -1 && b.exclusive == 0);   /* no user named: nothing of the user's is swept */
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_CLEANUP, .job = 7, .job_uid = 501, .exclusive = 1 };
    round_trip(&m, &b);
    ck_assert(b.job == 7 && b.job_uid == 501 && b.exclusive == 1);
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_CLEANED, .job = 3, .killed = 2, .swept = 5 };
    round_trip(&m, &b);
    ck_assert_int_eq(b.killed, 2);
    ck_assert_int_eq(b.swept, 5);
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_PROVE, .nonce = "0123456789abcdef0123456789abcdef" };
    round_trip(&m, &b);
    ck_assert_str_eq(b.nonce, "0123456789abcdef0123456789abcdef");
    ck_assert_int_eq(b.version, TBM_PROTO_VERSION);
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_PROOF, .node = "mac01", .cred = "MUNGE:p" };
    round_trip(&m, &b);
    ck_assert(!strcmp(b.node, "mac01") && !strcmp(b.cred, "MUNGE:p") && b.version == TBM_PROTO_VERSION);
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_ERROR, .code = "grant", .message = "no grant" };
    round_trip(&m, &b);
    ck_assert_str_eq(b.code, "grant");
    ck_assert_str_eq(b.message, "no grant");
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_PROBE };
    round_trip(&m, &b);
    tbm_msg_free(&b);
}
END_TEST

START_TEST(exit_and_facts_round_trip)
{
    tbm_msg_t m = { .type = TBM_MSG_EXIT, .signal = "KILL", .core = 1, .rusage = { 1500, 20, 4096, 987654 } }, b;

    round_trip(&m, &b);
    ck_assert_str_eq(b.signal, "KILL");
    ck_assert_int_eq(b.status, 0);
    ck_assert_int_eq(b.core, 1);
    ck_assert_int_eq(b.rusage.utime_us, 1500);
    ck_assert_int_eq(b.rusage.stime_us, 20);
    ck_assert_int_eq(b.rusage.maxrss_kb, 4096);
    ck_assert_int_eq(b.rusage.wall_us, 987654);
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_EXIT, .status = 3 };
    round_trip(&m, &b);
    ck_assert_ptr_null(b.signal);
    ck_assert_int_eq(b.status, 3);
    tbm_msg_free(&b);

    m = (tbm_msg_t){ .type = TBM_MSG_FACTS, .facts = json_tokener_parse("{\"hostname\":\"mac01\"}") };
    round_trip(&m, &b);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(b.facts, "hostname")), "mac01");
    json_object_put(m.facts);
    tbm_msg_free(&b);
}
END_TEST

START_TEST(message_refusals)
{
    ck_assert_str_eq(parse_error("{\"type\":\"probe\""),
                     "message: invalid JSON at line 1 column 16: the text ends inside the document (truncated?)");
    ck_assert_str_eq(parse_error("[1]"), "message: invalid JSON: the document must be a JSON object");
    ck_assert_str_eq(parse_error("{} x"), "message: invalid JSON at line 1 column 4: unexpected character");
    ck_assert_str_eq(parse_error("{\"type\":\"probe\"}{}"),
                     "message: invalid JSON at line 1 column 17: unexpected character");
    ck_assert_str_eq(parse_error("{\"type\":\"probe\",\"type\":\"spawn\"}"),
                     "message: invalid JSON: a key appears twice in one object (which value counts would be a guess)");
    ck_assert_str_eq(parse_error("{\"type\":\"probe\",\"x\":\"\xff\"}"),
                     "message: invalid JSON at line 1 column 22: invalid utf-8 string");
    ck_assert_str_eq(parse_error("{\"type\":\"probe\"} \n"), "");
    ck_assert_str_eq(parse_error("{}"), "message: member 'type' is missing");
    ck_assert_str_eq(parse_error("{\"type\":5}"), "message: 'type' must be a string of 1 to 32 bytes without NUL");
    ck_assert_str_eq(parse_error("{\"type\":\"fork\"}"), "message: unknown type 'fork'; this side speaks protocol "
                                                         "version 4");
    ck_assert_str_eq(parse_error("{\"type\":\"probe\",\"a\":[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]}"),
                     "message: invalid JSON at line 1 column 36: nesting too deep");
    ck_assert_str_eq(parse_error("{\"type\":\"hello\",\"version\":5,\"cred\":\"c\"}"),
                     "hello: protocol version 5 is not spoken here (this side speaks 4); install the same "
                     "slurm-tbmesh release on the bridge and the Macs");
    ck_assert_str_eq(parse_error("{\"type\":\"hello\",\"version\":1}"), "hello: member 'cred' is missing");
    ck_assert_str_eq(parse_error("{\"type\":\"hello\",\"version\":\"1\",\"cred\":\"c\"}"),
                     "hello: 'version' must be an integer");
    ck_assert_str_eq(parse_error("{\"type\":\"hello\",\"version\":0,\"cred\":\"c\"}"),
                     "hello: 'version' is 0, outside 1..1000");
    ck_assert_str_eq(parse_error("{\"type\":\"hello\",\"version\":1,\"cred\":\"a\\u0000b\"}"),
                     "hello: 'cred' must be a string of 1 to 4096 bytes without NUL");
    ck_assert_str_eq(parse_error("{\"type\":\"welcome\",\"version\":1,\"uid\":-1,\"node\":\"m\"}"),
                     "welcome: 'uid' is -1, outside 0..4294967295");
    ck_assert_str_eq(parse_error("{\"type\":\"facts\",\"facts\":[]}"), "facts: member 'facts' must be a JSON object");
    ck_assert_str_eq(parse_error("{\"type\":\"prepare\"}"), "message: unknown type 'prepare'; this side speaks "
                                                            "protocol version 4");
    ck_assert_str_eq(parse_error("{\"type\":\"started\",\"pid\":0}"), "started: 'pid' is 0, outside 1..2147483647");
    ck_assert_str_eq(parse_error("{\"type\":\"signal\",\"signal\":\"SIGTERM\"}"),
                     "signal: unknown signal 'SIGTERM'; use a name like TERM, INT, HUP, USR1 (no SIG)");
    ck_assert_str_eq(parse_error("{\"type\":\"resize\",\"rows\":0,\"cols\":80}"), "resize: 'rows' is 0, outside 1..10000");
    ck_assert_str_eq(parse_error("{\"type\":\"cleanup\",\"job\":1.5}"), "cleanup: 'job' must be an integer");
    ck_assert_str_eq(parse_error("{\"type\":\"cleaned\",\"job\":1}"), "cleaned: member 'killed' is missing");
    ck_assert_str_eq(parse_error("{\"type\":\"cleanup\",\"job\":1,\"uid\":-1}"),
                     "cleanup: 'uid' is -1, outside 0..4294967294");
    ck_assert_str_eq(parse_error("{\"type\":\"cleanup\",\"job\":1,\"uid\":5,\"exclusive\":1}"),
                     "cleanup: 'exclusive' must be true or false");
    ck_assert_str_eq(parse_error("{\"type\":\"prove\",\"version\":3,\"nonce\":\"0123456789abcdef0123456789abcdef\"}"),
                     "prove: protocol version 3 is not spoken here (this side speaks 4); install the same "
                     "slurm-tbmesh release on the bridge and the Macs");
    ck_assert_str_eq(parse_error("{\"type\":\"prove\",\"version\":4,\"nonce\":\"0123456789ABCDEF0123456789abcdef\"}"),
                     "prove: 'nonce' must be 32 lowercase hex digits (16 random bytes)");
    ck_assert_str_eq(parse_error("{\"type\":\"prove\",\"version\":4,\"nonce\":\"0123\"}"),
                     "prove: 'nonce' must be 32 lowercase hex digits (16 random bytes)");
    ck_assert_str_eq(parse_error("{\"type\":\"prove\",\"version\":4}"), "prove: member 'nonce' is missing");
    ck_assert_str_eq(parse_error("{\"type\":\"proof\",\"version\":4,\"node\":\"mac01\"}"),
                     "proof: member 'cred' is missing");
    ck_assert_str_eq(parse_error("{\"type\":\"error\",\"code\":\"x\"}"), "error: member 'message' is missing");
}
END_TEST

START_TEST(data_frame_is_not_a_message)
{
    tbm_frame_t f = { TBM_FRAME_STDOUT, (const unsigned char *)"{}", 2 };
    tbm_err_t err = { { 0 } };
    tbm_msg_t m;

    ck_assert_int_eq(tbm_msg_parse(&f, &m, &err), -1);
    ck_assert_str_eq(err.msg, "message: a data frame came where a JSON message was expected");
    ck_assert_ptr_null(m.doc);
    f = (tbm_frame_t){ TBM_FRAME_JSON, (const unsigned char *)"", 0 };
    ck_assert_int_eq(tbm_msg_parse(&f, &m, &err), -1);
    ck_assert_str_eq(err.msg, "message: empty JSON text");
}
END_TEST

/* A spawn with the members given (each once: the reader refuses a key twice). */
#define SPAWN_OF(cwd, argv, env, rest) \
    "{\"type\":\"spawn\",\"uid\":1,\"cwd\":" cwd ",\"argv\":" argv ",\"env\":" env rest "}"
#define SPAWN(rest) SPAWN_OF("\"/\"", "[\"true\"]", "[]", rest)
#define SPAWN_ARGV(argv) SPAWN_OF("\"/\"", argv, "[]", "")
#define SPAWN_ENV(env) SPAWN_OF("\"/\"", "[\"true\"]", env, "")

START_TEST(spawn_refusals)
{
    ck_assert_str_eq(parse_error(SPAWN("")), "");
    ck_assert_str_eq(parse_error("{\"type\":\"spawn\",\"cwd\":\"/\"}"), "spawn: member 'uid' is missing");
    ck_assert_str_eq(parse_error(SPAWN_OF("\"tmp\"", "[\"true\"]", "[]", "")), "spawn: 'cwd' must be an absolute path, not 'tmp'");
    ck_assert_str_eq(parse_error(SPAWN_ARGV("[]")), "spawn: 'argv' must name a command in its first entry");
    ck_assert_str_eq(parse_error(SPAWN_ARGV("[\"\"]")), "spawn: 'argv' must name a command in its first entry");
    ck_assert_str_eq(parse_error(SPAWN_ARGV("\"true\"")), "spawn: 'argv' must be an array of strings");
    ck_assert_str_eq(parse_error(SPAWN_ARGV("[1]")), "spawn: 'argv' entry 0 must be a string without NUL");
    ck_assert_str_eq(parse_error(SPAWN_ENV("[\"=x\"]")),
                     "spawn: 'env' entry 0 must be a string without NUL of the form NAME=value");
    ck_assert_str_eq(parse_error(SPAWN_ENV("[\"NOVALUE\"]")),
                     "spawn: 'env' entry 0 must be a string without NUL of the form NAME=value");
    ck_assert_str_eq(parse_error(SPAWN(",\"pty\":1")), "spawn: 'pty' must be true or false");
    ck_assert_str_eq(parse_error(SPAWN(",\"cols\":10001")), "spawn: 'cols' is 10001, outside 0..10000");
    ck_assert_str_eq(parse_error(SPAWN(",\"time_limit\":-1")), "spawn: 'time_limit' is -1, outside 0..31622400");
    ck_assert_str_eq(parse_error("{\"type\":\"spawn\",\"uid\":1,\"cwd\":\"/\",\"env\":[]}"),
                     "spawn: member 'argv' is missing");
}
END_TEST

START_TEST(spawn_argv_count_is_bounded)
{
    char *json = malloc(TBM_ARGV_MAX * 4 + 200);
    size_t n = 0;
    int i;

    n += (size_t)sprintf(json, "{\"type\":\"spawn\",\"uid\":1,\"cwd\":\"/\",\"env\":[],\"argv\":[");
    for (i = 0; i <= TBM_ARGV_MAX; i++)
        n += (size_t)sprintf(json + n, "%s\"a\"", i ? "," : "");
    sprintf(json + n, "]}");
    ck_assert_str_eq(parse_error(json), "spawn: 'argv' has 4097 entries; at most 4096 are allowed");
    free(json);
}
END_TEST

#define EXIT_OF(status, rest) \
    "{\"type\":\"exit\",\"status\":" status ",\"rusage\":{\"utime_us\":0,\"stime_us\":0,\"maxrss_kb\":0,\"wall_us\":0}" \
    rest "}"
#define EXIT(rest) EXIT_OF("0", rest)

START_TEST(exit_refusals)
{
    ck_assert_str_eq(parse_error(EXIT("")), "");
    ck_assert_str_eq(parse_error(EXIT_OF("256", "")), "exit: 'status' is 256, outside 0..255");
    ck_assert_str_eq(parse_error(EXIT_OF("1", ",\"signal\":\"KILL\"")),
                     "exit: a task killed by signal KILL cannot also have exit status 1");
    ck_assert_str_eq(parse_error(EXIT(",\"signal\":\"NOPE\"")),
                     "exit: unknown signal 'NOPE'; use a name like TERM, INT, HUP, USR1 (no SIG)");
    ck_assert_str_eq(parse_error("{\"type\":\"exit\",\"status\":0}"), "exit: member 'rusage' must be an object");
    ck_assert_str_eq(parse_error("{\"type\":\"exit\",\"status\":0,\"rusage\":{\"utime_us\":0,\"stime_us\":-5}}"),
                     "exit rusage: 'stime_us' is -5, outside 0..9223372036854775807");
    ck_assert_str_eq(parse_error("{\"type\":\"exit\",\"status\":0,\"rusage\":{\"utime_us\":0,\"stime_us\":0}}"),
                     "exit rusage: member 'maxrss_kb' is missing");
    /* protocol 2: the wall time is part of every exit, a whole number of microseconds, never negative */
    ck_assert_str_eq(parse_error("{\"type\":\"exit\",\"status\":0,\"rusage\":{\"utime_us\":0,\"stime_us\":0,"
                                 "\"maxrss_kb\":0}}"),
                     "exit rusage: member 'wall_us' is missing");
    ck_assert_str_eq(parse_error("{\"type\":\"exit\",\"status\":0,\"rusage\":{\"utime_us\":0,\"stime_us\":0,"
                                 "\"maxrss_kb\":0,\"wall_us\":-1}}"),
                     "exit rusage: 'wall_us' is -1, outside 0..9223372036854775807");
    ck_assert_str_eq(parse_error("{\"type\":\"exit\",\"status\":0,\"rusage\":{\"utime_us\":0,\"stime_us\":0,"
                                 "\"maxrss_kb\":0,\"wall_us\":1.5}}"),
                     "exit rusage: 'wall_us' must be an integer");
    ck_assert_str_eq(parse_error("{\"type\":\"exit\",\"status\":0,\"rusage\":{\"utime_us\":0,\"stime_us\":0,"
                                 "\"maxrss_kb\":0,\"wall_us\":\"5\"}}"),
                     "exit rusage: 'wall_us' must be an integer");
}
END_TEST

static tbm_task_usage_t usage_of(uint32_t job, uint32_t step, int64_t task, const char *sig)
{
    tbm_task_usage_t u = { .job = job, .step = step, .task = task, .pid = 4242, .status = sig ? 0 : 3,
                           .core = 0, .rusage = { 1000000, 25000, 8192, 1300000 } };

    snprintf(u.signal, sizeof(u.signal), "%s", sig ? sig : "");
    return u;
}

START_TEST(usage_messages_round_trip)
{
    tbm_task_usage_t tasks[2] = { usage_of(7, 0, 0, NULL), usage_of(7, 0, -1, "KILL") };
    tbm_msg_t m = { .type = TBM_MSG_USAGE, .job = 7, .step = 4294967290u }, b;

    round_trip(&m, &b);
    ck_assert_uint_eq(b.job, 7);
    ck_assert_uint_eq(b.step, 4294967290u);
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_USED, .job = 7, .step = 0, .running = 1, .tasks = tasks, .n_tasks = 2 };
    round_trip(&m, &b);
    ck_assert_int_eq(b.running, 1);
    ck_assert_uint_eq(b.n_tasks, 2);
    ck_assert_int_eq(b.tasks[0].task, 0);
    ck_assert_int_eq(b.tasks[0].status, 3);
    ck_assert_str_eq(b.tasks[0].signal, "");
    ck_assert_int_eq(b.tasks[0].rusage.utime_us, 1000000);
    ck_assert_int_eq(b.tasks[0].rusage.wall_us, 1300000);
    ck_assert_int_eq(b.tasks[1].task, -1);
    ck_assert_str_eq(b.tasks[1].signal, "KILL");
    ck_assert_int_eq(b.tasks[1].pid, 4242);
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_USED, .job = 7, .step = 1 };
    round_trip(&m, &b);
    ck_assert_uint_eq(b.n_tasks, 0);
    ck_assert_ptr_null(b.tasks);
    tbm_msg_free(&b);
}
END_TEST

#define TASK_OF(job, rest) \
    "{\"job\":" job ",\"step\":0,\"task\":0,\"pid\":9,\"status\":0,\"core\":false,\"rusage\":{\"utime_us\":1," \
    "\"stime_us\":2,\"maxrss_kb\":3,\"wall_us\":4}" rest "}"
#define USED(tasks) "{\"type\":\"used\",\"job\":7,\"step\":0,\"running\":0,\"tasks\":[" tasks "]}"

START_TEST(usage_message_refusals)
{
    tbm_msg_t m;
    size_t len;
    tbm_err_t err = { { 0 } };
    unsigned char *frame;

    ck_assert_str_eq(parse_error(USED(TASK_OF("7", ""))), "");
    ck_assert_str_eq(parse_error("{\"type\":\"usage\",\"job\":7}"), "usage: member 'step' is missing");
    ck_assert_str_eq(parse_error("{\"type\":\"usage\",\"job\":-7,\"step\":0}"),
                     "usage: 'job' is -7, outside 0..4294967295");
    ck_assert_str_eq(parse_error("{\"type\":\"used\",\"job\":7,\"step\":0,\"tasks\":[]}"),
                     "used: member 'running' is missing");
    ck_assert_str_eq(parse_error("{\"type\":\"used\",\"job\":7,\"step\":0,\"running\":0,\"tasks\":{}}"),
                     "used: member 'tasks' must be an array of task usages");
    ck_assert_str_eq(parse_error(USED("[]")), "used: tasks[0]: a task usage must be a JSON object");
    ck_assert_str_eq(parse_error(USED(TASK_OF("8", ""))),
                     "used: tasks[0] is of job 8 step 0, not of job 7 step 0 as asked");
    ck_assert_str_eq(parse_error(USED(TASK_OF("7", "") "," TASK_OF("7", ",\"signal\":\"TERM\""))), "");
    ck_assert_str_eq(parse_error(USED(TASK_OF("7", "") "," TASK_OF("7", ",\"signal\":\"SIGTERM\""))),
                     "used: tasks[1]: unknown signal 'SIGTERM'; use a name like TERM, INT, HUP, USR1 (no SIG)");
    ck_assert_str_eq(parse_error(USED("{\"job\":7,\"step\":0,\"task\":-2,\"pid\":9}")),
                     "used: tasks[0]: 'task' is -2, outside -1..2147483647");
    ck_assert_str_eq(parse_error(USED("{\"job\":7,\"step\":0,\"task\":0,\"pid\":0}")),
                     "used: tasks[0]: 'pid' is 0, outside 1..2147483647");
    ck_assert_str_eq(parse_error(USED("{\"job\":7,\"step\":0,\"task\":0,\"pid\":9,\"status\":0,\"rusage\":"
                                      "{\"utime_us\":1,\"stime_us\":2,\"maxrss_kb\":3}}")),
                     "used: tasks[0] rusage: member 'wall_us' is missing");
    /* the encoder refuses what the parser would refuse */
    {
        tbm_task_usage_t t = usage_of(7, 0, 0, NULL);
        t.rusage.wall_us = -3;
        m = (tbm_msg_t){ .type = TBM_MSG_USED, .job = 7, .step = 0, .tasks = &t, .n_tasks = 1 };
        frame = tbm_msg_encode(&m, &len, &err);
        ck_assert_ptr_null(frame);
        ck_assert_str_eq(err.msg, "used: tasks[0] rusage: 'wall_us' is -3, outside 0..9223372036854775807");
    }
}
END_TEST

/* The Mac's GPU and energy while a task ran: optional members of "rusage", in the exit and in each task of a
 * used message; each reported or not (then its why), never a 0 standing for "not known". */
START_TEST(gpu_and_energy_round_trip)
{
    tbm_msg_t m = { .type = TBM_MSG_EXIT, .status = 0 }, b;
    tbm_task_usage_t tasks[2] = { usage_of(7, 0, 0, NULL), usage_of(7, 0, 1, NULL) };
    json_object *o;

    m.rusage = (tbm_rusage_t){ .utime_us = 1, .wall_us = 60000000, .gpu_samples = 6, .gpu_mean = 0.42345678,
                               .gpu_peak = 0.97, .power_samples = 6, .energy_j = 1234.5678 };
    round_trip(&m, &b);
    ck_assert_int_eq(b.rusage.gpu_samples, 6);
    ck_assert_double_eq_tol(b.rusage.gpu_mean, 0.4235, 1e-12);   /* four decimals travel */
    ck_assert_double_eq_tol(b.rusage.gpu_peak, 0.97, 1e-12);
    ck_assert_int_eq(b.rusage.power_samples, 6);
    ck_assert_double_eq_tol(b.rusage.energy_j, 1234.6, 1e-9);    /* a tenth of a joule */
    ck_assert_int_eq(b.rusage.gpu_why, TBM_METER_SAID_NOTHING);
    ck_assert_int_eq(b.rusage.energy_why, TBM_METER_SAID_NOTHING);
    tbm_msg_free(&b);
    /* the GPU reported, the energy not (a Mac without powermetrics' figures) */
    m.rusage = (tbm_rusage_t){ .gpu_samples = 1, .gpu_mean = 0, .gpu_peak = 0, .energy_why = TBM_METER_NO_SAMPLES };
    round_trip(&m, &b);
    ck_assert_int_eq(b.rusage.gpu_samples, 1);
    ck_assert_double_eq(b.rusage.gpu_mean, 0);                   /* an idle GPU is reported as 0: it was measured */
    ck_assert_int_eq(b.rusage.power_samples, 0);
    ck_assert_int_eq(b.rusage.energy_why, TBM_METER_NO_SAMPLES);
    tbm_msg_free(&b);
    /* neither, each with why */
    m.rusage = (tbm_rusage_t){ .gpu_why = TBM_METER_SHORT, .energy_why = TBM_METER_SHORT };
    round_trip(&m, &b);
    ck_assert(b.rusage.gpu_samples == 0 && b.rusage.power_samples == 0);
    ck_assert(b.rusage.gpu_why == TBM_METER_SHORT && b.rusage.energy_why == TBM_METER_SHORT);
    tbm_msg_free(&b);
    /* in a used message, per task; the kept usage file is the same object */
    tasks[0].rusage.gpu_samples = 3, tasks[0].rusage.gpu_mean = 0.5, tasks[0].rusage.gpu_peak = 0.75;
    tasks[0].rusage.power_samples = 3, tasks[0].rusage.energy_j = 90;
    tasks[1].rusage.gpu_why = TBM_METER_OFF, tasks[1].rusage.energy_why = TBM_METER_OFF;
    m = (tbm_msg_t){ .type = TBM_MSG_USED, .job = 7, .step = 0, .tasks = tasks, .n_tasks = 2 };
    round_trip(&m, &b);
    ck_assert_double_eq(b.tasks[0].rusage.gpu_mean, 0.5);
    ck_assert_double_eq(b.tasks[0].rusage.gpu_peak, 0.75);
    ck_assert_double_eq(b.tasks[0].rusage.energy_j, 90);
    ck_assert_int_eq(b.tasks[1].rusage.gpu_why, TBM_METER_OFF);
    ck_assert_int_eq(b.tasks[1].rusage.energy_why, TBM_METER_OFF);
    tbm_msg_free(&b);
    o = tbm_task_usage_json(&tasks[1]);
    ck_assert_str_eq(json_object_to_json_string_ext(json_object_object_get(o, "rusage"), JSON_C_TO_STRING_PLAIN),
                     "{\"utime_us\":1000000,\"stime_us\":25000,\"maxrss_kb\":8192,\"wall_us\":1300000,"
                     "\"gpu_why\":\"metrics-off\",\"energy_why\":\"metrics-off\"}");
    json_object_put(o);
    /* an agent older than the figures sends none of them: not reported, and no why */
    ck_assert_str_eq(parse_error(EXIT("")), "");
    {
        tbm_frame_t f = { TBM_FRAME_JSON, (const unsigned char *)EXIT(""), strlen(EXIT("")) };
        tbm_err_t err = { { 0 } };
        ck_assert_int_eq(tbm_msg_parse(&f, &b, &err), 0);
        ck_assert(b.rusage.gpu_samples == 0 && b.rusage.power_samples == 0);
        ck_assert(b.rusage.gpu_why == TBM_METER_SAID_NOTHING && b.rusage.energy_why == TBM_METER_SAID_NOTHING);
        tbm_msg_free(&b);
    }
    ck_assert_str_eq(tbm_meter_why_name(TBM_METER_NO_RING), "no-ring");
    ck_assert_str_eq(tbm_meter_why_name(0), "");
    ck_assert_str_eq(tbm_meter_why_name(99), "");
    ck_assert_int_eq(tbm_meter_why_parse("no-samples"), TBM_METER_NO_SAMPLES);
    ck_assert_int_eq(tbm_meter_why_parse(""), -1);
    ck_assert_int_eq(tbm_meter_why_parse(NULL), -1);
}
END_TEST

#define RU(rest) \
    "{\"type\":\"exit\",\"status\":0,\"rusage\":{\"utime_us\":0,\"stime_us\":0,\"maxrss_kb\":0,\"wall_us\":0" rest "}}"
#define GPU3(mean, peak) ",\"gpu_samples\":2,\"gpu_mean\":" mean ",\"gpu_peak\":" peak

START_TEST(gpu_and_energy_refusals)
{
    tbm_msg_t m = { .type = TBM_MSG_EXIT };
    tbm_err_t err = { { 0 } };
    size_t len;

    ck_assert_str_eq(parse_error(RU(GPU3("0.5", "1") ",\"power_samples\":2,\"energy_j\":0")), "");
    ck_assert_str_eq(parse_error(RU(GPU3("0", "1.0"))), "");
    ck_assert_str_eq(parse_error(RU(GPU3("-0.1", "0.5"))),
                     "exit rusage: 'gpu_mean' must be a number from 0 to 1, not -0.1");
    ck_assert_str_eq(parse_error(RU(GPU3("0.5", "1.5"))),
                     "exit rusage: 'gpu_peak' must be a number from 0 to 1, not 1.5");
    ck_assert_str_eq(parse_error(RU(GPU3("\"0.5\"", "1"))),
                     "exit rusage: 'gpu_mean' must be a number from 0 to 1, not a string");
    ck_assert_str_eq(parse_error(RU(GPU3("null", "1"))),
                     "exit rusage: 'gpu_mean' must be a number from 0 to 1, not null");
    ck_assert_str_eq(parse_error(RU(GPU3("0.9", "0.5"))),
                     "exit rusage: 'gpu_mean' 0.9000 is above 'gpu_peak' 0.5000; a mean is never above the largest "
                     "value");
    ck_assert_str_eq(parse_error(RU(",\"gpu_mean\":0.5,\"gpu_peak\":0.5")),
                     "exit rusage: 'gpu_samples' is missing ('gpu_samples', 'gpu_mean' and 'gpu_peak' go together, "
                     "or none of them)");
    ck_assert_str_eq(parse_error(RU(",\"gpu_samples\":3,\"gpu_mean\":0.5")),
                     "exit rusage: 'gpu_peak' is missing ('gpu_samples', 'gpu_mean' and 'gpu_peak' go together, or "
                     "none of them)");
    ck_assert_str_eq(parse_error(RU(",\"gpu_samples\":0,\"gpu_mean\":0,\"gpu_peak\":0")),
                     "exit rusage: 'gpu_samples' is 0, outside 1..2147483647");
    ck_assert_str_eq(parse_error(RU(",\"gpu_samples\":1.5,\"gpu_mean\":0,\"gpu_peak\":0")),
                     "exit rusage: 'gpu_samples' must be an integer");
    ck_assert_str_eq(parse_error(RU(",\"energy_j\":12")),
                     "exit rusage: 'power_samples' is missing ('power_samples' and 'energy_j' go together, or none "
                     "of them)");
    ck_assert_str_eq(parse_error(RU(",\"power_samples\":1,\"energy_j\":-1")),
                     "exit rusage: 'energy_j' must be a number of joules from 0 to 1e12, not -1");
    ck_assert_str_eq(parse_error(RU(",\"power_samples\":1,\"energy_j\":1e13")),
                     "exit rusage: 'energy_j' must be a number of joules from 0 to 1e12, not 1e13");
    ck_assert_str_eq(parse_error(RU(",\"power_samples\":1,\"energy_j\":true")),
                     "exit rusage: 'energy_j' must be a number of joules from 0 to 1e12, not a boolean");
    /* NaN and Infinity are no JSON: the reader refuses the frame before any member is looked at */
    ck_assert_ptr_nonnull(strstr(parse_error(RU(",\"power_samples\":1,\"energy_j\":NaN")), "NaN or Infinity"));
    ck_assert_str_eq(parse_error(RU(",\"power_samples\":1,\"energy_j\":1e999")),   /* read as infinite */
                     "exit rusage: 'energy_j' must be a number of joules from 0 to 1e12, not 1e999");
    ck_assert_str_eq(parse_error(RU(",\"gpu_why\":\"busy\"")),
                     "exit rusage: 'gpu_why' is 'busy', not one of metrics-off, no-ring, short, no-samples");
    ck_assert_str_eq(parse_error(RU(",\"energy_why\":7")), "exit rusage: 'energy_why' must be a string of 1 to 32 bytes without NUL");
    ck_assert_str_eq(parse_error(RU(GPU3("0.5", "0.5") ",\"gpu_why\":\"short\"")),
                     "exit rusage: 'gpu_why' comes with the figures it says are missing; send one or the other");
    ck_assert_str_eq(parse_error(USED(TASK_OF("7", "") "," "{\"job\":7,\"step\":0,\"task\":1,\"pid\":9,\"status\":0,"
                                      "\"rusage\":{\"utime_us\":1,\"stime_us\":2,\"maxrss_kb\":3,\"wall_us\":4,"
                                      "\"gpu_samples\":1,\"gpu_mean\":2,\"gpu_peak\":2}}")),
                     "used: tasks[1] rusage: 'gpu_mean' must be a number from 0 to 1, not 2");
    /* the encoder refuses what the parser would refuse: garbage in the agent's own figures is never sent */
    m.rusage = (tbm_rusage_t){ .gpu_samples = 1, .gpu_mean = NAN, .gpu_peak = 0.5 };
    ck_assert_ptr_null(tbm_msg_encode(&m, &len, &err));
    m.rusage = (tbm_rusage_t){ .gpu_samples = 1, .gpu_mean = 0.5, .gpu_peak = 1.5 };
    ck_assert_ptr_null(tbm_msg_encode(&m, &len, &err));
    ck_assert_str_eq(err.msg, "exit rusage: 'gpu_peak' must be a number from 0 to 1, not 1.5000");
    m.rusage = (tbm_rusage_t){ .power_samples = 1, .energy_j = -3 };
    ck_assert_ptr_null(tbm_msg_encode(&m, &len, &err));
    ck_assert_str_eq(err.msg, "exit rusage: 'energy_j' must be a number of joules from 0 to 1e12, not -3.0");
}
END_TEST

/* The hello and a request in one buffer: two whole frames, the hello first; a request that cannot be encoded
 * gives nothing and says why. */
START_TEST(hello_and_request_go_in_one_buffer)
{
    tbm_msg_t req = { .type = TBM_MSG_USAGE, .job = 7, .step = 2 }, bad = { .type = (tbm_msg_type_t)99 }, m;
    tbm_err_t err = { { 0 } };
    tbm_fdec_t d;
    tbm_frame_t f;
    size_t len = 0, alone = 0;
    unsigned char *both = tbm_msg_encode_hello("CRED", &req, &len, &err), *one;

    ck_assert_msg(both != NULL, "%s", err.msg);
    one = tbm_msg_encode_hello("CRED", NULL, &alone, &err);
    ck_assert_ptr_nonnull(one);
    ck_assert_uint_lt(alone, len);
    ck_assert_int_eq(memcmp(one, both, alone), 0);
    ck_assert_int_eq(tbm_fdec_init(&d, TBM_FRAME_MAX, &err), 0);
    ck_assert_uint_eq(tbm_fdec_feed(&d, both, len), len);
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 1);
    ck_assert_int_eq(tbm_msg_parse(&f, &m, &err), 0);
    ck_assert_int_eq(m.type, TBM_MSG_HELLO);
    ck_assert_int_eq(m.version, TBM_PROTO_VERSION);
    ck_assert_str_eq(m.cred, "CRED");
    tbm_msg_free(&m);
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 1);
    ck_assert_int_eq(tbm_msg_parse(&f, &m, &err), 0);
    ck_assert_int_eq(m.type, TBM_MSG_USAGE);
    ck_assert_uint_eq(m.job, 7);
    ck_assert_uint_eq(m.step, 2);
    tbm_msg_free(&m);
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 0);
    tbm_fdec_free(&d);
    free(both);
    free(one);
    ck_assert_ptr_null(tbm_msg_encode_hello("CRED", &bad, &len, &err));
    ck_assert_str_eq(err.msg, "message: type 99 is not a message type");
}
END_TEST

START_TEST(decoder_says_when_one_whole_frame_is_all_it_holds)
{
    tbm_msg_t req = { .type = TBM_MSG_USAGE, .job = 7, .step = 2 }, m;
    tbm_err_t err = { { 0 } };
    tbm_fdec_t d;
    tbm_frame_t f, g;
    size_t len = 0, alone = 0;
    unsigned char *both = tbm_msg_encode_hello("CRED", &req, &len, &err), *one, big[5];

    one = tbm_msg_encode_hello("CRED", NULL, &alone, &err);
    ck_assert_ptr_nonnull(both);
    ck_assert_ptr_nonnull(one);
    ck_assert_int_eq(tbm_fdec_init(&d, TBM_HELLO_MAX, &err), 0);
    ck_assert_int_eq(tbm_fdec_only(&d, &f), 0);                      /* nothing */
    tbm_fdec_feed(&d, both, len - 1);
    ck_assert_int_eq(tbm_fdec_only(&d, &f), 0);                      /* the hello and part of the request */
    ck_assert_int_eq(tbm_fdec_next(&d, &g, &err), 1);                 /* the hello */
    ck_assert_int_eq(tbm_fdec_only(&d, &f), 0);                      /* the request, but for its last byte */
    tbm_fdec_feed(&d, both + len - 1, 1);
    ck_assert_int_eq(tbm_fdec_only(&d, &f), 1);                      /* the request, whole and alone */
    ck_assert_int_eq(tbm_fdec_only(&d, &g), 1);                      /* ... still there */
    ck_assert_int_eq(tbm_msg_parse(&f, &m, &err), 0);
    ck_assert_int_eq(m.type, TBM_MSG_USAGE);
    tbm_msg_free(&m);
    tbm_fdec_feed(&d, "x", 1);
    ck_assert_int_eq(tbm_fdec_only(&d, &f), 0);                      /* more behind it */
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), 1);                 /* the request, as before */
    ck_assert_int_eq(tbm_msg_parse(&f, &m, &err), 0);
    ck_assert_int_eq(m.type, TBM_MSG_USAGE);
    tbm_msg_free(&m);
    tbm_fdec_free(&d);

    /* a frame over the limit is not whole, and the peek leaves the error to tbm_fdec_next */
    ck_assert_int_eq(tbm_fdec_init(&d, TBM_HELLO_MAX, &err), 0);
    tbm_data_header(big, TBM_FRAME_STDIN, TBM_HELLO_MAX + 10);
    tbm_fdec_feed(&d, big, 5);
    tbm_fdec_feed(&d, "abc", 3);
    ck_assert_int_eq(tbm_fdec_only(&d, &f), 0);
    ck_assert_int_eq(d.failed, 0);
    ck_assert_int_eq(tbm_fdec_next(&d, &f, &err), -1);
    ck_assert_int_eq(tbm_fdec_only(&d, &f), 0);
    tbm_fdec_free(&d);
    /* an unknown kind byte, and an empty frame */
    ck_assert_int_eq(tbm_fdec_init(&d, TBM_HELLO_MAX, &err), 0);
    tbm_fdec_feed(&d, "\0\0\0\2zz", 6);
    ck_assert_int_eq(tbm_fdec_only(&d, &f), 0);
    tbm_fdec_free(&d);
    ck_assert_int_eq(tbm_fdec_init(&d, TBM_HELLO_MAX, &err), 0);
    tbm_fdec_feed(&d, "\0\0\0\0{", 5);
    ck_assert_int_eq(tbm_fdec_only(&d, &f), 0);
    tbm_fdec_free(&d);
    free(both);
    free(one);
}
END_TEST

START_TEST(used_task_count_is_bounded)
{
    tbm_task_usage_t *t = calloc(TBM_USAGE_TASKS_MAX + 1, sizeof(*t));
    tbm_msg_t m = { .type = TBM_MSG_USED, .job = 7, .step = 0, .tasks = t, .n_tasks = TBM_USAGE_TASKS_MAX + 1 }, b;
    tbm_err_t err = { { 0 } };
    size_t i, len;

    for (i = 0; i <= TBM_USAGE_TASKS_MAX; i++)
        t[i] = usage_of(7, 0, (int64_t)i, NULL);
    ck_assert_ptr_null(tbm_msg_encode(&m, &len, &err));
    ck_assert_str_eq(err.msg, "used: 'tasks' has 1025 entries; at most 1024 are allowed");
    m.n_tasks = TBM_USAGE_TASKS_MAX;
    round_trip(&m, &b);
    ck_assert_uint_eq(b.n_tasks, TBM_USAGE_TASKS_MAX);
    ck_assert_int_eq(b.tasks[TBM_USAGE_TASKS_MAX - 1].task, TBM_USAGE_TASKS_MAX - 1);
    tbm_msg_free(&b);
    free(t);
}
END_TEST

START_TEST(hello_of_protocol_1_is_refused)
{
    ck_assert_str_eq(parse_error("{\"type\":\"hello\",\"version\":1,\"cred\":\"MUNGE:x\"}"),
                     "hello: protocol version 1 is not spoken here (this side speaks 4); install the same "
                     "slurm-tbmesh release on the bridge and the Macs");
    /* 2's agents took a hello's grant for root's hello, and then refused its spawn as a replay */
    ck_assert_str_eq(parse_error("{\"type\":\"hello\",\"version\":2,\"cred\":\"MUNGE:x\"}"),
                     "hello: protocol version 2 is not spoken here (this side speaks 4); install the same "
                     "slurm-tbmesh release on the bridge and the Macs");
}
END_TEST

#define SPAWN_FILES(files) "{\"type\":\"spawn\",\"uid\":1,\"argv\":[\"a\"],\"env\":[],\"cwd\":\"/\",\"files\":" files "}"

START_TEST(spawn_file_refusals)
{
    char name65[80], *big, *text;

    ck_assert_str_eq(parse_error(SPAWN_FILES("{}")), "");
    ck_assert_str_eq(parse_error(SPAWN_FILES("{\"hostfile.json\":\"[]\",\"a-b_c.1\":\"\"}")), "");
    ck_assert_str_eq(parse_error(SPAWN_FILES("[]")), "spawn: the job's files must be a JSON object mapping each "
                                                      "file's name to its text");
    ck_assert_str_eq(parse_error(SPAWN_FILES("{\"../etc/passwd\":\"\"}")),
                     "spawn: job file name '../etc/passwd' must be 1 to 64 letters, digits, '.', '-' or '_', not "
                     "start with '.' and name no folder");
    ck_assert_str_eq(parse_error(SPAWN_FILES("{\".hidden\":\"\"}")),
                     "spawn: job file name '.hidden' must be 1 to 64 letters, digits, '.', '-' or '_', not start "
                     "with '.' and name no folder");
    ck_assert_str_eq(parse_error(SPAWN_FILES("{\"\":\"\"}")),
                     "spawn: job file name '' must be 1 to 64 letters, digits, '.', '-' or '_', not start with '.' "
                     "and name no folder");
    memset(name65, 'n', 65);
    name65[65] = '\0';
    ck_assert_int_eq(tbm_job_file_name_ok(name65), 0);
    name65[64] = '\0';
    ck_assert_int_eq(tbm_job_file_name_ok(name65), 1);
    ck_assert_int_eq(tbm_job_file_name_ok("a b"), 0);
    ck_assert_str_eq(parse_error(SPAWN_FILES("{\"a\":5}")), "spawn: job file 'a' must be text (a JSON string "
                                                            "without NUL)");
    ck_assert_str_eq(parse_error(SPAWN_FILES("{\"a\":\"x\\u0000y\"}")),
                     "spawn: job file 'a' must be text (a JSON string without NUL)");
    ck_assert_str_eq(parse_error(SPAWN_FILES("{\"a\":\"1\",\"a\":\"2\"}")),
                     "message: invalid JSON: a key appears twice in one object (which value counts would be a guess)");
    ck_assert_str_eq(parse_error(SPAWN_FILES("{\"a\":\"\",\"b\":\"\",\"c\":\"\",\"d\":\"\",\"e\":\"\",\"f\":\"\",\"g\":\"\","
                                             "\"h\":\"\",\"i\":\"\",\"j\":\"\",\"k\":\"\",\"l\":\"\",\"m\":\"\",\"n\":\"\","
                                             "\"o\":\"\",\"p\":\"\",\"q\":\"\"}")),
                     "spawn: 17 job files; at most 16 are allowed");
    /* one byte over the size of a file */
    big = malloc(TBM_FILE_DATA_MAX + 2);
    text = malloc(TBM_FILE_DATA_MAX + 200);
    memset(big, 'a', TBM_FILE_DATA_MAX + 1);
    big[TBM_FILE_DATA_MAX + 1] = '\0';
    snprintf(text, TBM_FILE_DATA_MAX + 200, SPAWN_FILES("{\"big\":\"%s\"}"), big);
    ck_assert_str_eq(parse_error(text), "spawn: job file 'big' has 262145 bytes; at most 262144 are allowed");
    big[TBM_FILE_DATA_MAX] = '\0';
    snprintf(text, TBM_FILE_DATA_MAX + 200, SPAWN_FILES("{\"big\":\"%s\"}"), big);
    ck_assert_str_eq(parse_error(text), "");
    free(text);
    free(big);
}
END_TEST

START_TEST(encode_refusals)
{
    tbm_err_t err = { { 0 } };
    size_t len;
    tbm_msg_t m = { .type = TBM_MSG_SIGNAL, .signal = "BOGUS" };
    char *big = malloc(TBM_FILE_DATA_MAX);
    const char *argv[] = { "true" }, *names[] = { "a", "b", "c", "d", "e" };

    ck_assert_ptr_null(tbm_msg_encode(&m, &len, &err));
    ck_assert_str_eq(err.msg, "signal: unknown signal 'BOGUS'; use a name like TERM, INT, HUP, USR1 (no SIG)");
    m = (tbm_msg_t){ .type = 0 };
    ck_assert_ptr_null(tbm_msg_encode(&m, &len, &err));
    ck_assert_str_eq(err.msg, "message: type 0 is not a message type");
    ck_assert_str_eq(tbm_msg_type_name(99), "?");
    ck_assert_str_eq(tbm_msg_type_name(TBM_MSG_CLEANUP), "cleanup");
    /* 5 files of 256 KiB: over the frame limit */
    memset(big, 'a', TBM_FILE_DATA_MAX);
    m = (tbm_msg_t){ .type = TBM_MSG_SPAWN, .grant = "g", .argv = argv, .argc = 1, .cwd = "/", .n_files = 5 };
    for (int i = 0; i < 5; i++)
        m.files[i] = (tbm_jobfile_t){ names[i], big, TBM_FILE_DATA_MAX };
    ck_assert_ptr_null(tbm_msg_encode(&m, &len, &err));
    ck_assert_str_eq(err.msg, "message: JSON text of 1310881 bytes exceeds the limit of 1048576 bytes");
    /* two files of one name would silently become one */
    m.n_files = 2;
    m.files[1].name = names[0];
    ck_assert_ptr_null(tbm_msg_encode(&m, &len, &err));
    ck_assert_str_eq(err.msg, "spawn: two job files have the same name; give each file its own name");
    free(big);
}
END_TEST

static tbm_grant_t sample_grant(void)
{
    tbm_grant_t g = { .job = 42, .step = 0xfffffffbu, .uid = 501, .gid = 20, .expires = 1000300 };

    snprintf(g.node, sizeof(g.node), "mac01");
    return g;
}

/* Member by member (memcmp would compare the padding too). */
static int same_grant(const tbm_grant_t *a, const tbm_grant_t *b)
{
    return a->job == b->job && a->step == b->step && strcmp(a->node, b->node) == 0 && a->uid == b->uid &&
           a->gid == b->gid && a->expires == b->expires && a->hello == b->hello;
}

START_TEST(grant_round_trip_and_checks)
{
    tbm_grant_t g = sample_grant(), b;
    tbm_err_t err = { { 0 } };
    char *p = tbm_grant_payload(&g, &err);

    ck_assert_str_eq(p, "{\"tbmesh_grant\":1,\"job\":42,\"step\":4294967291,\"node\":\"mac01\",\"uid\":501,"
                        "\"gid\":20,\"expires\":1000300}");
    ck_assert_int_eq(tbm_grant_parse(p, strlen(p), &b, &err), 0);
    ck_assert(same_grant(&g, &b));
    ck_assert_int_eq(b.hello, 0);
    free(p);
    g.hello = 1;   /* a grant made to be a hello says so; one without the member is not one */
    p = tbm_grant_payload(&g, &err);
    ck_assert_str_eq(p, "{\"tbmesh_grant\":1,\"job\":42,\"step\":4294967291,\"node\":\"mac01\",\"uid\":501,"
                        "\"gid\":20,\"expires\":1000300,\"hello\":1}");
    ck_assert_int_eq(tbm_grant_parse(p, strlen(p), &b, &err), 0);
    ck_assert(same_grant(&g, &b));
    free(p);
    g.hello = 0;
    ck_assert_int_eq(tbm_grant_check(&g, 0, "mac01", 1000000, &err), 0);
    ck_assert_int_eq(tbm_grant_check(&g, 501, "mac01", 1000000, &err), -1);
    ck_assert_str_eq(err.msg, "grant refused: made by uid 501, not by root on the bridge host; only slurmstepd (root) "
                              "may grant a task");
    ck_assert_int_eq(tbm_grant_check(&g, 0, "mac02", 1000000, &err), -1);
    ck_assert_str_eq(err.msg, "grant refused: it is for node 'mac01', this is 'mac02'; a grant is good on its own "
                              "node only");
    ck_assert_int_eq(tbm_grant_check(&g, 0, "mac01", 1000300, &err), -1);
    ck_assert_str_eq(err.msg, "grant refused: expired 0 s ago; make a new one (are the clocks of the bridge and the "
                              "Mac in step?)");
    ck_assert_int_eq(tbm_grant_check(&g, 0, "mac01", 1000300 - TBM_GRANT_TTL_MAX - 1, &err), -1);
    ck_assert_str_eq(err.msg, "grant refused: it expires in 86401 s, more than the 86400 s a grant may live");
    ck_assert_int_eq(tbm_grant_allows(&g, 501, 501, &err), 0);
    ck_assert_int_eq(tbm_grant_allows(&g, 0, 501, &err), 0);
    ck_assert_int_eq(tbm_grant_allows(&g, 502, 501, &err), -1);
    ck_assert_str_eq(err.msg, "grant refused: it is for uid 501 but the connection is uid 502; a user may use only "
                              "their own grants");
    ck_assert_int_eq(tbm_grant_allows(&g, 0, 0, &err), -1);
    ck_assert_str_eq(err.msg, "grant refused: the spawn asks for uid 0 but the grant is for uid 501");
}
END_TEST

static const char *grant_error(const char *payload)
{
    static tbm_err_t err;
    tbm_grant_t g;

    tbm_errclear(&err);
    ck_assert_int_eq(tbm_grant_parse(payload, strlen(payload), &g, &err), -1);
    ck_assert_uint_eq(g.uid, 0);
    return err.msg;
}

START_TEST(grant_refusals)
{
    tbm_grant_t g = sample_grant();
    tbm_err_t err = { { 0 } };

    ck_assert_str_eq(grant_error("nope"), "grant: invalid JSON at line 1 column 2: null expected");
    ck_assert_str_eq(grant_error("{\"tbmesh_grant\":2}"), "grant: 'tbmesh_grant' is 2, outside 1..1");
    ck_assert_str_eq(grant_error("{\"tbmesh_grant\":1,\"job\":1,\"step\":1,\"node\":\"m\",\"uid\":1,\"gid\":1}"),
                     "grant: member 'expires' is missing");
    ck_assert_str_eq(grant_error("{\"tbmesh_grant\":1,\"job\":1,\"step\":1,\"node\":\"a/b\",\"uid\":1,\"gid\":1,"
                                 "\"expires\":5}"),
                     "grant: 'node' must be letters, digits, '.', '-' or '_'");
    ck_assert_str_eq(grant_error("{\"tbmesh_grant\":1,\"job\":-1}"), "grant: 'job' is -1, outside 0..4294967295");
    ck_assert_str_eq(grant_error("{\"tbmesh_grant\":1,\"job\":1,\"step\":1,\"node\":\"m\",\"uid\":1,\"gid\":1,"
                                 "\"expires\":5,\"hello\":2}"),
                     "grant: 'hello' is 2, outside 0..1");
    ck_assert_str_eq(grant_error("{\"tbmesh_grant\":1,\"job\":1,\"step\":1,\"node\":\"m\",\"uid\":1,\"gid\":1,"
                                 "\"expires\":5,\"hello\":true}"),
                     "grant: 'hello' must be an integer");
    snprintf(g.node, sizeof(g.node), "bad name");
    ck_assert_ptr_null(tbm_grant_payload(&g, &err));
    ck_assert_str_eq(err.msg, "grant: node name 'bad name' must be 1 to 63 letters, digits, '.', '-' or '_'");
}
END_TEST

START_TEST(grant_as_a_hello)
{
    const char *ok = "{\"tbmesh_grant\":1,\"job\":42,\"step\":3,\"node\":\"mac01\",\"uid\":501,\"gid\":20,"
                     "\"expires\":1000300,\"hello\":1}";
    const char *spawn_only = "{\"tbmesh_grant\":1,\"job\":42,\"step\":3,\"node\":\"mac01\",\"uid\":501,"
                             "\"gid\":20,\"expires\":1000300}";
    tbm_err_t err = { { 0 } };
    tbm_grant_t g;

    ck_assert_int_eq(tbm_grant_hello(ok, strlen(ok), 0, "mac01", 1000000, &g, &err), 0);
    ck_assert_uint_eq(g.uid, 501);
    ck_assert_int_eq(g.hello, 1);
    ck_assert_int_eq(tbm_grant_hello(spawn_only, strlen(spawn_only), 0, "mac01", 1000000, &g, &err), -1);
    ck_assert_str_eq(err.msg, "the hello's grant (job 42 step 3, uid 501) was not made to be a hello: it is good in a "
                              "spawn only, on a connection of uid 501's (or root's)");
    ck_assert_int_eq(tbm_grant_hello(ok, strlen(ok), 0, "mac02", 1000000, &g, &err), -1);
    ck_assert_str_eq(err.msg, "the hello's grant (job 42 step 3, uid 501) is refused: it is for node 'mac01', this is "
                              "'mac02'; a grant is good on its own node only");
    ck_assert_int_eq(tbm_grant_hello(ok, strlen(ok), 0, "mac01", 1000300, &g, &err), -1);
    ck_assert_str_eq(err.msg, "the hello's grant (job 42 step 3, uid 501) is refused: expired 0 s ago; make a new one "
                              "(are the clocks of the bridge and the Mac in step?)");
    ck_assert_int_eq(tbm_grant_hello(ok, strlen(ok), 501, "mac01", 1000000, &g, &err), -1);
    ck_assert_str_eq(err.msg, "the hello's grant (job 42 step 3, uid 501) is refused: made by uid 501, not by root on "
                              "the bridge host; only slurmstepd (root) may grant a task");
    ck_assert_int_eq(tbm_grant_hello("{\"job\":7}", 9, 0, "mac01", 1000000, &g, &err), -1);
    ck_assert_str_eq(err.msg, "a hello of root's may carry a job grant and nothing else: grant: member 'tbmesh_grant' "
                              "is missing");
}
END_TEST

#define NONCE "0123456789abcdef0123456789abcdef"

/* A proof's credential as the client's munged would see it. */
static tbm_proof_cred_t seen(const char *payload, uint32_t uid)
{
    return (tbm_proof_cred_t){ .decoded = 1, .uid = uid, .payload = payload, .len = strlen(payload) };
}

START_TEST(agent_proof_checks)
{
    char *ok = tbm_proof_payload("mac01", NONCE, NULL);
    tbm_proof_cred_t p = seen(ok, 0), forged = { .decoded = 0, .why = "munge: Invalid credential" };
    tbm_err_t err = { { 0 } };

    ck_assert_str_eq(ok, "{\"tbmesh_proof\":1,\"kind\":\"tbmesh-agent-proof\",\"node\":\"mac01\",\"nonce\":\"" NONCE "\"}");
    ck_assert_int_eq(tbm_proof_check(&p, "10.0.0.1:6830", "mac01", NONCE, &err), 0);
    p.uid = 1001;
    ck_assert_int_eq(tbm_proof_check(&p, "mac01:7070", "mac01", NONCE, &err), -1);
    ck_assert_str_eq(err.msg, "the agent at mac01:7070 did not prove itself (the credential was made by uid 1001, not "
                              "root): something other than macnoded holds the port; check the Mac");
    ck_assert_int_eq(tbm_proof_check(&forged, "mac01:7070", "mac01", NONCE, &err), -1);
    ck_assert_str_eq(err.msg, "the agent at mac01:7070 did not prove itself (its credential does not decode: munge: "
                              "Invalid credential): it does not share this cluster's MUNGE key, or something other "
                              "than macnoded holds the port; check the Mac");
    p.uid = 0;
    ck_assert_int_eq(tbm_proof_check(&p, "mac01:7070", "mac01", "ffffffffffffffffffffffffffffffff", &err), -1);
    ck_assert_str_eq(err.msg, "the agent at mac01:7070 did not prove itself (its proof answers another connection's "
                              "nonce: a replayed proof): something other than macnoded holds the port; check the Mac");
    ck_assert_int_eq(tbm_proof_check(&p, "10.0.0.2:6830", "mac02", NONCE, &err), -1);
    ck_assert_str_eq(err.msg, "the agent at 10.0.0.2:6830 proved itself as mac01's, not mac02's: the address "
                              "tbmesh.conf gives mac02 (AgentAddr, AgentPort) leads to another Mac's agent; correct it, "
                              "or check the Mac");
    free(ok);
}
END_TEST

START_TEST(a_proof_is_no_grant_and_a_grant_no_proof)
{
    const char *grant = "{\"tbmesh_grant\":1,\"job\":42,\"step\":3,\"node\":\"mac01\",\"uid\":501,\"gid\":20,"
                        "\"expires\":1000300,\"hello\":1}";
    const char *other = "{\"tbmesh_proof\":1,\"kind\":\"tbmesh-record-seal\",\"node\":\"mac01\",\"nonce\":\"" NONCE "\"}";
    char *proof = tbm_proof_payload("mac01", NONCE, NULL);
    tbm_proof_cred_t p = seen(grant, 0);
    tbm_err_t err = { { 0 } };
    tbm_grant_t g;

    /* the agent makes proofs for anyone who asks: a proof must never open a connection as a grant-hello */
    ck_assert_int_eq(tbm_grant_hello(proof, strlen(proof), 0, "mac01", 1000000, &g, &err), -1);
    ck_assert_str_eq(err.msg, "a hello of root's may carry a job grant and nothing else: grant: member 'tbmesh_grant' "
                              "is missing");
    ck_assert_int_eq(tbm_grant_parse(proof, strlen(proof), &g, &err), -1);
    ck_assert_int_eq(tbm_proof_check(&p, "mac01:7070", "mac01", NONCE, &err), -1);
    ck_assert_str_eq(err.msg, "the agent at mac01:7070 did not prove itself (the credential is root's but no agent's "
                              "proof: proof: member 'tbmesh_proof' is missing): something other than macnoded holds "
                              "the port; check the Mac");
    p = seen(other, 0);
    ck_assert_int_eq(tbm_proof_check(&p, "mac01:7070", "mac01", NONCE, &err), -1);
    ck_assert_str_eq(err.msg, "the agent at mac01:7070 did not prove itself (the credential is root's but no agent's "
                              "proof: proof: its kind is 'tbmesh-record-seal', not 'tbmesh-agent-proof'): something "
                              "other than macnoded holds the port; check the Mac");
    p = seen("not json", 0);
    ck_assert_int_eq(tbm_proof_check(&p, "m:1", "mac01", NONCE, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "no agent's proof: proof: invalid JSON"));
    free(proof);
}
END_TEST

START_TEST(nonces)
{
    const unsigned char raw[16] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0, 0xff, 0x10, 0x20, 0x30, 0x40,
                                    0x50, 0x60 };
    char n[TBM_NONCE_LEN + 1];
    tbm_err_t err = { { 0 } };

    tbm_nonce_format(raw, n);
    ck_assert_str_eq(n, "0123456789abcdef00ff102030405060");
    ck_assert(tbm_nonce_ok(n));
    ck_assert(!tbm_nonce_ok("0123456789abcdef00ff10203040506"));
    ck_assert(!tbm_nonce_ok("0123456789abcdef00ff1020304050600"));
    ck_assert(!tbm_nonce_ok("0123456789abcdeg00ff102030405060"));
    ck_assert(!tbm_nonce_ok(NULL));
    ck_assert_ptr_null(tbm_proof_payload("mac01", "short", &err));
    ck_assert_str_eq(err.msg, "proof: a nonce is 32 lowercase hex digits");
    ck_assert_ptr_null(tbm_proof_payload("bad name", NONCE, &err));
    ck_assert_str_eq(err.msg, "proof: node name 'bad name' must be 1 to 63 letters, digits, '.', '-' or '_'");
}
END_TEST

START_TEST(signal_names)
{
    ck_assert_int_eq(tbm_signal_by_name("TERM"), SIGTERM);
    ck_assert_int_eq(tbm_signal_by_name("USR1"), SIGUSR1);
    ck_assert_int_eq(tbm_signal_by_name("WINCH"), SIGWINCH);
    ck_assert_int_eq(tbm_signal_by_name("SIGTERM"), 0);
    ck_assert_int_eq(tbm_signal_by_name(NULL), 0);
    ck_assert_str_eq(tbm_signal_name(SIGKILL), "KILL");
    ck_assert_str_eq(tbm_signal_name(SIGTSTP), "TSTP");
    ck_assert_ptr_null(tbm_signal_name(0));
    ck_assert_ptr_null(tbm_signal_name(SIGRTMIN));
}
END_TEST

START_TEST(watch_messages_round_trip)
{
    const char *names[] = { "en2", "en3", "en4" };
    tbm_msg_t m = { .type = TBM_MSG_WATCH }, b;

    round_trip(&m, &b);
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_WATCHING, .ifaces = names, .n_ifaces = 3 };
    round_trip(&m, &b);
    ck_assert_uint_eq(b.n_ifaces, 3);
    ck_assert_str_eq(b.ifaces[2], "en4");
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_WATCHING };
    round_trip(&m, &b);
    ck_assert_uint_eq(b.n_ifaces, 0);
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_LINK, .iface = "en2", .up = 0, .seq = 9000000000LL };
    round_trip(&m, &b);
    ck_assert_str_eq(b.iface, "en2");
    ck_assert_int_eq(b.up, 0);
    ck_assert_int_eq(b.seq, 9000000000LL);
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_LINK, .iface = "en3", .up = 1, .seq = 1 };
    round_trip(&m, &b);
    ck_assert_int_eq(b.up, 1);
    tbm_msg_free(&b);
    m = (tbm_msg_t){ .type = TBM_MSG_MISSED, .count = 12, .seq = 40 };
    round_trip(&m, &b);
    ck_assert_int_eq(b.count * 100 + b.seq, 1240);
    tbm_msg_free(&b);
}
END_TEST

START_TEST(watch_message_refusals)
{
    tbm_err_t err = { { 0 } };
    size_t len;
    tbm_msg_t m = { .type = TBM_MSG_LINK, .iface = "en2/../x", .seq = 1 };

    ck_assert_str_eq(parse_error("{\"type\":\"link\",\"iface\":\"en2\",\"up\":true}"), "link: member 'seq' is missing");
    ck_assert_str_eq(parse_error("{\"type\":\"link\",\"iface\":\"en2\",\"up\":true,\"seq\":0}"),
                     "link: 'seq' is 0, outside 1..9223372036854775807");
    ck_assert_str_eq(parse_error("{\"type\":\"link\",\"iface\":\"en2 x\",\"up\":true,\"seq\":1}"),
                     "link: 'iface' must be an interface's name (1 to 15 letters, digits, '.', '-' or '_'), not 'en2 x'");
    ck_assert_str_eq(parse_error("{\"type\":\"link\",\"iface\":\"en0123456789abcdef\",\"up\":true,\"seq\":1}"),
                     "link: 'iface' must be a string of 1 to 15 bytes without NUL");
    ck_assert_str_eq(parse_error("{\"type\":\"link\",\"iface\":\"en2\",\"up\":1,\"seq\":1}"),
                     "link: 'up' must be true or false");
    ck_assert_str_eq(parse_error("{\"type\":\"missed\",\"count\":0,\"seq\":1}"),
                     "missed: 'count' is 0, outside 1..9223372036854775807");
    ck_assert_str_eq(parse_error("{\"type\":\"watching\",\"ifaces\":[\"en2\",\"\"]}"),
                     "watching: 'ifaces' must be an array of at most 32 interface names (1 to 15 letters, digits, "
                     "'.', '-' or '_')");
    ck_assert_str_eq(parse_error("{\"type\":\"watching\"}"),
                     "watching: 'ifaces' must be an array of at most 32 interface names (1 to 15 letters, digits, "
                     "'.', '-' or '_')");
    ck_assert_ptr_null(tbm_msg_encode(&m, &len, &err));
    ck_assert_str_eq(err.msg, "link: 'iface' must be an interface's name (1 to 15 letters, digits, '.', '-' or '_'), "
                     "not 'en2/../x'");
}
END_TEST

static Suite *proto_suite(void)
{
    Suite *s = suite_create("proto");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, decoder_splits_frames_across_feeds);
    tcase_add_test(tc, hello_and_request_go_in_one_buffer);
    tcase_add_test(tc, decoder_says_when_one_whole_frame_is_all_it_holds);
    tcase_add_test(tc, decoder_refuses_bad_frames);
    tcase_add_test(tc, decoder_reports_garbage_before_the_frame_is_whole);
    tcase_add_test(tc, decoder_takes_a_maximal_data_frame_and_limits);
    tcase_add_test(tc, decoder_grows_after_the_hello);
    tcase_add_test(tc, decoder_starts_small_and_grows_by_the_frame);
    tcase_add_test(tc, spawn_round_trip);
    tcase_add_test(tc, small_messages_round_trip);
    tcase_add_test(tc, exit_and_facts_round_trip);
    tcase_add_test(tc, spawn_with_files_round_trip);
    tcase_add_test(tc, message_refusals);
    tcase_add_test(tc, data_frame_is_not_a_message);
    tcase_add_test(tc, spawn_refusals);
    tcase_add_test(tc, spawn_argv_count_is_bounded);
    tcase_add_test(tc, exit_refusals);
    tcase_add_test(tc, usage_messages_round_trip);
    tcase_add_test(tc, usage_message_refusals);
    tcase_add_test(tc, gpu_and_energy_round_trip);
    tcase_add_test(tc, gpu_and_energy_refusals);
    tcase_add_test(tc, used_task_count_is_bounded);
    tcase_add_test(tc, hello_of_protocol_1_is_refused);
    tcase_add_test(tc, spawn_file_refusals);
    tcase_add_test(tc, encode_refusals);
    tcase_add_test(tc, grant_round_trip_and_checks);
    tcase_add_test(tc, grant_refusals);
    tcase_add_test(tc, grant_as_a_hello);
    tcase_add_test(tc, agent_proof_checks);
    tcase_add_test(tc, a_proof_is_no_grant_and_a_grant_no_proof);
    tcase_add_test(tc, nonces);
    tcase_add_test(tc, signal_names);
    tcase_add_test(tc, watch_messages_round_trip);
    tcase_add_test(tc, watch_message_refusals);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(proto_suite)
