/* test_record_codec.c: unit tests of lib/record_codec.c (TBM1 summaries, base64). */
#include "tbm_record_fixture.h"

#include <zlib.h>

#include "json_read.h"

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

START_TEST(summary_of_a_record_round_trips)
{
    json_object *rec = tbm_record_fixture("four-mac.json"), *s = tbm_summary_of_record(rec, "ab12"), *back;
    tbm_err_t err = { { 0 } };
    char *text = tbm_summary_encode(s, &err);

    ck_assert_msg(text != NULL, "%s", err.msg);
    ck_assert(strncmp(text, "TBM1:", 5) == 0);
    ck_assert(strlen(text) < 300);
    back = tbm_summary_decode(text, &err);
    ck_assert_msg(back != NULL, "%s", err.msg);
    ck_assert_str_eq(json_object_to_json_string(back), json_object_to_json_string(s));
    ck_assert_int_eq(json_object_get_int(json_object_object_get(back, "v")), 2);
    ck_assert_int_eq(json_object_get_int(json_object_object_get(back, "nodes")), 4);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(back, "backend")), "ring");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(back, "record")), "ab12");
    free(text);
    json_object_put(back);
    json_object_put(s);
    json_object_put(rec);
}
END_TEST

/* What every user reads in AdminComment: no command line, paths, git, model, seed, data, note or script. */
START_TEST(summary_holds_only_what_a_report_needs)
{
    static const char *const allowed[] = { "v", "job", "phase", "state", "exit", "backend", "group", "nodes",
                                           "records", "record", NULL };
    json_object *rec = tbm_record_fixture("four-mac.json"), *s = tbm_summary_of_record(rec, "ab12");
    json_object *at = tbm_summary_at_submit("jaccl", "studio-a", "off");
    const char *text;
    size_t k;

    json_object_object_foreach(s, key, val) {
        (void)val;
        for (k = 0; allowed[k] && strcmp(allowed[k], key); k++)
            ;
        ck_assert_msg(allowed[k] != NULL, "the summary holds %s", key);
    }
    text = json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN);
    ck_assert_msg(!strstr(text, "Llama") && !strstr(text, "sbatch") && !strstr(text, "/"), "%s", text);
    ck_assert_str_eq(json_object_to_json_string_ext(at, JSON_C_TO_STRING_PLAIN),
                     "{\"v\":2,\"phase\":\"submit\",\"state\":\"PENDING\",\"backend\":\"jaccl\","
                     "\"group\":\"studio-a\",\"records\":\"off\"}");
    ck_assert_int_eq(tbm_summary_validate(at, NULL), 0);
    json_object_put(at);
    at = tbm_summary_at_submit(NULL, NULL, NULL);
    ck_assert_str_eq(json_object_to_json_string_ext(at, JSON_C_TO_STRING_PLAIN),
                     "{\"v\":2,\"phase\":\"submit\",\"state\":\"PENDING\",\"backend\":\"auto\"}");
    json_object_put(at);
    json_object_put(s);
    json_object_put(rec);
}
END_TEST

/* An older job's summary in slurmdbd (version 1, with the submit half) still reads, and sync's record takes
 * its submit half and declared inputs; a version 2 summary's record says why the submit half is absent. */
