/* facts.h: what one host says about itself (the probe's answer): Thunderbolt ports and their peers,
 * network interfaces and addresses, RDMA state, OS, model, cores by kind and memory.
 * Filled by the parsers of macOS outputs (parse_*.c) or by the Linux probe; read by the topology model.
 * Every array is bounded; a parser that meets more than fits records a finding, it never overflows. */
#ifndef TBM_FACTS_H
#define TBM_FACTS_H

#include <stddef.h>
#include <stdint.h>

#define TBM_HOST_MAX     64   /* host names, model names, chip names (with NUL) */
#define TBM_IFNAME_MAX   16   /* interface names ("en2", "bridge0") */
#define TBM_UUID_MAX     40   /* Thunderbolt domain UUIDs, canonical text form */
#define TBM_IPV4_MAX     16   /* dotted quad */
#define TBM_MAC_MAX      18   /* aa:bb:cc:dd:ee:ff */
#define TBM_MAX_PORTS    16   /* Thunderbolt receptacles of one host */
#define TBM_MAX_IFACES   64   /* network interfaces of one host */
#define TBM_MAX_RDMA     16   /* RDMA devices of one host */

/* One Thunderbolt receptacle ("Thunderbolt N" in networksetup, receptacle_id_key N in system_profiler). */
typedef struct tbm_tb_port {
    int receptacle;                    /* N of "Thunderbolt N"; 0 when unknown */
    char bus[TBM_HOST_MAX];            /* system_profiler _name, "thunderboltusb4_bus_1" */
    char domain_uuid[TBM_UUID_MAX];    /* this port's domain_uuid_key */
    int speed_gbps;                    /* current_speed_key in Gb/s (40, 80, 120); 0 when unknown */
    int connected;                     /* receptacle_status_key is "receptacle_connected" */
    char peer_uuid[TBM_UUID_MAX];      /* domain UUID of the Mac at the other end of a direct cable; "" when
                                          no Mac is cabled to this port */
    char peer_name[TBM_HOST_MAX];      /* that peer's device_name_key ("Mac Studio" or "Mac16,9") */
    char hub_peer_uuid[TBM_UUID_MAX];  /* domain UUID of a Mac reached only through a hub, dock or daisy
                                          chain (not a cable: JACCL's RDMA needs direct ones); "" when none */
    char hub_peer_name[TBM_HOST_MAX];  /* that Mac's device_name_key */
    char hub[TBM_HOST_MAX];            /* the device cabled to this port in front of it ("TS4"); "" unknown */
    char iface[TBM_IFNAME_MAX];        /* enX bound to "Thunderbolt N" by networksetup; "" when unknown */
} tbm_tb_port_t;

/* One network interface (networksetup and ifconfig together). */
typedef struct tbm_iface {
    char name[TBM_IFNAME_MAX];         /* "en2" */
    char hwport[TBM_HOST_MAX];         /* networksetup "Hardware Port", "Thunderbolt 2", "Ethernet" */
    char mac[TBM_MAC_MAX];             /* Ethernet Address */
    char ipv4[TBM_IPV4_MAX];           /* first inet address; "" when none */
    int prefix_len;                    /* from the netmask (0xfffffffc -> 30); -1 when no address */
    int up;                            /* UP flag in ifconfig */
    int active;                        /* "status: active" in ifconfig */
} tbm_iface_t;

/* The parts of a host's facts that can be unknown because their capture failed. */
typedef enum tbm_facts_part {
    TBM_PART_THUNDERBOLT = 0,          /* system_profiler SPThunderboltDataType: ports, cables */
    TBM_PART_NETWORK,                  /* networksetup and ifconfig: interfaces, addresses */
    TBM_PART_RDMA,                     /* ibv_devices and rdma_ctl */
    TBM_PART_OS,                       /* sw_vers */
    TBM_PART_COUNT,
} tbm_facts_part_t;

#define TBM_UNKNOWN_MAX 240            /* "the capture failed (why)", with the NUL */

