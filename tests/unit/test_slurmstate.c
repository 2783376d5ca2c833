/* test_slurmstate.c: unit tests of lib/slurmstate.c: scontrol's node lines and squeue's running jobs as Slurm
 * 22.05 (captured) and 24.11 print them (tests/fixtures/slurm); reasons with brackets, stamps, several lines
 * and the fields 24.11 prints after them; damaged lines counted, never fatal. */
#include "config.h"
#include "tbm_check.h"
#include "tbm_fixture.h"

#include <string.h>
#include <time.h>

#include "slurmstate.h"

static void read_nodes(const char *rel, tbm_slurm_nodes_t *ns)
{
    tbm_err_t err = { { 0 } };
    size_t len;
    char *text = tbm_fixture(rel, &len);

    ck_assert_msg(tbm_slurm_nodes_parse(text, len, ns, &err) == 0, "%s", err.msg);
    free(text);
}

static const tbm_slurm_node_t *node(const tbm_slurm_nodes_t *ns, const char *name)
{
    const tbm_slurm_node_t *n = tbm_slurm_nodes_find(ns, name);

    ck_assert_msg(n != NULL, "no node %s", name);
    return n;
}

START_TEST(scontrol_22_05)
{
    tbm_slurm_nodes_t ns;
    const tbm_slurm_node_t *n;

    read_nodes("slurm/scontrol-22.05.txt", &ns);
    ck_assert_uint_eq(ns.n, 4);
    ck_assert_uint_eq(ns.not_found, 1);
    ck_assert_uint_eq(ns.skipped, 0);
    n = node(&ns, "mac01");
    ck_assert_str_eq(n->state, "allocated");
    ck_assert_int_eq(n->drain, 0);
    ck_assert_int_eq(n->not_responding, 0);
    ck_assert_str_eq(n->reason, "");
    n = node(&ns, "mac03");
    ck_assert_str_eq(n->state, "mixed");
    ck_assert_int_eq(n->drain, 1);
    ck_assert_str_eq(n->reason, "tbmesh: cable-missing at mac03:en2 <-> mac04:en2: nothing is at the other end of "
                                "Thunderbolt 1");
    n = node(&ns, "mac04");   /* never registered; an admin's reason with brackets of its own */
    ck_assert_str_eq(n->state, "unknown");
    ck_assert_int_eq(n->drain, 1);
    ck_assert_int_eq(n->not_responding, 1);
    ck_assert_str_eq(n->reason, "swap the PSU [ticket 4711]");
    ck_assert_ptr_null(tbm_slurm_nodes_find(&ns, "mac09"));
    tbm_slurm_nodes_free(&ns);
}
END_TEST

START_TEST(scontrol_24_11)
{
    tbm_slurm_nodes_t ns;
    const tbm_slurm_node_t *n;

    read_nodes("slurm/scontrol-24.11.txt", &ns);
    ck_assert_uint_eq(ns.n, 4);
    ck_assert_uint_eq(ns.not_found, 1);
    n = node(&ns, "mac01");
    ck_assert_str_eq(n->state, "mixed");
    ck_assert_int_eq(n->drain, 0);
    n = node(&ns, "mac02");
    ck_assert_str_eq(n->state, "idle");
    ck_assert_int_eq(n->drain, 1);
    ck_assert_str_eq(n->reason, "tbmesh: iface-down at mac02:en3 <-> mac04:en3: interface en3 is down");
    n = node(&ns, "mac03");
    ck_assert_str_eq(n->state, "down");
    ck_assert_int_eq(n->not_responding, 1);
    ck_assert_str_eq(n->reason, "Not responding");
    n = node(&ns, "mac04");   /* a reason of two lines, then Comment= and Extra= */
    ck_assert_str_eq(n->state, "allocated");
    ck_assert_int_eq(n->drain, 1);
    ck_assert_str_eq(n->reason, "tbmesh: bridge0-up at mac04: bridge0 is up");
    tbm_slurm_nodes_free(&ns);
}
END_TEST

static void one(const char *line, tbm_slurm_node_t *n)
{
    tbm_err_t err = { { 0 } };

    ck_assert_msg(tbm_slurm_node_parse(line, strlen(line), n, &err) == 0, "%s: %s", line, err.msg);
}

