/* test_accept.c: unit tests of lib/accept*.c: the plan file, the jobs' outputs read back, the verdict's
 * rules and the decision record in Markdown and JSON. */
#include "tbm_check.h"

#include <json-c/json.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "accept.h"
#include "record.h"

#define GOOD_PLAN                                                    \
    "# the lab's acceptance\n"                                       \
    "[acceptance]\n"                                                 \
    "task = fine-tune with LoRA\n"                                   \
    "model  =  mlx-community/Mistral-7B   # a comment\n"             \
    "data = /shared/chat.jsonl\n"                                    \
    "expected_output = loss below 1.6\n"                             \
    "backend = jaccl\n"                                              \
    "tolerance = 1e-3,1e-5\n"                                        \
    "link_share = 0.25\n"                                            \
    "busbw_share = 0.5\n"                                           \
    "refwork_hidden = 256\n"                                         \
    "sweep_max = 4M\n"

/* ---- the plan ---- */

START_TEST(plan_good)
{
    tbm_accept_plan_t p;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_accept_plan_parse(GOOD_PLAN, strlen(GOOD_PLAN), "p.plan", &p, NULL, &err), 0);
    ck_assert_int_eq(p.present, 1);
    ck_assert_str_eq(p.task, "fine-tune with LoRA");
    ck_assert_str_eq(p.model, "mlx-community/Mistral-7B");
    ck_assert_str_eq(p.expected, "loss below 1.6");
    ck_assert_int_eq(p.backend, TBM_BACKEND_JACCL);
    ck_assert_int_eq(p.bitwise, 0);
    ck_assert(fabs(p.rtol - 1e-3) < 1e-12 && fabs(p.atol - 1e-5) < 1e-12);
    ck_assert(fabs(p.link_share - 0.25) < 1e-12 && fabs(p.busbw_share - 0.5) < 1e-12);
    ck_assert_int_eq(p.refwork.hidden, 256);
    ck_assert_int_eq(p.refwork.layers, 4);
    ck_assert_uint_eq(p.sweep_max, 4u << 20);
    ck_assert_uint_eq(p.p2p_bytes, 16u << 20);
    ck_assert_int_eq(tbm_accept_plan_parse("tolerance = bitwise", 19, "p", &p, NULL, &err), 0);
    ck_assert_int_eq(p.bitwise, 1);
    ck_assert_int_eq(p.backend, TBM_BACKEND_JACCL);   /* the default */
}
END_TEST

static const struct {
    const char *text;
    const char *msg;
} bad_plans[] = {
    { "backend = nccl\n", "p.plan:1: backend = nccl is unknown: use auto, jaccl, jaccl-ring, ring or mpi: write e.g. "
                          "backend = jaccl" },
    { "\n\nhello\n", "p.plan:3: 'hello' is not key = value: write settings as key = value, e.g. backend = jaccl" },
    { "colour = red\n", "p.plan:1: unknown key 'colour': known keys: task, model, data, expected_output, backend, "
                        "tolerance, link_share, busbw_share, refwork_layers, refwork_hidden, refwork_batch, "
                        "refwork_seed, sweep_max, p2p_size" },
    { "task =\n", "p.plan:1: task has no value: give it a value, e.g. task = fine-tune a 7B model with LoRA on 4 "
                  "Macs, or remove the line" },
    { "task = a\ntask = b\n", "p.plan:2: task is already given at line 1: keep one of them" },
    { "link_share = 1.5\n", "p.plan:1: link_share = 1.5 is not a number from 0 to 1: give a share from 0 to 1, "
                            "e.g. 0.5 for half" },
    { "tolerance = close\n", "p.plan:1: tolerance = close is not bitwise nor one or two numbers from 0 to 1: write "
                             "tolerance = bitwise, or tolerance = RTOL or RTOL,ATOL (numbers from 0 to 1), e.g. "
                             "tolerance = 1e-4,1e-6" },
    { "sweep_max = 3X\n", "p.plan:1: sweep_max = 3X is not a size: give a size from 8 bytes to 1G, with K, M or G, "
                          "e.g. 16M" },
    { "refwork_layers = 0\n", "p.plan:1: refwork_layers = 0 is not a whole number from 1 to 64: give a whole number "
                              "from 1 to 64" },
    { "[model]\n", "p.plan:1: unknown section [model]: remove it: a plan has one section, [acceptance], or none" },
    { "task = a\nbackend = x\nhello\n", "p.plan:2: backend = x is unknown: use auto, jaccl, jaccl-ring, ring or mpi: "
                                        "write e.g. backend = jaccl (and 1 more errors)" },
};

