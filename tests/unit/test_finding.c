/* test_finding.c: unit tests of lib/finding.c. */
#include "tbm_check.h"
#include <string.h>

#include "finding.h"

START_TEST(add_and_find)
{
    tbm_findings_t fs;
    const tbm_finding_t *f;

    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_finding_add(&fs, TBM_SEV_WARNING, "os-mismatch", "mac02", "upgrade mac02",
                                     "macOS %s differs from %s", "26.1", "26.2"), 0);
    ck_assert_int_eq(tbm_finding_add(&fs, TBM_SEV_ERROR, "cable-one-sided", "mac01:en2", "reseat it",
                                     "seen from one end only"), 0);
    ck_assert_uint_eq(tbm_findings_count(&fs, TBM_SEV_INFO), 2);
    ck_assert_uint_eq(tbm_findings_count(&fs, TBM_SEV_ERROR), 1);
    f = tbm_findings_find(&fs, "os-mismatch");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->what, "macOS 26.1 differs from 26.2");
    ck_assert_str_eq(f->where, "mac02");
    ck_assert_str_eq(tbm_severity_name(f->severity), "warning");
    ck_assert_ptr_null(tbm_findings_find(&fs, "nope"));
    /* text echoed from an input keeps to one printable line: control bytes become '?' */
    tbm_finding_add(&fs, TBM_SEV_ERROR, "echo", "out\tput", "run it\r\nagain", "said \"t\nt\x1b[0m\x7f\xc3\xa9\"");
    f = tbm_findings_find(&fs, "echo");
    ck_assert_str_eq(f->what, "said \"t?t?[0m?\xc3\xa9\"");
    ck_assert_str_eq(f->where, "out?put");
    ck_assert_str_eq(f->fix, "run it??again");
    tbm_findings_free(&fs);
    ck_assert_uint_eq(fs.n, 0);
}
END_TEST

START_TEST(bounded_and_counts_dropped)
{
    tbm_findings_t fs;
    size_t i;

    tbm_findings_init(&fs);
    for (i = 0; i < TBM_FINDINGS_MAX; i++)
        ck_assert_int_eq(tbm_finding_add(&fs, TBM_SEV_INFO, "x", NULL, NULL, "n=%zu", i), 0);
    ck_assert_int_eq(tbm_finding_add(&fs, TBM_SEV_INFO, "x", NULL, NULL, "one too many"), -1);
    ck_assert_uint_eq(fs.n, TBM_FINDINGS_MAX);
    ck_assert_uint_eq(fs.dropped, 1);
    /* a dropped finding still makes the list count as failed */
    ck_assert_uint_eq(tbm_findings_count(&fs, TBM_SEV_ERROR), 1);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(long_text_is_cut_not_overflowed)
{
    tbm_findings_t fs;
    char big[2000];

    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    tbm_findings_init(&fs);
    tbm_finding_add(&fs, TBM_SEV_ERROR, big, big, big, "%s", big);
    ck_assert_uint_eq(strlen(fs.items[0].code), TBM_FINDING_CODE_MAX - 1);
    ck_assert_uint_eq(strlen(fs.items[0].what), TBM_FINDING_TEXT_MAX - 1);
    tbm_findings_free(&fs);
}
END_TEST

/* A text too long is cut after its last whole word that fits and marked, never inside a word. */
START_TEST(long_words_are_cut_between_words)
{
    tbm_findings_t fs;
    char text[1200], out[40];
    size_t n;

    text[0] = '\0';
    while (strlen(text) < sizeof(text) - 16)
        strcat(text, "salloc: error: ");
    tbm_findings_init(&fs);
    tbm_finding_add(&fs, TBM_SEV_ERROR, "c", "w", "f", "job 7 did not get 4 Macs: %s", text);
    n = strlen(fs.items[0].what);
    ck_assert_uint_lt(n, TBM_FINDING_TEXT_MAX);
    ck_assert_str_eq(fs.items[0].what + n - 4, " ...");
    /* what comes before the mark is whole words of the text */
    ck_assert_msg(!strncmp(fs.items[0].what, "job 7 did not get 4 Macs: salloc: error:", 40), "%s", fs.items[0].what);
    {   /* the word before the mark is one of the text's: "error" or "salloc" */
        const char *w = fs.items[0].what + n - 4, *b = w;
        while (b > fs.items[0].what && b[-1] != ' ')
            b--;
        ck_assert_msg(!strncmp(b, "error", (size_t)(w - b)) || !strncmp(b, "salloc", (size_t)(w - b)), "%.*s",
                      (int)(w - b), b);
        ck_assert_msg(w - b == 5 || w - b == 6, "cut inside a word: '%.*s'", (int)(w - b), b);
    }
    tbm_findings_free(&fs);
    tbm_text_fit(out, sizeof(out), "short enough");
    ck_assert_str_eq(out, "short enough");
    tbm_text_fit(out, sizeof(out), "the cable mac01:en2 to mac02:en2 is not there at all");
    ck_assert_str_eq(out, "the cable mac01:en2 to mac02:en2 is ...");
    tbm_text_fit(out, 4, "abcdef");
    ck_assert_str_eq(out, "abc");
    /* cut between characters, never inside one (each \xc3\xa9 is one: é) */
    tbm_text_fit(out, 12, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    ck_assert_str_eq(out, "\xc3\xa9\xc3\xa9\xc3\xa9 ...");
    tbm_text_fit(out, 4, "\xc3\xa9\xc3\xa9\xc3\xa9");
    ck_assert_str_eq(out, "\xc3\xa9");
    ck_assert_uint_eq(tbm_utf8_fit("\xc3\xa9\xc3\xa9\xc3\xa9", 5), 4);
    ck_assert_uint_eq(tbm_utf8_fit("\xe2\x82\xac\xe2\x82\xac", 4), 3);   /* € is three bytes */
    ck_assert_uint_eq(tbm_utf8_fit("abc", 5), 3);
    ck_assert_uint_eq(tbm_utf8_fit("abc", 2), 2);
}
END_TEST

static Suite *finding_suite(void)
{
    Suite *s = suite_create("finding");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, add_and_find);
    tcase_add_test(tc, bounded_and_counts_dropped);
    tcase_add_test(tc, long_text_is_cut_not_overflowed);
    tcase_add_test(tc, long_words_are_cut_between_words);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(finding_suite)
