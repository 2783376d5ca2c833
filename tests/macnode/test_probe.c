/* test_probe.c: the macnode probe backends: replay (the lab's recorded outputs), darwin (run against
 * stand-in commands that print captured macOS outputs, so its code runs on Linux too). */
#include "tbm_check.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe.h"

static char tmpdir[1024];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "%s/tbm-probe-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

static void fixture_dir(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/macos/%s", tbm_fixtures_dir(), name);
}

/* Replay a folder and parse it; returns the number of error findings. */
static int replay_facts(const char *dir, tbm_host_facts_t *f)
{
    probe_capture_t cap;
    tbm_findings_t fs;
    tbm_err_t err = { { 0 } };
    int errors;

    ck_assert_msg(probe_replay_capture(dir, &cap, &err) == 0, "%s", err.msg);
    tbm_findings_init(&fs);
    errors = tbm_facts_parse_all(&cap.raw, f, &fs);
    tbm_findings_free(&fs);
    probe_capture_free(&cap);
    return errors;
}

START_TEST(replay_reads_a_mac_studio)
{
    static tbm_host_facts_t f;
    char dir[PATH_MAX];
    tbm_iface_t *en;

    fixture_dir(dir, sizeof(dir), "studio-a1");
    ck_assert_int_eq(replay_facts(dir, &f), 0);
    ck_assert_str_eq(f.chip, "Apple M3 Ultra");
    ck_assert_str_eq(f.model_id, "Mac15,14");
    ck_assert_str_eq(f.os_version, "26.2");
    ck_assert_uint_eq(f.memory_bytes, 274877906944ull);
    en = tbm_facts_find_iface(&f, "en0");
    ck_assert_ptr_nonnull(en);
    ck_assert_str_eq(en->ipv4, "192.168.10.11");
}
END_TEST

START_TEST(replay_refuses_missing_folder)
{
    probe_capture_t cap;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(probe_replay_capture("/nonexistent/tbm-replay", &cap, &err), -1);
    ck_assert_str_eq(err.msg, "/nonexistent/tbm-replay: no such folder of recorded outputs; give the folder "
                              "that holds system_profiler_SPThunderboltDataType.json");
}
END_TEST

START_TEST(replay_refuses_symlink)
{
    probe_capture_t cap;
    tbm_err_t err = { { 0 } };
    char path[PATH_MAX];

    make_tmpdir();
    snprintf(path, sizeof(path), "%s/ifconfig.txt", tmpdir);
    ck_assert_int_eq(symlink("/etc/passwd", path), 0);
    ck_assert_int_eq(probe_replay_capture(tmpdir, &cap, &err), -1);
    ck_assert_msg(strstr(err.msg, "ifconfig.txt: is a symbolic link; only regular files are read") != NULL,
                  "%s", err.msg);
    remove_tmpdir();
}
END_TEST

START_TEST(replay_refuses_huge_file_and_keeps_missing_ones_empty)
{
    probe_capture_t cap;
    tbm_err_t err = { { 0 } };
    char path[PATH_MAX];
    FILE *fp;

    make_tmpdir();
    /* Only sw_vers present: the others stay empty (the parsers then report them missing). */
    snprintf(path, sizeof(path), "%s/sw_vers.txt", tmpdir);
    fp = fopen(path, "w");
    fputs("ProductName:\t\tmacOS\nProductVersion:\t\t26.2\nBuildVersion:\t\t25C56\n", fp);
    fclose(fp);
    ck_assert_int_eq(probe_replay_capture(tmpdir, &cap, &err), 0);
    ck_assert_ptr_nonnull(cap.raw.sw_vers.data);
    ck_assert_ptr_null(cap.raw.ifconfig.data);
    probe_capture_free(&cap);

    snprintf(path, sizeof(path), "%s/ifconfig.txt", tmpdir);
    fp = fopen(path, "w");
    ck_assert_int_eq(fseek(fp, (long)TBM_RAW_MAX + 10, SEEK_SET), 0);
    fputc('x', fp);
    fclose(fp);
    ck_assert_int_eq(probe_replay_capture(tmpdir, &cap, &err), -1);
    ck_assert_msg(strstr(err.msg, "ifconfig.txt: larger than 4194304 bytes") != NULL, "%s", err.msg);
    remove_tmpdir();
}
END_TEST

/* Stand-in commands: each prints one captured file (or misbehaves as told). */
static void stand_in(const char *name, const char *body)
{
    char path[PATH_MAX];
    FILE *fp;

    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fprintf(fp, "#!/bin/sh\n%s\n", body);
    fclose(fp);
    ck_assert_int_eq(chmod(path, 0755), 0);
}

