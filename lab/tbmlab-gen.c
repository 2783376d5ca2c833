/* tbmlab-gen.c: turns the lab spec (lab/lab.conf) into the wiring plan the lab scripts execute, the replayed
 * macOS command outputs of every simulated Mac (agreeing exactly with that wiring) and slurm.conf node lines. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"

static const char usage_text[] =
"Usage: tbmlab-gen plan LAB.CONF [--cut NODE:IFACE]...\n"
"       tbmlab-gen outputs LAB.CONF DIR [--cut NODE:IFACE]...\n"
"       tbmlab-gen slurm-nodes LAB.CONF\n"
"       tbmlab-gen --help\n"
"\n"
"Turns the lab spec into what the embedded lab needs. Output is tab-separated, one record a line, in a\n"
"stable order (spec order of groups and nodes, then cable order).\n"
"\n"
"LAB.CONF: one record a line, Key=Value pairs (values with spaces in \"quotes\"), '#' starts a comment:\n"
"  Group=NAME Mode=bridge|direct Wiring=mesh|ring Nodes=mac01,mac02,... ModelName=\"Mac Studio\"\n"
"    ModelId=Mac15,14 Chip=\"Apple M3 Ultra\" MemoryGiB=N PCores=N ECores=N OS=26.2 Build=25C56\n"
"    LinkGbps=40|80 Rdma=yes|no [Ports=N, else known from ModelId]\n"
"  Linux=lnx01[,lnx02...]\n"
"  Node names end in their number (mac01); a node belongs to one group.\n"
"\n"
"plan: the wiring the lab scripts build, records (fields separated by TAB):\n"
"  node   NAME group=G mode=bridge|direct mgmt=10.77.0.X mac=EN0_HWADDR port=SLURMD_PORT\n"
"  linux  NAME mgmt=10.77.0.X port=16818\n"
"  cable  MAC_A IFACE_A ADDR_A/30 HWADDR_A MAC_B IFACE_B ADDR_B/30 HWADDR_B state=up|cut\n"
"  Management addresses: macNN -> 10.77.0.(10+NN); Linux nodes 10.77.0.21, .22, ... in spec order.\n"
"  Slurmd ports: bridge-mode Macs 16830+i (i = 1, 2, ... over bridge-mode Macs), others 16818.\n"
"  Cables: Wiring=mesh joins every pair once, Wiring=ring joins node i to node i+1 (mod n). Cable c\n"
"  (1-based, counted over all groups) is 169.254.c.1/30 - 169.254.c.2/30. On each Mac the cables take\n"
"  receptacles 1, 2, ... in cable order; receptacle k (\"Thunderbolt k\") is interface en(k+1).\n"
"\n"
"outputs: writes DIR/NODE/replay/ for every Mac: system_profiler_SPThunderboltDataType.json,\n"
"  networksetup_listallhardwareports.txt, ifconfig.txt, ibv_devices.txt, rdma_ctl_status.txt, sw_vers.txt,\n"
"  sysctl.txt (hw.memsize, machdep.cpu.brand_string, hw.model), sysctl_perflevels.txt, hostname.txt.\n"
"  Every receptacle of the model is a bus; a cabled one holds the peer Mac with the peer port's domain UUID.\n"
"  Rdma=yes: ibv_devices lists rdma_enX for every Thunderbolt port, rdma_ctl says enabled. Rdma=no: no\n"
"  devices; rdma_ctl says enabled on Thunderbolt 4 (LinkGbps=40, as real TB4 Macs do), else disabled.\n"
"\n"
"slurm-nodes: slurm.conf NodeName lines for every node, then PartitionName lines (mac, linux).\n"
"\n"
"--cut NODE:IFACE pulls the cable plugged into IFACE of NODE (both ends read as disconnected).\n"
"\n"
"Exit status: 0 done, 1 cannot write output, 2 bad spec or bad arguments (messages on stderr).\n";

enum {
    LAB_MAX_GROUPS = 16,
    LAB_MAX_MACS = 64,
    LAB_MAX_LINUX = 16,
    LAB_MAX_PORTS = 8,
    LAB_MAX_CABLES = 254,
    LAB_NAME_MAX = 32,
    LAB_TEXT_MAX = 64,
    LAB_LINE_MAX = 4096,
    LAB_DIR_MAX = 3000,         /* output directory path, leaving room for node and file names */
    LAB_DIRECT_PORT = 16818,
    LAB_BRIDGE_PORT_BASE = 16830,
    LAB_MAC_MGMT_BASE = 10,
    LAB_LINUX_MGMT_BASE = 21,
};

/* The keys of a Group= line, in the order of lab_group_t's raw values. */
enum group_key {
    GK_GROUP, GK_MODE, GK_WIRING, GK_NODES, GK_MODEL_NAME, GK_MODEL_ID, GK_CHIP, GK_MEMORY, GK_PCORES,
    GK_ECORES, GK_OS, GK_BUILD, GK_LINK, GK_RDMA, GK_PORTS, GK_COUNT
};

static const char *const group_keys[GK_COUNT] = {
    "Group", "Mode", "Wiring", "Nodes", "ModelName", "ModelId", "Chip", "MemoryGiB", "PCores",
    "ECores", "OS", "Build", "LinkGbps", "Rdma", "Ports"
};

typedef struct lab_group {
    char name[LAB_NAME_MAX];
    char model_name[LAB_TEXT_MAX], model_id[LAB_TEXT_MAX], chip[LAB_TEXT_MAX];
    char os[LAB_NAME_MAX], build[LAB_NAME_MAX];
    int bridge, ring, rdma;
    unsigned mem_gib, pcores, ecores, link_gbps, ports;
    int line;
} lab_group_t;

typedef struct lab_mac {
    char name[LAB_NAME_MAX];
    int group;
    unsigned mgmt;              /* last octet of the management address */
    unsigned port;              /* slurmd port */
    unsigned hostno;            /* 1-based over all nodes, for hardware addresses */
    int cable[LAB_MAX_PORTS + 1];   /* by receptacle (1-based): cable index or -1 */
    unsigned used;              /* receptacles taken so far */
} lab_mac_t;

typedef struct lab_linux {
    char name[LAB_NAME_MAX];
    unsigned mgmt, hostno;
} lab_linux_t;

