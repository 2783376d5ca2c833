/* jobreq.c: the decision of job_submit/tbmesh for one job (see jobreq.h): the request checked, the groups
 * that can hold a Mac job, the changes to make; jobs that ask for no Mac kept off the Macs in shared
 * partitions. Reading the job's --gres is jobreq_gres.c. */
#include "jobreq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "strbuf.h"
#include "scalar.h"

/* ---- partitions ---- */

/* True when `name` (n bytes) is one of the comma-separated `list`. */
static int in_list(const char *list, const char *name, size_t n)
{
    const char *item;
    size_t len;

    while ((item = tbm_list_next(&list, ",", &len)) != NULL)
        if (len == n && !strncmp(item, name, n))
            return 1;
    return 0;
}

static int holds_macs(const tbm_sched_t *s, const char *name, size_t n)
{
    return (s->mac_partition && strlen(s->mac_partition) == n && !strncmp(s->mac_partition, name, n)) ||
           in_list(s->shared_partitions, name, n);
}

/* The first partition of `parts` without Macs (its length in *n), or NULL. */
static const char *first_without_macs(const tbm_sched_t *s, const char *parts, size_t *n)
{
    const char *item;

    while ((item = tbm_list_next(&parts, ",", n)) != NULL)
        if (!holds_macs(s, item, *n))
            return item;
    return NULL;
}

static int any_shared(const tbm_sched_t *s, const char *parts)
{
    const char *item;
    size_t n;

    while ((item = tbm_list_next(&parts, ",", &n)) != NULL)
        if (in_list(s->shared_partitions, item, n))
            return 1;
    return 0;
}

/* ---- groups ---- */

static char *all_mac_nodes(const tbm_conf_t *c)
{
    char **names = calloc(c->n_nodes ? c->n_nodes : 1, sizeof(*names));
    char *list;
    size_t i;

    if (!names)
        return NULL;
    for (i = 0; i < c->n_nodes; i++)
        names[i] = (char *)c->nodes[i].name;
    list = tbm_hostlist_compress(names, c->n_nodes);
    free(names);
    return list;
}

static void group_names(const tbm_conf_t *c, char *buf, size_t len)
{
    tbm_strbuf_t sb;
    size_t g;

    tbm_sb_init(&sb);
    for (g = 0; g < c->n_groups; g++)
        tbm_sb_printf(&sb, "%s%s", g ? ", " : "", c->groups[g].caps.name);
    snprintf(buf, len, "%s", sb.len ? sb.s : "none");
    tbm_sb_free(&sb);
}

/* How many of the group's nodes (those of its RdmaSubset= only, when `subset`) are usable now; the first
 * unusable ones are described in `down`. */
static size_t usable_nodes(const tbm_conf_t *c, const tbm_conf_group_t *g, int subset, const tbm_sched_t *s,
                           tbm_strbuf_t *down)
{
    char why[160];
    size_t i, n = 0, listed = 0;

    for (i = 0; i < g->caps.n_nodes; i++) {
        const char *name = c->nodes[g->nodes[i]].name;
        if (subset && !c->nodes[g->nodes[i]].rdma_subset)
            continue;
        why[0] = '\0';
        if (!s->node_usable || s->node_usable(name, why, sizeof(why), s->arg)) {
            n++;
        } else if (listed++ < 4) {
            tbm_sb_printf(down, "%s%s is %s", down->len ? ", " : "", name, why[0] ? why : "not usable");
        }
    }
    return n;
}

typedef struct choose {
    size_t capable;          /* groups able to hold the job at all */
    size_t ready;            /* of those, groups with enough usable nodes now */
    size_t best_ready;       /* most usable nodes in a capable group */
    size_t best_runnable;    /* most Macs a capable group could run the job's backend on now */
    tbm_strbuf_t why_not;    /* why each group cannot */
    tbm_strbuf_t down;       /* the capable groups' unusable nodes */
} choose_t;

/* The Macs of a group's RdmaSubset= as a hostlist, into buf. */
static void subset_names(const tbm_conf_t *c, const tbm_conf_group_t *g, char *buf, size_t len)
{
    char **names = calloc(g->caps.n_nodes ? g->caps.n_nodes : 1, sizeof(*names)), *list = NULL;
    size_t i, n = 0;

    for (i = 0; names && i < g->caps.n_nodes; i++)
        if (c->nodes[g->nodes[i]].rdma_subset)
            names[n++] = (char *)c->nodes[g->nodes[i]].name;
    if (names)
        list = tbm_hostlist_compress(names, n);
    snprintf(buf, len, "%s", list ? list : "?");
    free(list);
    free(names);
}

