/* test_record_build.c: unit tests of acct/record_build.c, the record's assembly without Slurm: the options'
 * checks, the submit half and its command line, records off, the job's facts and stderr path, a step's part,
 * the parts merged at the end. */
#include "tbm_check.h"
#include <string.h>
#include <sys/wait.h>

#include "json_read.h"
#include "record.h"
#include "record_build.h"
#include "repro_node.h"

#include <signal.h>
#include <unistd.h>

static const char *str_at(json_object *o, const char *path)
{
    char key[64];
    const char *dot;

    while ((dot = strchr(path, '.'))) {
        snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
        o = json_object_object_get(o, key);
        path = dot + 1;
    }
    o = json_object_object_get(o, path);
    return o ? json_object_get_string(o) : NULL;
}

/* What the reader as the user hands back: {"ok": 1}; or it stops itself, as its user may stop it. */
static json_object *reader_answers(void *arg)
{
    (void)arg;
    return json_tokener_parse("{\"ok\": 1}");
}

static json_object *reader_stopped(void *arg)
{
    (void)arg;
    raise(SIGSTOP);
    return json_tokener_parse("{\"late\": 1}");
}

START_TEST(reader_as_the_user_answers_or_is_given_up_when_stopped)
{
    /* root waits for its reader as the job's user; the user may stop that process (it is theirs): root gives
     * it up at once, saying so, instead of waiting the whole limit (an hour at a job's end) */
    uid_t uid = getuid() == 0 ? 65534 : getuid();
    gid_t gid = getuid() == 0 ? 65534 : getgid();
    tbm_err_t err = { { 0 } };
    json_object *out;

    out = repro_as_user(uid, gid, reader_answers, NULL, 30, &err);
    ck_assert_msg(out != NULL, "%s", err.msg);
    ck_assert_int_eq(json_object_get_int(json_object_object_get(out, "ok")), 1);
    json_object_put(out);
    out = repro_as_user(uid, gid, reader_stopped, NULL, 600, &err);
    ck_assert_ptr_null(out);
    ck_assert_msg(strstr(err.msg, "was stopped (signal 19") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(options_are_checked_with_what_to_give)
{
    char why[400], *kept;

    ck_assert_int_eq(tbm_rb_option_check(TBM_RB_MODEL, "mlx-community/Llama-3.2-1B@7c6e1a2", "/", &kept, why,
                                         sizeof(why)), 0);
    ck_assert_str_eq(kept, "mlx-community/Llama-3.2-1B@7c6e1a2");
    free(kept);
    ck_assert_int_eq(tbm_rb_option_check(TBM_RB_MODEL, "bad model", "/", &kept, why, sizeof(why)), -1);
    ck_assert(strstr(why, "ID[@REVISION]") != NULL);
    ck_assert_int_eq(tbm_rb_option_check(TBM_RB_MODEL, "m@", "/", &kept, why, sizeof(why)), -1);
    ck_assert(strstr(why, "revision after @") != NULL);
    ck_assert_int_eq(tbm_rb_option_check(TBM_RB_SEED, "18446744073709551616", "/", &kept, why, sizeof(why)), -1);
    ck_assert(strstr(why, "whole number") != NULL);
    ck_assert_int_eq(tbm_rb_option_check(TBM_RB_SWITCH, "maybe", "/", &kept, why, sizeof(why)), -1);
    ck_assert_int_eq(tbm_rb_option_check(TBM_RB_NOTE, "a\nb", "/", &kept, why, sizeof(why)), -1);
    /* data must exist; outputs need not; both made absolute against the submit folder */
    ck_assert_int_eq(tbm_rb_option_check(TBM_RB_DATA, "no-such-file-here", "/", &kept, why, sizeof(why)), -1);
    ck_assert(strstr(why, "/no-such-file-here") != NULL);
    ck_assert_int_eq(tbm_rb_option_check(TBM_RB_DATA, "tmp,/etc", "/", &kept, why, sizeof(why)), 0);
    ck_assert_str_eq(kept, "/tmp,/etc");
    free(kept);
    ck_assert_int_eq(tbm_rb_option_check(TBM_RB_OUTPUT, "out/a,out/b", "/work", &kept, why, sizeof(why)), 0);
    ck_assert_str_eq(kept, "/work/out/a,/work/out/b");
    free(kept);
    ck_assert_int_eq(tbm_rb_option_check(TBM_RB_OUTPUT, "a,,b", "/", &kept, why, sizeof(why)), -1);
    ck_assert(strstr(why, "single commas") != NULL);
    ck_assert_int_eq(tbm_rb_option_check(TBM_RB_N, "x", "/", &kept, why, sizeof(why)), -1);
}
END_TEST

START_TEST(command_line_finds_the_script)
{
    static const char cmd[] = "sbatch\0-N\0004\0--gres=tbmesh:4\0--wait\0-J\0my job\0train.sh\0--lr\0001e-3";
    char line[512], script[256];

    tbm_rb_command_line(cmd, sizeof(cmd), line, sizeof(line), script, sizeof(script));
    ck_assert_str_eq(script, "train.sh");
    ck_assert_str_eq(line, "sbatch -N 4 --gres=tbmesh:4 --wait -J 'my job' train.sh --lr 1e-3");
    tbm_rb_command_line(NULL, 0, line, sizeof(line), script, sizeof(script));
    ck_assert_str_eq(line, "");
    ck_assert_str_eq(script, "");
}
END_TEST

START_TEST(submit_half_declares_and_redacts)
{
    static const char cmd[] = "sbatch\0--export=HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz123456\0run.sh";
    char *given[TBM_RB_N] = { "org/model@abc123", "/data/a,/data/b", "42", "/out", "note", "off" };
    tbm_rb_submit_t s = { "/work", cmd, sizeof(cmd), { "0123456789012345678901234567890123456789", "main",
                                                        "https://user:pw@example.org/r.git", 1, NULL },
                          given, "ring" };
    json_object *doc = tbm_rb_submit_half(&s), *data;
    const char *text = json_object_to_json_string(doc);

    ck_assert_str_eq(str_at(doc, "submit.work_dir"), "/work");
    ck_assert_str_eq(str_at(doc, "submit.script"), "run.sh");
    ck_assert_str_eq(str_at(doc, "submit.git.commit"), "0123456789012345678901234567890123456789");
    ck_assert(strstr(str_at(doc, "submit.git.remote"), "pw@") == NULL);
    ck_assert(strstr(text, "hf_abcdefghijklmnopqrstuvwxyz123456") == NULL);
    ck_assert_str_eq(str_at(doc, "submit.options.mlx-backend"), "ring");
    ck_assert_str_eq(str_at(doc, "declared.model.id"), "org/model");
    ck_assert_str_eq(str_at(doc, "declared.model.revision"), "abc123");
    ck_assert_str_eq(str_at(doc, "declared.seed"), "42");
    data = json_object_object_get(json_object_object_get(doc, "declared"), "data");
    ck_assert_uint_eq(json_object_array_length(data), 2);
    ck_assert_str_eq(str_at(json_object_array_get_idx(data, 1), "path"), "/data/b");
    ck_assert_str_eq(str_at(doc, "records"), "off");
    ck_assert_int_eq(tbm_rb_records_off(json_object_to_json_string(doc)), 1);
    json_object_put(doc);
    /* no git: said why */
    s.git.commit = NULL;
    s.git.absent = "not a work tree";
    given[TBM_RB_SWITCH] = "on";
    doc = tbm_rb_submit_half(&s);
    ck_assert_str_eq(str_at(doc, "submit.git.absent"), "not a work tree");
    ck_assert_int_eq(tbm_rb_records_off(json_object_to_json_string(doc)), 0);
    json_object_put(doc);
}
END_TEST

START_TEST(records_off_reads_json_not_text)
{
    ck_assert_int_eq(tbm_rb_records_off("{\"records\":\"off\"}"), 1);
    ck_assert_int_eq(tbm_rb_records_off("{ \"records\" : \"off\" }"), 1);
    /* the words inside another value are not the switch */
    ck_assert_int_eq(tbm_rb_records_off("{\"declared\":{\"note\":\"\\\"records\\\":\\\"off\\\"\"}}"), 0);
    ck_assert_int_eq(tbm_rb_records_off("{\"records\":\"on\"}"), 0);
    ck_assert_int_eq(tbm_rb_records_off("not json"), 0);
    ck_assert_int_eq(tbm_rb_records_off(NULL), 0);
}
END_TEST

START_TEST(start_submit_takes_the_declared_data)
{
    json_object *rec = tbm_record_new(7, "lab", "start", "RUNNING");
    json_object *paths = tbm_rb_start_submit(rec, "{\"submit\":{\"work_dir\":\"/w\"},\"declared\":{\"data\":"
                                                  "[{\"path\":\"/d/1\"},{\"path\":\"/d/2\"},{\"nopath\":1}]}}");

    ck_assert_ptr_nonnull(paths);
    ck_assert_uint_eq(json_object_array_length(paths), 2);
    ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(paths, 1)), "/d/2");
    ck_assert_str_eq(str_at(rec, "submit.work_dir"), "/w");
    json_object_put(paths);
    json_object_put(rec);
    rec = tbm_record_new(7, "lab", "start", "RUNNING");
    ck_assert_ptr_null(tbm_rb_start_submit(rec, NULL));
    ck_assert(strstr(str_at(rec, "submit.absent"), "no submit half") != NULL);
    json_object_put(rec);
}
END_TEST

