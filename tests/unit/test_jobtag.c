/* test_jobtag.c: unit tests of lib/jobtag.c and lib/jobdir.c. */
#include "tbm_check.h"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobdir.h"
#include "jobtag.h"

START_TEST(tag_round_trip)
{
    tbm_jobtag_t t = { 4, TBM_BACKEND_JACCL }, back = { 0, TBM_BACKEND_AUTO };
    tbm_err_t err = { { 0 } };
    char buf[TBM_JOBTAG_MAX];

    ck_assert_int_eq(tbm_jobtag_format(&t, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "v1 macs=4 backend=jaccl");
    ck_assert_int_eq(tbm_jobtag_parse(buf, &back, &err), 0);
    ck_assert_uint_eq(back.macs, 4);
    ck_assert_int_eq(back.backend, TBM_BACKEND_JACCL);
    ck_assert_int_eq(tbm_jobtag_format(&t, buf, 8), -1);
}
END_TEST

START_TEST(tag_later_fields_are_skipped)
{
    tbm_jobtag_t t;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_jobtag_parse("v1 group=studio-a macs=2 backend=auto", &t, &err), 0);
    ck_assert_uint_eq(t.macs, 2);
    ck_assert_int_eq(t.backend, TBM_BACKEND_AUTO);
    /* a job without Macs, as its prolog keeps it */
    ck_assert_int_eq(tbm_jobtag_parse("v1 macs=0 backend=auto", &t, &err), 0);
    ck_assert_uint_eq(t.macs, 0);
}
END_TEST

START_TEST(tag_bad_input_is_named)
{
    const char *bad[] = { "", "v2 macs=4 backend=ring", "v1 macs=-1 backend=ring", "v1 macs=x backend=ring",
                          "v1 macs=4", "v1 backend=ring", "v1 macs=4 backend=nccl", "v1 macs4 backend=ring",
                          "v1 macs=4 backend=ring aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                          NULL };
    tbm_jobtag_t t;
    tbm_err_t err;
    int i;

    for (i = 0; bad[i]; i++) {
        memset(&err, 0, sizeof(err));
        ck_assert_msg(tbm_jobtag_parse(bad[i], &t, &err) == -1, "accepted '%s'", bad[i]);
        ck_assert(strstr(err.msg, "tag") != NULL);
    }
    ck_assert_int_eq(tbm_jobtag_parse(NULL, &t, &err), -1);
    ck_assert_int_eq(tbm_jobtag_parse("v2 x", &t, &err), -1);
    ck_assert(strstr(err.msg, "resubmit") != NULL);
}
END_TEST

static char base[256];

static void make_tmp(void)
{
    snprintf(base, sizeof(base), "/tmp/test_jobdir.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(base));
}

static void write_file(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "x", 1), 1);
    close(fd);
}

START_TEST(tag_entries_under_either_name)
{
    /* what job_submit removes from a request: a tag under the name it sets, or under the name the prolog reads */
    ck_assert_int_eq(tbm_jobtag_env_is_tag("TBMESH_JOB=v1 macs=4 backend=jaccl"), 1);
    ck_assert_int_eq(tbm_jobtag_env_is_tag("SPANK_TBMESH_JOB=v1 macs=4 backend=jaccl"), 1);
    ck_assert_int_eq(tbm_jobtag_env_is_tag("TBMESH_JOB="), 1);
    ck_assert_int_eq(tbm_jobtag_env_is_tag("TBMESH_MLX_BACKEND=ring"), 0);
    ck_assert_int_eq(tbm_jobtag_env_is_tag("TBMESH_JOBS=x"), 0);
    ck_assert_int_eq(tbm_jobtag_env_is_tag("TBMESH_JOB"), 0);
    ck_assert_int_eq(tbm_jobtag_env_is_tag("SLURM_SPANK_TBMESH_JOB=x"), 0);   /* the steps' name: never read */
    ck_assert_int_eq(tbm_jobtag_env_is_tag(NULL), 0);
}
END_TEST

