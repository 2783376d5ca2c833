/* test_record_settings.c: unit tests of lib/record_settings.c (the store's settings in tbmesh.conf). */
#include "tbm_check.h"

#include <string.h>

#include "record.h"

START_TEST(settings_among_other_lines)
{
    const char *conf = "# tbmesh.conf\nAgentPort=6830\nGroup=a Nodes=mac[01-02] Topology=mesh\n"
                       "RecordDir=/shared/records/   # on the cluster filesystem\nRecordReaders=slurm-acct\n"
                       "Records=no\n";
    tbm_record_settings_t s = { "/var/lib/x", "", 1 };
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_record_settings_parse(conf, strlen(conf), "t.conf", &s, &err), 0);
    ck_assert_str_eq(s.dir, "/shared/records");
    ck_assert_str_eq(s.readers, "slurm-acct");
    ck_assert_int_eq(s.records, 0);
}
END_TEST

START_TEST(bad_settings_name_the_line)
{
    tbm_record_settings_t s = { "/var/lib/x", "", 1 };
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_record_settings_parse("\nRecordDir=records\n", 19, "t.conf", &s, &err), -1);
    ck_assert_str_eq(err.msg, "t.conf:2: RecordDir=records is not an absolute folder path: give one, e.g. "
                              "RecordDir=/shared/slurm/tbmesh-records");
    ck_assert_int_eq(tbm_record_settings_parse("RecordDir=/a/../etc\n", 20, "t.conf", &s, &err), -1);
    ck_assert_int_eq(tbm_record_settings_parse("RecordReaders=a b\n", 18, "t.conf", &s, &err), -1);
    ck_assert_str_eq(err.msg, "t.conf:1: RecordReaders=a b is not a Unix group name: name the group of the "
                              "accounting operators, e.g. RecordReaders=slurm-acct");
    ck_assert_int_eq(tbm_record_settings_parse("Records=maybe", 13, "t.conf", &s, &err), -1);
    ck_assert_str_eq(err.msg, "t.conf:1: Records=maybe is neither yes nor no");
    ck_assert_str_eq(s.dir, "/var/lib/x");
    /* the store reads each on a line of its own: one sharing a line, or later on another's line, is named
     * (not taken for a bad value, nor left unread while the rest of the line is taken) */
    ck_assert_int_eq(tbm_record_settings_parse("Records=no AgentPort=5123\n", 26, "t.conf", &s, &err), -1);
    ck_assert_str_eq(err.msg, "t.conf:1: Records= shares its line with other settings: put it on a line of its own");
    ck_assert_int_eq(tbm_record_settings_parse("RecordDir=/srv/records AgentPort=5123", 37, "t.conf", &s, &err), -1);
    ck_assert_str_eq(err.msg, "t.conf:1: RecordDir= shares its line with other settings: put it on a line of its own");
    ck_assert_int_eq(tbm_record_settings_parse("AgentPort=5123 RecordDir=/srv/records Records=no\n", 49, "t.conf", &s,
                                               &err), -1);
    ck_assert_str_eq(err.msg, "t.conf:1: RecordDir= is not at the start of its line: put RecordDir=, RecordReaders= "
                              "and Records= each on a line of its own");
    ck_assert_int_eq(s.records, 1);
    ck_assert_str_eq(s.dir, "/var/lib/x");
}
END_TEST

START_TEST(a_slurm_conf_key)
{
    const char *conf = "#ClusterName=old\nControlMachine=x\nclustername=tbmlab\nClusterName=second\n";
    char v[64];

    ck_assert_int_eq(tbm_record_conf_value(conf, strlen(conf), "ClusterName", v, sizeof(v)), 1);
    ck_assert_str_eq(v, "tbmlab");
    ck_assert_int_eq(tbm_record_conf_value(conf, strlen(conf), "SlurmUser", v, sizeof(v)), 0);
}
END_TEST

static Suite *settings_suite(void)
{
    Suite *s = suite_create("record_settings");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, settings_among_other_lines);
    tcase_add_test(tc, bad_settings_name_the_line);
    tcase_add_test(tc, a_slurm_conf_key);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(settings_suite)
