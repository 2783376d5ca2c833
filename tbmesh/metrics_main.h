/* metrics_main.h: `tbmesh metrics`, what Slurm knows of the Macs for Prometheus (tbmesh-metrics(1)). */
#ifndef TBMESH_METRICS_MAIN_H
#define TBMESH_METRICS_MAIN_H

int metrics_main(int argc, char **argv);

#endif
