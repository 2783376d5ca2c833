/* test_mlxcheck.c: unit tests of the independent MLX environment checker (tests/mlxcheck): every rule it
 * enforces, for one rank and across the ranks of a job, is seen to fire on a made-up environment. */
#include "tbm_check.h"
#include <stdio.h>
#include <string.h>

#include "mlxcheck.h"

/* One rank: "K=V" lines, one file, its own addresses ("a/len,b/len"; NULL: unknown). */
typedef struct spec {
    const char *env;
    const char *path;
    const char *data;
    const char *addrs;
} spec_t;

typedef struct built {
    char envbuf[2048], addrbuf[512];
    const char *env[40], *addrs[16];
    mlxc_file_t file;
    mlxc_rank_t r;
} built_t;

static size_t split(char *buf, const char *sep, const char **out, size_t max)
{
    char *save = NULL, *tok;
    size_t n = 0;

    for (tok = strtok_r(buf, sep, &save); tok && n < max; tok = strtok_r(NULL, sep, &save))
        out[n++] = tok;
    return n;
}

static void build(const spec_t *s, built_t *b)
{
    memset(b, 0, sizeof(*b));
    snprintf(b->envbuf, sizeof(b->envbuf), "%s", s->env);
    b->r.env = b->env;
    b->r.n_env = split(b->envbuf, "\n", b->env, 40);
    if (s->path) {
        b->file.path = s->path;
        b->file.data = s->data;
        b->file.len = strlen(s->data);
        b->r.files = &b->file;
        b->r.n_files = 1;
    }
    if (s->addrs) {
        snprintf(b->addrbuf, sizeof(b->addrbuf), "%s", s->addrs);
        b->r.addrs = b->addrs;
        b->r.n_addrs = split(b->addrbuf, ",", b->addrs, 16);
    }
}

static const char *codes_of(const tbm_findings_t *fs, size_t problems)
{
    static char buf[2048];
    size_t i, len = 0;

    buf[0] = '\0';
    for (i = 0; i < fs->n; i++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? " " : "", fs->items[i].code);
    ck_assert_uint_eq(problems, fs->n);
    return buf;
}

/* The codes found on one rank, space-separated ("" when clean). */
static const char *rank_codes(const char *env, const char *path, const char *data, const char *addrs)
{
    spec_t s = {env, path, data, addrs};
    static built_t b;
    tbm_findings_t fs;
    const char *codes;

    build(&s, &b);
    tbm_findings_init(&fs);
    codes = codes_of(&fs, mlxc_check_rank(&b.r, &fs));
    tbm_findings_free(&fs);
    return codes;
}

/* The codes found on a job. */
static const char *job_codes(const spec_t *specs, size_t n)
{
    static built_t b[4];
    mlxc_rank_t r[4];
    tbm_findings_t fs;
    const char *codes;
    size_t i;

    for (i = 0; i < n; i++) {
        build(&specs[i], &b[i]);
        r[i] = b[i].r;
    }
    tbm_findings_init(&fs);
    codes = codes_of(&fs, mlxc_check_job(r, n, &fs));
    tbm_findings_free(&fs);
    return codes;
}

/* The `what` of the first finding on one rank. */
static const char *first_what(const char *env, const char *path, const char *data, const char *addrs)
{
    spec_t s = {env, path, data, addrs};
    static built_t b;
    static char what[TBM_FINDING_TEXT_MAX];
    tbm_findings_t fs;

    build(&s, &b);
    tbm_findings_init(&fs);
    mlxc_check_rank(&b.r, &fs);
    snprintf(what, sizeof(what), "%s", fs.n ? fs.items[0].what : "");
    tbm_findings_free(&fs);
    return what;
}

