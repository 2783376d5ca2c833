/* test_jobreq.c: unit tests of lib/jobreq.c, the decisions of job_submit/tbmesh, on the lab's two groups
 * (etc/tbmesh.conf.example: studio-a, a 4-Mac RDMA mesh; mini-b, a 4-Mac Thunderbolt 4 ring). */
#include "tbm_check.h"
#include "tbm_fixture.h"

#include <stdio.h>
#include <string.h>

#include "fileio.h"
#include "jobreq.h"

static tbm_conf_t conf;
static tbm_sched_t sched = { "mac", "all,debug", "all", NULL, NULL };

static void load_conf(void)
{
    tbm_example_conf(&conf);
}

static void free_conf(void)
{
    tbm_conf_free(&conf);
}

static tbm_jobreq_t req_of(const char *tres, const char *backend)
{
    tbm_jobreq_t r = { tres, NULL, NULL, NULL, TBM_NODES_UNSET, TBM_NODES_UNSET, backend, NULL, 0, 0 };
    return r;
}

/* Plan and expect success. */
static void plan_ok(const tbm_jobreq_t *r, tbm_jobplan_t *p)
{
    tbm_err_t err = { { 0 } };
    ck_assert_msg(tbm_jobreq_plan(&conf, &sched, r, p, &err) == 0, "%s", err.msg);
}

/* Plan and expect this refusal. */
static void plan_refused(const tbm_jobreq_t *r, const char *msg)
{
    tbm_jobplan_t p;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_jobreq_plan(&conf, &sched, r, &p, &err), -1);
    ck_assert_str_eq(err.msg, msg);
    ck_assert_ptr_null(p.features);
}

START_TEST(gres_entries)
{
    char group[64];
    long long n;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_gres_tbmesh("gres:tbmesh:4", group, sizeof(group), &n, &err), 1);
    ck_assert_str_eq(group, "");
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(tbm_gres_tbmesh("gres:gpu:1,gres:tbmesh:studio-a:2", group, sizeof(group), &n, &err), 1);
    ck_assert_str_eq(group, "studio-a");
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(tbm_gres_tbmesh("gres/tbmesh", group, sizeof(group), &n, &err), 1);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(tbm_gres_tbmesh("gres:tbmeshx:4", group, sizeof(group), &n, &err), 0);
    ck_assert_int_eq(tbm_gres_tbmesh(NULL, group, sizeof(group), &n, &err), 0);
    ck_assert_int_eq(tbm_gres_tbmesh("gres:tbmesh:0", group, sizeof(group), &n, &err), -1);
    ck_assert_str_eq(err.msg, "--gres=tbmesh:0 asks for no Mac: ask for 1 or more, e.g. --gres=tbmesh:4");
    ck_assert_int_eq(tbm_gres_tbmesh("gres:tbmesh:a:b", group, sizeof(group), &n, &err), -1);
    ck_assert_str_eq(err.msg, "--gres=tbmesh:a:b: 'b' is not a number of Macs: use --gres=tbmesh:N with N a "
                              "whole number, e.g. --gres=tbmesh:4");
    ck_assert_int_eq(tbm_gres_tbmesh("gres:tbmesh:a:b:c", group, sizeof(group), &n, &err), -1);
    ck_assert_str_eq(err.msg, "cannot read --gres 'tbmesh:a:b:c': use --gres=tbmesh:N (N Macs cabled to each "
                              "other) or --gres=tbmesh:GROUP:N");
    ck_assert_int_eq(tbm_gres_tbmesh("gres:tbmesh:", group, sizeof(group), &n, &err), -1);
    ck_assert_int_eq(tbm_gres_tbmesh("gres:tbmesh:1,gres:tbmesh:2", group, sizeof(group), &n, &err), -1);
    ck_assert_str_eq(err.msg, "--gres names tbmesh twice: ask once, --gres=tbmesh:N");
}
END_TEST