START_TEST(job_facts_and_stderr_path)
{
    tbm_rb_job_t j = { 12, 1001, "alice", 1, "train", "lab", "mac", "/home/alice", NULL, "logs/%x-%j.%u.%%.%N.%q",
                       "mac01", 2, 0, 0, 0, 100, 200 };
    char *nodes[] = { "mac01", "mac02" };
    json_object *rec = tbm_record_new(12, "lab", "start", "RUNNING"), *job = tbm_record_obj(rec, "job");
    char path[512];

    tbm_rb_job_facts(job, &j, nodes, 2, "studio-a", NULL, 1234);
    ck_assert_str_eq(str_at(job, "user"), "alice");
    ck_assert_str_eq(str_at(job, "account"), "lab");
    ck_assert_str_eq(str_at(job, "group"), "studio-a");
    ck_assert_str_eq(str_at(job, "backend_requested"), "auto");
    ck_assert_int_eq(json_object_get_int(json_object_object_get(job, "restarts")), 2);
    ck_assert_ptr_null(json_object_object_get(job, "array_job_id"));
    ck_assert_uint_eq(json_object_array_length(json_object_object_get(job, "nodes")), 2);
    tbm_rb_stderr_path(&j, path, sizeof(path));
    ck_assert_str_eq(path, "/home/alice/logs/train-12.alice.%.mac01.%q");
    j.std_err = NULL;
    j.array = 1, j.array_job_id = 10, j.array_task_id = 2;
    tbm_rb_stderr_path(&j, path, sizeof(path));
    ck_assert_str_eq(path, "/home/alice/slurm-10_2.out");
    j.std_out = "/abs/%A_%a";
    tbm_rb_stderr_path(&j, path, sizeof(path));
    ck_assert_str_eq(path, "/abs/10_2");
    /* the end: Slurm's state when it says one, else from the exit */
    ck_assert_str_eq(tbm_rb_end_job(rec, &j, 3 << 8, NULL, 5000), "FAILED");
    ck_assert_int_eq(json_object_get_int(json_object_object_get(job, "exit_code")), 3);
    ck_assert_int_eq(json_object_get_int(json_object_object_get(job, "submit_time")), 100);
    ck_assert_str_eq(tbm_rb_end_job(rec, &j, 0, NULL, 5000), "COMPLETED");
    ck_assert_str_eq(tbm_rb_end_job(rec, &j, 0, "TIMEOUT", 5000), "TIMEOUT");
    json_object_put(rec);
}
END_TEST

