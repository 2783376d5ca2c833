/* tbmesh.h: the public face of libtbmesh, the pure core of slurm-tbmesh.
 * Include this one header to get every lib/ module. */
#ifndef TBMESH_H
#define TBMESH_H

#include "errbuf.h"
#include "facts.h"
#include "finding.h"
#include "mlxenv.h"
#include "reduce.h"

#endif