/* Entries split at ',' or ';', empty ones skipped over; the count is 1 to 9 digits, nothing else. */
START_TEST(gres_lists_and_counts)
{
    char group[64];
    long long n = 0;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_gres_tbmesh("gres:gpu:1;gres:tbmesh:3", group, sizeof(group), &n, &err), 1);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(tbm_gres_tbmesh("gres:gpu:1,,gres:tbmesh:mini-b:2,", group, sizeof(group), &n, &err), 1);
    ck_assert_str_eq(group, "mini-b");
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(tbm_gres_tbmesh("gres:tbmesh:999999999", group, sizeof(group), &n, &err), 1);
    ck_assert_int_eq(n, 999999999);
    ck_assert_int_eq(tbm_gres_tbmesh("gres:tbmesh:x:1234567890", group, sizeof(group), &n, &err), -1);
    ck_assert_str_eq(err.msg, "--gres=tbmesh:x:1234567890: '1234567890' is not a number of Macs: use --gres=tbmesh:N "
                              "with N a whole number, e.g. --gres=tbmesh:4");
    ck_assert_int_eq(tbm_gres_tbmesh("gres:tbmesh:x:+4", group, sizeof(group), &n, &err), -1);
    ck_assert_str_eq(err.msg, "--gres=tbmesh:x:+4: '+4' is not a number of Macs: use --gres=tbmesh:N with N a "
                              "whole number, e.g. --gres=tbmesh:4");
    ck_assert_int_eq(tbm_gres_tbmesh("", group, sizeof(group), &n, &err), 0);
    ck_assert_int_eq(tbm_gres_tbmesh(",;", group, sizeof(group), &n, &err), 0);
}
END_TEST

/* The tbmesh entry becomes one unit per node; the others stay as they were. */
START_TEST(gres_one_per_node)
{
    char *s = tbm_gres_tbmesh_one_per_node("gres:gpu:1,gres/tbmesh:studio-a:4;gres:x");
    ck_assert_str_eq(s, "gres:gpu:1,gres/tbmesh:1,gres:x");
    free(s);
    s = tbm_gres_tbmesh_one_per_node("gres:tbmeshx:2");
    ck_assert_str_eq(s, "gres:tbmeshx:2");
    free(s);
    s = tbm_gres_tbmesh_one_per_node(NULL);
    ck_assert_str_eq(s, "");
    free(s);
}
END_TEST

/* The one name of the variable that carries --mlx-backend, and what it may hold. */
START_TEST(backend_env_and_choices)
{
    tbm_backend_t b;
    tbm_err_t err = { { 0 } };
    char choices[TBM_BACKEND_CHOICES_MAX];

    ck_assert_str_eq(TBM_MLX_BACKEND_ENV, "TBMESH_MLX_BACKEND");
    ck_assert_str_eq(tbm_backend_choices(choices, sizeof(choices)), "auto, jaccl, jaccl-ring, ring or mpi");
    ck_assert_int_eq(tbm_backend_parse("ring", &b, &err), 0);
    ck_assert_int_eq(b, TBM_BACKEND_RING);
}
END_TEST

START_TEST(four_macs_auto_goes_to_either_group)
{
    tbm_jobreq_t r = req_of("gres:tbmesh:4", NULL);
    tbm_jobplan_t p;

    plan_ok(&r, &p);
    ck_assert_int_eq(p.verdict, TBM_JOB_MESH);
    ck_assert_uint_eq(p.nodes, 4);
    ck_assert_str_eq(p.tres_per_node, "gres:tbmesh:1");
    ck_assert_str_eq(p.features, "[tbmesh_studio_a|tbmesh_mini_b]");
    ck_assert_str_eq(p.partition, "mac");
    ck_assert_ptr_null(p.exc_nodes);
    ck_assert_int_eq(p.backend, TBM_BACKEND_AUTO);
    tbm_jobplan_free(&p);
}
END_TEST

START_TEST(backend_decides_the_group)
{
    tbm_jobreq_t r = req_of("gres:tbmesh:4", "jaccl");
    tbm_jobplan_t p;

    plan_ok(&r, &p);
    ck_assert_str_eq(p.features, "tbmesh_studio_a");
    ck_assert_int_eq(p.backend, TBM_BACKEND_JACCL);
    tbm_jobplan_free(&p);
    r = req_of("gres:tbmesh:3", "ring");          /* three of a mesh are a ring; three of a 4-ring are not */
    plan_ok(&r, &p);
    ck_assert_str_eq(p.features, "tbmesh_studio_a");
    tbm_jobplan_free(&p);
    r = req_of("gres:tbmesh:4", "ring");
    plan_ok(&r, &p);
    ck_assert_str_eq(p.features, "[tbmesh_studio_a|tbmesh_mini_b]");
    tbm_jobplan_free(&p);
    r = req_of("gres:gpu:1,gres:tbmesh:studio-a:2", "mpi");   /* typed: that group only, other GRES kept */
    plan_ok(&r, &p);
    ck_assert_str_eq(p.features, "tbmesh_studio_a");
    ck_assert_str_eq(p.tres_per_node, "gres:gpu:1,gres:tbmesh:1");
    ck_assert_uint_eq(p.nodes, 2);
    tbm_jobplan_free(&p);
}
END_TEST

