/* inventory.c: `tbmesh inventory`, the admin's view of the lab's cabling. Reads facts documents (what
 * `macnode probe` prints on each Mac), builds and validates the topology (lib/), prints a report, and
 * writes tbmesh.conf, slurm-nodes.conf, gres.conf and cabling.dot (and .svg when Graphviz is there). */
#include "config.h"
#include "inventory.h"
#include "tbmesh.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "run.h"

#define EXIT_UNFIT 1
#define EXIT_USAGE 2
#define EXIT_INPUT 3

#define FACTS_MAX_BYTES (4u << 20)
#define DOT_MS 60000   /* the longest Graphviz may take to draw the cabling */

typedef struct inventory {
    tbm_host_facts_t *hosts;
    size_t n_hosts;
    tbm_conf_t hint;
    int have_hint;
    tbm_topology_t topo;
    tbm_validation_t val;
    tbm_conf_t conf;
} inventory_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tbmesh inventory [--last tbmesh.conf | --hint tbmesh.conf] [--out DIR] [--json] FACTS.json...\n"
            "  Build the lab's Thunderbolt groups from the facts of every Mac (`macnode probe` output, one\n"
            "  file per Mac), validate them against what JACCL and MLX need, and print the report.\n"
            "  --last FILE  the tbmesh.conf in use: keep its group names, modes and settings, and name every\n"
            "               cable it lists that no Mac sees any more (after re-cabling, or to find a pulled one)\n"
            "  --hint FILE  a tbmesh.conf to take group names, modes and settings from, without comparing cables\n"
            "  --out DIR    write tbmesh.conf, slurm-nodes.conf, gres.conf, cabling.dot (and cabling.svg)\n"
            "  --json       the report as JSON\n"
            "  Exit: 0 the lab is fit, 1 it is not (errors found), 2 bad usage, 3 unreadable input.\n");
}

static int load_facts(inventory_t *inv, char **files, size_t n)
{
    tbm_err_t err = { { 0 } };
    size_t i, len;
    char *text;
    int bad = 0;

    inv->hosts = calloc(n ? n : 1, sizeof(*inv->hosts));
    if (!inv->hosts)
        return fprintf(stderr, "tbmesh inventory: out of memory\n"), -1;
    for (i = 0; i < n; i++) {
        text = tbm_read_file(files[i], FACTS_MAX_BYTES, &len, &err);
        if (!text || tbm_facts_from_json(text, len, &inv->hosts[inv->n_hosts], &err) < 0) {
            fprintf(stderr, "tbmesh inventory: %s%s%s (make it with `macnode probe > FILE` on that Mac)\n",
                    text ? files[i] : "", text ? ": " : "", err.msg);
            bad = 1;
        } else {
            inv->n_hosts++;
        }
        free(text);
    }
    return bad ? -1 : 0;
}

static int load_hint(inventory_t *inv, const char *file)
{
    tbm_findings_t errors;
    tbm_err_t err = { { 0 } };
    size_t len, i;
    char *text = tbm_read_file(file, TBM_CONF_MAX_BYTES, &len, &err);

    if (!text)
        return fprintf(stderr, "tbmesh inventory: %s\n", err.msg), -1;
    tbm_findings_init(&errors);
    if (tbm_conf_parse(text, len, file, &inv->hint, &errors, &err) < 0) {
        for (i = 0; i < errors.n; i++)
            fprintf(stderr, "tbmesh inventory: %s: %s (%s)\n", errors.items[i].where, errors.items[i].what,
                    errors.items[i].fix);
        fprintf(stderr, "tbmesh inventory: %s was not used: fix the lines above\n", file);
        free(text);
        tbm_findings_free(&errors);
        return -1;
    }
    inv->have_hint = 1;
    free(text);
    tbm_findings_free(&errors);
    return 0;
}