/* Can the group hold n Macs of backend b, whole or (jaccl and jaccl-ring asked for by name, JacclOnSubsets=yes)
 * on its RdmaSubset=? 1 with *on_subset set, or 0 with `why`. */
static int group_holds(const tbm_conf_t *c, const tbm_conf_group_t *grp, tbm_backend_t b, size_t n, int *on_subset,
                       tbm_err_t *why)
{
    tbm_group_caps_t sub;
    char names[256];
    size_t len;

    *on_subset = 0;
    if (tbm_group_supports(&grp->caps, b, n, why))
        return 1;
    if (b != TBM_BACKEND_JACCL && b != TBM_BACKEND_JACCL_RING)
        return 0;
    if (tbm_conf_rdma_subset_caps(c, grp, &sub)) {
        if (tbm_group_supports(&sub, b, n, NULL))
            return (*on_subset = 1);
        subset_names(c, grp, names, sizeof(names));
        if (n > sub.n_nodes)
            tbm_errprintf(why, "group %s runs %s only on its RDMA subset %s, of %zu Macs: ask for %zu or fewer",
                          grp->caps.name, tbm_backend_name(b), names, sub.n_nodes, sub.n_nodes);
        else
            tbm_group_supports(&sub, b, n, why);
    } else if (grp->n_rdma_subset >= 2 && strlen(why->msg) + 1 < sizeof(why->msg)) {
        subset_names(c, grp, names, sizeof(names));
        len = strlen(why->msg);
        snprintf(why->msg + len, sizeof(why->msg) - len, " (its Macs %s form an RDMA mesh, but tbmesh.conf does not "
                 "place JACCL jobs on a part of a group: the administrator may allow it with JacclOnSubsets=yes)",
                 names);
    }
    return 0;
}

static void consider(const tbm_conf_t *c, const tbm_sched_t *s, size_t g, tbm_backend_t b, size_t n,
                     tbm_jobplan_t *plan, choose_t *ch)
{
    const tbm_conf_group_t *grp = &c->groups[g];
    tbm_err_t why = { { 0 } };
    tbm_group_caps_t sub;
    const tbm_group_caps_t *caps = &grp->caps;
    size_t usable;
    int on_subset;

    if (!group_holds(c, grp, b, n, &on_subset, &why)) {
        tbm_sb_printf(&ch->why_not, "%s%s", ch->why_not.len ? "; " : "", why.msg);
        return;
    }
    if (on_subset && tbm_conf_rdma_subset_caps(c, grp, &sub))
        caps = &sub;
    ch->capable++;
    if (plan->n_groups < TBM_JOBREQ_MAX_GROUPS) {
        plan->on_subset[plan->n_groups] = (unsigned char)on_subset;
        plan->groups[plan->n_groups++] = (int)g;
    }
    usable = usable_nodes(c, grp, on_subset, s, &ch->down);
    if (usable >= n)
        ch->ready++;
    if (usable > ch->best_ready)
        ch->best_ready = usable;
    while (usable > ch->best_runnable && !tbm_group_supports(caps, b, usable, NULL))
        usable--;   /* a ring runs only whole: fewer usable Macs may not be a job it can run */
    if (usable > 1 && usable > ch->best_runnable)   /* advice is for a job of several Macs */
        ch->best_runnable = usable;
}

static size_t largest_group(const tbm_conf_t *c, const char **name)
{
    size_t g, best = 0;

    *name = "";
    for (g = 0; g < c->n_groups; g++)
        if (c->groups[g].caps.n_nodes > best) {
            best = c->groups[g].caps.n_nodes;
            *name = c->groups[g].caps.name;
        }
    return best;
}