START_TEST(refusals_say_what_to_do)
{
    tbm_jobreq_t r = req_of("gres:tbmesh:6", NULL);

    plan_refused(&r, "no group has 6 Macs (the largest, studio-a, has 4): use --gres=tbmesh:4 or fewer");
    r = req_of("gres:tbmesh:4", "nccl");
    plan_refused(&r, "--mlx-backend=nccl is unknown: use auto, jaccl, jaccl-ring, ring or mpi");
    r = req_of("gres:tbmesh:studio-x:2", NULL);
    plan_refused(&r, "no group named 'studio-x' in tbmesh.conf: the groups are studio-a, mini-b");
    r = req_of("gres:tbmesh:4", NULL);
    r.min_nodes = r.max_nodes = 2;
    plan_refused(&r, "--gres=tbmesh:4 means 4 Macs, one job node each, but -N asks for 2: drop -N or make it -N 4");
    r = req_of("gres:tbmesh:4", NULL);
    r.features = "[rack1|rack2]";
    plan_refused(&r, "your --constraint '[rack1|rack2]' uses [ ]: a tbmesh job already takes the one bracket "
                     "Slurm allows to keep its Macs in one group; drop the brackets, or name the group with "
                     "--gres=tbmesh:GROUP:N");
    r = req_of("gres:tbmesh:2", NULL);
    r.partition = "linux";
    plan_refused(&r, "partition linux has no Macs: use -p mac or leave -p out");
    r = req_of("gres:tbmesh:3", "ring");
    r.tres_per_node = "gres:tbmesh:mini-b:3";
    plan_refused(&r, "no group can run ring on 3 Macs: group mini-b is a ring of 4 Macs; a job on it must use all "
                     "4 (part of a ring is not a ring): ask for tbmesh:4");
    r = req_of("gres:tbmesh:mini-b:3", NULL);   /* no backend asked for: none named */
    plan_refused(&r, "no group can run a job on 3 Macs: group mini-b is a ring of 4 Macs; a job on it must use all "
                     "4 (part of a ring is not a ring): ask for tbmesh:4");
}
END_TEST

START_TEST(user_constraint_is_combined)
{
    tbm_jobreq_t r = req_of("gres:tbmesh:4", NULL);
    tbm_jobplan_t p;

    r.features = "bigmem";
    plan_ok(&r, &p);
    ck_assert_str_eq(p.features, "bigmem&[tbmesh_studio_a|tbmesh_mini_b]");
    tbm_jobplan_free(&p);
    r.features = "a|b";
    r.partition = "all";
    plan_ok(&r, &p);
    ck_assert_str_eq(p.features, "(a|b)&[tbmesh_studio_a|tbmesh_mini_b]");
    ck_assert_ptr_null(p.partition);      /* the user's partition stays */
    tbm_jobplan_free(&p);
}
END_TEST

START_TEST(linux_jobs_are_kept_off_macs_only_in_shared_partitions)
{
    tbm_jobreq_t r = req_of("gres:gpu:1", NULL);
    tbm_jobplan_t p;

    plan_ok(&r, &p);                       /* no -p: the default partition, shared */
    ck_assert_int_eq(p.verdict, TBM_JOB_KEEP_OFF_MACS);
    ck_assert_str_eq(p.exc_nodes, "mac[01-08]");
    ck_assert_ptr_null(p.features);
    ck_assert_ptr_null(p.tres_per_node);
    tbm_jobplan_free(&p);
    r.exc_nodes = "lnx07";
    r.partition = "linux,debug";
    plan_ok(&r, &p);
    ck_assert_str_eq(p.exc_nodes, "lnx07,mac[01-08]");
    tbm_jobplan_free(&p);
    r.partition = "linux";
    plan_ok(&r, &p);
    ck_assert_int_eq(p.verdict, TBM_JOB_UNTOUCHED);
    ck_assert_ptr_null(p.exc_nodes);
    r = req_of(NULL, NULL);
    sched.default_partition = NULL;       /* default unknown: touch nothing */
    plan_ok(&r, &p);
    ck_assert_int_eq(p.verdict, TBM_JOB_UNTOUCHED);
    sched.default_partition = "all";
}
END_TEST

