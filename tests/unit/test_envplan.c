/* test_envplan.c: unit tests of lib/envplan*.c: every backend on the lab's two groups and on made-up groups
 * (subsets, 8 and 9 Macs, multi-rail pairs, rings out of name order), MLX versions, ports, every refusal
 * with its exact message; every plan made is also run through the independent checker (mlxcheck). */
#include "tbm_check.h"
#include <stdio.h>
#include <string.h>

#include "envplan.h"
#include "mlxcheck.h"
#include "scalar.h"

/* The embedded lab's tbmesh.conf: cable c (1-based) is 169.254.c.1/30 - 169.254.c.2/30. */
#define LAB_CONF                                                                                        \
    "MlxVersion=0.31.2\n"                                                                              \
    "Group=studio-a Nodes=mac[01-04] Topology=mesh Link=tb5 Rdma=yes Mode=bridge\n"                     \
    "Cable=mac01:en2,mac02:en2 Addr=169.254.1.1/30,169.254.1.2/30 Rdma=rdma_en2,rdma_en2 Speed=80\n"    \
    "Cable=mac01:en3,mac03:en2 Addr=169.254.2.1/30,169.254.2.2/30 Rdma=rdma_en3,rdma_en2 Speed=80\n"    \
    "Cable=mac01:en4,mac04:en2 Addr=169.254.3.1/30,169.254.3.2/30 Rdma=rdma_en4,rdma_en2 Speed=80\n"    \
    "Cable=mac02:en3,mac03:en3 Addr=169.254.4.1/30,169.254.4.2/30 Rdma=rdma_en3,rdma_en3 Speed=80\n"    \
    "Cable=mac02:en4,mac04:en3 Addr=169.254.5.1/30,169.254.5.2/30 Rdma=rdma_en4,rdma_en3 Speed=80\n"    \
    "Cable=mac03:en4,mac04:en4 Addr=169.254.6.1/30,169.254.6.2/30 Rdma=rdma_en4,rdma_en4 Speed=80\n"    \
    "Group=mini-b Nodes=mac[05-08] Topology=ring Link=tb4 Rdma=no Mode=direct\n"                        \
    "Cable=mac05:en2,mac06:en2 Addr=169.254.7.1/30,169.254.7.2/30 Speed=40\n"                           \
    "Cable=mac06:en3,mac07:en2 Addr=169.254.8.1/30,169.254.8.2/30 Speed=40\n"                           \
    "Cable=mac07:en3,mac08:en2 Addr=169.254.9.1/30,169.254.9.2/30 Speed=40\n"                           \
    "Cable=mac08:en3,mac05:en3 Addr=169.254.10.1/30,169.254.10.2/30 Speed=40\n"

/* Two Macs joined by several cables (n rails), RDMA on TB5. */
static const char *duo_conf(int rails)
{
    static char buf[4096];
    size_t len = (size_t)snprintf(buf, sizeof(buf), "Group=duo Nodes=d[1-2] Topology=mesh Link=tb5 Rdma=yes\n");
    int i;

    for (i = 0; i < rails; i++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len,
                                "Cable=d1:en%d,d2:en%d Addr=10.1.%d.1/30,10.1.%d.2/30 Rdma=rdma_en%d,rdma_en%d\n",
                                i + 2, i + 2, i, i, i + 2, i + 2);
    return buf;
}

/* A full mesh of n Macs m01.. with RDMA: node i faces node j on en<j+2>, cable i-j is 10.i.j.1-2/30. */
static const char *mesh_conf(int n)
{
    static char buf[16384];
    size_t len = (size_t)snprintf(buf, sizeof(buf), "Group=big Nodes=m[01-%02d] Topology=mesh Link=tb5 Rdma=yes\n", n);
    int i, j;

    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++)
            len += (size_t)snprintf(buf + len, sizeof(buf) - len,
                                    "Cable=m%02d:en%d,m%02d:en%d Addr=10.%d.%d.1/30,10.%d.%d.2/30 "
                                    "Rdma=rdma_en%d,rdma_en%d Speed=80\n",
                                    i + 1, j + 2, j + 1, i + 2, i, j, i, j, j + 2, i + 2);
    return buf;
}

/* A ring of 5 Macs r1..r5 with RDMA; cable i joins r<i> and r<i+1>; extra lines appended. */
#define RDMA_RING5                                                                       \
    "Group=loop Nodes=r[1-5] Topology=ring Link=tb5 Rdma=yes\n"                          \
    "Cable=r1:en2,r2:en3 Addr=10.5.1.1/30,10.5.1.2/30 Rdma=rdma_en2,rdma_en3\n"          \
    "Cable=r2:en2,r3:en3 Addr=10.5.2.1/30,10.5.2.2/30 Rdma=rdma_en2,rdma_en3\n"          \
    "Cable=r3:en2,r4:en3 Addr=10.5.3.1/30,10.5.3.2/30 Rdma=rdma_en2,rdma_en3\n"          \
    "Cable=r4:en2,r5:en3 Addr=10.5.4.1/30,10.5.4.2/30 Rdma=rdma_en2,rdma_en3\n"          \
    "Cable=r5:en2,r1:en3 Addr=10.5.5.1/30,10.5.5.2/30 Rdma=rdma_en2,rdma_en3\n"

/* A TB4 ring whose cables do not follow the names: q1-q3-q2-q4-q1. */
#define SHUFFLED_RING                                                       \
    "Group=twist Nodes=q[1-4] Topology=ring Link=tb4 Rdma=no\n"             \
    "Cable=q1:en2,q3:en2 Addr=10.6.1.1/30,10.6.1.2/30\n"                    \
    "Cable=q3:en3,q2:en2 Addr=10.6.2.1/30,10.6.2.2/30\n"                    \
    "Cable=q2:en3,q4:en2 Addr=10.6.3.1/30,10.6.3.2/30\n"                    \
    "Cable=q4:en3,q1:en3 Addr=10.6.4.1/30,10.6.4.2/30\n"

static tbm_conf_t *conf_of(const char *text)
{
    static tbm_conf_t c;
    tbm_err_t err = {{0}};

    tbm_conf_free(&c);
    ck_assert_msg(tbm_conf_parse(text, strlen(text), "t.conf", &c, NULL, &err) == 0, "%s", err.msg);
    return &c;
}

/* Split "a,b,c" into names (static storage, at most 70). */
static size_t names_of(const char *list, const char **out)
{
    static char buf[2048];
    char *save = NULL, *tok;
    size_t n = 0;

    snprintf(buf, sizeof(buf), "%s", list);
    for (tok = strtok_r(buf, ",", &save); tok && n < 70; tok = strtok_r(NULL, ",", &save))
        out[n++] = tok;
    return n;
}

static const char *plan_error(const tbm_conf_t *c, const char *list, const char *self, tbm_backend_t b,
                              uint32_t job, const tbm_envplan_opts_t *opts)
{
    static tbm_err_t err;
    const char *nodes[70];
    size_t n = names_of(list, nodes);
    tbm_envplan_t p;

    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(tbm_envplan_make(c, nodes, n, self, b, job, opts, &p, &err), -1);
    ck_assert_ptr_null(p.vars);
    ck_assert_ptr_null(p.order);
    ck_assert_uint_eq(p.n_files, 0);
    return err.msg;
}

/* ---- a whole job: every rank planned, then checked by mlxcheck ---- */

typedef struct job {
    size_t n;
    const char *nodes[70];
    tbm_envplan_t plan[70];
    char *env[70][24];
    mlxc_file_t files[70][2];
    char addrs[70][16][80];
    const char *addr_ptr[70][16];
    mlxc_rank_t view[70];
} job_t;

static void node_addrs(const tbm_conf_t *c, job_t *j, size_t r)
{
    int node = tbm_conf_node(c, j->nodes[r]);
    size_t i, k = 0;
    uint32_t ip;
    int e;

    for (i = 0; i < c->n_cables && k < 15; i++)
        for (e = 0; e < 2; e++)
            if (c->cables[i].end[e].node == node && c->cables[i].end[e].ipv4[0])
                snprintf(j->addrs[r][k++], sizeof(j->addrs[r][0]), "%s/%d", c->cables[i].end[e].ipv4,
                         c->cables[i].end[e].prefix_len);
    if (tbm_ipv4_parse(c->nodes[node].agent_addr, &ip) == 0)
        snprintf(j->addrs[r][k++], sizeof(j->addrs[r][0]), "%s/24", c->nodes[node].agent_addr);
    for (i = 0; i < k; i++)
        j->addr_ptr[r][i] = j->addrs[r][i];
    j->view[r].addrs = j->addr_ptr[r];
    j->view[r].n_addrs = k;
}

