/* labgen.h: the lab generator's model of lab/lab.conf (groups of Macs, Linux nodes, cables) and its parts:
 * spec.c reads the spec, plan.c derives the wiring and Slurm's node lines, mac_thunderbolt.c and mac_text.c
 * write each kind of recorded macOS output, outputs.c lays them out per Mac. */
#ifndef TBM_LABGEN_H
#define TBM_LABGEN_H

#include <stdint.h>
#include <stdio.h>

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
    LAB_LINUX_MGMT_BASE = 21,   /* the first free address from here */
    LAB_MAX_BRIDGES = 8,        /* bridge hosts besides the controller */
    LAB_BRIDGE_MGMT_BASE = 200, /* bridge host k (1-based): 10.77.0.(200+k) */
};

/* The keys of a Group= line, in the order of lab_group_t's raw values. */
enum group_key {
    GK_GROUP, GK_MODE, GK_WIRING, GK_NODES, GK_MODEL_NAME, GK_MODEL_ID, GK_CHIP, GK_MEMORY, GK_PCORES,
    GK_ECORES, GK_OS, GK_BUILD, GK_LINK, GK_RDMA, GK_PORTS, GK_BRIDGE, GK_COUNT
};

typedef struct lab_group {
    char name[LAB_NAME_MAX];
    char model_name[LAB_TEXT_MAX], model_id[LAB_TEXT_MAX], chip[LAB_TEXT_MAX];
    char os[LAB_NAME_MAX], build[LAB_NAME_MAX];
    int bridge, ring, rdma;
    int bridge_host;            /* bridge mode: index in lab->bridges, or -1 for the controller host */
    unsigned mem_gib, pcores, ecores, link_gbps, ports;
    int line;
} lab_group_t;

/* A bridge host other than the controller (Bridge=NAME): a namespace of its own on the management network,
 * where the slurmds of its groups' Macs run. */
typedef struct lab_bridge {
    char name[LAB_NAME_MAX];
    unsigned mgmt, hostno;
} lab_bridge_t;

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
    lab_bridge_t bridges[LAB_MAX_BRIDGES];
    int ngroups, nmacs, nlinux, ncables, nbridges;
} lab_t;

/* spec.c: reads LAB.CONF into *lab (messages on stderr as FILE:LINE: ...); 0 or -1. */
int lab_load(lab_t *lab, const char *path);
/* spec.c: --cut NODE:enX marks the cable in that interface as pulled; 0 or -1 (message on stderr). */
int lab_apply_cut(lab_t *lab, const char *spec);

/* plan.c: derived values. */
void lab_hwaddr(char out[18], unsigned hostno, unsigned ifno);
uint64_t lab_hash64(uint64_t h, const char *s);
void lab_name_uuid(char out[37], const char *host, const char *what);
int lab_cable_end(const lab_cable_t *cb, int mac);
const lab_group_t *lab_group_of(const lab_t *lab, int mac);
const lab_cable_t *lab_live_cable(const lab_t *lab, int mac, unsigned rcpt);
void lab_print_plan(const lab_t *lab, FILE *out);
/* plan.c: the management address (last octet) where slurmctld reaches Mac `mac`'s slurmd: its bridge host's
 * (1, the controller, or a Bridge= host's) in bridge mode, its own in direct mode. */
unsigned lab_slurmd_mgmt(const lab_t *lab, int mac);
/* plan.c: slurm.conf node lines; a Mac's RealMemory is lib/slurmconf's, as tbmesh inventory writes it. */
void lab_print_slurm_nodes(const lab_t *lab, FILE *out);

/* plan.c: a Group= line per group for tbmesh inventory --hint: name, nodes, wiring, mode (the inventory finds
 * the cables; Backends=mpi lets the line stand without them). */
void lab_print_hint(const lab_t *lab, FILE *out);

/* mac_thunderbolt.c: system_profiler SPThunderboltDataType -json of one Mac. */
int lab_is_tb5(const lab_group_t *g);
void lab_write_thunderbolt(const lab_t *lab, int mac, FILE *f);

/* mac_text.c: the text outputs of one Mac. */
void lab_write_hardware_ports(const lab_t *lab, int mac, FILE *f);
void lab_write_ifconfig(const lab_t *lab, int mac, FILE *f);
void lab_write_ibv_devices(const lab_t *lab, int mac, FILE *f);
void lab_write_rdma_ctl(const lab_t *lab, int mac, FILE *f);
void lab_write_sw_vers(const lab_t *lab, int mac, FILE *f);
void lab_write_sysctl(const lab_t *lab, int mac, FILE *f);
void lab_write_perflevels(const lab_t *lab, int mac, FILE *f);
void lab_write_hostname(const lab_t *lab, int mac, FILE *f);
void lab_write_ioreg(const lab_t *lab, int mac, FILE *f);
void lab_write_powermetrics(const lab_t *lab, int mac, FILE *f);

/* outputs.c: DIR/NODE/replay/ for every Mac; 0 or -1 (message on stderr). */
int lab_write_outputs(const lab_t *lab, const char *outdir);

#endif
