/* test_parse_ioreg.c: unit tests of lib/parse_ioreg.c (ioreg's IOAccelerator objects). */
#include <string.h>

#include "tbm_fixture.h"
#include "parse_ioreg.h"

#define FIX "capture `ioreg -r -d 1 -w 0 -c IOAccelerator` again, with all of its output"
#define OBJ "+-o AGXAcceleratorG13X  <class AGXAcceleratorG13X, id 0x100000947, registered, matched, active>\n"

static int parse_fixture(const char *rel, tbm_ioreg_t *out, tbm_err_t *err)
{
    size_t len;
    char *text = tbm_fixture(rel, &len);
    int rc = tbm_parse_ioreg(text, len, out, err);

    free(text);
    return rc;
}

static int parse_text(const char *text, tbm_ioreg_t *out, tbm_err_t *err)
{
    return tbm_parse_ioreg(text, strlen(text), out, err);
}

static void is(tbm_reading_t r, double want)
{
    ck_assert_msg(r.reported, "not reported, want %g", want);
    ck_assert_msg(r.value == want, "%.17g, want %.17g", r.value, want);
}

START_TEST(m3_ultra)
{
    tbm_ioreg_t out;
    const tbm_ioreg_gpu_t *g = &out.gpu[0];
    tbm_err_t err;

    ck_assert_msg(parse_fixture("macos/gpu-m3-ultra/ioreg.txt", &out, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(out.n, 1);
    ck_assert_str_eq(g->ioclass, "AGXAcceleratorG15X");
    ck_assert_str_eq(g->model, "Apple M3 Ultra");
    ck_assert_int_eq(g->gpu_cores, 80);
    ck_assert_int_eq(g->has_stats, 1);
    is(g->device_util, 93);
    is(g->renderer_util, 88);
    is(g->tiler_util, 41);
    is(g->mem_in_use, 68719476736.0);     /* not "In use system memory (driver)" */
    is(g->mem_alloc, 87943626752.0);
}
END_TEST

START_TEST(absent_keys_not_reported)
{
    tbm_ioreg_t out;
    const tbm_ioreg_gpu_t *g = &out.gpu[0];
    tbm_err_t err;

    ck_assert_msg(parse_fixture("macos/malformed/ioreg_no_stats.txt", &out, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(out.n, 1);
    ck_assert_int_eq(g->has_stats, 0);
    ck_assert(!g->device_util.reported && !g->renderer_util.reported && !g->tiler_util.reported);
    ck_assert(!g->mem_in_use.reported && !g->mem_alloc.reported);
    ck_assert_str_eq(g->model, "Apple M3 Ultra");
    /* only some counters, no model, no core count; the tree's '|' drawn before the lines */
    ck_assert_msg(parse_text(OBJ "  | {\n  |   \"PerformanceStatistics\" = {\"Device Utilization %\"=0,\"x\"=1}\n"
                             "  | }\n  | \n", &out, &err) == 0, "%s", err.msg);
    is(g->device_util, 0);
    ck_assert(!g->renderer_util.reported && !g->mem_alloc.reported);
    ck_assert_str_eq(g->model, "");
    ck_assert_int_eq(g->gpu_cores, -1);
    ck_assert_str_eq(g->ioclass, "AGXAcceleratorG13X");
    /* no accelerator at all: an empty output */
    ck_assert_int_eq(parse_text("", &out, &err), 0);
    ck_assert_int_eq(out.n, 0);
    ck_assert_int_eq(tbm_parse_ioreg(NULL, 0, &out, &err), 0);
}
END_TEST

START_TEST(value_forms)
{
    tbm_ioreg_t out;
    const tbm_ioreg_gpu_t *g = &out.gpu[1];
    tbm_err_t err;

    /* two objects; nested values, a '}' inside a text, blanks around '=', the same key in another dict, a
     * model written as data */
    ck_assert_msg(parse_text("+-o IOAcceleratorHelper  <class IOAccelerator>\n    {\n      \"IOClass\" = \"x\"\n    }\n"
                             OBJ "    {\n"
                             "      \"OtherStatistics\" = {\"Device Utilization %\"=99}\n"
                             "      \"PerformanceStatistics\" = {\"Note\"=\"} not the end\",\"q\"={\"a\"=(1,<0a0b>,"
                             "Yes),\"b\"=()},\"Device Utilization %\" = 7 , \"Tiler Utilization %\"=100}\n"
                             "      \"model\" = <\"Apple M1 Max\">\n"
                             "      \"gpu-core-count\" = 32\n    }\n", &out, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(out.n, 2);
    ck_assert_str_eq(out.gpu[0].ioclass, "IOAccelerator");
    ck_assert_int_eq(out.gpu[0].has_stats, 0);
    is(g->device_util, 7);
    is(g->tiler_util, 100);
    ck_assert_str_eq(g->model, "Apple M1 Max");
    ck_assert_int_eq(g->gpu_cores, 32);
    /* a number at the very end of an output that has no NUL after it (read within its length only) */
    {
        static const char tail[] = OBJ "{\n\"gpu-core-count\" = 12";
        char *exact = malloc(sizeof(tail) - 1);

        memcpy(exact, tail, sizeof(tail) - 1);
        ck_assert_int_eq(tbm_parse_ioreg(exact, sizeof(tail) - 1, &out, &err), -1);
        ck_assert_str_eq(err.msg, "ioreg output, line 3: the output ends inside the properties of "
                                  "AGXAcceleratorG13X (from line 1): it was cut short; " FIX);
        free(exact);
    }
    /* an object named without "<class ...>" */
    ck_assert_int_eq(parse_text("+-o AGXAcceleratorG16G\n{\n}\n", &out, &err), 0);
    ck_assert_str_eq(out.gpu[0].ioclass, "AGXAcceleratorG16G");
}
END_TEST

START_TEST(damaged_fixtures)
{
    tbm_ioreg_t out;
    tbm_err_t err;

    ck_assert_int_eq(parse_fixture("macos/malformed/ioreg_truncated.txt", &out, &err), -1);
    ck_assert_str_eq(err.msg, "ioreg output, line 13: the output ends inside the properties of AGXAcceleratorG15X "
                              "(from line 1): it was cut short; " FIX);
    ck_assert_int_eq(out.n, 0);
    ck_assert_int_eq(parse_fixture("macos/malformed/ioreg_bad_percent.txt", &out, &err), -1);
    ck_assert_str_eq(err.msg, "ioreg output, line 12: \"Device Utilization %\" is 140, above 100; " FIX);
    ck_assert_int_eq(parse_fixture("macos/malformed/ioreg_stats_not_closed.txt", &out, &err), -1);
    ck_assert_str_eq(err.msg, "ioreg output, line 12: PerformanceStatistics: the dictionary is not closed on its line; "
                              FIX);
    ck_assert_int_eq(parse_fixture("macos/malformed/ioreg_garbage.txt", &out, &err), -1);
    ck_assert_str_eq(err.msg, "ioreg output, line 1: \"ioreg: the class IOAccelerator was not f\" comes before the "
                              "first object (a line \"+-o ...\"): this is not ioreg's output; " FIX);
}
END_TEST

/* Bad outputs and their messages (after "ioreg output, "; each ends with FIX). */
static const struct {
    const char *text;
    const char *msg;
} refused[] = {
    { "{\n", "line 1: \"{\" comes before the first object (a line \"+-o ...\"): this is not ioreg's output" },
    { OBJ "\"model\" = \"x\"\n", "line 2: \"\"model\" = \"x\"\" is not a line of ioreg's output (a property outside "
                                 "an object's \"{\" ... \"}\")" },
    { OBJ "{\n{\n", "line 3: a second \"{\" in the properties of AGXAcceleratorG13X" },
    { OBJ "}\n", "line 2: \"}\" closes nothing" },
    { OBJ "{\n" OBJ, "line 3: a new object starts while the properties of AGXAcceleratorG13X (line 1) are not "
                     "closed: the output was cut short" },
    { OBJ "{\nmodel = 3\n}\n", "line 3: \"model = 3\" is not a line of ioreg's output" },
    { OBJ "{\n\"model = 3\n}\n", "line 3: \"\"model = 3\" is not a property \"key\" = value: its key is not closed" },
    { OBJ "{\n\"model\" 3\n}\n", "line 3: \"\"model\" 3\" is not a property \"key\" = value" },
    { OBJ "{\n\"gpu-core-count\" = many\n}\n", "line 3: \"gpu-core-count\" is \"many\", not a whole number" },
    { OBJ "{\n\"gpu-core-count\" = 100001\n}\n", "line 3: \"gpu-core-count\" is 100001, above 100000" },
    { OBJ "{\n\"PerformanceStatistics\" = 5\n}\n", "line 3: PerformanceStatistics is \"5\", not a dictionary {...}" },
    { OBJ "{\n\"PerformanceStatistics\" = {}\n\"PerformanceStatistics\" = {}\n}\n",
      "line 4: PerformanceStatistics appears twice in the properties of AGXAcceleratorG13X" },
    { OBJ "{\n\"PerformanceStatistics\" = {\"Device Utilization %\"=;}\n}\n",
      "line 3: PerformanceStatistics, at \"Device Utilization %\": a value starts with a character no value starts "
      "with" },
    { OBJ "{\n\"PerformanceStatistics\" = {\"Device Utilization %\"=-5}\n}\n",
      "line 3: \"Device Utilization %\" is \"-5\", not a whole number" },
    { OBJ "{\n\"PerformanceStatistics\" = {\"In use system memory\"=1.5e9}\n}\n",
      "line 3: \"In use system memory\" is \"1.5e9\", not a whole number" },
    { OBJ "{\n\"PerformanceStatistics\" = {\"a\"={\"b\"=(1,2}}\n}\n",
      "line 3: PerformanceStatistics, at \"a\": a value is followed by neither ',' nor its closing" },
    { OBJ "{\n\"PerformanceStatistics\" = {\"a\"=\"open}\n}\n",
      "line 3: PerformanceStatistics, at \"a\": a quoted text is not closed" },
    { OBJ "{\n\"PerformanceStatistics\" = {\"a\"=<0a0b}\n}\n",
      "line 3: PerformanceStatistics, at \"a\": a <data> value is not closed" },
    { OBJ "{\n\"PerformanceStatistics\" = {\"a\"=1 \"b\"=2}\n}\n",
      "line 3: PerformanceStatistics: \"a\" is followed by neither ',' nor '}'" },
    { OBJ "{\n\"PerformanceStatistics\" = {\"a\"=1} x\n}\n",
      "line 3: PerformanceStatistics: \" x\" follows its closing '}'" },
    { OBJ "{\n\"PerformanceStatistics\" = {a=1}\n}\n", "line 3: PerformanceStatistics: a key is not a quoted name" },
    { OBJ "{\n\"PerformanceStatistics\" = {\"a\"}\n}\n", "line 3: PerformanceStatistics: \"a\" is not followed by '='" },
    { OBJ "{\n\"PerformanceStatistics\" = {\"a\"={{}}}\n}\n",
      "line 3: PerformanceStatistics, at \"a\": a key of a dictionary is not a quoted name" },
    { OBJ "{\n\"PerformanceStatistics\" = {\"a\"=((((((((((1))))))))))}\n}\n",
      "line 3: PerformanceStatistics, at \"a\": values are nested too deep" },
    { "+-o \n", "line 1: \"+-o\" names no object" },
};

START_TEST(refusals)
{
    tbm_ioreg_t out;
    char want[1024];
    tbm_err_t err;
    size_t i;

    for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        snprintf(want, sizeof(want), "ioreg output, %s; " FIX, refused[i].msg);
        ck_assert_msg(parse_text(refused[i].text, &out, &err) == -1, "accepted: %s", refused[i].text);
        ck_assert_str_eq(err.msg, want);
        ck_assert_int_eq(out.n, 0);
    }
}
END_TEST

START_TEST(limits)
{
    static char text[4096];
    tbm_ioreg_t out;
    tbm_err_t err;
    char *big, *p;
    int i;

    for (i = 0; i < TBM_IOREG_GPUS_MAX; i++)
        strcat(text, OBJ "{\n}\n");
    ck_assert_int_eq(parse_text(text, &out, &err), 0);
    ck_assert_int_eq(out.n, TBM_IOREG_GPUS_MAX);
    strcat(text, OBJ);
    ck_assert_int_eq(parse_text(text, &out, &err), -1);
    ck_assert_str_eq(err.msg, "ioreg output, line 25: more than 8 accelerator objects; " FIX);
    ck_assert_int_eq(parse_text(OBJ "{\n\"model\" = \"\xff\"\n}\n", &out, &err), -1);
    ck_assert_str_eq(err.msg, "ioreg output, byte 109: not UTF-8 text (or a NUL byte); " FIX);
    big = malloc(TBM_RAW_MAX + 1);
    memset(big, '\n', TBM_RAW_MAX + 1);
    ck_assert_int_eq(tbm_parse_ioreg(big, TBM_RAW_MAX + 1, &out, &err), -1);
    ck_assert_str_eq(err.msg, "ioreg output is 4194305 bytes, more than the 4194304 read; " FIX);
    /* a long line is read whole (-w 0 prints IOReportLegend on one line of tens of KB) */
    p = big + snprintf(big, TBM_RAW_MAX, OBJ "{\n\"IOReportLegend\" = (");
    for (i = 0; i < 20000; i++, p += 8)
        memcpy(p, "{\"a\"=1},", 8);
    strcpy(p, "{})\n\"PerformanceStatistics\" = {\"Device Utilization %\"=3}\n}\n");
    ck_assert_msg(parse_text(big, &out, &err) == 0, "%s", err.msg);
    is(out.gpu[0].device_util, 3);
    free(big);
}
END_TEST

static Suite *ioreg_suite(void)
{
    Suite *s = suite_create("parse_ioreg");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, m3_ultra);
    tcase_add_test(tc, absent_keys_not_reported);
    tcase_add_test(tc, value_forms);
    tcase_add_test(tc, damaged_fixtures);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, limits);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(ioreg_suite)
