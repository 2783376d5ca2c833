/* test_mlxenv.c: unit tests of lib/mlxenv.c: the ring hostfile, the JACCL device matrix, the coordinator. */
#include "tbm_check.h"
#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "envplan.h"
#include "mlxenv.h"
#include "tbm_fixture.h"

typedef struct bad_case {
    const char *text;
    const char *msg;
} bad_case_t;

static int hostfile(const char *text, tbm_mlx_hostfile_t *hf, tbm_err_t *err)
{
    return tbm_mlx_hostfile_parse(text, strlen(text), "hosts.json", hf, err);
}

static int matrix(const char *text, tbm_mlx_devmatrix_t *m, tbm_err_t *err)
{
    return tbm_mlx_devmatrix_parse(text, strlen(text), "devices.json", m, err);
}

START_TEST(hostfile_good)
{
    static tbm_mlx_hostfile_t hf;
    tbm_err_t err = { { 0 } };
    const char *text = " [[\"10.0.1.1:32323\", \"10.0.2.1:32324\"],\n [\"10.0.1.2:32325\", \"10.0.3.2:32326\"],"
                       " [\"127.0.0.1:1\", \"255.255.255.255:65535\"]]\n";

    ck_assert_int_eq(hostfile(text, &hf, &err), 0);
    ck_assert_int_eq(hf.nranks, 3);
    ck_assert_int_eq(hf.naddrs, 2);
    ck_assert_str_eq(hf.addr[0][1].ip, "10.0.2.1");
    ck_assert_uint_eq(hf.addr[0][1].port, 32324);
    ck_assert_str_eq(hf.addr[2][0].ip, "127.0.0.1");
    ck_assert_uint_eq(hf.addr[2][0].port, 1);
    ck_assert_mem_eq(&hf.addr[2][0].ip_be, "\x7f\x00\x00\x01", 4);
    ck_assert_uint_eq(hf.addr[2][1].port, 65535);
}
END_TEST

