/* cablediff.h: what changed in the cabling since the last tbmesh.conf: cables it lists that no Mac sees any
 * more (pulled, broken, or moved to another port), and cables that are new. */
#ifndef TBM_CABLEDIFF_H
#define TBM_CABLEDIFF_H

#include "conf.h"
#include "finding.h"

/* Add a "cable-missing" error for every cable of `before` not in `now`, and a "cable-new" info for every
 * cable of `now` not in `before`. Cables are the same when their two ends (node name and interface) are,
 * in either order. A cable of `before` with an end on a Mac that `now` leaves out (now->left_out: its
 * Thunderbolt facts are unknown) is not concluded missing: a "cable-unchecked" info says so. Returns the
 * number of missing cables. */
size_t tbm_cables_diff(const tbm_conf_t *before, const tbm_conf_t *now, tbm_findings_t *fs);

#endif
