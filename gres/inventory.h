/* inventory.h: `tbmesh inventory`: from the facts of every Mac to validated groups, tbmesh.conf, slurm.conf
 * node lines, gres.conf and a drawing of the cabling. */
#ifndef GRES_INVENTORY_H
#define GRES_INVENTORY_H

int inventory_main(int argc, char **argv);

#endif