static const bad_case_t bad_hostfiles[] = {
    { "", "hosts.json: empty JSON text; write a JSON list with one list of \"ip:port\" per rank" },
    { "[[\"10.0.0.1:1\"]", "hosts.json: invalid JSON at line 1 column 16: the text ends inside the document "
      "(truncated?); write a JSON list with one list of \"ip:port\" per rank" },
    { "[[\"10.0.0.1:1\"]] x", "hosts.json: invalid JSON at line 1 column 18: unexpected character; write a JSON "
      "list with one list of \"ip:port\" per rank" },
    { "{\"hosts\": []}", "hosts.json: the ring hostfile must be a JSON list indexed by rank, found an object" },
    { "[]", "hosts.json: the ring hostfile has 0 ranks: give from 1 to 64, one list of \"ip:port\" per rank" },
    { "[\"10.0.0.1:1\"]", "hosts.json: rank 0: expected a list of \"ip:port\" strings, found a string" },
    { "[[\"10.0.0.1:1\"], []]", "hosts.json: rank 1 lists no address: give at least one \"ip:port\" it listens "
      "on" },
    { "[[\"10.0.0.1:1\"], [\"10.0.0.2:1\", \"10.0.0.3:1\"]]", "hosts.json: rank 1 lists 2 addresses but rank 0 "
      "lists 1: every rank must list the same number" },
    { "[[\"1.1.1.1:1\",\"1.1.1.1:2\",\"1.1.1.1:3\",\"1.1.1.1:4\",\"1.1.1.1:5\",\"1.1.1.1:6\",\"1.1.1.1:7\","
      "\"1.1.1.1:8\",\"1.1.1.1:9\"]]", "hosts.json: rank 0 lists 9 addresses, at most 8 are supported" },
    { "[[32323]]", "hosts.json: rank 0, address 0: expected a string \"ip:port\", found an integer" },
    { "[[\"10.0.0.1\"]]", "hosts.json: rank 0, address 0: '10.0.0.1' has no port: write it as ipv4:port (e.g. "
      "10.0.0.1:32323)" },
    { "[[\"\"]]", "hosts.json: rank 0, address 0: the address is empty: write it as ipv4:port (e.g. "
      "10.0.0.1:32323)" },
    { "[[\"fe80::1:32323\"]]", "hosts.json: rank 0, address 0: 'fe80::1:32323' is an IPv6 address: MLX accepts "
      "only IPv4 (a.b.c.d:port)" },
    { "[[\"[::1]:32323\"]]", "hosts.json: rank 0, address 0: '[::1]:32323' is an IPv6 address: MLX accepts only "
      "IPv4 (a.b.c.d:port)" },
    { "[[\"mac01:32323\"]]", "hosts.json: rank 0, address 0: 'mac01' is not an IPv4 address: write a dotted quad "
      "such as 10.0.0.1" },
    { "[[\"10.0.0.256:1\"]]", "hosts.json: rank 0, address 0: '10.0.0.256' is not an IPv4 address: write a dotted "
      "quad such as 10.0.0.1" },
    { "[[\"10.0.0:1\"]]", "hosts.json: rank 0, address 0: '10.0.0' is not an IPv4 address: write a dotted quad "
      "such as 10.0.0.1" },
    { "[[\"10.0.0.1.5:1\"]]", "hosts.json: rank 0, address 0: '10.0.0.1.5' is not an IPv4 address: write a "
      "dotted quad such as 10.0.0.1" },
    { "[[\"10.0.0.1:0\"]]", "hosts.json: rank 0, address 0: port '0' of '10.0.0.1:0' is not a number from 1 to "
      "65535" },
    { "[[\"10.0.0.1:65536\"]]", "hosts.json: rank 0, address 0: port '65536' of '10.0.0.1:65536' is not a number "
      "from 1 to 65535" },
    { "[[\"10.0.0.1:99999999999999999999\"]]", "hosts.json: rank 0, address 0: port '99999999999999999999' of "
      "'10.0.0.1:99999999999999999999' is not a number from 1 to 65535" },
    { "[[\"10.0.0.1:\"]]", "hosts.json: rank 0, address 0: port '' of '10.0.0.1:' is not a number from 1 to "
      "65535" },
    { "[[\"10.0.0.1:12a\"]]", "hosts.json: rank 0, address 0: port '12a' of '10.0.0.1:12a' is not a number from "
      "1 to 65535" },
    { "[[\"10.0.0.1:5\"], [\"10.0.0.2:5\"], [\"10.0.0.1:5\"]]", "hosts.json: 10.0.0.1:5 is listed twice (rank 0 "
      "and rank 2): give every listener its own ip:port" },
};

START_TEST(hostfile_bad)
{
    static tbm_mlx_hostfile_t hf;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(hostfile(bad_hostfiles[_i].text, &hf, &err), -1);
    ck_assert_str_eq(err.msg, bad_hostfiles[_i].msg);
}
END_TEST