#define J0 "TBMESH_BACKEND=jaccl\nTBMESH_RANK=0\nTBMESH_SIZE=2\nMLX_RANK=0\nMLX_IBV_DEVICES=/j/d.json\n"
#define J0C J0 "MLX_JACCL_COORDINATOR=0.0.0.0:5000\n"
#define M2 "[[null, \"rdma_en2\"], [\"rdma_en2\", null]]"
#define R0 "TBMESH_BACKEND=ring\nTBMESH_RANK=0\nTBMESH_SIZE=2\nMLX_RANK=0\nMLX_HOSTFILE=/j/h.json\n"
#define H2 "[[\"10.0.0.1:5000\"], [\"10.0.0.2:5001\"]]"
#define MPI1 "TBMESH_BACKEND=mpi\nTBMESH_RANK=1\nTBMESH_SIZE=2\nOMPI_MCA_btl=self,tcp\n" \
             "OMPI_MCA_btl_tcp_if_include=en2,en3\nOMPI_MCA_oob_tcp_if_include=en2,en3\n"
#define LIB "MLX_MPI_LIBNAME=libmpi.40.dylib\n"

START_TEST(one_backend_only)
{
    ck_assert_str_eq(rank_codes(J0C, "/j/d.json", M2, NULL), "");
    ck_assert_str_eq(rank_codes(J0C "MLX_HOSTFILE=/j/h.json\n", "/j/d.json", M2, NULL), "ring-wins");
    ck_assert_str_eq(first_what(J0C "MLX_HOSTFILE=/j/h.json\n", "/j/d.json", M2, NULL),
                     "MLX_HOSTFILE is set beside JACCL's variables: under backend=\"any\" ring is tried first and wins");
    ck_assert_str_eq(rank_codes(J0C LIB, "/j/d.json", M2, NULL), "mixed-backends");
    ck_assert_str_eq(rank_codes(R0 LIB, "/j/h.json", H2, NULL), "mixed-backends");
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=ring\nTBMESH_RANK=0\nTBMESH_SIZE=2\nMLX_RANK=0\n"
                                "MLX_IBV_DEVICES=/j/d.json\nMLX_JACCL_COORDINATOR=0.0.0.0:5000\n", "/j/d.json", M2,
                                NULL), "backend-mismatch");
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=nccl\nTBMESH_RANK=0\nTBMESH_SIZE=2\nMLX_RANK=0\n"
                                "MLX_IBV_DEVICES=/j/d.json\nMLX_JACCL_COORDINATOR=0.0.0.0:5000\n", "/j/d.json", M2,
                                NULL), "backend-unknown");
    ck_assert_str_eq(rank_codes("TBMESH_RANK=0\nTBMESH_SIZE=1\n", NULL, NULL, NULL), "variable-missing");
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=none\nTBMESH_RANK=0\nTBMESH_SIZE=1\n", NULL, NULL, NULL), "");
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=none\nTBMESH_RANK=0\nTBMESH_SIZE=1\nMLX_RANK=0\n", NULL, NULL, NULL),
                     "variable-extra");
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=none\nTBMESH_RANK=0\nTBMESH_SIZE=2\n", NULL, NULL, NULL),
                     "size-bad");
}
END_TEST