START_TEST(plan_bad_lines)
{
    tbm_accept_plan_t p;
    tbm_findings_t errors;
    tbm_err_t err = { { 0 } };

    tbm_findings_init(&errors);
    ck_assert_int_eq(tbm_accept_plan_parse(bad_plans[_i].text, strlen(bad_plans[_i].text), "p.plan", &p, &errors,
                                           &err), -1);
    ck_assert_str_eq(err.msg, bad_plans[_i].msg);
    ck_assert_uint_ge(errors.n, 1);
    ck_assert_str_eq(errors.items[0].code, "plan-error");
    ck_assert_ptr_eq(strstr(errors.items[0].where, "p.plan:"), errors.items[0].where);
    tbm_findings_free(&errors);
}
END_TEST

START_TEST(plan_limits)
{
    tbm_accept_plan_t p;
    tbm_err_t err = { { 0 } };
    char *big = malloc(TBM_ACCEPT_PLAN_MAX + 2), line[1100];

    memset(big, '#', TBM_ACCEPT_PLAN_MAX + 1);
    ck_assert_int_eq(tbm_accept_plan_parse(big, TBM_ACCEPT_PLAN_MAX + 1, "p", &p, NULL, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "the file holds"));
    free(big);
    memset(line, 'a', sizeof(line));
    ck_assert_int_eq(tbm_accept_plan_parse(line, sizeof(line), "p", &p, NULL, &err), -1);
    ck_assert_str_eq(err.msg, "p:1: the line is 1100 characters long: keep each line under 1024 characters");
    ck_assert_int_eq(tbm_accept_plan_parse("task = a\0b\n", 11, "p", &p, NULL, &err), -1);
    ck_assert_str_eq(err.msg, "p:1: the line holds a NUL byte: save the plan as plain text");
}
END_TEST

/* ---- the jobs' outputs ---- */

#define SWEEP                                                                                          \
    "op,transport,ranks,size_bytes,count,type,redop,root,placement,time_us,algbw_gbs,busbw_gbs,wrong\n" \
    "allreduce,tcp,4,8,2,f32,sum,0,out-of-place,20.00,0.0004,0.0006,0\n"                               \
    "allreduce,tcp,4,8,2,f32,sum,0,in-place,21.00,0.0004,0.0006,0\n"                                   \
    "allreduce,tcp,4,1048576,262144,f32,sum,0,out-of-place,900.00,1.1650,1.7476,0\n"                    \
    "allreduce,tcp,4,1048576,262144,f32,sum,0,in-place,950.00,1.1000,1.6500,0\n"

#define P2P                                                                                             \
    "op,transport,rank_a,end_a,rank_b,end_b,size_bytes,a_to_b_gbs,b_to_a_gbs,both_ways_gbs,latency_bytes," \
    "latency_us,wrong\n"                                                                                 \
    "p2p,tcp,0,mac01:en2,1,mac02:en2,1048576,2.0000,2.2000,3.9000,8,30.00,0\n"                           \
    "p2p,tcp,1,mac02:en3,0,mac01:en3,1048576,1.5000,1.6000,2.9000,8,31.00,0\n"                           \
    "p2p,tcp,2,mac03:en9,3,mac04:en9,1048576,1.0000,1.0000,2.0000,8,31.00,0\n"

START_TEST(parse_sweep_rows)
{
    tbm_accept_sweep_t s;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_accept_parse_sweep("noise\n" SWEEP "# Wrong values: 0\n", &s, &err), 0);
    ck_assert_uint_eq(s.n, 2);   /* out-of-place rows only */
    ck_assert_int_eq(s.ranks, 4);
    ck_assert_uint_eq(s.bytes[1], 1048576);
    ck_assert(fabs(s.busbw[1] - 1.7476) < 1e-9);
    ck_assert_int_eq(s.wrong_total, 0);
    ck_assert_int_eq(tbm_accept_parse_sweep("allreduce,tcp,4,8,2,f32,sum,0,out-of-place,2,1,1,3\n", &s, &err), 0);
    ck_assert_int_eq(s.wrong_total, 3);
    ck_assert_int_eq(tbm_accept_parse_sweep("nothing here\n", &s, &err), -1);
    ck_assert_str_eq(err.msg, "no all-reduce row in the benchmark's output");
}
END_TEST

START_TEST(parse_p2p_rows)
{
    tbm_accept_cable_t c[3];
    tbm_findings_t fs;

    memset(c, 0, sizeof(c));
    strcpy(c[0].end[0], "mac01:en2");
    strcpy(c[0].end[1], "mac02:en2");
    strcpy(c[1].end[0], "mac01:en3");   /* measured the other way round */
    strcpy(c[1].end[1], "mac02:en3");
    strcpy(c[2].end[0], "mac03:en2");   /* never measured */
    strcpy(c[2].end[1], "mac04:en2");
    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_accept_parse_p2p(P2P, c, 3, &fs), 3);
    ck_assert_int_eq(c[0].measured, 1);
    ck_assert(fabs(c[0].gbs[0] - 2.0) < 1e-9 && fabs(c[0].gbs[1] - 2.2) < 1e-9);
    ck_assert_int_eq(c[1].measured, 1);
    ck_assert(fabs(c[1].gbs[0] - 1.6) < 1e-9 && fabs(c[1].gbs[1] - 1.5) < 1e-9);
    ck_assert_int_eq(c[2].measured, 0);
    ck_assert_uint_eq(fs.n, 1);
    ck_assert_str_eq(fs.items[0].code, "cable-unplanned");
    ck_assert_str_eq(fs.items[0].where, "mac03:en9 <-> mac04:en9");
    tbm_findings_free(&fs);
}
END_TEST

