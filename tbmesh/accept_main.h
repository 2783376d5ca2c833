/* accept_main.h: `tbmesh accept GROUP`, the staged acceptance run of a Mac group and its decision record
 * (tbmesh-accept(1)). */
#ifndef GRES_ACCEPT_MAIN_H
#define GRES_ACCEPT_MAIN_H

int accept_main(int argc, char **argv);

#endif