typedef struct lab_cable {
    int mac[2];
    unsigned rcpt[2];
    int cut;
} lab_cable_t;

typedef struct lab {
    lab_group_t groups[LAB_MAX_GROUPS];
    lab_mac_t macs[LAB_MAX_MACS];
    lab_linux_t linux_nodes[LAB_MAX_LINUX];
    lab_cable_t cables[LAB_MAX_CABLES];
    int ngroups, nmacs, nlinux, ncables;
} lab_t;

/* Known models: Thunderbolt receptacles on the back and front (Ports= overrides). */
static const struct { const char *model_id; unsigned ports; } known_models[] = {
    { "Mac15,14", 6 },  /* Mac Studio, M3 Ultra: six Thunderbolt 5 */
    { "Mac16,9", 4 },   /* Mac Studio, M4 Max: four Thunderbolt 5 */
    { "Mac16,10", 3 },  /* Mac mini, M4: three Thunderbolt 4 */
    { "Mac16,11", 3 },  /* Mac mini, M4 Pro: three Thunderbolt 5 */
};

/* ---- small helpers ---------------------------------------------------------------------------------- */

static int copy_text(char *dst, size_t size, const char *src, const char *key, tbm_err_t *err)
{
    size_t n = strlen(src);
    if (n == 0)
        return tbm_errprintf(err, "%s is empty; give it a value", key);
    if (n >= size)
        return tbm_errprintf(err, "%s is longer than %zu characters; shorten it", key, size - 1);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)src[i] < 0x20 || src[i] == '\t' || src[i] == '"' || src[i] == '\\')
            return tbm_errprintf(err, "%s has a control character, quote or backslash; use plain text", key);
    memcpy(dst, src, n + 1);
    return 0;
}

static int parse_uint(const char *s, unsigned min, unsigned max, const char *key, unsigned *out, tbm_err_t *err)
{
    unsigned long v = 0;
    if (*s == '\0')
        return tbm_errprintf(err, "%s is empty; give a number from %u to %u", key, min, max);
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9' || v > max)
            return tbm_errprintf(err, "%s=%s is not a number from %u to %u; fix the value", key, s, min, max);
        v = v * 10 + (unsigned long)(*p - '0');
    }
    if (v < min || v > max)
        return tbm_errprintf(err, "%s=%s is not a number from %u to %u; fix the value", key, s, min, max);
    *out = (unsigned)v;
    return 0;
}

/* One of two words; sets *out to 1 for `yes_word`, 0 for `no_word`. */
static int parse_choice(const char *s, const char *yes_word, const char *no_word, const char *key, int *out,
                        tbm_err_t *err)
{
    if (strcmp(s, yes_word) == 0 || strcmp(s, no_word) == 0) {
        *out = strcmp(s, yes_word) == 0;
        return 0;
    }
    return tbm_errprintf(err, "%s=%s is not valid; use %s=%s or %s=%s", key, s, key, yes_word, key, no_word);
}

/* Words made of the characters in `allowed` (plus letters and digits). */
static int check_word(const char *s, const char *allowed, const char *key, tbm_err_t *err)
{
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr(allowed, *p)))
            return tbm_errprintf(err, "%s=%s has the character '%c'; use letters, digits%s%s", key, s, *p,
                                 *allowed ? " and " : "", allowed);
    return 0;
}

/* A node name: lower-case letter first, then [a-z0-9-], ending in its number (mac01 -> 1). */
static int check_node_name(const char *s, unsigned *number, tbm_err_t *err)
{
    size_t n = strlen(s), digits = 0;
    if (n == 0 || n >= LAB_NAME_MAX)
        return tbm_errprintf(err, "node name '%s' must have 1 to %d characters; rename it", s, LAB_NAME_MAX - 1);
    if (s[0] < 'a' || s[0] > 'z')
        return tbm_errprintf(err, "node name '%s' must start with a lower-case letter; rename it", s);
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return tbm_errprintf(err, "node name '%s' may hold only a-z, 0-9 and '-'; rename it", s);
    while (digits < n && s[n - 1 - digits] >= '0' && s[n - 1 - digits] <= '9')
        digits++;
    if (digits == 0 || digits > 3)
        return tbm_errprintf(err, "node name '%s' must end in its number (mac01); rename it", s);
    *number = (unsigned)strtoul(s + n - digits, NULL, 10);
    return 0;
}

static int node_known(const lab_t *lab, const char *name)
{
    for (int i = 0; i < lab->nmacs; i++)
        if (strcmp(lab->macs[i].name, name) == 0)
            return 1;
    for (int i = 0; i < lab->nlinux; i++)
        if (strcmp(lab->linux_nodes[i].name, name) == 0)
            return 1;
    return 0;
}

static int mgmt_taken(const lab_t *lab, unsigned octet)
{
    for (int i = 0; i < lab->nmacs; i++)
        if (lab->macs[i].mgmt == octet)
            return 1;
    for (int i = 0; i < lab->nlinux; i++)
        if (lab->linux_nodes[i].mgmt == octet)
            return 1;
    return 0;
}

/* ---- spec parsing ----------------------------------------------------------------------------------- */

/* One Key=Value of a spec line (both point into the line). */
typedef struct lab_pair { char *key, *value; } lab_pair_t;

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Cuts the value that starts at *pp (plain or "quoted") out of the line; *pp moves past it. */
static char *cut_value(char **pp, const char *key, tbm_err_t *err)
{
    char *p = *pp, *value = p;
    if (*p == '"') {
        value = ++p;
        while (*p && *p != '"')
            p++;
        if (*p != '"')
            return tbm_errprintf(err, "%s has an unterminated quote; close it with '\"'", key), NULL;
        *p++ = '\0';
        if (*p && !is_blank(*p))
            return tbm_errprintf(err, "%s: text right after the closing quote; put a space after it", key), NULL;
    } else {
        while (*p && !is_blank(*p))
            p++;
    }
    if (*p)
        *p++ = '\0';
    *pp = p;
    return value;
}