/* The names of a topology group's hosts as a hostlist expression ("mac[01-04]"). */
static char *group_hosts(const inventory_t *inv, size_t g)
{
    const tbm_group_t *grp = &inv->topo.groups[g];
    char **names = calloc(grp->n_hosts ? grp->n_hosts : 1, sizeof(*names));
    char *list;
    size_t i;

    if (!names)
        return NULL;
    for (i = 0; i < grp->n_hosts; i++)
        names[i] = (char *)tbm_topology_host_name(&inv->topo, grp->hosts[i]);
    list = tbm_hostlist_compress(names, grp->n_hosts);
    free(names);
    return list;
}

/* The tbmesh.conf group of topology group g (found by its first host), or NULL when the inventory left it out
 * (a Mac whose Thunderbolt facts are unknown). */
static const tbm_conf_group_t *conf_group(const inventory_t *inv, size_t g)
{
    int k = tbm_conf_node(&inv->conf, tbm_topology_host_name(&inv->topo, inv->topo.groups[g].hosts[0]));

    return k >= 0 ? &inv->conf.groups[inv->conf.nodes[k].group] : NULL;
}

/* The Macs of a group's RdmaSubset= as a hostlist (malloc'd; "" when none), NULL when out of memory. */
static char *subset_hosts(const inventory_t *inv, const tbm_conf_group_t *cg)
{
    char **names = calloc(cg->caps.n_nodes ? cg->caps.n_nodes : 1, sizeof(*names));
    char *list;
    size_t i, n = 0;

    if (!names)
        return NULL;
    for (i = 0; i < cg->caps.n_nodes; i++)
        if (inv->conf.nodes[cg->nodes[i]].rdma_subset)
            names[n++] = inv->conf.nodes[cg->nodes[i]].name;
    list = tbm_hostlist_compress(names, n);
    free(names);
    return list;
}

static void print_report(const inventory_t *inv)
{
    size_t g, i, b, n_err = tbm_findings_count(&inv->val.findings, TBM_SEV_ERROR);
    char backends[128];

    printf("tbmesh inventory: %zu Macs, %zu cables, %zu groups\n", inv->topo.n_hosts, inv->topo.n_cables,
           inv->conf.n_groups);
    for (g = 0; g < inv->topo.n_groups; g++) {
        const tbm_group_verdict_t *gv = &inv->val.groups[g];
        const tbm_conf_group_t *cg = conf_group(inv, g);
        char *hosts = group_hosts(inv, g);

        if (!cg) {
            printf("left out: %s, in no group (no Thunderbolt facts: probe it again)\n", hosts ? hosts : "?");
            free(hosts);
            continue;
        }
        tbm_backends_format(cg->caps.backends, backends, sizeof(backends));
        printf("group %s: %s of %zu (%s), %s, %s, %s mode; backends: %s\n", cg->caps.name,
               tbm_topo_class_name(inv->topo.groups[g].cls), inv->topo.groups[g].n_hosts, hosts ? hosts : "?",
               tbm_link_name(gv->link), cg->caps.rdma ? "RDMA" : "no RDMA", tbm_mode_name(cg->mode), backends);
        if (cg->n_rdma_subset) {
            char *subset = subset_hosts(inv, cg);
            printf("  RDMA subset: %s (jaccl and jaccl-ring jobs may go there when tbmesh.conf says "
                   "JacclOnSubsets=yes; it says %s)\n", subset ? subset : "?", inv->conf.jaccl_on_subsets ? "yes" : "no");
            free(subset);
        }
        for (b = 0; b < TBM_BACKEND_COUNT; b++)
            if (gv->blocked & TBM_BACKEND_BIT(b))
                printf("  no %s: %s\n", tbm_backend_name((tbm_backend_t)b), gv->why[b]);
        free(hosts);
    }
    for (i = 0; i < inv->val.findings.n; i++) {
        const tbm_finding_t *f = &inv->val.findings.items[i];
        printf("%-7s %s at %s: %s", tbm_severity_name(f->severity), f->code, f->where[0] ? f->where : "-",
               f->what);
        if (f->fix[0])
            printf(" Fix: %s", f->fix);
        putchar('\n');
    }
    printf("verdict: %s (%zu errors, %zu warnings)\n", n_err ? "UNFIT" : "fit", n_err,
           tbm_findings_count(&inv->val.findings, TBM_SEV_WARNING) - n_err);
}