/* A refwork output file of n floats (the format of macnode refwork -o), base64 on the tagged line. */
static char *refwork_output(const float *y, uint32_t hidden, uint32_t batch, uint32_t ranks)
{
    uint32_t hdr[6] = { 0, 1, 4, hidden, batch, ranks };
    size_t n = (size_t)hidden * batch, len = 7 + sizeof(hdr) + n * sizeof(float);
    unsigned char *buf = malloc(len);
    char *b64, *text;

    memcpy(buf, "TBMRW1\n", 7);
    memcpy(buf + 7, hdr, sizeof(hdr));
    memcpy(buf + 7 + sizeof(hdr), y, n * sizeof(float));
    b64 = tbm_base64_encode(buf, len);
    text = malloc(strlen(b64) + 300);
    sprintf(text, "macnode refwork: 4 layers, hidden %u, batch %u, seed 1 on %u rank%s: 0.250 s, output sha256 "
                  "%064d\n" TBM_ACCEPT_RW_TAG "%s\n", hidden, batch, ranks, ranks == 1 ? "" : "s", 7, b64);
    free(b64);
    free(buf);
    return text;
}

START_TEST(parse_and_compare_refwork)
{
    float a[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, b[8];
    tbm_accept_refwork_t x, y;
    tbm_rw_diff_t d;
    tbm_err_t err = { { 0 } };
    char *ta = refwork_output(a, 4, 2, 1), *tb;

    memcpy(b, a, sizeof(a));
    b[5] += 1e-6f;
    tb = refwork_output(b, 4, 2, 4);
    memset(&x, 0, sizeof(x));
    memset(&y, 0, sizeof(y));
    ck_assert_int_eq(tbm_accept_parse_refwork(ta, &x, &err), 0);
    ck_assert_int_eq(tbm_accept_parse_refwork(tb, &y, &err), 0);
    ck_assert_int_eq(x.ranks, 1);
    ck_assert_int_eq(y.ranks, 4);
    ck_assert(fabs(x.seconds - 0.25) < 1e-9);
    ck_assert_uint_eq(strlen(x.sha256), 64);
    ck_assert_int_eq(tbm_accept_refwork_compare(&x, &x, 0, 0, &d, &err), 0);
    ck_assert_int_eq(d.bitwise, 1);
    ck_assert_int_eq(tbm_accept_refwork_compare(&x, &y, 1e-4, 1e-6, &d, &err), 0);
    ck_assert_int_eq(d.bitwise, 0);
    ck_assert_uint_eq(d.n_differ, 1);
    ck_assert_uint_eq(d.n_beyond, 0);
    ck_assert_int_eq(tbm_accept_refwork_compare(&x, &y, 0, 0, &d, &err), 0);
    ck_assert_uint_eq(d.n_beyond, 1);
    tbm_accept_refwork_free(&y);
    ck_assert_int_eq(tbm_accept_refwork_compare(&x, &y, 0, 0, &d, &err), -1);
    ck_assert_str_eq(err.msg, "the mesh run sent no output of macnode refwork");
    ck_assert_int_eq(tbm_accept_parse_refwork("macnode refwork: rank 1: out of memory\n", &y, &err), -1);
    ck_assert_str_eq(err.msg, "no summary line of macnode refwork in its output");
    tbm_accept_refwork_free(&x);
    free(ta);
    free(tb);
}
END_TEST

#define HOSTFILE "[[\"10.0.0.1:32323\"],[\"10.0.0.2:32324\"]]"

START_TEST(environment_of_every_rank)
{
    const char *ring = TBM_ACCEPT_ENV_TAG "0 mac05 TBMESH_ACCEPT=1\n" TBM_ACCEPT_ENV_TAG "0 mac05 MLX_RANK=0\n"
                       TBM_ACCEPT_ENV_TAG "0 mac05 MLX_HOSTFILE=/j/hosts.json\n"
                       TBM_ACCEPT_FILE_TAG "0 mac05 MLX_HOSTFILE " HOSTFILE "\n"
                       TBM_ACCEPT_ENV_TAG "1 mac06 TBMESH_ACCEPT=1\n" TBM_ACCEPT_ENV_TAG "1 mac06 MLX_RANK=1\n"
                       TBM_ACCEPT_ENV_TAG "1 mac06 MLX_HOSTFILE=/j/hosts.json\n"
                       TBM_ACCEPT_FILE_TAG "1 mac06 MLX_HOSTFILE " HOSTFILE "\n";
    const char *half = TBM_ACCEPT_ENV_TAG "0 mac05 TBMESH_ACCEPT=1\n" TBM_ACCEPT_ENV_TAG "0 mac05 MLX_RANK=0\n"
                       TBM_ACCEPT_ENV_TAG "0 mac05 MLX_HOSTFILE=/j/hosts.json\n"
                       TBM_ACCEPT_ENV_TAG "0 mac05 MLX_IBV_DEVICES=/j/devices.json\n";
    tbm_findings_t fs;

    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_accept_check_env(ring, TBM_BACKEND_RING, 2, &fs), 2);
    ck_assert_uint_eq(fs.n, 0);
    /* asked for JACCL: neither rank has its variables */
    ck_assert_int_eq(tbm_accept_check_env(ring, TBM_BACKEND_JACCL, 2, &fs), 0);
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "env-devices"));
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "env-coordinator"));
    tbm_findings_free(&fs);
    /* rank 0 has two backends' variables and no hostfile; rank 1 never answered */
    tbm_findings_init(&fs);
    ck_assert_int_eq(tbm_accept_check_env(half, TBM_BACKEND_RING, 2, &fs), 0);
    ck_assert_str_eq(tbm_findings_find(&fs, "env-backend")->where, "rank 0 (mac05)");
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "env-hostfile"));
    ck_assert_str_eq(tbm_findings_find(&fs, "env-missing")->where, "rank 1 (?)");
    tbm_findings_free(&fs);
}
END_TEST