/* Splits one line into Key=Value pairs (values may be "quoted"); '#' starts a comment. */
static int split_pairs(char *line, lab_pair_t *pairs, int max, int *count, tbm_err_t *err)
{
    char *p = line;
    *count = 0;
    for (;;) {
        while (is_blank(*p))
            p++;
        if (*p == '\0' || *p == '#')
            return 0;
        if (*count == max)
            return tbm_errprintf(err, "more than %d Key=Value pairs; put one group per line", max);
        char *key = p;
        while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))
            p++;
        if (p == key || *p != '=') {
            size_t show = strcspn(key, " \t\r\n");
            return tbm_errprintf(err, "expected Key=Value at \"%.*s\"; write Key=Value pairs separated by spaces",
                                 (int)(show > 20 ? 20 : show), key);
        }
        *p++ = '\0';
        char *value = cut_value(&p, key, err);
        if (!value)
            return -1;
        pairs[(*count)++] = (lab_pair_t){ key, value };
    }
}

/* Adds each comma-separated node name of `list` through `add` (which checks and records it). */
static int for_each_name(lab_t *lab, char *list, int group, const char *key,
                         int (*add)(lab_t *, const char *, int, tbm_err_t *), tbm_err_t *err)
{
    if (*list == '\0')
        return tbm_errprintf(err, "%s is empty; list node names separated by commas", key);
    for (char *name = list, *next; name; name = next) {
        next = strchr(name, ',');
        if (next)
            *next++ = '\0';
        if (*name == '\0')
            return tbm_errprintf(err, "%s has an empty name; separate names by single commas", key);
        unsigned number;
        if (check_node_name(name, &number, err) < 0)
            return -1;
        if (node_known(lab, name))
            return tbm_errprintf(err, "node %s is listed twice; a node belongs to one group only", name);
        if (add(lab, name, group, err) < 0)
            return -1;
    }
    return 0;
}

static int add_mac(lab_t *lab, const char *name, int group, tbm_err_t *err)
{
    unsigned number = 0;
    if (lab->nmacs == LAB_MAX_MACS)
        return tbm_errprintf(err, "more than %d Macs; make the lab smaller", LAB_MAX_MACS);
    check_node_name(name, &number, NULL);
    if (number < 1 || LAB_MAC_MGMT_BASE + number > 254)
        return tbm_errprintf(err, "node %s: its number must be 1 to %d (mgmt 10.77.0.(10+N)); renumber it", name,
                             254 - LAB_MAC_MGMT_BASE);
    if (mgmt_taken(lab, LAB_MAC_MGMT_BASE + number))
        return tbm_errprintf(err, "node %s would get mgmt address 10.77.0.%u, already taken; renumber it", name,
                             LAB_MAC_MGMT_BASE + number);
    lab_mac_t *m = &lab->macs[lab->nmacs++];
    memset(m, 0, sizeof(*m));
    snprintf(m->name, sizeof(m->name), "%s", name);
    m->group = group;
    m->mgmt = LAB_MAC_MGMT_BASE + number;
    for (int r = 0; r <= LAB_MAX_PORTS; r++)
        m->cable[r] = -1;
    return 0;
}

static int add_linux(lab_t *lab, const char *name, int group, tbm_err_t *err)
{
    unsigned octet = LAB_LINUX_MGMT_BASE + (unsigned)lab->nlinux;
    if (lab->nlinux == LAB_MAX_LINUX)
        return tbm_errprintf(err, "more than %d Linux nodes; make the lab smaller", LAB_MAX_LINUX);
    if (mgmt_taken(lab, octet))
        return tbm_errprintf(err, "Linux node %s would get mgmt address 10.77.0.%u, already a Mac's; renumber "
                             "that Mac below %u", name, octet, LAB_LINUX_MGMT_BASE - LAB_MAC_MGMT_BASE);
    lab_linux_t *l = &lab->linux_nodes[lab->nlinux++];
    snprintf(l->name, sizeof(l->name), "%s", name);
    l->mgmt = octet;
    return 0;
}

static int default_ports(const char *model_id, unsigned *ports, tbm_err_t *err)
{
    for (size_t i = 0; i < sizeof(known_models) / sizeof(known_models[0]); i++)
        if (strcmp(known_models[i].model_id, model_id) == 0) {
            *ports = known_models[i].ports;
            return 0;
        }
    return tbm_errprintf(err, "ModelId=%s is not a model this tool knows; add Ports=N (its Thunderbolt receptacles)",
                         model_id);
}

/* Reads the raw values of a Group= line into a group (numbers and words validated). */
static int fill_group(lab_group_t *g, char *const raw[GK_COUNT], tbm_err_t *err)
{
    if (copy_text(g->name, sizeof(g->name), raw[GK_GROUP], "Group", err) < 0 ||
        check_word(g->name, "-", "Group", err) < 0 ||
        parse_choice(raw[GK_MODE], "bridge", "direct", "Mode", &g->bridge, err) < 0 ||
        parse_choice(raw[GK_WIRING], "ring", "mesh", "Wiring", &g->ring, err) < 0 ||
        parse_choice(raw[GK_RDMA], "yes", "no", "Rdma", &g->rdma, err) < 0 ||
        copy_text(g->model_name, sizeof(g->model_name), raw[GK_MODEL_NAME], "ModelName", err) < 0 ||
        copy_text(g->model_id, sizeof(g->model_id), raw[GK_MODEL_ID], "ModelId", err) < 0 ||
        check_word(g->model_id, ",", "ModelId", err) < 0 ||
        copy_text(g->chip, sizeof(g->chip), raw[GK_CHIP], "Chip", err) < 0 ||
        copy_text(g->os, sizeof(g->os), raw[GK_OS], "OS", err) < 0 ||
        check_word(g->os, ".", "OS", err) < 0 ||
        copy_text(g->build, sizeof(g->build), raw[GK_BUILD], "Build", err) < 0 ||
        check_word(g->build, "", "Build", err) < 0 ||
        parse_uint(raw[GK_MEMORY], 8, 4096, "MemoryGiB", &g->mem_gib, err) < 0 ||
        parse_uint(raw[GK_PCORES], 1, 256, "PCores", &g->pcores, err) < 0 ||
        parse_uint(raw[GK_ECORES], 0, 256, "ECores", &g->ecores, err) < 0 ||
        parse_uint(raw[GK_LINK], 40, 80, "LinkGbps", &g->link_gbps, err) < 0)
        return -1;
    if (g->link_gbps != 40 && g->link_gbps != 80)
        return tbm_errprintf(err, "LinkGbps=%u is not valid; use 40 (Thunderbolt 4) or 80 (Thunderbolt 5)",
                             g->link_gbps);
    if (raw[GK_PORTS])
        return parse_uint(raw[GK_PORTS], 1, LAB_MAX_PORTS, "Ports", &g->ports, err);
    return default_ports(g->model_id, &g->ports, err);
}

