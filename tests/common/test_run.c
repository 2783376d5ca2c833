/* test_run.c: common/run.c, the one way a command is run: its output captured, the time limit, the output
 * bound (refused or truncated), a command not found, the exit status, stderr captured, the environment. */
#include "tbm_check.h"

#include <string.h>

#include "clock.h"
#include "run.h"

#define SH_PATH "/usr/bin:/bin"

START_TEST(output_is_captured_with_exit_status)
{
    const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
    run_opts_t o = { .path = SH_PATH, .timeout_ms = 5000, .stderr_to = RUN_STDERR_CAPTURE };
    run_out_t r;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(run_command(argv, &o, &r, &err), 3);
    ck_assert_str_eq(r.out, "out\n");
    ck_assert_uint_eq(r.out_len, 4);
    ck_assert_str_eq(r.err, "err\n");
    ck_assert_int_eq(r.status, 3);
    ck_assert_int_eq(r.timed_out, 0);
    run_out_free(&r);
}
END_TEST

START_TEST(run_capture_keeps_its_answers)
{
    const char *exit3[] = { "sh", "-c", "echo out; exit 3", NULL };
    const char *empty[] = { "true", NULL };
    tbm_err_t err = { { 0 } };
    char *out;
    size_t len;

    ck_assert_int_eq(run_capture(exit3, SH_PATH, 2000, 100, &out, &len, &err), 3);
    ck_assert_str_eq(out, "out\n");
    free(out);
    ck_assert_int_eq(run_capture(empty, SH_PATH, 2000, 100, &out, &len, &err), 0);
    ck_assert_str_eq(out, "");
    ck_assert_uint_eq(len, 0);
    free(out);
}
END_TEST

/* argv fails with msg, its status `status`. */
static void fails_saying(const char *const *argv, const char *msg, int status)
{
    run_opts_t o = { .path = SH_PATH, .timeout_ms = 2000 };
    run_out_t r;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(run_command(argv, &o, &r, &err), -1);
    ck_assert_str_eq(err.msg, msg);
    ck_assert_int_eq(r.status, status);
    run_out_free(&r);
}

START_TEST(not_found_says_where_it_looked)
{
    const char *missing[] = { "tbm-no-such-command", NULL };

    fails_saying(missing, "tbm-no-such-command: cannot run: No such file or directory (looked in /usr/bin:/bin)",
                 -1);
}
END_TEST

START_TEST(time_limit_kills_the_whole_group)
{
    /* the shell's child holds the pipe too: killing only the shell would leave the read waiting */
    const char *argv[] = { "sh", "-c", "echo started; sleep 30; echo never", NULL };
    run_opts_t o = { .path = SH_PATH, .timeout_ms = 300 };
    run_out_t r;
    tbm_err_t err = { { 0 } };
    long long t0 = tbm_now_ms();

    ck_assert_int_eq(run_command(argv, &o, &r, &err), -1);
    ck_assert_int_lt(tbm_now_ms() - t0, 5000);
    ck_assert_int_eq(r.timed_out, 1);
    ck_assert_int_eq(r.status, 128 + 9);
    ck_assert_str_eq(r.out, "started\n");
    ck_assert_str_eq(err.msg, "sh: no answer within 300 ms; killed (is the host overloaded or the command hung?)");
    run_out_free(&r);
}
END_TEST

START_TEST(time_limit_with_grace_sends_sigterm_first)
{
    const char *argv[] = { "sh", "-c", "trap 'echo term; exit 7' TERM; echo ready; while :; do sleep 0.05; done",
                           NULL };
    run_opts_t o = { .path = SH_PATH, .timeout_ms = 300, .grace_ms = 3000 };
    run_out_t r;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(run_command(argv, &o, &r, &err), -1);
    ck_assert_int_eq(r.timed_out, 1);
    ck_assert_int_eq(r.status, 7);
    ck_assert_str_eq(r.out, "ready\nterm\n");
    run_out_free(&r);
}
END_TEST

