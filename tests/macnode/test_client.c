/* test_client.c: the forwarder's launch times (client.c): the SPANK plug-in's stamps as macnode exec reads
 * them from $TBMESH_LAUNCH_STAMPS, and the line of parts --verbose prints. */
#include <string.h>

#include "client.h"
#include "tbm_check.h"

START_TEST(stamps_are_three_rising_numbers)
{
    client_launch_t l = { 0 };

    ck_assert_int_eq(client_launch_stamps("1000 1800 2500", &l), 0);
    ck_assert(l.grant_start == 1000 && l.grant_end == 1800 && l.exec == 2500);
}
END_TEST

START_TEST(bad_stamps_are_left_out)
{
    static const char *const bad[] = { "", "1000", "1000 1800", "1000 1800 2500 3000", "1000 900 2500",
                                       "1000 1800 1700", "0 1 2", "-5 1 2", "1000 1800 2500x", "a b c" };
    client_launch_t l = { 0 };
    size_t i;

    ck_assert_int_eq(client_launch_stamps(NULL, &l), -1);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(client_launch_stamps(bad[i], &l) == -1, "'%s' was taken", bad[i]);
        ck_assert(l.grant_start == 0 && l.grant_end == 0 && l.exec == 0);
    }
}
END_TEST

START_TEST(the_line_names_every_part_in_ms)
{
    client_launch_t l = { .grant_start = 1000, .grant_end = 1840, .exec = 2000, .main = 4100,
                          .open = { .cred = 4610, .connect = 4730, .welcome = 6660 }, .started = 9680,
                          .first_output = 10120, .exit = 10920 };
    char line[512];

    client_launch_line(&l, line, sizeof(line));
    ck_assert_str_eq(line, "grant=0.84 stepd=0.16 exec=2.10 credential=0.51 connect=0.12 authenticate=1.93 spawn=3.02 "
                           "first_output=0.44 total=9.12 end=0.80");
}
END_TEST

START_TEST(missing_stamps_give_dashes)
{
    /* run by hand: no plug-in stamps; a task without output */
    client_launch_t l = { .main = 4100, .open = { .cred = 4610, .connect = 4730, .welcome = 6660 },
                          .started = 9680, .exit = 9900 };
    char line[512], small[20];

    client_launch_line(&l, line, sizeof(line));
    ck_assert_str_eq(line, "grant=- stepd=- exec=- credential=0.51 connect=0.12 authenticate=1.93 spawn=3.02 "
                           "first_output=- total=5.58 end=0.22");
    memset(&l, 0, sizeof(l));
    client_launch_line(&l, line, sizeof(line));
    ck_assert_str_eq(line, "grant=- stepd=- exec=- credential=- connect=- authenticate=- spawn=- first_output=- "
                           "total=- end=-");
    client_launch_line(&l, small, sizeof(small));   /* cut, still a string */
    ck_assert_uint_lt(strlen(small), sizeof(small));
}
END_TEST

static Suite *client_suite(void)
{
    Suite *s = suite_create("client");
    TCase *tc = tcase_create("launch");

    tcase_add_test(tc, stamps_are_three_rising_numbers);
    tcase_add_test(tc, bad_stamps_are_left_out);
    tcase_add_test(tc, the_line_names_every_part_in_ms);
    tcase_add_test(tc, missing_stamps_give_dashes);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(client_suite)