static int group_known(const lab_t *lab, const char *name)
{
    for (int i = 0; i < lab->ngroups; i++)
        if (strcmp(lab->groups[i].name, name) == 0)
            return 1;
    return 0;
}

/* Takes the next free receptacle of a Mac for cable `c`. */
static int plug(lab_t *lab, int mac, int c, unsigned *rcpt, tbm_err_t *err)
{
    lab_mac_t *m = &lab->macs[mac];
    const lab_group_t *g = &lab->groups[m->group];
    if (m->used == g->ports)
        return tbm_errprintf(err, "%s runs out of Thunderbolt ports (it has %u); use Wiring=ring, fewer nodes or "
                             "a larger Ports=", m->name, g->ports);
    *rcpt = ++m->used;
    m->cable[*rcpt] = c;
    return 0;
}

static int add_cable(lab_t *lab, int a, int b, tbm_err_t *err)
{
    if (lab->ncables == LAB_MAX_CABLES)
        return tbm_errprintf(err, "more than %d cables in the lab; make the groups smaller", LAB_MAX_CABLES);
    int c = lab->ncables;
    lab_cable_t *cb = &lab->cables[c];
    cb->mac[0] = a;
    cb->mac[1] = b;
    cb->cut = 0;
    if (plug(lab, a, c, &cb->rcpt[0], err) < 0 || plug(lab, b, c, &cb->rcpt[1], err) < 0)
        return -1;
    lab->ncables++;
    return 0;
}

/* Cables of the group whose Macs are lab->macs[first .. first+n-1]. */
static int wire_group(lab_t *lab, const lab_group_t *g, int first, int n, tbm_err_t *err)
{
    if (g->ring && n < 3)
        return tbm_errprintf(err, "Wiring=ring needs at least 3 nodes, this group has %d; add nodes or use "
                             "Wiring=mesh", n);
    if (!g->ring && n < 2)
        return tbm_errprintf(err, "Wiring=mesh needs at least 2 nodes; add nodes");
    for (int i = 0; i < n; i++) {
        if (g->ring) {
            if (add_cable(lab, first + i, first + (i + 1) % n, err) < 0)
                return -1;
            continue;
        }
        for (int j = i + 1; j < n; j++)
            if (add_cable(lab, first + i, first + j, err) < 0)
                return -1;
    }
    return 0;
}

static int parse_group_line(lab_t *lab, lab_pair_t *pairs, int npairs, tbm_err_t *err)
{
    char *raw[GK_COUNT] = { 0 };
    for (int i = 0; i < npairs; i++) {
        int k = 0;
        while (k < GK_COUNT && strcmp(group_keys[k], pairs[i].key) != 0)
            k++;
        if (k == GK_COUNT)
            return tbm_errprintf(err, "unknown key '%s' on a Group line; keys are Group Mode Wiring Nodes ModelName "
                                 "ModelId Chip MemoryGiB PCores ECores OS Build LinkGbps Rdma [Ports]", pairs[i].key);
        if (raw[k])
            return tbm_errprintf(err, "%s is given twice; keep one", pairs[i].key);
        raw[k] = pairs[i].value;
    }
    for (int k = 0; k < GK_PORTS; k++)
        if (!raw[k])
            return tbm_errprintf(err, "Group line without %s=; add it", group_keys[k]);
    if (lab->ngroups == LAB_MAX_GROUPS)
        return tbm_errprintf(err, "more than %d groups; make the lab smaller", LAB_MAX_GROUPS);
    lab_group_t *g = &lab->groups[lab->ngroups];
    memset(g, 0, sizeof(*g));
    if (fill_group(g, raw, err) < 0)
        return -1;
    if (group_known(lab, g->name))
        return tbm_errprintf(err, "group %s is defined twice; give each group its own name", g->name);
    int first = lab->nmacs;
    if (for_each_name(lab, raw[GK_NODES], lab->ngroups, "Nodes", add_mac, err) < 0)
        return -1;
    lab->ngroups++;
    return wire_group(lab, g, first, lab->nmacs - first, err);
}

static int parse_line(lab_t *lab, char *line, tbm_err_t *err)
{
    lab_pair_t pairs[GK_COUNT + 1];
    int n;
    if (split_pairs(line, pairs, GK_COUNT + 1, &n, err) < 0)
        return -1;
    if (n == 0)
        return 0;
    if (strcmp(pairs[0].key, "Group") == 0)
        return parse_group_line(lab, pairs, n, err);
    if (strcmp(pairs[0].key, "Linux") == 0) {
        if (n > 1)
            return tbm_errprintf(err, "unexpected %s= on a Linux line; a Linux line holds only Linux=NAME[,NAME]",
                                 pairs[1].key);
        return for_each_name(lab, pairs[0].value, -1, "Linux", add_linux, err);
    }
    return tbm_errprintf(err, "line starts with %s=; a line starts with Group= or Linux=", pairs[0].key);
}

/* Numbers the nodes: hardware-address host numbers and slurmd ports. */
static void number_nodes(lab_t *lab)
{
    unsigned bridge_index = 0;
    for (int i = 0; i < lab->nmacs; i++) {
        lab_mac_t *m = &lab->macs[i];
        m->hostno = (unsigned)i + 1;
        m->port = lab->groups[m->group].bridge ? LAB_BRIDGE_PORT_BASE + ++bridge_index : LAB_DIRECT_PORT;
    }
    for (int i = 0; i < lab->nlinux; i++)
        lab->linux_nodes[i].hostno = (unsigned)(lab->nmacs + i + 1);
}

