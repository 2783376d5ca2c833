/* conf.h: tbmesh.conf, the lab's groups, nodes and cables as the plug-ins need them at job time:
 * Slurm-style Key=Value lines with hostlist expressions (see tbmesh.conf(5)); parser and writer. */
#ifndef TBM_CONF_H
#define TBM_CONF_H

#include <stddef.h>

#include "errbuf.h"
#include "finding.h"
#include "hostlist.h"
#include "topology.h"
#include "validate.h"

#define TBM_CONF_MAX_BYTES  (16u << 20)   /* largest file accepted */
#define TBM_CONF_LINE_MAX   8192          /* longest line, in bytes */
#define TBM_CONF_MAX_TOKENS 32            /* Key=Value settings on one line */
#define TBM_CONF_MAX_GROUPS 4096
#define TBM_CONF_MAX_NODES  65536
#define TBM_CONF_MAX_CABLES 262144
#define TBM_MLX_VERSION_MAX 16
#define TBM_PARTITION_MAX   64            /* one Slurm partition name, with its NUL */
#define TBM_PARTITIONS_MAX  512           /* a comma-separated list of them */
#define TBM_CONF_RECORD_DIR_MAX 1024      /* RecordDir's path, with its NUL (record.h's TBM_RECORD_PATH_MAX) */
#define TBM_CONF_GROUP_NAME_MAX 64        /* RecordReaders' Unix group, with its NUL */
#define TBM_CONF_RDMA_SUBSET_MAX 64       /* Macs named by one RdmaSubset= */

/* Defaults of the global settings. */
#define TBM_CONF_AGENT_PORT       6830
#define TBM_CONF_COORDINATOR_PORT 32323
#define TBM_CONF_RING_BASE_PORT   32323
#define TBM_CONF_SLURMD_BASE_PORT 6900

/* Operations owners (tbmesh-accept(1), step 7): who recovers a group when it fails, who grants access to
 * it, who keeps it up to date. One word each: a login, an e-mail address or a team's name. */
#define TBM_OWNER_MAX 64
typedef enum tbm_owner_role {
    TBM_OWNER_RECOVERY = 0,       /* OwnerRecovery= */
    TBM_OWNER_ACCESS,             /* OwnerAccess= */
    TBM_OWNER_UPKEEP,             /* OwnerUpkeep= */
    TBM_OWNER_ROLES,
} tbm_owner_role_t;

/* "OwnerRecovery", "OwnerAccess", "OwnerUpkeep"; and what each owner answers for, for people. */
const char *tbm_owner_key(tbm_owner_role_t r);
const char *tbm_owner_duty(tbm_owner_role_t r);

/* True when `s` is an owner: 1 to 63 of [A-Za-z0-9@._+:/-]. */
int tbm_owner_valid(const char *s);

typedef enum tbm_mode {
    TBM_MODE_BRIDGE = 0,          /* slurmd for the Mac runs on the bridge host; tasks are forwarded */
    TBM_MODE_DIRECT,              /* slurmd runs on the Mac itself */
} tbm_mode_t;

const char *tbm_mode_name(tbm_mode_t m);      /* "bridge", "direct" */

typedef struct tbm_conf_group {
    tbm_group_caps_t caps;        /* name, n_nodes, topology, backends, rdma */
    tbm_link_t link;
    tbm_mode_t mode;
    int *nodes;                   /* caps.n_nodes indices into nodes, in the order of Nodes= */
    size_t n_rdma_subset;         /* Macs of RdmaSubset= (their nodes' rdma_subset is set); 0 when none: in a
                                     group with Rdma=no, a full mesh of Macs whose cables all do RDMA */
    int line;                     /* where it was read (0 when not parsed) */
    char owner[TBM_OWNER_ROLES][TBM_OWNER_MAX];   /* this group's owners; "" when the global one holds */
} tbm_conf_group_t;

typedef struct tbm_conf_node {
    char name[TBM_HOSTNAME_MAX];
    int group;                    /* index into groups */
    int rdma_subset;              /* named by its group's RdmaSubset= */
    char agent_addr[TBM_HOSTNAME_MAX];  /* where macnoded listens; "" means the node name */
    int agent_port;               /* 0: the global AgentPort */
    int slurmd_port;              /* 0: derived from SlurmdBasePort (bridge mode) */
    int line;                     /* line of its group (0 when not parsed) */
} tbm_conf_node_t;

typedef struct tbm_conf_end {
    int node;                     /* index into nodes */
    char iface[TBM_IFNAME_MAX];   /* "en2" */
    char ipv4[TBM_IPV4_MAX];      /* "" when not given */
    int prefix_len;               /* -1 when not given */
    char rdma[TBM_IFNAME_MAX];    /* "rdma_en2"; "" when not given */
} tbm_conf_end_t;

typedef struct tbm_conf_cable {
    tbm_conf_end_t end[2];
    int speed_gbps;               /* 0 when not given */
    int group;
    int line;
} tbm_conf_cable_t;

/* A Mac the inventory leaves out of every group: its Thunderbolt facts are unknown (its capture failed). */
typedef struct tbm_conf_left_out {
    char name[TBM_HOSTNAME_MAX];
    char why[TBM_UNKNOWN_MAX];    /* why the capture failed: "system_profiler ...: ..." */
} tbm_conf_left_out_t;

