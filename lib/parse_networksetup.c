/* parse_networksetup.c: `networksetup -listallhardwareports` -> interfaces with their hardware port and MAC
 * address, and the "Thunderbolt N" ports bound to their enX interface. */
#include "parse_macos.h"

#include <string.h>

#include "parse_text.h"

#define NS_SOURCE "networksetup -listallhardwareports"
#define NS_FIX "run `networksetup -listallhardwareports` again and capture all of it"

/* The block being read: "Hardware Port:", "Device:", "Ethernet Address:" lines up to a blank line. */
typedef struct ns_block {
    tbm_host_facts_t *facts;
    int line;                        /* line of "Hardware Port:"; 0 when no block is open */
    char hwport[TBM_HOST_MAX];
    char device[TBM_IFNAME_MAX];
    char mac[TBM_MAC_MAX];
} ns_block_t;

void tbm_facts_bind_ports(tbm_host_facts_t *facts)
{
    tbm_tb_port_t *port;
    tbm_span_t hw;
    long long n;
    int i;

    for (i = 0; i < facts->n_ifaces; i++) {
        hw = tbm_span_trim(facts->ifaces[i].hwport, strlen(facts->ifaces[i].hwport));
        if (!tbm_span_starts(hw, "Thunderbolt ") ||
            tbm_span_long(tbm_span_after(hw, strlen("Thunderbolt ")), 1, 99, &n) < 0)
            continue;
        port = tbm_facts_find_port(facts, (int)n);
        if (port)
            memcpy(port->iface, facts->ifaces[i].name, sizeof(port->iface));
    }
}

static void flush(tbm_parse_ctx_t *ctx, ns_block_t *b)
{
    tbm_host_facts_t *facts = b->facts;
    tbm_iface_t *ifc;

    if (b->line == 0)
        return;
    ifc = b->device[0] ? tbm_facts_get_iface(facts, b->device) : NULL;
    if (!b->device[0])
        tbm_note(ctx, TBM_SEV_WARNING, "ns-no-device", b->line, NS_FIX,
                 "hardware port \"%s\" has no usable Device line", b->hwport);
    else if (!ifc)
        tbm_note(ctx, TBM_SEV_ERROR, "ns-too-many-ifaces", b->line, NS_FIX,
                 "more than %d interfaces; %s is ignored", TBM_MAX_IFACES, b->device);
    else if (ifc->hwport[0])
        tbm_note(ctx, TBM_SEV_WARNING, "ns-duplicate-device", b->line, NS_FIX,
                 "device %s appears again (as \"%s\"); the first, \"%s\", is kept", b->device, b->hwport,
                 ifc->hwport);
    else {
        memcpy(ifc->hwport, b->hwport, sizeof(ifc->hwport));
        memcpy(ifc->mac, b->mac, sizeof(ifc->mac));
    }
    memset(b, 0, sizeof(*b));
    b->facts = facts;
}

static void read_value(tbm_parse_ctx_t *ctx, ns_block_t *b, tbm_span_t key, tbm_span_t val, int lineno)
{
    if (b->line == 0) {
        tbm_note(ctx, TBM_SEV_WARNING, "ns-orphan-line", lineno, NS_FIX,
                 "\"%.*s\" outside a Hardware Port block; ignored", (int)key.n, key.p);
    } else if (tbm_span_eq(key, "Device")) {
        if (tbm_span_copy(b->device, sizeof(b->device), val) < 0 || !tbm_valid_ifname(b->device)) {
            b->device[0] = '\0';
            tbm_note(ctx, TBM_SEV_WARNING, "ns-bad-device", lineno, NS_FIX,
                     "\"%.*s\" is not an interface name", TBM_SPAN_SHOW(val));
        }
    } else if (tbm_span_eq(key, "Ethernet Address")) {
        if (!tbm_span_eq(val, "N/A") && tbm_mac_normalize(val.p, val.n, b->mac) < 0)
            tbm_note(ctx, TBM_SEV_WARNING, "ns-bad-mac", lineno, NS_FIX,
                     "\"%.*s\" is not a MAC address", TBM_SPAN_SHOW(val));
    } else {
        tbm_note(ctx, TBM_SEV_INFO, "ns-unknown-key", lineno, NS_FIX, "unknown key \"%.*s\"; ignored",
                 TBM_SPAN_SHOW(key));
    }
}

static int read_line(tbm_parse_ctx_t *ctx, const tbm_line_t *l, void *state)
{
    ns_block_t *b = state;
    tbm_span_t key, val;

    if (tbm_span_starts(l->text, "VLAN Configurations") || l->text.n == 0) {
        flush(ctx, b);
        return l->text.n > 0;   /* the trailer lists VLANs, not hardware ports */
    }
    if (tbm_span_keyval(l->text, &key, &val) < 0) {
        tbm_note(ctx, TBM_SEV_WARNING, "ns-garbage-line", l->lineno, NS_FIX,
                 "\"%.*s\" is not a \"Key: Value\" line; ignored", TBM_SPAN_SHOW(l->text));
        return 0;
    }
    if (!tbm_span_eq(key, "Hardware Port")) {
        read_value(ctx, b, key, val, l->lineno);
        return 0;
    }
    flush(ctx, b);
    b->line = l->lineno;
    if (tbm_span_copy(b->hwport, sizeof(b->hwport), val) < 0 || val.n == 0 || !tbm_valid_text(b->hwport)) {
        b->hwport[0] = '\0';
        tbm_note(ctx, TBM_SEV_WARNING, "ns-bad-hwport", l->lineno, NS_FIX,
                 "hardware port name is empty, longer than %d bytes or holds control characters",
                 TBM_HOST_MAX - 1);
    }
    return 0;
}

int tbm_parse_networksetup(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    tbm_parse_ctx_t ctx;
    ns_block_t block;

    tbm_parse_begin(&ctx, fs, NS_SOURCE);
    memset(&block, 0, sizeof(block));
    block.facts = facts;
    if (tbm_parse_lines(&ctx, text, len, 0, read_line, &block) < 0)
        return -1;
    flush(&ctx, &block);
    tbm_facts_bind_ports(facts);
    tbm_parse_end(&ctx);
    return 0;
}
