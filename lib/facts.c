/* facts.c: the host facts record (see facts.h): empty facts, look-ups by name or receptacle, and the checks
 * of single values (interface names, UUIDs, addresses) that parsers and the JSON reader share. */
#include "facts.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "finding.h"

void tbm_facts_init(tbm_host_facts_t *facts)
{
    memset(facts, 0, sizeof(*facts));
    facts->rdma_enabled = -1;
}

const char *tbm_facts_part_name(tbm_facts_part_t part, int for_people)
{
    static const char *const names[TBM_PART_COUNT][2] = {
        { "thunderbolt", "Thunderbolt" }, { "network", "network" }, { "rdma", "RDMA" }, { "os", "macOS version" },
    };

    return (unsigned)part < TBM_PART_COUNT ? names[part][for_people != 0] : "?";
}

void tbm_facts_unknown_why(const tbm_host_facts_t *h, tbm_facts_part_t part, char *buf, size_t len)
{
    static const char lead[] = "the capture failed (";
    const char *u = (unsigned)part < TBM_PART_COUNT ? h->unknown[part] : "";
    size_t n = strnlen(u, TBM_UNKNOWN_MAX - 1);

    if (strncmp(u, lead, sizeof(lead) - 1) == 0 && n > sizeof(lead) - 1 && u[n - 1] == ')')
        snprintf(buf, len, "%.*s", (int)(n - sizeof(lead)), u + sizeof(lead) - 1);
    else
        snprintf(buf, len, "%.*s", (int)n, u);
}

void tbm_facts_port_name(const char *host, const tbm_tb_port_t *p, char *buf, size_t len)
{
    int h = (int)strnlen(host, TBM_HOST_MAX - 1);
    const char *colon = h ? ":" : "";

    if (p->iface[0])
        snprintf(buf, len, "%.*s%s%.*s", h, host, colon, (int)strnlen(p->iface, TBM_IFNAME_MAX - 1), p->iface);
    else if (p->receptacle > 0)
        snprintf(buf, len, "%.*s%sThunderbolt %d", h, host, colon, p->receptacle);
    else
        snprintf(buf, len, "%.*s%sbus %.*s", h, host, colon, (int)strnlen(p->bus, TBM_HOST_MAX - 1),
                 p->bus[0] ? p->bus : "(no name)");
}

void tbm_cable_to_self(struct tbm_findings *fs, const char *a, const char *b)
{
    char where[TBM_FINDING_WHERE_MAX];

    snprintf(where, sizeof(where), "%s <-> %s", a, b);
    tbm_finding_add(fs, TBM_SEV_ERROR, "cable-to-self", where,
                    "move one end of the cable to another Mac (or remove it), then probe again",
                    "a cable joins two ports of the same Mac (%s and %s): it carries nothing between Macs", a, b);
}

tbm_iface_t *tbm_facts_find_iface(tbm_host_facts_t *facts, const char *name)
{
    int i;

    for (i = 0; i < facts->n_ifaces && i < TBM_MAX_IFACES; i++)
        if (strcmp(facts->ifaces[i].name, name) == 0)
            return &facts->ifaces[i];
    return NULL;
}

tbm_iface_t *tbm_facts_get_iface(tbm_host_facts_t *facts, const char *name)
{
    tbm_iface_t *ifc = tbm_facts_find_iface(facts, name);

    if (ifc)
        return ifc;
    if (facts->n_ifaces >= TBM_MAX_IFACES || strlen(name) >= TBM_IFNAME_MAX)
        return NULL;
    ifc = &facts->ifaces[facts->n_ifaces++];
    memset(ifc, 0, sizeof(*ifc));
    snprintf(ifc->name, sizeof(ifc->name), "%s", name);
    ifc->prefix_len = -1;
    return ifc;
}

tbm_tb_port_t *tbm_facts_find_port(tbm_host_facts_t *facts, int receptacle)
{
    int i;

    if (receptacle <= 0)
        return NULL;
    for (i = 0; i < facts->n_ports && i < TBM_MAX_PORTS; i++)
        if (facts->ports[i].receptacle == receptacle)
            return &facts->ports[i];
    return NULL;
}

