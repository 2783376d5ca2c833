/* mlxenv.c: parse and validate MLX's distributed inputs: ring hostfile, JACCL device matrix, coordinator. */
#include "mlxenv.h"
#include "json_read.h"

#include <ctype.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How a JSON value is called in messages ("an integer", "null"). */
static const char *json_kind(const json_object *o)
{
    return tbm_json_type_name(json_object_get_type(o));
}

/* One decimal field of a dotted quad: 1-3 digits, 0..255. Advances *p. */
static int parse_octet(const char **p, unsigned *out)
{
    unsigned v = 0;
    int digits = 0;

    while (isdigit((unsigned char)**p) && digits < 4) {
        v = v * 10 + (unsigned)(**p - '0');
        (*p)++;
        digits++;
    }
    if (digits == 0 || digits > 3 || v > 255)
        return -1;
    *out = v;
    return 0;
}

static int parse_ipv4(const char *s, size_t len, uint32_t *ip_be)
{
    const char *p = s;
    unsigned oct[4];
    int i;

    for (i = 0; i < 4; i++) {
        if (parse_octet(&p, &oct[i]) < 0)
            return -1;
        if (i < 3 && *p++ != '.')
            return -1;
    }
    if ((size_t)(p - s) != len)
        return -1;
    /* bytes in network order whatever the host's order */
    {
        unsigned char b[4] = { (unsigned char)oct[0], (unsigned char)oct[1], (unsigned char)oct[2],
                               (unsigned char)oct[3] };
        memcpy(ip_be, b, 4);
    }
    return 0;
}

static int parse_port(const char *s, uint16_t *port)
{
    unsigned long v = 0;
    const char *p = s;

    if (!*p)
        return -1;
    for (; *p; p++) {
        if (!isdigit((unsigned char)*p) || v > 65535)
            return -1;
        v = v * 10 + (unsigned long)(*p - '0');
    }
    if (v < 1 || v > 65535)
        return -1;
    *port = (uint16_t)v;
    return 0;
}

int tbm_mlx_addr_parse(const char *text, const char *what, tbm_mlx_addr_t *out, tbm_err_t *err)
{
    const char *colon;
    size_t iplen;

    if (!text || !*text)
        return tbm_errprintf(err, "%s: the address is empty: write it as ipv4:port (e.g. 10.0.0.1:32323)",
                             what);
    colon = strrchr(text, ':');
    if (!colon)
        return tbm_errprintf(err, "%s: '%s' has no port: write it as ipv4:port (e.g. 10.0.0.1:32323)", what,
                             text);
    iplen = (size_t)(colon - text);
    if (memchr(text, ':', iplen) || text[0] == '[')
        return tbm_errprintf(err, "%s: '%s' is an IPv6 address: MLX accepts only IPv4 (a.b.c.d:port)", what,
                             text);
    if (iplen >= TBM_MLX_IPV4_MAX || parse_ipv4(text, iplen, &out->ip_be) < 0)
        return tbm_errprintf(err, "%s: '%.*s' is not an IPv4 address: write a dotted quad such as 10.0.0.1",
                             what, (int)(iplen < 64 ? iplen : 64), text);
    if (parse_port(colon + 1, &out->port) < 0)
        return tbm_errprintf(err, "%s: port '%s' of '%s' is not a number from 1 to 65535", what, colon + 1,
                             text);
    memcpy(out->ip, text, iplen);
    out->ip[iplen] = '\0';
    return 0;
}

int tbm_mlx_coordinator_parse(const char *text, tbm_mlx_addr_t *out, tbm_err_t *err)
{
    return tbm_mlx_addr_parse(text, "MLX_JACCL_COORDINATOR", out, err);
}

/* Parse text as one JSON value with the project's one reader (lib/json_read). NULL with a message ending in
 * what to write. */
static json_object *parse_json(const char *text, size_t len, const char *name, const char *expect,
                               tbm_err_t *err)
{
    char fix[512];
    tbm_json_rules_t rules = { .what = name, .max_len = TBM_MLX_TEXT_MAX, .max_depth = 16, .fix = fix };

    snprintf(fix, sizeof(fix), "write %s", expect);
    return tbm_json_read(text, len, &rules, err);
}

/* What a top-level document is called in messages, and how many entries it may hold. */
typedef struct doc_kind {
    const char *title;       /* "the ring hostfile" */
    const char *shape;       /* "a JSON list indexed by rank" */
    const char *unit;        /* "ranks" */
    const char *per;         /* "one list of \"ip:port\" per rank" */
    const char *expect;      /* what to write, for JSON errors */
    int max;
} doc_kind_t;

static const doc_kind_t hostfile_kind = {
    "the ring hostfile", "a JSON list indexed by rank", "ranks", "one list of \"ip:port\" per rank",
    "a JSON list with one list of \"ip:port\" per rank", TBM_MLX_RING_MAX,
};

static const doc_kind_t matrix_kind = {
    "the device matrix", "a JSON list of rows", "rows", "one per rank",
    "an N x N JSON list of lists, null on the diagonal, device names elsewhere", TBM_MLX_MATRIX_MAX,
};

