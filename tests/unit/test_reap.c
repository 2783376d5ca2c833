/* test_reap.c: whom a job's end ends on a Mac (lib/reap.c): every process of the user on an exclusive Mac,
 * only the job's own on a shared one or when the user has another job there; never root's, another user's,
 * a process of mixed uids, the caller or its ancestors, or pid 1. */
#include <string.h>

#include "reap.h"
#include "tbm_check.h"

/* A Mac's table: launchd (1); the agent (100, root) and its servers (200, 300); job 7's task (201, uid 501)
 * with a child; what it left: a setsid'd sleep reparented to launchd (400), a double fork's grandchild (410)
 * under launchd too, and a nohup'd one (420) under the server (a subreaper); another user's process (500, uid
 * 502); a setuid program of the user's (510, real 501, effective 0); root's shell (600). */
static const tbm_proc_t mac[] = {
    { 1, 0, 0, 0, 0 },        { 100, 1, 0, 0, 0 },      { 200, 100, 0, 0, 0 },  { 300, 100, 0, 0, 0 },
    { 201, 200, 501, 0, 501 }, { 202, 201, 501, 0, 501 }, { 400, 1, 501, 0, 501 }, { 410, 1, 501, 0, 501 },
    { 420, 200, 501, 0, 501 }, { 500, 1, 502, 0, 502 }, { 510, 1, TBM_PROC_UID_MIXED, 0, 501 }, { 600, 1, 0, 0, 0 },
};
#define N_MAC (sizeof(mac) / sizeof(mac[0]))

/* The plan's pids as one sorted string "201 202 ...". */
static const char *pids_of(const tbm_reap_t *r)
{
    static char text[512];
    long sorted[64];
    size_t i, j, n = r->n < 64 ? r->n : 64;
    long t;

    memcpy(sorted, r->pids, n * sizeof(long));
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++)
            if (sorted[j] < sorted[i])
                t = sorted[i], sorted[i] = sorted[j], sorted[j] = t;
    text[0] = '\0';
    for (i = 0; i < n; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%ld", i ? " " : "", sorted[i]);
    return text;
}

START_TEST(an_exclusive_mac_loses_every_process_of_the_user)
{
    tbm_reap_ask_t ask = { .job = 7, .uid = 501, .exclusive = 1, .self = 300 };
    tbm_err_t err = { { 0 } };
    tbm_reap_t r;

    ck_assert_int_eq(tbm_reap_plan(mac, N_MAC, &ask, &r, &err), 0);
    ck_assert_int_eq(r.by_uid, 1);
    ck_assert_str_eq(pids_of(&r), "201 202 400 410 420");   /* not 500 (another user), 510 (mixed), root's */
    ck_assert_str_eq(r.why, "every process of uid 501: the Mac was job 7's alone (ExclusiveMacs=yes) and the user has "
                            "no other job on it");
    tbm_reap_free(&r);
}
END_TEST

START_TEST(a_shared_mac_loses_only_the_jobs_own)
{
    long roots[] = { 200 };
    tbm_reap_ask_t ask = { .job = 7, .uid = 501, .exclusive = 0, .self = 300, .roots = roots, .n_roots = 1 };
    tbm_err_t err = { { 0 } };
    tbm_reap_t r;

    ck_assert_int_eq(tbm_reap_plan(mac, N_MAC, &ask, &r, &err), 0);
    ck_assert_int_eq(r.by_uid, 0);
    ck_assert_str_eq(pids_of(&r), "201 202 420");   /* under its server; not what went to launchd */
    ck_assert_str_eq(r.why, "job 7's own processes only (those of its tasks): the Macs are shared "
                            "(ExclusiveMacs=no)");
    tbm_reap_free(&r);
    ask.n_roots = 0;   /* no task known: nothing */
    ck_assert_int_eq(tbm_reap_plan(mac, N_MAC, &ask, &r, &err), 0);
    ck_assert_uint_eq(r.n, 0);
    tbm_reap_free(&r);
}
END_TEST

