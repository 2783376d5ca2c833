/* facts_parse.c: the set of commands a probe runs on a Mac (replay file, argv, slot) and the parse of all
 * their outputs into one host's facts, with the checks that need more than one output. */
#include "parse_macos.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const argv_thunderbolt[] = { "system_profiler", "SPThunderboltDataType", "-json", NULL };
static const char *const argv_ports[] = { "networksetup", "-listallhardwareports", NULL };
static const char *const argv_ifconfig[] = { "ifconfig", NULL };
static const char *const argv_ibv[] = { "ibv_devices", NULL };
static const char *const argv_rdma_ctl[] = { "rdma_ctl", "status", NULL };
static const char *const argv_sw_vers[] = { "sw_vers", NULL };
static const char *const argv_sysctl[] = { "sysctl", "-n", "hw.memsize", "machdep.cpu.brand_string", "hw.model",
                                           NULL };
static const char *const argv_perf[] = { "sysctl", "hw.perflevel0.physicalcpu", "hw.perflevel1.physicalcpu",
                                         NULL };

/* In the order tbm_facts_parse_all() runs them: ports before the interfaces that bind to them. */
const tbm_raw_source_t tbm_raw_sources[] = {
    { "system_profiler_SPThunderboltDataType.json", argv_thunderbolt, offsetof(tbm_raw_outputs_t, thunderbolt) },
    { "networksetup_listallhardwareports.txt", argv_ports, offsetof(tbm_raw_outputs_t, hardware_ports) },
    { "ifconfig.txt", argv_ifconfig, offsetof(tbm_raw_outputs_t, ifconfig) },
    { "ibv_devices.txt", argv_ibv, offsetof(tbm_raw_outputs_t, ibv_devices) },
    { "rdma_ctl_status.txt", argv_rdma_ctl, offsetof(tbm_raw_outputs_t, rdma_ctl) },
    { "sw_vers.txt", argv_sw_vers, offsetof(tbm_raw_outputs_t, sw_vers) },
    { "sysctl.txt", argv_sysctl, offsetof(tbm_raw_outputs_t, sysctl) },
    { "sysctl_perflevels.txt", argv_perf, offsetof(tbm_raw_outputs_t, sysctl_perflevels) },
};
const size_t tbm_raw_nsources = sizeof(tbm_raw_sources) / sizeof(tbm_raw_sources[0]);

typedef int (*parser_fn)(const char *, size_t, tbm_host_facts_t *, tbm_findings_t *);

/* The parser of each source, same order as tbm_raw_sources. */
static const parser_fn parsers[] = {
    tbm_parse_thunderbolt, tbm_parse_networksetup, tbm_parse_ifconfig, tbm_parse_ibv_devices,
    tbm_parse_rdma_ctl, tbm_parse_sw_vers, tbm_parse_sysctl, tbm_parse_perflevels,
};

tbm_raw_t *tbm_raw_slot(tbm_raw_outputs_t *raw, size_t i)
{
    return i < tbm_raw_nsources ? (tbm_raw_t *)((char *)raw + tbm_raw_sources[i].offset) : NULL;
}

static void check_ports_bound(const tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    char where[TBM_PORT_NAME_MAX];
    int i;

    for (i = 0; i < facts->n_ports; i++) {
        if (facts->ports[i].iface[0] || facts->ports[i].receptacle <= 0)
            continue;
        tbm_facts_port_name(facts->hostname, &facts->ports[i], where, sizeof(where));
        tbm_finding_add(fs, TBM_SEV_WARNING, "tb-port-no-iface", where,
                        "check `networksetup -listallhardwareports` lists \"Thunderbolt N\" for every port",
                        "Thunderbolt %d has no network interface in networksetup", facts->ports[i].receptacle);
    }
}

/* A cable from one port of this Mac to another: said as the inventory says it, once the ports are named. */
static void check_cable_to_self(const tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    const tbm_tb_port_t *a, *b;
    char na[TBM_PORT_NAME_MAX], nb[TBM_PORT_NAME_MAX];
    int i, j;

    for (i = 0; i < facts->n_ports; i++)
        for (j = i + 1; j < facts->n_ports; j++) {
            a = &facts->ports[i];
            b = &facts->ports[j];
            if (!(a->peer_uuid[0] && strcmp(a->peer_uuid, b->domain_uuid) == 0) &&
                !(b->peer_uuid[0] && strcmp(b->peer_uuid, a->domain_uuid) == 0))
                continue;
            tbm_facts_port_name(facts->hostname, a, na, sizeof(na));
            tbm_facts_port_name(facts->hostname, b, nb, sizeof(nb));
            tbm_cable_to_self(fs, na, nb);
        }
}

/* The one port of receptacle n, or NULL (none, or two claiming it: then the receptacle names neither). */
static const tbm_tb_port_t *only_port(const tbm_host_facts_t *facts, int n)
{
    const tbm_tb_port_t *found = NULL;
    int i;

    for (i = 0; i < facts->n_ports && i < TBM_MAX_PORTS; i++)
        if (facts->ports[i].receptacle == n) {
            if (found)
                return NULL;
            found = &facts->ports[i];
        }
    return found;
}