static int mac03_down(const char *node, char *why, size_t len, void *arg)
{
    (void)arg;
    if (strcmp(node, "mac03") != 0)
        return 1;
    snprintf(why, len, "down (Not responding)");
    return 0;
}

START_TEST(a_down_node_is_named)
{
    tbm_jobreq_t r = req_of("gres:tbmesh:4", "jaccl");
    tbm_jobplan_t p;

    sched.node_usable = mac03_down;
    plan_refused(&r, "studio-a could hold this job, but mac03 is down (Not responding): it can start when it is "
                     "back; or ask for --gres=tbmesh:3");
    r = req_of("gres:tbmesh:4", NULL);   /* auto: mini-b can take it now */
    plan_ok(&r, &p);
    ck_assert_str_eq(p.features, "[tbmesh_studio_a|tbmesh_mini_b]");
    tbm_jobplan_free(&p);
    sched.node_usable = NULL;
}
END_TEST

static int mac06_drained(const char *node, char *why, size_t len, void *arg)
{
    (void)arg;
    if (strcmp(node, "mac06") != 0)
        return 1;
    snprintf(why, len, "drained (tbmesh: cable-missing)");
    return 0;
}

START_TEST(a_ring_is_never_advised_a_part_of_itself)
{
    tbm_jobreq_t r = req_of("gres:tbmesh:mini-b:4", NULL);

    sched.node_usable = mac06_drained;
    plan_refused(&r, "mini-b could hold this job, but mac06 is drained (tbmesh: cable-missing): it can start when it "
                     "is back");
    sched.node_usable = NULL;
}
END_TEST

START_TEST(tasks_per_mac_and_task_counts)
{
    tbm_jobreq_t r = req_of("gres:tbmesh:4", NULL);
    tbm_jobplan_t p;

    r.ntasks_per_node = 2;
    plan_refused(&r, "--gres=tbmesh:4 runs one MLX rank on each Mac; --ntasks-per-node=2 would start 2 processes with "
                     "the same rank on every Mac: drop --ntasks-per-node (one task per Mac, with threads inside it) or "
                     "make it 1");
    r.ntasks_per_node = 1;
    r.num_tasks = 8;
    plan_refused(&r, "--gres=tbmesh:4 runs one task per Mac (4 in all); -n 8 asks for more: drop -n or make it -n 4");
    r.num_tasks = 4;
    plan_ok(&r, &p);
    ck_assert_int_eq(p.exclusive, 1);
    tbm_jobplan_free(&p);
}
END_TEST

START_TEST(named_macs_pick_the_group)
{
    tbm_jobreq_t r = req_of("gres:tbmesh:4", NULL);
    tbm_jobplan_t p;

    r.req_nodes = "mac05";
    r.min_nodes = 1;   /* sbatch counts -w's nodes into min_nodes */
    plan_ok(&r, &p);
    ck_assert_str_eq(p.features, "tbmesh_mini_b");
    ck_assert_uint_eq(p.nodes, 4);
    tbm_jobplan_free(&p);
    r.req_nodes = "mac01,mac05";
    r.min_nodes = 4;
    plan_refused(&r, "-w names Macs of two groups (mac01 of studio-a, mac05 of mini-b): a job's Macs are all of one "
                     "cabled group; name Macs of one group, or leave -w out");
    r = req_of("gres:tbmesh:2", NULL);
    r.req_nodes = "mac01,mac05";
    r.min_nodes = 2;
    plan_refused(&r, "-w names Macs of two groups (mac01 of studio-a, mac05 of mini-b): a job's Macs are all of one "
                     "cabled group; name Macs of one group, or leave -w out");
    r.req_nodes = "lnx01";
    r.min_nodes = 1;
    plan_refused(&r, "-w names lnx01, which is no Mac of tbmesh.conf: a --gres=tbmesh job runs on Macs only; name "
                     "Macs of one group, or leave -w out");
    r.req_nodes = "mac[01-03]";
    r.min_nodes = 3;
    plan_refused(&r, "-w names 3 Macs but --gres=tbmesh:2 asks for 2: name at most 2, or ask for --gres=tbmesh:3");
    r = req_of("gres:tbmesh:mini-b:2", NULL);
    r.req_nodes = "mac01";
    plan_refused(&r, "-w names Macs of studio-a but --gres=tbmesh:mini-b:2 asks for group mini-b: make them agree");
}
END_TEST

