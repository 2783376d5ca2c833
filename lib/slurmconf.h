/* slurmconf.h: what the lab's Slurm needs from the inventory: slurm.conf NodeName lines, gres.conf lines,
 * and a Graphviz drawing of the cabling, all made from the validated model and tbmesh.conf. */
#ifndef TBM_SLURMCONF_H
#define TBM_SLURMCONF_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "errbuf.h"
#include "topology.h"
#include "validate.h"

/* slurm.conf node lines, one per node of c in its order, with CPUs and RealMemory from the facts of the
 * topology host of the same name:
 *   NodeName=mac01 CPUs=28 RealMemory=95232 Gres=tbmesh:1 Features=tbmesh,tbmesh_studio_a,rdma,macos_26_2,m3_ultra Port=6900
 * "rdma" when the group can run a JACCL backend; tbm_group_rdma_feature() ("tbmesh_rdma_studio_a") on the Macs
 * of its RdmaSubset=; Port= only in bridge mode (the node's SlurmdPort, else
 * SlurmdBasePort plus its place among the bridge-mode nodes). NULL with `err` set when a port would pass
 * 65535 or memory ran out. */
char *tbm_slurm_node_lines(const tbm_topology_t *t, const tbm_conf_t *c, tbm_err_t *err);

/* gres.conf lines, one per group: "NodeName=mac[01-04] Name=tbmesh Count=1". NULL when out of memory. */
char *tbm_gres_conf_lines(const tbm_conf_t *c);

/* A Graphviz drawing: one cluster per group (named from c, matched by host name; "in no group" for a Mac c
 * leaves out, "...: no Thunderbolt facts" when its capture failed), one edge per cable
 * labelled with both interfaces and the speed; red where a finding names the cable or host, dashed for a
 * cable seen from one end only. NULL when out of memory. */
char *tbm_cabling_dot(const tbm_topology_t *t, const tbm_validation_t *v, const tbm_conf_t *c);

/* A Slurm feature name from free text: lowercase [a-z0-9_], other runs become one '_', no '_' at the
 * ends; "Apple M3 Ultra" -> "apple_m3_ultra". Empty when nothing is left. */
void tbm_feature_name(const char *text, char *buf, size_t len);

/* Slurm's RealMemory (MiB) for a Mac of `bytes` of memory, the one formula of the project (the inventory's
 * node lines and the lab's slurm.conf): a little below it, so that slurmd's own count is never under it
 * (1/32 kept back, at least 512 MiB; half of memories of 1 GiB or less). 0 for 0. */
uint64_t tbm_slurm_real_memory_mib(uint64_t bytes);

#endif
