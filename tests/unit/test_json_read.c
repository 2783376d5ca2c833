/* test_json_read.c: the one JSON reader (lib/json_read.c): what it accepts, every refusal with its place and
 * its words, and the typed member look-ups. */
#include <string.h>

#include "json_read.h"
#include "parse_text.h"
#include "tbm_check.h"

static tbm_err_t err;

/* The error of reading text under rules ("" when it was accepted). */
static const char *read_error(const char *text, const tbm_json_rules_t *rules)
{
    json_object *o;

    memset(&err, 0, sizeof(err));
    o = tbm_json_read(text, strlen(text), rules, &err);
    if (o) {
        ck_assert_str_eq(err.msg, "");
        json_object_put(o);
    } else {
        ck_assert_str_ne(err.msg, "");
    }
    return err.msg;
}

static const tbm_json_rules_t proto = { .what = "message", .max_len = 64, .max_depth = 4, .want_object = 1 };

START_TEST(accepts_documents)
{
    ck_assert_str_eq(read_error("{\"a\":1,\"b\":[true,null,\"x:y\"]}", NULL), "");
    ck_assert_str_eq(read_error("[1, 2.5, \"\\u00e9\"]\n\t ", NULL), "");
    ck_assert_str_eq(read_error("\"just a string\"", NULL), "");
    ck_assert_str_eq(read_error("0", NULL), "");          /* a number at the very end of the text */
    ck_assert_str_eq(read_error("\n-12.5e3", NULL), "");
    ck_assert_str_eq(read_error("{\"k\\\":\\\"\":\"v:\\\"{}\"}", NULL), "");   /* colons and quotes in strings */
    ck_assert_str_eq(read_error("[{\"a\":1},{\"a\":2}]", NULL), "");           /* one key per object */
    ck_assert_str_eq(read_error("{\"a\":{\"a\":{\"a\":1}}}", &proto), "");
    ck_assert_str_eq(read_error("{\"\xc3\xa9\":\"\xe2\x82\xac\"}", &proto), "");   /* UTF-8 */
}
END_TEST

/* Raw UTF-8 of every length reads back as the same bytes, whichever json-c reads it (0.16 in Debian 12; 0.18 in
 * Debian 13, whose strict mode refuses it unless it is escaped first); an error after it is placed in the
 * text as given. */
START_TEST(reads_raw_utf8_alike_in_every_json_c)
{
    const char *text = "{\"n\xc3\xa9\":\"\xe2\x82\xac \xf0\x9f\x98\x80 \xc3\xa9\",\"k\":[\"\xe6\x97\xa5\"]}";
    json_object *o, *v;

    memset(&err, 0, sizeof(err));
    o = tbm_json_read(text, strlen(text), &proto, &err);
    ck_assert_msg(o != NULL, "%s", err.msg);
    ck_assert(json_object_object_get_ex(o, "n\xc3\xa9", &v));
    ck_assert_str_eq(json_object_get_string(v), "\xe2\x82\xac \xf0\x9f\x98\x80 \xc3\xa9");
    ck_assert(json_object_object_get_ex(o, "k", &v));
    ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(v, 0)), "\xe6\x97\xa5");
    json_object_put(o);
    ck_assert_str_eq(read_error("{\"\xe2\x82\xac\":\"\xf0\x9f\x98\x80\" x}", &proto),
                     "message: invalid JSON at line 1 column 15: object value separator ',' expected");
    ck_assert_str_eq(read_error("{\"\xed\xa0\x80\":1}", &proto),        /* a UTF-16 surrogate, as UTF-8 */
                     "message: invalid JSON at line 1 column 3: invalid utf-8 string");
    ck_assert_str_eq(read_error("{\"\xe2\x82\":1}", &proto),             /* a sequence cut short */
                     "message: invalid JSON at line 1 column 3: invalid utf-8 string");
    ck_assert_str_eq(read_error("{\"a\":\"\\q\"}", &proto),              /* no escape starts so */
                     "message: invalid JSON at line 1 column 8: invalid string sequence");
    ck_assert_str_eq(read_error("{\"a\":\"\\\xc3\xa9\"}", &proto),      /* nor with a byte above 0x7f */
                     "message: invalid JSON at line 1 column 8: invalid string sequence");
    ck_assert_str_eq(read_error("{\"\\\xc3\xa9\":1}", &proto),            /* in a key too */
                     "message: invalid JSON at line 1 column 4: invalid string sequence");
    ck_assert_str_eq(read_error("{\"a\":\"\xc3\xa9\\\\\xc3\xa9\"}", &proto), "");  /* an escaped backslash */
}
END_TEST