START_TEST(output_bound_is_refused)
{
    const char *big[] = { "sh", "-c", "head -c 5000 /dev/zero; sleep 30", NULL };
    run_opts_t o = { .path = SH_PATH, .timeout_ms = 10000, .max = 1000 };
    run_out_t r;
    tbm_err_t err = { { 0 } };
    long long t0 = tbm_now_ms();

    ck_assert_int_eq(run_command(big, &o, &r, &err), -1);
    ck_assert_int_lt(tbm_now_ms() - t0, 5000);
    ck_assert_str_eq(err.msg, "sh: printed more than 1000 bytes, more than is read of it; killed");
    ck_assert_uint_le(r.out_len, 1000);
    run_out_free(&r);
}
END_TEST

START_TEST(output_bound_truncates_when_asked)
{
    const char *big[] = { "sh", "-c", "head -c 5000 /dev/zero | tr '\\0' x; echo; exit 4", NULL };
    run_opts_t o = { .path = SH_PATH, .timeout_ms = 5000, .max = 1000, .truncate = 1 };
    run_out_t r;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(run_command(big, &o, &r, &err), 4);
    ck_assert_uint_eq(r.out_len, 1000);
    ck_assert_uint_eq(strlen(r.out), 1000);
    ck_assert_uint_eq(strspn(r.out, "x"), 1000);
    run_out_free(&r);
}
END_TEST

START_TEST(killed_by_a_signal)
{
    const char *killed[] = { "sh", "-c", "kill -9 $$", NULL };

    fails_saying(killed, "sh: killed by signal 9", 128 + 9);
}
END_TEST

START_TEST(environment_minimal_or_given_with_additions)
{
    const char *argv[] = { "sh", "-c", "echo \"$LC_ALL|$TBM_A|$TBM_B\"", NULL };
    char *env[] = { "PATH=" SH_PATH, "TBM_A=old", "TBM_B=kept", NULL };
    const char *add[] = { "TBM_A=new", NULL };
    run_opts_t o = { .path = SH_PATH, .timeout_ms = 2000 };
    run_out_t r;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(run_command(argv, &o, &r, &err), 0);
    ck_assert_str_eq(r.out, "C||\n");
    run_out_free(&r);
    o.env = env;
    o.env_add = add;
    ck_assert_int_eq(run_command(argv, &o, &r, &err), 0);
    ck_assert_str_eq(r.out, "|new|kept\n");
    run_out_free(&r);
}
END_TEST

START_TEST(git_like_commands_run_by_name)
{
    /* what the submit side runs: a program found on PATH with its arguments, first line of output */
    const char *argv[] = { "sh", "-c", "printf '%s\\n' \"$0\" \"$1\"", "-C", "/tmp", NULL };
    run_opts_t o = { .timeout_ms = 5000, .max = 4096, .truncate = 1 };
    run_out_t r;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(run_command(argv, &o, &r, &err), 0);
    ck_assert_str_eq(r.out, "-C\n/tmp\n");
    run_out_free(&r);
}
END_TEST

START_TEST(start_and_finish_apart)
{
    const char *argv[] = { "sh", "-c", "echo later", NULL };
    run_opts_t o = { .path = SH_PATH, .timeout_ms = 2000 };
    run_proc_t p = { .pid = -1, .out = -1, .err = -1 };
    run_out_t r;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(run_finish(&p, &o, &r, &err), -1);
    ck_assert_str_eq(err.msg, "the command: not started");
    run_out_free(&r);
    ck_assert_int_eq(run_start(argv, &o, &p, &err), 0);
    ck_assert_int_eq(run_finish(&p, &o, &r, &err), 0);
    ck_assert_str_eq(r.out, "later\n");
    ck_assert_int_eq(p.pid, -1);
    run_out_free(&r);
}
END_TEST

static Suite *run_suite(void)
{
    Suite *s = suite_create("run");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, output_is_captured_with_exit_status);
    tcase_add_test(tc, run_capture_keeps_its_answers);
    tcase_add_test(tc, not_found_says_where_it_looked);
    tcase_add_test(tc, time_limit_kills_the_whole_group);
    tcase_add_test(tc, time_limit_with_grace_sends_sigterm_first);
    tcase_add_test(tc, output_bound_is_refused);
    tcase_add_test(tc, output_bound_truncates_when_asked);
    tcase_add_test(tc, killed_by_a_signal);
    tcase_add_test(tc, environment_minimal_or_given_with_additions);
    tcase_add_test(tc, git_like_commands_run_by_name);
    tcase_add_test(tc, start_and_finish_apart);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(run_suite)