/* Parse the text as a JSON list of 1 .. kind->max entries. Returns the root (put it), or NULL with a message. */
static json_object *parse_doc(const char *text, size_t len, const char *name, const doc_kind_t *kind, size_t *n,
                              tbm_err_t *err)
{
    json_object *root = parse_json(text, len, name, kind->expect, err);

    if (!root)
        return NULL;
    if (!json_object_is_type(root, json_type_array)) {
        tbm_errprintf(err, "%s: %s must be %s, found %s", name, kind->title, kind->shape, json_kind(root));
        json_object_put(root);
        return NULL;
    }
    *n = json_object_array_length(root);
    if (*n == 0 || *n > (size_t)kind->max) {
        tbm_errprintf(err, "%s: %s has %zu %s: give from 1 to %d, %s", name, kind->title, *n, kind->unit,
                      kind->max, kind->per);
        json_object_put(root);
        return NULL;
    }
    return root;
}

/* Rank r's element of the hostfile: its list of addresses. */
static int hostfile_rank(json_object *el, int r, const char *name, tbm_mlx_hostfile_t *out, tbm_err_t *err)
{
    char what[200];
    size_t i, n;

    if (!json_object_is_type(el, json_type_array))
        return tbm_errprintf(err, "%s: rank %d: expected a list of \"ip:port\" strings, found %s", name, r,
                             json_kind(el));
    n = json_object_array_length(el);
    if (n == 0)
        return tbm_errprintf(err, "%s: rank %d lists no address: give at least one \"ip:port\" it listens on",
                             name, r);
    if (n > TBM_MLX_ADDRS_MAX)
        return tbm_errprintf(err, "%s: rank %d lists %zu addresses, at most %d are supported", name, r, n,
                             TBM_MLX_ADDRS_MAX);
    if (r > 0 && (int)n != out->naddrs)
        return tbm_errprintf(err, "%s: rank %d lists %zu addresses but rank 0 lists %d: every rank must list "
                             "the same number", name, r, n, out->naddrs);
    out->naddrs = (int)n;
    for (i = 0; i < n; i++) {
        json_object *a = json_object_array_get_idx(el, i);
        snprintf(what, sizeof(what), "%s: rank %d, address %zu", name, r, i);
        if (!json_object_is_type(a, json_type_string))
            return tbm_errprintf(err, "%s: expected a string \"ip:port\", found %s", what, json_kind(a));
        if (tbm_mlx_addr_parse(json_object_get_string(a), what, &out->addr[r][i], err) < 0)
            return -1;
    }
    return 0;
}

static int same_addr(const tbm_mlx_addr_t *a, const tbm_mlx_addr_t *b)
{
    return a->ip_be == b->ip_be && a->port == b->port;
}

/* No ip:port may be listed twice (two listeners cannot share one). */
static int hostfile_unique(const tbm_mlx_hostfile_t *hf, const char *name, tbm_err_t *err)
{
    int k, l, n = hf->nranks * hf->naddrs;

    for (k = 0; k < n; k++)
        for (l = k + 1; l < n; l++) {
            const tbm_mlx_addr_t *a = &hf->addr[k / hf->naddrs][k % hf->naddrs];
            const tbm_mlx_addr_t *b = &hf->addr[l / hf->naddrs][l % hf->naddrs];
            if (same_addr(a, b))
                return tbm_errprintf(err, "%s: %s:%u is listed twice (rank %d and rank %d): give every "
                                     "listener its own ip:port", name, a->ip, a->port, k / hf->naddrs,
                                     l / hf->naddrs);
        }
    return 0;
}

int tbm_mlx_hostfile_parse(const char *text, size_t len, const char *name, tbm_mlx_hostfile_t *out,
                           tbm_err_t *err)
{
    json_object *root;
    size_t n, r;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (!(root = parse_doc(text, len, name, &hostfile_kind, &n, err)))
        return -1;
    out->nranks = (int)n;
    for (r = 0; r < n; r++)
        if (hostfile_rank(json_object_array_get_idx(root, r), (int)r, name, out, err) < 0)
            goto out;
    rc = hostfile_unique(out, name, err);
out:
    json_object_put(root);
    return rc;
}

static int cell_name(json_object *s, int i, int j, int k, const char *name, tbm_mlx_devmatrix_t *m,
                     tbm_err_t *err)
{
    const char *v;

    if (!json_object_is_type(s, json_type_string))
        return tbm_errprintf(err, "%s: cell [%d][%d]: expected device names, found %s in the list", name, i, j,
                             json_kind(s));
    v = json_object_get_string(s);
    if (!*v)
        return tbm_errprintf(err, "%s: cell [%d][%d] holds an empty name: name the RDMA device (e.g. "
                             "\"rdma_en5\") or use null", name, i, j);
    if (strlen(v) >= TBM_MLX_DEVNAME_MAX)
        return tbm_errprintf(err, "%s: cell [%d][%d]: device name '%.40s' is longer than %d characters", name,
                             i, j, v, TBM_MLX_DEVNAME_MAX - 1);
    strcpy(m->dev[i][j][k], v);
    return 0;
}

