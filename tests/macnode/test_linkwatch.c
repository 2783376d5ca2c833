/* test_linkwatch.c: the watch request's link states and coalescing (macnode/linkwatch.c): a change counts
 * once, at most one message per interface per LINKWATCH_GAP_MS carrying the state it has then, a change
 * undone within the gap says nothing, unfollowed interfaces and a full table are ignored; and the OS's
 * current states (linkmon_states) name the loopback interface. */
#include <stdio.h>
#include <string.h>

#include "linkmon.h"
#include "linkwatch.h"
#include "tbm_check.h"

static linkwatch_t w;

static void setup(void)
{
    linkwatch_init(&w);
    ck_assert_int_eq(linkwatch_add(&w, "en2", 1), 0);
    ck_assert_int_eq(linkwatch_add(&w, "en3", 1), 0);
}

/* The next due message as "en2 down 1", or "" when none is due. */
static const char *due(int64_t now)
{
    static char buf[64];
    const char *name;
    int up;
    int64_t seq;

    if (!linkwatch_due(&w, now, &name, &up, &seq))
        return "";
    snprintf(buf, sizeof(buf), "%s %s %lld", name, up ? "up" : "down", (long long)seq);
    return buf;
}

START_TEST(first_states_say_nothing)
{
    ck_assert_str_eq(due(1000), "");
    ck_assert_int_eq(linkwatch_wait_ms(&w, 1000), -1);
    ck_assert_int_eq(linkwatch_report(&w, "en2", 1), 0);   /* no change */
    ck_assert_int_eq(linkwatch_add(&w, "en2", 0), 0);      /* followed already: kept as it was */
    ck_assert_int_eq(linkwatch_report(&w, "en2", 1), 0);
    ck_assert_int_eq(w.seq, 0);
}
END_TEST

START_TEST(a_change_is_sent_at_once_then_coalesced)
{
    ck_assert_int_eq(linkwatch_report(&w, "en2", 0), 1);
    ck_assert_int_eq(linkwatch_wait_ms(&w, 1000), 0);
    ck_assert_str_eq(due(1000), "en2 down 1");
    ck_assert_str_eq(due(1000), "");
    /* up, down, up within the gap: one message, the last state, when the gap is over */
    ck_assert_int_eq(linkwatch_report(&w, "en2", 1), 1);
    ck_assert_int_eq(linkwatch_report(&w, "en2", 0), 1);
    ck_assert_int_eq(linkwatch_report(&w, "en2", 1), 1);
    ck_assert_int_eq(linkwatch_wait_ms(&w, 1050), LINKWATCH_GAP_MS - 50);
    ck_assert_str_eq(due(1050), "");
    ck_assert_str_eq(due(1000 + LINKWATCH_GAP_MS), "en2 up 4");
    ck_assert_int_eq(linkwatch_wait_ms(&w, 1000 + LINKWATCH_GAP_MS), -1);
}
END_TEST

START_TEST(a_change_undone_within_the_gap_says_nothing)
{
    ck_assert_int_eq(linkwatch_report(&w, "en3", 0), 1);
    ck_assert_str_eq(due(500), "en3 down 1");
    ck_assert_int_eq(linkwatch_report(&w, "en3", 1), 1);
    ck_assert_int_eq(linkwatch_report(&w, "en3", 0), 1);
    ck_assert_str_eq(due(500 + LINKWATCH_GAP_MS), "");
    ck_assert_int_eq(linkwatch_wait_ms(&w, 500 + LINKWATCH_GAP_MS), -1);
    ck_assert_int_eq(w.seq, 3);   /* the counter saw every change */
}
END_TEST

START_TEST(interfaces_are_coalesced_each_on_its_own)
{
    ck_assert_int_eq(linkwatch_report(&w, "en2", 0), 1);
    ck_assert_str_eq(due(0), "en2 down 1");
    ck_assert_int_eq(linkwatch_report(&w, "en3", 0), 1);
    ck_assert_str_eq(due(10), "en3 down 2");   /* en2's gap does not hold en3 */
    ck_assert_int_eq(linkwatch_report(&w, "en2", 1), 1);
    ck_assert_int_eq(linkwatch_wait_ms(&w, 100), LINKWATCH_GAP_MS - 100);
    ck_assert_str_eq(due(LINKWATCH_GAP_MS), "en2 up 3");
}
END_TEST

START_TEST(unfollowed_and_too_many_are_ignored)
{
    char name[16];
    int i;

    ck_assert_int_eq(linkwatch_report(&w, "en0", 0), 0);
    ck_assert_int_eq(linkwatch_add(&w, "", 1), -1);
    ck_assert_int_eq(linkwatch_add(&w, "a-name-too-long-for-ifnamsiz", 1), -1);
    for (i = 2; i < LINKWATCH_MAX; i++) {
        snprintf(name, sizeof(name), "en%d", 10 + i);
        ck_assert_int_eq(linkwatch_add(&w, name, 1), 0);
    }
    ck_assert_int_eq(w.n, LINKWATCH_MAX);
    ck_assert_int_eq(linkwatch_add(&w, "en99", 1), -1);
    ck_assert_uint_eq(w.ignored, 3);
    ck_assert_int_eq(linkwatch_report(&w, "en99", 0), 0);
    ck_assert_str_eq(due(0), "");
}
END_TEST

static void saw(void *ctx, const char *name, int up)
{
    if (strcmp(name, "lo") == 0 || strcmp(name, "lo0") == 0)
        *(int *)ctx = up ? 1 : 2;
}

START_TEST(the_os_names_its_loopback_up)
{
    tbm_err_t err = { { 0 } };
    int lo = 0;

    ck_assert_msg(linkmon_states(saw, &lo, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(lo, 1);
}
END_TEST

static Suite *linkwatch_suite(void)
{
    Suite *s = suite_create("linkwatch");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, first_states_say_nothing);
    tcase_add_test(tc, a_change_is_sent_at_once_then_coalesced);
    tcase_add_test(tc, a_change_undone_within_the_gap_says_nothing);
    tcase_add_test(tc, interfaces_are_coalesced_each_on_its_own);
    tcase_add_test(tc, unfollowed_and_too_many_are_ignored);
    tcase_add_test(tc, the_os_names_its_loopback_up);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(linkwatch_suite)
