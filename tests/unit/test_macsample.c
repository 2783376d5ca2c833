/* test_macsample.c: unit tests of lib/macsample.c: a Mac's sample as the agent serves it, the figures made
 * from two readings, and Linux's /proc readers (the embedded lab's simulated Macs). */
#include <string.h>

#include "tbm_check.h"
#include "macsample.h"

static int has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    const char *p = text;

    while ((p = strstr(p, line))) {
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
            return 1;
        p += n;
    }
    return 0;
}

#define HAS(text, line) ck_assert_msg(has_line((text), (line)), "no line [%s] in:\n%s", (line), (text))
#define HASNT(text, part) ck_assert_msg(strstr((text), (part)) == NULL, "[%s] should not be in:\n%s", (part), (text))

START_TEST(a_whole_sample)
{
    tbm_mac_sample_t *s = calloc(1, sizeof(*s));
    tbm_err_t err;
    char *text;

    tbm_mac_sample_init(s);
    snprintf(s->node, sizeof(s->node), "mac01");
    snprintf(s->group, sizeof(s->group), "studio-a");
    snprintf(s->version, sizeof(s->version), "0.1.0");
    s->start_time = 1700000000;
    s->sample_time = 1700000100.5;
    s->sampler_up[TBM_SAMPLER_CPU] = 1;
    s->sampler_up[TBM_SAMPLER_GPU] = 1;
    s->cpu_busy = tbm_reported(0.25);
    s->gpu_busy = tbm_reported(0.93);
    s->mem_total = tbm_reported(549755813888.0);
    s->power[TBM_POWER_GPU] = tbm_reported(61.2345);
    s->energy[TBM_POWER_GPU] = tbm_reported(612.345);
    s->n_links = 2;
    snprintf(s->links[0].port, sizeof(s->links[0].port), "en2");
    snprintf(s->links[0].peer, sizeof(s->links[0].peer), "mac02");
    snprintf(s->links[0].peer_port, sizeof(s->links[0].peer_port), "en3");
    s->links[0].up = 1;
    s->links[0].speed = tbm_reported(10e9);
    s->links[0].class_speed = tbm_reported(10e9);
    s->links[0].tx_bytes = tbm_reported(123456789012.0);
    s->links[0].rdma = 1;
    snprintf(s->links[1].port, sizeof(s->links[1].port), "en4");
    s->links[1].up = -1;
    s->links[1].rdma = -1;
    ck_assert_int_eq(tbm_mac_sample_task(s, 42, "alice", &err), 0);
    ck_assert_int_eq(tbm_mac_sample_task(s, 42, "alice", &err), 0);
    ck_assert_int_eq(tbm_mac_sample_task(s, 43, "bob", &err), 0);

    text = tbm_mac_sample_text(s, &err);
    ck_assert_msg(text != NULL, "%s", err.msg);
    HAS(text, "# TYPE tbmesh_energy_joules_total counter");
    HAS(text, "tbmesh_agent_info{node=\"mac01\",version=\"0.1.0\"} 1");
    HAS(text, "tbmesh_sample_time_seconds{node=\"mac01\"} 1700000100.5");
    HAS(text, "tbmesh_sampler_up{node=\"mac01\",sampler=\"gpu\"} 1");
    HAS(text, "tbmesh_sampler_up{node=\"mac01\",sampler=\"power\"} 0");
    HAS(text, "tbmesh_cpu_busy_ratio{node=\"mac01\"} 0.25");
    HAS(text, "tbmesh_gpu_busy_ratio{node=\"mac01\"} 0.93");
    HAS(text, "tbmesh_power_watts{node=\"mac01\",part=\"gpu\"} 61.2345");
    HAS(text, "tbmesh_tasks_running{jobid=\"42\",node=\"mac01\",user=\"alice\"} 2");
    HAS(text, "tbmesh_tasks_running{jobid=\"43\",node=\"mac01\",user=\"bob\"} 1");
    HAS(text, "tbmesh_link_up{group=\"studio-a\",node=\"mac01\",peer=\"mac02\",peer_port=\"en3\",port=\"en2\"} 1");
    HAS(text, "tbmesh_link_transmit_bytes_total{group=\"studio-a\",node=\"mac01\",peer=\"mac02\",peer_port=\"en3\","
              "port=\"en2\"} 123456789012");
    HAS(text, "tbmesh_link_speed_bytes{group=\"studio-a\",node=\"mac01\",peer=\"mac02\",peer_port=\"en3\","
              "port=\"en2\"} 10000000000");
    /* an interface that is gone is a link down, with nothing else made up about it */
    HAS(text, "tbmesh_link_up{group=\"studio-a\",node=\"mac01\",port=\"en4\"} 0");
    HASNT(text, "tbmesh_link_receive_bytes_total{group=\"studio-a\",node=\"mac01\",port=\"en4\"}");
    /* what was not reported is absent, not 0 */
    HASNT(text, "tbmesh_memory_used_bytes{");
    HASNT(text, "tbmesh_power_watts{node=\"mac01\",part=\"cpu\"}");
    free(text);

    /* a site hiding jobs: no task series */
    s->tasks_shown = 0;
    text = tbm_mac_sample_text(s, &err);
    ck_assert_msg(text != NULL, "%s", err.msg);
    HASNT(text, "tbmesh_tasks_running{");
    free(text);

    /* a sample naming no node is refused */
    s->node[0] = '\0';
    ck_assert_ptr_null(tbm_mac_sample_text(s, &err));
    ck_assert_str_eq(err.msg, "the sample names no node");
    free(s);
}
END_TEST