static void view_of(const tbm_conf_t *c, job_t *j, size_t r)
{
    const tbm_envplan_t *p = &j->plan[r];
    size_t i;

    for (i = 0; i < p->n_vars && i < 24; i++) {
        size_t len = strlen(p->vars[i].name) + strlen(p->vars[i].value) + 2;
        j->env[r][i] = malloc(len);
        snprintf(j->env[r][i], len, "%s=%s", p->vars[i].name, p->vars[i].value);
    }
    for (i = 0; i < p->n_files && i < 2; i++) {
        j->files[r][i].path = p->files[i].path;
        j->files[r][i].data = p->files[i].data;
        j->files[r][i].len = p->files[i].len;
    }
    j->view[r].env = (const char *const *)j->env[r];
    j->view[r].n_env = p->n_vars;
    j->view[r].files = j->files[r];
    j->view[r].n_files = p->n_files;
    node_addrs(c, j, r);
}

static job_t *job_plan(const tbm_conf_t *c, const char *list, tbm_backend_t b, uint32_t job,
                       const tbm_envplan_opts_t *opts)
{
    job_t *j = calloc(1, sizeof(*j));
    tbm_err_t err = {{0}};
    size_t r;

    j->n = names_of(list, j->nodes);
    for (r = 0; r < j->n; r++) {
        ck_assert_msg(tbm_envplan_make(c, j->nodes, j->n, j->nodes[r], b, job, opts, &j->plan[r], &err) == 0, "%s",
                      err.msg);
        view_of(c, j, r);
    }
    return j;
}

/* Run the job through mlxcheck; the number of problems (printed). */
static size_t job_check(job_t *j)
{
    tbm_findings_t fs;
    size_t i, problems;

    tbm_findings_init(&fs);
    problems = mlxc_check_job(j->view, j->n, &fs);
    for (i = 0; i < fs.n; i++)
        fprintf(stderr, "mlxcheck: %s: %s: %s\n", fs.items[i].where, fs.items[i].code, fs.items[i].what);
    tbm_findings_free(&fs);
    return problems;
}

static void job_free(job_t *j)
{
    size_t r, i;

    for (r = 0; r < j->n; r++) {
        for (i = 0; i < 24; i++)
            free(j->env[r][i]);
        tbm_envplan_free(&j->plan[r]);
    }
    free(j);
}

/* Plan a job, check it with mlxcheck, and return it. */
static job_t *job_ok(const tbm_conf_t *c, const char *list, tbm_backend_t b, uint32_t job,
                     const tbm_envplan_opts_t *opts)
{
    job_t *j = job_plan(c, list, b, job, opts);

    ck_assert_uint_eq(job_check(j), 0);
    return j;
}

/* Plan a job (checked by mlxcheck) and compare its backend file with `want`. */
static void file_is(const tbm_conf_t *c, const char *list, tbm_backend_t b, uint32_t job, const char *want)
{
    job_t *j = job_ok(c, list, b, job, NULL);

    ck_assert_str_eq(j->plan[0].files[0].data, want);
    ck_assert_uint_eq(j->plan[0].files[0].len, strlen(want));
    job_free(j);
}

/* The planned variables of one rank as "A=1 B=2". */
static const char *vars_text(const tbm_envplan_t *p)
{
    static char buf[4096];
    size_t i, len = 0;

    buf[0] = '\0';
    for (i = 0; i < p->n_vars; i++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s=%s", i ? " " : "", p->vars[i].name,
                                p->vars[i].value);
    return buf;
}

/* ---- the lab's studio-a mesh ---- */

#define STUDIO_MATRIX                                        \
    "[\n"                                                    \
    "  [null, \"rdma_en2\", \"rdma_en3\", \"rdma_en4\"],\n"  \
    "  [\"rdma_en2\", null, \"rdma_en3\", \"rdma_en4\"],\n"  \
    "  [\"rdma_en2\", \"rdma_en3\", null, \"rdma_en4\"],\n"  \
    "  [\"rdma_en2\", \"rdma_en3\", \"rdma_en4\", null]\n"   \
    "]\n"

START_TEST(studio_auto_is_jaccl_mesh)
{
    job_t *j = job_ok(conf_of(LAB_CONF), "mac01,mac02,mac03,mac04", TBM_BACKEND_AUTO, 7, NULL);

    ck_assert_int_eq(j->plan[0].distributed, 1);
    ck_assert_int_eq(j->plan[0].backend, TBM_BACKEND_JACCL);
    ck_assert_str_eq(j->plan[0].group, "studio-a");
    ck_assert_uint_eq(j->plan[0].size, 4);
    ck_assert_str_eq(vars_text(&j->plan[0]),
                     "TBMESH_BACKEND=jaccl TBMESH_RANK=0 TBMESH_SIZE=4 MLX_RANK=0 "
                     "MLX_IBV_DEVICES=/tmp/tbmesh-job-7/jaccl-devices.json MLX_JACCL_COORDINATOR=0.0.0.0:34115 "
                     "JACCL_RANK=0 JACCL_IBV_DEVICES=/tmp/tbmesh-job-7/jaccl-devices.json "
                     "JACCL_COORDINATOR=0.0.0.0:34115");
    ck_assert_str_eq(vars_text(&j->plan[2]),
                     "TBMESH_BACKEND=jaccl TBMESH_RANK=2 TBMESH_SIZE=4 MLX_RANK=2 "
                     "MLX_IBV_DEVICES=/tmp/tbmesh-job-7/jaccl-devices.json MLX_JACCL_COORDINATOR=169.254.2.1:34115 "
                     "JACCL_RANK=2 JACCL_IBV_DEVICES=/tmp/tbmesh-job-7/jaccl-devices.json "
                     "JACCL_COORDINATOR=169.254.2.1:34115");
    ck_assert_str_eq(tbm_envplan_get(&j->plan[3], "MLX_JACCL_COORDINATOR"), "169.254.3.1:34115");
    ck_assert_uint_eq(j->plan[1].n_files, 1);
    ck_assert_str_eq(j->plan[1].files[0].path, "/tmp/tbmesh-job-7/jaccl-devices.json");
    ck_assert_str_eq(j->plan[1].files[0].data, STUDIO_MATRIX);
    ck_assert_uint_eq(j->plan[1].files[0].len, strlen(STUDIO_MATRIX));
    ck_assert_str_eq(j->plan[2].note, "tbmesh: group studio-a, 4 Macs: backend jaccl (chosen by auto: an RDMA full "
                                      "mesh); rank 2");
    ck_assert_ptr_null(tbm_envplan_get(&j->plan[0], "MLX_HOSTFILE"));
    ck_assert_ptr_null(tbm_envplan_get(&j->plan[0], "MLX_JACCL_RING"));
    job_free(j);
}
END_TEST

START_TEST(studio_jaccl_ring)
{
    job_t *j = job_ok(conf_of(LAB_CONF), "mac01,mac02,mac03,mac04", TBM_BACKEND_JACCL_RING, 0, NULL);

    ck_assert_int_eq(j->plan[0].backend, TBM_BACKEND_JACCL_RING);
    ck_assert_str_eq(j->plan[0].files[0].data, "[\n"
                                               "  [null, \"rdma_en2\", null, \"rdma_en4\"],\n"
                                               "  [\"rdma_en2\", null, \"rdma_en3\", null],\n"
                                               "  [null, \"rdma_en3\", null, \"rdma_en4\"],\n"
                                               "  [\"rdma_en2\", null, \"rdma_en4\", null]\n"
                                               "]\n");
    ck_assert_str_eq(vars_text(&j->plan[1]),
                     "TBMESH_BACKEND=jaccl-ring TBMESH_RANK=1 TBMESH_SIZE=4 MLX_RANK=1 "
                     "MLX_IBV_DEVICES=/tmp/tbmesh-job-0/jaccl-devices.json MLX_JACCL_COORDINATOR=169.254.1.1:32323 "
                     "MLX_JACCL_RING=1 JACCL_RANK=1 JACCL_IBV_DEVICES=/tmp/tbmesh-job-0/jaccl-devices.json "
                     "JACCL_COORDINATOR=169.254.1.1:32323 JACCL_RING=1");
    /* rank 2 is no ring neighbour of rank 0 but the mesh cables them: it uses that cable */
    ck_assert_str_eq(tbm_envplan_get(&j->plan[2], "MLX_JACCL_COORDINATOR"), "169.254.2.1:32323");
    ck_assert_str_eq(j->plan[0].note, "tbmesh: group studio-a, 4 Macs: backend jaccl-ring (asked for); rank 0");
    job_free(j);
}
END_TEST