START_TEST(ranks_and_aliases)
{
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=jaccl\nTBMESH_RANK=0\nTBMESH_SIZE=x\nMLX_RANK=0\n"
                                "MLX_IBV_DEVICES=/j/d.json\nMLX_JACCL_COORDINATOR=0.0.0.0:5000\n", "/j/d.json", M2,
                                NULL), "size-bad");
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=jaccl\nTBMESH_RANK=2\nTBMESH_SIZE=2\nMLX_RANK=2\n"
                                "MLX_IBV_DEVICES=/j/d.json\nMLX_JACCL_COORDINATOR=0.0.0.0:5000\n", "/j/d.json", M2,
                                NULL), "rank-bad rank-mismatch");
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=jaccl\nTBMESH_RANK=1\nTBMESH_SIZE=2\nMLX_RANK=0\n"
                                "MLX_IBV_DEVICES=/j/d.json\nMLX_JACCL_COORDINATOR=10.0.0.1:5000\n", "/j/d.json", M2,
                                NULL), "rank-mismatch");
    ck_assert_str_eq(rank_codes(J0C "JACCL_RANK=1\n", "/j/d.json", M2, NULL), "alias-mismatch");
    ck_assert_str_eq(first_what(J0C "JACCL_RANK=1\n", "/j/d.json", M2, NULL), "JACCL_RANK=1 but MLX_RANK=0");
    ck_assert_str_eq(rank_codes(J0C "JACCL_IBV_DEVICES=/j/e.json\n", "/j/d.json", M2, NULL), "alias-mismatch");
    ck_assert_str_eq(rank_codes(J0C "JACCL_COORDINATOR=0.0.0.0:5001\n", "/j/d.json", M2, NULL), "alias-mismatch");
    ck_assert_str_eq(rank_codes(J0C "JACCL_RING=1\n", "/j/d.json", M2, NULL), "backend-mismatch alias-mismatch");
    ck_assert_str_eq(rank_codes(J0C "MLX_JACCL_DEVICES=/j/e.json\n", "/j/d.json", M2, NULL), "alias-mismatch");
    ck_assert_str_eq(rank_codes(J0C "JACCL_RANK=0\nJACCL_IBV_DEVICES=/j/d.json\nJACCL_COORDINATOR=0.0.0.0:5000\n",
                                "/j/d.json", M2, NULL), "");
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=jaccl\nTBMESH_RANK=0\nTBMESH_SIZE=2\nMLX_RANK=0\n"
                                "MLX_JACCL_DEVICES=/j/d.json\nMLX_JACCL_COORDINATOR=0.0.0.0:5000\n", "/j/d.json", M2,
                                NULL), "");
}
END_TEST

START_TEST(device_matrix)
{
    ck_assert_str_eq(rank_codes(J0C, "/j/other.json", M2, NULL), "file-missing");
    ck_assert_str_eq(rank_codes(J0C, "/j/d.json", "[[null, \"rdma_en2\"]", NULL), "json-bad");
    ck_assert_str_eq(rank_codes(J0C, "/j/d.json", "{}", NULL), "json-bad");
    ck_assert_str_eq(rank_codes(J0C, "/j/d.json", "[[null, \"rdma_en2\", null], [\"rdma_en2\", null]]", NULL),
                     "matrix-not-square");
    ck_assert_str_eq(rank_codes(J0C, "/j/d.json", "[[null, \"a\"], [\"a\", null], [null, null]]", NULL),
                     "matrix-not-square");
    ck_assert_str_eq(rank_codes(J0C, "/j/d.json", "[[\"rdma_en3\", \"rdma_en2\"], [\"rdma_en2\", null]]", NULL),
                     "matrix-diagonal");
    ck_assert_str_eq(rank_codes(J0C, "/j/d.json", "[[null, 5], [\"rdma_en2\", null]]", NULL),
                     "matrix-cell matrix-asymmetric mesh-incomplete");
    ck_assert_str_eq(rank_codes(J0C, "/j/d.json", "[[null, \"RDMA\"], [\"rdma_en2\", null]]", NULL),
                     "matrix-cell matrix-asymmetric mesh-incomplete");
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=jaccl\nTBMESH_RANK=0\nTBMESH_SIZE=3\nMLX_RANK=0\n"
                                "MLX_IBV_DEVICES=/j/d.json\nMLX_JACCL_COORDINATOR=0.0.0.0:5000\n", "/j/d.json",
                                "[[null, \"rdma_en2\", \"rdma_en3\"], [\"rdma_en2\", null, \"rdma_en3\"], "
                                "[null, \"rdma_en3\", null]]", NULL),
                     "matrix-asymmetric mesh-incomplete");
    ck_assert_str_eq(first_what(J0C, "/j/d.json", "[[null, [\"rdma_en2\", \"rdma_en3\"]], [[\"rdma_en2\", "
                                "\"rdma_en3\"], null]]", NULL),
                     "cell [0][1] holds 2 devices in a mesh");
}
END_TEST