START_TEST(hostfile_limits)
{
    static tbm_mlx_hostfile_t hf;
    static char text[TBM_MLX_TEXT_MAX + 2];
    tbm_err_t err = { { 0 } };
    size_t len = 0;
    int r;

    len += (size_t)snprintf(text, sizeof(text), "[");
    for (r = 0; r < 65; r++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s[\"10.0.0.1:%d\"]", r ? "," : "", r + 1);
    snprintf(text + len, sizeof(text) - len, "]");
    ck_assert_int_eq(hostfile(text, &hf, &err), -1);
    ck_assert_str_eq(err.msg, "hosts.json: the ring hostfile has 65 ranks: give from 1 to 64, one list of "
                     "\"ip:port\" per rank");
    memset(text, ' ', sizeof(text));
    ck_assert_int_eq(tbm_mlx_hostfile_parse(text, sizeof(text), "hosts.json", &hf, &err), -1);
    ck_assert_str_eq(err.msg, "hosts.json: JSON text of 1048578 bytes exceeds the limit of 1048576 bytes; write a "
                     "JSON list with one list of \"ip:port\" per rank");
    ck_assert_int_eq(tbm_mlx_hostfile_parse("[[]]\0", 5, "hosts.json", &hf, &err), -1);
    ck_assert_str_eq(err.msg, "hosts.json: invalid JSON at line 1 column 5: a NUL byte; write a JSON list with "
                     "one list of \"ip:port\" per rank");
    ck_assert_int_eq(tbm_mlx_hostfile_parse(NULL, 0, "hosts.json", &hf, &err), -1);
    ck_assert_str_eq(err.msg, "hosts.json: empty JSON text; write a JSON list with one list of \"ip:port\" per "
                     "rank");
    /* deep nesting is refused by the tokenizer, not followed */
    memset(text, '[', 4000);
    ck_assert_int_eq(tbm_mlx_hostfile_parse(text, 4000, "hosts.json", &hf, &err), -1);
    ck_assert_str_eq(err.msg, "hosts.json: invalid JSON at line 1 column 17: nesting too deep; write a JSON list "
                     "with one list of \"ip:port\" per rank");
}
END_TEST

START_TEST(coordinator)
{
    tbm_mlx_addr_t a;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_mlx_coordinator_parse("10.0.1.1:32323", &a, &err), 0);
    ck_assert_str_eq(a.ip, "10.0.1.1");
    ck_assert_uint_eq(a.port, 32323);
    ck_assert_int_eq(tbm_mlx_coordinator_parse("0.0.0.0:5", &a, &err), 0);
    ck_assert_int_eq(tbm_mlx_coordinator_parse("studio1:32323", &a, &err), -1);
    ck_assert_str_eq(err.msg, "MLX_JACCL_COORDINATOR: 'studio1' is not an IPv4 address: write a dotted quad such "
                     "as 10.0.0.1");
    ck_assert_int_eq(tbm_mlx_coordinator_parse(NULL, &a, &err), -1);
    ck_assert_str_eq(err.msg, "MLX_JACCL_COORDINATOR: the address is empty: write it as ipv4:port (e.g. "
                     "10.0.0.1:32323)");
    ck_assert_int_eq(tbm_mlx_coordinator_parse("10.0.0.1", &a, &err), -1);
    ck_assert_str_eq(err.msg, "MLX_JACCL_COORDINATOR: '10.0.0.1' has no port: write it as ipv4:port (e.g. "
                     "10.0.0.1:32323)");
    ck_assert_int_eq(tbm_mlx_coordinator_parse("1111.0.0.1:5", &a, &err), -1);
    ck_assert_str_eq(err.msg, "MLX_JACCL_COORDINATOR: '1111.0.0.1' is not an IPv4 address: write a dotted quad "
                     "such as 10.0.0.1");
}
END_TEST

START_TEST(matrix_mesh)
{
    static tbm_mlx_devmatrix_t m;
    tbm_err_t err = { { 0 } };
    const char *text = "[[null, \"rdma_en2\", \"rdma_en3\"], [\"rdma_en2\", null, [\"rdma_en3\"]],"
                       " [\"rdma_en2\", [\"rdma_en3\"], null]]";

    ck_assert_int_eq(matrix(text, &m, &err), 0);
    ck_assert_int_eq(m.n, 3);
    ck_assert_int_eq(m.is_mesh, 1);
    ck_assert_int_eq(m.is_ring, 1);   /* three ranks in a mesh are also a ring */
    ck_assert_int_eq(m.ndev[0][0], 0);
    ck_assert_int_eq(m.ndev[1][2], 1);
    ck_assert_str_eq(m.dev[1][2][0], "rdma_en3");
    ck_assert_str_eq(m.dev[0][2][0], "rdma_en3");
}
END_TEST