START_TEST(studio_ring)
{
    job_t *j = job_ok(conf_of(LAB_CONF), "mac01,mac02,mac03,mac04", TBM_BACKEND_RING, 0, NULL);

    ck_assert_int_eq(j->plan[0].backend, TBM_BACKEND_RING);
    ck_assert_str_eq(vars_text(&j->plan[3]), "TBMESH_BACKEND=ring TBMESH_RANK=3 TBMESH_SIZE=4 MLX_RANK=3 "
                                             "MLX_HOSTFILE=/tmp/tbmesh-job-0/ring-hosts.json");
    ck_assert_str_eq(j->plan[3].files[0].path, "/tmp/tbmesh-job-0/ring-hosts.json");
    ck_assert_str_eq(j->plan[3].files[0].data, "[\n"
                                               "  [\"169.254.3.1:32323\"],\n"
                                               "  [\"169.254.1.2:32324\"],\n"
                                               "  [\"169.254.4.2:32325\"],\n"
                                               "  [\"169.254.6.2:32326\"]\n"
                                               "]\n");
    ck_assert_ptr_null(tbm_envplan_get(&j->plan[0], "MLX_IBV_DEVICES"));
    ck_assert_ptr_null(tbm_envplan_get(&j->plan[0], "MLX_JACCL_COORDINATOR"));
    job_free(j);
}
END_TEST

START_TEST(studio_mpi)
{
    tbm_envplan_opts_t o = {NULL, NULL, "libmpi.dylib"};
    job_t *j = job_ok(conf_of(LAB_CONF), "mac01,mac02,mac03,mac04", TBM_BACKEND_MPI, 3, NULL);
    job_t *k;

    ck_assert_str_eq(vars_text(&j->plan[0]),
                     "TBMESH_BACKEND=mpi TBMESH_RANK=0 TBMESH_SIZE=4 OMPI_MCA_btl=self,tcp "
                     "OMPI_MCA_btl_tcp_if_include=en2,en3,en4 OMPI_MCA_oob_tcp_if_include=en2,en3,en4 "
                     "MLX_MPI_LIBNAME=libmpi.40.dylib");
    ck_assert_uint_eq(j->plan[0].n_files, 0);
    ck_assert_ptr_null(tbm_envplan_get(&j->plan[0], "MLX_RANK"));
    ck_assert_ptr_null(tbm_envplan_get(&j->plan[0], "DYLD_LIBRARY_PATH"));
    job_free(j);
    k = job_ok(conf_of(LAB_CONF), "mac02,mac03", TBM_BACKEND_MPI, 3, &o);
    ck_assert_str_eq(tbm_envplan_get(&k->plan[1], "OMPI_MCA_btl_tcp_if_include"), "en3");
    ck_assert_str_eq(tbm_envplan_get(&k->plan[1], "MLX_MPI_LIBNAME"), "libmpi.dylib");
    job_free(k);
}
END_TEST

START_TEST(studio_subsets)
{
    const tbm_conf_t *c = conf_of(LAB_CONF);
    job_t *j = job_ok(c, "mac02,mac04", TBM_BACKEND_AUTO, 1, NULL);

    ck_assert_int_eq(j->plan[0].backend, TBM_BACKEND_JACCL);
    ck_assert_str_eq(j->plan[0].files[0].data, "[\n  [null, \"rdma_en4\"],\n  [\"rdma_en3\", null]\n]\n");
    ck_assert_str_eq(tbm_envplan_get(&j->plan[1], "MLX_JACCL_COORDINATOR"), "169.254.5.1:32579");
    job_free(j);
    file_is(c, "mac01,mac03,mac04", TBM_BACKEND_JACCL, 1,
            "[\n"
            "  [null, \"rdma_en3\", \"rdma_en4\"],\n"
            "  [\"rdma_en2\", null, \"rdma_en4\"],\n"
            "  [\"rdma_en2\", \"rdma_en4\", null]\n"
            "]\n");
    file_is(c, "mac01,mac03,mac04", TBM_BACKEND_RING, 1,
            "[\n"
            "  [\"169.254.3.1:32579\"],\n"
            "  [\"169.254.2.2:32580\"],\n"
            "  [\"169.254.6.2:32581\"]\n"
            "]\n");
    j = job_ok(c, "mac03,mac01", TBM_BACKEND_JACCL_RING, 2, NULL);   /* two ranks: left == right */
    ck_assert_str_eq(j->plan[0].files[0].data, "[\n  [null, \"rdma_en2\"],\n  [\"rdma_en3\", null]\n]\n");
    ck_assert_str_eq(tbm_envplan_get(&j->plan[1], "MLX_JACCL_COORDINATOR"), "169.254.2.2:32835");
    ck_assert_int_eq(j->plan[1].rank, 1);
    job_free(j);
    file_is(c, "mac04,mac02", TBM_BACKEND_RING, 0,
            "[\n  [\"169.254.5.2:32323\"],\n  [\"169.254.5.1:32324\"]\n]\n");
}
END_TEST

START_TEST(one_mac)
{
    const tbm_conf_t *c = conf_of(LAB_CONF);
    tbm_backend_t b;

    for (b = TBM_BACKEND_JACCL; b <= TBM_BACKEND_AUTO; b++) {
        job_t *j = job_ok(c, b == TBM_BACKEND_RING ? "mac06" : "mac02", b, 9, NULL);
        ck_assert_int_eq(j->plan[0].distributed, 0);
        ck_assert_int_eq(j->plan[0].backend, b);
        ck_assert_int_eq(j->plan[0].rank, 0);
        ck_assert_uint_eq(j->plan[0].size, 1);
        ck_assert_uint_eq(j->plan[0].n_files, 0);
        ck_assert_int_eq(j->plan[0].order[0], 0);
        ck_assert_str_eq(vars_text(&j->plan[0]), "TBMESH_BACKEND=none TBMESH_RANK=0 TBMESH_SIZE=1");
        job_free(j);
    }
    {
        job_t *j = job_ok(c, "mac07", TBM_BACKEND_AUTO, 9, NULL);
        ck_assert_str_eq(j->plan[0].note, "tbmesh: one Mac (mac07 in group mini-b): MLX runs alone; no distributed "
                                          "variables are set");
        job_free(j);
    }
}
END_TEST

/* ---- the lab's mini-b ring ---- */

START_TEST(minib_auto_is_ring)
{
    job_t *j = job_ok(conf_of(LAB_CONF), "mac05,mac06,mac07,mac08", TBM_BACKEND_AUTO, 0, NULL);

    ck_assert_int_eq(j->plan[0].backend, TBM_BACKEND_RING);
    ck_assert_str_eq(j->plan[0].files[0].data, "[\n"
                                               "  [\"169.254.10.2:32323\"],\n"
                                               "  [\"169.254.7.2:32324\"],\n"
                                               "  [\"169.254.8.2:32325\"],\n"
                                               "  [\"169.254.9.2:32326\"]\n"
                                               "]\n");
    ck_assert_str_eq(j->plan[1].note, "tbmesh: group mini-b, 4 Macs: backend ring (chosen by auto: no usable "
                                      "JACCL); rank 1");
    job_free(j);
}
END_TEST

START_TEST(minib_mpi)
{
    job_t *j = job_ok(conf_of(LAB_CONF), "mac05,mac06,mac07,mac08", TBM_BACKEND_MPI, 0, NULL);

    ck_assert_str_eq(tbm_envplan_get(&j->plan[0], "OMPI_MCA_btl_tcp_if_include"), "en2,en3");
    ck_assert_str_eq(tbm_envplan_get(&j->plan[2], "OMPI_MCA_oob_tcp_if_include"), "en2,en3");
    job_free(j);
}
END_TEST

