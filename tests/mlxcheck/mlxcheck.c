/* mlxcheck.c: MLX's distributed environment checked against REFERENCE.md's rules (see mlxcheck.h), for one
 * rank and for all ranks of a job. Written apart from lib/envplan.c so that each checks the other. */
#include "mlxcheck.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "errbuf.h"
#include "json_read.h"

typedef struct addr {
    uint32_t ip;
    int prefix;                  /* -1 when unknown */
} addr_t;

/* One rank as read. */
typedef struct rk {
    const mlxc_rank_t *in;
    tbm_findings_t *out;
    size_t problems;
    char where[32];
    char backend[16];            /* the one the checks follow: TBMESH_BACKEND, else what the variables say */
    int rank, size;              /* -1 when unknown */
    const mlxc_file_t *file;     /* the backend's file */
    json_object *doc;            /* that file, parsed */
    addr_t coord;
    int coord_port;              /* 0 when none */
} rk_t;

static const char *const ring_vars[] = {"MLX_HOSTFILE", "MLX_RING_VERBOSE", NULL};
static const char *const jaccl_vars[] = {"MLX_IBV_DEVICES", "MLX_JACCL_DEVICES", "MLX_JACCL_COORDINATOR",
                                         "MLX_JACCL_RING", "JACCL_RANK", "JACCL_IBV_DEVICES", "JACCL_COORDINATOR",
                                         "JACCL_RING", NULL};
static const char *const mpi_vars[] = {"MLX_MPI_LIBNAME", "OMPI_MCA_btl", "OMPI_MCA_btl_tcp_if_include",
                                       "OMPI_MCA_oob_tcp_if_include", NULL};