static int reject_unplaceable(const tbm_conf_t *c, const tbm_jobplan_t *plan, size_t n, const char *typed,
                              choose_t *ch, tbm_err_t *err)
{
    const char *big;
    size_t largest = largest_group(c, &big);

    if (ch->capable == 0 && !typed[0] && n > largest)
        return tbm_errprintf(err, "no group has %zu Macs (the largest, %s, has %zu): use --gres=tbmesh:%zu or "
                             "fewer", n, big, largest, largest);
    if (ch->capable == 0 && plan->backend == TBM_BACKEND_AUTO)
        return tbm_errprintf(err, "no group can run a job on %zu Macs: %s", n,
                             ch->why_not.len ? ch->why_not.s : "no groups in tbmesh.conf");
    if (ch->capable == 0)
        return tbm_errprintf(err, "no group can run %s on %zu Macs: %s", tbm_backend_name(plan->backend), n,
                             ch->why_not.len ? ch->why_not.s : "no groups in tbmesh.conf");
    if (ch->best_runnable == 0)
        return tbm_errprintf(err, "%s could hold this job, but %s: it can start when %s back",
                             c->groups[plan->groups[0]].caps.name, ch->down.s,
                             strchr(ch->down.s, ',') ? "they are" : "it is");
    return tbm_errprintf(err, "%s could hold this job, but %s: it can start when %s back; or ask for "
                         "--gres=tbmesh:%zu", c->groups[plan->groups[0]].caps.name, ch->down.s,
                         strchr(ch->down.s, ',') ? "they are" : "it is", ch->best_runnable);
}

/* ---- the plan ---- */

/* The Macs candidate i of the plan offers: its group's, or its RdmaSubset='s. */
static size_t candidate_size(const tbm_conf_t *c, const tbm_jobplan_t *plan, size_t i)
{
    const tbm_conf_group_t *g = &c->groups[plan->groups[i]];

    return plan->on_subset[i] ? g->n_rdma_subset : g->caps.n_nodes;
}

/* Placement=pack: the candidate groups, smallest first (tbmesh.conf's order among equals). Slurm starts a job
 * constrained to [a|b|c] in the first of them that can hold it now, so small jobs fill the small groups, and
 * of groups alike the first, before they take part of a large one: a job that needs a whole large group is
 * not kept waiting by small jobs spread over every group. */
static void pack_candidates(const tbm_conf_t *c, tbm_jobplan_t *plan)
{
    size_t i, j, size;
    int g;
    unsigned char sub;

    for (i = 1; i < plan->n_groups; i++) {
        g = plan->groups[i];
        sub = plan->on_subset[i];
        size = candidate_size(c, plan, i);
        for (j = i; j > 0 && candidate_size(c, plan, j - 1) > size; j--) {
            plan->groups[j] = plan->groups[j - 1];
            plan->on_subset[j] = plan->on_subset[j - 1];
        }
        plan->groups[j] = g;
        plan->on_subset[j] = sub;
    }
}

static int set_features(const tbm_conf_t *c, const tbm_jobreq_t *req, tbm_jobplan_t *plan)
{
    tbm_strbuf_t sb;
    char feat[TBM_GROUP_NAME_MAX + 16];
    size_t i;

    tbm_sb_init(&sb);
    if (req->features && *req->features)
        tbm_sb_printf(&sb, strchr(req->features, '|') ? "(%s)&" : "%s&", req->features);
    if (plan->n_groups > 1)
        tbm_sb_append(&sb, "[", 1);
    for (i = 0; i < plan->n_groups; i++) {
        if (plan->on_subset[i])
            tbm_group_rdma_feature(c->groups[plan->groups[i]].caps.name, feat, sizeof(feat));
        else
            tbm_group_feature(c->groups[plan->groups[i]].caps.name, feat, sizeof(feat));
        tbm_sb_printf(&sb, "%s%s", i ? "|" : "", feat);
    }
    if (plan->n_groups > 1)
        tbm_sb_append(&sb, "]", 1);
    plan->features = tbm_sb_take(&sb);
    return plan->features ? 0 : -1;
}