START_TEST(label_values_are_escaped)
{
    tbm_mac_sample_t *s = calloc(1, sizeof(*s));
    tbm_err_t err;
    char *text;

    tbm_mac_sample_init(s);
    snprintf(s->node, sizeof(s->node), "mac01");
    ck_assert_int_eq(tbm_mac_sample_task(s, 7, "we\"ird\\user\n", &err), 0);
    text = tbm_mac_sample_text(s, &err);
    ck_assert_msg(text != NULL, "%s", err.msg);
    HAS(text, "tbmesh_tasks_running{jobid=\"7\",node=\"mac01\",user=\"we\\\"ird\\\\user\\n\"} 1");
    free(text);
    free(s);
}
END_TEST

START_TEST(too_many_tasks)
{
    tbm_mac_sample_t *s = calloc(1, sizeof(*s));
    tbm_err_t err;
    uint32_t j;

    tbm_mac_sample_init(s);
    for (j = 0; j < TBM_MS_TASKS_MAX; j++)
        ck_assert_int_eq(tbm_mac_sample_task(s, j, "u", &err), 0);
    ck_assert_int_eq(tbm_mac_sample_task(s, j, "u", &err), -1);
    ck_assert_str_eq(err.msg, "more than 512 jobs and users run tasks here; the others are not counted");
    /* one already counted still counts */
    ck_assert_int_eq(tbm_mac_sample_task(s, 3, "u", &err), 0);
    ck_assert_int_eq(s->tasks[3].n, 2);
    free(s);
}
END_TEST

START_TEST(cpu_busy_from_two_readings)
{
    tbm_cpu_ticks_t a = { 100, 1000 }, b = { 400, 2000 }, back = { 50, 3000 }, same = { 100, 1000 };
    tbm_reading_t r;

    r = tbm_cpu_busy(&a, &b);
    ck_assert(r.reported);
    ck_assert_double_eq_tol(r.value, 0.3, 1e-12);
    ck_assert(!tbm_cpu_busy(&a, &same).reported);   /* no time passed */
    ck_assert(!tbm_cpu_busy(&b, &back).reported);   /* a counter went back */
    ck_assert(!tbm_cpu_busy(&b, &a).reported);
}
END_TEST

START_TEST(energy_integrates_reported_power)
{
    tbm_reading_t j = { 0, 0 }, none = { 0, 0 };

    ck_assert_int_eq(tbm_energy_add(&j, none, 10, 60), 0);
    ck_assert(!j.reported);
    ck_assert_int_eq(tbm_energy_add(&j, tbm_reported(50), 10, 60), 1);
    ck_assert_int_eq(tbm_energy_add(&j, tbm_reported(20), 5, 60), 1);
    ck_assert(j.reported);
    ck_assert_double_eq_tol(j.value, 600, 1e-9);
    ck_assert_int_eq(tbm_energy_add(&j, tbm_reported(20), 120, 60), 0);   /* a gap: no guess */
    ck_assert_int_eq(tbm_energy_add(&j, tbm_reported(20), 0, 60), 0);
    ck_assert_int_eq(tbm_energy_add(&j, tbm_reported(-1), 5, 60), 0);
    ck_assert_double_eq_tol(j.value, 600, 1e-9);
}
END_TEST