static void problem(rk_t *r, const char *code, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void problem(rk_t *r, const char *code, const char *fix, const char *fmt, ...)
{
    char what[TBM_FINDING_TEXT_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    tbm_finding_add(r->out, TBM_SEV_ERROR, code, r->where, fix, "%s", what);
    r->problems++;
}

/* ---- small parsers ---- */

static const char *env_get(const mlxc_rank_t *in, const char *name)
{
    size_t i, len = strlen(name);

    for (i = 0; i < in->n_env; i++)
        if (in->env[i] && strncmp(in->env[i], name, len) == 0 && in->env[i][len] == '=')
            return in->env[i] + len + 1;
    return NULL;
}

static int any_set(const mlxc_rank_t *in, const char *const *names)
{
    for (; *names; names++)
        if (env_get(in, *names))
            return 1;
    return 0;
}

/* A decimal number lo..hi, digits only. */
static int parse_num(const char *s, size_t len, long lo, long hi, long *v)
{
    size_t i;

    *v = 0;
    if (len == 0 || len > 9)
        return -1;
    for (i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        *v = *v * 10 + (s[i] - '0');
    }
    return *v >= lo && *v <= hi ? 0 : -1;
}

static int parse_int(const char *s, long lo, long hi, int *out)
{
    long v;

    if (!s || parse_num(s, strlen(s), lo, hi, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* a.b.c.d in s[0..len): four numbers 0..255 of at most 3 digits. */
static int parse_ipv4(const char *s, size_t len, uint32_t *ip)
{
    size_t start = 0, i;
    int part = 0;
    long v;

    *ip = 0;
    for (i = 0; i <= len; i++)
        if (i == len || s[i] == '.') {
            if (part > 3 || i - start > 3 || parse_num(s + start, i - start, 0, 255, &v) < 0)
                return -1;
            *ip = (*ip << 8) | (uint32_t)v;
            part++;
            start = i + 1;
        }
    return part == 4 ? 0 : -1;
}

/* "a.b.c.d:port". */
static int parse_hostport(const char *s, addr_t *a, int *port)
{
    const char *colon = s ? strrchr(s, ':') : NULL;
    long p;

    if (!colon || parse_ipv4(s, (size_t)(colon - s), &a->ip) < 0 ||
        parse_num(colon + 1, strlen(colon + 1), 1, 65535, &p) < 0)
        return -1;
    a->prefix = -1;
    *port = (int)p;
    return 0;
}

/* "a.b.c.d" or "a.b.c.d/len". */
static int parse_addr(const char *s, addr_t *a)
{
    const char *slash = strchr(s, '/');
    long p;

    a->prefix = -1;
    if (slash && parse_num(slash + 1, strlen(slash + 1), 0, 32, &p) < 0)
        return -1;
    if (slash)
        a->prefix = (int)p;
    return parse_ipv4(s, slash ? (size_t)(slash - s) : strlen(s), &a->ip);
}

static int is_own(const mlxc_rank_t *in, uint32_t ip)
{
    addr_t a;
    size_t i;

    for (i = 0; i < in->n_addrs; i++)
        if (parse_addr(in->addrs[i], &a) == 0 && a.ip == ip)
            return 1;
    return 0;
}

/* True when `in` has an address on a known subnet holding ip; -1 when no prefix is known. */
static int reaches(const mlxc_rank_t *in, uint32_t ip)
{
    int known = 0;
    addr_t a;
    size_t i;

    for (i = 0; i < in->n_addrs; i++) {
        uint32_t mask;
        if (parse_addr(in->addrs[i], &a) < 0 || a.prefix < 0)
            continue;
        known = 1;
        mask = a.prefix == 0 ? 0 : 0xffffffffu << (32 - a.prefix);
        if (((a.ip ^ ip) & mask) == 0)
            return 1;
    }
    return known ? 0 : -1;
}

static void ip_text(uint32_t ip, char *buf, size_t len)
{
    snprintf(buf, len, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

/* A device or interface name: a lower-case letter, then lower-case letters, digits or '_', 1..15 chars. */
static int dev_name_ok(const char *s)
{
    size_t i;

    if (!s || !(s[0] >= 'a' && s[0] <= 'z'))
        return 0;
    for (i = 1; s[i]; i++)
        if (i > 14 || !((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return 0;
    return 1;
}

/* ---- variables ---- */

static void detect_backend(rk_t *r)
{
    int ring = any_set(r->in, ring_vars), jaccl = any_set(r->in, jaccl_vars), mpi = any_set(r->in, mpi_vars);
    const char *said = env_get(r->in, "TBMESH_BACKEND");
    const char *seen = ring ? "ring"
                       : jaccl ? (env_get(r->in, "MLX_JACCL_RING") || env_get(r->in, "JACCL_RING") ? "jaccl-ring"
                                                                                                  : "jaccl")
                       : mpi ? "mpi" : "none";

    if (ring && jaccl)
        problem(r, "ring-wins", "export only the JACCL variables: drop MLX_HOSTFILE",
                "MLX_HOSTFILE is set beside JACCL's variables: under backend=\"any\" ring is tried first and wins");
    else if (ring + jaccl + mpi > 1)
        problem(r, "mixed-backends", "export one backend's variables only",
                "the variables of %s and %s are both set", ring ? "ring" : "jaccl", mpi ? "mpi" : "jaccl");
    if (!said)
        problem(r, "variable-missing", "export TBMESH_BACKEND", "TBMESH_BACKEND is not set");
    else if (strcmp(said, "none") && strcmp(said, "jaccl") && strcmp(said, "jaccl-ring") && strcmp(said, "ring") &&
             strcmp(said, "mpi"))
        problem(r, "backend-unknown", "use none, jaccl, jaccl-ring, ring or mpi", "TBMESH_BACKEND=%.40s is unknown",
                said);
    else if (ring + jaccl + mpi <= 1 && strcmp(said, seen) != 0)
        problem(r, "backend-mismatch", "export the variables of the backend TBMESH_BACKEND names",
                "TBMESH_BACKEND=%s but the variables are those of %s", said, seen);
    snprintf(r->backend, sizeof(r->backend), "%s",
             said && (ring + jaccl + mpi > 1 || strcmp(said, seen) == 0) ? said : seen);
}

static void check_rank_vars(rk_t *r)
{
    const char *mlx_rank = env_get(r->in, "MLX_RANK");
    int none = strcmp(r->backend, "none") == 0, mpi = strcmp(r->backend, "mpi") == 0, v;

    r->rank = r->size = -1;
    if (parse_int(env_get(r->in, "TBMESH_SIZE"), 1, MLXC_RANKS_MAX, &r->size) < 0)
        problem(r, "size-bad", "export TBMESH_SIZE, the number of ranks", "TBMESH_SIZE=%.20s is not a size from 1",
                env_get(r->in, "TBMESH_SIZE") ? env_get(r->in, "TBMESH_SIZE") : "(unset)");
    else if (none != (r->size == 1))
        problem(r, "size-bad", "a one-rank job sets TBMESH_BACKEND=none and nothing else; a larger one a backend",
                "TBMESH_SIZE=%d with TBMESH_BACKEND=%s", r->size, r->backend);
    if (parse_int(env_get(r->in, "TBMESH_RANK"), 0, r->size > 0 ? r->size - 1 : 0, &r->rank) < 0)
        problem(r, "rank-bad", "export TBMESH_RANK from 0 to TBMESH_SIZE-1", "TBMESH_RANK=%.20s is not a rank",
                env_get(r->in, "TBMESH_RANK") ? env_get(r->in, "TBMESH_RANK") : "(unset)");
    if (r->rank >= 0)
        snprintf(r->where, sizeof(r->where), "rank %d", r->rank);
    if ((none || mpi) && mlx_rank)
        problem(r, "variable-extra", "unset MLX_RANK", "MLX_RANK is set for backend %s", r->backend);
    else if (!none && !mpi && (parse_int(mlx_rank, 0, MLXC_RANKS_MAX, &v) < 0 || v != r->rank))
        problem(r, "rank-mismatch", "export MLX_RANK equal to TBMESH_RANK", "MLX_RANK=%.20s but TBMESH_RANK=%d",
                mlx_rank ? mlx_rank : "(unset)", r->rank);
}

static const mlxc_file_t *find_file(rk_t *r, const char *var, const char *path)
{
    size_t i;

    for (i = 0; path && i < r->in->n_files; i++)
        if (r->in->files[i].path && strcmp(r->in->files[i].path, path) == 0)
            return &r->in->files[i];
    problem(r, "file-missing", "write the file before the rank starts", "%s=%.200s names no file", var,
            path ? path : "(unset)");
    return NULL;
}

static void read_file_doc(rk_t *r, const char *var, const char *path)
{
    tbm_err_t err = {{0}};

    r->file = find_file(r, var, path);
    if (!r->file)
        return;
    r->doc = tbm_json_parse(r->file->data, r->file->len, &err);
    if (!r->doc)
        problem(r, "json-bad", "write valid JSON", "%s: %s", r->file->path, err.msg);
    else if (!json_object_is_type(r->doc, json_type_array))
        problem(r, "json-bad", "write a JSON list", "%s is not a JSON list", r->file->path);
}

/* ---- JACCL ---- */

/* Devices in one matrix cell, or -1 when the cell is not null, a name or a list of names. */
static int cell_count(json_object *cell)
{
    size_t i, n;

    if (!cell)
        return 0;
    if (json_object_is_type(cell, json_type_string))
        return dev_name_ok(json_object_get_string(cell)) ? 1 : -1;
    if (!json_object_is_type(cell, json_type_array))
        return -1;
    n = json_object_array_length(cell);
    for (i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(cell, i);
        if (!json_object_is_type(e, json_type_string) || !dev_name_ok(json_object_get_string(e)))
            return -1;
    }
    return n > 64 ? -1 : (int)n;
}

/* The device counts of a square matrix, or NULL (with a problem) when it is not one of n rows. */
static int *matrix_counts(rk_t *r, size_t n)
{
    int *cnt;
    size_t i, j;

    if (n < 2 || n > MLXC_RANKS_MAX || (r->size > 0 && n != (size_t)r->size)) {
        problem(r, "matrix-not-square", "write one row per rank", "%s has %zu rows for %d ranks", r->file->path, n,
                r->size);
        return NULL;
    }
    cnt = calloc(n * n, sizeof(int));
    for (i = 0; cnt && i < n; i++) {
        json_object *row = json_object_array_get_idx(r->doc, i);
        if (!json_object_is_type(row, json_type_array) || json_object_array_length(row) != n) {
            problem(r, "matrix-not-square", "write n cells in each of the n rows", "row %zu of %s is not a list of "
                    "%zu cells", i, r->file->path, n);
            free(cnt);
            return NULL;
        }
        for (j = 0; j < n; j++)
            if ((cnt[i * n + j] = cell_count(json_object_array_get_idx(row, j))) < 0) {
                problem(r, "matrix-cell", "write null, \"rdma_enX\" or a list of such names",
                        "cell [%zu][%zu] of %s is not null, a device name or a list of them", i, j, r->file->path);
                cnt[i * n + j] = 0;
            }
    }
    return cnt;
}

static void check_mesh(rk_t *r, const int *cnt, size_t n)
{
    size_t i, j;

    if (n > MLXC_MESH_MAX)
        problem(r, "mesh-too-big", "use JACCL's ring mode (MLX_JACCL_RING) or the ring backend",
                "a JACCL mesh of %zu ranks: at most %d", n, MLXC_MESH_MAX);
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            if (i != j && cnt[i * n + j] != 1) {
                problem(r, cnt[i * n + j] ? "mesh-list" : "mesh-incomplete",
                        "give every pair of ranks exactly one device", "cell [%zu][%zu] holds %d devices in a mesh",
                        i, j, cnt[i * n + j]);
                return;
            }
}

static void check_ring(rk_t *r, const int *cnt, size_t n)
{
    int want = cnt[1];
    size_t i;

    for (i = 0; i < n; i++) {
        int left = cnt[i * n + (i + n - 1) % n], right = cnt[i * n + (i + 1) % n];
        if (left != want || right != want || want == 0) {
            problem(r, "ring-invalid", "give each rank the same number of devices towards both neighbours",
                    "rank %zu has %d devices to the left and %d to the right; rank 0 has %d", i, left, right, want);
            return;
        }
    }
    if (want > MLXC_RING_MAX)
        problem(r, "ring-too-many", "use at most 4 cables between neighbours", "%d devices between neighbours: at "
                "most %d", want, MLXC_RING_MAX);
}

static void check_matrix(rk_t *r, int ring)
{
    size_t n = json_object_array_length(r->doc), i, j;
    int *cnt = matrix_counts(r, n);

    if (!cnt)
        return;
    for (i = 0; i < n; i++) {
        if (cnt[i * n + i])
            problem(r, "matrix-diagonal", "write null on the diagonal", "cell [%zu][%zu] is not null", i, i);
        for (j = i + 1; j < n; j++)
            if (!cnt[i * n + j] != !cnt[j * n + i])
                problem(r, "matrix-asymmetric", "a cable has two ends: set both cells or neither",
                        "cell [%zu][%zu] holds %d devices but cell [%zu][%zu] holds %d", i, j, cnt[i * n + j], j, i,
                        cnt[j * n + i]);
    }
    if (ring)
        check_ring(r, cnt, n);
    else
        check_mesh(r, cnt, n);
    free(cnt);
}

/* The alias (JACCL_*, it wins from MLX 0.31.2) equals the MLX_* value when set. */
static void same_alias(rk_t *r, const char *alias, const char *name, const char *value)
{
    const char *a = env_get(r->in, alias);

    if (a && (!value || strcmp(a, value) != 0))
        problem(r, "alias-mismatch", "give the JACCL_* alias the same value as its MLX_* variable",
                "%s=%.100s but %s=%.100s", alias, a, name, value ? value : "(unset)");
}

static void check_jaccl(rk_t *r)
{
    const char *ibv = env_get(r->in, "MLX_IBV_DEVICES"), *old = env_get(r->in, "MLX_JACCL_DEVICES");
    const char *coord = env_get(r->in, "MLX_JACCL_COORDINATOR"), *dev = ibv ? ibv : old;
    int ring = strcmp(r->backend, "jaccl-ring") == 0;
    char ip[16];

    if (ibv && old && strcmp(ibv, old) != 0)
        problem(r, "alias-mismatch", "name one device file", "MLX_IBV_DEVICES and MLX_JACCL_DEVICES differ");
    same_alias(r, "JACCL_RANK", "MLX_RANK", env_get(r->in, "MLX_RANK"));
    same_alias(r, "JACCL_IBV_DEVICES", "MLX_IBV_DEVICES", dev);
    same_alias(r, "JACCL_COORDINATOR", "MLX_JACCL_COORDINATOR", coord);
    same_alias(r, "JACCL_RING", "MLX_JACCL_RING", env_get(r->in, "MLX_JACCL_RING"));
    if (!coord || parse_hostport(coord, &r->coord, &r->coord_port) < 0) {
        r->coord_port = 0;
        problem(r, "coordinator-bad", "export MLX_JACCL_COORDINATOR=<ipv4>:<port>",
                "MLX_JACCL_COORDINATOR=%.60s is not ipv4:port", coord ? coord : "(unset)");
    } else if (r->rank == 0 && r->in->addrs && r->coord.ip != 0 && !is_own(r->in, r->coord.ip)) {
        ip_text(r->coord.ip, ip, sizeof(ip));
        problem(r, "coordinator-not-local", "rank 0 binds the coordinator: give one of its addresses or 0.0.0.0",
                "rank 0's coordinator %s is not one of its addresses", ip);
    }
    read_file_doc(r, ibv ? "MLX_IBV_DEVICES" : "MLX_JACCL_DEVICES", dev);
    if (r->doc && json_object_is_type(r->doc, json_type_array))
        check_matrix(r, ring);
}

/* ---- ring ---- */

static void check_hostfile_entry(rk_t *r, size_t i, size_t a, json_object *e, addr_t *seen, int *ports, size_t *n)
{
    const char *s = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
    addr_t ad;
    int port;
    size_t k;

    if (!s || parse_hostport(s, &ad, &port) < 0) {
        problem(r, "hostfile-address", "write \"ipv4:port\" strings", "entry %zu of rank %zu is not ipv4:port", a, i);
        return;
    }
    for (k = 0; k < *n; k++)
        if (seen[k].ip == ad.ip && ports[k] == port)
            problem(r, "hostfile-duplicate", "give every listening address its own port",
                    "%s is listed twice", s);
    seen[*n] = ad;
    ports[(*n)++] = port;
    if ((int)i == r->rank && r->in->addrs && !is_own(r->in, ad.ip))
        problem(r, "hostfile-not-local", "list the addresses this rank listens on",
                "this rank's entry %s is not one of its addresses", s);
}

static void check_hostfile(rk_t *r)
{
    size_t n = json_object_array_length(r->doc), i, a, want = 0, total = 0;
    addr_t *seen;
    int *ports;

    if (r->size > 0 && n != (size_t)r->size) {
        problem(r, "hostfile-shape", "write one list per rank", "%s has %zu lists for %d ranks", r->file->path, n,
                r->size);
        return;
    }
    seen = calloc(n * 64 + 1, sizeof(*seen));
    ports = calloc(n * 64 + 1, sizeof(*ports));
    for (i = 0; seen && ports && i < n; i++) {
        json_object *row = json_object_array_get_idx(r->doc, i);
        size_t m = json_object_is_type(row, json_type_array) ? json_object_array_length(row) : 0;
        if (m == 0 || m > 64) {
            problem(r, "hostfile-shape", "give each rank a list of ipv4:port", "rank %zu's entry is not a list of "
                    "1 to 64 addresses", i);
            continue;
        }
        if (want == 0)
            want = m;
        else if (m != want)
            problem(r, "hostfile-count", "list the same number of addresses for every rank",
                    "rank %zu lists %zu addresses, rank 0 lists %zu", i, m, want);
        for (a = 0; a < m; a++)
            check_hostfile_entry(r, i, a, json_object_array_get_idx(row, a), seen, ports, &total);
    }
    free(seen);
    free(ports);
}

/* ---- mpi ---- */

static int iface_list_ok(const char *s)
{
    char buf[1024], *save = NULL, *tok;
    int n = 0;

    if (!s || strlen(s) >= sizeof(buf))
        return 0;
    snprintf(buf, sizeof(buf), "%s", s);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++)
        if (!dev_name_ok(tok))
            return 0;
    return n > 0 && s[strlen(s) - 1] != ',' && s[0] != ',' && !strstr(s, ",,");
}

static void check_mpi(rk_t *r)
{
    const char *btl = env_get(r->in, "OMPI_MCA_btl"), *tcp = env_get(r->in, "OMPI_MCA_btl_tcp_if_include");
    const char *oob = env_get(r->in, "OMPI_MCA_oob_tcp_if_include"), *lib = env_get(r->in, "MLX_MPI_LIBNAME");

    if (!iface_list_ok(tcp))
        problem(r, "mpi-interfaces", "list the Thunderbolt interfaces, comma-separated",
                "OMPI_MCA_btl_tcp_if_include=%.100s is not a list of interfaces", tcp ? tcp : "(unset)");
    else if (!oob || strcmp(oob, tcp) != 0)
        problem(r, "mpi-interfaces", "give OMPI_MCA_oob_tcp_if_include the same interfaces",
                "OMPI_MCA_oob_tcp_if_include=%.100s differs from OMPI_MCA_btl_tcp_if_include", oob ? oob : "(unset)");
    if (!btl || !strstr(btl, "tcp") || !strstr(btl, "self"))
        problem(r, "mpi-btl", "export OMPI_MCA_btl=self,tcp", "OMPI_MCA_btl=%.60s lacks self or tcp",
                btl ? btl : "(unset)");
    if (!lib || !*lib || strchr(lib, '/'))
        problem(r, "mpi-libname", "export MLX_MPI_LIBNAME=libmpi.40.dylib (a file name)",
                "MLX_MPI_LIBNAME=%.60s is not a library file name", lib ? lib : "(unset)");
}

/* ---- one rank ---- */

static void read_rank(rk_t *r, const mlxc_rank_t *in, tbm_findings_t *out)
{
    memset(r, 0, sizeof(*r));
    r->in = in;
    r->out = out;
    if (parse_int(env_get(in, "TBMESH_RANK"), 0, MLXC_RANKS_MAX, &r->rank) == 0)
        snprintf(r->where, sizeof(r->where), "rank %d", r->rank);
    else
        snprintf(r->where, sizeof(r->where), "rank ?");
    detect_backend(r);
    check_rank_vars(r);
    if (strncmp(r->backend, "jaccl", 5) == 0)
        check_jaccl(r);
    else if (strcmp(r->backend, "ring") == 0) {
        read_file_doc(r, "MLX_HOSTFILE", env_get(in, "MLX_HOSTFILE"));
        if (r->doc && json_object_is_type(r->doc, json_type_array))
            check_hostfile(r);
    } else if (strcmp(r->backend, "mpi") == 0)
        check_mpi(r);
}

size_t mlxc_check_rank(const mlxc_rank_t *in, tbm_findings_t *out)
{
    rk_t r;

    read_rank(&r, in, out);
    json_object_put(r.doc);
    return r.problems;
}

/* ---- the job ---- */

static const rk_t *rank_at(const rk_t *rs, size_t n, int rank)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (rs[i].rank == rank)
            return &rs[i];
    return NULL;
}

static void check_members(rk_t *job, const rk_t *rs, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (strcmp(rs[i].backend, rs[0].backend) != 0)
            problem(job, "backend-differs", "plan every rank with the same backend", "%s uses %s, %s uses %s",
                    rs[0].where, rs[0].backend, rs[i].where, rs[i].backend);
        if (rs[i].size != (int)n)
            problem(job, "size-differs", "give every rank TBMESH_SIZE equal to the number of ranks",
                    "%s says %d ranks; the job has %zu", rs[i].where, rs[i].size, n);
        if (rs[i].rank >= 0 && rank_at(rs, i, rs[i].rank))
            problem(job, "rank-duplicate", "give each rank its own number", "rank %d appears twice", rs[i].rank);
        if (rs[i].file && rs[0].file &&
            (rs[i].file->len != rs[0].file->len || memcmp(rs[i].file->data, rs[0].file->data, rs[0].file->len)))
            problem(job, "file-differs", "write the same file on every rank", "%s's %s differs from %s's",
                    rs[i].where, rs[i].file->path, rs[0].where);
    }
    for (i = 0; i < n; i++)
        if (!rank_at(rs, n, (int)i))
            problem(job, "rank-missing", "start one task per rank", "no rank %zu among %zu ranks", i, n);
}

static void check_coordinators(rk_t *job, const rk_t *rs, size_t n)
{
    const rk_t *r0 = rank_at(rs, n, 0);
    char ip[16];
    size_t i;

    for (i = 0; r0 && i < n; i++) {
        if (!rs[i].coord_port || !r0->coord_port || rs[i].rank <= 0)
            continue;
        ip_text(rs[i].coord.ip, ip, sizeof(ip));
        if (rs[i].coord_port != r0->coord_port)
            problem(job, "coordinator-port-differs", "give every rank rank 0's coordinator port",
                    "%s connects to port %d, rank 0 binds %d", rs[i].where, rs[i].coord_port, r0->coord_port);
        if (r0->in->addrs && !is_own(r0->in, rs[i].coord.ip))
            problem(job, "coordinator-not-rank0", "give an address of rank 0",
                    "%s's coordinator %s is not an address of rank 0", rs[i].where, ip);
        else if (r0->coord.ip != 0 && r0->coord.ip != rs[i].coord.ip)
            problem(job, "coordinator-not-bound", "rank 0 binds one address: give it to every rank, or bind 0.0.0.0",
                    "%s connects to %s, which rank 0 does not bind", rs[i].where, ip);
        if (reaches(rs[i].in, rs[i].coord.ip) == 0)
            problem(job, "coordinator-unreachable", "give an address of rank 0 on a link this rank shares",
                    "%s shares no subnet with its coordinator %s", rs[i].where, ip);
    }
}

static void check_ring_addresses(rk_t *job, const rk_t *rs, size_t n)
{
    const rk_t *doc = rank_at(rs, n, 0);
    size_t r, a;

    for (r = 0; doc && doc->doc && r < n; r++) {
        const rk_t *owner = rank_at(rs, n, (int)r), *prev = rank_at(rs, n, (int)((r + n - 1) % n));
        json_object *row = json_object_array_get_idx(doc->doc, r);
        size_t m = json_object_is_type(row, json_type_array) ? json_object_array_length(row) : 0;
        for (a = 0; owner && prev && a < m; a++) {
            json_object *e = json_object_array_get_idx(row, a);
            addr_t ad;
            int port;
            if (!json_object_is_type(e, json_type_string) || parse_hostport(json_object_get_string(e), &ad, &port))
                continue;
            if (owner->in->addrs && !is_own(owner->in, ad.ip))
                problem(job, "hostfile-not-own", "list each rank's own addresses in its entry",
                        "rank %zu's entry %s is not an address of rank %zu", r, json_object_get_string(e), r);
            if (reaches(prev->in, ad.ip) == 0)
                problem(job, "hostfile-unreachable", "list addresses on the link shared with the previous rank",
                        "rank %zu listens on %s, on no subnet of rank %d, which connects to it", r,
                        json_object_get_string(e), prev->rank);
        }
    }
}

size_t mlxc_check_job(const mlxc_rank_t *ranks, size_t n, tbm_findings_t *out)
{
    rk_t *rs = calloc(n ? n : 1, sizeof(*rs)), job;
    size_t i, problems = 0;

    memset(&job, 0, sizeof(job));
    job.out = out;
    snprintf(job.where, sizeof(job.where), "job");
    if (!rs || n == 0 || n > MLXC_RANKS_MAX)
        problem(&job, "job-empty", "give every rank of the job", "%zu ranks given", n);
    for (i = 0; rs && i < n && n <= MLXC_RANKS_MAX; i++) {
        read_rank(&rs[i], &ranks[i], out);
        problems += rs[i].problems;
    }
    if (rs && n > 0 && n <= MLXC_RANKS_MAX) {
        check_members(&job, rs, n);
        if (strncmp(rs[0].backend, "jaccl", 5) == 0)
            check_coordinators(&job, rs, n);
        if (strcmp(rs[0].backend, "ring") == 0)
            check_ring_addresses(&job, rs, n);
    }
    for (i = 0; rs && i < n && n <= MLXC_RANKS_MAX; i++)
        json_object_put(rs[i].doc);
    free(rs);
    return problems + job.problems;
}