START_TEST(secrets_are_found_by_name)
{
    char *env[] = { "HF_TOKEN=hf_secretvalue", "PATH=/usr/bin", "MY_PASSWORD=short", "API_KEY=abcdefgh", NULL };
    const char *out[8];
    size_t n = tbm_rb_secrets(env, out, 8);

    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(out[0], "hf_secretvalue");
    ck_assert_str_eq(out[1], "abcdefgh");
    ck_assert_uint_eq(tbm_rb_secrets(env, out, 1), 1);
    ck_assert_uint_eq(tbm_rb_secrets(NULL, out, 8), 0);
}
END_TEST

static json_object *part_of(uint32_t step, uint32_t node_id, const char *node, int status, int bridge)
{
    char *argv[] = { "python", "train.py", "--token=s3cr3tvalue" };
    tbm_envvar_t vars[] = { { "TBMESH_BACKEND", "ring" }, { "MLX_RANK", "0" } };
    tbm_envplan_t plan;
    tbm_rb_step_t in = { node, node_id, step, bridge, argv, 3, 1, status, &plan, !bridge, 10, 20, 30, NULL,
                         "the agent at 10.0.0.1:6830 gave no usage: refused" };
    const char *secrets[] = { "s3cr3tvalue" };

    memset(&plan, 0, sizeof(plan));
    plan.vars = vars;
    plan.n_vars = 2;
    return tbm_rb_step_part(&in, secrets, 1);
}

