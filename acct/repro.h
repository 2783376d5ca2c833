/* repro.h: `tbmesh repro`, the reproducibility records' command (show, diff, verify, export, rerun, sync). */
#ifndef TBM_REPRO_H
#define TBM_REPRO_H

int repro_main(int argc, char **argv);

#endif