START_TEST(matrix_ring)
{
    static tbm_mlx_devmatrix_t m;
    tbm_err_t err = { { 0 } };
    const char *text = "[[null, [\"rdma_en2\",\"rdma_en4\"], null, [\"rdma_en3\",\"rdma_en5\"]],"
                       " [[\"rdma_en2\",\"rdma_en4\"], null, [\"rdma_en3\",\"rdma_en5\"], null],"
                       " [null, [\"rdma_en2\",\"rdma_en4\"], null, [\"rdma_en3\",\"rdma_en5\"]],"
                       " [[\"rdma_en2\",\"rdma_en4\"], null, [\"rdma_en3\",\"rdma_en5\"], null]]";

    ck_assert_int_eq(matrix(text, &m, &err), 0);
    ck_assert_int_eq(m.is_mesh, 0);
    ck_assert_int_eq(m.is_ring, 1);
    ck_assert_int_eq(m.ndev[3][0], 2);
    ck_assert_str_eq(m.dev[3][0][1], "rdma_en4");
    ck_assert_int_eq(matrix("[[null]]", &m, &err), 0);
    ck_assert_int_eq(m.n, 1);
    ck_assert_int_eq(m.is_mesh, 1);
}
END_TEST

static const bad_case_t bad_matrices[] = {
    { "[[null, \"rdma_en2\"]", "devices.json: invalid JSON at line 1 column 20: the text ends inside the document "
      "(truncated?); write an N x N JSON list of lists, null on the diagonal, device names elsewhere" },
    { "nul", "devices.json: invalid JSON at line 1 column 4: the text ends inside the document (truncated?); write "
      "an N x N JSON list of lists, null on the diagonal, device names elsewhere" },
    { "\"rdma_en2\"", "devices.json: the device matrix must be a JSON list of rows, found a string" },
    { "[]", "devices.json: the device matrix has 0 rows: give from 1 to 16, one per rank" },
    { "[null, null]", "devices.json: row 0: expected a list of 2 cells, found null" },
    { "[[null, \"rdma_en2\"], [\"rdma_en2\"]]", "devices.json: row 1 has 1 cells but the matrix has 2 rows: the "
      "device matrix must be N x N" },
    { "[[\"rdma_en1\", \"rdma_en2\"], [\"rdma_en2\", null]]", "devices.json: cell [0][0] must be null: a rank has "
      "no device facing itself" },
    { "[[null, 5], [\"rdma_en2\", null]]", "devices.json: cell [0][1]: expected null, a device name or a list of "
      "device names, found an integer" },
    { "[[null, {}], [\"rdma_en2\", null]]", "devices.json: cell [0][1]: expected null, a device name or a list "
      "of device names, found an object" },
    { "[[null, \"\"], [\"rdma_en2\", null]]", "devices.json: cell [0][1] holds an empty name: name the RDMA "
      "device (e.g. \"rdma_en5\") or use null" },
    { "[[null, []], [\"rdma_en2\", null]]", "devices.json: cell [0][1] lists 0 devices: give from 1 to 4 (one "
      "per cable), or null" },
    { "[[null, [\"a\",\"b\",\"c\",\"d\",\"e\"]], [\"rdma_en2\", null]]", "devices.json: cell [0][1] lists 5 "
      "devices: give from 1 to 4 (one per cable), or null" },
    { "[[null, [\"rdma_en2\", true]], [\"rdma_en2\", null]]", "devices.json: cell [0][1]: expected device names, "
      "found a boolean in the list" },
    { "[[null, \"rdma_en123456789012345678901\"], [\"rdma_en2\", null]]", "devices.json: cell [0][1]: device "
      "name 'rdma_en123456789012345678901' is longer than 23 characters" },
    { "[[null, \"rdma_en2\"], [null, null]]", "devices.json: cell [0][1] lists 1 devices but [1][0] lists 0: "
      "every cable has a device at both ends, so both cells must name as many" },
    { "[[null, [\"rdma_en2\",\"rdma_en3\"]], [\"rdma_en2\", null]]", "devices.json: cell [0][1] lists 2 devices "
      "but [1][0] lists 1: every cable has a device at both ends, so both cells must name as many" },
    { "[[null, null], [null, null]]", "devices.json: the 2 ranks form neither a full mesh (every off-diagonal "
      "cell set, at most 8 ranks) nor a ring (each rank's left and right cells set, with as many devices): "
      "check the cabling and the matrix" },
    /* 4 ranks: 0-1, 1-2, 2-3 cabled, 3-0 missing: a line, not a ring */
    { "[[null,\"a\",null,null],[\"a\",null,\"b\",null],[null,\"b\",null,\"c\"],[null,null,\"c\",null]]",
      "devices.json: the 4 ranks form neither a full mesh (every off-diagonal cell set, at most 8 ranks) nor a "
      "ring (each rank's left and right cells set, with as many devices): check the cabling and the matrix" },
    /* a ring whose rank 1 has two cables on the left and one on the right */
    { "[[null,[\"a\",\"b\"],null,\"c\"],[[\"a\",\"b\"],null,\"d\",null],[null,\"d\",null,\"e\"],"
      "[\"c\",null,\"e\",null]]", "devices.json: the 4 ranks form neither a full mesh (every off-diagonal cell "
      "set, at most 8 ranks) nor a ring (each rank's left and right cells set, with as many devices): check the "
      "cabling and the matrix" },
};