/* The lab's two groups and "wide", a Thunderbolt 4 mesh of four whose mac[09-11] still form an RDMA mesh
 * (RdmaSubset=), with the site's JacclOnSubsets= as given. */
static void load_wide(const char *jaccl_on_subsets)
{
    static const char *wide =
        "Group=wide Nodes=mac[09-12] Topology=mesh Link=tb4 Rdma=no Mode=bridge Backends=ring,mpi "
        "RdmaSubset=mac[09-11]\n"
        "Cable=mac09:en2,mac10:en2 Addr=10.30.0.1/30,10.30.0.2/30 Rdma=rdma_en2,rdma_en2 Speed=80\n"
        "Cable=mac09:en3,mac11:en2 Addr=10.30.0.5/30,10.30.0.6/30 Rdma=rdma_en3,rdma_en2 Speed=80\n"
        "Cable=mac09:en4,mac12:en2 Addr=10.30.0.9/30,10.30.0.10/30 Speed=80\n"
        "Cable=mac10:en3,mac11:en3 Addr=10.30.0.13/30,10.30.0.14/30 Rdma=rdma_en3,rdma_en3 Speed=80\n"
        "Cable=mac10:en4,mac12:en3 Addr=10.30.0.17/30,10.30.0.18/30 Speed=80\n"
        "Cable=mac11:en4,mac12:en4 Addr=10.30.0.21/30,10.30.0.22/30 Speed=40\n";
    tbm_err_t err = { { 0 } };
    size_t len;
    char *example = tbm_fixture("../../etc/tbmesh.conf.example", &len), text[8192];

    snprintf(text, sizeof(text), "%s\nJacclOnSubsets=%s\n%s", example, jaccl_on_subsets, wide);
    free(example);
    tbm_conf_free(&conf);
    ck_assert_msg(tbm_conf_parse(text, strlen(text), "wide", &conf, NULL, &err) == 0, "%s", err.msg);
}

static int mac10_down(const char *node, char *why, size_t len, void *arg)
{
    (void)arg;
    if (strcmp(node, "mac10") != 0 && strcmp(node, "mac12") != 0)
        return 1;
    snprintf(why, len, "down");
    return 0;
}

/* jaccl and jaccl-ring asked for by name go to a group's RdmaSubset= only when the site allows it, through
 * the subset's own feature; auto and the other backends keep to whole groups. */
START_TEST(jaccl_on_an_rdma_subset)
{
    tbm_jobreq_t r = req_of("gres:tbmesh:wide:3", "jaccl");
    tbm_jobplan_t p;

    load_wide("no");
    plan_refused(&r, "no group can run jaccl on 3 Macs: group wide has no working RDMA (JACCL needs Thunderbolt 5 "
                     "and RDMA devices on both ends of every cable): use --mlx-backend=ring or mpi (its Macs "
                     "mac[09-11] form an RDMA mesh, but tbmesh.conf does not place JACCL jobs on a part of a group: "
                     "the administrator may allow it with JacclOnSubsets=yes)");
    r = req_of("gres:tbmesh:3", "jaccl");
    plan_ok(&r, &p);
    ck_assert_str_eq(p.features, "tbmesh_studio_a");
    tbm_jobplan_free(&p);

    load_wide("yes");
    plan_ok(&r, &p);
    /* the subset (3 Macs) before studio-a (4): the smallest first (Placement=pack) */
    ck_assert_str_eq(p.features, "[tbmesh_rdma_wide|tbmesh_studio_a]");
    ck_assert_uint_eq(p.n_groups, 2);
    ck_assert_int_eq(p.on_subset[0], 1);
    ck_assert_int_eq(p.on_subset[1], 0);
    ck_assert_int_eq(p.backend, TBM_BACKEND_JACCL);
    ck_assert_uint_eq(p.nodes, 3);
    tbm_jobplan_free(&p);
    r = req_of("gres:tbmesh:wide:2", "jaccl-ring");
    plan_ok(&r, &p);
    ck_assert_str_eq(p.features, "tbmesh_rdma_wide");
    tbm_jobplan_free(&p);
    r = req_of("gres:tbmesh:3", NULL);          /* auto: whole groups only */
    plan_ok(&r, &p);
    ck_assert_str_eq(p.features, "[tbmesh_studio_a|tbmesh_wide]");
    tbm_jobplan_free(&p);
    r = req_of("gres:tbmesh:wide:4", "jaccl");
    plan_refused(&r, "no group can run jaccl on 4 Macs: group wide runs jaccl only on its RDMA subset mac[09-11], "
                     "of 3 Macs: ask for 3 or fewer");
    r = req_of("gres:tbmesh:wide:3", "jaccl");  /* mac12 down does not matter, mac10 does */
    sched.node_usable = mac10_down;
    plan_refused(&r, "wide could hold this job, but mac10 is down: it can start when it is back; or ask for "
                     "--gres=tbmesh:2");
    sched.node_usable = NULL;
}
END_TEST