static int lab_load(lab_t *lab, const char *path)
{
    tbm_err_t err = { { 0 } };
    char line[LAB_LINE_MAX];
    int lineno = 0, rc = 0;
    FILE *f = fopen(path, "r");
    memset(lab, 0, sizeof(*lab));
    if (!f) {
        fprintf(stderr, "%s: cannot open: %s; give the path of the lab spec\n", path, strerror(errno));
        return -1;
    }
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f))
            rc = tbm_errprintf(&err, "line longer than %d characters; split it", LAB_LINE_MAX - 2);
        else
            rc = parse_line(lab, line, &err);
    }
    fclose(f);
    if (rc < 0) {
        fprintf(stderr, "%s:%d: %s\n", path, lineno, err.msg);
        return -1;
    }
    if (lab->nmacs == 0) {
        fprintf(stderr, "%s: no Group= line; describe at least one group of Macs\n", path);
        return -1;
    }
    number_nodes(lab);
    return 0;
}

/* ---- cuts ------------------------------------------------------------------------------------------- */

static int find_mac(const lab_t *lab, const char *name)
{
    for (int i = 0; i < lab->nmacs; i++)
        if (strcmp(lab->macs[i].name, name) == 0)
            return i;
    return -1;
}

/* --cut NODE:enX marks the cable in that interface as pulled. */
static int apply_cut(lab_t *lab, const char *spec)
{
    char name[LAB_NAME_MAX];
    const char *colon = strchr(spec, ':');
    unsigned ifno = 0;
    if (!colon || (size_t)(colon - spec) >= sizeof(name) || strncmp(colon + 1, "en", 2) != 0 ||
        parse_uint(colon + 3, 2, LAB_MAX_PORTS + 1, "interface", &ifno, NULL) < 0) {
        fprintf(stderr, "tbmlab-gen: --cut %s: expected NODE:enN (e.g. mac01:en2); fix the argument\n", spec);
        return -1;
    }
    memcpy(name, spec, (size_t)(colon - spec));
    name[colon - spec] = '\0';
    int mac = find_mac(lab, name);
    if (mac < 0) {
        fprintf(stderr, "tbmlab-gen: --cut %s: no Mac named %s in the spec; name a Mac of lab.conf\n", spec, name);
        return -1;
    }
    unsigned rcpt = ifno - 1;
    if (rcpt > lab->groups[lab->macs[mac].group].ports || lab->macs[mac].cable[rcpt] < 0) {
        fprintf(stderr, "tbmlab-gen: --cut %s: %s has no cable in en%u; name a cabled end (see `tbmlab-gen plan`)\n",
                spec, name, ifno);
        return -1;
    }
    lab->cables[lab->macs[mac].cable[rcpt]].cut = 1;
    return 0;
}

/* ---- derived values --------------------------------------------------------------------------------- */

/* Hardware address of interface `ifno` of host `hostno`: locally administered, unique per (host, iface). */
static void hwaddr(char out[18], unsigned hostno, unsigned ifno)
{
    snprintf(out, 18, "02:7b:%02x:%02x:00:%02x", (hostno >> 8) & 0xff, hostno & 0xff, ifno & 0xff);
}