START_TEST(minib_refusals)
{
    const tbm_conf_t *c = conf_of(LAB_CONF);

    ck_assert_str_eq(plan_error(c, "mac05,mac06,mac07", "mac05", TBM_BACKEND_RING, 0, NULL),
                     "backend ring on 3 Macs of group mini-b: group mini-b is a ring of 4 Macs; a job on it must use "
                     "all 4 (part of a ring is not a ring): ask for tbmesh:4");
    ck_assert_str_eq(plan_error(c, "mac05,mac06,mac07", "mac06", TBM_BACKEND_AUTO, 0, NULL),
                     "no backend fits 3 Macs of group mini-b: group mini-b is a ring of 4 Macs; a job on it must use "
                     "all 4 (part of a ring is not a ring): ask for tbmesh:4");
    ck_assert_str_eq(plan_error(c, "mac05,mac06,mac07,mac08", "mac05", TBM_BACKEND_JACCL, 0, NULL),
                     "backend jaccl on 4 Macs of group mini-b: group mini-b is a ring, not a full mesh: JACCL mesh "
                     "needs every pair of Macs cabled; use --mlx-backend=jaccl-ring or ring");
    ck_assert_str_eq(plan_error(c, "mac05,mac06,mac07,mac08", "mac05", TBM_BACKEND_JACCL_RING, 0, NULL),
                     "backend jaccl-ring on 4 Macs of group mini-b: group mini-b has no working RDMA (JACCL needs "
                     "Thunderbolt 5 and RDMA devices on both ends of every cable): use --mlx-backend=ring or mpi");
}
END_TEST

/* ---- made-up groups ---- */

/* A Thunderbolt 4 mesh of four whose w[1-3] still form an RDMA mesh (RdmaSubset=); the site's JacclOnSubsets=
 * given in front. */
#define WIDE_CONF                                                                                  \
    "Group=wide Nodes=w[1-4] Topology=mesh Link=tb4 Rdma=no Backends=ring,mpi RdmaSubset=w[1-3]\n"  \
    "Cable=w1:en2,w2:en2 Addr=10.7.1.1/30,10.7.1.2/30 Rdma=rdma_en2,rdma_en2 Speed=80\n"            \
    "Cable=w1:en3,w3:en2 Addr=10.7.2.1/30,10.7.2.2/30 Rdma=rdma_en3,rdma_en2 Speed=80\n"            \
    "Cable=w1:en4,w4:en2 Addr=10.7.3.1/30,10.7.3.2/30 Speed=80\n"                                   \
    "Cable=w2:en3,w3:en3 Addr=10.7.4.1/30,10.7.4.2/30 Rdma=rdma_en3,rdma_en3 Speed=80\n"            \
    "Cable=w2:en4,w4:en3 Addr=10.7.5.1/30,10.7.5.2/30 Speed=80\n"                                   \
    "Cable=w3:en4,w4:en4 Addr=10.7.6.1/30,10.7.6.2/30 Speed=40\n"

/* jaccl and jaccl-ring asked for on Macs of a group's RdmaSubset=, when the site allows it: planned over the
 * subset's cables (checked by mlxcheck); a Mac outside the subset, or the site not allowing it, refused; auto
 * keeps to the group's own rules (ring). */
START_TEST(jaccl_on_an_rdma_subset)
{
    const tbm_conf_t *c = conf_of("MlxVersion=0.31.2\nJacclOnSubsets=yes\n" WIDE_CONF);
    job_t *j = job_ok(c, "w1,w2,w3", TBM_BACKEND_JACCL, 3, NULL);

    ck_assert_int_eq(j->plan[1].backend, TBM_BACKEND_JACCL);
    ck_assert_str_eq(j->plan[1].note, "tbmesh: group wide, 3 Macs of its RDMA subset: backend jaccl (asked for); "
                                      "rank 1");
    ck_assert_str_eq(j->plan[0].files[0].data, "[\n"
                                               "  [null, \"rdma_en2\", \"rdma_en3\"],\n"
                                               "  [\"rdma_en2\", null, \"rdma_en3\"],\n"
                                               "  [\"rdma_en2\", \"rdma_en3\", null]\n"
                                               "]\n");
    job_free(j);
    j = job_ok(c, "w2,w3", TBM_BACKEND_JACCL_RING, 3, NULL);
    ck_assert_int_eq(j->plan[0].backend, TBM_BACKEND_JACCL_RING);
    job_free(j);
    j = job_ok(c, "w1,w2,w3", TBM_BACKEND_AUTO, 3, NULL);
    ck_assert_int_eq(j->plan[0].backend, TBM_BACKEND_RING);
    job_free(j);
    ck_assert_str_eq(plan_error(c, "w1,w2,w4", "w1", TBM_BACKEND_JACCL, 0, NULL),
                     "backend jaccl on 3 Macs of group wide: group wide has no working RDMA (JACCL needs Thunderbolt 5 "
                     "and RDMA devices on both ends of every cable): use --mlx-backend=ring or mpi");
    c = conf_of("MlxVersion=0.31.2\n" WIDE_CONF);
    ck_assert_str_eq(plan_error(c, "w1,w2,w3", "w1", TBM_BACKEND_JACCL, 0, NULL),
                     "backend jaccl on 3 Macs of group wide: group wide has no working RDMA (JACCL needs Thunderbolt 5 "
                     "and RDMA devices on both ends of every cable): use --mlx-backend=ring or mpi");
}
END_TEST

START_TEST(example_conf_ring_and_mesh)
{
    const char *path_env = tbm_fixtures_dir();
    char path[4096], buf[8192];
    FILE *f;
    size_t len;
    job_t *j;

    snprintf(path, sizeof(path), "%s/../../etc/tbmesh.conf.example", path_env);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    len = fread(buf, 1, sizeof(buf) - 1, f);
    buf[len] = '\0';
    fclose(f);
    file_is(conf_of(buf), "mac05,mac06,mac07,mac08", TBM_BACKEND_AUTO, 0,
            "[\n"
            "  [\"10.20.0.14:32323\"],\n"
            "  [\"10.20.0.2:32324\"],\n"
            "  [\"10.20.0.6:32325\"],\n"
            "  [\"10.20.0.10:32326\"]\n"
            "]\n");
    j = job_ok(conf_of(buf), "mac01,mac02,mac03,mac04", TBM_BACKEND_AUTO, 0, NULL);
    ck_assert_str_eq(tbm_envplan_get(&j->plan[3], "MLX_JACCL_COORDINATOR"), "10.10.0.9:32323");
    job_free(j);
}
END_TEST

START_TEST(mesh_of_eight_and_nine)
{
    job_t *j = job_ok(conf_of(mesh_conf(8)), "m01,m02,m03,m04,m05,m06,m07,m08", TBM_BACKEND_AUTO, 0, NULL);

    ck_assert_int_eq(j->plan[0].backend, TBM_BACKEND_JACCL);
    ck_assert_str_eq(tbm_envplan_get(&j->plan[7], "MLX_JACCL_COORDINATOR"), "10.0.7.1:32323");
    job_free(j);
    ck_assert_str_eq(plan_error(conf_of(mesh_conf(9)), "m01,m02,m03,m04,m05,m06,m07,m08,m09", "m01",
                                TBM_BACKEND_JACCL, 0, NULL),
                     "backend jaccl on 9 Macs of group big: a JACCL mesh has at most 8 Macs; you asked for 9: use "
                     "--mlx-backend=jaccl-ring or ring");
    j = job_ok(conf_of(mesh_conf(9)), "m01,m02,m03,m04,m05,m06,m07,m08,m09", TBM_BACKEND_AUTO, 0, NULL);
    ck_assert_int_eq(j->plan[4].backend, TBM_BACKEND_JACCL_RING);
    ck_assert_str_eq(j->plan[4].note, "tbmesh: group big, 9 Macs: backend jaccl-ring (chosen by auto: RDMA, but "
                                      "not a full mesh of at most 8); rank 4");
    ck_assert_str_eq(tbm_envplan_get(&j->plan[4], "MLX_JACCL_COORDINATOR"), "10.0.4.1:32323");
    job_free(j);
}
END_TEST

