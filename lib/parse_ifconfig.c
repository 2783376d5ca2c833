/* parse_ifconfig.c: macOS `ifconfig` -> per interface the UP flag, "status: active", the first IPv4
 * address and its prefix length; and which interfaces networksetup named but ifconfig does not list. */
#include "parse_macos.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse_text.h"

#define IFC_SOURCE "ifconfig"
#define IFC_FIX "run `ifconfig` (no arguments) again and capture all of it"

_Static_assert(TBM_MAX_IFACES <= 64, "ifc_state_t.seen has one bit per interface");

/* Reading state: the interface whose block we are in, and which ones this output listed. */
typedef struct ifc_state {
    tbm_host_facts_t *facts;
    tbm_iface_t *cur;
    int in_block;                       /* a header was read (cur may still be NULL: skipped) */
    uint64_t seen;                      /* bit i: facts->ifaces[i] had a block */
    uint64_t own_mac;                   /* bit i: its MAC was read here ("ether"), not from networksetup */
} ifc_state_t;

/* "UP" among the names in "<UP,BROADCAST,...>", or bit 0 of the hex value before it. */
static int flags_up(tbm_span_t flags)
{
    tbm_span_t names;
    const char *lt = memchr(flags.p, '<', flags.n), *gt;
    size_t i, start;

    if (!lt)
        return flags.n > 0 && memchr("13579bdfBDF", flags.p[flags.n - 1], 11) != NULL;
    gt = memchr(lt, '>', flags.n - (size_t)(lt - flags.p));
    names.p = lt + 1;
    names.n = gt ? (size_t)(gt - lt - 1) : 0;
    for (i = 0, start = 0; i <= names.n; i++) {
        if (i < names.n && names.p[i] != ',')
            continue;
        if (i - start == 2 && memcmp(names.p + start, "UP", 2) == 0)
            return 1;
        start = i + 1;
    }
    return 0;
}

static void read_header(tbm_parse_ctx_t *ctx, ifc_state_t *st, tbm_span_t line, int lineno)
{
    tbm_host_facts_t *facts = st->facts;
    tbm_span_t name, rest;
    char ifname[TBM_IFNAME_MAX];
    uint64_t bit;

    st->in_block = 1;
    st->cur = NULL;
    if (tbm_span_keyval(line, &name, &rest) < 0 || tbm_span_copy(ifname, sizeof(ifname), name) < 0 ||
        !tbm_valid_ifname(ifname) || !tbm_span_starts(rest, "flags=")) {
        tbm_note(ctx, TBM_SEV_WARNING, "ifc-garbage-line", lineno, IFC_FIX,
                 "\"%.*s\" is not an interface header (\"en2: flags=...\"); its block is skipped",
                 TBM_SPAN_SHOW(line));
        return;
    }
    st->cur = tbm_facts_get_iface(facts, ifname);
    if (!st->cur) {
        tbm_note(ctx, TBM_SEV_ERROR, "ifc-too-many-ifaces", lineno, IFC_FIX,
                 "more than %d interfaces; %s is ignored", TBM_MAX_IFACES, ifname);
        return;
    }
    bit = UINT64_C(1) << (st->cur - facts->ifaces);
    if (st->seen & bit) {
        tbm_note(ctx, TBM_SEV_WARNING, "ifc-duplicate", lineno, IFC_FIX,
                 "interface %s is listed twice; the later block overrides", ifname);
        /* nothing of the earlier block is kept: its address, status and MAC are not this block's */
        st->cur->ipv4[0] = '\0';
        st->cur->prefix_len = -1;
        st->cur->active = 0;
        if (st->own_mac & bit)
            st->cur->mac[0] = '\0';
        st->own_mac &= ~bit;
    }
    st->seen |= bit;
    st->cur->up = flags_up(tbm_span_word(&rest));
}

/* A netmask as 32 bits: "0xfffffffc" (what macOS prints) or "255.255.255.252". Returns 0 or -1. */
static int mask_bits(tbm_span_t mask, uint32_t *m)
{
    char text[TBM_IPV4_MAX];
    const char *p = text;
    size_t i;
    int h;

    *m = 0;
    if (tbm_span_starts(mask, "0x") && mask.n == 10) {
        for (i = 2; i < 10; i++) {
            h = mask.p[i] | 0x20;   /* lower case; digits stay as they are */
            h = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : -1;
            if (h < 0)
                return -1;
            *m = (*m << 4) | (uint32_t)h;
        }
        return 0;
    }
    if (tbm_span_copy(text, sizeof(text), mask) < 0 || !tbm_valid_ipv4(text))
        return -1;
    for (i = 0; i < 4; i++, p++)
        *m = (*m << 8) | (uint32_t)strtoul(p, (char **)&p, 10);
    return 0;
}

