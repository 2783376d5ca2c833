/* addrclash.h: which Thunderbolt cables' addresses collide: two cables of one group on overlapping subnets,
 * two cables of different groups holding one address, or a cable whose subnet overlaps a management network.
 * Traffic for one of them would leave through the other. Used by the inventory (the Macs' addresses) and by
 * netplan (the addresses tbmesh.conf keeps). */
#ifndef TBM_ADDRCLASH_H
#define TBM_ADDRCLASH_H

#include <stddef.h>
#include <stdint.h>

/* One address with its network: a cable's end, or a management interface. */
typedef struct tbm_addr_net {
    uint32_t addr;
    int prefix;        /* 0..32; anything else: the address alone (/32) */
    int owner;         /* the cable (>= 0), or a management interface (< 0, one number each) */
    int group;         /* the cable's group; unused for a management interface */
} tbm_addr_net_t;

/* Two nets that collide (indices into the caller's array), one per pair of owners, `a` the lower owner's. */
typedef struct tbm_addr_clash {
    size_t a, b;
} tbm_addr_clash_t;

/* The network of an address: its first address and its size - 1. */
void tbm_addr_net_range(const tbm_addr_net_t *n, uint32_t *first, uint32_t *last);

/* "10.0.0.4/30" (the network, not the address); buf of at least 20 bytes. */
void tbm_addr_net_text(const tbm_addr_net_t *n, char *buf, size_t len);

/* Every collision among `n` nets, ordered by owners: *out malloc'ed (NULL when none). Nets of one owner never
 * collide; two management interfaces never collide with each other. Returns how many, or -1 when out of
 * memory (then *out is NULL). */
long tbm_addr_clashes(const tbm_addr_net_t *nets, size_t n, tbm_addr_clash_t **out);

#endif
