/* scalar.h: readers of single values shared by lib/ and the commands: whole numbers (the one integer
 * reader), interface names, IPv4 addresses, MLX versions. */
#ifndef TBM_SCALAR_H
#define TBM_SCALAR_H

#include <stddef.h>
#include <stdint.h>

/* A decimal number from 1 to max, digits only (at most 9), read by tbm_parse_ll. Returns 0, or -1. */
int tbm_parse_uint(const char *s, int max, int *out);

/* A whole number in `base` (8, 10 or 16; an optional leading '-' only when min < 0), nothing else around it,
 * from min to max. Returns 0 with the value in *out, or -1 (empty, a stray character, out of range). The one
 * integer reader of the project: options, configuration values, protocol fields. */
int tbm_parse_ll(const char *s, int base, long long min, long long max, long long *out);

/* The same over the piece s[0..n) of a longer string (a field between separators). */
int tbm_parse_ll_span(const char *s, size_t n, int base, long long min, long long max, long long *out);

/* The same for unsigned 64-bit values (seeds, byte counts): decimal digits only, at most max. */
int tbm_parse_u64(const char *s, uint64_t max, uint64_t *out);

/* An MLX version "X.Y.Z" (each part at most 4 digits, Y and Z below 1000) as TBM_MLX_VERSION(X, Y, Z), or -1
 * when empty or not of that form. tbmesh.conf's MlxVersion= and the environment's rules read it so. */
#define TBM_MLX_VERSION(maj, min, pat) ((maj) * 1000000L + (min) * 1000L + (pat))
long tbm_mlx_version_parse(const char *s);

/* The next item of a list separated by any of `seps` ("a,b", "gres:x;gres:y"): its start and length (*n),
 * or NULL at the end of the list (or of a NULL list); *list moves past it. Empty items are items; a
 * trailing separator ends the list. The one walker of comma lists. */
const char *tbm_list_next(const char **list, const char *seps, size_t *n);

/* An interface or RDMA device name: [a-z][a-z0-9_]{0,14}. */
int tbm_iface_name_valid(const char *s);

/* A dotted-quad IPv4 address, digits and dots only, into host order. Returns 0, or -1. */
int tbm_ipv4_parse(const char *s, uint32_t *out);

#endif
