/* test_fileio.c: unit tests of lib/fileio.c (bounded safe reads, atomic writes). */
#include "tbm_check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"

static char dir[256];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/tbm-fileio-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(write_then_read_back)
{
    char path[300];
    tbm_err_t err = { { 0 } };
    struct stat st;
    size_t len;
    char *got;

    snprintf(path, sizeof(path), "%s/tbmesh.conf", dir);
    ck_assert_int_eq(tbm_write_file_atomic(path, "Group=a\n", 8, 0640, &err), 0);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0640);
    got = tbm_read_file(path, 100, &len, &err);
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(len, 8);
    ck_assert_str_eq(got, "Group=a\n");
    free(got);
    /* overwrite in place */
    ck_assert_int_eq(tbm_write_file_atomic(path, "x", 1, 0644, &err), 0);
    got = tbm_read_file(path, 100, &len, &err);
    ck_assert_str_eq(got, "x");
    free(got);
}
END_TEST

START_TEST(write_replaces_symlink_without_following_it)
{
    char path[300], target[300];
    tbm_err_t err = { { 0 } };
    size_t len;
    char *got;

    snprintf(target, sizeof(target), "%s/target", dir);
    snprintf(path, sizeof(path), "%s/link", dir);
    ck_assert_int_eq(tbm_write_file_atomic(target, "keep", 4, 0600, &err), 0);
    ck_assert_int_eq(symlink(target, path), 0);
    ck_assert_int_eq(tbm_write_file_atomic(path, "new", 3, 0600, &err), 0);
    got = tbm_read_file(target, 100, &len, &err);
    ck_assert_str_eq(got, "keep");
    free(got);
    got = tbm_read_file(path, 100, &len, &err);
    ck_assert_str_eq(got, "new");
    free(got);
}
END_TEST

