/* spec.c: reads the lab spec (lab/lab.conf) into the generator's model, and --cut. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "labgen.h"
#include "scalar.h"

static const char *const group_keys[GK_COUNT] = {
    "Group", "Mode", "Wiring", "Nodes", "ModelName", "ModelId", "Chip", "MemoryGiB", "PCores",
    "ECores", "OS", "Build", "LinkGbps", "Rdma", "Ports", "Bridge"
};

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
    long long v;
    if (*s == '\0')
        return tbm_errprintf(err, "%s is empty; give a number from %u to %u", key, min, max);
    if (tbm_parse_ll(s, 10, min, max, &v) < 0 || *s == '-' || *s == '+')
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
    if (octet > LAB_BRIDGE_MGMT_BASE && octet <= LAB_BRIDGE_MGMT_BASE + LAB_MAX_BRIDGES)
        return 1;   /* kept for bridge hosts */
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
    unsigned octet = LAB_LINUX_MGMT_BASE;
    if (lab->nlinux == LAB_MAX_LINUX)
        return tbm_errprintf(err, "more than %d Linux nodes; make the lab smaller", LAB_MAX_LINUX);
    while (octet < 255 && mgmt_taken(lab, octet))
        octet++;   /* the first free address (after the Macs listed so far) */
    if (octet == 255)
        return tbm_errprintf(err, "Linux node %s: no management address is left in 10.77.0.0/24; make the lab "
                             "smaller", name);
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

/* Bridge=NAME of a bridge-mode group: that bridge host (added at its first mention), else the controller. */
static int group_bridge_host(lab_t *lab, lab_group_t *g, const char *name, tbm_err_t *err)
{
    char word[LAB_NAME_MAX];

    g->bridge_host = -1;
    if (!name)
        return 0;
    if (!g->bridge)
        return tbm_errprintf(err, "Bridge=%s on a Mode=direct group; a direct-mode Mac runs its own slurmd: drop "
                             "Bridge= or use Mode=bridge", name);
    if (copy_text(word, sizeof(word), name, "Bridge", err) < 0 || check_word(word, "-", "Bridge", err) < 0)
        return -1;
    for (int i = 0; i < lab->nbridges; i++)
        if (strcmp(lab->bridges[i].name, word) == 0)
            return g->bridge_host = i, 0;
    if (lab->nbridges == LAB_MAX_BRIDGES)
        return tbm_errprintf(err, "more than %d bridge hosts; let groups share them", LAB_MAX_BRIDGES);
    lab_bridge_t *b = &lab->bridges[lab->nbridges];
    snprintf(b->name, sizeof(b->name), "%s", word);
    b->mgmt = LAB_BRIDGE_MGMT_BASE + 1 + (unsigned)lab->nbridges;
    g->bridge_host = lab->nbridges++;
    return 0;
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
                                 "ModelId Chip MemoryGiB PCores ECores OS Build LinkGbps Rdma [Ports] [Bridge]",
                                 pairs[i].key);
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
    if (fill_group(g, raw, err) < 0 || group_bridge_host(lab, g, raw[GK_BRIDGE], err) < 0)
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
    for (int i = 0; i < lab->nbridges; i++)
        lab->bridges[i].hostno = (unsigned)(lab->nmacs + lab->nlinux + i + 1);
}

/* A bridge host's name is not a node's. */
static int check_bridge_names(const lab_t *lab, tbm_err_t *err)
{
    for (int i = 0; i < lab->nbridges; i++)
        if (node_known(lab, lab->bridges[i].name))
            return tbm_errprintf(err, "Bridge=%s is also a node's name; name the bridge host apart",
                                 lab->bridges[i].name);
    return 0;
}

int lab_load(lab_t *lab, const char *path)
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
    if (check_bridge_names(lab, &err) < 0) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
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
int lab_apply_cut(lab_t *lab, const char *spec)
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