/* ---- the verdict ---- */

/* A run of a 4-Mac TB5 RDMA mesh where everything passed. */
static void good_run(tbm_accept_t *a)
{
    float y[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    char *text = refwork_output(y, 4, 2, 1);
    tbm_err_t err = { { 0 } };
    size_t i;
    int r;

    tbm_accept_init(a);
    strcpy(a->group, "studio-a");
    strcpy(a->nodes, "mac[01-04]");
    strcpy(a->cluster, "tbmlab");
    strcpy(a->command, "tbmesh accept studio-a --plan lab.plan");
    a->started = 1796151600;
    a->ended = 1796151660;
    a->n_macs = 4;
    ck_assert_int_eq(tbm_accept_plan_parse(GOOD_PLAN, strlen(GOOD_PLAN), "lab.plan", &a->plan, NULL, &err), 0);
    strcpy(a->caps.name, "studio-a");
    a->caps.n_nodes = 4;
    a->caps.topology = TBM_TOPO_MESH;
    a->caps.backends = TBM_BACKENDS_ALL;
    a->caps.rdma = 1;
    a->link = TBM_LINK_TB5;
    a->step[1].state = a->step[3].state = a->step[4].state = TBM_STEP_PASSED;
    tbm_accept_add_job(a, 2, 41);
    tbm_accept_add_job(a, 5, 42);
    strcpy(a->base_mac, "mac03");
    ck_assert_int_eq(tbm_accept_parse_refwork(text, &a->base_rw, &err), 0);
    ck_assert_int_eq(tbm_accept_parse_refwork(text, &a->mesh_rw, &err), 0);
    ck_assert_int_eq(tbm_accept_parse_sweep(SWEEP, &a->base_sweep, &err), 0);
    ck_assert_int_eq(tbm_accept_parse_sweep(SWEEP, &a->mesh_sweep, &err), 0);
    a->n_cables = 2;
    for (i = 0; i < 2; i++) {
        sprintf(a->cables[i].end[0], "mac01:en%zu", i + 2);
        sprintf(a->cables[i].end[1], "mac02:en%zu", i + 2);
        a->cables[i].speed_gbps = 80;
        a->cables[i].measured = 1;
        a->cables[i].gbs[0] = a->cables[i].gbs[1] = 3.0;
    }
    a->macs_checked = a->macs_healthy = 4;
    a->env_ranks = a->env_ok = 4;
    for (r = 0; r < TBM_OWNER_ROLES; r++)
        strcpy(a->owner[r], "ops@lab.example");
    free(text);
}

START_TEST(verdict_plannable)
{
    tbm_accept_t a;

    good_run(&a);
    ck_assert_int_eq(tbm_accept_decide(&a), TBM_ACCEPT_PLANNABLE);
    ck_assert_int_eq(tbm_accept_exit_status(a.level), 0);
    /* the all-reduce against the slowest cable: 1.7476 of 3.0 GB/s, under a plan asking for 75% */
    a.plan.busbw_share = 0.75;
    ck_assert_int_eq(tbm_accept_decide(&a), TBM_ACCEPT_PROTOTYPE);
    ck_assert_str_eq(tbm_findings_find(&a.kept[TBM_ACCEPT_PLANNABLE], "busbw-low")->what,
                     "step 6: the all-reduce's busbw at 1048576 bytes is 1.748 GB/s, 58% of the slowest cable's "
                     "3.000 GB/s (the plan asks for 75%)");
    a.plan.busbw_share = 0.5;
    ck_assert_int_eq(tbm_accept_decide(&a), TBM_ACCEPT_PLANNABLE);
    ck_assert_int_eq(a.chosen, TBM_BACKEND_JACCL);
    ck_assert_uint_eq(a.possible, TBM_BACKENDS_ALL);
    ck_assert_int_eq(a.compared, 1);
    ck_assert_int_eq(a.diff.bitwise, 1);
    ck_assert(fabs(a.slowest_gbs - 3.0) < 1e-9);
    ck_assert(fabs(a.busbw_share - 1.7476 / 3.0) < 1e-9);
    ck_assert(fabs(a.cables[0].share - 0.3) < 1e-9);
    ck_assert_uint_eq(a.kept[TBM_ACCEPT_PLANNABLE].n, 0);
    for (int i = 0; i < TBM_ACCEPT_STEPS; i++)
        ck_assert_msg(a.step[i].state == TBM_STEP_PASSED, "step %d: %s", i + 1, tbm_step_state_name(a.step[i].state));
    /* deciding again gives the same */
    ck_assert_int_eq(tbm_accept_decide(&a), TBM_ACCEPT_PLANNABLE);
    ck_assert_uint_eq(a.step[5].findings.n, 0);
    tbm_accept_free(&a);
}
END_TEST

START_TEST(verdict_prototype_reasons)
{
    tbm_accept_t a;
    const tbm_findings_t *k;

    good_run(&a);
    a.plan.present = 0;                       /* no plan */
    a.owner[TBM_OWNER_UPKEEP][0] = '\0';      /* nobody keeps it up */
    a.cables[1].gbs[1] = 0.5;                 /* 5% of 80 Gb/s one way */
    ck_assert_int_eq(tbm_accept_decide(&a), TBM_ACCEPT_PROTOTYPE);
    ck_assert_int_eq(tbm_accept_exit_status(a.level), 10);
    k = &a.kept[TBM_ACCEPT_PLANNABLE];
    ck_assert_ptr_nonnull(tbm_findings_find(k, "plan-missing"));
    ck_assert_str_eq(tbm_findings_find(k, "owner-missing")->fix,
                     "set OwnerUpkeep= in tbmesh.conf, globally or on the line Group=studio-a; see tbmesh.conf(5)");
    ck_assert_str_eq(tbm_findings_find(k, "cable-slow")->where, "mac01:en3 <-> mac02:en3");
    ck_assert_str_eq(tbm_findings_find(k, "cable-slow")->what,
                     "step 6: 0.500 GB/s the slower way, 5% of its 80 Gb/s (the plan asks for 25%)");
    ck_assert_ptr_null(tbm_findings_find(k, "busbw-low"));   /* measured against the slowest cable, now 0.5 */
    ck_assert_int_eq(a.step[0].state, TBM_STEP_FINDINGS);
    ck_assert_int_eq(a.step[6].state, TBM_STEP_FINDINGS);
    tbm_accept_free(&a);
}
END_TEST

START_TEST(verdict_backend_not_possible)
{
    tbm_accept_t a;
    const tbm_finding_t *f;

    good_run(&a);
    a.caps.topology = TBM_TOPO_RING;          /* a TB4 ring without RDMA, as mini-b */
    a.caps.rdma = 0;
    a.caps.backends = TBM_BACKEND_BIT(TBM_BACKEND_RING) | TBM_BACKEND_BIT(TBM_BACKEND_MPI);
    a.link = TBM_LINK_TB4;
    ck_assert_int_eq(tbm_accept_decide(&a), TBM_ACCEPT_PROTOTYPE);
    ck_assert_int_eq(a.chosen, TBM_BACKEND_RING);
    f = tbm_findings_find(&a.kept[TBM_ACCEPT_PLANNABLE], "backend-not-possible");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(strstr(f->what, "the plan asks for jaccl, which studio-a cannot run"));
    ck_assert_ptr_nonnull(strstr(f->fix, "rdma_ctl enable"));
    ck_assert_ptr_nonnull(strstr(f->fix, "write backend = ring in the plan (the group can run ring,mpi)"));
    /* the plan asks for ring: then it is plannable */
    a.plan.backend = TBM_BACKEND_RING;
    ck_assert_int_eq(tbm_accept_decide(&a), TBM_ACCEPT_PLANNABLE);
    tbm_accept_free(&a);
}
END_TEST

START_TEST(verdict_macos_only_names_the_cable)
{
    tbm_accept_t a;
    const tbm_finding_t *f;

    good_run(&a);
    /* a pulled cable: step 4 found it, Slurm drained both Macs, the group's job never started */
    a.step[3].state = TBM_STEP_FINDINGS;
    tbm_accept_step_add(&a, 4, TBM_SEV_ERROR, "cable-missing", "mac01:en2 <-> mac02:en2", "reseat it",
                        "nothing is at the other end");
    a.step[4].state = TBM_STEP_FAILED;
    tbm_accept_step_add(&a, 5, TBM_SEV_ERROR, "job-not-started", "studio-a", "repair what step 4 names",
                        "job 42 did not get 4 Macs; Slurm will not give mac01 (DRAIN: tbmesh: cable-missing at "
                        "mac01:en2 <-> mac02:en2)");
    tbm_accept_refwork_free(&a.mesh_rw);
    a.mesh_rw.ran = 0;
    ck_assert_int_eq(tbm_accept_decide(&a), TBM_ACCEPT_MACOS_ONLY);
    ck_assert_int_eq(tbm_accept_exit_status(a.level), 20);
    f = tbm_findings_find(&a.kept[TBM_ACCEPT_PROTOTYPE], "job-not-started");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(strstr(f->what, "step 5: job 42"));
    ck_assert_ptr_nonnull(strstr(f->what, "mac01:en2 <-> mac02:en2"));
    ck_assert_str_eq(tbm_findings_find(&a.kept[TBM_ACCEPT_PLANNABLE], "cable-missing")->where,
                     "mac01:en2 <-> mac02:en2");
    ck_assert_int_eq(a.step[5].state, TBM_STEP_NOT_RUN);    /* step 6 needs step 5 */
    tbm_accept_free(&a);
}
END_TEST

START_TEST(verdict_different_output_and_wrong_values)
{
    tbm_accept_t a;
    float y[8] = { 1, 2, 3, 4, 5, 6, 7, 9 };
    char *text = refwork_output(y, 4, 2, 4);
    tbm_err_t err = { { 0 } };

    good_run(&a);
    ck_assert_int_eq(tbm_accept_parse_refwork(text, &a.mesh_rw, &err), 0);
    a.mesh_sweep.wrong_total = 5;
    ck_assert_int_eq(tbm_accept_decide(&a), TBM_ACCEPT_MACOS_ONLY);
    ck_assert_ptr_nonnull(tbm_findings_find(&a.kept[TBM_ACCEPT_PROTOTYPE], "refwork-different"));
    ck_assert_ptr_nonnull(tbm_findings_find(&a.kept[TBM_ACCEPT_PROTOTYPE], "allreduce-wrong"));
    free(text);
    tbm_accept_free(&a);
    /* a baseline that failed, no backend at all */
    good_run(&a);
    a.step[1].state = TBM_STEP_FAILED;
    a.caps.topology = TBM_TOPO_OTHER;
    a.caps.backends = 0;
    ck_assert_int_eq(tbm_accept_decide(&a), TBM_ACCEPT_MACOS_ONLY);
    ck_assert_ptr_nonnull(tbm_findings_find(&a.kept[TBM_ACCEPT_PROTOTYPE], "step-not-passed"));
    ck_assert_ptr_nonnull(tbm_findings_find(&a.kept[TBM_ACCEPT_PROTOTYPE], "no-backend"));
    ck_assert_int_eq(a.chosen, TBM_BACKEND_AUTO);
    tbm_accept_free(&a);
}
END_TEST

/* ---- the record ---- */

START_TEST(record_markdown_and_json)
{
    tbm_accept_t a;
    json_object *o, *steps, *kept;
    char *md, *js;

    good_run(&a);
    a.owner[TBM_OWNER_ACCESS][0] = '\0';
    strcpy(a.plan.task, "a | b");             /* a table cell stays one cell */
    tbm_accept_decide(&a);
    md = tbm_accept_markdown(&a);
    js = tbm_accept_json(&a);
    ck_assert_ptr_nonnull(md);
    ck_assert_ptr_nonnull(js);
    ck_assert_ptr_eq(strstr(md, "# Acceptance of studio-a: prototype\n"), md);
    ck_assert_ptr_nonnull(strstr(md, "**prototype** (exit status 10)"));
    ck_assert_ptr_nonnull(strstr(md, "What kept it from **plannable research resource**, and what to do:"));
    ck_assert_ptr_nonnull(strstr(md, "| 2 | A single-Mac baseline | passed | 41 |"));
    ck_assert_ptr_nonnull(strstr(md, "| 5 | Configure and launch through Slurm | passed | 42 |"));
    ck_assert_ptr_nonnull(strstr(md, "- Task: a \\| b\n"));
    ck_assert_ptr_nonnull(strstr(md, "| OwnerAccess | access (who may use the group, accounts and limits) | nobody |"));
    ck_assert_ptr_nonnull(strstr(md, "`sacct -j 42`"));
    ck_assert_ptr_nonnull(strstr(md, "- the whole run again: `tbmesh accept studio-a --plan lab.plan`\n"));
    ck_assert_ptr_nonnull(strstr(md, "2026-12-01T19:00:00Z"));
    o = json_tokener_parse(js);
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "level")), "prototype");
    ck_assert_int_eq(json_object_get_int(json_object_object_get(o, "exit_status")), 10);
    steps = json_object_object_get(o, "steps");
    ck_assert_uint_eq(json_object_array_length(steps), 7);
    ck_assert_int_eq(json_object_get_int(json_object_array_get_idx(
                         json_object_object_get(json_object_array_get_idx(steps, 1), "jobs"), 0)), 41);
    kept = json_object_object_get(json_object_object_get(o, "kept_from"), "plannable");
    ck_assert_uint_eq(json_object_array_length(kept), 1);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(json_object_array_get_idx(kept, 0), "code")),
                     "owner-missing");
    json_object_put(o);
    free(md);
    free(js);
    tbm_accept_free(&a);
}
END_TEST