/* FNV-1a over the string, then a mixing step so that near names give unrelated bits. */
static uint64_t hash64(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

/* A stable UUID derived from a host name and what it names ("receptacle-2", "service_ip"): the Thunderbolt
 * domain UUID of a port, or the UUID of a service. */
static void name_uuid(char out[37], const char *host, const char *what)
{
    char key[LAB_NAME_MAX + 32];
    snprintf(key, sizeof(key), "%s/%s", host, what);
    uint64_t hi = hash64(14695981039346656037ULL, key);
    uint64_t lo = hash64(hi ^ 0x74626d6573680000ULL, key);
    /* Shaped like the random (version 4) UUIDs macOS uses. */
    snprintf(out, 37, "%08X-%04X-%04X-%04X-%012llX", (unsigned)(hi >> 32), (unsigned)(hi >> 16) & 0xffff,
             0x4000u | ((unsigned)hi & 0x0fff), 0x8000u | ((unsigned)(lo >> 48) & 0x3fff),
             (unsigned long long)(lo & 0xffffffffffffULL));
}

/* This Mac's end of cable c: 0 or 1. */
static int cable_end(const lab_cable_t *cb, int mac)
{
    return cb->mac[0] == mac ? 0 : 1;
}

static const lab_group_t *group_of(const lab_t *lab, int mac)
{
    return &lab->groups[lab->macs[mac].group];
}

/* The cable in a receptacle when it is plugged and not cut, else NULL. */
static const lab_cable_t *live_cable(const lab_t *lab, int mac, unsigned rcpt)
{
    int c = lab->macs[mac].cable[rcpt];
    return c >= 0 && !lab->cables[c].cut ? &lab->cables[c] : NULL;
}

/* ---- plan ------------------------------------------------------------------------------------------- */

static void print_plan(const lab_t *lab, FILE *out)
{
    char hw[18], hwb[18];
    for (int i = 0; i < lab->nmacs; i++) {
        const lab_mac_t *m = &lab->macs[i];
        hwaddr(hw, m->hostno, 0);
        fprintf(out, "node\t%s\tgroup=%s\tmode=%s\tmgmt=10.77.0.%u\tmac=%s\tport=%u\n", m->name,
                group_of(lab, i)->name, group_of(lab, i)->bridge ? "bridge" : "direct", m->mgmt, hw, m->port);
    }
    for (int i = 0; i < lab->nlinux; i++)
        fprintf(out, "linux\t%s\tmgmt=10.77.0.%u\tport=%d\n", lab->linux_nodes[i].name, lab->linux_nodes[i].mgmt,
                LAB_DIRECT_PORT);
    for (int c = 0; c < lab->ncables; c++) {
        const lab_cable_t *cb = &lab->cables[c];
        const lab_mac_t *a = &lab->macs[cb->mac[0]], *b = &lab->macs[cb->mac[1]];
        hwaddr(hw, a->hostno, cb->rcpt[0] + 1);
        hwaddr(hwb, b->hostno, cb->rcpt[1] + 1);
        fprintf(out, "cable\t%s\ten%u\t169.254.%d.1/30\t%s\t%s\ten%u\t169.254.%d.2/30\t%s\tstate=%s\n", a->name,
                cb->rcpt[0] + 1, c + 1, hw, b->name, cb->rcpt[1] + 1, c + 1, hwb, cb->cut ? "cut" : "up");
    }
}

/* ---- slurm-nodes ------------------------------------------------------------------------------------ */

/* "26.2" -> "26_2" for a Slurm feature name. */
static void feature_word(char *out, size_t size, const char *s)
{
    snprintf(out, size, "%s", s);
    for (char *p = out; *p; p++)
        if (*p == '.' || *p == '-')
            *p = '_';
}

static void print_slurm_nodes(const lab_t *lab, FILE *out)
{
    char gname[LAB_NAME_MAX], os[LAB_NAME_MAX];
    for (int i = 0; i < lab->nmacs; i++) {
        const lab_mac_t *m = &lab->macs[i];
        const lab_group_t *g = group_of(lab, i);
        unsigned mib = g->mem_gib * 1024;
        feature_word(gname, sizeof(gname), g->name);
        feature_word(os, sizeof(os), g->os);
        fprintf(out, "NodeName=%s NodeAddr=10.77.0.%u Port=%u CPUs=%u RealMemory=%u Gres=tbmesh:1 "
                "Features=tbmesh,tbmesh_%s%s,macos_%s State=UNKNOWN\n", m->name, g->bridge ? 1 : m->mgmt, m->port,
                g->pcores + g->ecores, mib - mib / 16, gname, g->rdma ? ",rdma" : "", os);
    }
    for (int i = 0; i < lab->nlinux; i++)
        fprintf(out, "NodeName=%s NodeAddr=10.77.0.%u Port=%d CPUs=2 RealMemory=2048 Features=linux State=UNKNOWN\n",
                lab->linux_nodes[i].name, lab->linux_nodes[i].mgmt, LAB_DIRECT_PORT);
    fprintf(out, "PartitionName=mac Nodes=");
    for (int i = 0; i < lab->nmacs; i++)
        fprintf(out, "%s%s", i ? "," : "", lab->macs[i].name);
    fprintf(out, " Default=NO MaxTime=INFINITE State=UP\n");
    if (lab->nlinux == 0)
        return;
    fprintf(out, "PartitionName=linux Nodes=");
    for (int i = 0; i < lab->nlinux; i++)
        fprintf(out, "%s%s", i ? "," : "", lab->linux_nodes[i].name);
    fprintf(out, " Default=YES MaxTime=INFINITE State=UP\n");
}

/* ---- outputs: system_profiler ----------------------------------------------------------------------- */

static void jset(json_object *o, const char *key, const char *value)
{
    json_object_object_add(o, key, json_object_new_string(value));
}

/* The two generations print as different macOS releases do: a Thunderbolt 5 Mac (as captured from an M3 Ultra
 * Mac Studio) says "80 Gb/s" on a live link and "Up to 120 Gb/s" on an empty port, names a peer Mac by model
 * identifier and lists its buses last-first; a Thunderbolt 4 Mac says "Up to 40 Gb/s" on both, names the peer
 * by model name and lists its buses in order. Parsers must cope with all of it. */
static int is_tb5(const lab_group_t *g)
{
    return g->link_gbps >= 80;
}

static void speed_text(char *out, size_t size, const lab_group_t *g, int connected)
{
    if (is_tb5(g))
        snprintf(out, size, connected ? "%u Gb/s" : "Up to 120 Gb/s", g->link_gbps);
    else
        snprintf(out, size, "Up to %u Gb/s", g->link_gbps);
}

/* The XDomain services a peer Mac announces (IP over Thunderbolt). */
static json_object *peer_services(const char *peer)
{
    char uuid[37];
    json_object *list = json_object_new_array(), *ip = json_object_new_object();
    name_uuid(uuid, peer, "service_ip");
    jset(ip, "_name", "service_ip");
    json_object_object_add(ip, "protocol_id_key", json_object_new_int(1));
    json_object_object_add(ip, "protocol_revision_key", json_object_new_int(1));
    json_object_object_add(ip, "protocol_version_key", json_object_new_int(1));
    jset(ip, "service_uuid_key", uuid);
    json_object_array_add(list, ip);
    return list;
}

/* The peer Mac seen through a connected receptacle (keys in system_profiler's sorted order). */
static json_object *peer_item(const lab_t *lab, const lab_cable_t *cb, int mac)
{
    int end = cable_end(cb, mac);
    int peer = cb->mac[!end];
    const lab_group_t *pg = group_of(lab, peer);
    char uuid[37], what[24];
    json_object *item = json_object_new_object();
    snprintf(what, sizeof(what), "receptacle-%u", cb->rcpt[!end]);
    name_uuid(uuid, lab->macs[peer].name, what);
    jset(item, "_name", pg->model_name);
    jset(item, "device_id_key", "0xA");
    jset(item, "device_name_key", is_tb5(group_of(lab, mac)) ? pg->model_id : pg->model_name);
    jset(item, "domain_uuid_key", uuid);
    json_object_object_add(item, "services_title", peer_services(lab->macs[peer].name));
    jset(item, "vendor_id_key", "0x0A27");
    jset(item, "vendor_name_key", "Apple Inc.");
    return item;
}

static json_object *receptacle_tag(const lab_group_t *g, unsigned rcpt, int connected)
{
    char speed[32], id[8];
    json_object *tag = json_object_new_object();
    speed_text(speed, sizeof(speed), g, connected);
    snprintf(id, sizeof(id), "%u", rcpt);
    jset(tag, "current_speed_key", speed);
    jset(tag, "link_status_key", connected ? "0x2" : "0x100");
    if (connected)
        jset(tag, "micro_version_key", "0.0.0");
    jset(tag, "receptacle_id_key", id);
    jset(tag, "receptacle_status_key", connected ? "receptacle_connected" : "receptacle_no_devices_connected");
    return tag;
}

static json_object *bus_object(const lab_t *lab, int mac, unsigned rcpt)
{
    const lab_group_t *g = group_of(lab, mac);
    const lab_cable_t *cb = live_cable(lab, mac, rcpt);
    char name[40], uuid[37], what[24], uid[24];
    json_object *bus = json_object_new_object();
    snprintf(name, sizeof(name), "thunderboltusb4_bus_%u", rcpt - 1);
    snprintf(what, sizeof(what), "receptacle-%u", rcpt);
    name_uuid(uuid, lab->macs[mac].name, what);
    snprintf(uid, sizeof(uid), "0x05AC%08X%04X", (unsigned)(hash64(0, lab->macs[mac].name) >> 32), 0x9810u + rcpt - 1);
    if (cb) {
        json_object *items = json_object_new_array();
        json_object_array_add(items, peer_item(lab, cb, mac));
        json_object_object_add(bus, "_items", items);
    }
    jset(bus, "_name", name);
    jset(bus, "device_name_key", g->model_name);
    jset(bus, "domain_uuid_key", uuid);
    json_object_object_add(bus, "receptacle_1_tag", receptacle_tag(g, rcpt, cb != NULL));
    jset(bus, "route_string_key", "0");
    jset(bus, "switch_uid_key", uid);
    jset(bus, "vendor_name_key", "Apple Inc.");
    return bus;
}

static json_object *thunderbolt_json(const lab_t *lab, int mac)
{
    const lab_group_t *g = group_of(lab, mac);
    json_object *root = json_object_new_object(), *buses = json_object_new_array();
    for (unsigned i = 1; i <= g->ports; i++)
        json_object_array_add(buses, bus_object(lab, mac, is_tb5(g) ? g->ports + 1 - i : i));
    json_object_object_add(root, "SPThunderboltDataType", buses);
    return root;
}

/* ---- outputs: text files ---------------------------------------------------------------------------- */

static void write_hardware_ports(const lab_t *lab, int mac, FILE *f)
{
    const lab_mac_t *m = &lab->macs[mac];
    char hw[18];
    hwaddr(hw, m->hostno, 0);
    fprintf(f, "\nHardware Port: Ethernet\nDevice: en0\nEthernet Address: %s\n\n", hw);
    for (unsigned r = 1; r <= group_of(lab, mac)->ports; r++) {
        hwaddr(hw, m->hostno, r + 1);
        fprintf(f, "Hardware Port: Thunderbolt %u\nDevice: en%u\nEthernet Address: %s\n\n", r, r + 1, hw);
    }
    hwaddr(hw, m->hostno, 0xb0);
    fprintf(f, "Hardware Port: Thunderbolt Bridge\nDevice: bridge0\nEthernet Address: %s\n\n", hw);
    hwaddr(hw, m->hostno, 1);
    fprintf(f, "Hardware Port: Wi-Fi\nDevice: en1\nEthernet Address: %s\n\n", hw);
    fprintf(f, "VLAN Configurations\n===================\n");
}

static void write_tb_interface(const lab_t *lab, int mac, unsigned rcpt, FILE *f)
{
    const lab_cable_t *cb = live_cable(lab, mac, rcpt);
    char hw[18];
    hwaddr(hw, lab->macs[mac].hostno, rcpt + 1);
    fprintf(f, "en%u: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
            "\toptions=460<TSO4,TSO6,CHANNEL_IO>\n\tether %s\n", rcpt + 1, hw);
    if (cb) {
        int c = (int)(cb - lab->cables) + 1;
        fprintf(f, "\tinet 169.254.%d.%d netmask 0xfffffffc broadcast 169.254.%d.3\n", c, cable_end(cb, mac) + 1, c);
    }
    fprintf(f, "\tmedia: autoselect <full-duplex>\n\tstatus: %s\n", cb ? "active" : "inactive");
}

static void write_ifconfig(const lab_t *lab, int mac, FILE *f)
{
    const lab_mac_t *m = &lab->macs[mac];
    char hw[18];
    fprintf(f, "lo0: flags=8049<UP,LOOPBACK,RUNNING,MULTICAST> mtu 16384\n"
            "\toptions=1203<RXCSUM,TXCSUM,TXSTATUS,SW_TIMESTAMP>\n"
            "\tinet 127.0.0.1 netmask 0xff000000\n\tinet6 ::1 prefixlen 128 \n"
            "\tinet6 fe80::1%%lo0 prefixlen 64 scopeid 0x1 \n\tnd6 options=201<PERFORMNUD,DAD>\n");
    hwaddr(hw, m->hostno, 0);
    fprintf(f, "en0: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
            "\toptions=50b<RXCSUM,TXCSUM,VLAN_HWTAGGING,AV,CHANNEL_IO>\n\tether %s\n"
            "\tinet 10.77.0.%u netmask 0xffffff00 broadcast 10.77.0.255\n"
            "\tnd6 options=201<PERFORMNUD,DAD>\n\tmedia: autoselect (10GbaseT <full-duplex>)\n\tstatus: active\n",
            hw, m->mgmt);
    hwaddr(hw, m->hostno, 1);
    fprintf(f, "en1: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
            "\toptions=6460<TSO4,TSO6,CHANNEL_IO,PARTIAL_CSUM,ZEROINVERT_CSUM>\n\tether %s\n"
            "\tnd6 options=201<PERFORMNUD,DAD>\n\tmedia: autoselect\n\tstatus: inactive\n", hw);
    for (unsigned r = 1; r <= group_of(lab, mac)->ports; r++)
        write_tb_interface(lab, mac, r, f);
    hwaddr(hw, m->hostno, 0xb0);
    fprintf(f, "bridge0: flags=8822<BROADCAST,SMART,SIMPLEX,MULTICAST> mtu 1500\n"
            "\toptions=63<RXCSUM,TXCSUM,TSO4,TSO6>\n\tether %s\n"
            "\tConfiguration:\n\t\tid 0:0:0:0:0:0 priority 0 hellotime 0 fwddelay 0\n"
            "\t\tmaxage 0 holdcnt 0 proto stp maxaddr 100 timeout 1200\n"
            "\t\troot id 0:0:0:0:0:0 priority 0 ifcost 0 port 0\n\t\tipfilter disabled flags 0x0\n"
            "\tnd6 options=201<PERFORMNUD,DAD>\n\tmedia: <unknown type>\n\tstatus: inactive\n", hw);
}

/* ibv_devices: with RDMA, one rdma_enX per Thunderbolt port, cabled or not (a Mac enumerates a device per port;
 * an empty port's device is merely down); without RDMA the table is empty. */
static void write_ibv_devices(const lab_t *lab, int mac, FILE *f)
{
    const lab_group_t *g = group_of(lab, mac);
    fprintf(f, "    %-16s\t   %s\n    %-16s\t%s\n", "device", "node GUID", "------", "----------------");
    if (!g->rdma)
        return;
    for (unsigned r = 1; r <= g->ports; r++) {
        char dev[16];
        snprintf(dev, sizeof(dev), "rdma_en%u", r + 1);
        fprintf(f, "    %-16s\t027b%04x0000%04x\n", dev, lab->macs[mac].hostno, r + 1);
    }
}

/* rdma_ctl status: "enabled" when RDMA is on; Thunderbolt 4 Macs say "enabled" with no devices. */
static void write_rdma_ctl(const lab_t *lab, int mac, FILE *f)
{
    const lab_group_t *g = group_of(lab, mac);
    fprintf(f, "%s\n", g->rdma || g->link_gbps < 80 ? "enabled" : "disabled");
}

static void write_sw_vers(const lab_t *lab, int mac, FILE *f)
{
    const lab_group_t *g = group_of(lab, mac);
    fprintf(f, "ProductName:\t\tmacOS\nProductVersion:\t\t%s\nBuildVersion:\t\t%s\n", g->os, g->build);
}

static void write_sysctl(const lab_t *lab, int mac, FILE *f)
{
    const lab_group_t *g = group_of(lab, mac);
    fprintf(f, "%llu\n%s\n%s\n", (unsigned long long)g->mem_gib << 30, g->chip, g->model_id);
}

static void write_perflevels(const lab_t *lab, int mac, FILE *f)
{
    const lab_group_t *g = group_of(lab, mac);
    fprintf(f, "hw.perflevel0.physicalcpu: %u\nhw.perflevel1.physicalcpu: %u\n", g->pcores, g->ecores);
}

static void write_hostname(const lab_t *lab, int mac, FILE *f)
{
    fprintf(f, "%s\n", lab->macs[mac].name);
}

static void write_thunderbolt(const lab_t *lab, int mac, FILE *f)
{
    json_object *root = thunderbolt_json(lab, mac);
    fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                            JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(root);
}

static const struct {
    const char *file;
    void (*write)(const lab_t *, int, FILE *);
} replay_files[] = {
    { "system_profiler_SPThunderboltDataType.json", write_thunderbolt },
    { "networksetup_listallhardwareports.txt", write_hardware_ports },
    { "ifconfig.txt", write_ifconfig },
    { "ibv_devices.txt", write_ibv_devices },
    { "rdma_ctl_status.txt", write_rdma_ctl },
    { "sw_vers.txt", write_sw_vers },
    { "sysctl.txt", write_sysctl },
    { "sysctl_perflevels.txt", write_perflevels },
    { "hostname.txt", write_hostname },
};

static int make_dir(const char *path)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST)
        return 0;
    fprintf(stderr, "tbmlab-gen: cannot create %s: %s; check the output directory\n", path, strerror(errno));
    return -1;
}