START_TEST(kept_tag_carries_its_run)
{
    char buf[TBM_JOBTAG_KEPT_MAX], tag[TBM_JOBTAG_KEPT_MAX];
    tbm_err_t err = { { 0 } };
    long run = 7;

    ck_assert_int_eq(tbm_jobtag_kept_format("v1 macs=4 backend=ring", 3, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "v1 macs=4 backend=ring\nrun=3\n");
    ck_assert_int_eq(tbm_jobtag_kept_parse(buf, tag, sizeof(tag), &run, &err), 0);
    ck_assert_str_eq(tag, "v1 macs=4 backend=ring");
    ck_assert_int_eq(run, 3);
    /* the run not known: the tag alone */
    ck_assert_int_eq(tbm_jobtag_kept_format("v1 macs=0 backend=auto", -1, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "v1 macs=0 backend=auto\n");
    ck_assert_int_eq(tbm_jobtag_kept_parse(buf, tag, sizeof(tag), &run, &err), 0);
    ck_assert_int_eq(run, -1);
    /* as a release before the run was kept wrote it */
    ck_assert_int_eq(tbm_jobtag_kept_parse("v1 macs=2 backend=jaccl", tag, sizeof(tag), &run, &err), 0);
    ck_assert_str_eq(tag, "v1 macs=2 backend=jaccl");
    ck_assert_int_eq(run, -1);
    /* what does not fit, or would make a second line, is refused */
    ck_assert_int_eq(tbm_jobtag_kept_format("v1 macs=2 backend=jaccl", 3, buf, 10), -1);
    ck_assert_int_eq(tbm_jobtag_kept_format("v1 macs=2\nrun=99", 3, buf, sizeof(buf)), -1);
    ck_assert_int_eq(tbm_jobtag_kept_format("v1 macs=2 backend=ring", 65536, buf, sizeof(buf)), -1);
    ck_assert_int_eq(tbm_jobtag_kept_format(NULL, 0, buf, sizeof(buf)), -1);
}
END_TEST

START_TEST(kept_tag_bad_input_is_named)
{
    const char *bad[] = { "v1 macs=2 backend=ring\nrun=\n", "v1 macs=2 backend=ring\nrun=x\n",
                          "v1 macs=2 backend=ring\nrun=-1\n", "v1 macs=2 backend=ring\nrun=65536\n",
                          "v1 macs=2 backend=ring\nrun=1\nmore\n", "v1 macs=2 backend=ring\nrn=1\n",
                          "v1 macs=2 backend=ring\nrun=1111111111111111111111111111111111111\n", NULL };
    char tag[TBM_JOBTAG_KEPT_MAX], small[4];
    tbm_err_t err;
    long run;
    int i;

    for (i = 0; bad[i]; i++) {
        memset(&err, 0, sizeof(err));
        ck_assert_msg(tbm_jobtag_kept_parse(bad[i], tag, sizeof(tag), &run, &err) == -1, "accepted '%s'", bad[i]);
        ck_assert(strstr(err.msg, "kept tbmesh tag") != NULL);
    }
    ck_assert_int_eq(tbm_jobtag_kept_parse("v1 macs=2 backend=ring", small, sizeof(small), &run, &err), -1);
    ck_assert(strstr(err.msg, "too long") != NULL);
    ck_assert_int_eq(tbm_jobtag_kept_parse(NULL, tag, sizeof(tag), &run, &err), -1);
    ck_assert_int_eq(tbm_jobtag_run_parse("12"), 12);
    ck_assert_int_eq(tbm_jobtag_run_parse("0"), 0);
    ck_assert_int_eq(tbm_jobtag_run_parse(""), -1);
    ck_assert_int_eq(tbm_jobtag_run_parse(NULL), -1);
    ck_assert_int_eq(tbm_jobtag_run_parse(" 1"), -1);
    ck_assert_int_eq(tbm_jobtag_run_parse("65536"), -1);
}
END_TEST

/* A requeued job keeps its id: the epilog of its first run, late on a loaded node, comes after the prolog of
 * its second. That epilog leaves the second run's tag; its own (or an earlier) run's goes. */
START_TEST(epilog_drops_only_its_runs_tag)
{
    ck_assert_int_eq(tbm_jobtag_kept_drop("v1 macs=4 backend=ring\nrun=1\n", 0), 0);
    ck_assert_int_eq(tbm_jobtag_kept_drop("v1 macs=4 backend=ring\nrun=1\n", 1), 1);
    ck_assert_int_eq(tbm_jobtag_kept_drop("v1 macs=4 backend=ring\nrun=1\n", 2), 1);
    ck_assert_int_eq(tbm_jobtag_kept_drop("v1 macs=4 backend=ring\nrun=0\n", 0), 1);
    /* the epilog's run not known, a tag without its run, or a text that cannot be read: it goes */
    ck_assert_int_eq(tbm_jobtag_kept_drop("v1 macs=4 backend=ring\nrun=1\n", -1), 1);
    ck_assert_int_eq(tbm_jobtag_kept_drop("v1 macs=4 backend=ring", 0), 1);
    ck_assert_int_eq(tbm_jobtag_kept_drop("v1 macs=4 backend=ring\nrun=x\n", 0), 1);
    ck_assert_int_eq(tbm_jobtag_kept_drop(NULL, 0), 1);
}
END_TEST

START_TEST(jobdir_made_private_and_removed)
{
    char jobs[300], dir[400], path[500], outside[400];
    tbm_err_t err = { { 0 } };
    struct stat st;

    make_tmp();
    snprintf(jobs, sizeof(jobs), "%s/jobs", base);
    ck_assert_int_eq(tbm_jobdir_make(jobs, 42, geteuid(), getegid(), dir, sizeof(dir), &err), 0);
    ck_assert_int_eq(lstat(dir, &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0700);
    ck_assert_int_eq(lstat(jobs, &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0711);
    /* a second step of the job keeps it */
    ck_assert_int_eq(tbm_jobdir_make(jobs, 42, geteuid(), getegid(), dir, sizeof(dir), &err), 0);
    /* contents, a nested folder, and a link pointing outside that must survive */
    snprintf(outside, sizeof(outside), "%s/keep", base);
    write_file(outside);
    snprintf(path, sizeof(path), "%s/hostfile.json", dir);
    write_file(path);
    snprintf(path, sizeof(path), "%s/sub", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/sub/f", dir);
    write_file(path);
    snprintf(path, sizeof(path), "%s/link", dir);
    ck_assert_int_eq(symlink(outside, path), 0);
    ck_assert_int_eq(tbm_jobdir_remove(jobs, 42, &err), 0);
    ck_assert_int_eq(lstat(dir, &st), -1);
    ck_assert_int_eq(lstat(outside, &st), 0);
    ck_assert_int_eq(tbm_jobdir_remove(jobs, 42, &err), 0);   /* gone already: fine */
    unlink(outside);
    rmdir(jobs);
    rmdir(base);
}
END_TEST

START_TEST(jobdir_squatted_names_are_refused_or_moved)
{
    char jobs[300], dir[400], note[512], aside[400];
    tbm_err_t err = { { 0 } };
    struct stat st;

    make_tmp();
    snprintf(jobs, sizeof(jobs), "%s/jobs", base);
    /* a jobs folder others may write: moved aside, a fresh one made */
    ck_assert_int_eq(mkdir(jobs, 0777), 0);
    chmod(jobs, 0777);
    ck_assert_int_eq(tbm_jobdir_base(jobs, note, sizeof(note), &err), 0);
    ck_assert(strstr(note, "moved aside") != NULL);
    ck_assert_int_eq(lstat(jobs, &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0711);
    snprintf(aside, sizeof(aside), "%s.squatted.%ld", jobs, (long)getpid());
    ck_assert_int_eq(rmdir(aside), 0);
    /* a link where the job's folder goes: refused, not followed */
    snprintf(dir, sizeof(dir), "%s/7", jobs);
    ck_assert_int_eq(symlink("/", dir), 0);
    ck_assert_int_eq(tbm_jobdir_make(jobs, 7, geteuid(), getegid(), dir, sizeof(dir), &err), -1);
    ck_assert(strstr(err.msg, "not this job's private folder") != NULL);
    ck_assert_int_eq(tbm_jobdir_remove(jobs, 7, &err), 0);   /* removes the link only */
    ck_assert_int_eq(lstat(dir, &st), -1);
    /* a folder of the wrong mode */
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    chmod(dir, 0755);
    ck_assert_int_eq(tbm_jobdir_make(jobs, 7, geteuid(), getegid(), dir, sizeof(dir), &err), -1);
    rmdir(dir);
    ck_assert_int_eq(tbm_jobdir_base("relative/jobs", NULL, 0, &err), -1);
    ck_assert(strstr(err.msg, "absolute") != NULL);
    rmdir(jobs);
    rmdir(base);
}
END_TEST

static Suite *jobtag_suite(void)
{
    Suite *s = suite_create("jobtag");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, tag_round_trip);
    tcase_add_test(tc, tag_later_fields_are_skipped);
    tcase_add_test(tc, tag_bad_input_is_named);
    tcase_add_test(tc, tag_entries_under_either_name);
    tcase_add_test(tc, kept_tag_carries_its_run);
    tcase_add_test(tc, kept_tag_bad_input_is_named);
    tcase_add_test(tc, epilog_drops_only_its_runs_tag);
    tcase_add_test(tc, jobdir_made_private_and_removed);
    tcase_add_test(tc, jobdir_squatted_names_are_refused_or_moved);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(jobtag_suite)
