/* test_health_verdict.c: unit tests of lib/health_verdict.c, the health check's last verdict on a Mac as a
 * file: written and read back; garbage, truncated, oversized and lying files refused with the reason. */
#include "tbm_check.h"

#include <string.h>

#include "health.h"

static tbm_health_verdict_t unwell(void)
{
    tbm_health_verdict_t v = { .node = "mac03", .verdict = TBM_HEALTH_UNWELL, .time = 1736850067,
                               .reason = "tbmesh: cable-missing at mac03:en2 <-> mac04:en2: nothing is at the "
                                         "other end of Thunderbolt 1 (and 1 more)" };
    return v;
}

START_TEST(written_and_read_back)
{
    tbm_health_verdict_t v = unwell(), back;
    tbm_err_t err = { { 0 } };
    char *text = tbm_health_verdict_json(&v, &err), name[64];
    const char *later = "{\"node\":\"mac01\",\"verdict\":\"well\",\"time\":1,\"checks\":[1,2]}";   /* no reason;
                                                                           a later release's member, skipped */

    ck_assert_msg(text != NULL, "%s", err.msg);
    ck_assert_str_eq(text, "{\"node\":\"mac03\",\"verdict\":\"unwell\",\"reason\":\"tbmesh: cable-missing at "
                           "mac03:en2 <-> mac04:en2: nothing is at the other end of Thunderbolt 1 (and 1 more)\","
                           "\"time\":1736850067}\n");
    ck_assert_int_eq(tbm_health_verdict_parse(text, strlen(text), "mac03", &back, &err), 0);
    ck_assert_str_eq(back.node, "mac03");
    ck_assert_int_eq(back.verdict, TBM_HEALTH_UNWELL);
    ck_assert_str_eq(back.reason, v.reason);
    ck_assert_int_eq(back.time, 1736850067);
    free(text);
    ck_assert_int_eq(tbm_health_verdict_parse(later, strlen(later), NULL, &back, &err), 0);
    ck_assert_int_eq(back.verdict, TBM_HEALTH_WELL);
    ck_assert_str_eq(back.reason, "");
    ck_assert_str_eq(tbm_health_state_name(TBM_HEALTH_UNKNOWN), "unknown");
    ck_assert_int_eq(tbm_health_verdict_file("mac01", name, sizeof(name)), 0);
    ck_assert_str_eq(name, "mac01.json");
    ck_assert_int_eq(tbm_health_verdict_file("../etc/x", name, sizeof(name)), -1);
    ck_assert_int_eq(tbm_health_verdict_file(".hidden", name, sizeof(name)), -1);
    ck_assert_int_eq(tbm_health_verdict_file("mac01", name, 8), -1);
}
END_TEST

START_TEST(writer_refuses_what_the_reader_would)
{
    tbm_health_verdict_t v = unwell();
    tbm_err_t err = { { 0 } };

    snprintf(v.reason, sizeof(v.reason), "line\nbreak");
    ck_assert_ptr_null(tbm_health_verdict_json(&v, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "would refuse"));
    v = unwell();
    snprintf(v.node, sizeof(v.node), "mac/03");
    ck_assert_ptr_null(tbm_health_verdict_json(&v, &err));
    v = unwell();
    v.time = 0;
    ck_assert_ptr_null(tbm_health_verdict_json(&v, &err));
}
END_TEST

static void refused(const char *text, size_t len, const char *node, const char *words)
{
    tbm_health_verdict_t v;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_health_verdict_parse(text, len, node, &v, &err), -1);
    ck_assert_msg(strstr(err.msg, words) != NULL, "[%s] has no [%s]", err.msg, words);
}

#define REFUSED(text, node, words) refused(text, strlen(text), node, words)

START_TEST(bad_files_are_refused)
{
    static const char good[] = "{\"node\":\"mac03\",\"verdict\":\"unwell\",\"reason\":\"x\",\"time\":1736850067}";
    char *big = malloc(TBM_HEALTH_VERDICT_BYTES + 100);
    size_t n;

    for (n = 0; n < sizeof(good) - 1; n++)   /* every truncation */
        refused(good, n, "mac03", "health verdict");
    REFUSED("\x89PNG\r\n\x1a\n", NULL, "invalid JSON");
    REFUSED("", NULL, "health verdict");
    REFUSED("[1,2]", NULL, "health verdict");
    REFUSED("{\"node\":\"mac03\",\"verdict\":\"unwell\",\"time\":1} {}", NULL, "health verdict");
    REFUSED("{\"node\":\"mac04\",\"verdict\":\"well\",\"time\":1}", "mac03", "about 'mac04', not mac03");
    REFUSED("{\"node\":\"../x\",\"verdict\":\"well\",\"time\":1}", NULL, "not a host name");
    REFUSED("{\"node\":\"mac03\",\"verdict\":\"fine\",\"time\":1}", NULL, "'fine' is no verdict");
    REFUSED("{\"node\":\"mac03\",\"verdict\":\"well\"}", NULL, "'time'");
    REFUSED("{\"node\":\"mac03\",\"verdict\":\"well\",\"time\":0}", NULL, "outside");
    REFUSED("{\"node\":\"mac03\",\"verdict\":\"well\",\"time\":99999999999}", NULL, "outside");
    REFUSED("{\"node\":\"mac03\",\"verdict\":\"well\",\"time\":\"1\"}", NULL, "'time' must be an integer");
    REFUSED("{\"node\":\"mac03\",\"verdict\":\"well\",\"time\":1,\"reason\":7}", NULL, "'reason' must be a string");
    REFUSED("{\"node\":\"mac03\",\"verdict\":\"well\",\"time\":1,\"reason\":\"a\\u0007b\"}", NULL, "control");
    REFUSED("{\"node\":\"mac03\",\"node\":\"mac04\",\"verdict\":\"well\",\"time\":1}", NULL, "health verdict");
    /* a reason longer than kept, and a file past its bound */
    n = (size_t)snprintf(big, 100, "{\"node\":\"mac03\",\"verdict\":\"unwell\",\"time\":1,\"reason\":\"");
    memset(big + n, 'r', 300);
    strcpy(big + n + 300, "\"}");
    REFUSED(big, NULL, "longer than 255");
    memset(big + n, 'r', TBM_HEALTH_VERDICT_BYTES);
    strcpy(big + n + TBM_HEALTH_VERDICT_BYTES, "\"}");
    REFUSED(big, NULL, "health verdict");
    free(big);
}
END_TEST

static Suite *verdict_suite(void)
{
    Suite *s = suite_create("health_verdict");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, written_and_read_back);
    tcase_add_test(tc, writer_refuses_what_the_reader_would);
    tcase_add_test(tc, bad_files_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(verdict_suite)