START_TEST(memory_pressure_levels)
{
    ck_assert_double_eq(tbm_memory_pressure_level(1).value, 0);
    ck_assert_double_eq(tbm_memory_pressure_level(2).value, 1);
    ck_assert_double_eq(tbm_memory_pressure_level(4).value, 2);
    ck_assert(tbm_memory_pressure_level(4).reported);
    ck_assert(!tbm_memory_pressure_level(0).reported);
    ck_assert(!tbm_memory_pressure_level(3).reported);
}
END_TEST

START_TEST(proc_stat)
{
    const char *ok = "cpu  10 2 30 400 5 6 7 8 0 0\ncpu0 1 1 1 1 1 1 1 1 0 0\nintr 1\n";
    const char *old = "cpu 10 2 30 400\n";
    tbm_cpu_ticks_t t;
    tbm_err_t err;

    ck_assert_int_eq(tbm_parse_proc_stat(ok, strlen(ok), &t, &err), 0);
    ck_assert_uint_eq(t.busy, 10 + 2 + 30 + 6 + 7 + 8);
    ck_assert_uint_eq(t.total, t.busy + 400 + 5);
    ck_assert_int_eq(tbm_parse_proc_stat(old, strlen(old), &t, &err), 0);
    ck_assert_uint_eq(t.busy, 42);
    ck_assert_uint_eq(t.total, 442);
    ck_assert_int_eq(tbm_parse_proc_stat("intr 1\n", 7, &t, &err), -1);
    ck_assert_str_eq(err.msg, "/proc/stat: no \"cpu \" line (is this /proc/stat?)");
    ck_assert_int_eq(tbm_parse_proc_stat("cpu 1 x\n", 8, &t, &err), -1);
    ck_assert_str_eq(err.msg, "/proc/stat: the cpu line's field 2 is not a number: x");
    ck_assert_int_eq(tbm_parse_proc_stat("cpu 1 2\n", 8, &t, &err), -1);
    ck_assert_str_eq(err.msg, "/proc/stat: the cpu line has 2 counters, at least 4 expected (user nice system idle)");
    ck_assert_int_eq(tbm_parse_proc_stat("", 0, &t, &err), -1);
}
END_TEST

START_TEST(meminfo)
{
    const char *ok = "MemTotal:       16384 kB\nMemFree:  100 kB\nMemAvailable:    4096 kB\n";
    const char *bad = "MemTotal:  lots kB\nMemAvailable: 1 kB\n";
    const char *unit = "MemTotal:  16 MB\nMemAvailable: 1 kB\n";
    const char *more = "MemTotal:  16 kB\nMemAvailable: 17 kB\n";
    tbm_reading_t total, used;
    tbm_err_t err;

    ck_assert_int_eq(tbm_parse_meminfo(ok, strlen(ok), &total, &used, &err), 0);
    ck_assert_double_eq(total.value, 16384.0 * 1024);
    ck_assert_double_eq(used.value, (16384.0 - 4096) * 1024);
    ck_assert_int_eq(tbm_parse_meminfo(bad, strlen(bad), &total, &used, &err), -1);
    ck_assert_str_eq(err.msg, "/proc/meminfo: MemTotal is not a number: lots kB");
    ck_assert_int_eq(tbm_parse_meminfo(unit, strlen(unit), &total, &used, &err), -1);
    ck_assert_str_eq(err.msg, "/proc/meminfo: MemTotal is not a count of kB: MemTotal:  16 MB");
    ck_assert_int_eq(tbm_parse_meminfo(more, strlen(more), &total, &used, &err), -1);
    ck_assert_str_eq(err.msg, "/proc/meminfo: MemAvailable (17 kB) above MemTotal (16 kB)");
    ck_assert_int_eq(tbm_parse_meminfo("MemTotal: 1 kB\n", 15, &total, &used, &err), -1);
    ck_assert_str_eq(err.msg, "/proc/meminfo: no MemAvailable line (a kernel before 3.14 lacks MemAvailable)");
}
END_TEST

static Suite *macsample_suite(void)
{
    Suite *s = suite_create("macsample");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, a_whole_sample);
    tcase_add_test(tc, label_values_are_escaped);
    tcase_add_test(tc, too_many_tasks);
    tcase_add_test(tc, cpu_busy_from_two_readings);
    tcase_add_test(tc, energy_integrates_reported_power);
    tcase_add_test(tc, memory_pressure_levels);
    tcase_add_test(tc, proc_stat);
    tcase_add_test(tc, meminfo);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(macsample_suite)
