/* test_plist.c: unit tests of lib/plist.c (the strict XML property list reader). */
#include <math.h>
#include <string.h>

#include "tbm_fixture.h"
#include "plist.h"

/* What a reading saw: how many values of each type, the paths in order, and one value looked for. */
typedef struct seen {
    int count[TBM_PLIST_DATA + 1];
    char paths[1 << 18];
    size_t used;            /* of paths */
    const char *want;       /* a path, as tbm_plist_path_text writes it */
    tbm_plist_value_t found;
    int found_n;
    int stop_at;            /* stop with an error at this value (1 = the first); 0: never */
    int values;
} seen_t;

static int collect(const tbm_plist_path_t *path, const tbm_plist_value_t *v, void *arg, tbm_err_t *err)
{
    seen_t *s = arg;
    char p[256];

    s->count[v->type]++;
    tbm_plist_path_text(path, p, sizeof(p));
    if (s->used + strlen(p) + 2 < sizeof(s->paths))
        s->used += (size_t)sprintf(s->paths + s->used, "%s ", p);
    if (s->want && strcmp(p, s->want) == 0) {
        s->found = *v;
        s->found_n++;
    }
    if (++s->values == s->stop_at)
        return tbm_errprintf(err, "stopped at %s", p);
    return 0;
}

static int read_text(const char *text, seen_t *s, tbm_err_t *err)
{
    return tbm_plist_read(text, strlen(text), collect, s, err);
}

#define DOC(body) "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n" body "\n</plist>\n"

