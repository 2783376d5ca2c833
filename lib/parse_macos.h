/* parse_macos.h: the parsers of the macOS command outputs a probe collects, and the set of raw outputs
 * (one buffer per command, as the darwin probe captures them or the lab's replay files hold them).
 * Parsers take text buffers (not NUL-terminated), fill tbm_host_facts_t and report every problem as a
 * finding; they never fail hard. Each returns 0 when the output was read, -1 when it could not be used
 * at all (an error finding then says why).
 *
 * Finding codes (the `where` of each names the command, and the line when there is one):
 *   any output: output-missing, output-empty, output-too-large, output-invalid-utf8, output-more-problems
 *   (output-more-notes when those left out are only information)
 *   system_profiler: tb-json-invalid, tb-json-shape, tb-bad-bus, tb-bad-value, tb-port-no-uuid,
 *     tb-no-receptacle, tb-receptacle-invalid, tb-speed-unknown, tb-model-differs, tb-peer-ambiguous,
 *     tb-peer-behind-hub,
 *     tb-too-many-ports, tb-duplicate-uuid, tb-duplicate-receptacle
 *   networksetup: ns-orphan-line, ns-garbage-line, ns-unknown-key, ns-bad-hwport, ns-bad-device, ns-bad-mac,
 *     ns-no-device, ns-duplicate-device, ns-too-many-ifaces
 *   ifconfig: ifc-orphan-line, ifc-garbage-line, ifc-bad-inet, ifc-bad-status, ifc-duplicate,
 *     ifc-too-many-ifaces, iface-missing-in-ifconfig, bridge-absent (a note)
 *   ibv_devices / rdma_ctl: ibv-no-header, ibv-bad-row, ibv-duplicate, ibv-too-many, rdma-ctl-unknown
 *   sw_vers / sysctl: sw-vers-garbage-line, sw-vers-bad-value, sw-vers-missing, sysctl-bad-value,
 *     sysctl-bad-line, sysctl-extra-line, sysctl-duplicate, sysctl-short, sysctl-missing,
 *     sysctl-perflevel-bad-line, sysctl-no-performance-cores
 *   across outputs (tbm_facts_parse_all): tb-port-no-iface, rdma-enabled-no-devices, cable-to-self (the
 *     inventory's own, tbm_cable_to_self() in facts.h, with ports named by interface)
 * Ports are named as the inventory names them (tbm_facts_port_name): by interface once networksetup has
 * bound them ("mac01:en2"; tbm_facts_parse_all renames them so in the system_profiler parser's findings too),
 * else "Thunderbolt 2" by its receptacle, the bus only where no receptacle is known. */
#ifndef TBM_PARSE_MACOS_H
#define TBM_PARSE_MACOS_H

#include <stddef.h>

#include "facts.h"
#include "finding.h"

/* One captured output; data NULL when the command was not run or its file is absent. */
typedef struct tbm_raw {
    const char *data;
    size_t len;
} tbm_raw_t;

/* Everything a probe captures on one Mac. The comment names the replay file of each in the lab. */
typedef struct tbm_raw_outputs {
    const char *hostname;        /* this host's name (not a command output); NULL when unknown */
    tbm_raw_t thunderbolt;       /* system_profiler_SPThunderboltDataType.json */
    tbm_raw_t hardware_ports;    /* networksetup_listallhardwareports.txt */
    tbm_raw_t ifconfig;          /* ifconfig.txt */
    tbm_raw_t ibv_devices;       /* ibv_devices.txt */
    tbm_raw_t rdma_ctl;          /* rdma_ctl_status.txt */
    tbm_raw_t sw_vers;           /* sw_vers.txt */
    tbm_raw_t sysctl;            /* sysctl.txt */
    tbm_raw_t sysctl_perflevels; /* sysctl_perflevels.txt */
} tbm_raw_outputs_t;

/* One command a probe runs: its replay file name, its argv (NULL-terminated, no shell) and where its
 * output goes in tbm_raw_outputs_t. */
typedef struct tbm_raw_source {
    const char *file;
    const char *const *argv;
    size_t offset;               /* offsetof(tbm_raw_outputs_t, <field>) */
} tbm_raw_source_t;

extern const tbm_raw_source_t tbm_raw_sources[];
extern const size_t tbm_raw_nsources;

/* The slot of source i in raw. */
tbm_raw_t *tbm_raw_slot(tbm_raw_outputs_t *raw, size_t i);

/* system_profiler SPThunderboltDataType -json: ports (receptacle, bus, domain UUID, speed, status, peer
 * Mac) and this host's model name. Ports are sorted by receptacle number. A Mac found behind a hub, dock or
 * daisy chain is kept apart (hub_peer_uuid, with a tb-peer-behind-hub finding): it is not a cable. */
int tbm_parse_thunderbolt(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs);

/* "Up to 80 Gb/s", "80 Gb/s", "40 Gb/s": the number of Gb/s; -1 when the text is not a speed. */
int tbm_parse_tb_speed(const char *text);

/* networksetup -listallhardwareports: interfaces with their hardware port and MAC; binds each
 * "Thunderbolt N" device to the port of receptacle N already in facts. */
int tbm_parse_networksetup(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs);

/* Bind the "Thunderbolt N" interfaces in facts to the ports of receptacle N (done by the parser above;
 * callable again after ports were added). */
void tbm_facts_bind_ports(tbm_host_facts_t *facts);

/* ifconfig (macOS): per interface the UP flag, "status: active", the first IPv4 address and its prefix. */
int tbm_parse_ifconfig(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs);

/* ibv_devices: the RDMA device names ("rdma_en2"). No devices (header only, or no output) is valid. */
int tbm_parse_ibv_devices(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs);

/* rdma_ctl status: "enabled" -> rdma_enabled 1, "disabled" -> 0; anything else -> -1 and a finding. */
int tbm_parse_rdma_ctl(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs);

/* sw_vers: ProductName, ProductVersion, BuildVersion. */
int tbm_parse_sw_vers(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs);

/* sysctl -n hw.memsize machdep.cpu.brand_string hw.model: three lines in that order; or the same as
 * `name: value` (or `name = value`) lines in any order, which may also give hw.perflevel{0,1}.physicalcpu. */
int tbm_parse_sysctl(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs);

/* sysctl hw.perflevel0.physicalcpu hw.perflevel1.physicalcpu: performance and efficiency cores, as
 * `name: value` lines or (with -n) bare counts in that order. A count of 0 is no count. */
int tbm_parse_perflevels(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs);

/* Run every parser over the outputs present (missing ones give an "output-missing" finding), in the order
 * their results depend on, then cross-check them: a Thunderbolt port without an interface, an interface
 * networksetup names but ifconfig lacks, RDMA enabled without devices. The system_profiler parser's findings
 * then name each port bound to an interface by it ("Thunderbolt 1: ..." becomes "mac01:en3: ..."; the host's
 * name only when raw->hostname is given). facts is initialised here. Returns the number of error findings
 * added. */
int tbm_facts_parse_all(const tbm_raw_outputs_t *raw, tbm_host_facts_t *facts, tbm_findings_t *fs);

#endif
