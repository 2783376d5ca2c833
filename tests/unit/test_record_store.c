/* test_record_store.c: unit tests of acct/store.c and acct/store_seal.c (the record store's settings, files,
 * modes and refusals; seals without a munged are refused with the reason). Ownership checks need root. */
#include "tbm_check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fileio.h"
#include "json_read.h"
#include "store.h"

static char dir[256];

static void setup(void)
{
    tbm_scratch_make(dir, sizeof(dir), "tbm-store");
}

static void teardown(void)
{
    tbm_scratch_remove(dir);
}

static void put_text(const char *rel, const char *text)
{
    tbm_scratch_put(dir, rel, text);
}

START_TEST(settings_from_both_files)
{
    char conf[300], slurm[300], store[300];
    tbm_store_t st;
    tbm_err_t err = { { 0 } };

    snprintf(store, sizeof(store), "%s/records", dir);
    snprintf(conf, sizeof(conf), "%s/tbmesh.conf", dir);
    snprintf(slurm, sizeof(slurm), "%s/slurm.conf", dir);
    put_text("slurm.conf", "ClusterName=tbmlab\nAuthInfo=socket=/run/x/munge.socket.2,ttl=60\n");
    ck_assert_int_eq(tbm_store_open(&st, conf, slurm, NULL, &err), 0);   /* no tbmesh.conf: defaults */
    ck_assert_ptr_nonnull(strstr(st.set.dir, "slurm-tbmesh/records"));
    ck_assert_str_eq(st.cluster, "tbmlab");
    ck_assert_str_eq(st.munge_socket, "/run/x/munge.socket.2");
    ck_assert_int_eq(st.set.records, 1);
    put_text("tbmesh.conf", "AgentPort=6830\nRecordDir=/shared/r\nRecords=no\n");
    ck_assert_int_eq(tbm_store_open(&st, conf, slurm, store, &err), 0);
    ck_assert_str_eq(st.set.dir, store);   /* the plug-in's record_dir= wins */
    ck_assert_int_eq(st.set.records, 0);
    put_text("tbmesh.conf", "RecordReaders=no-such-group-here\n");
    ck_assert_int_eq(tbm_store_open(&st, conf, slurm, NULL, &err), -1);
    ck_assert_str_eq(err.msg, "RecordReaders=no-such-group-here: no such group on this host: create it or fix "
                              "tbmesh.conf");
}
END_TEST

static void open_store(tbm_store_t *st)
{
    char store[300];
    tbm_err_t err = { { 0 } };

    snprintf(store, sizeof(store), "%s/shared/records", dir);
    ck_assert_int_eq(tbm_store_open(st, NULL, NULL, store, &err), 0);
    ck_assert_str_eq(st->cluster, "cluster");
}