START_TEST(matrix_bad)
{
    static tbm_mlx_devmatrix_t m;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(matrix(bad_matrices[_i].text, &m, &err), -1);
    ck_assert_str_eq(err.msg, bad_matrices[_i].msg);
}
END_TEST

/* A full 9 x 9 matrix is too big for a mesh but is still a valid ring; 17 rows are refused. */
START_TEST(matrix_sizes)
{
    static tbm_mlx_devmatrix_t m;
    static char text[8192];
    tbm_err_t err = { { 0 } };
    size_t len;
    int i, j, n;

    for (n = 9; n <= 17; n += 8) {
        len = (size_t)snprintf(text, sizeof(text), "[");
        for (i = 0; i < n; i++) {
            len += (size_t)snprintf(text + len, sizeof(text) - len, "%s[", i ? "," : "");
            for (j = 0; j < n; j++)
                len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s", j ? "," : "",
                                        i == j ? "null" : "\"rdma_en2\"");
            len += (size_t)snprintf(text + len, sizeof(text) - len, "]");
        }
        snprintf(text + len, sizeof(text) - len, "]");
        if (n == 9) {
            ck_assert_int_eq(matrix(text, &m, &err), 0);
            ck_assert_int_eq(m.is_mesh, 0);
            ck_assert_int_eq(m.is_ring, 1);
        } else {
            ck_assert_int_eq(matrix(text, &m, &err), -1);
            ck_assert_str_eq(err.msg, "devices.json: the device matrix has 17 rows: give from 1 to 16, one per "
                             "rank");
        }
    }
}
END_TEST

START_TEST(device_iface)
{
    char ifname[16];
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(tbm_mlx_device_iface("rdma_en5", ifname, sizeof(ifname), &err), 0);
    ck_assert_str_eq(ifname, "en5");
    ck_assert_int_eq(tbm_mlx_device_iface("mlx5_0", ifname, sizeof(ifname), &err), -1);
    ck_assert_str_eq(err.msg, "RDMA device 'mlx5_0' does not name a network interface: expected "
                     "rdma_<interface> (e.g. rdma_en5)");
    ck_assert_int_eq(tbm_mlx_device_iface("rdma_", ifname, sizeof(ifname), &err), -1);
    ck_assert_str_eq(err.msg, "RDMA device 'rdma_' does not name a network interface: expected "
                     "rdma_<interface> (e.g. rdma_en5)");
    ck_assert_int_eq(tbm_mlx_device_iface("rdma_en1234567890123456", ifname, sizeof(ifname), &err), -1);
    ck_assert_str_eq(err.msg, "RDMA device 'rdma_en1234567890123456': the interface name is longer than 15 "
                     "characters");
}
END_TEST

