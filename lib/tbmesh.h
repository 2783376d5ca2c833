/* tbmesh.h: the public face of libtbmesh, the pure core of slurm-tbmesh.
 * Include this one header to get every lib/ module. */
#ifndef TBMESH_H
#define TBMESH_H

#include "clock.h"
#include "utctime.h"
#include "errbuf.h"
#include "facts.h"
#include "facts_json.h"
#include "fileio.h"
#include "finding.h"
#include "parse_macos.h"
#include "parse_powermetrics.h"
#include "parse_ioreg.h"
#include "metrics.h"
#include "hostlist.h"
#include "topology.h"
#include "validate.h"
#include "rdmamesh.h"
#include "scalar.h"
#include "conf.h"
#include "slurmconf.h"
#include "cablediff.h"
#include "jobreq.h"
#include "jobtag.h"
#include "jobmodify.h"
#include "jobdir.h"
#include "netplan.h"
#include "health.h"
#include "envplan.h"
#include "mlxenv.h"
#include "reduce.h"
#include "proto.h"
#include "record.h"
#include "accept.h"

#endif