START_TEST(files_modes_and_refusals)
{
    tbm_store_t st;
    tbm_err_t err = { { 0 } };
    char path[600];
    struct stat s;
    size_t len;
    char *text;

    open_store(&st);
    ck_assert_ptr_null(tbm_store_get(&st, 7, "json", &len, &err));
    ck_assert_msg(strstr(err.msg, "job 7 has no record that you may read in ") && strstr(err.msg, "tbmesh repro sync") &&
                  strstr(err.msg, "not your job"), "%s", err.msg);
    if (geteuid() != 0)
        return;   /* the rest makes files for another owner */
    ck_assert_int_eq(tbm_store_put(&st, 7, 4242, "json", "{}\n", 3, &err), 0);
    tbm_store_path(&st, 7, "json", path, sizeof(path));
    ck_assert_int_eq(stat(path, &s), 0);
    ck_assert_int_eq(s.st_uid, 0);   /* root's: the user reads it through an ACL entry and owns nothing */
    ck_assert_int_eq(s.st_mode & 0777, 0440);
    {
        char xattr[256];
        ck_assert_int_gt(getxattr(path, "system.posix_acl_access", xattr, sizeof(xattr)), 0);
    }
    /* a file of the store that is not root's, or that others may write, is not read as a record */
    ck_assert_int_eq(chown(path, 4242, 0), 0);
    ck_assert_ptr_null(tbm_store_get(&st, 7, "json", &len, &err));
    ck_assert_msg(strstr(err.msg, "owned by another user") && strstr(err.msg, "not trusted"), "%s", err.msg);
    ck_assert_int_eq(chown(path, 0, 0), 0);
    ck_assert_int_eq(chmod(path, 0446), 0);
    ck_assert_ptr_null(tbm_store_get(&st, 7, "json", &len, &err));
    ck_assert_msg(strstr(err.msg, "writable by others"), "%s", err.msg);
    ck_assert_int_eq(chmod(path, 0440), 0);
    snprintf(path, sizeof(path), "%s/shared/records/cluster", dir);
    ck_assert_int_eq(stat(path, &s), 0);
    ck_assert_int_eq(s.st_mode & 0777, 0711);
    text = tbm_store_get(&st, 7, "json", &len, &err);
    ck_assert_str_eq(text, "{}\n");
    free(text);
    /* a store folder others may write is refused */
    ck_assert_int_eq(chmod(path, 0777), 0);
    ck_assert_int_eq(tbm_store_put(&st, 8, 4242, "json", "{}", 2, &err), -1);
    ck_assert_msg(strstr(err.msg, "is not a folder of root's that only root may write"), "%s", err.msg);
    ck_assert_int_eq(chmod(path, 0711), 0);
}
END_TEST

START_TEST(parts_and_cache)
{
    tbm_store_t st;
    tbm_err_t err = { { 0 } };
    json_object *parts, *names;
    char path[2048];
    size_t len;
    char *text;

    if (geteuid() != 0)
        return;
    open_store(&st);
    ck_assert_int_eq(tbm_store_part_put(&st, 9, "step-0-0", "{\"step\": 0}", &err), 0);
    ck_assert_int_eq(tbm_store_part_put(&st, 9, "step-0-1", "{\"step\": 0, \"node_id\": 1}", &err), 0);
    ck_assert_int_eq(tbm_store_part_put(&st, 9, "bad", "not json", &err), 0);
    parts = tbm_store_parts(&st, 9, &names);
    ck_assert_uint_eq(json_object_array_length(parts), 3);   /* what does not read is said, not dropped */
    ck_assert_uint_eq(json_object_array_length(names), 3);   /* ... and removed with the others */
    {
        size_t i, said = 0;
        for (i = 0; i < 3; i++) {
            json_object *p = json_object_array_get_idx(parts, i);
            if (tbm_json_str(p, "unreadable")) {
                ck_assert_str_eq(tbm_json_str(p, "unreadable"), "bad.json");
                ck_assert_ptr_nonnull(tbm_json_str(p, "why"));
                said++;
            }
        }
        ck_assert_uint_eq(said, 1);
    }
    json_object_put(parts);
    /* a part that comes after the merger read the others stays for sync, and so does one being written */
    ck_assert_int_eq(tbm_store_part_put(&st, 9, "step-1-1", "{\"step\": 1}", &err), 0);
    snprintf(path, sizeof(path), "%s/%s/.parts/9/step-2-0.json.tmp.AbC123", st.set.dir, st.cluster);
    ck_assert_int_eq(tbm_write_file_atomic(path, "{\"st", 5, 0600, &err), 0);
    tbm_store_parts_remove(&st, 9, names);
    json_object_put(names);
    parts = tbm_store_parts(&st, 9, &names);
    ck_assert_uint_eq(json_object_array_length(parts), 1);
    ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(names, 0)), "step-1-1.json");
    json_object_put(parts);
    tbm_store_parts_remove(&st, 9, names);
    json_object_put(names);
    unlink(path);
    tbm_store_parts_remove(&st, 9, NULL);
    parts = tbm_store_parts(&st, 9, NULL);
    ck_assert_uint_eq(json_object_array_length(parts), 0);
    json_object_put(parts);
    /* the merger removed the job's folder since: the part is put in a new one */
    snprintf(path, sizeof(path), "%s/%s/.parts/9", st.set.dir, st.cluster);
    ck_assert_int_eq(access(path, F_OK), -1);
    ck_assert_int_eq(tbm_store_part_put(&st, 9, "step-3-0", "{\"step\": 3}", &err), 0);
    parts = tbm_store_parts(&st, 9, &names);
    ck_assert_uint_eq(json_object_array_length(parts), 1);
    json_object_put(parts);
    tbm_store_parts_remove(&st, 9, names);
    json_object_put(names);
    ck_assert_int_eq(access(path, F_OK), -1);
    ck_assert_int_eq(tbm_store_cache_put(&st, "0.json", "{}", &err), 0);
    text = tbm_store_cache_get(&st, "0.json", &len);
    ck_assert_str_eq(text, "{}");
    free(text);
}
END_TEST

