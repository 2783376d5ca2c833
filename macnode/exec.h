/* exec.h: the bridge-mode subcommands of macnode: exec (the forwarder), grant (root's job grants), prepare
 * and cleanup (a job's files on the Mac). */
#ifndef MACNODE_EXEC_H
#define MACNODE_EXEC_H

/* `macnode exec ...` with argv[0] = "exec". Returns the exit code (or dies of the remote signal). */
int macnode_exec(int argc, char **argv);

/* `macnode grant ...` with argv[0] = "grant". Prints the credential; returns the exit code. */
int macnode_grant(int argc, char **argv);

/* `macnode prepare ...` and `macnode cleanup ...` (agentcall.c), argv[0] being the subcommand. */
int macnode_prepare(int argc, char **argv);
int macnode_cleanup(int argc, char **argv);

#endif