static int matrix_cell(json_object *c, int i, int j, const char *name, tbm_mlx_devmatrix_t *m, tbm_err_t *err)
{
    size_t k, n;

    if (!c)
        return i == j ? 0 : (m->ndev[i][j] = 0);
    if (i == j)
        return tbm_errprintf(err, "%s: cell [%d][%d] must be null: a rank has no device facing itself", name, i,
                             j);
    if (json_object_is_type(c, json_type_string)) {
        m->ndev[i][j] = 1;
        return cell_name(c, i, j, 0, name, m, err);
    }
    if (!json_object_is_type(c, json_type_array))
        return tbm_errprintf(err, "%s: cell [%d][%d]: expected null, a device name or a list of device names, "
                             "found %s", name, i, j, json_kind(c));
    n = json_object_array_length(c);
    if (n == 0 || n > TBM_MLX_CELL_DEVS)
        return tbm_errprintf(err, "%s: cell [%d][%d] lists %zu devices: give from 1 to %d (one per cable), or "
                             "null", name, i, j, n, TBM_MLX_CELL_DEVS);
    m->ndev[i][j] = (int)n;
    for (k = 0; k < n; k++)
        if (cell_name(json_object_array_get_idx(c, k), i, j, (int)k, name, m, err) < 0)
            return -1;
    return 0;
}

static int matrix_row(json_object *row, int i, const char *name, tbm_mlx_devmatrix_t *m, tbm_err_t *err)
{
    size_t j;

    if (!json_object_is_type(row, json_type_array))
        return tbm_errprintf(err, "%s: row %d: expected a list of %d cells, found %s", name, i, m->n,
                             json_kind(row));
    if (json_object_array_length(row) != (size_t)m->n)
        return tbm_errprintf(err, "%s: row %d has %zu cells but the matrix has %d rows: the device matrix "
                             "must be N x N", name, i, json_object_array_length(row), m->n);
    for (j = 0; j < (size_t)m->n; j++)
        if (matrix_cell(json_object_array_get_idx(row, j), i, (int)j, name, m, err) < 0)
            return -1;
    return 0;
}

/* A cable has a device at both ends: [i][j] and [j][i] list as many devices. */
static int matrix_symmetric(const tbm_mlx_devmatrix_t *m, const char *name, tbm_err_t *err)
{
    int i, j;

    for (i = 0; i < m->n; i++)
        for (j = i + 1; j < m->n; j++)
            if (m->ndev[i][j] != m->ndev[j][i])
                return tbm_errprintf(err, "%s: cell [%d][%d] lists %d devices but [%d][%d] lists %d: every "
                                     "cable has a device at both ends, so both cells must name as many",
                                     name, i, j, m->ndev[i][j], j, i, m->ndev[j][i]);
    return 0;
}

static void matrix_classify(tbm_mlx_devmatrix_t *m)
{
    int i, j, n = m->n;

    m->is_mesh = n <= TBM_MLX_MESH_MAX;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            if (i != j && m->ndev[i][j] == 0)
                m->is_mesh = 0;
    m->is_ring = 1;
    for (i = 0; i < n && n > 1; i++) {
        int left = m->ndev[i][(i + n - 1) % n], right = m->ndev[i][(i + 1) % n];
        if (left == 0 || left != right)
            m->is_ring = 0;
    }
}

int tbm_mlx_devmatrix_parse(const char *text, size_t len, const char *name, tbm_mlx_devmatrix_t *out,
                            tbm_err_t *err)
{
    json_object *root;
    size_t n;
    int i, rc = -1;

    memset(out, 0, sizeof(*out));
    if (!(root = parse_doc(text, len, name, &matrix_kind, &n, err)))
        return -1;
    out->n = (int)n;
    for (i = 0; i < out->n; i++)
        if (matrix_row(json_object_array_get_idx(root, (size_t)i), i, name, out, err) < 0)
            goto out;
    if (matrix_symmetric(out, name, err) < 0)
        goto out;
    matrix_classify(out);
    if (!out->is_mesh && !out->is_ring) {
        tbm_errprintf(err, "%s: the %d ranks form neither a full mesh (every off-diagonal cell set, at most %d "
                      "ranks) nor a ring (each rank's left and right cells set, with as many devices): check "
                      "the cabling and the matrix", name, out->n, TBM_MLX_MESH_MAX);
        goto out;
    }
    rc = 0;
out:
    json_object_put(root);
    return rc;
}

int tbm_mlx_device_iface(const char *dev, char *out, size_t outsz, tbm_err_t *err)
{
    static const char prefix[] = "rdma_";
    size_t plen = sizeof(prefix) - 1;

    if (!dev || strncmp(dev, prefix, plen) != 0 || !dev[plen])
        return tbm_errprintf(err, "RDMA device '%s' does not name a network interface: expected rdma_<interface> "
                             "(e.g. rdma_en5)", dev ? dev : "");
    if (strlen(dev + plen) >= outsz)
        return tbm_errprintf(err, "RDMA device '%s': the interface name is longer than %zu characters", dev,
                             outsz - 1);
    strcpy(out, dev + plen);
    return 0;
}