typedef struct tbm_conf {
    int agent_port;
    int coordinator_port;
    int ring_base_port;
    int slurmd_base_port;
    char mlx_version[TBM_MLX_VERSION_MAX];   /* "0.31.2"; "" when not given */
    char mac_partition[TBM_PARTITION_MAX];   /* where a Mac job goes when it names none; "" when not given */
    char shared_partitions[TBM_PARTITIONS_MAX]; /* partitions holding Macs and Linux nodes, comma-separated */
    char default_partition[TBM_PARTITION_MAX];  /* Slurm's Default=YES partition; "" when not given */
    int exclusive_macs;                       /* ExclusiveMacs: a Mac job owns its Macs whole (default 1) */
    int jaccl_on_subsets;                     /* JacclOnSubsets: jaccl and jaccl-ring jobs may be placed on a
                                                 group's RdmaSubset= (default 0) */
    int placement_order;                      /* Placement=order: a job's candidate groups in tbmesh.conf's
                                                 order; 0 (pack, the default): the smallest first */
    char owner[TBM_OWNER_ROLES][TBM_OWNER_MAX];   /* every group's owners unless a Group line names its own */
    /* The record store's settings, kept as given so that a rewritten file keeps them (the store reads them
     * with tbm_record_settings_parse): "" and -1 when not given. */
    char record_dir[TBM_CONF_RECORD_DIR_MAX];      /* RecordDir */
    char record_readers[TBM_CONF_GROUP_NAME_MAX];  /* RecordReaders */
    int records;                                   /* Records: 1 yes, 0 no, -1 not given */
    tbm_conf_group_t *groups;
    size_t n_groups;
    tbm_conf_node_t *nodes;
    size_t n_nodes;
    tbm_conf_cable_t *cables;
    size_t n_cables;
    tbm_conf_left_out_t *left_out;   /* Macs of the inventory in no group (tbm_conf_from_topology only): the
                                        file says each in a comment line; never read back */
    size_t n_left_out;
} tbm_conf_t;

/* An empty configuration with the default settings. */
void tbm_conf_init(tbm_conf_t *c);
void tbm_conf_free(tbm_conf_t *c);

/* Parse a whole file held in buf[0..len) (`file` names it in messages). Every bad line is reported as
 * a finding (where "file:line", what, fix) in `errors` when not NULL; on any error the result is
 * rejected whole: returns -1, `out` is left empty and `err` holds the first error as
 * "file:line: what: fix" and how many more there are. Returns 0 on success. */
int tbm_conf_parse(const char *buf, size_t len, const char *file, tbm_conf_t *out, tbm_findings_t *errors,
                   tbm_err_t *err);

/* The text of a configuration (malloc'd), which tbm_conf_parse reads back equal; NULL when out of memory. */
char *tbm_conf_write(const tbm_conf_t *c);

/* The configuration of a validated topology. Group names, modes, node settings and global settings
 * come from `hint` (the last tbmesh.conf; NULL for none): a group takes the name of the hint group
 * holding most of its hosts, else "group<N>". A Mac whose Thunderbolt facts are unknown (its capture failed)
 * is left out of every group, as nothing is known of its cables (left_out: written as a comment with why and
 * what to do).
 * The configuration's groups are therefore not the topology's by index: find a host's by its name
 * (tbm_conf_node). A group whose verdict keeps an RDMA subset (some cables keep JACCL from the whole group)
 * gets it as RdmaSubset=, and the cables between its Macs their RDMA devices (Rdma=). Refuses hosts without
 * a valid, unique name. */
int tbm_conf_from_topology(const tbm_topology_t *t, const tbm_validation_t *v, const tbm_conf_t *hint,
                           tbm_conf_t *out, tbm_err_t *err);

/* The placement rules of a group's RdmaSubset=, when the site allows JACCL there (JacclOnSubsets=yes) and the
 * group names one: 1 with `caps` holding the group's name, the subset's size, Topology=mesh, Rdma=yes and the
 * backends jaccl and jaccl-ring; else 0 (caps untouched). The subset's Macs carry the Slurm feature
 * tbm_group_rdma_feature() of the group. */
int tbm_conf_rdma_subset_caps(const tbm_conf_t *c, const tbm_conf_group_t *g, tbm_group_caps_t *caps);

/* Same settings, groups (by name, nodes as sets), node settings and cables (in order). */
int tbm_conf_equal(const tbm_conf_t *a, const tbm_conf_t *b);

/* Where tbmesh.conf lives by default: beside slurm.conf (`slurm_conf`, NULL or "" for Slurm's own default
 * /etc/slurm/slurm.conf). Writes the path into buf. */
void tbm_conf_default_path(const char *slurm_conf, char *buf, size_t len);

/* Look-ups: a group by name, a node by name (index or -1). */
const tbm_conf_group_t *tbm_conf_group(const tbm_conf_t *c, const char *name);

/* The owner of a group in a role: the Group line's, else the global one, else "" (none named). */
const char *tbm_conf_owner(const tbm_conf_t *c, const tbm_conf_group_t *g, tbm_owner_role_t r);
int tbm_conf_node(const tbm_conf_t *c, const char *name);

/* Where node n's agent listens: "ADDR:PORT" (AgentAddr, else the node's name; its AgentPort, else the global
 * one). */
void tbm_conf_agent_of(const tbm_conf_t *c, int n, char *buf, size_t len);

/* The node whose agent listens at `agent` ("ADDR:PORT", or "ADDR": any port), as tbm_conf_agent_of says it:
 * its index, or -1 when no node's agent is there, or more than one's. */
int tbm_conf_node_at(const tbm_conf_t *c, const char *agent);

#endif