/* Length of s when all its characters satisfy ok() and it is 1..max-1 long; 0 otherwise. */
static size_t span_of(const char *s, size_t max, int (*ok)(int))
{
    size_t n = 0;

    while (s[n] && n < max && ok((unsigned char)s[n]))
        n++;
    return (n > 0 && n < max && s[n] == '\0') ? n : 0;
}

static int ifname_char(int c)
{
    return isalnum(c) || c == '_' || c == '.' || c == '-';
}

static int uuid_char(int c)
{
    return isxdigit(c) || c == '-';
}

int tbm_valid_ifname(const char *s)
{
    return span_of(s, TBM_IFNAME_MAX, ifname_char) > 0 && isalpha((unsigned char)s[0]);
}

int tbm_valid_uuid(const char *s)
{
    return span_of(s, TBM_UUID_MAX, uuid_char) > 0;
}

int tbm_valid_ipv4(const char *s)
{
    int part, digits, value;

    for (part = 0; part < 4; part++) {
        if (part > 0 && *s++ != '.')
            return 0;
        for (digits = 0, value = 0; isdigit((unsigned char)*s) && digits < 4; digits++)
            value = value * 10 + (*s++ - '0');
        if (digits == 0 || digits > 3 || value > 255 || (digits > 1 && s[-digits] == '0'))
            return 0;
    }
    return *s == '\0';
}

int tbm_valid_mac(const char *s)
{
    char canon[TBM_MAC_MAX];

    return tbm_mac_normalize(s, strlen(s), canon) == 0 && strcmp(canon, s) == 0;
}

int tbm_valid_text(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 0;
    return 1;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

int tbm_mac_normalize(const char *in, size_t len, char out[TBM_MAC_MAX])
{
    char canon[TBM_MAC_MAX + 1];   /* room for the ':' written after the last group */
    size_t i = 0;
    int group, digits, value, h;

    out[0] = '\0';
    for (group = 0; group < 6; group++) {
        if (group > 0 && (i >= len || in[i++] != ':'))
            return -1;
        for (digits = 0, value = 0; i < len && digits < 3 && (h = hexval((unsigned char)in[i])) >= 0; i++)
            value = value * 16 + h, digits++;
        if (digits == 0 || digits > 2)
            return -1;
        snprintf(canon + group * 3, sizeof(canon) - (size_t)group * 3, "%02x:", (unsigned)value);
    }
    if (i != len)
        return -1;
    canon[TBM_MAC_MAX - 1] = '\0';   /* drop the ':' after the last group */
    memcpy(out, canon, TBM_MAC_MAX);
    return 0;
}

int tbm_macos_has_rdma(const char *v)
{
    int major = 0, minor = 0;

    if (sscanf(v, "%d.%d", &major, &minor) < 1)
        return -1;
    return major > 26 || (major == 26 && minor >= 2);
}

void tbm_rdma_enabled_fix(const tbm_host_facts_t *h, int gbps, char *buf, size_t len)
{
    char version[TBM_HOST_MAX], port[128], os[80] = "";
    int has_rdma;

    snprintf(version, sizeof(version), "%.*s", TBM_HOST_MAX - 1, h->os_version);
    has_rdma = tbm_macos_has_rdma(version);
    if (gbps > 40)
        snprintf(port, sizeof(port), "the port (on Mac Studio the one beside Ethernet has no RDMA)");
    else if (gbps > 0)
        snprintf(port, sizeof(port), "a Thunderbolt 4 port or Mac: the link runs at %d Gb/s, RDMA needs Thunderbolt "
                 "5 (above 40) on both ends", gbps);
    else
        snprintf(port, sizeof(port), "a Thunderbolt 4 port or Mac (check the link speed: RDMA needs above 40 Gb/s "
                 "on both ends)");
    if (has_rdma == 0)
        snprintf(os, sizeof(os), "; macOS %.20s, older than 26.2: update it", version);
    else if (has_rdma < 0)
        snprintf(os, sizeof(os), "; macOS older than 26.2 (its version is unknown)");
    snprintf(buf, len, "RDMA is already enabled, so rdma_ctl enable is not the fix. Causes left: %s; the cable "
             "(Thunderbolt 5, seated)%s. Then check ibv_devices", port, os);
}
