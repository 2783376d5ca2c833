/* jobmodify.h: what job_submit/tbmesh decides when a pending job is changed (`scontrol update`): the same
 * placement rules as at submit, so that they hold for the job's whole life. A Mac job stays on one cabled
 * group: its owner cannot change where it may run. A job that asked for no Mac never gets one in a
 * partition shared with Linux nodes. Admins may override; the caller logs it. Pure, like jobreq.h. */
#ifndef TBM_JOBMODIFY_H
#define TBM_JOBMODIFY_H

#include <stdint.h>

#include "conf.h"
#include "errbuf.h"
#include "jobreq.h"

/* The job's placement fields: as slurmctld holds them now, or as the change sets them (NULL and
 * TBM_NODES_UNSET: not changed). An empty string clears a field ("ExcNodeList="). */
typedef struct tbm_jobfields {
    const char *tres_per_node;
    const char *features;
    const char *partition;
    const char *req_nodes;
    const char *exc_nodes;
    uint32_t min_nodes;
    uint32_t max_nodes;
} tbm_jobfields_t;

typedef struct tbm_jobmodify {
    int touches_placement;       /* the change names a placement field */
    int overridden;              /* an admin's change that would have been refused (log it) */
    char *exc_nodes;             /* malloc'd: the exclusion to apply instead of the change's own, or NULL */
    char refusal[TBM_ERR_MAX];   /* for the log when overridden */
} tbm_jobmodify_t;

/* Decide. `now` is NULL when the job's present fields are not known yet (a job a few seconds old): then
 * an ordinary user's placement change is refused with "try again". Returns 0 (allowed; apply
 * out->exc_nodes when set) or -1 with err holding the message for the user. Free out with
 * tbm_jobmodify_free. */
int tbm_jobmodify_check(const tbm_conf_t *conf, const tbm_sched_t *sched, uint32_t job_id,
                        const tbm_jobfields_t *now, const tbm_jobfields_t *change, int admin,
                        tbm_jobmodify_t *out, tbm_err_t *err);

void tbm_jobmodify_free(tbm_jobmodify_t *out);

#endif
