/* test_agent_gate.c: the agent's parts without its main (libmacnoded): which waiting connection the gate's
 * limits close to make room (agent_gate_victim), whose proof is made next (agent_gate_next_proof) and the
 * proofs' rate limit (agent_bucket_take), and the log's rate limit (agent_log_noisy, agent_log_tick). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent_gate.h"
#include "agent_log.h"
#include "tbm_check.h"

static agent_waiting_t w[8];

static void waiting(int i, const char *addr, long long since)
{
    snprintf(w[i].addr, sizeof(w[i].addr), "%s", addr);
    w[i].since = w[i].moved = since;
    w[i].phase = GATE_WANTS_PROVE;
    w[i].kind = GATE_ANY;
}

START_TEST(room_while_under_the_limits)
{
    ck_assert_int_eq(agent_gate_victim(w, 0, "10.0.0.1", 0, 2, 4), -1);
    waiting(0, "10.0.0.1", 100);
    waiting(1, "10.0.0.2", 50);
    ck_assert_int_eq(agent_gate_victim(w, 2, "10.0.0.1", 0, 2, 4), -1);
    ck_assert_int_eq(agent_gate_victim(w, 2, "10.0.0.3", 0, 2, 4), -1);
}
END_TEST

START_TEST(a_peer_at_its_limit_loses_its_own_oldest)
{
    waiting(0, "10.0.0.1", 300);
    waiting(1, "10.0.0.2", 10);     /* the oldest of all, but another peer's */
    waiting(2, "10.0.0.1", 200);    /* the oldest of 10.0.0.1 */
    ck_assert_int_eq(agent_gate_victim(w, 3, "10.0.0.1", 0, 2, 8), 2);
    ck_assert_int_eq(agent_gate_victim(w, 3, "10.0.0.2", 0, 2, 8), -1);
    ck_assert_int_eq(agent_gate_victim(w, 3, "10.0.0.2", 0, 1, 8), 1);
}
END_TEST

START_TEST(full_gate_loses_the_oldest_of_all)
{
    waiting(0, "10.0.0.1", 300);
    waiting(1, "10.0.0.2", 400);
    waiting(2, "10.0.0.3", 100);
    waiting(3, "10.0.0.4", 200);
    ck_assert_int_eq(agent_gate_victim(w, 4, "10.0.0.5", 0, 2, 4), 2);
    ck_assert_int_eq(agent_gate_victim(w, 4, "10.0.0.3", 0, 2, 4), 2);
    ck_assert_int_eq(agent_gate_victim(w, 4, "10.0.0.5", 0, 2, 5), -1);
}
END_TEST

START_TEST(the_one_that_stood_still_longest_goes)
{
    waiting(0, "10.0.0.1", 100);   /* accepted first, but its proof was sent at 390: it is answering it */
    waiting(1, "10.0.0.1", 300);   /* accepted later, and has said nothing since */
    w[0].phase = GATE_PROVED;
    w[0].moved = 390;
    ck_assert_int_eq(agent_gate_victim(w, 2, "10.0.0.1", 0, 2, 8), 1);
    ck_assert_int_eq(agent_gate_victim(w, 2, "10.0.0.2", 0, 8, 2), 1);
}
END_TEST

START_TEST(proofs_go_first_to_peers_that_answer_them)
{
    ck_assert_int_eq(agent_gate_next_proof(w, 0), -1);
    waiting(0, "10.0.0.9", 100);     /* a flood's: proofs it got, no hello after them */
    waiting(1, "10.0.0.9", 110);
    waiting(2, "10.0.0.9", 120);
    waiting(3, "10.0.0.1", 300);     /* the bridge's, later */
    waiting(4, "10.0.0.2", 200);
    ck_assert_int_eq(agent_gate_next_proof(w, 5), -1);      /* none due */
    w[0].phase = w[1].phase = GATE_PROVED;
    w[2].phase = w[3].phase = GATE_PROOF_DUE;
    ck_assert_int_eq(agent_gate_next_proof(w, 5), 3);       /* the bridge first, though the flood's came first */
    w[3].phase = GATE_PROVED;
    ck_assert_int_eq(agent_gate_next_proof(w, 5), 2);
    w[4].phase = GATE_PROOF_DUE;                            /* 10.0.0.2 has none open: before the flood's */
    ck_assert_int_eq(agent_gate_next_proof(w, 5), 4);
    w[0].phase = w[1].phase = GATE_PROOF_DUE;               /* equal peers: the oldest */
    w[3].phase = GATE_WANTS_PROVE;
    ck_assert_int_eq(agent_gate_next_proof(w, 5), 0);
}
END_TEST