START_TEST(replace_without_sync_writes_whole_files_and_nothing_beside)
{
    char path[300], target[300], cmd[400];
    tbm_err_t err = { { 0 } };
    struct stat st;
    size_t len;
    char *got;

    snprintf(path, sizeof(path), "%s/hosts.json", dir);
    ck_assert_int_eq(tbm_write_file_replace(path, "[\"a\"]", 5, 0600, &err), 0);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    got = tbm_read_file(path, 100, &len, &err);
    ck_assert_str_eq(got, "[\"a\"]");
    free(got);
    ck_assert_int_eq(tbm_write_file_replace(path, "[]", 2, 0640, &err), 0);
    got = tbm_read_file(path, 100, &len, &err);
    ck_assert_str_eq(got, "[]");
    free(got);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0640);
    /* a link put where the file goes is replaced, its target kept */
    snprintf(target, sizeof(target), "%s/elsewhere", dir);
    ck_assert_int_eq(tbm_write_file_replace(target, "keep", 4, 0600, &err), 0);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(symlink(target, path), 0);
    ck_assert_int_eq(tbm_write_file_replace(path, "new", 3, 0600, &err), 0);
    got = tbm_read_file(target, 100, &len, &err);
    ck_assert_str_eq(got, "keep");
    free(got);
    ck_assert_int_eq(lstat(path, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    /* no temporary file is left beside them */
    snprintf(cmd, sizeof(cmd), "test -z \"$(ls %s | grep tmp)\"", dir);
    ck_assert_int_eq(system(cmd), 0);
    /* a folder in the way: refused, with the path, and the folder is still there */
    snprintf(path, sizeof(path), "%s/in-the-way", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    ck_assert_int_eq(tbm_write_file_replace(path, "x", 1, 0600, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "in-the-way: cannot put in place"));
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(path_beside_another_file)
{
    char out[64];

    ck_assert_int_eq(tbm_path_beside("/usr/bin/macnode", "../libexec/slurm-tbmesh/macnode-forward", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/usr/bin/../libexec/slurm-tbmesh/macnode-forward");
    ck_assert_int_eq(tbm_path_beside("/macnode", "x", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/x");
    ck_assert_int_eq(tbm_path_beside("macnode", "../libexec/x", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "../libexec/x");
    ck_assert_int_eq(tbm_path_beside("/usr/bin/macnode", "/opt/fwd", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/opt/fwd");
    /* too long for out: refused, never cut */
    ck_assert_int_eq(tbm_path_beside("/a/very/long/folder/name/that/goes/on/and/on/bin/macnode",
                                     "../libexec/slurm-tbmesh/macnode-forward", out, sizeof(out)), -1);
    /* "/usr/bin/" and 39 characters and the NUL: 49 bytes */
    ck_assert_int_eq(tbm_path_beside("/usr/bin/macnode", "012345678901234567890123456789012345678", out, 48), -1);
    ck_assert_int_eq(tbm_path_beside("/usr/bin/macnode", "01234567890123456789012345678901234567", out, 48), 0);
}
END_TEST

START_TEST(read_refusals)
{
    char path[300], link[300];
    tbm_err_t err = { { 0 } };
    size_t len;

    snprintf(path, sizeof(path), "%s/missing", dir);
    ck_assert_ptr_null(tbm_read_file(path, 100, &len, &err));
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_msg(strstr(err.msg, "missing: cannot open: No such file or directory") != NULL, "%s", err.msg);

    ck_assert_ptr_null(tbm_read_file(dir, 100, &len, &err));
    ck_assert_msg(strstr(err.msg, ": not a regular file; only regular files are read") != NULL, "%s",
                  err.msg);

    snprintf(path, sizeof(path), "%s/big", dir);
    ck_assert_int_eq(tbm_write_file_atomic(path, "0123456789", 10, 0600, &err), 0);
    ck_assert_ptr_null(tbm_read_file(path, 9, &len, &err));
    ck_assert_msg(strstr(err.msg, "big: larger than 9 bytes") != NULL, "%s", err.msg);

    snprintf(link, sizeof(link), "%s/link", dir);
    ck_assert_int_eq(symlink(path, link), 0);
    ck_assert_ptr_null(tbm_read_file(link, 100, &len, &err));
    ck_assert_msg(strstr(err.msg, "link: is a symbolic link") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(owned_reads_take_only_the_owner_s_unshared_files)
{
    char path[300], other[300];
    tbm_err_t err = { { 0 } };
    size_t len;
    char *text;

    snprintf(path, sizeof(path), "%s/mine", dir);
    ck_assert_int_eq(tbm_write_file_atomic(path, "root's", 6, 0440, &err), 0);
    text = tbm_read_file_owned(path, 100, geteuid(), &len, &err);
    ck_assert_str_eq(text, "root's");
    free(text);
    ck_assert_ptr_null(tbm_read_file_owned(path, 100, geteuid() + 1, &len, &err));
    ck_assert_int_eq(errno, EPERM);
    ck_assert_msg(strstr(err.msg, "mine: owned by another user: it was not written by uid ") && strstr(err.msg, "not trusted"),
                  "%s", err.msg);
    ck_assert_int_eq(chmod(path, 0460), 0);
    ck_assert_ptr_null(tbm_read_file_owned(path, 100, geteuid(), &len, &err));
    ck_assert_msg(strstr(err.msg, "mine: writable by others"), "%s", err.msg);
    ck_assert_int_eq(chmod(path, 0440), 0);
    /* a second name for the file (a hard link someone made to swap it in later) */
    snprintf(other, sizeof(other), "%s/other", dir);
    ck_assert_int_eq(link(path, other), 0);
    ck_assert_ptr_null(tbm_read_file_owned(path, 100, geteuid(), &len, &err));
    ck_assert_msg(strstr(err.msg, "mine: linked under another name"), "%s", err.msg);
}
END_TEST

/* A folder of the owner's alone, open; files read in it by name, never through a link, the owner's alone. */
START_TEST(owned_folder_and_files_in_it)
{
    char sub[280], path[320], link_path[320];
    tbm_err_t err = { { 0 } };
    size_t len;
    char *text;
    int fd;

    snprintf(sub, sizeof(sub), "%s/health", dir);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    snprintf(path, sizeof(path), "%s/mac01.json", sub);
    ck_assert_int_eq(tbm_write_file_atomic(path, "{}", 2, 0644, &err), 0);
    fd = tbm_dir_open_owned(sub, geteuid(), &err);
    ck_assert_msg(fd >= 0, "%s", err.msg);
    text = tbm_read_file_owned_at(fd, sub, "mac01.json", 100, geteuid(), &len, &err);
    ck_assert_str_eq(text, "{}");
    free(text);
    ck_assert_ptr_null(tbm_read_file_owned_at(fd, sub, "../mac01.json", 100, geteuid(), &len, &err));
    ck_assert_msg(strstr(err.msg, "not a file name of the folder"), "%s", err.msg);
    ck_assert_ptr_null(tbm_read_file_owned_at(fd, sub, "mac02.json", 100, geteuid(), &len, &err));
    ck_assert_int_eq(errno, ENOENT);
    snprintf(link_path, sizeof(link_path), "%s/mac03.json", sub);
    ck_assert_int_eq(symlink(path, link_path), 0);
    ck_assert_ptr_null(tbm_read_file_owned_at(fd, sub, "mac03.json", 100, geteuid(), &len, &err));
    ck_assert_msg(strstr(err.msg, "mac03.json: is a symbolic link"), "%s", err.msg);
    ck_assert_int_eq(chmod(path, 0666), 0);
    ck_assert_ptr_null(tbm_read_file_owned_at(fd, sub, "mac01.json", 100, geteuid(), &len, &err));
    ck_assert_msg(strstr(err.msg, "mac01.json: writable by others"), "%s", err.msg);
    close(fd);
    /* the folder: another's, writable by others, a link, a file */
    ck_assert_int_eq(tbm_dir_open_owned(sub, geteuid() + 1, &err), -1);
    ck_assert_int_eq(errno, EPERM);
    ck_assert_msg(strstr(err.msg, "health: owned by another user; not trusted"), "%s", err.msg);
    ck_assert_int_eq(chmod(sub, 0775), 0);
    ck_assert_int_eq(tbm_dir_open_owned(sub, geteuid(), &err), -1);
    ck_assert_msg(strstr(err.msg, "health: writable by others"), "%s", err.msg);
    snprintf(link_path, sizeof(link_path), "%s/linked", dir);
    ck_assert_int_eq(symlink(sub, link_path), 0);
    ck_assert_int_eq(tbm_dir_open_owned(link_path, geteuid(), &err), -1);
    ck_assert_msg(strstr(err.msg, "linked: not a folder"), "%s", err.msg);
    ck_assert_int_eq(tbm_dir_open_owned(path, geteuid(), &err), -1);
    ck_assert_msg(strstr(err.msg, "not a folder"), "%s", err.msg);
    snprintf(path, sizeof(path), "%s/none", dir);
    ck_assert_int_eq(tbm_dir_open_owned(path, geteuid(), &err), -1);
    ck_assert_int_eq(errno, ENOENT);
}
END_TEST

START_TEST(write_into_missing_folder_says_so)
{
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_write_file_atomic("/nonexistent-tbm/x.conf", "x", 1, 0644, &err), -1);
    ck_assert_str_eq(err.msg, "/nonexistent-tbm/x.conf: cannot create a temporary file beside it: No such file or "
                              "directory (is the folder there and writable?)");
}
END_TEST

START_TEST(write_all_through_a_pipe_and_to_a_bad_fd)
{
    int p[2];
    char big[100000], back[100000];
    size_t got = 0;
    ssize_t n;

    memset(big, 'q', sizeof(big));
    ck_assert_int_eq(pipe(p), 0);
    if (fork() == 0) {
        close(p[0]);
        _exit(tbm_write_all(p[1], big, sizeof(big)) == 0 ? 0 : 1);
    }
    close(p[1]);
    while ((n = read(p[0], back + got, sizeof(back) - got)) > 0)
        got += (size_t)n;
    close(p[0]);
    wait(NULL);
    ck_assert_uint_eq(got, sizeof(big));
    ck_assert(memcmp(big, back, sizeof(big)) == 0);
    errno = 0;
    ck_assert_int_eq(tbm_write_all(-1, "x", 1), -1);
    ck_assert_int_eq(errno, EBADF);
}
END_TEST

static Suite *fileio_suite(void)
{
    Suite *s = suite_create("fileio");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, write_then_read_back);
    tcase_add_test(tc, write_replaces_symlink_without_following_it);
    tcase_add_test(tc, replace_without_sync_writes_whole_files_and_nothing_beside);
    tcase_add_test(tc, path_beside_another_file);
    tcase_add_test(tc, read_refusals);
    tcase_add_test(tc, owned_reads_take_only_the_owner_s_unshared_files);
    tcase_add_test(tc, owned_folder_and_files_in_it);
    tcase_add_test(tc, write_into_missing_folder_says_so);
    tcase_add_test(tc, write_all_through_a_pipe_and_to_a_bad_fd);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(fileio_suite)