static int write_node_files(const lab_t *lab, int mac, const char *dir)
{
    char path[4096];
    for (size_t i = 0; i < sizeof(replay_files) / sizeof(replay_files[0]); i++) {
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, replay_files[i].file) >= sizeof(path))
            return -1;  /* cannot happen: main bounds the directory's length */
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!f) {
            int saved = errno;
            if (fd >= 0)
                close(fd);
            fprintf(stderr, "tbmlab-gen: cannot write %s: %s; check the output directory\n", path, strerror(saved));
            return -1;
        }
        replay_files[i].write(lab, mac, f);
        if (fclose(f) != 0) {
            fprintf(stderr, "tbmlab-gen: writing %s failed: %s; check free space\n", path, strerror(errno));
            return -1;
        }
    }
    return 0;
}

static int write_outputs(const lab_t *lab, const char *outdir)
{
    char dir[4096];
    if (make_dir(outdir) < 0)
        return -1;
    for (int i = 0; i < lab->nmacs; i++) {
        snprintf(dir, sizeof(dir), "%.*s/%s", LAB_DIR_MAX, outdir, lab->macs[i].name);
        if (make_dir(dir) < 0)
            return -1;
        snprintf(dir, sizeof(dir), "%.*s/%s/replay", LAB_DIR_MAX, outdir, lab->macs[i].name);
        if (make_dir(dir) < 0 || write_node_files(lab, i, dir) < 0)
            return -1;
    }
    return 0;
}

