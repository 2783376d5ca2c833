/* report_main.h: `tbmesh report` (acct/report.c), called by the tbmesh command with its own arguments. */
#ifndef TBM_REPORT_MAIN_H
#define TBM_REPORT_MAIN_H

int report_main(int argc, char **argv);

#endif
