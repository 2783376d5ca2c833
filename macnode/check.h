/* check.h: `macnode check`, the health check of a Mac against tbmesh.conf (check.c). */
#ifndef MACNODE_CHECK_H
#define MACNODE_CHECK_H

int macnode_check(int argc, char **argv);

#endif