START_TEST(multi_rail)
{
    job_t *j;

    file_is(conf_of(duo_conf(2)), "d1,d2", TBM_BACKEND_JACCL, 0, "[\n  [null, \"rdma_en2\"],\n  [\"rdma_en2\", null]\n]\n");
    file_is(conf_of(duo_conf(2)), "d1,d2", TBM_BACKEND_JACCL_RING, 0,
            "[\n"
            "  [null, [\"rdma_en2\", \"rdma_en3\"]],\n"
            "  [[\"rdma_en2\", \"rdma_en3\"], null]\n"
            "]\n");
    file_is(conf_of(duo_conf(2)), "d1,d2", TBM_BACKEND_RING, 0,
            "[\n"
            "  [\"10.1.0.1:32323\", \"10.1.1.1:32324\"],\n"
            "  [\"10.1.0.2:32325\", \"10.1.1.2:32326\"]\n"
            "]\n");
    j = job_ok(conf_of(duo_conf(2)), "d1,d2", TBM_BACKEND_MPI, 0, NULL);
    ck_assert_str_eq(tbm_envplan_get(&j->plan[1], "OMPI_MCA_btl_tcp_if_include"), "en2,en3");
    job_free(j);
    file_is(conf_of(duo_conf(5)), "d1,d2", TBM_BACKEND_JACCL_RING, 0,   /* at most 4 */
            "[\n"
            "  [null, [\"rdma_en2\", \"rdma_en3\", \"rdma_en4\", \"rdma_en5\"]],\n"
            "  [[\"rdma_en2\", \"rdma_en3\", \"rdma_en4\", \"rdma_en5\"], null]\n"
            "]\n");
}
END_TEST

START_TEST(multi_rail_unequal)
{
    const char *text = "Group=trio Nodes=t[1-3] Topology=mesh Link=tb5 Rdma=yes\n"
                       "Cable=t1:en2,t2:en2 Addr=10.3.0.1/30,10.3.0.2/30 Rdma=rdma_en2,rdma_en2\n"
                       "Cable=t1:en3,t2:en3 Addr=10.3.1.1/30,10.3.1.2/30 Rdma=rdma_en3,rdma_en3\n"
                       "Cable=t2:en4,t3:en2 Addr=10.3.2.1/30,10.3.2.2/30 Rdma=rdma_en4,rdma_en2\n"
                       "Cable=t3:en3,t1:en4 Addr=10.3.3.1/30,10.3.3.2/30 Rdma=rdma_en3,rdma_en4\n";
    job_t *j = job_ok(conf_of(text), "t1,t2,t3", TBM_BACKEND_JACCL_RING, 0, NULL);

    ck_assert_str_eq(j->plan[0].files[0].data, "[\n"
                                               "  [null, \"rdma_en2\", \"rdma_en4\"],\n"
                                               "  [\"rdma_en2\", null, \"rdma_en4\"],\n"
                                               "  [\"rdma_en3\", \"rdma_en2\", null]\n"
                                               "]\n");
    job_free(j);
    file_is(conf_of(text), "t1,t2,t3", TBM_BACKEND_RING, 0,
            "[\n"
            "  [\"10.3.3.2:32323\"],\n"
            "  [\"10.3.0.2:32324\"],\n"
            "  [\"10.3.2.2:32325\"]\n"
            "]\n");
    j = job_ok(conf_of(text), "t1,t2,t3", TBM_BACKEND_MPI, 0, NULL);
    ck_assert_str_eq(tbm_envplan_get(&j->plan[0], "OMPI_MCA_btl_tcp_if_include"), "en2,en3,en4");
    job_free(j);
}
END_TEST

START_TEST(chain_is_mpi)
{
    const char *text = "Group=chain Nodes=c[1-3] Topology=other Link=tb4 Rdma=no\n"
                       "Cable=c1:en2,c2:en2 Addr=10.8.1.1/30,10.8.1.2/30\n"
                       "Cable=c2:en3,c3:en2 Addr=10.8.2.1/30,10.8.2.2/30\n";
    job_t *j = job_ok(conf_of(text), "c1,c2,c3", TBM_BACKEND_AUTO, 0, NULL);

    ck_assert_int_eq(j->plan[0].backend, TBM_BACKEND_MPI);
    ck_assert_str_eq(j->plan[1].note, "tbmesh: group chain, 3 Macs: backend mpi (chosen by auto: cabled as neither a "
                                      "mesh nor a ring); rank 1");
    ck_assert_str_eq(tbm_envplan_get(&j->plan[0], "OMPI_MCA_btl_tcp_if_include"), "en2");
    ck_assert_str_eq(tbm_envplan_get(&j->plan[1], "OMPI_MCA_btl_tcp_if_include"), "en2,en3");
    job_free(j);
    ck_assert_str_eq(plan_error(conf_of(text), "c1,c2,c3", "c1", TBM_BACKEND_RING, 0, NULL),
                     "backend ring on 3 Macs of group chain: group chain is cabled as neither a full mesh nor a ring "
                     "(other): ring needs one; use --mlx-backend=mpi");
}
END_TEST

/* Every rank lists its Thunderbolt interfaces for Open MPI in the natural order of their names, whatever the
 * order of the cables in tbmesh.conf (Open MPI hangs when the nodes of a ring list them differently). */
START_TEST(mpi_interfaces_in_name_order)
{
    const char *text = "Group=r Nodes=r[1-4] Topology=ring Link=tb4 Rdma=no\n"
                       "Cable=r1:en10,r2:en2 Addr=10.9.1.1/30,10.9.1.2/30\n"
                       "Cable=r2:en3,r3:en2 Addr=10.9.2.1/30,10.9.2.2/30\n"
                       "Cable=r3:en3,r4:en3 Addr=10.9.3.1/30,10.9.3.2/30\n"
                       "Cable=r4:en2,r1:en9 Addr=10.9.4.1/30,10.9.4.2/30\n";
    job_t *j = job_ok(conf_of(text), "r1,r2,r3,r4", TBM_BACKEND_MPI, 0, NULL);

    ck_assert_str_eq(tbm_envplan_get(&j->plan[0], "OMPI_MCA_btl_tcp_if_include"), "en9,en10");
    ck_assert_str_eq(tbm_envplan_get(&j->plan[1], "OMPI_MCA_btl_tcp_if_include"), "en2,en3");
    ck_assert_str_eq(tbm_envplan_get(&j->plan[3], "OMPI_MCA_btl_tcp_if_include"), "en2,en3");
    ck_assert_str_eq(tbm_envplan_get(&j->plan[3], "OMPI_MCA_oob_tcp_if_include"), "en2,en3");
    job_free(j);
}
END_TEST

START_TEST(ring_out_of_name_order)
{
    job_t *j = job_ok(conf_of(SHUFFLED_RING), "q1,q2,q3,q4", TBM_BACKEND_RING, 0, NULL);

    /* cables: q1-q3-q2-q4-q1; from q1 towards q3 (before q4 in the job's order) */
    ck_assert_int_eq(j->plan[0].rank, 0);
    ck_assert_int_eq(j->plan[1].rank, 2);
    ck_assert_int_eq(j->plan[2].rank, 1);
    ck_assert_int_eq(j->plan[3].rank, 3);
    ck_assert_int_eq(j->plan[0].order[1], 2);
    ck_assert_int_eq(j->plan[0].order[2], 1);
    ck_assert_str_eq(tbm_envplan_get(&j->plan[1], "MLX_RANK"), "2");
    ck_assert_str_eq(tbm_envplan_get(&j->plan[1], "TBMESH_RANK"), "2");
    ck_assert_str_eq(j->plan[0].files[0].data, "[\n"
                                               "  [\"10.6.4.2:32323\"],\n"
                                               "  [\"10.6.1.2:32324\"],\n"
                                               "  [\"10.6.2.2:32325\"],\n"
                                               "  [\"10.6.3.2:32326\"]\n"
                                               "]\n");
    job_free(j);
    j = job_ok(conf_of(SHUFFLED_RING), "q1,q3,q2,q4", TBM_BACKEND_RING, 0, NULL);   /* already a cycle */
    ck_assert_int_eq(j->plan[1].rank, 1);
    job_free(j);
    j = job_ok(conf_of(SHUFFLED_RING), "q1,q2,q3,q4", TBM_BACKEND_MPI, 0, NULL);    /* mpi keeps Slurm's order */
    ck_assert_int_eq(j->plan[1].rank, 1);
    job_free(j);
}
END_TEST