static int check_request(const tbm_sched_t *s, const tbm_jobreq_t *in, long long n, size_t n_named,
                         tbm_jobplan_t *plan, tbm_err_t *err)
{
    tbm_jobreq_t copy = *in, *req = &copy;
    const char *bad;
    size_t len;

    if (n_named && req->min_nodes == n_named && req->max_nodes == TBM_NODES_UNSET)
        req->min_nodes = TBM_NODES_UNSET;   /* sbatch's own count of -w's nodes, not a -N of the user's */

    if (req->backend && *req->backend && tbm_backend_parse(req->backend, &plan->backend, err) < 0)
        return tbm_errprefix(err, "--mlx-backend=");
    if (n > TBM_CONF_MAX_NODES)
        return tbm_errprintf(err, "--gres=tbmesh:%lld asks for more Macs than any lab has: ask for at most the "
                             "size of one group", n);
    if ((req->min_nodes != TBM_NODES_UNSET && req->min_nodes != (uint32_t)n) ||
        (req->max_nodes != TBM_NODES_UNSET && req->max_nodes != (uint32_t)n))
        return tbm_errprintf(err, "--gres=tbmesh:%lld means %lld Macs, one job node each, but -N asks for %u%s: "
                             "drop -N or make it -N %lld", n, n,
                             req->min_nodes != TBM_NODES_UNSET ? req->min_nodes : req->max_nodes,
                             req->min_nodes != req->max_nodes && req->max_nodes != TBM_NODES_UNSET &&
                                     req->min_nodes != TBM_NODES_UNSET ? " or more" : "", n);
    if (req->ntasks_per_node > 1)
        return tbm_errprintf(err, "--gres=tbmesh:%lld runs one MLX rank on each Mac; --ntasks-per-node=%u would "
                             "start %u processes with the same rank on every Mac: drop --ntasks-per-node (one task "
                             "per Mac, with threads inside it) or make it 1", n, req->ntasks_per_node,
                             req->ntasks_per_node);
    if (req->num_tasks > (uint32_t)n)
        return tbm_errprintf(err, "--gres=tbmesh:%lld runs one task per Mac (%lld in all); -n %u asks for more: "
                             "drop -n or make it -n %lld", n, n, req->num_tasks, n);
    if (req->features && strpbrk(req->features, "[]"))
        return tbm_errprintf(err, "your --constraint '%.60s' uses [ ]: a tbmesh job already takes the one "
                             "bracket Slurm allows to keep its Macs in one group; drop the brackets, or name the "
                             "group with --gres=tbmesh:GROUP:N", req->features);
    if (req->partition && (bad = first_without_macs(s, req->partition, &len)) != NULL)
        return tbm_errprintf(err, "partition %.*s has no Macs: use -p %s or leave -p out", (int)len, bad,
                             s->mac_partition ? s->mac_partition : "with Macs");
    return 0;
}

/* -w with a Mac job: the named nodes must be Macs of one group (the job's), no more than it asks for. The
 * group in *only, the count of names in *n_named. */
static int named_group(const tbm_conf_t *c, const char *req_nodes, const char *typed, long long n,
                       const tbm_conf_group_t **only, size_t *n_named, tbm_err_t *err)
{
    tbm_err_t why = { { 0 } };
    char **names = NULL;
    size_t k, i;
    int idx, g = -1, rc = 0;

    if (!req_nodes || !*req_nodes)
        return 0;
    if (tbm_hostlist_expand(req_nodes, &names, &k, &why) < 0)
        return tbm_errprintf(err, "cannot read -w %.60s: %s", req_nodes, why.msg);
    for (i = 0; i < k && rc == 0; i++) {
        idx = tbm_conf_node(c, names[i]);
        if (idx < 0)
            rc = tbm_errprintf(err, "-w names %s, which is no Mac of tbmesh.conf: a --gres=tbmesh job runs on Macs "
                               "only; name Macs of one group, or leave -w out", names[i]);
        else if (g >= 0 && c->nodes[idx].group != g)
            rc = tbm_errprintf(err, "-w names Macs of two groups (%s of %s, %s of %s): a job's Macs are all of one "
                               "cabled group; name Macs of one group, or leave -w out", names[0],
                               c->groups[g].caps.name, names[i], c->groups[c->nodes[idx].group].caps.name);
        else
            g = c->nodes[idx].group;
    }
    if (rc == 0 && (long long)k > n)
        rc = tbm_errprintf(err, "-w names %zu Macs but --gres=tbmesh:%lld asks for %lld: name at most %lld, or ask "
                           "for --gres=tbmesh:%zu", k, n, n, n, k);
    if (rc == 0 && typed[0] && strcmp(typed, c->groups[g].caps.name) != 0)
        rc = tbm_errprintf(err, "-w names Macs of %s but --gres=tbmesh:%s:%lld asks for group %s: make them agree",
                           c->groups[g].caps.name, typed, n, typed);
    if (rc == 0) {
        *only = &c->groups[g];
        *n_named = k;
    }
    tbm_hostlist_free(names, k);
    return rc;
}