START_TEST(states_and_reasons)
{
    tbm_slurm_node_t n;
    char line[1024];

    one("NodeName=mac01 State=IDLE* ThreadsPerCore=1", &n);
    ck_assert_str_eq(n.state, "idle");
    ck_assert_int_eq(n.not_responding, 1);
    one("NodeName=mac01 State=IDLE+CLOUD+POWERED_DOWN ThreadsPerCore=1", &n);
    ck_assert_str_eq(n.state, "idle");
    ck_assert_int_eq(n.drain, 0);
    one("NodeName=mac01 State=DRAINING Reason=tbmesh: x", &n);   /* sinfo's words, read all the same */
    ck_assert_str_eq(n.state, "draining");
    ck_assert_int_eq(n.drain, 1);
    one("NodeName=mac01 State=IDLE Reason=DRAIN later", &n);
    ck_assert_int_eq(n.drain, 0);
    ck_assert_str_eq(n.reason, "DRAIN later");
    /* no stamp: cut at the fields printed after the reason */
    one("NodeName=mac01 State=IDLE+DRAIN Reason=maintenance Comment=x", &n);
    ck_assert_str_eq(n.reason, "maintenance");
    /* a stamp-like part inside the reason is kept: only the one the line or a field follows ends it */
    one("NodeName=mac01 State=IDLE+DRAIN Reason=see [a@b] first [root@2025-01-01T00:00:00]", &n);
    ck_assert_str_eq(n.reason, "see [a@b] first");
    one("NodeName=mac01 State=IDLE+DRAIN Reason=x [root@Tue 12:00]", &n);   /* SLURM_TIME_FORMAT's own */
    ck_assert_str_eq(n.reason, "x");
    /* control bytes and bytes that are not UTF-8: '?'; UTF-8 kept */
    one("NodeName=mac01 State=IDLE+DRAIN Reason=caf\xc3\xa9 \x01 \xff ok [root@t]", &n);
    ck_assert_str_eq(n.reason, "caf\xc3\xa9 ? ? ok");
    /* a long reason is cut to fit, at a character's end */
    memset(line, 0, sizeof(line));
    strcpy(line, "NodeName=mac01 State=IDLE+DRAIN Reason=");
    while (strlen(line) < 700)
        strcat(line, "\xc3\xa9");
    one(line, &n);
    ck_assert_uint_eq(strlen(n.reason), TBM_SLURM_REASON_MAX - 1 - (TBM_SLURM_REASON_MAX - 1) % 2);
}
END_TEST