START_TEST(refuses_a_key_twice)
{
    const char *twice = "message: invalid JSON: a key appears twice in one object (which value counts would be a "
                        "guess)";

    ck_assert_str_eq(read_error("{\"a\":1,\"a\":1}", &proto), twice);
    ck_assert_str_eq(read_error("{\"x\":{\"a\":1,\"b\":2,\"a\":3}}", &proto), twice);
    ck_assert_str_eq(read_error("[{\"a\":1},{\"b\":1,\"b\":2}]", &(tbm_json_rules_t){ .what = "message" }), twice);
    ck_assert_str_eq(read_error("{\"a\":1,\"\\u0061\":2}", &proto), twice);     /* the same key, escaped */
}
END_TEST

START_TEST(refuses_bad_text_with_its_place)
{
    ck_assert_str_eq(read_error("{\"a\":\"\xff\"}", &proto), "message: invalid JSON at line 1 column 7: invalid utf-8 "
                                                            "string");
    ck_assert_str_eq(read_error("{\"a\":\n 1,\n \"b\": x}", &proto),
                     "message: invalid JSON at line 3 column 7: unexpected character");
    ck_assert_str_eq(read_error("{\"a\":1", &proto),
                     "message: invalid JSON at line 1 column 7: the text ends inside the document (truncated?)");
    ck_assert_str_eq(read_error("{} {}", &proto), "message: invalid JSON at line 1 column 4: unexpected character");
    ck_assert_str_eq(read_error("{'a':1}", &proto), "message: invalid JSON at line 1 column 2: not JSON (a "
                                                    "single-quoted name, NaN or Infinity?)");
    ck_assert_str_eq(read_error("{\"a\":[1,NaN]}", &proto), "message: invalid JSON at line 1 column 9: not JSON (a "
                                                            "single-quoted name, NaN or Infinity?)");
    ck_assert_str_eq(read_error("[-Infinity]", NULL), "invalid JSON at line 1 column 3: not JSON (a single-quoted "
                                                      "name, NaN or Infinity?)");
    ck_assert_str_eq(read_error("[1e5, -0.5E-3, true, false, null]", NULL), "");
    ck_assert_str_eq(read_error("{\"a\":[[[[1]]]]}", &proto), "message: invalid JSON at line 1 column 9: nesting too "
                                                            "deep");
    ck_assert_str_eq(read_error("[1]", &proto), "message: invalid JSON: the document must be a JSON object");
    ck_assert_str_eq(read_error("{}", &(tbm_json_rules_t){ .want_array = 1 }),
                     "invalid JSON: the document must be a JSON list");
    ck_assert_str_eq(read_error("null", NULL), "invalid JSON at line 1 column 5: null is not a document here");
    ck_assert_str_eq(read_error(" \n ", &proto), "message: empty JSON text");
    ck_assert_str_eq(read_error("{\"a\":\"0123456789012345678901234567890123456789012345678901234567\"}", &proto),
                     "message: JSON text of 66 bytes exceeds the limit of 64 bytes");
    ck_assert_ptr_null(tbm_json_read(NULL, 0, &proto, &err));
    ck_assert_str_eq(err.msg, "message: empty JSON text");
    ck_assert_ptr_null(tbm_json_read("{\"a\":1}\0{}", 10, &proto, &err));
    ck_assert_str_eq(err.msg, "message: invalid JSON at line 1 column 8: a NUL byte");
}
END_TEST

START_TEST(says_what_to_do)
{
    const tbm_json_rules_t r = { .what = "hosts.json", .fix = "write a JSON list" };

    ck_assert_str_eq(read_error("[1,", &r), "hosts.json: invalid JSON at line 1 column 4: the text ends inside the "
                                            "document (truncated?); write a JSON list");
    memset(&err, 0, sizeof(err));
    ck_assert_ptr_null(tbm_json_parse("[1] 2", 5, &err));
    ck_assert_str_eq(err.msg, "invalid JSON at line 1 column 5: unexpected character; capture the output again in "
                              "full");
}
END_TEST