/* Everything one host says about itself. */
typedef struct tbm_host_facts {
    char hostname[TBM_HOST_MAX];
    char model_name[TBM_HOST_MAX];     /* system_profiler device_name_key of this host, "Mac Studio" */
    char model_id[TBM_HOST_MAX];       /* sysctl hw.model, "Mac15,14" */
    char chip[TBM_HOST_MAX];           /* sysctl machdep.cpu.brand_string, "Apple M3 Ultra" */
    uint64_t memory_bytes;             /* sysctl hw.memsize */
    int cores_performance;             /* hw.perflevel0.physicalcpu (hwloc cpukinds) */
    int cores_efficiency;              /* hw.perflevel1.physicalcpu */
    char os_name[TBM_HOST_MAX];        /* sw_vers ProductName, "macOS" */
    char os_version[TBM_HOST_MAX];     /* sw_vers ProductVersion, "26.2" */
    char os_build[TBM_HOST_MAX];       /* sw_vers BuildVersion, "25C56" */
    int rdma_enabled;                  /* rdma_ctl status: 1 enabled, 0 disabled, -1 unknown */
    int n_rdma;
    char rdma_devices[TBM_MAX_RDMA][TBM_IFNAME_MAX];  /* ibv_devices names, "rdma_en2" */
    int n_ports;
    tbm_tb_port_t ports[TBM_MAX_PORTS];
    int n_ifaces;
    tbm_iface_t ifaces[TBM_MAX_IFACES];
    char unknown[TBM_PART_COUNT][TBM_UNKNOWN_MAX];  /* "" when the part was read; else "the capture failed
                                                       (why)": nothing may be concluded from that part */
} tbm_host_facts_t;

/* "thunderbolt", "network", "rdma", "os": the part's name in the facts document; "Thunderbolt", "network",
 * "RDMA", "macOS version" in messages (`for_people`). */
const char *tbm_facts_part_name(tbm_facts_part_t part, int for_people);

/* Why the part is unknown, without "the capture failed (...)" around it: "system_profiler ...: ...". */
void tbm_facts_unknown_why(const tbm_host_facts_t *h, tbm_facts_part_t part, char *buf, size_t len);

/* Empty facts: every count 0, every string "", rdma_enabled -1 (unknown). */
void tbm_facts_init(tbm_host_facts_t *facts);

/* The interface of that name, or NULL. */
tbm_iface_t *tbm_facts_find_iface(tbm_host_facts_t *facts, const char *name);

/* The interface of that name, added (empty, prefix_len -1) when absent; NULL when the table is full. */
tbm_iface_t *tbm_facts_get_iface(tbm_host_facts_t *facts, const char *name);

/* The Thunderbolt port with receptacle number n (n > 0), or NULL. */
tbm_tb_port_t *tbm_facts_find_port(tbm_host_facts_t *facts, int receptacle);

/* A Thunderbolt port's name in messages, one vocabulary for the probe and the inventory: "mac01:en2" (its
 * interface), else "mac01:Thunderbolt 2" (its receptacle, as networksetup names it), else "mac01:bus
 * thunderboltusb4_bus_1" (the bus, when nothing else names it). Without "mac01:" when host is "". Fields are
 * read bounded (facts may come from a document without NULs in them). */
#define TBM_PORT_NAME_MAX (TBM_HOST_MAX + TBM_HOST_MAX + 8)
void tbm_facts_port_name(const char *host, const tbm_tb_port_t *p, char *buf, size_t len);

struct tbm_findings;

/* The finding, the same in the probe and the inventory, for a cable whose two ends are ports of one Mac,
 * named `a` and `b` (tbm_facts_port_name): error cable-to-self at "a <-> b". */
void tbm_cable_to_self(struct tbm_findings *fs, const char *a, const char *b);

/* Checks of single values, shared by the parsers and the facts JSON reader. Each returns 1 when valid. */
int tbm_valid_ifname(const char *s);   /* 1-15 of [A-Za-z0-9_.-], starts with a letter: "en2", "bridge0" */
int tbm_valid_uuid(const char *s);     /* 1-39 of hex digits and '-': "A1B2C3D4-...-...." */
int tbm_valid_ipv4(const char *s);     /* dotted quad, each part 0-255, no leading zeros: "169.254.1.1" */
int tbm_valid_mac(const char *s);      /* six two-digit lower-case hex groups: "36:a8:4b:01:02:03" */
int tbm_valid_text(const char *s);     /* printable: no control characters (UTF-8 is checked elsewhere) */

/* 1 when macOS version `v` ("26.2", "26.10.1") is 26.2 or later, the first with RDMA over Thunderbolt;
 * 0 when older; -1 when it cannot be read. */
int tbm_macos_has_rdma(const char *v);

/* What to do about a Mac whose `rdma_ctl status` says enabled while ibv_devices lists no device (on a link
 * of `gbps` Gb/s; 0 when unknown): the causes enabling RDMA cannot fix, with the facts that point at them
 * (a Thunderbolt 4 port or Mac, the cable, macOS older than 26.2). */
void tbm_rdma_enabled_fix(const tbm_host_facts_t *h, int gbps, char *buf, size_t len);

/* Write a MAC address written with 1 or 2 hex digits per group, any case ("36:A8:4B:1:2:3"), into out in
 * the canonical form "36:a8:4b:01:02:03". Returns 0, or -1 (out left "") when it is not a MAC address. */
int tbm_mac_normalize(const char *in, size_t len, char out[TBM_MAC_MAX]);

#endif