static int plan_mesh(const tbm_conf_t *c, const tbm_sched_t *s, const tbm_jobreq_t *req, const char *typed,
                     long long n, tbm_jobplan_t *plan, tbm_err_t *err)
{
    const tbm_conf_group_t *only = NULL;
    choose_t ch;
    char names[512];
    size_t g, n_named = 0;
    int rc = 0;

    plan->backend = TBM_BACKEND_AUTO;
    if (named_group(c, req->req_nodes, typed, n, &only, &n_named, err) < 0 ||
        check_request(s, req, n, n_named, plan, err) < 0)
        return -1;
    if (typed[0] && !only && !(only = tbm_conf_group(c, typed))) {
        group_names(c, names, sizeof(names));
        return tbm_errprintf(err, "no group named '%.40s' in tbmesh.conf: the groups are %s", typed, names);
    }
    memset(&ch, 0, sizeof(ch));
    tbm_sb_init(&ch.why_not);
    tbm_sb_init(&ch.down);
    for (g = 0; g < c->n_groups; g++)
        if (!only || &c->groups[g] == only)
            consider(c, s, g, plan->backend, (size_t)n, plan, &ch);
    if (!c->placement_order)
        pack_candidates(c, plan);
    if (ch.ready == 0)
        rc = reject_unplaceable(c, plan, (size_t)n, typed, &ch, err);
    tbm_sb_free(&ch.why_not);
    tbm_sb_free(&ch.down);
    if (rc < 0)
        return -1;
    plan->verdict = TBM_JOB_MESH;
    plan->nodes = (uint32_t)n;
    plan->exclusive = c->exclusive_macs;
    plan->tres_per_node = tbm_gres_tbmesh_one_per_node(req->tres_per_node);
    if (!req->partition && s->mac_partition)
        plan->partition = strdup(s->mac_partition);
    if (!plan->tres_per_node || set_features(c, req, plan) < 0 ||
        (!req->partition && s->mac_partition && !plan->partition))
        return tbm_errprintf(err, "out of memory");
    return 0;
}

static int plan_keep_off(const tbm_conf_t *c, const tbm_sched_t *s, const tbm_jobreq_t *req, tbm_jobplan_t *plan,
                         tbm_err_t *err)
{
    const char *parts = req->partition ? req->partition : s->default_partition;
    char *macs;

    if (!parts || !any_shared(s, parts) || c->n_nodes == 0)
        return 0;
    macs = all_mac_nodes(c);
    if (!macs)
        return tbm_errprintf(err, "out of memory");
    plan->verdict = TBM_JOB_KEEP_OFF_MACS;
    if (req->exc_nodes && *req->exc_nodes) {
        tbm_strbuf_t sb;
        tbm_sb_init(&sb);
        tbm_sb_printf(&sb, "%s,%s", req->exc_nodes, macs);
        free(macs);
        macs = tbm_sb_take(&sb);
    }
    plan->exc_nodes = macs;
    return macs ? 0 : tbm_errprintf(err, "out of memory");
}

int tbm_jobreq_plan(const tbm_conf_t *conf, const tbm_sched_t *sched, const tbm_jobreq_t *req,
                    tbm_jobplan_t *plan, tbm_err_t *err)
{
    char group[TBM_GROUP_NAME_MAX + 32];
    long long n = 0;
    int found, rc;

    memset(plan, 0, sizeof(*plan));
    found = tbm_gres_tbmesh(req->tres_per_node, group, sizeof(group), &n, err);
    if (found < 0)
        return -1;
    if (!found && req->backend && *req->backend)
        return tbm_errprintf(err, "--mlx-backend=%.20s has no effect without --gres=tbmesh:N: ask for Macs with "
                             "--gres=tbmesh:N, or leave --mlx-backend out", req->backend);
    rc = found ? plan_mesh(conf, sched, req, group, n, plan, err) : plan_keep_off(conf, sched, req, plan, err);
    if (rc < 0)
        tbm_jobplan_free(plan);
    return rc;
}

void tbm_jobplan_free(tbm_jobplan_t *plan)
{
    free(plan->tres_per_node);
    free(plan->features);
    free(plan->partition);
    free(plan->exc_nodes);
    memset(plan, 0, sizeof(*plan));
}