START_TEST(names_and_jobs)
{
    tbm_accept_t a;

    ck_assert_str_eq(tbm_accept_level_name(TBM_ACCEPT_MACOS_ONLY), "macOS compatibility only");
    ck_assert_str_eq(tbm_accept_level_name(TBM_ACCEPT_PLANNABLE), "plannable research resource");
    ck_assert_str_eq(tbm_accept_step_title(7), "Operations");
    ck_assert_str_eq(tbm_accept_step_title(8), "?");
    tbm_accept_init(&a);
    tbm_accept_add_job(&a, 5, 7);
    tbm_accept_add_job(&a, 5, 8);
    tbm_accept_add_job(&a, 5, 0);        /* no job id: nothing */
    tbm_accept_add_job(&a, 9, 10);       /* no such step */
    ck_assert_str_eq(a.step[4].jobs, "7,8");
    tbm_accept_free(&a);
}
END_TEST

/* A step's job list that is not Slurm job ids: the JSON record is refused, saying which step, which list and
 * which item, and what a list looks like. */
static const struct {
    const char *jobs, *item;
} bad_jobs[] = {
    { "12,x", "\"x\"" },
    { "0", "\"0\"" },
    { "7,4294967296", "\"4294967296\"" },
    { "12,,13", "\"\"" },
    { "-5", "\"-5\"" },
    { " 7", "\" 7\"" },
    { "7;8", "\"7;8\"" },
    { "99999999999999999999999999999999", "\"99999999999999999999999999999999\"" },
};

