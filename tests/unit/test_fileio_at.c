/* test_fileio_at.c: unit tests of lib/fileio_at.c (writing where others may write too: no link followed that
 * the caller did not make, new files only). */
#include "tbm_check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"

#define OTHER_UID 54321   /* a uid nobody here runs as: "another user" (the tests that need it run as root) */

static char dir[256];

static void setup(void)
{
    umask(022);
    tbm_scratch_make(dir, sizeof(dir), "tbm-fileio-at");
}

static void teardown(void)
{
    tbm_scratch_remove(dir);
}

static char *at(const char *rel)
{
    static char paths[4][512];
    static int i;

    i = (i + 1) % 4;
    snprintf(paths[i], sizeof(paths[i]), "%s/%s", dir, rel);
    return paths[i];
}

static char *text_of(const char *path)
{
    tbm_err_t err = { { 0 } };
    size_t len;
    char *t = tbm_read_file(path, 4096, &len, &err);

    ck_assert_msg(t != NULL, "%s", err.msg);
    return t;
}

static void same_text(const char *path, const char *want)
{
    char *t = text_of(path);

    ck_assert_str_eq(t, want);
    free(t);
}

START_TEST(open_for_writing_makes_or_empties_a_plain_file)
{
    tbm_err_t err = { { 0 } };
    struct stat st;
    int fd = tbm_open_for_writing(at("out.bin"), 0640, &err);

    ck_assert_msg(fd >= 0, "%s", err.msg);
    ck_assert_int_eq(tbm_write_all(fd, "first run", 9), 0);
    close(fd);
    ck_assert_int_eq(stat(at("out.bin"), &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0640);
    fd = tbm_open_for_writing(at("out.bin"), 0640, &err);   /* written again: from its start */
    ck_assert_msg(fd >= 0, "%s", err.msg);
    ck_assert_int_eq(tbm_write_all(fd, "2nd", 3), 0);
    close(fd);
    same_text(at("out.bin"), "2nd");
}
END_TEST

START_TEST(open_for_writing_refuses_links_and_leaves_their_targets)
{
    tbm_err_t err = { { 0 } };

    tbm_scratch_put(dir, "root-file", "root's own\n");
    ck_assert_int_eq(symlink(at("root-file"), at("planted")), 0);
    ck_assert_int_eq(tbm_open_for_writing(at("planted"), 0644, &err), -1);
    ck_assert_int_eq(errno, ELOOP);
    ck_assert_msg(strstr(err.msg, "/planted: is a symbolic link; a file is never written through a link: remove "
                                  "the link or give another path") != NULL, "%s", err.msg);
    same_text(at("root-file"), "root's own\n");
    /* a link to nowhere: nothing is made where it points */
    ck_assert_int_eq(symlink(at("made-through-link"), at("dangling")), 0);
    ck_assert_int_eq(tbm_open_for_writing(at("dangling"), 0644, &err), -1);
    ck_assert_int_eq(access(at("made-through-link"), F_OK), -1);
    /* a second name of a file (a hard link) */
    ck_assert_int_eq(link(at("root-file"), at("second-name")), 0);
    ck_assert_int_eq(tbm_open_for_writing(at("second-name"), 0644, &err), -1);
    ck_assert_msg(strstr(err.msg, "/second-name: is a file with more than one name (a hard link); only a new or a "
                                  "plain file is written") != NULL, "%s", err.msg);
    same_text(at("root-file"), "root's own\n");
    /* a fifo: refused, and the call does not block */
    ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
    ck_assert_int_eq(tbm_open_for_writing(at("fifo"), 0644, &err), -1);
    ck_assert_msg(strstr(err.msg, "/fifo: cannot create: ") != NULL || strstr(err.msg, "not a regular file"),
                  "%s", err.msg);
}
END_TEST

START_TEST(own_folder_made_and_files_made_in_it)
{
    tbm_err_t err = { { 0 } };
    struct stat st;
    int fd = tbm_dir_make_own(at("crate/"), 0750, &err);

    ck_assert_msg(fd >= 0, "%s", err.msg);
    ck_assert_int_eq(tbm_write_file_at(fd, "record.json", "{}\n", 3, 0644, &err), 0);
    ck_assert_int_eq(tbm_write_file_at(fd, "record.json", "{}\n", 3, 0644, &err), -1);   /* never replaced */
    ck_assert_msg(strstr(err.msg, "record.json: cannot create (something is there already): ") == err.msg, "%s",
                  err.msg);
    close(fd);
    ck_assert_int_eq(lstat(at("crate"), &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    ck_assert_int_eq(st.st_mode & 0777, 0750);
    same_text(at("crate/record.json"), "{}\n");
    ck_assert_int_eq(lstat(at("crate/record.json"), &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0644);
    /* an empty folder of the caller's is taken; one with something in it is not */
    ck_assert_int_eq(mkdir(at("empty"), 0700), 0);
    fd = tbm_dir_make_own(at("empty"), 0755, &err);
    ck_assert_msg(fd >= 0, "%s", err.msg);
    close(fd);
    ck_assert_int_eq(tbm_dir_make_own(at("crate"), 0755, &err), -1);
    ck_assert_msg(strstr(err.msg, "/crate: is not empty; nothing in it is replaced: give the name of a new folder, "
                                  "or of an empty one") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(own_folder_refusals)
{
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(mkdir(at("real"), 0700), 0);
    ck_assert_int_eq(symlink(at("real"), at("link")), 0);
    ck_assert_int_eq(tbm_dir_make_own(at("link"), 0755, &err), -1);
    ck_assert_msg(strstr(err.msg, "/link: is a symbolic link; the folder is never reached through a link: give the "
                                  "name of a new folder, or of an empty folder of yours") != NULL, "%s", err.msg);
    tbm_scratch_put(dir, "file", "x");
    ck_assert_int_eq(tbm_dir_make_own(at("file"), 0755, &err), -1);
    ck_assert_msg(strstr(err.msg, "/file: exists and is not a folder: give the name of a new folder") != NULL, "%s",
                  err.msg);
    ck_assert_int_eq(tbm_dir_make_own(at("no-such/crate"), 0755, &err), -1);
    ck_assert_msg(strstr(err.msg, "/no-such/crate: cannot open the folder no-such on the way: ") != NULL, "%s",
                  err.msg);
    ck_assert_int_eq(tbm_dir_make_own("/", 0755, &err), -1);
    ck_assert_str_eq(err.msg, "/: name the new folder itself (not '.', '..' or '/'), e.g. /crate");
    ck_assert_int_eq(tbm_dir_make_own("", 0755, &err), -1);
    ck_assert_str_eq(err.msg, "'' is not a folder's path: give the path of a new folder");
}
END_TEST

/* A link on the way made by the caller (or root) is followed; the folder lands where it points. */
START_TEST(own_links_on_the_way_are_followed)
{
    tbm_err_t err = { { 0 } };
    char cwd[512];
    int fd;

    ck_assert_int_eq(mkdir(at("real"), 0700), 0);
    ck_assert_int_eq(symlink("real", at("mine")), 0);              /* relative target */
    fd = tbm_dir_make_own(at("mine/crate"), 0755, &err);
    ck_assert_msg(fd >= 0, "%s", err.msg);
    close(fd);
    ck_assert_int_eq(access(at("real/crate"), F_OK), 0);
    ck_assert_int_eq(symlink(at("real"), at("abs")), 0);           /* absolute target, then ".." and "." */
    fd = tbm_dir_make_own(at("abs/../real/./crate2"), 0755, &err);
    ck_assert_msg(fd >= 0, "%s", err.msg);
    close(fd);
    ck_assert_int_eq(access(at("real/crate2"), F_OK), 0);
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));               /* a relative path */
    ck_assert_int_eq(chdir(dir), 0);
    fd = tbm_dir_make_own("mine/crate3", 0755, &err);
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_msg(fd >= 0, "%s", err.msg);
    close(fd);
    ck_assert_int_eq(access(at("real/crate3"), F_OK), 0);
    ck_assert_int_eq(symlink("loop", at("loop")), 0);
    ck_assert_int_eq(tbm_dir_make_own(at("loop/crate"), 0755, &err), -1);
    ck_assert_msg(strstr(err.msg, "/loop/crate: more than 40 symbolic links on the way: give the real path") != NULL,
                  "%s", err.msg);
}
END_TEST

/* Another user's link on the way, or another user's folder at the path: refused (root only can make them). */
START_TEST(another_users_link_or_folder_is_refused)
{
    tbm_err_t err = { { 0 } };

    if (geteuid() != 0)
        return;                   /* only root can give a link to another uid */
    ck_assert_int_eq(mkdir(at("victim"), 0755), 0);
    ck_assert_int_eq(symlink(at("victim"), at("users-link")), 0);
    ck_assert_int_eq(lchown(at("users-link"), OTHER_UID, OTHER_UID), 0);
    ck_assert_int_eq(tbm_dir_make_own(at("users-link/crate"), 0755, &err), -1);
    ck_assert_msg(strstr(err.msg, "/users-link/crate: users-link on the way is a symbolic link owned by uid 54321; "
                                  "a link made by another user is never followed: give the path without it") != NULL,
                  "%s", err.msg);
    ck_assert_int_eq(access(at("victim/crate"), F_OK), -1);
    ck_assert_int_eq(mkdir(at("theirs"), 0777), 0);
    ck_assert_int_eq(chown(at("theirs"), OTHER_UID, OTHER_UID), 0);
    ck_assert_int_eq(tbm_dir_make_own(at("theirs"), 0755, &err), -1);
    ck_assert_msg(strstr(err.msg, "/theirs: belongs to uid 54321, not to you (uid 0): give the name of a new folder, "
                                  "or of an empty folder of yours") != NULL, "%s", err.msg);
}
END_TEST

static Suite *fileio_at_suite(void)
{
    Suite *s = suite_create("fileio_at");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, open_for_writing_makes_or_empties_a_plain_file);
    tcase_add_test(tc, open_for_writing_refuses_links_and_leaves_their_targets);
    tcase_add_test(tc, own_folder_made_and_files_made_in_it);
    tcase_add_test(tc, own_folder_refusals);
    tcase_add_test(tc, own_links_on_the_way_are_followed);
    tcase_add_test(tc, another_users_link_or_folder_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(fileio_at_suite)