/* The system_profiler parser names a port "Thunderbolt N" (its receptacle), as nothing else is known of it
 * then; once networksetup has bound the ports to their interfaces, its findings fs->items[first..end) name
 * each bound port as the inventory does (tbm_facts_port_name: "mac01:en2"). */
static void name_ports_by_iface(const tbm_host_facts_t *facts, tbm_findings_t *fs, size_t first, size_t end)
{
    char out[TBM_FINDING_TEXT_MAX * 2], name[TBM_PORT_NAME_MAX];
    const tbm_tb_port_t *p;
    const char *w, *at;
    size_t i, used;
    char *digits;
    long n;

    for (i = first; i < end && i < fs->n; i++) {
        used = 0;
        w = fs->items[i].what;
        while ((at = strstr(w, "Thunderbolt ")) != NULL && used < sizeof(out)) {
            n = strtol(at + 12, &digits, 10);
            p = digits > at + 12 && n > 0 && n < 100 ? only_port(facts, (int)n) : NULL;
            if (p && p->iface[0])
                tbm_facts_port_name(facts->hostname, p, name, sizeof(name));
            else
                snprintf(name, sizeof(name), "%.*s", (int)(digits - at), at);   /* kept as it was */
            used += (size_t)snprintf(out + used, sizeof(out) - used, "%.*s%s", (int)(at - w), w, name);
            w = at + (digits > at + 12 ? digits - at : 12);
        }
        if (w == fs->items[i].what || used >= sizeof(out))
            continue;   /* no port named, or too long to say (cannot happen: names are shorter) */
        snprintf(out + used, sizeof(out) - used, "%s", w);
        tbm_text_fit(fs->items[i].what, sizeof(fs->items[i].what), out);
    }
}

/* RDMA enabled without devices: the fix names what enabling cannot fix, from the fastest link to a Mac. */
static void check_rdma(const tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    char fix[TBM_FINDING_TEXT_MAX];
    int i, gbps = 0, cabled = 0;

    if (facts->rdma_enabled != 1 || facts->n_rdma > 0)
        return;
    for (i = 0; i < facts->n_ports; i++)
        if (facts->ports[i].connected && facts->ports[i].peer_uuid[0]) {
            if (!cabled || facts->ports[i].speed_gbps > gbps)
                gbps = facts->ports[i].speed_gbps;
            cabled = 1;
        }
    tbm_rdma_enabled_fix(facts, gbps, fix, sizeof(fix));
    tbm_finding_add(fs, TBM_SEV_WARNING, "rdma-enabled-no-devices", facts->hostname, fix,
                    "rdma_ctl says enabled but ibv_devices lists no device%s",
                    cabled ? "" : " (and no Mac is cabled directly to this one)");
}

/* The part of the facts each source fills (same order as tbm_raw_sources); -1: none of them. */
static const int parts[] = {
    TBM_PART_THUNDERBOLT, TBM_PART_NETWORK, TBM_PART_NETWORK, TBM_PART_RDMA, TBM_PART_RDMA, TBM_PART_OS, -1, -1,
};

/* The capture of source i could not be used: its part is unknown, with the why of the finding that said so. */
static void mark_unknown(tbm_host_facts_t *facts, size_t i, const tbm_findings_t *fs, size_t before)
{
    const tbm_finding_t *f = fs->n > before ? &fs->items[fs->n - 1] : NULL;
    char *u;

    if (parts[i] < 0 || facts->unknown[parts[i]][0])
        return;
    u = facts->unknown[parts[i]];
    if (f)   /* cut between characters: the facts document is UTF-8 (a Mac's or a service's name may not be ASCII) */
        snprintf(u, TBM_UNKNOWN_MAX, "the capture failed (%.*s: %.*s)", (int)tbm_utf8_fit(f->where, 60), f->where,
                 (int)tbm_utf8_fit(f->what, 150), f->what);
    else
        snprintf(u, TBM_UNKNOWN_MAX, "the capture failed (%s)", tbm_raw_sources[i].file);
}

int tbm_facts_parse_all(const tbm_raw_outputs_t *raw, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    size_t before = tbm_findings_count(fs, TBM_SEV_ERROR), i, n, tb_first = 0, tb_end = 0;
    const tbm_raw_t *out;

    tbm_facts_init(facts);
    if (raw->hostname)
        snprintf(facts->hostname, sizeof(facts->hostname), "%s", raw->hostname);
    for (i = 0; i < tbm_raw_nsources; i++) {
        out = (const tbm_raw_t *)((const char *)raw + tbm_raw_sources[i].offset);
        n = fs->n;
        if (parsers[i](out->data, out->len, facts, fs) < 0)
            mark_unknown(facts, i, fs, n);
        if (parsers[i] == tbm_parse_thunderbolt) {
            tb_first = n;
            tb_end = fs->n;
        }
    }
    name_ports_by_iface(facts, fs, tb_first, tb_end);
    check_ports_bound(facts, fs);
    check_cable_to_self(facts, fs);
    check_rdma(facts, fs);
    return (int)(tbm_findings_count(fs, TBM_SEV_ERROR) - before);
}