/* A full matrix of n ranks (every off-diagonal cell "rdma_en2"). */
static const char *full_matrix(int n)
{
    static char buf[4096];
    size_t len = 0;
    int i, j;

    len += (size_t)snprintf(buf + len, sizeof(buf) - len, "[");
    for (i = 0; i < n; i++) {
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s[", i ? ", " : "");
        for (j = 0; j < n; j++)
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", j ? ", " : "", i == j ? "null" : "\"rdma_en2\"");
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "]");
    }
    snprintf(buf + len, sizeof(buf) - len, "]");
    return buf;
}

#define JR4 "TBMESH_BACKEND=jaccl-ring\nTBMESH_RANK=0\nTBMESH_SIZE=4\nMLX_RANK=0\nMLX_IBV_DEVICES=/j/d.json\n" \
            "MLX_JACCL_COORDINATOR=0.0.0.0:5000\nMLX_JACCL_RING=1\n"

START_TEST(mesh_and_ring_limits)
{
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=jaccl\nTBMESH_RANK=0\nTBMESH_SIZE=8\nMLX_RANK=0\n"
                                "MLX_IBV_DEVICES=/j/d.json\nMLX_JACCL_COORDINATOR=0.0.0.0:5000\n", "/j/d.json",
                                full_matrix(8), NULL), "");
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=jaccl\nTBMESH_RANK=0\nTBMESH_SIZE=9\nMLX_RANK=0\n"
                                "MLX_IBV_DEVICES=/j/d.json\nMLX_JACCL_COORDINATOR=0.0.0.0:5000\n", "/j/d.json",
                                full_matrix(9), NULL), "mesh-too-big");
    ck_assert_str_eq(rank_codes(JR4, "/j/d.json", "[[null, \"a\", null, \"b\"], [\"a\", null, \"c\", null], "
                                "[null, \"c\", null, \"d\"], [\"b\", null, \"d\", null]]", NULL), "");
    ck_assert_str_eq(rank_codes(JR4, "/j/d.json", "[[null, \"a\", null, [\"b\", \"e\"]], [\"a\", null, \"c\", null], "
                                "[null, \"c\", null, \"d\"], [[\"b\", \"e\"], null, \"d\", null]]", NULL),
                     "ring-invalid");
    ck_assert_str_eq(first_what(JR4, "/j/d.json", "[[null, \"a\", null, [\"b\", \"e\"]], [\"a\", null, \"c\", null], "
                                "[null, \"c\", null, \"d\"], [[\"b\", \"e\"], null, \"d\", null]]", NULL),
                     "rank 0 has 2 devices to the left and 1 to the right; rank 0 has 1");
    ck_assert_str_eq(rank_codes(JR4, "/j/d.json", "[[null, [\"a\",\"b\",\"c\",\"d\",\"e\"], null, "
                                "[\"a\",\"b\",\"c\",\"d\",\"e\"]], [[\"a\",\"b\",\"c\",\"d\",\"e\"], null, "
                                "[\"a\",\"b\",\"c\",\"d\",\"e\"], null], [null, [\"a\",\"b\",\"c\",\"d\",\"e\"], null, "
                                "[\"a\",\"b\",\"c\",\"d\",\"e\"]], [[\"a\",\"b\",\"c\",\"d\",\"e\"], null, "
                                "[\"a\",\"b\",\"c\",\"d\",\"e\"], null]]", NULL),
                     "ring-too-many");
}
END_TEST

START_TEST(coordinator)
{
    static const char *const bad[] = {"1.2.3:5", "1.2.3.4", "1.2.3.4:0", "1.2.3.4:70000", "::1:5", "256.1.1.1:5",
                                      "1.2.3.4:5x", "a.b.c.d:5", "1.2.3.4.5:5", "01234.1.1.1:5"};
    char env[512];
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(env, sizeof(env), J0 "MLX_JACCL_COORDINATOR=%s\n", bad[i]);
        ck_assert_msg(strcmp(rank_codes(env, "/j/d.json", M2, NULL), "coordinator-bad") == 0, "%s", bad[i]);
    }
    ck_assert_str_eq(rank_codes(J0, "/j/d.json", M2, NULL), "coordinator-bad");
    ck_assert_str_eq(rank_codes(J0 "MLX_JACCL_COORDINATOR=10.0.0.9:5000\n", "/j/d.json", M2, "10.0.0.1/30"),
                     "coordinator-not-local");
    ck_assert_str_eq(rank_codes(J0 "MLX_JACCL_COORDINATOR=10.0.0.1:5000\n", "/j/d.json", M2, "10.0.0.1/30"), "");
    ck_assert_str_eq(rank_codes(J0C, "/j/d.json", M2, "10.0.0.1/30"), "");
}
END_TEST

