/* agent_privdrop.h: the one place where macnoded (root) gives up root: becoming a task's user for good
 * (its groups, setgid, setuid, and a check that root cannot be regained), or running one piece of work as
 * the user in a child process. The user's groups are looked up once per spawn (agent_user_lookup), before
 * the children that become the user are forked, so that none of them asks the account databases again. */
#ifndef MACNODE_AGENT_PRIVDROP_H
#define MACNODE_AGENT_PRIVDROP_H

#include <sys/types.h>

#include "errbuf.h"

#define AGENT_GROUPS_MAX 256   /* groups kept from the lookup; a user in more is given them by initgroups */

/* A user as looked up: the account's name and groups, or why there is no such account. */
typedef struct agent_user {
    uid_t uid;
    gid_t gid;
    char name[256];
    int ngroups;               /* groups[] holds them; -1: too many to keep, initgroups(name) at the drop */
    gid_t groups[AGENT_GROUPS_MAX];
    char why[TBM_ERR_MAX];     /* not empty: the lookup failed, and every drop to this user fails with it */
} agent_user_t;

/* Look up uid's account and its groups (gid among them). 0, or -1 with err (also kept in u->why). */
int agent_user_lookup(uid_t uid, gid_t gid, agent_user_t *u, tbm_err_t *err);

/* Drop to the looked-up user in this process (setgroups, setgid, setuid); checks root cannot be regained.
 * 0, or -1 with err. */
int agent_become(const agent_user_t *u, tbm_err_t *err);

/* agent_user_lookup and agent_become in one. */
int agent_become_user(uid_t uid, gid_t gid, tbm_err_t *err);

/* Run fn(arg) in a child process with the looked-up user's identity; its error text comes back in err. 0
 * when fn returned 0. */
int agent_as(const agent_user_t *u, int (*fn)(void *arg, tbm_err_t *err), void *arg, tbm_err_t *err);

/* agent_as for a user not looked up yet (the lookup is done in the child). */
int agent_as_user(uid_t uid, gid_t gid, int (*fn)(void *arg, tbm_err_t *err), void *arg, tbm_err_t *err);

#endif