START_TEST(fixture_sample)
{
    static seen_t s;
    tbm_err_t err;
    size_t len;
    char *text = tbm_fixture("macos/gpu-m3-ultra/powermetrics.plist", &len);

    s = (seen_t){ .want = "processor/clusters[1]/name" };
    ck_assert_msg(tbm_plist_read(text, len, collect, &s, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(s.found_n, 1);
    ck_assert_int_eq(s.found.type, TBM_PLIST_STRING);
    ck_assert_int_eq((int)s.found.len, 9);
    ck_assert_int_eq(memcmp(s.found.text, "P-Cluster", 9), 0);
    ck_assert_int_eq(s.count[TBM_PLIST_BOOL], 3);          /* is_delta and two hw_resid_counters */
    ck_assert_int_eq(s.count[TBM_PLIST_DATE], 1);
    ck_assert_int_eq(s.count[TBM_PLIST_DICT], 90);
    ck_assert_ptr_nonnull(strstr(s.paths, "(top) is_delta elapsed_ns hw_model "));
    ck_assert_ptr_nonnull(strstr(s.paths, " processor/clusters[0]/cpus[1]/dvfm_states[5]/used_ratio "));
    /* the GPU's idle_ratio is written twice in its dict: both are handed on */
    s = (seen_t){ .want = "gpu/idle_ratio" };
    ck_assert_int_eq(tbm_plist_read(text, len, collect, &s, &err), 0);
    ck_assert_int_eq(s.found_n, 2);
    ck_assert_int_eq(s.found.type, TBM_PLIST_REAL);
    ck_assert(s.found.real == 0.0623);
    ck_assert_int_eq(s.found.line, 516);
    free(text);
}
END_TEST

START_TEST(values_and_forms)
{
    seen_t s = { .want = "a/b[2]" };
    tbm_err_t err;

    ck_assert_msg(read_text(DOC("<dict><key>a</key><dict><key>b</key><array><integer>-4</integer><real>1.5e3</real>"
                                "<integer>+7</integer><dict/><array/><string/><true></true><false/></array>"
                                "<key>t</key><string>x &amp; y &lt; &#60; &#x3c;</string></dict>"
                                "<key>d</key><data>AAEC</data></dict>"), &s, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(s.found.type, TBM_PLIST_INTEGER);
    ck_assert_int_eq(s.found.exact, 1);
    ck_assert(s.found.integer == 7 && s.found.real == 7.0);
    ck_assert_str_eq(s.paths, "(top) a a/b a/b[0] a/b[1] a/b[2] a/b[3] a/b[4] a/b[5] a/b[6] a/b[7] a/t d ");
    ck_assert_int_eq(s.count[TBM_PLIST_BOOL], 2);
    ck_assert_int_eq(s.count[TBM_PLIST_DATA], 1);
    /* a key of its own <key/>, a huge whole number (not exact), NaN and infinities */
    s = (seen_t){ .want = "[0]" };
    ck_assert_int_eq(read_text(DOC("<array><integer>99999999999999999999</integer></array>"), &s, &err), 0);
    ck_assert_int_eq(s.found.exact, 0);
    ck_assert(s.found.real > 9.9e19);
    s = (seen_t){ .want = "[1]" };
    ck_assert_int_eq(read_text(DOC("<array><real>NaN</real><real>-inf</real><real>Infinity</real></array>"), &s,
                               &err), 0);
    ck_assert(isinf(s.found.real) && s.found.real < 0);
    s = (seen_t){ .want = "" };
    ck_assert_int_eq(read_text(DOC("<dict><key/><true/></dict>"), &s, &err), 0);
    ck_assert_str_eq(s.paths, "(top)  ");
    /* no prolog at all, a DOCTYPE, and a <plist/> with nothing in it is refused */
    ck_assert_int_eq(read_text("<plist><true/></plist>", &s, &err), 0);
    ck_assert_int_eq(read_text("<!DOCTYPE plist PUBLIC \"x\" \"y\">\n<plist version=\"1.0\"><false/></plist>", &s,
                               &err), 0);
}
END_TEST

/* Each bad document and the message it gets. */
static const struct {
    const char *text;
    const char *msg;
} refused[] = {
    { "", "line 1: the document is empty: nothing was captured" },
    { "  \n\n", "line 3: the document is empty: nothing was captured" },
    { "Machine model: Mac15,14\n", "line 1: text \"Machine model: Mac15,14\" stands between elements, where only "
                                   "an element may be" },
    { "<dict></dict>", "line 1: the document starts with <dict>, not <plist>" },
    { DOC("<dict><key>a</key><foo/></dict>"), "line 3: <foo> is not a value of a property list (at a)" },
    { DOC("<!-- note --><true/>"), "line 3: \"<!-- note --><true/>\" is not an element of a property list (comments "
                                   "and declarations are not read here)" },
    { DOC("<dict><key>a</key></dict>"), "line 3: the key has no value: </dict> follows it (at a)" },
    { DOC("<dict><true/></dict>"), "line 3: <true> stands in a <dict> where a <key> was expected" },
    { DOC("<array><key>a</key></array>"), "line 3: <key> is not a value of a property list (at [0])" },
    { DOC("<array></dict>"), "line 3: </dict> closes a <array>" },
    { DOC("<integer>12a</integer>"), "line 3: <integer> holds \"12a\", not a whole number" },
    { DOC("<integer></integer>"), "line 3: <integer> holds \"\", not a whole number" },
    { DOC("<integer/>"), "line 3: <integer> holds \"\", not a whole number" },
    { DOC("<real>1e</real>"), "line 3: <real> holds \"1e\", not a number" },
    { DOC("<real>0x10</real>"), "line 3: <real> holds \"0x10\", not a number" },
    { DOC("<string>a &b c</string>"), "line 3: '&' in the text of <string> does not start an entity (&amp; &lt; "
                                      "&gt; &quot; &apos; &#N;)" },
    { DOC("<string>a</strong>"), "line 3: <string> is followed by </strong> where </string> was expected" },
    { DOC("<true>x</true>"), "line 3: text \"x</true>\" stands between elements, where only an element may be" },
    { DOC("<string a=\"1\">x</string>"), "line 3: <string has \"a=\"1\">x</string>\" where '>' was expected (only "
                                         "<plist> may have attributes)" },
    { DOC("<true/><true/>"), "line 3: <true> follows the value; a <plist> holds one value, then </plist>" },
    { DOC("<true/>") "trailing", "line 5: \"trailing\" follows </plist>" },
    { "<plist></plist>", "line 1: </plist> stands where a value was expected" },
    { "<!DOCTYPE plist [ <!ENTITY x \"y\"> ]><plist><true/></plist>",
      "line 1: <!DOCTYPE ...> has an internal subset ('['), which is not read" },
    { "<?xml version=\"1.0\"", "line 1: the text ends inside <?xml ...?>: the output was cut short" },
    { "<plist><dict><key>elapsed_ns</key><integer>12",
      "line 1: the text ends inside <integer>: the output was cut short (at elapsed_ns)" },
    { "<plist><dict><key>processor</key><dict>\n<key>cpu_power</key>\n",
      "line 3: the text ends where an element was expected: the output was cut short (at processor/cpu_power)" },
    { "<plist><array><true/></array></plist", "line 1: the text ends inside </plist>: the output was cut short" },
    { "<plist><array><true/></array><", "line 1: the text ends inside a tag: the output was cut short" },
};

START_TEST(refusals)
{
    seen_t s = { 0 };
    tbm_err_t err;
    size_t i;

    for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        ck_assert_msg(read_text(refused[i].text, &s, &err) == -1, "accepted: %s", refused[i].text);
        ck_assert_str_eq(err.msg, refused[i].msg);
    }
    /* bytes that are not UTF-8, and a NUL */
    ck_assert_int_eq(tbm_plist_read("<plist>\n<string>\xff</string></plist>", 30, collect, &s, &err), -1);
    ck_assert_str_eq(err.msg, "line 2: byte 16 is not UTF-8 text (or is a NUL byte)");
    ck_assert_int_eq(tbm_plist_read("<plist><true/>\0</plist>", 23, collect, &s, &err), -1);
    ck_assert_str_eq(err.msg, "line 1: byte 14 is not UTF-8 text (or is a NUL byte)");
}
END_TEST

/* Every cut of a real sample is refused with a message, never read as a whole. */
START_TEST(every_cut_refused)
{
    tbm_err_t err;
    size_t len, cut;
    char *text = tbm_fixture("macos/gpu-m3-ultra/powermetrics.plist", &len);
    seen_t s;

    for (cut = 0; cut + 2 < len; cut += 7) {
        memset(&s, 0, sizeof(s));
        ck_assert_msg(tbm_plist_read(text, cut, collect, &s, &err) == -1, "a cut at %zu was read whole", cut);
        ck_assert_msg(strncmp(err.msg, "line ", 5) == 0 && strlen(err.msg) > 20, "cut %zu: \"%s\"", cut, err.msg);
    }
    free(text);
}
END_TEST

START_TEST(limits)
{
    char deep[1024] = "<plist>", *text;
    tbm_err_t err;
    seen_t s = { 0 };
    size_t big = TBM_PLIST_SIZE_MAX + 1, i;

    for (i = 0; i < TBM_PLIST_DEPTH_MAX; i++)
        strcat(deep, "<array>");
    strcat(deep, "<true/>");
    for (i = 0; i < TBM_PLIST_DEPTH_MAX; i++)
        strcat(deep, "</array>");
    strcat(deep, "</plist>");
    ck_assert_msg(read_text(deep, &s, &err) == 0, "%s", err.msg);      /* 16 arrays and a value in the last */
    memmove(deep + 14, deep + 7, strlen(deep + 7) + 1);
    memcpy(deep + 7, "<array>", 7);
    ck_assert_int_eq(read_text(deep, &s, &err), -1);
    ck_assert_str_eq(err.msg, "line 1: values are nested more than 16 deep (at [0][0][0][0][0][0][0][0][0][0][0][0]"
                              "[0][0][0][0])");
    text = malloc(big);
    memset(text, ' ', big);
    ck_assert_int_eq(tbm_plist_read(text, big, collect, &s, &err), -1);
    ck_assert_str_eq(err.msg, "the document is 4194305 bytes, more than the 4194304 read");
    snprintf(text, big, "<plist><string>");
    memset(text + 15, 'x', TBM_PLIST_TEXT_MAX + 1);
    strcpy(text + 15 + TBM_PLIST_TEXT_MAX + 1, "</string></plist>");
    ck_assert_int_eq(read_text(text, &s, &err), -1);
    ck_assert_str_eq(err.msg, "line 1: the text of <string> is longer than 65536 bytes");
    free(text);
}
END_TEST

START_TEST(callback_stops)
{
    seen_t s = { .stop_at = 3 };
    tbm_err_t err;

    ck_assert_int_eq(read_text(DOC("<array><true/><false/><true/></array>"), &s, &err), -1);
    ck_assert_str_eq(err.msg, "stopped at [1]");
    ck_assert_int_eq(s.values, 3);
}
END_TEST

START_TEST(paths)
{
    tbm_plist_path_t p = { .depth = 3 };
    const char *keys[] = { "processor", "clusters" };
    char buf[64];

    p.step[0] = (tbm_plist_step_t){ "processor", 9, 0 };
    p.step[1] = (tbm_plist_step_t){ "clusters", 8, 0 };
    p.step[2] = (tbm_plist_step_t){ NULL, 0, 12 };
    tbm_plist_path_text(&p, buf, sizeof(buf));
    ck_assert_str_eq(buf, "processor/clusters[12]");
    tbm_plist_path_text(&p, buf, 12);
    ck_assert_str_eq(buf, "processor/c");
    ck_assert(!tbm_plist_path_is(&p, 2, keys));
    p.depth = 2;
    ck_assert(tbm_plist_path_is(&p, 2, keys));
    ck_assert(!tbm_plist_path_is(&p, 1, keys));
    p.step[1].key_len = 7;
    ck_assert(!tbm_plist_path_is(&p, 2, keys));
    ck_assert_str_eq(tbm_plist_type_name(TBM_PLIST_DATE), "date");
}
END_TEST

static Suite *plist_suite(void)
{
    Suite *s = suite_create("plist");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, fixture_sample);
    tcase_add_test(tc, values_and_forms);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, every_cut_refused);
    tcase_add_test(tc, limits);
    tcase_add_test(tc, callback_stops);
    tcase_add_test(tc, paths);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(plist_suite)
