/* topology.h: the cabling model of a lab: hosts, Thunderbolt ports, cables matched by domain UUID from
 * both ends, multi-rail pairs, groups (connected components) and their class (mesh, ring, other). */
#ifndef TBM_TOPOLOGY_H
#define TBM_TOPOLOGY_H

#include <stddef.h>

#include "errbuf.h"
#include "facts.h"
#include "finding.h"

#define TBM_TOPOLOGY_MAX_HOSTS 65536

typedef enum tbm_topo_class {
    TBM_TOPO_SINGLE = 0,   /* one host and no cable */
    TBM_TOPO_MESH,         /* every pair of hosts joined (two joined hosts are a mesh of 2) */
    TBM_TOPO_RING,         /* one cycle through all hosts: n >= 3, every host exactly 2 neighbours */
    TBM_TOPO_OTHER,        /* chain, star, partial mesh, or held together by a one-sided cable only */
} tbm_topo_class_t;

/* One Thunderbolt port of a host that has a domain UUID or sees a peer. */
typedef struct tbm_port {
    int host;                          /* index into the topology's hosts */
    int fact;                          /* index into that host's facts.ports */
    int receptacle;
    char iface[TBM_IFNAME_MAX];        /* "" when networksetup did not bind it */
    int speed_gbps;
    char domain_uuid[TBM_UUID_MAX];
    char peer_uuid[TBM_UUID_MAX];      /* "" when no Mac is at the other end */
    int connected;
    char ipv4[TBM_IPV4_MAX];           /* of its interface; "" when none */
    int prefix_len;                    /* -1 when no address */
    int iface_found;                   /* the interface is listed among the host's interfaces */
    int iface_up;
    int duplicate_uuid;                /* another port reports the same domain UUID */
    int cable;                         /* index into cables, -1 when none */
} tbm_port_t;

/* One cable. end[1] is -1 when the cable is seen from one end only. */
typedef struct tbm_cable {
    int port[2];                       /* indices into ports */
    int host[2];                       /* hosts of the ends; host[1] may be known when port[1] is not */
    int speed_gbps;                    /* the lower of both ends' speeds */
    int one_sided;
    int group;
} tbm_cable_t;

/* Two hosts joined by at least one cable seen from both ends. */
typedef struct tbm_pair {
    int host[2];                       /* host[0] < host[1] */
    int n_cables;                      /* two or more: a multi-rail pair */
    int group;
} tbm_pair_t;

typedef struct tbm_group {
    size_t n_hosts;
    int *hosts;                        /* ascending host indices */
    size_t n_cables;
    int *cables;                       /* ascending cable indices, one-sided ones included */
    size_t n_pairs;                    /* joined pairs (cables seen from both ends) */
    size_t n_multi_rail;               /* pairs joined by two or more cables */
    tbm_topo_class_t cls;
} tbm_group_t;

typedef struct tbm_topology {
    const tbm_host_facts_t *hosts;     /* borrowed: the caller keeps the facts alive */
    size_t n_hosts;
    tbm_port_t *ports;
    size_t n_ports;
    tbm_cable_t *cables;
    size_t n_cables;
    tbm_pair_t *pairs;
    size_t n_pairs;
    tbm_group_t *groups;               /* ordered by their first host */
    size_t n_groups;
    int *host_group;                   /* group of each host */
    tbm_findings_t findings;           /* what the model saw: cable-one-sided, cable-through-hub, ... */
} tbm_topology_t;

/* Build the model from the hosts' facts (borrowed). Problems in the facts become findings; a host whose
 * Thunderbolt facts are unknown (its capture failed) gives no port, whatever its facts hold, and is a group of
 * its own. Returns -1 only for too many hosts or no memory (then nothing needs freeing). */
int tbm_topology_build(tbm_topology_t *t, const tbm_host_facts_t *hosts, size_t n, tbm_err_t *err);
void tbm_topology_free(tbm_topology_t *t);

/* The class of n hosts numbered 0..n-1 joined by the given pairs (repeats and order do not matter;
 * pairs naming a host outside 0..n-1 or the same host twice are ignored). */
tbm_topo_class_t tbm_topo_classify(size_t n, const int (*pairs)[2], size_t n_pairs);

const char *tbm_topo_class_name(tbm_topo_class_t c);   /* "single", "mesh", "ring", "other" */
int tbm_topo_class_parse(const char *s, tbm_topo_class_t *c);  /* 0, or -1 when unknown */

/* Labels for messages: "mac01", "mac01:en2" (or "mac01:Thunderbolt 2" without interface: tbm_facts_port_name),
 * "mac01:en2 <-> mac02:en2" (or "mac01:en2 <-> mac02:?" / "<-> ?" for a one-sided cable). */
const char *tbm_topology_host_name(const tbm_topology_t *t, int host);
void tbm_port_label(const tbm_topology_t *t, int port, char *buf, size_t len);
void tbm_cable_label(const tbm_topology_t *t, int cable, char *buf, size_t len);

/* The pair joining two hosts, or NULL. */
const tbm_pair_t *tbm_topology_pair(const tbm_topology_t *t, int a, int b);

#endif
