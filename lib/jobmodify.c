/* jobmodify.c: the placement rules applied to a change of a pending job (see jobmodify.h). */
#include "jobmodify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

static int changes_placement(const tbm_jobfields_t *c)
{
    return c->tres_per_node || c->features || c->partition || c->req_nodes || c->exc_nodes ||
           c->min_nodes != TBM_NODES_UNSET || c->max_nodes != TBM_NODES_UNSET;
}

/* The first Mac of tbmesh.conf in the host list `expr` (its name in buf), 1; 0 none; -1 unreadable. */
static int first_mac(const tbm_conf_t *conf, const char *expr, char *buf, size_t len)
{
    tbm_err_t err = { { 0 } };
    char **names = NULL;
    size_t n = 0, i;
    int found = 0;

    if (!expr || !*expr)
        return 0;
    if (tbm_hostlist_expand(expr, &names, &n, &err) < 0)
        return -1;
    for (i = 0; i < n && !found; i++)
        if (tbm_conf_node(conf, names[i]) >= 0) {
            snprintf(buf, len, "%s", names[i]);
            found = 1;
        }
    tbm_hostlist_free(names, n);
    return found;
}

/* Does a constraint name a group's feature (tbmesh_*) or the Macs' own feature? */
static int names_mac_feature(const char *features)
{
    return features && strstr(features, "tbmesh") != NULL;
}

static int refuse_mac_job(uint32_t job_id, tbm_err_t *err)
{
    return tbm_errprintf(err, "job %u is a Mac job that tbmesh placed on one cabled group: its Macs, features, "
                         "partition and node count cannot change; cancel it (scancel %u) and submit it again "
                         "with the new --gres=tbmesh:N", job_id, job_id);
}

/* A job that asked for no Mac, after the change. */
static int check_plain(const tbm_conf_t *conf, const tbm_sched_t *sched, uint32_t job_id, const tbm_jobfields_t *now,
                       const tbm_jobfields_t *chg, tbm_jobmodify_t *out, tbm_err_t *err)
{
    tbm_jobreq_t req;
    tbm_jobplan_t plan;
    char group[TBM_GROUP_NAME_MAX], mac[TBM_HOSTNAME_MAX];
    long long n;
    int rc;

    if (chg->tres_per_node && tbm_gres_tbmesh(chg->tres_per_node, group, sizeof(group), &n, err) != 0)
        return tbm_errprintf(err, "job %u asked for no Mac: it cannot become a Mac job; cancel it (scancel %u) and "
                             "submit it with --gres=tbmesh:N", job_id, job_id);
    if (names_mac_feature(chg->features))
        return tbm_errprintf(err, "the constraint '%.60s' names the Macs' groups, which only a job that asks for "
                             "Macs may use: submit it with --gres=tbmesh:N", chg->features);
    memset(&req, 0, sizeof(req));
    req.features = chg->features ? chg->features : now->features;
    req.partition = chg->partition ? chg->partition : now->partition;
    req.exc_nodes = chg->exc_nodes ? chg->exc_nodes : now->exc_nodes;
    req.min_nodes = req.max_nodes = TBM_NODES_UNSET;
    if (req.partition && !*req.partition)
        req.partition = NULL;
    if (tbm_jobreq_plan(conf, sched, &req, &plan, err) < 0)
        return -1;
    if (plan.verdict == TBM_JOB_KEEP_OFF_MACS) {
        rc = first_mac(conf, chg->req_nodes ? chg->req_nodes : now->req_nodes, mac, sizeof(mac));
        if (rc != 0) {
            tbm_jobplan_free(&plan);
            if (rc < 0)
                return tbm_errprintf(err, "cannot read the node list '%.80s'", chg->req_nodes);
            return tbm_errprintf(err, "job %u asked for no Mac: in partition %s, shared with Linux nodes, it "
                                 "cannot run on %s; ask for Macs with --gres=tbmesh:N in a new job", job_id,
                                 req.partition ? req.partition : "(the default)", mac);
        }
        out->exc_nodes = plan.exc_nodes;   /* the Macs stay excluded, whatever the change says */
        plan.exc_nodes = NULL;
    }
    tbm_jobplan_free(&plan);
    return 0;
}

int tbm_jobmodify_check(const tbm_conf_t *conf, const tbm_sched_t *sched, uint32_t job_id,
                        const tbm_jobfields_t *now, const tbm_jobfields_t *change, int admin,
                        tbm_jobmodify_t *out, tbm_err_t *err)
{
    char group[TBM_GROUP_NAME_MAX];
    long long n = 0;
    int mac_job, rc;

    memset(out, 0, sizeof(*out));
    if (!changes_placement(change))
        return 0;
    out->touches_placement = 1;
    if (!now) {
        rc = tbm_errprintf(err, "job %u is too new for tbmesh to check a change of where it runs: try again in a "
                           "few seconds", job_id);
    } else {
        mac_job = tbm_gres_tbmesh(now->tres_per_node, group, sizeof(group), &n, err) > 0;
        tbm_errclear(err);
        rc = mac_job ? refuse_mac_job(job_id, err) : check_plain(conf, sched, job_id, now, change, out, err);
    }
    if (rc < 0 && admin) {
        out->overridden = 1;
        snprintf(out->refusal, sizeof(out->refusal), "%s", err->msg);
        free(out->exc_nodes);
        out->exc_nodes = NULL;
        tbm_errclear(err);
        return 0;
    }
    if (rc < 0) {
        free(out->exc_nodes);
        out->exc_nodes = NULL;
    }
    return rc;
}

void tbm_jobmodify_free(tbm_jobmodify_t *out)
{
    free(out->exc_nodes);
    out->exc_nodes = NULL;
}
