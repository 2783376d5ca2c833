/* agent_privdrop.h: the one place where macnoded (root) gives up root: becoming a task's user for good
 * (initgroups, setgid, setuid, and a check that root cannot be regained), or running one piece of work as
 * the user in a child process. */
#ifndef MACNODE_AGENT_PRIVDROP_H
#define MACNODE_AGENT_PRIVDROP_H

#include <sys/types.h>

#include "errbuf.h"

/* Drop to the user (initgroups, setgid, setuid) in this process; checks root cannot be regained. 0, or -1
 * with err. */
int agent_become_user(uid_t uid, gid_t gid, tbm_err_t *err);

/* Run fn(arg) in a child process with the user's identity; its error text comes back in err. 0 when fn
 * returned 0. */
int agent_as_user(uid_t uid, gid_t gid, int (*fn)(void *arg, tbm_err_t *err), void *arg, tbm_err_t *err);

#endif