START_TEST(step_part_says_what_the_node_learnt)
{
    json_object *p = part_of(3, 1, "mac02", 2 << 8, 0);

    ck_assert_str_eq(str_at(p, "node"), "mac02");
    ck_assert(strstr(str_at(p, "command"), "s3cr3tvalue") == NULL);
    ck_assert_int_eq(json_object_get_int(json_object_object_get(p, "exit_code")), 2);
    ck_assert_str_eq(str_at(p, "backend_env.TBMESH_BACKEND"), "ring");
    ck_assert_int_eq(json_object_get_int(json_object_object_get(p, "max_rss_kb")), 30);
    ck_assert_ptr_null(json_object_object_get(p, "agent_usage_why"));
    json_object_put(p);
    p = part_of(3, 1, "mac02", 0, 1);   /* bridge mode: no rusage of forwarders; the agent's answer or why */
    ck_assert_ptr_null(json_object_object_get(p, "max_rss_kb"));
    ck_assert(strstr(str_at(p, "agent_usage_why"), "refused") != NULL);
    json_object_put(p);
}
END_TEST

/* Bridge mode: what the agent measured per task, its GPU and energy with it, follows rusage's path into the
 * record (the part's agent_usage, then the record's usage), and the record is whole. */
START_TEST(agent_gpu_figures_reach_the_record)
{
    char *argv[] = { "python", "train.py" };
    tbm_task_usage_t tasks[2];
    tbm_msg_t used = { .type = TBM_MSG_USED, .job = 9, .step = 0, .tasks = tasks, .n_tasks = 2 };
    tbm_rb_step_t in = { "mac01", 0, 0, 1, argv, 2, 2, 0, NULL, 0, 0, 0, 0, &used, NULL };
    json_object *rec = tbm_record_new(9, "lab", "end", "RUNNING"), *parts = json_object_new_array(), *u;
    tbm_err_t err = { { 0 } };
    char *text;

    memset(tasks, 0, sizeof(tasks));
    tasks[0] = (tbm_task_usage_t){ .job = 9, .step = 0, .task = 0, .pid = 100,
                                   .rusage = { .utime_us = 5, .wall_us = 120000000, .gpu_samples = 12,
                                               .gpu_mean = 0.61, .gpu_peak = 0.99, .power_samples = 12,
                                               .energy_j = 18000 } };
    tasks[1] = (tbm_task_usage_t){ .job = 9, .step = 0, .task = 1, .pid = 101,
                                   .rusage = { .utime_us = 5, .wall_us = 3000000, .gpu_why = TBM_METER_SHORT,
                                               .energy_why = TBM_METER_SHORT } };
    json_object_array_add(parts, tbm_rb_step_part(&in, NULL, 0));
    tbm_rb_merge_parts(rec, parts, 1);
    u = json_object_object_get(rec, "usage");
    ck_assert_uint_eq(json_object_array_length(u), 2);
    ck_assert_double_eq(json_object_get_double(json_object_object_get(json_object_array_get_idx(u, 0), "gpu_mean")),
                        0.61);
    ck_assert_double_eq(json_object_get_double(json_object_object_get(json_object_array_get_idx(u, 0), "energy_j")),
                        18000);
    ck_assert_str_eq(str_at(json_object_array_get_idx(u, 1), "gpu_why"), "short");
    text = tbm_record_text(rec, NULL, &err);
    ck_assert_msg(text != NULL, "%s", err.msg);
    ck_assert_ptr_nonnull(strstr(text, "\"gpu_peak\": 0.9900"));
    free(text);
    json_object_put(parts);
    json_object_put(rec);
}
END_TEST