/* 0xfffffffc -> 30; -1 when not a netmask (bits not contiguous). */
static int prefix_of(tbm_span_t mask)
{
    uint32_t m;
    int bits;

    if (mask_bits(mask, &m) < 0)
        return -1;
    for (bits = 0; bits < 32 && (m & (UINT32_C(1) << (31 - bits))); bits++)
        ;
    return (bits == 32 || (m & (UINT32_MAX >> bits)) == 0) ? bits : -1;
}

static void read_inet(tbm_parse_ctx_t *ctx, tbm_iface_t *ifc, tbm_span_t rest, int lineno)
{
    tbm_span_t addr = tbm_span_word(&rest), word = tbm_span_word(&rest), mask;
    char ip[TBM_IPV4_MAX] = "";
    int prefix;

    if (ifc->ipv4[0])
        return;   /* the first address is the one we keep; aliases follow it */
    if (tbm_span_eq(word, "-->")) {   /* point-to-point: "inet A --> B netmask M" */
        tbm_span_word(&rest);
        word = tbm_span_word(&rest);
    }
    mask = tbm_span_word(&rest);
    prefix = tbm_span_eq(word, "netmask") ? prefix_of(mask) : -1;
    if (tbm_span_copy(ip, sizeof(ip), addr) < 0 || !tbm_valid_ipv4(ip) || prefix < 0) {
        tbm_note(ctx, TBM_SEV_WARNING, "ifc-bad-inet", lineno, IFC_FIX,
                 "%s: cannot read address and netmask from \"inet %.*s ...\"", ifc->name, TBM_SPAN_SHOW(addr));
        return;
    }
    memcpy(ifc->ipv4, ip, sizeof(ip));
    ifc->prefix_len = prefix;
}

static void read_detail(tbm_parse_ctx_t *ctx, ifc_state_t *st, tbm_span_t line, int lineno)
{
    tbm_iface_t *ifc = st->cur;
    tbm_span_t rest = line, word = tbm_span_word(&rest);

    if (tbm_span_eq(word, "inet")) {
        read_inet(ctx, ifc, rest, lineno);
    } else if (tbm_span_eq(word, "status:")) {
        if (!tbm_span_eq(rest, "active") && !tbm_span_eq(rest, "inactive"))
            tbm_note(ctx, TBM_SEV_WARNING, "ifc-bad-status", lineno, IFC_FIX,
                     "%s: status \"%.*s\" is neither active nor inactive", ifc->name, TBM_SPAN_SHOW(rest));
        ifc->active = tbm_span_eq(rest, "active");
    } else if (tbm_span_eq(word, "ether") && !ifc->mac[0]) {
        if (tbm_mac_normalize(rest.p, rest.n, ifc->mac) == 0)
            st->own_mac |= UINT64_C(1) << (ifc - st->facts->ifaces);
    }
}

/* Interfaces networksetup names that ifconfig does not list. A bridge (bridge0, the Thunderbolt Bridge) is made
 * and destroyed at will: one absent is as JACCL wants it (bridge0 off), said once as a note. */
static void report_missing(tbm_parse_ctx_t *ctx, const ifc_state_t *st, const tbm_host_facts_t *facts)
{
    int i;

    for (i = 0; i < facts->n_ifaces; i++)
        if (!facts->ifaces[i].hwport[0] || (st->seen & (UINT64_C(1) << i)))
            continue;
        else if (strncmp(facts->ifaces[i].name, "bridge", 6) == 0)
            tbm_note(ctx, TBM_SEV_INFO, "bridge-absent", 0, "nothing to do",
                     "%s (\"%s\" in networksetup) is not in ifconfig: it was destroyed, which keeps it off as "
                     "JACCL wants", facts->ifaces[i].name, facts->ifaces[i].hwport);
        else
            tbm_note(ctx, TBM_SEV_WARNING, "iface-missing-in-ifconfig", 0,
                     "check that the interface exists (`ifconfig <name>`) and capture ifconfig again",
                     "%s (\"%s\" in networksetup) is not listed by ifconfig", facts->ifaces[i].name,
                     facts->ifaces[i].hwport);
}

static int read_line(tbm_parse_ctx_t *ctx, const tbm_line_t *l, void *state)
{
    ifc_state_t *st = state;

    if (l->text.n == 0)
        return 0;
    if (!l->indented)
        read_header(ctx, st, l->text, l->lineno);
    else if (st->cur)
        read_detail(ctx, st, l->text, l->lineno);
    else if (!st->in_block)
        tbm_note(ctx, TBM_SEV_WARNING, "ifc-orphan-line", l->lineno, IFC_FIX,
                 "\"%.*s\" comes before any interface header; ignored", TBM_SPAN_SHOW(l->text));
    return 0;
}

int tbm_parse_ifconfig(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    tbm_parse_ctx_t ctx;
    ifc_state_t st = { facts, NULL, 0, 0, 0 };

    tbm_parse_begin(&ctx, fs, IFC_SOURCE);
    if (tbm_parse_lines(&ctx, text, len, 0, read_line, &st) < 0)
        return -1;
    report_missing(&ctx, &st, facts);
    tbm_parse_end(&ctx);
    return 0;
}