START_TEST(ring_hostfile)
{
    ck_assert_str_eq(rank_codes(R0, "/j/h.json", H2, "10.0.0.1/30"), "");
    ck_assert_str_eq(rank_codes(R0, "/j/h.json", "[[\"10.0.0.1:5000\"], [\"10.0.0.2:5001\"], [\"10.0.0.3:5002\"]]",
                                NULL), "hostfile-shape");
    ck_assert_str_eq(rank_codes(R0, "/j/h.json", "[[], [\"10.0.0.2:5001\"]]", NULL), "hostfile-shape");
    ck_assert_str_eq(rank_codes(R0, "/j/h.json", "[[\"10.0.0.1:5000\"], [\"10.0.0.2:5001\", \"10.0.0.6:5002\"]]",
                                NULL), "hostfile-count");
    ck_assert_str_eq(rank_codes(R0, "/j/h.json", "[[\"[::1]:5000\"], [\"10.0.0.2:5001\"]]", NULL),
                     "hostfile-address");
    ck_assert_str_eq(rank_codes(R0, "/j/h.json", "[[\"mac01:5000\"], [\"10.0.0.2:5001\"]]", NULL),
                     "hostfile-address");
    ck_assert_str_eq(rank_codes(R0, "/j/h.json", "[[\"10.0.0.1:65536\"], [\"10.0.0.2:5001\"]]", NULL),
                     "hostfile-address");
    ck_assert_str_eq(rank_codes(R0, "/j/h.json", "[[\"10.0.0.1:5000\"], [\"10.0.0.1:5000\"]]", NULL),
                     "hostfile-duplicate");
    ck_assert_str_eq(rank_codes(R0, "/j/h.json", H2, "10.0.0.5/30"), "hostfile-not-local");
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=ring\nTBMESH_RANK=0\nTBMESH_SIZE=2\nMLX_HOSTFILE=/j/h.json\n",
                                "/j/h.json", H2, NULL), "rank-mismatch");
}
END_TEST

START_TEST(mpi_selection)
{
    ck_assert_str_eq(rank_codes(MPI1 LIB, NULL, NULL, NULL), "");
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=mpi\nTBMESH_RANK=1\nTBMESH_SIZE=2\nOMPI_MCA_btl=self,tcp\n"
                                "OMPI_MCA_btl_tcp_if_include=en2,,en3\nOMPI_MCA_oob_tcp_if_include=en2,,en3\n" LIB,
                                NULL, NULL, NULL), "mpi-interfaces");
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=mpi\nTBMESH_RANK=1\nTBMESH_SIZE=2\nOMPI_MCA_btl=self,tcp\n"
                                "OMPI_MCA_btl_tcp_if_include=en2,en3\nOMPI_MCA_oob_tcp_if_include=en2\n" LIB,
                                NULL, NULL, NULL), "mpi-interfaces");
    ck_assert_str_eq(rank_codes("TBMESH_BACKEND=mpi\nTBMESH_RANK=1\nTBMESH_SIZE=2\nOMPI_MCA_btl=tcp\n"
                                "OMPI_MCA_btl_tcp_if_include=en2\nOMPI_MCA_oob_tcp_if_include=en2\n" LIB,
                                NULL, NULL, NULL), "mpi-btl");
    ck_assert_str_eq(rank_codes(MPI1 "MLX_MPI_LIBNAME=/opt/lib/libmpi.dylib\n", NULL, NULL, NULL), "mpi-libname");
    ck_assert_str_eq(rank_codes(MPI1, NULL, NULL, NULL), "mpi-libname");
    ck_assert_str_eq(rank_codes(MPI1 LIB "MLX_RANK=1\n", NULL, NULL, NULL), "variable-extra");
}
END_TEST

