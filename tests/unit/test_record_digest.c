/* test_record_digest.c: unit tests of lib/record_digest.c (SHA-256 of files and folders, the cache). */
#include "tbm_check.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_read.h"
#include "record.h"

static char dir[256];

static void setup(void)
{
    tbm_scratch_make(dir, sizeof(dir), "tbm-digest");
}

static void teardown(void)
{
    tbm_scratch_remove(dir);
}

static void put_file(const char *rel, const char *text)
{
    tbm_scratch_put(dir, rel, text);
}

START_TEST(sha256_of_a_buffer)
{
    char hex[TBM_SHA256_HEX];

    tbm_sha256_hex("abc", 3, hex);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

START_TEST(a_file_and_the_cache)
{
    char path[512], *text;
    tbm_digest_cache_t *c = tbm_digest_cache_new(), *c2 = tbm_digest_cache_new();
    tbm_err_t err = { { 0 } };
    json_object *e;

    put_file("a.txt", "abc");
    snprintf(path, sizeof(path), "%s/a.txt", dir);
    e = tbm_digest_path(path, c);
    ck_assert_str_eq(tbm_json_str(e, "kind"), "file");
    ck_assert_str_eq(tbm_json_str(e, "sha256"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ck_assert_int_eq(json_object_get_int(json_object_object_get(e, "size")), 3);
    json_object_put(e);
    ck_assert_uint_eq(tbm_digest_cache_reads(c), 1);
    e = tbm_digest_path(path, c);   /* unchanged: not read again */
    json_object_put(e);
    ck_assert_uint_eq(tbm_digest_cache_reads(c), 1);
    ck_assert_uint_eq(tbm_digest_cache_bytes(c), 3);
    text = tbm_digest_cache_text(c);   /* the cache survives as text */
    ck_assert_int_eq(tbm_digest_cache_load(c2, text, strlen(text), &err), 0);
    free(text);
    e = tbm_digest_path(path, c2);
    json_object_put(e);
    ck_assert_uint_eq(tbm_digest_cache_reads(c2), 0);
    put_file("a.txt", "abd");   /* changed (size the same, mtime or inode not) */
    {
        struct timespec ts[2] = { { 0, UTIME_OMIT }, { 12345, 0 } };
        ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
    }
    e = tbm_digest_path(path, c2);
    ck_assert_str_ne(tbm_json_str(e, "sha256"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    json_object_put(e);
    ck_assert_uint_eq(tbm_digest_cache_reads(c2), 1);
    ck_assert_int_eq(tbm_digest_cache_load(c2, "{\"k\": \"zz\"}", 11, &err), -1);
    ck_assert_str_eq(err.msg, "digest cache: the entry k is not a SHA-256; remove the file (it is rebuilt)");
    tbm_digest_cache_free(c);
    tbm_digest_cache_free(c2);
}
END_TEST

START_TEST(a_change_with_its_mtime_set_back_is_read_again)
{
    /* the owner rewrites the file in place (same inode, same size) and sets its mtime back to what the cache
     * saw: the ctime still tells, and the file is read again */
    char path[512];
    tbm_digest_cache_t *c = tbm_digest_cache_new();
    struct stat st;
    json_object *e;
    int fd;

    put_file("b.txt", "abc");
    snprintf(path, sizeof(path), "%s/b.txt", dir);
    ck_assert_int_eq(stat(path, &st), 0);
    e = tbm_digest_path(path, c);
    ck_assert_str_eq(tbm_json_str(e, "sha256"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    json_object_put(e);
    usleep(20000);   /* a ctime apart from the first, on file systems that keep coarse times */
    ck_assert_int_ge(fd = open(path, O_WRONLY), 0);
    ck_assert_int_eq(pwrite(fd, "abd", 3, 0), 3);
    close(fd);
    {
        struct timespec ts[2] = { st.st_atim, st.st_mtim };
        ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
    }
    e = tbm_digest_path(path, c);
    ck_assert_str_eq(tbm_json_str(e, "sha256"), "a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9");
    json_object_put(e);
    ck_assert_uint_eq(tbm_digest_cache_reads(c), 2);
    tbm_digest_cache_free(c);
}
END_TEST

START_TEST(a_folder_gives_a_manifest_digest)
{
    char path[512], sub[600], first[TBM_SHA256_HEX];
    json_object *e;

    put_file("x", "1");
    snprintf(sub, sizeof(sub), "%s/d", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    put_file("d/y", "22");
    snprintf(sub, sizeof(sub), "%s/d/link", dir);
    ck_assert_int_eq(symlink("/etc/passwd", sub), 0);   /* listed as a link, never read */
    snprintf(path, sizeof(path), "%s", dir);
    e = tbm_digest_path(path, NULL);
    ck_assert_str_eq(tbm_json_str(e, "kind"), "folder");
    ck_assert_int_eq(json_object_get_int(json_object_object_get(e, "files")), 2);
    ck_assert_int_eq(json_object_get_int(json_object_object_get(e, "size")), 3);
    snprintf(first, sizeof(first), "%s", tbm_json_str(e, "sha256"));
    json_object_put(e);
    put_file("d/y", "23");
    e = tbm_digest_path(path, NULL);
    ck_assert_str_ne(tbm_json_str(e, "sha256"), first);
    json_object_put(e);
    snprintf(path, sizeof(path), "%s/missing", dir);
    e = tbm_digest_path(path, NULL);
    ck_assert_str_eq(tbm_json_str(e, "why"), "cannot read it: No such file or directory");
    ck_assert_ptr_null(tbm_json_str(e, "sha256"));
    json_object_put(e);
}
END_TEST

static Suite *digest_suite(void)
{
    Suite *s = suite_create("record_digest");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, sha256_of_a_buffer);
    tcase_add_test(tc, a_file_and_the_cache);
    tcase_add_test(tc, a_change_with_its_mtime_set_back_is_read_again);
    tcase_add_test(tc, a_folder_gives_a_manifest_digest);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(digest_suite)