START_TEST(roots_connections_are_counted_apart)
{
    waiting(0, "10.0.0.1", 100);   /* root's, from a port below 1024, the oldest */
    w[0].kind = GATE_ROOT;
    waiting(1, "10.0.0.1", 200);   /* a user's flood from the same host */
    waiting(2, "10.0.0.1", 300);
    /* the user's at its limit of 2 loses its own oldest, not root's older one */
    ck_assert_int_eq(agent_gate_victim(w, 3, "10.0.0.1", 0, 2, 8), 1);
    /* root's own limit is its own: room for one more of root's */
    ck_assert_int_eq(agent_gate_victim(w, 3, "10.0.0.1", GATE_ROOT, 2, 8), -1);
    waiting(3, "10.0.0.1", 50);
    w[3].kind = GATE_ROOT;
    ck_assert_int_eq(agent_gate_victim(w, 4, "10.0.0.1", GATE_ROOT, 2, 8), 3);
}
END_TEST

START_TEST(a_full_gate_keeps_roots_connections)
{
    waiting(0, "10.0.0.1", 100);   /* root's, the oldest of all */
    w[0].kind = GATE_ROOT;
    waiting(1, "10.0.0.2", 300);
    waiting(2, "10.0.0.3", 200);
    ck_assert_int_eq(agent_gate_victim(w, 3, "10.0.0.4", 0, 2, 3), 2);
    ck_assert_int_eq(agent_gate_victim(w, 3, "10.0.0.4", GATE_ROOT, 2, 3), 2);
    w[1].kind = w[2].kind = GATE_ROOT;   /* all root's: the oldest of all goes */
    ck_assert_int_eq(agent_gate_victim(w, 3, "10.0.0.4", 0, 2, 3), 0);
}
END_TEST

START_TEST(roots_proofs_go_first)
{
    waiting(0, "10.0.0.1", 100);   /* a user's flood from the bridge host, due first */
    waiting(1, "10.0.0.1", 110);
    waiting(2, "10.0.0.1", 300);   /* root's, later */
    waiting(3, "10.0.0.2", 200);   /* another peer with nothing open */
    w[2].kind = GATE_ROOT;
    w[0].phase = w[1].phase = w[2].phase = w[3].phase = GATE_PROOF_DUE;
    ck_assert_int_eq(agent_gate_next_proof(w, 4), 2);
    w[2].phase = GATE_PROVED;   /* root's open proof does not hold back the user's of the same host */
    ck_assert_int_eq(agent_gate_next_proof(w, 4), 0);
    w[0].phase = GATE_PROVED;
    ck_assert_int_eq(agent_gate_next_proof(w, 4), 3);
    waiting(4, "10.0.0.1", 400);   /* root's again, while the flood's are due: first */
    w[4].kind = GATE_ROOT;
    w[4].phase = GATE_PROOF_DUE;
    ck_assert_int_eq(agent_gate_next_proof(w, 5), 4);
}
END_TEST

START_TEST(roots_questions_rank_above_the_tasks_it_greets)
{
    waiting(0, "10.0.0.1", 100);   /* a task connection greeted by root, the oldest */
    w[0].kind = GATE_TASK;
    waiting(1, "10.0.0.1", 150);   /* root's own question */
    w[1].kind = GATE_ROOT;
    waiting(2, "10.0.0.2", 200);   /* a user's */
    /* a full gate: the user's goes first, then the task's, root's question last */
    ck_assert_int_eq(agent_gate_victim(w, 3, "10.0.0.3", GATE_ANY, 8, 3), 2);
    w[2].kind = GATE_TASK;
    w[2].moved = 50;
    ck_assert_int_eq(agent_gate_victim(w, 3, "10.0.0.3", GATE_ANY, 8, 3), 2);
    w[2].kind = GATE_ROOT;
    ck_assert_int_eq(agent_gate_victim(w, 3, "10.0.0.3", GATE_ANY, 8, 3), 0);
    /* each kind has its own limit per address: tasks at theirs lose their own oldest, not root's */
    ck_assert_int_eq(agent_gate_victim(w, 3, "10.0.0.1", GATE_TASK, 1, 8), 0);
    ck_assert_int_eq(agent_gate_victim(w, 3, "10.0.0.1", GATE_ROOT, 1, 8), 1);
    /* proofs: root's question before the task's, though the task's came first */
    w[0].phase = w[1].phase = GATE_PROOF_DUE;
    w[2].phase = GATE_WANTS_PROVE;
    ck_assert_int_eq(agent_gate_next_proof(w, 3), 1);
    w[1].phase = GATE_PROVED;
    ck_assert_int_eq(agent_gate_next_proof(w, 3), 0);
}
END_TEST

START_TEST(a_ports_kind)
{
    ck_assert_int_eq(agent_gate_port_kind(0), GATE_ANY);         /* not IP */
    ck_assert_int_eq(agent_gate_port_kind(1024), GATE_ANY);
    ck_assert_int_eq(agent_gate_port_kind(55700), GATE_ANY);
    ck_assert_int_eq(agent_gate_port_kind(512), GATE_TASK);
    ck_assert_int_eq(agent_gate_port_kind(767), GATE_TASK);
    ck_assert_int_eq(agent_gate_port_kind(768), GATE_ROOT);
    ck_assert_int_eq(agent_gate_port_kind(1023), GATE_ROOT);
}
END_TEST