START_TEST(another_job_of_the_user_keeps_its_processes)
{
    long roots[] = { 200 };
    tbm_reap_ask_t ask = { .job = 7, .uid = 501, .exclusive = 1, .other_jobs = 1, .self = 300, .roots = roots,
                           .n_roots = 1 };
    tbm_err_t err = { { 0 } };
    tbm_reap_t r;

    ck_assert_int_eq(tbm_reap_plan(mac, N_MAC, &ask, &r, &err), 0);
    ck_assert_int_eq(r.by_uid, 0);
    ck_assert_str_eq(pids_of(&r), "201 202 420");
    ck_assert_str_eq(r.why, "job 7's own processes only (those of its tasks): uid 501 has another job on this Mac "
                            "(a task of it runs)");
    tbm_reap_free(&r);
}
END_TEST

START_TEST(a_live_slurmstepd_with_the_users_processes_is_another_job)
{
    /* direct mode: job 7's steps are gone; job 8's step (700, slurmstepd) runs a task of uid 501 (701) */
    tbm_proc_t t[N_MAC + 2];
    tbm_reap_ask_t ask = { .job = 7, .uid = 501, .exclusive = 1, .self = 600 };
    tbm_err_t err = { { 0 } };
    tbm_reap_t r;

    memcpy(t, mac, sizeof(mac));
    t[N_MAC] = (tbm_proc_t){ 700, 1, 0, 1, 0 };
    t[N_MAC + 1] = (tbm_proc_t){ 701, 700, 501, 0, 501 };
    ck_assert_int_eq(tbm_reap_plan(t, N_MAC + 2, &ask, &r, &err), 0);
    ck_assert_int_eq(r.by_uid, 0);
    ck_assert_uint_eq(r.n, 0);
    ck_assert_str_eq(r.why, "job 7's own processes only (those of its tasks): uid 501 has another job on this Mac "
                            "(a step of it runs)");
    tbm_reap_free(&r);
    t[N_MAC + 1].uid = 502;   /* another user's step: not the user's other job */
    ck_assert_int_eq(tbm_reap_plan(t, N_MAC + 2, &ask, &r, &err), 0);
    ck_assert_int_eq(r.by_uid, 1);
    ck_assert_str_eq(pids_of(&r), "201 202 400 410 420");
    tbm_reap_free(&r);
}
END_TEST

START_TEST(a_process_the_user_names_slurmstepd_is_not_a_step)
{
    /* the user names a process slurmstepd (prctl, or a copy of a program of that name: real uid 501) with a
     * child, or runs a set-uid program through a link of that name (real 501, effective 0): neither is a step
     * of another job, and every process of the user still goes; root's own slurmstepd counts even while its
     * effective uid is a user's for a moment (real 0) */
    tbm_proc_t t[N_MAC + 2];
    tbm_reap_ask_t ask = { .job = 7, .uid = 501, .exclusive = 1, .self = 600 };
    tbm_err_t err = { { 0 } };
    tbm_reap_t r;

    memcpy(t, mac, sizeof(mac));
    t[N_MAC] = (tbm_proc_t){ .pid = 700, .ppid = 1, .uid = 501, .stepd = 1, .ruid = 501 };
    t[N_MAC + 1] = (tbm_proc_t){ .pid = 701, .ppid = 700, .uid = 501, .stepd = 0, .ruid = 501 };
    ck_assert_int_eq(tbm_reap_plan(t, N_MAC + 2, &ask, &r, &err), 0);
    ck_assert_int_eq(r.by_uid, 1);
    ck_assert_str_eq(pids_of(&r), "201 202 400 410 420 700 701");
    tbm_reap_free(&r);
    t[N_MAC].uid = TBM_PROC_UID_MIXED;   /* a set-uid program named so: never ended, not a step either */
    ck_assert_int_eq(tbm_reap_plan(t, N_MAC + 2, &ask, &r, &err), 0);
    ck_assert_int_eq(r.by_uid, 1);
    ck_assert_str_eq(pids_of(&r), "201 202 400 410 420 701");
    tbm_reap_free(&r);
    t[N_MAC].ruid = 0;   /* root's slurmstepd, its effective uid the user's for a moment */
    ck_assert_int_eq(tbm_reap_plan(t, N_MAC + 2, &ask, &r, &err), 0);
    ck_assert_int_eq(r.by_uid, 0);
    ck_assert_uint_eq(r.n, 0);
    tbm_reap_free(&r);
}
END_TEST

