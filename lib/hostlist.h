/* hostlist.h: strict expansion and compression of host name lists such as "mac[01-04,07],lnx01".
 * Pure and portable (the Mac side has no libslurm); one bracket per name, zero padding kept. */
#ifndef TBM_HOSTLIST_H
#define TBM_HOSTLIST_H

#include <stddef.h>

#include "errbuf.h"

#define TBM_HOSTLIST_MAX_NAMES 65536  /* an expression may name at most this many hosts */
#define TBM_HOSTNAME_MAX       64     /* longest host name, with its NUL */
#define TBM_HOSTLIST_NUM_MAX   9      /* digits of one range bound */

/* Expand `expr` into a malloc'd array of malloc'd names, in the order written (duplicates kept).
 * Grammar: items separated by ','; an item is a name made of [A-Za-z0-9._-] with at most one
 * "[ranges]" part, ranges being "N" or "N-M" separated by ','; the width of N sets the zero padding.
 * Returns 0, or -1 with `err` saying what is wrong (nothing to free then). */
int tbm_hostlist_expand(const char *expr, char ***names, size_t *n, tbm_err_t *err);

/* Free what tbm_hostlist_expand returned. */
void tbm_hostlist_free(char **names, size_t n);

/* The shortest expression naming the same set: names sharing a prefix and suffix around their last
 * digit run are joined into one bracket ("mac[01-04,07]"), in order of first appearance, numbers
 * ascending, duplicates dropped. Returns a malloc'd string ("" for n == 0), NULL on no memory. */
char *tbm_hostlist_compress(char *const *names, size_t n);

/* True when `name` is one valid host name (no brackets or commas, [A-Za-z0-9._-], 1..63 chars). */
int tbm_hostname_valid(const char *name);

#endif
