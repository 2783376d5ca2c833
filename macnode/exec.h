/* exec.h: `macnode exec`, the forwarder a bridge-mode task becomes: the command runs on the Mac through its
 * agent, with the job's files (TBMESH_JOB_FILES) riding in the one spawn request (exec.c). */
#ifndef MACNODE_EXEC_H
#define MACNODE_EXEC_H

/* `macnode exec ...` with argv[0] = "exec". Returns the exit code (or dies of the remote signal). */
int macnode_exec(int argc, char **argv);

#endif