START_TEST(backend_without_macs_is_refused)
{
    tbm_jobreq_t r = req_of("gres:gpu:1", "ring");

    plan_refused(&r, "--mlx-backend=ring has no effect without --gres=tbmesh:N: ask for Macs with --gres=tbmesh:N, "
                     "or leave --mlx-backend out");
}
END_TEST

/* Placement=pack (the default): a job's constraint names the groups that can hold it smallest first, so that
 * Slurm, which starts it in the first that can, fills the small groups (and of groups alike, the first) before
 * it takes part of a large one. Placement=order keeps tbmesh.conf's order. */
START_TEST(placement_packs_small_jobs_into_small_groups)
{
    static const char *text = "Group=big Nodes=b[1-8] Topology=mesh Backends=mpi\n"
                              "Group=mid Nodes=m[1-4] Topology=mesh Backends=mpi\n"
                              "Group=small Nodes=s[1-2] Topology=mesh Backends=mpi\n"
                              "Group=mid2 Nodes=n[1-4] Topology=mesh Backends=mpi\n";
    tbm_conf_t c;
    tbm_err_t err = { { 0 } };
    tbm_jobreq_t two = req_of("gres:tbmesh:2", NULL), four = req_of("gres:tbmesh:4", NULL),
                 eight = req_of("gres:tbmesh:8", NULL);
    tbm_jobplan_t p;

    ck_assert_msg(tbm_conf_parse(text, strlen(text), "t.conf", &c, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(tbm_jobreq_plan(&c, &sched, &two, &p, &err), 0);
    ck_assert_str_eq(p.features, "[tbmesh_small|tbmesh_mid|tbmesh_mid2|tbmesh_big]");
    tbm_jobplan_free(&p);
    ck_assert_int_eq(tbm_jobreq_plan(&c, &sched, &four, &p, &err), 0);
    ck_assert_str_eq(p.features, "[tbmesh_mid|tbmesh_mid2|tbmesh_big]");
    tbm_jobplan_free(&p);
    ck_assert_int_eq(tbm_jobreq_plan(&c, &sched, &eight, &p, &err), 0);
    ck_assert_str_eq(p.features, "tbmesh_big");
    tbm_jobplan_free(&p);
    c.placement_order = 1;
    ck_assert_int_eq(tbm_jobreq_plan(&c, &sched, &two, &p, &err), 0);
    ck_assert_str_eq(p.features, "[tbmesh_big|tbmesh_mid|tbmesh_small|tbmesh_mid2]");
    tbm_jobplan_free(&p);
    tbm_conf_free(&c);
}
END_TEST

static Suite *jobreq_suite(void)
{
    Suite *s = suite_create("jobreq");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, load_conf, free_conf);
    tcase_add_test(tc, gres_entries);
    tcase_add_test(tc, gres_lists_and_counts);
    tcase_add_test(tc, gres_one_per_node);
    tcase_add_test(tc, backend_env_and_choices);
    tcase_add_test(tc, four_macs_auto_goes_to_either_group);
    tcase_add_test(tc, backend_decides_the_group);
    tcase_add_test(tc, refusals_say_what_to_do);
    tcase_add_test(tc, user_constraint_is_combined);
    tcase_add_test(tc, linux_jobs_are_kept_off_macs_only_in_shared_partitions);
    tcase_add_test(tc, a_down_node_is_named);
    tcase_add_test(tc, a_ring_is_never_advised_a_part_of_itself);
    tcase_add_test(tc, tasks_per_mac_and_task_counts);
    tcase_add_test(tc, named_macs_pick_the_group);
    tcase_add_test(tc, backend_without_macs_is_refused);
    tcase_add_test(tc, jaccl_on_an_rdma_subset);
    tcase_add_test(tc, placement_packs_small_jobs_into_small_groups);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(jobreq_suite)