START_TEST(a_record_is_read_back_under_its_own_job_only)
{
    tbm_store_t st;
    tbm_err_t err = { { 0 } };
    json_object *rec = tbm_record_new(12, "cluster", "end", "COMPLETED"), *back;
    size_t len;
    char *text;

    if (geteuid() != 0) {
        json_object_put(rec);
        return;
    }
    open_store(&st);
    text = tbm_record_text(rec, &len, &err);
    ck_assert_ptr_nonnull(text);
    /* job 12's text stored as job 13 (a copy, a forgery): refused, never taken for 13 nor rewritten as 12 */
    ck_assert_int_eq(tbm_store_put(&st, 13, 4242, "json", text, len, &err), 0);
    ck_assert_ptr_null(tbm_store_load(&st, 13, NULL, &err));
    ck_assert_msg(strstr(err.msg, "the record stored as job 13 of cluster names job 12 of cluster: refused"), "%s", err.msg);
    ck_assert_int_eq(tbm_store_put(&st, 12, 4242, "json", text, len, &err), 0);
    back = tbm_store_load(&st, 12, NULL, &err);
    ck_assert_ptr_nonnull(back);
    json_object_put(back);
    free(text);
    json_object_put(rec);
}
END_TEST

START_TEST(seals_need_munged_and_refuse_garbage)
{
    tbm_store_t st;
    tbm_err_t err = { { 0 } };
    json_object *rec = tbm_record_new(5, "cluster", "end", "COMPLETED");
    char *seal;

    open_store(&st);
    snprintf(st.munge_socket, sizeof(st.munge_socket), "%s/no-munged.socket", dir);
    seal = tbm_seal_make(&st, 5, "ab", NULL, &err);
    ck_assert_ptr_null(seal);
    ck_assert_msg(strstr(err.msg, "munge: cannot seal the record of job 5") && strstr(err.msg, "is munged running at"),
                  "%s", err.msg);
    ck_assert_int_eq(tbm_seal_check(&st, "MUNGE:garbage:", 5, "ab", NULL, &err), -1);
    ck_assert_msg(strstr(err.msg, "the seal of job 5 is not a valid MUNGE credential of this cluster"), "%s", err.msg);
    if (geteuid() == 0) {   /* a record whose seal cannot be made is not left half-written as sealed */
        ck_assert_int_eq(tbm_store_record(&st, rec, 0, NULL, &err), -1);
        ck_assert_ptr_nonnull(strstr(err.msg, "munge: cannot seal"));
    }
    json_object_put(rec);
}
END_TEST

static Suite *store_suite(void)
{
    Suite *s = suite_create("record_store");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, settings_from_both_files);
    tcase_add_test(tc, files_modes_and_refusals);
    tcase_add_test(tc, parts_and_cache);
    tcase_add_test(tc, a_record_is_read_back_under_its_own_job_only);
    tcase_add_test(tc, seals_need_munged_and_refuse_garbage);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(store_suite)