START_TEST(rdma_ring_coordinator)
{
    job_t *j;

    ck_assert_str_eq(plan_error(conf_of(RDMA_RING5), "r1,r2,r3,r4,r5", "r2", TBM_BACKEND_AUTO, 0, NULL),
                     "rank 2 (r3) has no cable to rank 0 (r1), and r1 has no IPv4 AgentAddr, so it cannot reach "
                     "JACCL's coordinator: set NodeName=r1 AgentAddr=<its IPv4 management address> in tbmesh.conf, "
                     "or use --mlx-backend=ring");
    j = job_ok(conf_of(RDMA_RING5 "NodeName=r1 AgentAddr=10.77.0.31\nNodeName=r2 AgentAddr=10.77.0.32\n"
                               "NodeName=r3 AgentAddr=10.77.0.33\nNodeName=r4 AgentAddr=10.77.0.34\n"
                               "NodeName=r5 AgentAddr=10.77.0.35\n"),
               "r1,r2,r3,r4,r5", TBM_BACKEND_AUTO, 0, NULL);
    ck_assert_int_eq(j->plan[0].backend, TBM_BACKEND_JACCL_RING);
    ck_assert_str_eq(tbm_envplan_get(&j->plan[1], "MLX_JACCL_COORDINATOR"), "10.5.1.1:32323");
    ck_assert_str_eq(tbm_envplan_get(&j->plan[2], "MLX_JACCL_COORDINATOR"), "10.77.0.31:32323");
    ck_assert_str_eq(tbm_envplan_get(&j->plan[4], "MLX_JACCL_COORDINATOR"), "10.5.5.2:32323");
    ck_assert_str_eq(j->plan[0].files[0].data, "[\n"
                                               "  [null, \"rdma_en2\", null, null, \"rdma_en3\"],\n"
                                               "  [\"rdma_en3\", null, \"rdma_en2\", null, null],\n"
                                               "  [null, \"rdma_en3\", null, \"rdma_en2\", null],\n"
                                               "  [null, null, \"rdma_en3\", null, \"rdma_en2\"],\n"
                                               "  [\"rdma_en2\", null, null, \"rdma_en3\", null]\n"
                                               "]\n");
    job_free(j);
}
END_TEST

/* ---- MLX versions ---- */

START_TEST(mlx_versions)
{
    const tbm_conf_t *c = conf_of(LAB_CONF);
    tbm_envplan_opts_t o = {"/var/tmp/job", "0.30.3", NULL};
    job_t *j = job_ok(c, "mac01,mac02", TBM_BACKEND_JACCL, 0, &o);

    ck_assert_str_eq(vars_text(&j->plan[1]), "TBMESH_BACKEND=jaccl TBMESH_RANK=1 TBMESH_SIZE=2 MLX_RANK=1 "
                                             "MLX_JACCL_DEVICES=/var/tmp/job/jaccl-devices.json "
                                             "MLX_JACCL_COORDINATOR=169.254.1.1:32323");
    job_free(j);
    o.mlx_version = "0.31.1";
    j = job_ok(c, "mac01,mac02", TBM_BACKEND_JACCL_RING, 0, &o);
    ck_assert_str_eq(vars_text(&j->plan[1]), "TBMESH_BACKEND=jaccl-ring TBMESH_RANK=1 TBMESH_SIZE=2 MLX_RANK=1 "
                                             "MLX_IBV_DEVICES=/var/tmp/job/jaccl-devices.json "
                                             "MLX_JACCL_COORDINATOR=169.254.1.1:32323 MLX_JACCL_RING=1");
    job_free(j);
    o.mlx_version = "";   /* unknown: the newest rules */
    j = job_ok(c, "mac01,mac02", TBM_BACKEND_JACCL, 0, &o);
    ck_assert_str_eq(tbm_envplan_get(&j->plan[0], "JACCL_COORDINATOR"), "0.0.0.0:32323");
    ck_assert_str_eq(tbm_envplan_get(&j->plan[0], "MLX_IBV_DEVICES"), "/var/tmp/job/jaccl-devices.json");
    job_free(j);
    o.mlx_version = "0.32.1";
    j = job_ok(c, "mac01,mac02", TBM_BACKEND_JACCL, 0, &o);
    ck_assert_str_eq(tbm_envplan_get(&j->plan[0], "JACCL_RANK"), "0");
    job_free(j);
    o.mlx_version = "0.30.0";
    ck_assert_str_eq(plan_error(c, "mac01,mac02", "mac01", TBM_BACKEND_JACCL, 0, &o),
                     "MLX 0.30.0 has no JACCL (it first shipped in 0.30.1): upgrade MLX and set MlxVersion= in "
                     "tbmesh.conf, or use --mlx-backend=ring");
    j = job_ok(c, "mac01,mac02", TBM_BACKEND_AUTO, 0, &o);
    ck_assert_int_eq(j->plan[0].backend, TBM_BACKEND_RING);
    job_free(j);
    o.mlx_version = "0.30.5";
    ck_assert_str_eq(plan_error(c, "mac01,mac02", "mac01", TBM_BACKEND_JACCL_RING, 0, &o),
                     "MLX 0.30.5 has no JACCL ring mode (it came in 0.30.6): upgrade MLX and set MlxVersion= in "
                     "tbmesh.conf, or use --mlx-backend=ring");
    j = job_ok(conf_of(mesh_conf(9)), "m01,m02,m03,m04,m05,m06,m07,m08,m09", TBM_BACKEND_AUTO, 0, &o);
    ck_assert_int_eq(j->plan[0].backend, TBM_BACKEND_RING);
    job_free(j);
}
END_TEST

/* ---- ports ---- */

START_TEST(ports)
{
    const tbm_conf_t *c;
    job_t *j;

    ck_assert_int_eq(tbm_envplan_port_offset(0), 0);
    ck_assert_int_eq(tbm_envplan_port_offset(1), 256);
    ck_assert_int_eq(tbm_envplan_port_offset(31), 7936);
    ck_assert_int_eq(tbm_envplan_port_offset(32), 0);
    ck_assert_int_eq(tbm_envplan_port_offset(4294967295u), 7936);
    c = conf_of(LAB_CONF);
    file_is(c, "mac05,mac06,mac07,mac08", TBM_BACKEND_RING, 33,
            "[\n"
            "  [\"169.254.10.2:32579\"],\n"
            "  [\"169.254.7.2:32580\"],\n"
            "  [\"169.254.8.2:32581\"],\n"
            "  [\"169.254.9.2:32582\"]\n"
            "]\n");
    c = conf_of("CoordinatorPort=57344\nRingBasePort=57344\n" LAB_CONF);
    j = job_ok(c, "mac01,mac02", TBM_BACKEND_JACCL, 31, NULL);
    ck_assert_str_eq(tbm_envplan_get(&j->plan[0], "MLX_JACCL_COORDINATOR"), "0.0.0.0:65280");
    job_free(j);
    c = conf_of(LAB_CONF "CoordinatorPort=65000\nRingBasePort=60000\n");
    ck_assert_str_eq(plan_error(c, "mac01,mac02", "mac01", TBM_BACKEND_JACCL, 31, NULL),
                     "CoordinatorPort=65000 plus this job's port offset 7936 needs ports up to 72936, above 65535: "
                     "set CoordinatorPort in tbmesh.conf to 57344 or less");
    ck_assert_str_eq(plan_error(c, "mac05,mac06,mac07,mac08", "mac05", TBM_BACKEND_RING, 30, NULL),
                     "RingBasePort=60000 plus this job's port offset 7680 needs ports up to 67683, above 65535: "
                     "set RingBasePort in tbmesh.conf to 57344 or less");
    j = job_ok(c, "mac05,mac06,mac07,mac08", TBM_BACKEND_MPI, 31, NULL);   /* mpi takes no port */
    job_free(j);
}
END_TEST

/* ---- refusals ---- */