/* ---- across the ranks of a job ---- */

#define J1(coord) "TBMESH_BACKEND=jaccl\nTBMESH_RANK=1\nTBMESH_SIZE=2\nMLX_RANK=1\nMLX_IBV_DEVICES=/j/d.json\n" \
                  "MLX_JACCL_COORDINATOR=" coord "\n"
#define R1 "TBMESH_BACKEND=ring\nTBMESH_RANK=1\nTBMESH_SIZE=2\nMLX_RANK=1\nMLX_HOSTFILE=/j/h.json\n"

START_TEST(job_members)
{
    spec_t ok[2] = {{J0C, "/j/d.json", M2, "10.0.0.1/30"}, {J1("10.0.0.1:5000"), "/j/d.json", M2, "10.0.0.2/30"}};
    spec_t twice[2] = {{J0C, "/j/d.json", M2, NULL}, {J0C, "/j/d.json", M2, NULL}};
    spec_t differ[2] = {{J0C, "/j/d.json", M2, NULL}, {J1("10.0.0.1:5000"), "/j/d.json", M2 "\n", NULL}};
    spec_t mixed[2] = {{J0C, "/j/d.json", M2, NULL}, {MPI1 LIB, NULL, NULL, NULL}};
    spec_t alone[1] = {{J0C, "/j/d.json", M2, NULL}};

    ck_assert_str_eq(job_codes(ok, 2), "");
    ck_assert_str_eq(job_codes(twice, 2), "rank-duplicate rank-missing");
    ck_assert_str_eq(job_codes(differ, 2), "file-differs");
    ck_assert_str_eq(job_codes(mixed, 2), "backend-differs");
    ck_assert_str_eq(job_codes(alone, 1), "size-differs");
    ck_assert_str_eq(job_codes(alone, 0), "job-empty");
}
END_TEST

START_TEST(job_coordinator)
{
    spec_t port[2] = {{J0C, "/j/d.json", M2, NULL}, {J1("10.0.0.1:5001"), "/j/d.json", M2, NULL}};
    spec_t other[2] = {{J0C, "/j/d.json", M2, "10.0.0.1/30"}, {J1("10.0.0.9:5000"), "/j/d.json", M2, NULL}};
    spec_t unbound[2] = {{J0 "MLX_JACCL_COORDINATOR=10.0.0.1:5000\n", "/j/d.json", M2, "10.0.0.1/30,10.0.0.5/30"},
                         {J1("10.0.0.5:5000"), "/j/d.json", M2, "10.0.0.6/30"}};
    spec_t far[2] = {{J0C, "/j/d.json", M2, "10.0.0.1/30,10.0.0.5/30"},
                     {J1("10.0.0.5:5000"), "/j/d.json", M2, "10.0.0.2/30"}};

    ck_assert_str_eq(job_codes(port, 2), "coordinator-port-differs");
    ck_assert_str_eq(job_codes(other, 2), "coordinator-not-rank0");
    ck_assert_str_eq(job_codes(unbound, 2), "coordinator-not-bound");
    ck_assert_str_eq(job_codes(far, 2), "coordinator-unreachable");
}
END_TEST

/* One coordinator address for every rank (rank 0's end of its cable to rank 1) cannot be reached by a rank
 * that is not on that cable: Thunderbolt links are point-to-point /30s. */
START_TEST(job_coordinator_single_address)
{
#define M3 "[[null, \"rdma_en2\", \"rdma_en3\"], [\"rdma_en2\", null, \"rdma_en3\"], [\"rdma_en2\", \"rdma_en3\", null]]"
#define J3(r) "TBMESH_BACKEND=jaccl\nTBMESH_RANK=" #r "\nTBMESH_SIZE=3\nMLX_RANK=" #r "\nMLX_IBV_DEVICES=/j/d.json\n" \
              "MLX_JACCL_COORDINATOR=10.0.1.1:5000\n"
    spec_t s[3] = {{J3(0), "/j/d.json", M3, "10.0.1.1/30,10.0.2.1/30"},
                   {J3(1), "/j/d.json", M3, "10.0.1.2/30,10.0.3.1/30"},
                   {J3(2), "/j/d.json", M3, "10.0.2.2/30,10.0.3.2/30"}};

    ck_assert_str_eq(job_codes(s, 3), "coordinator-unreachable");
}
END_TEST