START_TEST(record_json_refuses_bad_job_ids)
{
    tbm_accept_t a;
    tbm_err_t err = { { 0 } };
    char want[256];

    good_run(&a);
    tbm_accept_decide(&a);
    snprintf(a.step[4].jobs, sizeof(a.step[4].jobs), "%s", bad_jobs[_i].jobs);
    ck_assert_ptr_null(tbm_accept_write_json(&a, &err));
    snprintf(want, sizeof(want), "step 5's Slurm jobs \"%s\": %s is not a Slurm job id (a whole number from 1 to "
             "4294967295): give the ids separated by commas, e.g. \"123,124\"", bad_jobs[_i].jobs, bad_jobs[_i].item);
    ck_assert_str_eq(err.msg, want);
    ck_assert_ptr_null(tbm_accept_json(&a));
    tbm_accept_free(&a);
}
END_TEST

/* Job ids up to Slurm's largest, a trailing comma, no jobs at all: written, and nothing said. */
START_TEST(record_json_job_ids)
{
    tbm_accept_t a;
    tbm_err_t err = { { 0 } };
    json_object *o, *steps, *jobs;
    char *js;

    good_run(&a);
    tbm_accept_decide(&a);
    strcpy(a.step[4].jobs, "1,4294967295,");
    a.step[1].jobs[0] = '\0';
    js = tbm_accept_write_json(&a, &err);
    ck_assert_msg(js != NULL, "%s", err.msg);
    ck_assert_str_eq(err.msg, "");
    o = json_tokener_parse(js);
    ck_assert_ptr_nonnull(o);
    steps = json_object_object_get(o, "steps");
    jobs = json_object_object_get(json_object_array_get_idx(steps, 4), "jobs");
    ck_assert_uint_eq(json_object_array_length(jobs), 2);
    ck_assert_int_eq(json_object_get_int64(json_object_array_get_idx(jobs, 0)), 1);
    ck_assert_int_eq(json_object_get_int64(json_object_array_get_idx(jobs, 1)), 4294967295LL);
    jobs = json_object_object_get(json_object_array_get_idx(steps, 1), "jobs");
    ck_assert_uint_eq(json_object_array_length(jobs), 0);
    /* the values that are null when not known stay null */
    ck_assert(json_object_is_type(json_object_object_get(json_object_object_get(o, "plan"), "tolerance"),
                                  json_type_null));
    json_object_put(o);
    free(js);
    tbm_accept_free(&a);
}
END_TEST