/* What the plug-in plans (lib/envplan.c) for the example tbmesh.conf, the kernels read back. */
static const tbm_envfile_t *planned_file(const tbm_conf_t *c, const char *const *nodes, tbm_backend_t b,
                                         int rank, tbm_envplan_t *p)
{
    tbm_err_t err = { { 0 } };

    ck_assert_msg(tbm_envplan_make(c, nodes, 4, nodes[rank], b, 0, NULL, p, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(p->n_files, 1);
    return &p->files[0];
}

START_TEST(plans_read_back)
{
    static const char *const studio[4] = { "mac01", "mac02", "mac03", "mac04" };
    static const char *const mini[4] = { "mac05", "mac06", "mac07", "mac08" };
    static tbm_mlx_hostfile_t hf;
    static tbm_mlx_devmatrix_t m;
    const tbm_envfile_t *f;
    tbm_mlx_addr_t coord;
    tbm_envplan_t p;
    tbm_conf_t c;
    tbm_err_t err = { { 0 } };
    size_t len;
    char *text = tbm_fixture("../../etc/tbmesh.conf.example", &len);

    tbm_conf_init(&c);
    ck_assert_msg(tbm_conf_parse(text, len, "tbmesh.conf.example", &c, NULL, &err) == 0, "%s", err.msg);
    f = planned_file(&c, studio, TBM_BACKEND_JACCL, 2, &p);
    ck_assert_msg(tbm_mlx_devmatrix_parse(f->data, f->len, f->path, &m, &err) == 0, "%s", err.msg);
    ck_assert(m.n == 4 && m.is_mesh);
    ck_assert_int_eq(tbm_mlx_coordinator_parse(tbm_envplan_get(&p, "MLX_JACCL_COORDINATOR"), &coord, &err), 0);
    ck_assert_str_eq(coord.ip, "10.10.0.5");       /* rank 2 reaches rank 0 on their cable */
    tbm_envplan_free(&p);
    f = planned_file(&c, studio, TBM_BACKEND_JACCL_RING, 0, &p);
    ck_assert_msg(tbm_mlx_devmatrix_parse(f->data, f->len, f->path, &m, &err) == 0, "%s", err.msg);
    ck_assert(!m.is_mesh && m.is_ring);
    ck_assert_int_eq(tbm_mlx_coordinator_parse(tbm_envplan_get(&p, "MLX_JACCL_COORDINATOR"), &coord, &err), 0);
    ck_assert_str_eq(coord.ip, "0.0.0.0");         /* rank 0 binds every address */
    tbm_envplan_free(&p);
    f = planned_file(&c, mini, TBM_BACKEND_AUTO, 1, &p);
    ck_assert_msg(tbm_mlx_hostfile_parse(f->data, f->len, f->path, &hf, &err) == 0, "%s", err.msg);
    ck_assert(hf.nranks == 4 && hf.naddrs == 1);
    ck_assert_str_eq(hf.addr[1][0].ip, "10.20.0.2");   /* rank 1 listens where rank 0 can reach it */
    ck_assert_uint_eq(hf.addr[1][0].port, 32324);
    tbm_envplan_free(&p);
    tbm_conf_free(&c);
    free(text);
}
END_TEST

static Suite *mlxenv_suite(void)
{
    Suite *s = suite_create("mlxenv");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, hostfile_good);
    tcase_add_loop_test(tc, hostfile_bad, 0, (int)(sizeof(bad_hostfiles) / sizeof(bad_hostfiles[0])));
    tcase_add_test(tc, hostfile_limits);
    tcase_add_test(tc, coordinator);
    tcase_add_test(tc, matrix_mesh);
    tcase_add_test(tc, matrix_ring);
    tcase_add_loop_test(tc, matrix_bad, 0, (int)(sizeof(bad_matrices) / sizeof(bad_matrices[0])));
    tcase_add_test(tc, matrix_sizes);
    tcase_add_test(tc, device_iface);
    tcase_add_test(tc, plans_read_back);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(mlxenv_suite)