START_TEST(never_root_nor_the_caller_nor_its_ancestors)
{
    /* the caller runs as the user (a test) under one of the user's processes: neither goes */
    tbm_proc_t t[N_MAC + 1];
    tbm_reap_ask_t ask = { .job = 7, .uid = 501, .exclusive = 1, .self = 800 };
    tbm_err_t err = { { 0 } };
    tbm_reap_t r;

    memcpy(t, mac, sizeof(mac));
    t[N_MAC] = (tbm_proc_t){ 800, 410, 501, 0, 501 };
    ck_assert_int_eq(tbm_reap_plan(t, N_MAC + 1, &ask, &r, &err), 0);
    ck_assert_str_eq(pids_of(&r), "201 202 400 420");
    tbm_reap_free(&r);
    ask.uid = 0;   /* root's job: nothing of root's is looked for */
    ck_assert_int_eq(tbm_reap_plan(t, N_MAC + 1, &ask, &r, &err), 0);
    ck_assert_uint_eq(r.n, 0);
    ck_assert_str_eq(r.why, "nothing beyond job 7's tasks: its user is root, whose other processes are never ended");
    tbm_reap_free(&r);
    ask.uid = TBM_PROC_UID_MIXED;
    ck_assert_int_eq(tbm_reap_plan(t, N_MAC + 1, &ask, &r, &err), 0);
    ck_assert_uint_eq(r.n, 0);
    tbm_reap_free(&r);
}
END_TEST

START_TEST(loops_and_strays_in_the_table_end)
{
    /* a table read while processes came and went: a parent that is not there, a process its own parent, two
     * that are each other's; pid 1 of the user's (a container's init) never goes */
    static const tbm_proc_t t[] = { { 10, 11, 501, 0, 501 }, { 11, 10, 501, 0, 501 }, { 12, 12, 501, 0, 501 },
                                    { 13, 99, 501, 0, 501 }, { 1, 0, 501, 0, 501 } };
    long roots[] = { 10 };
    tbm_reap_ask_t ask = { .job = 7, .uid = 501, .exclusive = 0, .self = 12345, .roots = roots, .n_roots = 1 };
    tbm_err_t err = { { 0 } };
    tbm_reap_t r;

    ck_assert_int_eq(tbm_reap_plan(t, 5, &ask, &r, &err), 0);
    ck_assert_str_eq(pids_of(&r), "10 11");
    tbm_reap_free(&r);
    ask.exclusive = 1;
    ck_assert_int_eq(tbm_reap_plan(t, 5, &ask, &r, &err), 0);
    ck_assert_str_eq(pids_of(&r), "10 11 12 13");
    tbm_reap_free(&r);
    ck_assert_int_eq(tbm_reap_plan(t, 0, &ask, &r, &err), 0);   /* an empty table */
    ck_assert_uint_eq(r.n, 0);
    tbm_reap_free(&r);
}
END_TEST

static Suite *reap_suite(void)
{
    Suite *s = suite_create("reap");
    TCase *tc = tcase_create("plan");

    tcase_add_test(tc, an_exclusive_mac_loses_every_process_of_the_user);
    tcase_add_test(tc, a_shared_mac_loses_only_the_jobs_own);
    tcase_add_test(tc, another_job_of_the_user_keeps_its_processes);
    tcase_add_test(tc, a_live_slurmstepd_with_the_users_processes_is_another_job);
    tcase_add_test(tc, a_process_the_user_names_slurmstepd_is_not_a_step);
    tcase_add_test(tc, never_root_nor_the_caller_nor_its_ancestors);
    tcase_add_test(tc, loops_and_strays_in_the_table_end);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(reap_suite)