static void stand_ins_printing(const char *fixture, const char *hang)
{
    char dir[1024], body[4096];

    fixture_dir(dir, sizeof(dir), fixture);
#define CAT(cmd, file)                                                                   \
    snprintf(body, sizeof(body), "/bin/cat '%s/%s'", dir, file);                             \
    stand_in(cmd, hang && !strcmp(hang, cmd) ? "exec /bin/sleep 30" : body)
    CAT("system_profiler", "system_profiler_SPThunderboltDataType.json");
    CAT("networksetup", "networksetup_listallhardwareports.txt");
    CAT("ifconfig", "ifconfig.txt");
    CAT("ibv_devices", "ibv_devices.txt");
    CAT("rdma_ctl", "rdma_ctl_status.txt");
    CAT("sw_vers", "sw_vers.txt");
#undef CAT
    /* sysctl serves both of its calls: -n for the three values, otherwise the perf levels. */
    snprintf(body, sizeof(body), "if [ \"$1\" = -n ]; then /bin/cat '%s/sysctl.txt'; else /bin/cat '%s/sysctl_perflevels.txt'; fi",
             dir, dir);
    stand_in("sysctl", body);
}

START_TEST(darwin_backend_equals_replay)
{
    static tbm_host_facts_t a, b;
    probe_capture_t cap;
    tbm_findings_t fs;
    tbm_err_t err = { { 0 } };
    char dir[PATH_MAX];

    make_tmpdir();
    stand_ins_printing("studio-a1", NULL);
    setenv("TBMESH_PROBE_PATH", tmpdir, 1);
    ck_assert_int_eq(probe_darwin_capture(5000, &cap, &err), 0);
    ck_assert_msg(!tbm_erris(&err), "%s", err.msg);
    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_facts_parse_all(&cap.raw, &a, &fs), 0);
    tbm_findings_free(&fs);
    probe_capture_free(&cap);
    fixture_dir(dir, sizeof(dir), "studio-a1");
    replay_facts(dir, &b);
    ck_assert_int_eq(memcmp(&a, &b, sizeof(a)), 0);
    unsetenv("TBMESH_PROBE_PATH");
    remove_tmpdir();
}
END_TEST

START_TEST(darwin_backend_times_out_a_hung_command)
{
    probe_capture_t cap;
    tbm_err_t err = { { 0 } };

    make_tmpdir();
    stand_ins_printing("studio-a1", "ibv_devices");
    setenv("TBMESH_PROBE_PATH", tmpdir, 1);
    ck_assert_int_eq(probe_darwin_capture(300, &cap, &err), 0);
    ck_assert_str_eq(err.msg, "ibv_devices: no answer within 300 ms; killed (is the host overloaded or the "
                              "command hung?)");
    ck_assert_ptr_null(cap.raw.ibv_devices.data);
    ck_assert_ptr_nonnull(cap.raw.ifconfig.data);
    probe_capture_free(&cap);
    unsetenv("TBMESH_PROBE_PATH");
    remove_tmpdir();
}
END_TEST

START_TEST(linux_probe_sees_this_host)
{
    static tbm_host_facts_t f;
    tbm_findings_t fs;
    tbm_err_t err = { { 0 } };
    char host[TBM_HOST_MAX] = "";

    tbm_findings_init(&fs);
    ck_assert_int_eq(probe_linux_facts(&f, &fs, &err), 0);
    gethostname(host, sizeof(host) - 1);
    ck_assert_str_eq(f.hostname, host);
    ck_assert_int_gt(f.cores_performance, 0);
    ck_assert_int_le(f.cores_performance + f.cores_efficiency, (int)sysconf(_SC_NPROCESSORS_ONLN));
    ck_assert_uint_gt(f.memory_bytes, 0);
    ck_assert_ptr_nonnull(tbm_facts_find_iface(&f, "lo"));
    ck_assert_str_eq(tbm_facts_find_iface(&f, "lo")->ipv4, "127.0.0.1");
    ck_assert_int_eq(tbm_facts_find_iface(&f, "lo")->prefix_len, 8);
    ck_assert_int_eq(f.n_ports, 0);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(netplan_apply_refuses_off_macos)
{
    tbm_err_t err = { { 0 } };

#ifndef __APPLE__
    ck_assert_int_eq(probe_darwin_apply("ifconfig en2 inet 169.254.0.1 netmask 255.255.255.252 up\n", &err), 3);
    ck_assert_str_eq(err.msg, "--apply changes a Mac's Thunderbolt interfaces with macOS commands: run it on the "
                              "Mac (this host is not macOS); without --apply the plan is only printed");
#endif
}
END_TEST

static Suite *probe_suite(void)
{
    Suite *s = suite_create("probe");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, replay_reads_a_mac_studio);
    tcase_add_test(tc, replay_refuses_missing_folder);
    tcase_add_test(tc, replay_refuses_symlink);
    tcase_add_test(tc, replay_refuses_huge_file_and_keeps_missing_ones_empty);
    tcase_add_test(tc, darwin_backend_equals_replay);
    tcase_add_test(tc, darwin_backend_times_out_a_hung_command);
    tcase_add_test(tc, linux_probe_sees_this_host);
    tcase_add_test(tc, netplan_apply_refuses_off_macos);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(probe_suite)
