/* health_check.h: `macnode check`, the health check of a Mac against tbmesh.conf (health_check.c). (Not
 * check.h: that name is the Check test library's.) */
#ifndef MACNODE_HEALTH_CHECK_H
#define MACNODE_HEALTH_CHECK_H

int macnode_check(int argc, char **argv);

#endif
