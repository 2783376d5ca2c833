/* grant.h: `macnode grant`, which root on the bridge host runs to make the job grant (a MUNGE credential
 * naming job, step, node, user and expiry) that a Mac's agent asks for before it runs a task (grant.c). */
#ifndef MACNODE_GRANT_H
#define MACNODE_GRANT_H

/* `macnode grant ...` with argv[0] = "grant". Prints the credential; returns the exit code. */
int macnode_grant(int argc, char **argv);

#endif