START_TEST(refusals_of_the_request)
{
    const tbm_conf_t *c = conf_of(LAB_CONF);
    const char *nodes[65];
    tbm_envplan_opts_t o = {"tmp/job", NULL, NULL};
    tbm_envplan_t p;
    tbm_err_t err = {{0}};
    char names[65][8];
    int i;

    ck_assert_int_eq(tbm_envplan_make(NULL, nodes, 1, "mac01", TBM_BACKEND_AUTO, 0, NULL, &p, &err), -1);
    ck_assert_str_eq(err.msg, "no tbmesh.conf was given: read it (tbm_conf_parse) before planning a job");
    ck_assert_int_eq(tbm_envplan_make(c, NULL, 0, "mac01", TBM_BACKEND_AUTO, 0, NULL, &p, &err), -1);
    ck_assert_str_eq(err.msg, "the job has no nodes: give the job's node list in Slurm's order");
    for (i = 0; i < 65; i++) {
        snprintf(names[i], sizeof(names[i]), "m%02d", i);
        nodes[i] = names[i];
    }
    ck_assert_int_eq(tbm_envplan_make(c, nodes, 65, "m00", TBM_BACKEND_AUTO, 0, NULL, &p, &err), -1);
    ck_assert_str_eq(err.msg, "the job has 65 Macs, more than the 64 tbmesh plans for: ask for 64 or fewer");
    ck_assert_int_eq(tbm_envplan_make(c, nodes, 1, NULL, TBM_BACKEND_AUTO, 0, NULL, &p, &err), -1);
    ck_assert_str_eq(err.msg, "this node's name is missing: give the name Slurm knows the node by");
    ck_assert_str_eq(plan_error(c, "mac01", "mac01", (tbm_backend_t)9, 0, NULL),
                     "unknown backend: use auto, jaccl, jaccl-ring, ring or mpi");
    ck_assert_str_eq(plan_error(c, "mac01", "mac01", TBM_BACKEND_AUTO, 0, &o),
                     "the job folder 'tmp/job' is not an absolute path of letters, digits, '.', '_', '-' and '/' (at "
                     "most 200 bytes, no '..'): give a plain folder such as /tmp/tbmesh-job-<id>");
    o.job_dir = "/tmp/../etc";
    ck_assert_str_eq(plan_error(c, "mac01", "mac01", TBM_BACKEND_AUTO, 0, &o),
                     "the job folder '/tmp/../etc' is not an absolute path of letters, digits, '.', '_', '-' and '/' "
                     "(at most 200 bytes, no '..'): give a plain folder such as /tmp/tbmesh-job-<id>");
    o.job_dir = "/tmp/a b";
    ck_assert_str_eq(plan_error(c, "mac01", "mac01", TBM_BACKEND_AUTO, 0, &o),
                     "the job folder '/tmp/a b' is not an absolute path of letters, digits, '.', '_', '-' and '/' "
                     "(at most 200 bytes, no '..'): give a plain folder such as /tmp/tbmesh-job-<id>");
    o.job_dir = NULL;
    o.mpi_libname = "/usr/lib/libmpi.dylib";
    ck_assert_str_eq(plan_error(c, "mac01", "mac01", TBM_BACKEND_AUTO, 0, &o),
                     "the MPI library name '/usr/lib/libmpi.dylib' is not a plain file name: give one such as "
                     "libmpi.40.dylib");
    ck_assert_str_eq(plan_error(c, "mac01,mac[02]", "mac01", TBM_BACKEND_AUTO, 0, NULL),
                     "node name 'mac[02]' is not a valid host name: pass the job's node names as Slurm lists them");
    ck_assert_str_eq(plan_error(c, "mac01,mac02,mac01", "mac01", TBM_BACKEND_AUTO, 0, NULL),
                     "node mac01 is listed twice in the job's node list: list each node once");
    ck_assert_str_eq(plan_error(c, "mac01,mac02,mac03", "mac04", TBM_BACKEND_AUTO, 0, NULL),
                     "this node mac04 is not in the job's node list (mac[01-03]): plan on one of the job's own nodes");
    ck_assert_str_eq(plan_error(c, "mac01,mac09", "mac01", TBM_BACKEND_AUTO, 0, NULL),
                     "node mac09 is not in tbmesh.conf: add it to a group (tbmesh inventory writes them), or run the "
                     "job on the Macs of one tbmesh group");
    ck_assert_str_eq(plan_error(c, "mac01,mac02,mac05", "mac01", TBM_BACKEND_AUTO, 0, NULL),
                     "the job's nodes are in two groups: mac01 is in studio-a, mac05 is in mini-b: a job runs within "
                     "one group; submit with --gres=tbmesh:N so that it is placed in one");
    ck_assert_str_eq(plan_error(c, "mac05", "mac05", TBM_BACKEND_AUTO, 0, &o),
                     "the MPI library name '/usr/lib/libmpi.dylib' is not a plain file name: give one such as "
                     "libmpi.40.dylib");
}
END_TEST

/* A parsed configuration changed by hand: what tbmesh.conf's parser would refuse, built in memory. */
START_TEST(refusals_of_the_cabling)
{
    tbm_conf_t *c = conf_of(LAB_CONF);

    c->cables[1].end[1].rdma[0] = '\0';   /* mac01:en3 <-> mac03:en2 */
    ck_assert_str_eq(plan_error(c, "mac01,mac02,mac03", "mac02", TBM_BACKEND_JACCL, 0, NULL),
                     "the cable mac01:en3 <-> mac03:en2 gives no valid RDMA device for mac03's end (\"\"): JACCL "
                     "needs one on both ends; add Rdma=rdma_<if>,rdma_<if> to its Cable= line (tbmesh inventory "
                     "writes it), or use --mlx-backend=ring");
    c = conf_of(LAB_CONF);
    snprintf(c->cables[3].end[0].ipv4, sizeof(c->cables[3].end[0].ipv4), "10.0.0");
    ck_assert_str_eq(plan_error(c, "mac01,mac02,mac03,mac04", "mac01", TBM_BACKEND_RING, 0, NULL),
                     "the cable mac02:en3 <-> mac03:en3 gives no valid IPv4 address for mac02's end (\"10.0.0\"): "
                     "ring needs one on both ends; add Addr=<a>/30,<b>/30 to its Cable= line (macnode netplan plans "
                     "them), or use --mlx-backend=mpi");
    ck_assert_str_eq(plan_error(c, "mac01,mac02,mac03,mac04", "mac01", TBM_BACKEND_JACCL, 0, NULL),
                     "the cable mac02:en3 <-> mac03:en3 gives no valid IPv4 address for mac02's end (\"10.0.0\"): "
                     "jaccl needs one on both ends; add Addr=<a>/30,<b>/30 to its Cable= line (macnode netplan plans "
                     "them), or use --mlx-backend=mpi");
    /* the address of a cable the ring does not use is not needed... */
    c = conf_of(LAB_CONF);
    c->cables[1].end[0].ipv4[0] = '\0';   /* mac01:en3 <-> mac03:en2, not a ring neighbour pair */
    job_free(job_ok(c, "mac01,mac02,mac03,mac04", TBM_BACKEND_RING, 0, NULL));
    job_free(job_ok(c, "mac01,mac02,mac03,mac04", TBM_BACKEND_MPI, 0, NULL));
    /* ...but JACCL's coordinator uses it to reach rank 2 */
    ck_assert_str_eq(plan_error(c, "mac01,mac02,mac03,mac04", "mac01", TBM_BACKEND_JACCL_RING, 0, NULL),
                     "the cable mac01:en3 <-> mac03:en2 gives no valid IPv4 address for mac01's end (\"\"): "
                     "jaccl-ring needs one on both ends; add Addr=<a>/30,<b>/30 to its Cable= line (macnode netplan "
                     "plans them), or use --mlx-backend=mpi");
    c = conf_of(LAB_CONF);
    c->cables[4].end[1].node = c->cables[4].end[0].node;   /* mac02 <-> mac04 gone */
    ck_assert_str_eq(plan_error(c, "mac01,mac02,mac04", "mac04", TBM_BACKEND_JACCL, 0, NULL),
                     "no cable joins mac02 and mac04 in tbmesh.conf, and a JACCL mesh needs every pair cabled: fix "
                     "the group's Cable= lines (tbmesh inventory writes them), or use --mlx-backend=jaccl-ring");
    ck_assert_str_eq(plan_error(c, "mac02,mac04", "mac04", TBM_BACKEND_RING, 0, NULL),
                     "no cable joins mac02 and mac04 in tbmesh.conf: fix the group's Cable= lines (tbmesh inventory "
                     "writes them)");
    ck_assert_str_eq(plan_error(c, "mac02,mac04", "mac04", TBM_BACKEND_MPI, 0, NULL),
                     "node mac04 has no cable to the job's other nodes in tbmesh.conf, so Open MPI has no Thunderbolt "
                     "interface to use: fix the group's Cable= lines (tbmesh inventory writes them)");
    job_free(job_ok(c, "mac01,mac02,mac03,mac04", TBM_BACKEND_RING, 0, NULL));   /* mac04, mac02 not adjacent */
    ck_assert_str_eq(plan_error(c, "mac01,mac03,mac02,mac04", "mac04", TBM_BACKEND_RING, 0, NULL),
                     "the cables of group studio-a in tbmesh.conf do not make one ring through the job's Macs: mac01 "
                     "is cabled to 3 or more of them, not 2: fix the group's Cable= lines (tbmesh inventory writes "
                     "them)");
}
END_TEST

