/* test_record_codec.c: unit tests of lib/record_codec.c (TBM1 summaries, base64). */
#include "tbm_record_fixture.h"

#include <zlib.h>

START_TEST(base64_round_trips_and_is_strict)
{
    const unsigned char data[] = "\x00\xff\x10 any bytes";
    size_t n, len;
    unsigned char *back;
    char *b;

    for (n = 0; n < sizeof(data); n++) {
        b = tbm_base64_encode(data, n);
        back = tbm_base64_decode(b, &len);
        ck_assert_ptr_nonnull(back);
        ck_assert_uint_eq(len, n);
        ck_assert(memcmp(back, data, n) == 0);
        free(b);
        free(back);
    }
    b = tbm_base64_encode((const unsigned char *)"Man", 3);
    ck_assert_str_eq(b, "TWFu");
    free(b);
    ck_assert_ptr_null(tbm_base64_decode("TWF", &len));      /* not a multiple of 4 */
    ck_assert_ptr_null(tbm_base64_decode("TW=u", &len));     /* padding inside */
    ck_assert_ptr_null(tbm_base64_decode("TWF u", &len));
    ck_assert_ptr_null(tbm_base64_decode("TR==", &len));     /* non-zero bits under the padding */
    back = tbm_base64_decode("TQ==", &len);
    ck_assert_uint_eq(len, 1);
    ck_assert_int_eq(back[0], 'M');
    free(back);
}
END_TEST

START_TEST(summary_of_a_record_round_trips)
{
    json_object *rec = tbm_record_fixture("four-mac.json"), *s = tbm_summary_of_record(rec, "ab12"), *back;
    tbm_err_t err = { { 0 } };
    char *text = tbm_summary_encode(s, &err);

    ck_assert_msg(text != NULL, "%s", err.msg);
    ck_assert(strncmp(text, "TBM1:", 5) == 0);
    ck_assert(strlen(text) < 700);
    back = tbm_summary_decode(text, &err);
    ck_assert_msg(back != NULL, "%s", err.msg);
    ck_assert_str_eq(json_object_to_json_string(back), json_object_to_json_string(s));
    ck_assert_int_eq(json_object_get_int(json_object_object_get(back, "nodes")), 4);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(back, "backend")), "ring");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(back, "model")), "mlx-community/Llama-3.2-1B@abc123");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(back, "seed")), "7");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(back, "record")), "ab12");
    free(text);
    json_object_put(back);
    json_object_put(s);
    json_object_put(rec);
}
END_TEST

/* "TBM1:" + base64(gzip(json)) made here, to feed the decoder what it must refuse. */
static char *wrap(const char *json, size_t len)
{
    unsigned char gz[8192];
    z_stream z;
    char *b, *out;

    memset(&z, 0, sizeof(z));
    ck_assert_int_eq(deflateInit2(&z, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (unsigned char *)json;
    z.avail_in = (uInt)len;
    z.next_out = gz;
    z.avail_out = sizeof(gz);
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    b = tbm_base64_encode(gz, sizeof(gz) - z.avail_out);
    deflateEnd(&z);
    out = malloc(strlen(b) + 6);
    strcpy(out, "TBM1:");
    strcat(out, b);
    free(b);
    return out;
}

static void decode_refused(const char *text, const char *msg)
{
    tbm_err_t err = { { 0 } };

    ck_assert_ptr_null(tbm_summary_decode(text, &err));
    ck_assert_msg(strstr(err.msg, msg) != NULL, "expected '%s' in '%s'", msg, err.msg);
}

START_TEST(bad_summaries_are_refused_clearly)
{
    char big[6000], *t;

    decode_refused("JS1:abcd", "not a TBM1 summary");
    decode_refused("TBM1:@@@@", "not valid base64");
    decode_refused("TBM1:aGVsbG8=", "not complete gzip data");
    t = wrap("{\"v\":1,\"job\":5,\"phase\":\"end\"", 29);
    decode_refused(t, "TBM1 summary: invalid JSON");
    free(t);
    t = wrap("{\"v\":2,\"job\":5,\"phase\":\"end\",\"state\":\"X\"}", 41);
    decode_refused(t, "version 2 is not known");
    free(t);
    t = wrap("{\"v\":1,\"job\":\"5\",\"phase\":\"end\",\"state\":\"X\"}", 43);
    decode_refused(t, "TBM1 summary: job is a string, not a whole number");
    free(t);
    memset(big, ' ', sizeof(big));
    memcpy(big, "{\"v\":1", 6);
    big[sizeof(big) - 1] = '}';
    t = wrap(big, sizeof(big));
    decode_refused(t, "unpacks to more than 4096 bytes");
    free(t);
}
END_TEST

static Suite *codec_suite(void)
{
    Suite *s = suite_create("record_codec");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, base64_round_trips_and_is_strict);
    tcase_add_test(tc, summary_of_a_record_round_trips);
    tcase_add_test(tc, bad_summaries_are_refused_clearly);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(codec_suite)
