/* values.h: checks of small values shared by lib/ modules: decimal numbers, interface names, IPv4. */
#ifndef TBM_VALUES_H
#define TBM_VALUES_H

#include <stdint.h>

/* A decimal number from 1 to max, digits only (at most 9). Returns 0, or -1. */
int tbm_parse_uint(const char *s, int max, int *out);

/* An interface or RDMA device name: [a-z][a-z0-9_]{0,14}. */
int tbm_iface_name_valid(const char *s);

/* A dotted-quad IPv4 address, digits and dots only, into host order. Returns 0, or -1. */
int tbm_ipv4_parse(const char *s, uint32_t *out);

#endif