START_TEST(refusals_of_a_broken_conf)
{
    tbm_conf_t *c = conf_of(LAB_CONF);

    c->nodes[1].group = 7;
    ck_assert_str_eq(plan_error(c, "mac01,mac02", "mac01", TBM_BACKEND_AUTO, 0, NULL),
                     "node mac02 has no group in tbmesh.conf: add it to a group's Nodes= (tbmesh inventory writes "
                     "them)");
    c->nodes[1].group = -1;
    ck_assert_str_eq(plan_error(c, "mac02", "mac02", TBM_BACKEND_AUTO, 0, NULL),
                     "node mac02 has no group in tbmesh.conf: add it to a group's Nodes= (tbmesh inventory writes "
                     "them)");
    c = conf_of(LAB_CONF);
    c->cables[0].end[1].node = 99;   /* a cable naming no node is not a cable */
    ck_assert_str_eq(plan_error(c, "mac01,mac02", "mac01", TBM_BACKEND_JACCL, 0, NULL),
                     "no cable joins mac01 and mac02 in tbmesh.conf, and a JACCL mesh needs every pair cabled: fix "
                     "the group's Cable= lines (tbmesh inventory writes them), or use --mlx-backend=jaccl-ring");
}
END_TEST

START_TEST(refusals_of_a_broken_ring)
{
    const char *six = "Group=hex Nodes=h[1-6] Topology=ring Link=tb4 Rdma=no\n"
                      "Cable=h1:en2,h2:en3 Addr=10.7.1.1/30,10.7.1.2/30\n"
                      "Cable=h2:en2,h3:en3 Addr=10.7.2.1/30,10.7.2.2/30\n"
                      "Cable=h3:en2,h4:en3 Addr=10.7.3.1/30,10.7.3.2/30\n"
                      "Cable=h4:en2,h5:en3 Addr=10.7.4.1/30,10.7.4.2/30\n"
                      "Cable=h5:en2,h6:en3 Addr=10.7.5.1/30,10.7.5.2/30\n"
                      "Cable=h6:en2,h1:en3 Addr=10.7.6.1/30,10.7.6.2/30\n";
    tbm_conf_t *c = conf_of(SHUFFLED_RING);

    c->cables[2].end[1].node = c->cables[2].end[0].node;   /* q2-q4 gone */
    ck_assert_str_eq(plan_error(c, "q1,q2,q3,q4", "q1", TBM_BACKEND_RING, 0, NULL),
                     "the cables of group twist in tbmesh.conf do not make one ring through the job's Macs: q2 is "
                     "cabled to 1 of them, not 2: fix the group's Cable= lines (tbmesh inventory writes them)");
    c = conf_of(six);   /* made into two triangles: h1-h2-h3 and h4-h5-h6 */
    c->cables[2].end[1].node = 0;   /* h3-h4 becomes h3-h1 */
    c->cables[5].end[1].node = 3;   /* h6-h1 becomes h6-h4 */
    ck_assert_str_eq(plan_error(c, "h1,h2,h3,h4,h5,h6", "h1", TBM_BACKEND_RING, 0, NULL),
                     "the cables of group hex in tbmesh.conf do not make one ring through the job's Macs: going round "
                     "from h1 comes back after 3 of the 6 Macs: fix the group's Cable= lines (tbmesh inventory writes "
                     "them)");
}
END_TEST

/* Many random requests on the lab: each is refused with a message, or planned and passes mlxcheck. */
START_TEST(random_requests)
{
    static const char *const pool[] = {"mac01", "mac02", "mac03", "mac04", "mac05", "mac06", "mac07", "mac08",
                                       "lnx01", "mac01"};
    const tbm_conf_t *c = conf_of(LAB_CONF);
    unsigned seed = 12345, planned = 0, refused = 0;
    int iter;

    for (iter = 0; iter < 3000; iter++) {
        char list[256] = "";
        size_t n, i, len = 0;
        tbm_backend_t b;
        tbm_err_t err = {{0}};
        const char *nodes[8];
        tbm_envplan_t p;
        seed = seed * 1103515245u + 12345u;
        n = 1 + (seed >> 16) % 5;
        b = (tbm_backend_t)((seed >> 8) % 5);
        for (i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? "," : "", pool[(seed >> 16) % 10]);
        }
        names_of(list, nodes);
        if (tbm_envplan_make(c, nodes, n, nodes[n - 1], b, seed, NULL, &p, &err) < 0) {
            ck_assert_msg(strstr(err.msg, ": ") != NULL, "%s", err.msg);
            refused++;
            continue;
        }
        tbm_envplan_free(&p);
        job_free(job_ok(c, list, b, seed, NULL));
        planned++;
    }
    ck_assert_uint_gt(planned, 100);
    ck_assert_uint_gt(refused, 100);
}
END_TEST

START_TEST(plans_are_deterministic)
{
    const tbm_conf_t *c = conf_of(LAB_CONF);
    job_t *a = job_plan(c, "mac01,mac02,mac03,mac04", TBM_BACKEND_JACCL, 5, NULL);
    job_t *b = job_plan(c, "mac01,mac02,mac03,mac04", TBM_BACKEND_JACCL, 37, NULL);
    size_t r;

    for (r = 0; r < 4; r++) {
        ck_assert_str_eq(a->plan[r].files[0].data, b->plan[0].files[0].data);
        ck_assert_str_eq(vars_text(&a->plan[r]), vars_text(&b->plan[r]));
    }
    job_free(a);
    job_free(b);
    tbm_envplan_free(NULL);
}
END_TEST

static Suite *envplan_suite(void)
{
    Suite *s = suite_create("envplan");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, studio_auto_is_jaccl_mesh);
    tcase_add_test(tc, studio_jaccl_ring);
    tcase_add_test(tc, studio_ring);
    tcase_add_test(tc, studio_mpi);
    tcase_add_test(tc, studio_subsets);
    tcase_add_test(tc, one_mac);
    tcase_add_test(tc, minib_auto_is_ring);
    tcase_add_test(tc, minib_mpi);
    tcase_add_test(tc, minib_refusals);
    tcase_add_test(tc, jaccl_on_an_rdma_subset);
    tcase_add_test(tc, example_conf_ring_and_mesh);
    tcase_add_test(tc, mesh_of_eight_and_nine);
    tcase_add_test(tc, multi_rail);
    tcase_add_test(tc, multi_rail_unequal);
    tcase_add_test(tc, chain_is_mpi);
    tcase_add_test(tc, mpi_interfaces_in_name_order);
    tcase_add_test(tc, ring_out_of_name_order);
    tcase_add_test(tc, rdma_ring_coordinator);
    tcase_add_test(tc, mlx_versions);
    tcase_add_test(tc, ports);
    tcase_add_test(tc, refusals_of_the_request);
    tcase_add_test(tc, refusals_of_the_cabling);
    tcase_add_test(tc, refusals_of_a_broken_conf);
    tcase_add_test(tc, refusals_of_a_broken_ring);
    tcase_add_test(tc, random_requests);
    tcase_add_test(tc, plans_are_deterministic);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(envplan_suite)
