/* netplan.h: the per-cable addressing of a Thunderbolt lab: every cable its own /30, both ends numbered, and
 * the commands that put the plan on a Mac (bridge0 down, an IPv4 address per Thunderbolt interface, a host
 * route to each peer, and routes to every other Thunderbolt address of the lab over the cables, so that Open
 * MPI, which dials every address a peer has, reaches each one). Cables that already have addresses in
 * tbmesh.conf keep them; kept addresses that are not one link are named (tbm_netplan_broken). */
#ifndef TBM_NETPLAN_H
#define TBM_NETPLAN_H

#include <stddef.h>
#include <stdint.h>
#include "conf.h"
#include "errbuf.h"
#include "finding.h"

typedef struct tbm_netplan_end {
    char node[TBM_HOSTNAME_MAX];
    char iface[TBM_IFNAME_MAX];
    char ipv4[TBM_IPV4_MAX];
} tbm_netplan_end_t;

typedef struct tbm_netplan_cable {
    tbm_netplan_end_t end[2];
    int prefix_len;              /* 30 for planned cables; what tbmesh.conf says for kept ones (30 when it
                                    gives no prefix) */
    int planned;                 /* 1: numbered now; 0: kept from tbmesh.conf */
    int broken;                  /* kept, but the two addresses are not one link (not on one /30 nor on one
                                    network of the prefix both give, or the same address), or they collide */
    int collides;                /* kept, and its subnet collides with that of kept cable collides - 1 (one
                                    group: overlapping subnets; two groups: one address) */
} tbm_netplan_cable_t;

typedef struct tbm_netplan {
    tbm_netplan_cable_t *cables;
    size_t n_cables;
} tbm_netplan_t;

/* Plan the cables of `c` in file order. Cables without addresses (or all, with renumber) get the next free
 * /30 of `base` ("169.254.0.0/16"; the network's first /30 is skipped): .1 for the first end, .2 for the
 * second. Returns 0, or -1 with err (bad base, base too small, an address kept twice). */
int tbm_netplan_make(const tbm_conf_t *c, const char *base, int renumber, tbm_netplan_t *plan, tbm_err_t *err);

void tbm_netplan_free(tbm_netplan_t *plan);

/* Are the two addresses tbmesh.conf gives a cable (Addr=) one link? 1 also when it gives none. */
int tbm_netplan_addrs_ok(const tbm_conf_cable_t *cb);

/* An error finding for every broken cable of the plan ("netplan-pair-broken"; "netplan-addr-collision"
 * naming both cables and the subnet), saying what to run (--renumber). Returns how many. */
size_t tbm_netplan_broken(const tbm_netplan_t *plan, tbm_findings_t *fs);

/* For tbmesh inventory: clear the addresses of every cable of `c` that are not one link, and of the later
 * of two cables whose addresses collide, so that the tbmesh.conf it writes does not keep them and macnode
 * netplan numbers that cable afresh; a warning ("addr-left-out") for each. Returns how many. */
size_t tbm_netplan_drop_broken(tbm_conf_t *c, tbm_findings_t *fs);

/* The plan as text, one cable a line: "mac01:en2 169.254.0.5/30 <-> mac02:en2 169.254.0.6/30"; a broken
 * kept cable says so and what to run. */
char *tbm_netplan_table(const tbm_netplan_t *plan);

/* A route on one host to a Thunderbolt address of another host that is not on a cable of its own. */
typedef struct tbm_netplan_route {
    char dest[TBM_IPV4_MAX];        /* the other host's address */
    char owner[TBM_HOSTNAME_MAX];   /* the host that holds it */
    char via[TBM_IPV4_MAX];         /* the next hop: its address on the cable the route leaves by */
    char iface[TBM_IFNAME_MAX];     /* this host's interface on that cable */
    int hops;                       /* cables to the owner: 1 when it is cabled to this host */
} tbm_netplan_route_t;

/* The routes of `host`: to every address of every other host it reaches over cables, along a shortest path
 * (fewest cables; ties: the first cable in file order), except the peers' ends of its own cables (their
 * /30 covers them). *forwards is 1 when two of its neighbours have no cable between them, so that routes of
 * other hosts may pass through it (it must forward IPv4): never on a full mesh, always on a ring of 4 or
 * more. Returns 0 (*routes malloc'ed, possibly NULL with *n 0), or -1 with err (out of memory). */
int tbm_netplan_routes(const tbm_netplan_t *plan, const char *host, tbm_netplan_route_t **routes, size_t *n,
                       int *forwards, tbm_err_t *err);

/* Which commands tbm_netplan_commands() writes. */
typedef enum tbm_netplan_os {
    TBM_NETPLAN_MACOS = 0,   /* ifconfig, route, sysctl net.inet.ip.forwarding */
    TBM_NETPLAN_LINUX = 1,   /* ip addr/route replace, sysctl net.ipv4.ip_forward (the embedded lab's Macs) */
} tbm_netplan_os_t;

/* The commands for `host` (NULL: every host, each under a "# on <host>" line), as a shell script that an
 * admin can read and run with sudo. NULL with err when `host` has no cable in the plan. The Linux form sets
 * addresses and routes but leaves links up or down as they are. */
char *tbm_netplan_commands(const tbm_netplan_t *plan, const char *host, tbm_netplan_os_t os, tbm_err_t *err);

#endif