START_TEST(default_limits)
{
    size_t n = TBM_RAW_MAX + 1;
    char *big = malloc(n), *deep = malloc(2 * TBM_JSON_DEPTH + 4);
    json_object *o;
    int i;

    memset(big, ' ', n);
    big[0] = '1';
    ck_assert_ptr_null(tbm_json_read(big, n, NULL, &err));
    ck_assert_str_eq(err.msg, "JSON text of 4194305 bytes exceeds the limit of 4194304 bytes");
    for (i = 0; i < TBM_JSON_DEPTH; i++)
        deep[i] = '[', deep[TBM_JSON_DEPTH + i] = ']';
    o = tbm_json_read(deep, 2 * TBM_JSON_DEPTH, NULL, &err);
    ck_assert_ptr_nonnull(o);
    json_object_put(o);
    memmove(deep + 1, deep, 2 * TBM_JSON_DEPTH);
    deep[0] = '[', deep[2 * TBM_JSON_DEPTH + 1] = ']';
    ck_assert_ptr_null(tbm_json_read(deep, 2 * TBM_JSON_DEPTH + 2, NULL, &err));
    ck_assert_str_eq(err.msg, "invalid JSON at line 1 column 33: nesting too deep");
    free(big);
    free(deep);
}
END_TEST

START_TEST(typed_members)
{
    const char *text = "{\"n\":5,\"big\":9223372036854775808,\"s\":\"x\",\"nul\":\"a\\u0000b\",\"b\":true}";
    json_object *o = tbm_json_read(text, strlen(text), NULL, &err);
    int64_t v = 77;
    const char *s = NULL;
    int b = 9;

    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(tbm_json_get_int(o, "t", "n", 1, 0, 10, &v, &err), 0);
    ck_assert_int_eq(v, 5);
    ck_assert_int_eq(tbm_json_get_int(o, "t", "n", 1, 6, 10, &v, &err), -1);
    ck_assert_str_eq(err.msg, "t: 'n' is 5, outside 6..10");
    ck_assert_int_eq(tbm_json_get_int(o, "t", "big", 1, 0, INT64_MAX, &v, &err), -1);
    ck_assert_int_eq(tbm_json_get_int(o, "t", "s", 1, 0, 1, &v, &err), -1);
    ck_assert_str_eq(err.msg, "t: 's' must be an integer");
    v = 77;
    ck_assert_int_eq(tbm_json_get_int(o, "t", "absent", 0, 0, 1, &v, &err), 0);
    ck_assert_int_eq(v, 77);
    ck_assert_int_eq(tbm_json_get_int(o, "t", "absent", 1, 0, 1, &v, &err), -1);
    ck_assert_str_eq(err.msg, "t: member 'absent' is missing");
    ck_assert_int_eq(tbm_json_get_str(o, "t", "s", 1, 4, &s, &err), 0);
    ck_assert_str_eq(s, "x");
    ck_assert_int_eq(tbm_json_get_str(o, "t", "nul", 1, 4, &s, &err), -1);
    ck_assert_str_eq(err.msg, "t: 'nul' must be a string of 1 to 4 bytes without NUL");
    ck_assert_int_eq(tbm_json_get_bool(o, "t", "b", &b, &err), 0);
    ck_assert_int_eq(b, 1);
    ck_assert_int_eq(tbm_json_get_bool(o, "t", "n", &b, &err), -1);
    ck_assert_str_eq(err.msg, "t: 'n' must be true or false");
    ck_assert_int_eq(tbm_json_get_bool(o, "t", "absent", &b, &err), 0);
    ck_assert_int_eq(b, 0);
    ck_assert_str_eq(tbm_json_str(o, "s"), "x");
    ck_assert_ptr_null(tbm_json_str(o, "nul"));
    ck_assert_ptr_null(tbm_json_typed(o, "n", json_type_string));
    ck_assert_str_eq(tbm_json_type_name(json_type_array), "an array");
    json_object_put(o);
}
END_TEST

static Suite *json_read_suite(void)
{
    Suite *s = suite_create("json_read");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, accepts_documents);
    tcase_add_test(tc, reads_raw_utf8_alike_in_every_json_c);
    tcase_add_test(tc, refuses_a_key_twice);
    tcase_add_test(tc, refuses_bad_text_with_its_place);
    tcase_add_test(tc, says_what_to_do);
    tcase_add_test(tc, default_limits);
    tcase_add_test(tc, typed_members);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(json_read_suite)
