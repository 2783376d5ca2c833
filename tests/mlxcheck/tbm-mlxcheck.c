/* tbm-mlxcheck: run inside a rank, checks its MLX environment and the files it names (mlxcheck.h); with
 * --dump saves what it saw, and --job checks the saved views of all ranks of a job together. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <json-c/json.h>

#include "errbuf.h"
#include "fileio.h"
#include "json_read.h"
#include "mlxcheck.h"

#define FILE_MAX  (1u << 20)
#define MAX_ITEMS 256

extern char **environ;

/* What one rank saw; the strings are owned (malloc'd or json-c's, kept alive by doc). */
typedef struct view {
    const char *env[MAX_ITEMS];
    size_t n_env;
    mlxc_file_t files[8];
    char *file_bufs[8];
    size_t n_files;
    const char *addrs[MAX_ITEMS];
    char *addr_bufs[MAX_ITEMS];
    size_t n_addrs;
    int addrs_known;
    json_object *doc;
} view_t;

static const char *const file_vars[] = {"MLX_HOSTFILE", "MLX_IBV_DEVICES", "MLX_JACCL_DEVICES", "JACCL_IBV_DEVICES",
                                        NULL};

static int usage(void)
{
    fprintf(stderr, "usage: tbm-mlxcheck [--addrs A[/LEN][,B...] | --local] [--dump FILE]\n"
                    "       tbm-mlxcheck --job DUMP...\n"
                    "Checks this rank's MLX environment (and the files it names), or all ranks' dumps together.\n");
    return 2;
}

static int relevant(const char *kv)
{
    return !strncmp(kv, "TBMESH_", 7) || !strncmp(kv, "MLX_", 4) || !strncmp(kv, "JACCL_", 6) ||
           !strncmp(kv, "OMPI_MCA_", 9);
}

static void read_named_files(view_t *v)
{
    const char *const *name;
    size_t i;

    for (name = file_vars; *name; name++) {
        const char *path = getenv(*name);
        tbm_err_t err = {{0}};
        int dup = 0;
        if (!path || v->n_files >= 8)
            continue;
        for (i = 0; i < v->n_files; i++)
            dup |= strcmp(v->files[i].path, path) == 0;
        if (dup)
            continue;
        v->file_bufs[v->n_files] = tbm_read_file(path, FILE_MAX, &v->files[v->n_files].len, &err);
        if (!v->file_bufs[v->n_files]) {
            fprintf(stderr, "tbm-mlxcheck: %s=%s: %s\n", *name, path, err.msg);
            continue;
        }
        v->files[v->n_files].path = path;
        v->files[v->n_files].data = v->file_bufs[v->n_files];
        v->n_files++;
    }
}

static void add_addr(view_t *v, const char *text)
{
    if (v->n_addrs < MAX_ITEMS && (v->addr_bufs[v->n_addrs] = strdup(text)) != NULL) {
        v->addrs[v->n_addrs] = v->addr_bufs[v->n_addrs];
        v->n_addrs++;
    }
}

/* This host's IPv4 addresses with their prefix lengths. */
static int local_addrs(view_t *v)
{
    struct ifaddrs *ifa, *p;
    char ip[INET_ADDRSTRLEN], text[40];

    if (getifaddrs(&ifa) < 0) {
        perror("tbm-mlxcheck: getifaddrs");
        return -1;
    }
    for (p = ifa; p; p = p->ifa_next) {
        uint32_t mask;
        int len = 0;
        if (!p->ifa_addr || p->ifa_addr->sa_family != AF_INET || !p->ifa_netmask)
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)p->ifa_addr)->sin_addr, ip, sizeof(ip));
        mask = ntohl(((struct sockaddr_in *)(void *)p->ifa_netmask)->sin_addr.s_addr);
        while (len < 32 && (mask & (0x80000000u >> len)))
            len++;
        snprintf(text, sizeof(text), "%s/%d", ip, len);
        add_addr(v, text);
    }
    freeifaddrs(ifa);
    v->addrs_known = 1;
    return 0;
}

static void given_addrs(view_t *v, const char *list)
{
    char *copy = strdup(list), *save = NULL, *tok;

    for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save))
        add_addr(v, tok);
    free(copy);
    v->addrs_known = 1;
}

static mlxc_rank_t as_rank(const view_t *v)
{
    mlxc_rank_t r = {v->env, v->n_env, v->files, v->n_files, v->addrs_known ? v->addrs : NULL, v->n_addrs};

    return r;
}

static void view_free(view_t *v)
{
    size_t i;

    for (i = 0; i < v->n_files; i++)
        free(v->file_bufs[i]);
    for (i = 0; i < v->n_addrs; i++)
        free(v->addr_bufs[i]);
    json_object_put(v->doc);
}

static int report(const tbm_findings_t *fs, size_t problems)
{
    size_t i;

    for (i = 0; i < fs->n; i++)
        fprintf(stderr, "tbm-mlxcheck: %s: %s: %s: %s\n", fs->items[i].where, fs->items[i].code, fs->items[i].what,
                fs->items[i].fix);
    return problems ? 1 : 0;
}