START_TEST(job_ring)
{
    spec_t ok[2] = {{R0, "/j/h.json", H2, "10.0.0.1/30"}, {R1, "/j/h.json", H2, "10.0.0.2/30"}};
    spec_t notown[2] = {{R0, "/j/h.json", "[[\"10.0.0.1:5000\"], [\"10.0.0.1:5001\"]]", "10.0.0.1/30"},
                        {R1, "/j/h.json", "[[\"10.0.0.1:5000\"], [\"10.0.0.1:5001\"]]", "10.0.0.2/30"}};
    spec_t far[2] = {{R0, "/j/h.json", "[[\"10.0.0.1:5000\"], [\"10.0.9.2:5001\"]]", "10.0.0.1/30"},
                     {R1, "/j/h.json", "[[\"10.0.0.1:5000\"], [\"10.0.9.2:5001\"]]", "10.0.0.2/30,10.0.9.2/30"}};
    spec_t noprefix[2] = {{R0, "/j/h.json", H2, "10.0.0.1"}, {R1, "/j/h.json", H2, "10.0.0.2"}};

    ck_assert_str_eq(job_codes(ok, 2), "");
    ck_assert_str_eq(job_codes(notown, 2), "hostfile-not-local hostfile-not-own");
    ck_assert_str_eq(job_codes(far, 2), "hostfile-unreachable");
    ck_assert_str_eq(job_codes(noprefix, 2), "");
}
END_TEST

/* Damaged files and variables never crash the checker; most are caught. */
START_TEST(damaged_inputs)
{
    static const char *const envs[] = {J0C, JR4, R0, MPI1 LIB};
    static const char *const datas[] = {M2, "[[null, \"a\", null, \"b\"], [\"a\", null, \"c\", null], "
                                            "[null, \"c\", null, \"d\"], [\"b\", null, \"d\", null]]", H2, ""};
    static const char *const paths[] = {"/j/d.json", "/j/d.json", "/j/h.json", NULL};
    static const char bytes[] = "[]{},:\"0123456789.null x\n=";
    unsigned seed = 777, caught = 0;
    int iter;

    for (iter = 0; iter < 4000; iter++) {
        char env[512], data[512];
        int which, k;
        seed = seed * 1103515245u + 12345u;
        which = (int)((seed >> 16) % 4);
        snprintf(env, sizeof(env), "%s", envs[which]);
        snprintf(data, sizeof(data), "%s", datas[which]);
        for (k = 0; k < 3; k++) {
            char *t = (seed >> 4) & 1 ? env : data;
            size_t len = strlen(t);
            seed = seed * 1103515245u + 12345u;
            if (len)
                t[(seed >> 16) % len] = bytes[(seed >> 8) % (sizeof(bytes) - 1)];
        }
        caught += strcmp(rank_codes(env, paths[which], data, "10.0.0.1/30"), "") != 0;
    }
    ck_assert_uint_gt(caught, 2000);
}
END_TEST

static Suite *mlxcheck_suite(void)
{
    Suite *s = suite_create("mlxcheck");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, one_backend_only);
    tcase_add_test(tc, ranks_and_aliases);
    tcase_add_test(tc, device_matrix);
    tcase_add_test(tc, mesh_and_ring_limits);
    tcase_add_test(tc, coordinator);
    tcase_add_test(tc, ring_hostfile);
    tcase_add_test(tc, mpi_selection);
    tcase_add_test(tc, job_members);
    tcase_add_test(tc, job_coordinator);
    tcase_add_test(tc, job_coordinator_single_address);
    tcase_add_test(tc, job_ring);
    tcase_add_test(tc, damaged_inputs);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(mlxcheck_suite)