/* The reference workload's shell words, run with a stand-in for macnode that writes "output" to its -o file and
 * says the mode of the folder it was given: the output comes back tagged, from a private folder (0700, made by
 * mktemp -d) that is gone afterwards; a link planted at a name of the old fixed path is left alone; refwork's
 * failure is its exit status, with no output line. */
static char *run_script(const char *dir, const char *macnode_exit, int *status)
{
    char stub[400], script[2048], cmd[2600], *out = calloc(1, 4096);
    tbm_refwork_t w = { 7, 2, 64, 4 };
    size_t n;
    FILE *p;

    snprintf(stub, sizeof(stub), "%s/macnode", dir);
    snprintf(cmd, sizeof(cmd),
             "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && printf output > \"$2\" && "
             "echo \"folder mode $(stat -c %%a \"$(dirname \"$2\")\")\"; shift; done\nexit %s\n", macnode_exit);
    tbm_scratch_put(dir, "macnode", cmd);
    ck_assert_int_eq(chmod(stub, 0755), 0);
    ck_assert_int_eq(tbm_accept_refwork_script(&w, stub, script, sizeof(script)), 0);
    snprintf(cmd, sizeof(cmd), "cd / && TMPDIR='%s/tmp' sh -c '%s'", dir, script);
    p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    n = fread(out, 1, 4095, p);
    out[n] = '\0';
    *status = WEXITSTATUS(pclose(p));
    return out;
}

