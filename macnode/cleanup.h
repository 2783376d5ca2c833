/* cleanup.h: `macnode cleanup`, which root on the bridge host runs at a job's end (the epilog): the agent
 * ends the job's tasks on its Mac and removes the job's folder (cleanup.c). */
#ifndef MACNODE_CLEANUP_H
#define MACNODE_CLEANUP_H

/* `macnode cleanup ...` with argv[0] = "cleanup". Returns the exit code. */
int macnode_cleanup(int argc, char **argv);

#endif