/* ---- main ------------------------------------------------------------------------------------------- */

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Says what is wrong with the command line; returns exit status 2. */
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tbmlab-gen: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "; see tbmlab-gen --help\n");
    va_end(ap);
    return 2;
}

/* Reads the trailing --cut options (from argv[first]) into the lab. */
static int apply_cuts(lab_t *lab, int argc, char **argv, int first)
{
    for (int i = first; i < argc; i++) {
        const char *value = NULL;
        if (strcmp(argv[i], "--cut") == 0 && i + 1 < argc)
            value = argv[++i];
        else if (strncmp(argv[i], "--cut=", 6) == 0)
            value = argv[i] + 6;
        else
            return usage_error("unexpected argument '%s'", argv[i]);
        if (apply_cut(lab, value) < 0)
            return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static lab_t lab;
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (argc < 3)
        return usage_error("%s", "missing command or lab spec");
    const char *cmd = argv[1];
    int outputs = strcmp(cmd, "outputs") == 0;
    if (!outputs && strcmp(cmd, "plan") != 0 && strcmp(cmd, "slurm-nodes") != 0)
        return usage_error("unknown command '%s' (plan, outputs, slurm-nodes)", cmd);
    if (outputs && argc < 4)
        return usage_error("%s", "outputs needs a directory");
    if (outputs && strlen(argv[3]) > LAB_DIR_MAX)
        return usage_error("output directory path is longer than %d characters; use a shorter one", LAB_DIR_MAX);
    if (lab_load(&lab, argv[2]) < 0)
        return 2;
    if (strcmp(cmd, "slurm-nodes") == 0) {
        if (argc > 3)
            return usage_error("unexpected argument '%s'", argv[3]);
        print_slurm_nodes(&lab, stdout);
        return 0;
    }
    int rc = apply_cuts(&lab, argc, argv, outputs ? 4 : 3);
    if (rc != 0)
        return rc;
    if (outputs)
        return write_outputs(&lab, argv[3]) < 0 ? 1 : 0;
    print_plan(&lab, stdout);
    return 0;
}