START_TEST(proofs_are_rate_limited)
{
    agent_bucket_t b = { 0 };
    int i, got = 0, wait = -1;

    for (i = 0; i < 200; i++)   /* at once: the burst */
        got += agent_bucket_take(&b, 1000, 100, 50, &wait);
    ck_assert_int_eq(got, 50);
    ck_assert_int_eq(wait, 10);                              /* 100 a second: the next in 10 ms */
    ck_assert_int_eq(agent_bucket_take(&b, 1005, 100, 50, &wait), 0);
    ck_assert_int_le(wait, 6);
    ck_assert_int_eq(agent_bucket_take(&b, 1010, 100, 50, &wait), 1);
    for (i = 0, got = 0; i < 1000; i++)                      /* a second of asking every ms: the rate */
        got += agent_bucket_take(&b, 1011 + i, 100, 50, &wait);
    ck_assert_int_ge(got, 99);
    ck_assert_int_le(got, 101);
    ck_assert_int_eq(agent_bucket_take(&b, 1011 + 1000 + 60000, 100, 50, &wait), 1);   /* idle: full again */
    for (i = 0, got = 1; i < 100; i++)
        got += agent_bucket_take(&b, 1011 + 1000 + 60000, 100, 50, &wait);
    ck_assert_int_eq(got, 50);
    ck_assert_int_eq(agent_bucket_take(&b, 5, 100, 50, &wait), 1);   /* the clock went back: full */
}
END_TEST

/* Run fn with stderr going to a file; the lines it wrote. */
static int lines_logged(void (*fn)(void), char *text, size_t len)
{
    char path[] = "/tmp/test_agent_gate.XXXXXX";
    int fd = mkstemp(path), saved = dup(STDERR_FILENO), lines = 0;
    ssize_t n;

    ck_assert_int_ge(fd, 0);
    dup2(fd, STDERR_FILENO);
    fn();
    dup2(saved, STDERR_FILENO);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    n = read(fd, text, len - 1);
    text[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    for (n = 0; text[n]; n++)
        lines += text[n] == '\n';
    return lines;
}

static void flood_of_refusals(void)
{
    int i;

    agent_log_tick(1000);                 /* an interval starts */
    for (i = 0; i < 500; i++)
        agent_log_noisy(AGENT_NOISE_REFUSED, 1000 + i, "peer %d: refused", i);
    for (i = 0; i < 3; i++)
        agent_log_noisy(AGENT_NOISE_TIMEOUT, 2000, "peer %d: timed out", i);
    agent_log_tick(1000 + AGENT_LOG_INTERVAL_MS - 1);   /* not yet */
    agent_log_tick(1000 + AGENT_LOG_INTERVAL_MS);       /* the summary */
    agent_log_noisy(AGENT_NOISE_REFUSED, 1000 + AGENT_LOG_INTERVAL_MS + 1, "peer again: refused");
    agent_log_tick(1000 + 3 * AGENT_LOG_INTERVAL_MS);   /* nothing left out: no summary */
}

START_TEST(the_log_sums_up_a_flood)
{
    char text[8192];
    int lines = lines_logged(flood_of_refusals, text, sizeof(text));

    /* 10 refusals and 3 timeouts in full, one summary, 1 refusal of the next interval */
    ck_assert_int_eq(lines, AGENT_LOG_BURST + 3 + 1 + 1);
    ck_assert_ptr_nonnull(strstr(text, "peer 9: refused"));
    ck_assert_ptr_null(strstr(text, "peer 10: refused"));
    ck_assert_ptr_nonnull(strstr(text, "peer 2: timed out"));
    ck_assert_ptr_nonnull(strstr(text, "connections in the last 10 s not logged one by one: 490 refused\n"));
    ck_assert_ptr_nonnull(strstr(text, "peer again: refused"));
    ck_assert_ptr_nonnull(strstr(text, "macnoded["));
}
END_TEST

static Suite *agent_gate_suite(void)
{
    Suite *s = suite_create("agent_gate");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, room_while_under_the_limits);
    tcase_add_test(tc, a_peer_at_its_limit_loses_its_own_oldest);
    tcase_add_test(tc, full_gate_loses_the_oldest_of_all);
    tcase_add_test(tc, the_one_that_stood_still_longest_goes);
    tcase_add_test(tc, proofs_go_first_to_peers_that_answer_them);
    tcase_add_test(tc, roots_connections_are_counted_apart);
    tcase_add_test(tc, a_full_gate_keeps_roots_connections);
    tcase_add_test(tc, roots_proofs_go_first);
    tcase_add_test(tc, roots_questions_rank_above_the_tasks_it_greets);
    tcase_add_test(tc, a_ports_kind);
    tcase_add_test(tc, proofs_are_rate_limited);
    tcase_add_test(tc, the_log_sums_up_a_flood);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(agent_gate_suite)