static int dump(const view_t *v, const char *path)
{
    json_object *o = json_object_new_object(), *env = json_object_new_array(), *files = json_object_new_array();
    json_object *addrs = v->addrs_known ? json_object_new_array() : NULL;
    tbm_err_t err = {{0}};
    const char *text;
    size_t i;
    int rc;

    for (i = 0; i < v->n_env; i++)
        json_object_array_add(env, json_object_new_string(v->env[i]));
    for (i = 0; i < v->n_files; i++) {
        json_object *f = json_object_new_object();
        json_object_object_add(f, "path", json_object_new_string(v->files[i].path));
        json_object_object_add(f, "data", json_object_new_string_len(v->files[i].data, (int)v->files[i].len));
        json_object_array_add(files, f);
    }
    for (i = 0; addrs && i < v->n_addrs; i++)
        json_object_array_add(addrs, json_object_new_string(v->addrs[i]));
    json_object_object_add(o, "env", env);
    json_object_object_add(o, "files", files);
    json_object_object_add(o, "addrs", addrs);
    text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    rc = tbm_write_file_atomic(path, text, strlen(text), 0644, &err);
    if (rc < 0)
        fprintf(stderr, "tbm-mlxcheck: %s\n", err.msg);
    json_object_put(o);
    return rc;
}

static int check_self(int argc, char **argv)
{
    view_t v;
    tbm_findings_t fs;
    const char *dump_to = NULL;
    size_t problems;
    char **e;
    int i, rc;

    memset(&v, 0, sizeof(v));
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--local") && local_addrs(&v) < 0)
            return 2;
        else if (!strcmp(argv[i], "--addrs") && i + 1 < argc)
            given_addrs(&v, argv[++i]);
        else if (!strcmp(argv[i], "--dump") && i + 1 < argc)
            dump_to = argv[++i];
        else if (strcmp(argv[i], "--local") != 0)
            return view_free(&v), usage();
    }
    for (e = environ; *e && v.n_env < MAX_ITEMS; e++)
        if (relevant(*e))
            v.env[v.n_env++] = *e;
    read_named_files(&v);
    tbm_findings_init(&fs);
    {
        mlxc_rank_t r = as_rank(&v);
        problems = mlxc_check_rank(&r, &fs);
    }
    rc = report(&fs, problems);
    if (rc == 0)
        printf("tbm-mlxcheck: rank %s of %s: backend %s: ok\n", getenv("TBMESH_RANK"), getenv("TBMESH_SIZE"),
               getenv("TBMESH_BACKEND"));
    if (dump_to && dump(&v, dump_to) < 0)
        rc = 2;
    tbm_findings_free(&fs);
    view_free(&v);
    return rc;
}

static void strings_of(json_object *arr, const char **out, size_t *n)
{
    size_t i, len = json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;

    for (i = 0; i < len && *n < MAX_ITEMS; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        if (json_object_is_type(e, json_type_string))
            out[(*n)++] = json_object_get_string(e);
    }
}

static int load_dump(view_t *v, const char *path)
{
    tbm_err_t err = {{0}};
    size_t len, i, nf;
    char *text = tbm_read_file(path, 16 * FILE_MAX, &len, &err);
    json_object *files;

    memset(v, 0, sizeof(*v));
    v->doc = text ? tbm_json_parse(text, len, &err) : NULL;
    free(text);
    if (!v->doc || !json_object_is_type(v->doc, json_type_object)) {
        fprintf(stderr, "tbm-mlxcheck: %s: %s\n", path, err.msg[0] ? err.msg : "not a dump of tbm-mlxcheck");
        return -1;
    }
    strings_of(tbm_json_typed(v->doc, "env", json_type_array), v->env, &v->n_env);
    files = tbm_json_typed(v->doc, "files", json_type_array);
    nf = files ? json_object_array_length(files) : 0;
    for (i = 0; i < nf && v->n_files < 8; i++) {
        json_object *f = json_object_array_get_idx(files, i), *data = tbm_json_typed(f, "data", json_type_string);
        const char *p = tbm_json_str(f, "path");
        if (!p || !data)
            continue;
        v->files[v->n_files].path = p;
        v->files[v->n_files].data = json_object_get_string(data);
        v->files[v->n_files++].len = (size_t)json_object_get_string_len(data);
    }
    v->addrs_known = tbm_json_typed(v->doc, "addrs", json_type_array) != NULL;
    strings_of(tbm_json_typed(v->doc, "addrs", json_type_array), v->addrs, &v->n_addrs);
    return 0;
}

static int check_job(int argc, char **argv)
{
    size_t n = (size_t)argc - 2, i, problems;
    view_t *v = calloc(n ? n : 1, sizeof(*v));
    mlxc_rank_t *r = calloc(n ? n : 1, sizeof(*r));
    tbm_findings_t fs;
    int rc = 0;

    tbm_findings_init(&fs);
    for (i = 0; v && r && i < n; i++) {
        if (load_dump(&v[i], argv[i + 2]) < 0)
            rc = 2;
        r[i] = as_rank(&v[i]);
    }
    if (!v || !r)
        rc = 2;
    if (rc == 0) {
        problems = mlxc_check_job(r, n, &fs);
        rc = report(&fs, problems);
        if (rc == 0)
            printf("tbm-mlxcheck: job of %zu ranks: ok\n", n);
    }
    for (i = 0; v && i < n; i++)
        json_object_put(v[i].doc);
    free(v);
    free(r);
    tbm_findings_free(&fs);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--job"))
        return argc >= 3 ? check_job(argc, argv) : usage();
    return check_self(argc, argv);
}