START_TEST(parts_merge_into_steps_nodes_and_results)
{
    json_object *rec = tbm_record_new(9, "lab", "end", "RUNNING"), *parts = json_object_new_array(), *nodes, *steps;
    json_object *bad = json_object_new_object();
    int i;

    nodes = json_object_new_array();
    for (i = 0; i < 3; i++) {
        json_object *n = json_object_new_object();
        char name[8];
        snprintf(name, sizeof(name), "mac0%d", i + 1);
        json_object_object_add(n, "name", json_object_new_string(name));
        json_object_array_add(nodes, n);
    }
    json_object_object_add(rec, "nodes", nodes);
    json_object_array_add(parts, part_of(1, 1, "mac02", 1 << 8, 0));
    json_object_array_add(parts, part_of(0, 0, "mac01", 0, 0));
    json_object_array_add(parts, part_of(1, 0, "mac01", 0, 0));
    json_object_object_add(bad, "unreadable", json_object_new_string("step-2-2"));
    json_object_object_add(bad, "why", json_object_new_string("not JSON"));
    json_object_array_add(parts, bad);
    tbm_rb_merge_parts(rec, parts, 0);
    steps = json_object_object_get(tbm_record_obj(rec, "job"), "steps");
    ck_assert_uint_eq(json_object_array_length(steps), 3);
    for (i = 0; i < 3; i++)   /* the unreadable part is a step of its own, saying why */
        if (!strcmp(str_at(json_object_array_get_idx(steps, i), "id"), "step-2-2"))
            break;
    ck_assert_int_lt(i, 3);
    ck_assert(strstr(str_at(json_object_array_get_idx(steps, i), "state"), "not JSON") != NULL);
    ck_assert_str_eq(str_at(json_object_array_get_idx(steps, 2), "id"), "1");
    ck_assert_uint_eq(json_object_array_length(json_object_object_get(json_object_array_get_idx(steps, 2), "nodes")), 2);
    ck_assert_int_eq(json_object_get_int(json_object_object_get(json_object_array_get_idx(steps, 2), "exit_code")), 1);
    ck_assert_str_eq(str_at(rec, "results.failed_step"), "1");
    ck_assert_str_eq(str_at(rec, "job.backend_chosen"), "ring");
    ck_assert_str_eq(str_at(json_object_array_get_idx(nodes, 1), "backend_env.MLX_RANK"), "0");
    ck_assert(strstr(str_at(json_object_array_get_idx(nodes, 2), "backend_env.absent"), "could be read") != NULL);
    json_object_put(parts);
    json_object_put(rec);
}
END_TEST

static Suite *record_build_suite(void)
{
    Suite *s = suite_create("record_build");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, options_are_checked_with_what_to_give);
    tcase_add_test(tc, reader_as_the_user_answers_or_is_given_up_when_stopped);
    tcase_add_test(tc, command_line_finds_the_script);
    tcase_add_test(tc, submit_half_declares_and_redacts);
    tcase_add_test(tc, records_off_reads_json_not_text);
    tcase_add_test(tc, start_submit_takes_the_declared_data);
    tcase_add_test(tc, job_facts_and_stderr_path);
    tcase_add_test(tc, secrets_are_found_by_name);
    tcase_add_test(tc, step_part_says_what_the_node_learnt);
    tcase_add_test(tc, parts_merge_into_steps_nodes_and_results);
    tcase_add_test(tc, agent_gpu_figures_reach_the_record);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(record_build_suite)