START_TEST(records_of_old_and_new_summaries)
{
    static const char v1[] = "{\"v\":1,\"job\":7,\"phase\":\"submit\",\"state\":\"PENDING\",\"backend\":"
                             "\"ring\",\"group\":\"mini-b\",\"commit\":\"3f6db27c0a1b2c3d4e5f60718293a4b5c6d7e8f9\","
                             "\"dirty\":false,\"seed\":\"7\",\"script\":\"ab\",\"submit\":{\"work_dir\":\"/w\","
                             "\"sbatch_line\":\"sbatch x.sh\"},\"declared\":{\"seed\":\"7\"}}";
    tbm_err_t err = { { 0 } };
    char *t = wrap(v1, strlen(v1)), *t2;
    json_object *s = tbm_summary_decode(t, &err), *rec, *s2;
    const char *why;

    ck_assert_msg(s != NULL, "%s", err.msg);
    rec = tbm_record_of_summary(s, 7, "lab", "CANCELLED", 0);
    ck_assert_msg(tbm_record_validate(rec, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(tbm_json_str(json_object_object_get(rec, "submit"), "sbatch_line"), "sbatch x.sh");
    ck_assert_str_eq(tbm_json_str(json_object_object_get(rec, "declared"), "seed"), "7");
    ck_assert_str_eq(tbm_json_str(json_object_object_get(rec, "job"), "group"), "mini-b");
    json_object_put(rec);

    s2 = tbm_summary_at_submit("ring", "mini-b", NULL);
    t2 = tbm_summary_encode(s2, &err);
    json_object_put(s2);
    s2 = tbm_summary_decode(t2, &err);
    ck_assert_msg(s2 != NULL, "%s", err.msg);
    rec = tbm_record_of_summary(s2, 8, "lab", "CANCELLED", 0);
    ck_assert_msg(tbm_record_validate(rec, &err) == 0, "%s", err.msg);
    ck_assert(tbm_record_is_absent(json_object_object_get(rec, "submit"), &why));
    ck_assert_msg(strstr(why, "the job never started, so no node received its submit half"), "%s", why);
    ck_assert(!json_object_object_get_ex(rec, "declared", NULL));
    ck_assert_str_eq(tbm_json_str(json_object_object_get(rec, "job"), "backend_requested"), "ring");
    json_object_put(rec);
    rec = tbm_record_of_summary(s2, 8, "lab", "NODE_FAIL", 1);
    ck_assert(tbm_record_is_absent(json_object_object_get(rec, "submit"), &why));
    ck_assert_msg(strstr(why, "the job started, but no node stored its record"), "%s", why);
    json_object_put(rec);
    json_object_put(s2);
    json_object_put(s);
    free(t);
    free(t2);
}
END_TEST

/* The submit half job_submit checks before the job is queued. */
START_TEST(submit_half_is_checked)
{
    static const char good[] = "{\"submit\":{\"work_dir\":\"/w\",\"git\":{\"absent\":\"no git\"},"
                               "\"options\":{\"repro-seed\":\"7\"}},\"declared\":{\"seed\":\"7\",\"note\":\"n\"},"
                               "\"records\":\"off\"}";
    tbm_err_t err = { { 0 } };
    json_object *doc = tbm_submit_half_parse(good, strlen(good), &err);
    char *big;

    ck_assert_msg(doc != NULL, "%s", err.msg);
    ck_assert_str_eq(tbm_json_str(doc, "records"), "off");
    json_object_put(doc);
    ck_assert_ptr_null(tbm_submit_half_parse("[1]", 3, &err));
    ck_assert_str_eq(err.msg, "the submit half is not a JSON object");
    ck_assert_ptr_null(tbm_submit_half_parse("{\"declared\":{\"seed\":7}}", 23, &err));
    ck_assert_str_eq(err.msg, "the submit half: declared.seed is an integer, not a string");
    ck_assert_ptr_null(tbm_submit_half_parse("{\"submit\":", 10, &err));
    ck_assert_msg(strstr(err.msg, "the submit half: ") == err.msg, "%s", err.msg);
    big = calloc(1, TBM_SUBMIT_HALF_MAX + 2);
    memset(big, ' ', TBM_SUBMIT_HALF_MAX + 1);
    ck_assert_ptr_null(tbm_submit_half_parse(big, TBM_SUBMIT_HALF_MAX + 1, &err));
    ck_assert_str_eq(err.msg, "the submit half is 65537 bytes, more than 65536");
    free(big);
}
END_TEST

START_TEST(bad_summaries_are_refused_clearly)
{
    char big[6000], *t;

    decode_refused("JS1:abcd", "not a TBM1 summary");
    decode_refused("TBM1:@@@@", "not valid base64");
    decode_refused("TBM1:aGVsbG8=", "not complete gzip data");
    t = wrap("{\"v\":1,\"job\":5,\"phase\":\"end\"", 29);
    decode_refused(t, "TBM1 summary: invalid JSON");
    free(t);
    t = wrap("{\"v\":3,\"job\":5,\"phase\":\"end\",\"state\":\"X\"}", 41);
    decode_refused(t, "version 3 is not known (this slurm-tbmesh reads 1 to 2): read it with a newer slurm-tbmesh");
    free(t);
    t = wrap("{\"v\":2,\"job\":5,\"phase\":\"end\",\"state\":\"X\",\"seed\":\"7\"}", 52);
    decode_refused(t, "TBM1 summary: seed is not a member");
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
    tcase_add_test(tc, summary_holds_only_what_a_report_needs);
    tcase_add_test(tc, records_of_old_and_new_summaries);
    tcase_add_test(tc, submit_half_is_checked);
    tcase_add_test(tc, bad_summaries_are_refused_clearly);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(codec_suite)