/* line read from a copy with no NUL after it: its state and reason. */
static void unterminated(const char *line, const char *state, const char *reason)
{
    size_t len = strlen(line);
    char *raw = malloc(len);
    tbm_slurm_node_t n;
    tbm_err_t err = { { 0 } };

    memcpy(raw, line, len);
    ck_assert_msg(tbm_slurm_node_parse(raw, len, &n, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(n.state, state);
    ck_assert_str_eq(n.reason, reason);
    free(raw);
}

START_TEST(damaged_lines_are_counted)
{
    static const char text[] = "NodeName=mac01 Arch=arm64 State=IDLE ThreadsPerCore=1\n"
                               "\n"
                               "NodeName=mac02 Arch=arm64 ThreadsPerCore=1\n"     /* no State= */
                               "slurm_load_node error: Unable to contact slurm controller (connect failure)\n"
                               "NodeName=mac[03] State=IDLE\n"                     /* not a node's name */
                               "NodeName=mac04 State= Reason=x\n"
                               "No nodes in the system\n"
                               "NodeName=mac05 State=MIXED";                      /* no line end at the end */
    tbm_slurm_nodes_t ns;
    tbm_slurm_node_t n;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_slurm_nodes_parse(text, strlen(text), &ns, &err), 0);
    ck_assert_uint_eq(ns.n, 2);
    ck_assert_str_eq(ns.v[1].name, "mac05");
    ck_assert_uint_eq(ns.skipped, 4);
    ck_assert_str_eq(ns.first_error, "scontrol's line of node mac02 has no State=");
    tbm_slurm_nodes_free(&ns);
    ck_assert_int_eq(tbm_slurm_nodes_parse("", 0, &ns, &err), 0);
    ck_assert_uint_eq(ns.n, 0);
    tbm_slurm_nodes_free(&ns);
    ck_assert_int_eq(tbm_slurm_node_parse("Node mac09 not found", 20, &n, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "no NodeName="));
    ck_assert_int_eq(tbm_slurm_node_parse("NodeName=mac01 State=IDLE", 9, &n, &err), -1);   /* len is the bound */
    unterminated("NodeName=mac01 State=IDLE", "idle", "");   /* no NUL after the line (found by fuzz_slurmstate) */
    unterminated("NodeName=mac01 State=IDLE+DRAIN Reason=x [root@t]", "idle", "x");
}
END_TEST

START_TEST(squeue_jobs)
{
    static const char bad[] = "45 mac01\nx mac02\n46\n47 mac[01-\n48 mac01 extra\n49 lnx01\n";
    tbm_err_t err = { { 0 } };
    tbm_slurm_jobs_t js;
    size_t len;
    char *text = tbm_fixture("slurm/squeue-22.05.txt", &len);

    ck_assert_int_eq(tbm_slurm_jobs_parse(text, len, &js, &err), 0);
    free(text);
    ck_assert_uint_eq(js.n, 2);
    ck_assert_uint_eq(js.v[0].id, 1);
    ck_assert_uint_eq(js.v[0].n_nodes, 2);
    ck_assert_str_eq(js.v[0].nodes[1], "mac02");
    ck_assert_str_eq(js.v[1].nodes[0], "mac03");
    tbm_slurm_jobs_free(&js);
    text = tbm_fixture("slurm/squeue-24.11.txt", &len);
    ck_assert_int_eq(tbm_slurm_jobs_parse(text, len, &js, &err), 0);
    free(text);
    ck_assert_uint_eq(js.n, 4);
    ck_assert_uint_eq(js.v[3].id, 44);
    ck_assert_uint_eq(js.v[3].n_nodes, 3);
    ck_assert_str_eq(js.v[3].nodes[2], "mac04");
    tbm_slurm_jobs_free(&js);
    ck_assert_int_eq(tbm_slurm_jobs_parse(bad, strlen(bad), &js, &err), 0);
    ck_assert_uint_eq(js.n, 2);
    ck_assert_uint_eq(js.skipped, 4);
    ck_assert_ptr_nonnull(strstr(js.first_error, "not a line of squeue --format='%A %N'"));
    tbm_slurm_jobs_free(&js);
}
END_TEST

/* The local time t ("YYYY-MM-DDTHH:MM:SS") as sacct prints it. */
static long long local_time(const char *t)
{
    struct tm tm;

    memset(&tm, 0, sizeof(tm));
    ck_assert_ptr_nonnull(strptime(t, "%Y-%m-%dT%H:%M:%S", &tm));
    tm.tm_isdst = -1;
    return (long long)mktime(&tm);
}

START_TEST(sacct_ended_mac_jobs)
{
    static const char bad[] = "110|COMPLETED|2026-12-05T07:00:00\n"
                              "x|COMPLETED|2026-12-05T07:00:00|mac01|TBM1:e\n"
                              "111|COMPLETED|2026-12-05T07:00:00|mac01|TBM1:e\n"
                              "112|COMPLETED|yesterday|mac01|TBM1:e\n\n";
    tbm_err_t err = { { 0 } };
    tbm_ended_jobs_t e;
    long long now = local_time("2026-12-05T08:00:00");
    size_t len;
    char *text = tbm_fixture("slurm/sacct-ended.txt", &len);

    /* ended Mac jobs that ran, at least two minutes ago: not 102 (running), 103 (never ran), 104 and 109 (not
     * Mac jobs), 106 (ended 30 s ago), 108 (pending); 105 once; 107's comment holds bars */
    ck_assert_int_eq(tbm_sacct_ended_parse(text, len, now, 120, &e, &err), 0);
    ck_assert_uint_eq(e.n, 3);
    ck_assert_uint_eq(e.id[0], 101);
    ck_assert_uint_eq(e.id[1], 105);
    ck_assert_uint_eq(e.id[2], 107);
    ck_assert_uint_eq(e.skipped, 0);
    tbm_ended_jobs_free(&e);
    ck_assert_int_eq(tbm_sacct_ended_parse(text, len, now, 0, &e, &err), 0);   /* no grace: 106 too */
    ck_assert_uint_eq(e.n, 4);
    ck_assert_uint_eq(e.id[2], 106);
    ck_assert_uint_eq(e.id[3], 107);
    tbm_ended_jobs_free(&e);
    free(text);
    ck_assert_int_eq(tbm_sacct_ended_parse(bad, strlen(bad), now, 120, &e, &err), 0);
    ck_assert_uint_eq(e.n, 1);
    ck_assert_uint_eq(e.id[0], 111);
    ck_assert_uint_eq(e.skipped, 2);
    ck_assert_ptr_nonnull(strstr(e.first_error, "not a line of sacct -P -o JobIDRaw,State,End,NodeList,AdminComment"));
    tbm_ended_jobs_free(&e);
    ck_assert_int_eq(tbm_sacct_time("2026-12-05T08:00:00|x", 19), now);   /* bounded by its length */
    ck_assert_int_eq(tbm_sacct_time("Unknown", 7), -1);
    ck_assert_int_eq(tbm_sacct_time("2026-12-05T08:00:00Z", 20), -1);
    ck_assert_int_eq(tbm_sacct_time("2026-12-05T08:00:00000000000000000000000000", 43), -1);
    ck_assert_int_eq(tbm_sacct_time("", 0), -1);
    ck_assert_int_eq(tbm_slurm_state_final("CANCELLED by 1001"), 1);
    ck_assert_int_eq(tbm_slurm_state_final("OUT_OF_MEMORY"), 1);
    ck_assert_int_eq(tbm_slurm_state_final("COMPLETING"), 0);
    ck_assert_int_eq(tbm_slurm_state_final("REQUEUED"), 0);
    ck_assert_int_eq(tbm_slurm_state_final(""), 0);
}
END_TEST

static Suite *slurmstate_suite(void)
{
    Suite *s = suite_create("slurmstate");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, scontrol_22_05);
    tcase_add_test(tc, scontrol_24_11);
    tcase_add_test(tc, states_and_reasons);
    tcase_add_test(tc, damaged_lines_are_counted);
    tcase_add_test(tc, squeue_jobs);
    tcase_add_test(tc, sacct_ended_mac_jobs);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(slurmstate_suite)