START_TEST(refwork_script_writes_in_a_private_folder)
{
    char dir[256], script[2048], link[400], target[400], *out;
    tbm_refwork_t w = { 7, 2, 64, 4 };
    int status;
    FILE *f;

    tbm_scratch_make(dir, sizeof(dir), "tbm-accept-rw");
    ck_assert_int_eq(tbm_accept_refwork_script(&w, "/usr/bin/macnode", script, sizeof(script)), 0);
    ck_assert_msg(strstr(script, "d=$(mktemp -d \"${TMPDIR:-/tmp}/tbmesh-accept.XXXXXXXX\") || exit 1; "
                                 "/usr/bin/macnode refwork -L 2 -H 64 -B 4 -s 7 -o \"$d/out.rw\"; ") == script,
                  "%s", script);
    ck_assert_ptr_null(strstr(script, "SLURM_JOB_ID"));   /* no name anyone could predict */
    ck_assert_int_eq(tbm_accept_refwork_script(&w, "/usr/bin/macnode", script, 100), -1);
    ck_assert_int_eq(tbm_accept_refwork_script(&w, "/it's", script, sizeof(script)), -1);
    /* a user plants links at the old fixed names, to a file of root's */
    snprintf(link, sizeof(link), "%s/tmp", dir);
    ck_assert_int_eq(mkdir(link, 01777), 0);
    tbm_scratch_put(dir, "root-file", "root's own\n");
    snprintf(target, sizeof(target), "%s/root-file", dir);
    snprintf(link, sizeof(link), "%s/tmp/tbmesh-accept-1-0.rw", dir);
    ck_assert_int_eq(symlink(target, link), 0);
    out = run_script(dir, "0", &status);
    ck_assert_int_eq(status, 0);
    ck_assert_msg(strstr(out, "folder mode 700\n" TBM_ACCEPT_RW_TAG "b3V0cHV0\n") != NULL, "%s", out);
    free(out);
    f = fopen(target, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(script, sizeof(script), f));
    fclose(f);
    ck_assert_str_eq(script, "root's own\n");
    snprintf(script, sizeof(script), "test \"$(ls -A '%s/tmp')\" = tbmesh-accept-1-0.rw", dir);
    ck_assert_int_eq(system(script), 0);   /* the private folder is gone; only the planted link is there */
    out = run_script(dir, "3", &status);
    ck_assert_int_eq(status, 3);
    ck_assert_ptr_null(strstr(out, TBM_ACCEPT_RW_TAG));
    free(out);
    ck_assert_int_eq(system(script), 0);
    tbm_scratch_remove(dir);
}
END_TEST

static Suite *accept_suite(void)
{
    Suite *s = suite_create("accept");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, plan_good);
    tcase_add_loop_test(tc, plan_bad_lines, 0, (int)(sizeof(bad_plans) / sizeof(bad_plans[0])));
    tcase_add_test(tc, plan_limits);
    tcase_add_test(tc, parse_sweep_rows);
    tcase_add_test(tc, parse_p2p_rows);
    tcase_add_test(tc, parse_and_compare_refwork);
    tcase_add_test(tc, environment_of_every_rank);
    tcase_add_test(tc, verdict_plannable);
    tcase_add_test(tc, verdict_prototype_reasons);
    tcase_add_test(tc, verdict_backend_not_possible);
    tcase_add_test(tc, verdict_macos_only_names_the_cable);
    tcase_add_test(tc, verdict_different_output_and_wrong_values);
    tcase_add_test(tc, record_markdown_and_json);
    tcase_add_test(tc, names_and_jobs);
    tcase_add_loop_test(tc, record_json_refuses_bad_job_ids, 0, (int)(sizeof(bad_jobs) / sizeof(bad_jobs[0])));
    tcase_add_test(tc, record_json_job_ids);
    tcase_add_test(tc, refwork_script_writes_in_a_private_folder);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(accept_suite)