static void print_json(const inventory_t *inv)
{
    json_object *root = json_object_new_object(), *groups = json_object_new_array();
    json_object *findings = tbm_findings_json(&inv->val.findings), *left_out = json_object_new_array(), *o;
    char backends[128];
    size_t g;

    for (g = 0; g < inv->topo.n_groups; g++) {
        const tbm_conf_group_t *cg = conf_group(inv, g);
        char *hosts = group_hosts(inv, g);

        if (!cg) {
            json_object_array_add(left_out, json_object_new_string(hosts ? hosts : ""));
            free(hosts);
            continue;
        }
        o = json_object_new_object();
        tbm_backends_format(cg->caps.backends, backends, sizeof(backends));
        json_object_object_add(o, "name", json_object_new_string(cg->caps.name));
        json_object_object_add(o, "nodes", json_object_new_string(hosts ? hosts : ""));
        json_object_object_add(o, "topology", json_object_new_string(tbm_topo_class_name(inv->topo.groups[g].cls)));
        json_object_object_add(o, "size", json_object_new_int((int)inv->topo.groups[g].n_hosts));
        json_object_object_add(o, "link", json_object_new_string(tbm_link_name(inv->val.groups[g].link)));
        json_object_object_add(o, "rdma", json_object_new_boolean(cg->caps.rdma));
        json_object_object_add(o, "mode", json_object_new_string(tbm_mode_name(cg->mode)));
        json_object_object_add(o, "backends", json_object_new_string(backends));
        if (cg->n_rdma_subset) {
            char *subset = subset_hosts(inv, cg);
            json_object_object_add(o, "rdma_subset", json_object_new_string(subset ? subset : ""));
            free(subset);
        }
        json_object_array_add(groups, o);
        free(hosts);
    }
    json_object_object_add(root, "macs", json_object_new_int((int)inv->topo.n_hosts));
    json_object_object_add(root, "cables", json_object_new_int((int)inv->topo.n_cables));
    json_object_object_add(root, "fit", json_object_new_boolean(tbm_validation_fit(&inv->val)));
    json_object_object_add(root, "groups", groups);
    json_object_object_add(root, "left_out", left_out);   /* Macs in no group: their Thunderbolt facts are unknown */
    json_object_object_add(root, "findings", findings);
    printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(root);
}

static int write_one(const char *dir, const char *name, const char *text)
{
    char path[4096];
    tbm_err_t err = { { 0 } };

    if (!text)
        return fprintf(stderr, "tbmesh inventory: cannot make %s: out of memory\n", name), -1;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (tbm_write_file_atomic(path, text, strlen(text), 0644, &err) < 0)
        return fprintf(stderr, "tbmesh inventory: %s\n", err.msg), -1;
    return 0;
}

/* cabling.svg from cabling.dot with Graphviz's dot, when it is installed (no shell, DOT_MS at most). */
static void draw_svg(const char *dir)
{
    extern char **environ;
    char dot[4096], svg[4096];
    const char *argv[] = { "dot", "-Tsvg", "-o", svg, dot, NULL };
    run_opts_t o = { .env = environ, .timeout_ms = DOT_MS, .truncate = 1, .stderr_to = RUN_STDERR_PASS };
    run_out_t r;
    int rc;

    snprintf(dot, sizeof(dot), "%s/cabling.dot", dir);
    snprintf(svg, sizeof(svg), "%s/cabling.svg", dir);
    rc = run_command(argv, &o, &r, NULL);
    if (rc != 0 && r.status >= 0)   /* it ran (no Graphviz: the DOT file is the drawing) */
        fprintf(stderr, "tbmesh inventory: dot could not draw %s (the DOT file is still there)\n", svg);
    run_out_free(&r);
}

