/* spank_bridge.h: a bridge-mode Mac's tasks, forwarded to its agent (spank_bridge.c), and root's questions
 * to an agent. */
#ifndef SPANK_BRIDGE_H
#define SPANK_BRIDGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <slurm/spank.h>

#include "proto.h"

int tbm_spank_bridge_task_privileged(spank_t sp);   /* the job grant (root) */
int tbm_spank_bridge_task_init(spank_t sp);         /* exec the forwarder (the user) */
int tbm_spank_bridge_task_exit(spank_t sp);         /* an unreachable agent drains its Mac (root) */
/* One request to a bridge-mode Mac's agent as root, within ms (a hello and req in one write, then the reply of
 * type want into *reply, free with tbm_msg_free). 1 got it; 0 the agent answered otherwise; -1 no answer; -2
 * cannot ask from here; why says what happened for 0, -1 and -2. */
int tbm_spank_agent_ask(const char *agent, const tbm_msg_t *req, tbm_msg_type_t want, tbm_msg_t *reply, int ms,
                        char *why, size_t len);
/* Job epilog: the agent ends what is left of the job (every process of uid when exclusive, ExclusiveMacs=yes,
 * and the user has no other job on the Mac) and removes its folder. */
void tbm_spank_bridge_epilog(uint32_t job, const char *node, const char *agent, uid_t uid, int exclusive);
/* Run the macnode command (plugstack.conf's macnode=) with argv as root and munged's socket, and wait for it: 0
 * when it exited 0. */
int tbm_spank_run_macnode(char **argv);

#endif