static int write_outputs(const inventory_t *inv, const char *dir)
{
    tbm_err_t err = { { 0 } };
    char *conf = tbm_conf_write(&inv->conf), *nodes = tbm_slurm_node_lines(&inv->topo, &inv->conf, &err);
    char *gres = tbm_gres_conf_lines(&inv->conf), *dot = tbm_cabling_dot(&inv->topo, &inv->val, &inv->conf);
    int rc = 0;

    if (!nodes) {
        fprintf(stderr, "tbmesh inventory: slurm node lines: %s\n", err.msg);
        rc = -1;
    }
    if (rc == 0 && (write_one(dir, "tbmesh.conf", conf) < 0 || write_one(dir, "slurm-nodes.conf", nodes) < 0 ||
                    write_one(dir, "gres.conf", gres) < 0 || write_one(dir, "cabling.dot", dot) < 0))
        rc = -1;
    if (rc == 0)
        draw_svg(dir);
    free(conf);
    free(nodes);
    free(gres);
    free(dot);
    return rc;
}

static void inventory_free(inventory_t *inv)
{
    tbm_conf_free(&inv->conf);
    tbm_validation_free(&inv->val);
    tbm_topology_free(&inv->topo);
    if (inv->have_hint)
        tbm_conf_free(&inv->hint);
    free(inv->hosts);
}

int inventory_main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "hint", required_argument, NULL, 'H' }, { "last", required_argument, NULL, 'l' },
        { "out", required_argument, NULL, 'o' },
        { "json", no_argument, NULL, 'j' },       { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *hint = NULL, *out = NULL;
    inventory_t inv;
    tbm_err_t err = { { 0 } };
    int json = 0, compare = 0, c, rc;
    struct stat st;

    memset(&inv, 0, sizeof(inv));
    tbm_conf_init(&inv.hint);
    while ((c = getopt_long(argc, argv, "H:l:o:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'H':
        case 'l':
            if (hint) {
                fprintf(stderr, "tbmesh inventory: give one of --last and --hint, once\n");
                return EXIT_USAGE;
            }
            hint = optarg;
            compare = c == 'l';
            break;
        case 'o': out = optarg; break;
        case 'j': json = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "tbmesh inventory: no facts given; pass one `macnode probe` JSON file per Mac\n");
        return EXIT_USAGE;
    }
    if (out && (stat(out, &st) < 0 || !S_ISDIR(st.st_mode))) {
        fprintf(stderr, "tbmesh inventory: --out %s is not a folder; create it first\n", out);
        return EXIT_USAGE;
    }
    tbm_conf_free(&inv.hint);
    if (load_facts(&inv, argv + optind, (size_t)(argc - optind)) < 0 || (hint && load_hint(&inv, hint) < 0)) {
        inventory_free(&inv);
        return EXIT_INPUT;
    }
    if (tbm_topology_build(&inv.topo, inv.hosts, inv.n_hosts, &err) < 0 ||
        tbm_validate(&inv.topo, &inv.val, &err) < 0 ||
        tbm_conf_from_topology(&inv.topo, &inv.val, inv.have_hint ? &inv.hint : NULL, &inv.conf, &err) < 0) {
        fprintf(stderr, "tbmesh inventory: %s\n", err.msg);
        inventory_free(&inv);
        return EXIT_INPUT;
    }
    tbm_netplan_drop_broken(&inv.conf, &inv.val.findings);   /* never written as if they were good */
    if (compare)
        tbm_cables_diff(&inv.hint, &inv.conf, &inv.val.findings);
    if (json)
        print_json(&inv);
    else
        print_report(&inv);
    rc = tbm_validation_fit(&inv.val) ? 0 : EXIT_UNFIT;
    if (out && write_outputs(&inv, out) < 0)
        rc = EXIT_INPUT;
    inventory_free(&inv);
    return rc;
}
