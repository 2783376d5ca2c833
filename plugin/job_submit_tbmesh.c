/* job_submit_tbmesh.c: job_submit/tbmesh, the slurmctld side of `--gres=tbmesh:N`. A thin shim: it reads
 * tbmesh.conf (again whenever the file changes, e.g. before `scontrol reconfigure`; a bad file keeps the last
 * good one), gathers the job's request, asks lib/jobreq.c what to do, and writes the answer back with Slurm's
 * own allocator. A background thread keeps the Macs' node states for naming down nodes in refusals. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tbm_slurm.h"
#include <slurm/spank.h>

#include "tbmesh.h"
#include "job_submit_repro.h"

const char plugin_name[] = "job_submit/tbmesh: Thunderbolt meshes of Macs as one request";
const char plugin_type[] = "job_submit/tbmesh";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* Slurm's allocator (exported by the daemons' libslurmfull; no public prototype). */
extern char *slurm_xstrdup(const char *str);
extern void slurm_xfree(void **item, const char *file, int line, const char *func);
extern void *slurm_xcalloc(size_t count, size_t size, bool clear, bool try_alloc, const char *file, int line,
                           const char *func);


/* The entry points Slurm looks up by name. */
/* Components of a heterogeneous job reach job_submit one after the other in one request, the first with
 * offset 0: is this the second of them to ask for Macs? Called with `lock` held. */
static unsigned het_mac_components;

static int second_mac_component(const job_desc_msg_t *d)
{
    return d->het_job_offset != NO_VAL && ++het_mac_components > 1;
}

int job_submit(job_desc_msg_t *d, uint32_t submit_uid, char **err_msg);
int job_modify(job_desc_msg_t *d, void *job_ptr, uint32_t modify_uid);
int init(void);
int fini(void);

#define NODE_REFRESH_SECONDS 3

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tbm_conf_t conf;              /* the last good tbmesh.conf */
static int have_conf;
static char conf_path[4096];
static struct timespec conf_mtime;
static off_t conf_size;

/* The Macs' node states and the jobs' placement fields, refreshed by a thread (never while slurmctld holds
 * its locks for us: job_modify cannot ask slurmctld for the job it is changing). */
static node_info_msg_t *nodes;
static job_info_msg_t *jobs;
static pthread_t refresher;
static int stopping;
static pthread_cond_t stop_cond = PTHREAD_COND_INITIALIZER;

static void set_string(char **field, const char *value)
{
    if (*field)
        slurm_xfree((void **)field, __FILE__, __LINE__, __func__);
    *field = value ? slurm_xstrdup(value) : NULL;
}

/* ---- tbmesh.conf ---- */


/* Read tbmesh.conf when it changed. Call with `lock` held. */
static void reload_if_changed(void)
{
    tbm_findings_t errors;
    tbm_err_t err = { { 0 } };
    struct stat st;
    tbm_conf_t fresh;
    size_t len, i;
    char *text;

    if (stat(conf_path, &st) < 0) {
        if (have_conf || conf_size != -1)
            slurm_error("%s: cannot read %s: %m; %s", plugin_type, conf_path,
                        have_conf ? "keeping the last good configuration" : "Mac jobs are refused until it exists");
        conf_size = -1;
        return;
    }
    if (have_conf && st.st_mtim.tv_sec == conf_mtime.tv_sec && st.st_mtim.tv_nsec == conf_mtime.tv_nsec &&
        st.st_size == conf_size)
        return;
    conf_mtime = st.st_mtim;
    conf_size = st.st_size;
    text = tbm_read_file(conf_path, TBM_CONF_MAX_BYTES, &len, &err);
    tbm_findings_init(&errors);
    if (!text || tbm_conf_parse(text, len, conf_path, &fresh, &errors, &err) < 0) {
        for (i = 0; i < errors.n; i++)
            slurm_error("%s: %s: %s: %s", plugin_type, errors.items[i].where, errors.items[i].what,
                        errors.items[i].fix);
        slurm_error("%s: %s; %s", plugin_type, err.msg,
                    have_conf ? "keeping the last good configuration" : "Mac jobs are refused until it is fixed");
    } else {
        if (have_conf)
            tbm_conf_free(&conf);
        conf = fresh;
        have_conf = 1;
        slurm_info("%s: read %s: %zu groups, %zu Macs", plugin_type, conf_path, conf.n_groups, conf.n_nodes);
    }
    tbm_findings_free(&errors);
    free(text);
}

/* ---- node states ---- */

static void *refresh_nodes(void *arg)
{
    struct timespec until;
    node_info_msg_t *fresh;
    job_info_msg_t *fresh_jobs;

    (void)arg;
    pthread_mutex_lock(&lock);
    while (!stopping) {
        pthread_mutex_unlock(&lock);
        fresh = NULL;
        fresh_jobs = NULL;
        if (slurm_load_node(0, &fresh, SHOW_ALL) != SLURM_SUCCESS)
            fresh = NULL;
        if (slurm_load_jobs(0, &fresh_jobs, SHOW_ALL) != SLURM_SUCCESS)
            fresh_jobs = NULL;
        pthread_mutex_lock(&lock);
        if (fresh) {
            if (nodes)
                slurm_free_node_info_msg(nodes);
            nodes = fresh;
        }
        if (fresh_jobs) {
            if (jobs)
                slurm_free_job_info_msg(jobs);
            jobs = fresh_jobs;
        }
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += NODE_REFRESH_SECONDS;
        if (!stopping)
            pthread_cond_timedwait(&stop_cond, &lock, &until);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* tbm_node_usable_fn over the cached states. Called with `lock` held. Unknown nodes count as usable. */
static int node_usable(const char *name, char *why, size_t len, void *arg)
{
    uint32_t i, base;

    (void)arg;
    if (!nodes)
        return 1;
    for (i = 0; i < nodes->record_count; i++) {
        node_info_t *n = &nodes->node_array[i];
        if (!n->name || strcmp(n->name, name) != 0)
            continue;
        base = n->node_state & NODE_STATE_BASE;
        if (base == NODE_STATE_DOWN || base == NODE_STATE_FUTURE || (n->node_state & NODE_STATE_DRAIN)) {
            snprintf(why, len, "%s%s%s%s", base == NODE_STATE_DOWN ? "down" : base == NODE_STATE_FUTURE ? "not yet in service" : "drained",
                     n->reason ? " (" : "", n->reason ? n->reason : "", n->reason ? ")" : "");
            return 0;
        }
        return 1;
    }
    return 1;
}

/* ---- the job ---- */

/* The value of NAME in the job's SPANK environment ("NAME=value"), or NULL; its index in *at. */
static const char *spank_env(const job_desc_msg_t *d, const char *name, uint32_t *at)
{
    size_t len = strlen(name);
    uint32_t i;

    for (i = 0; d->spank_job_env && i < d->spank_job_env_size; i++)
        if (d->spank_job_env[i] && !strncmp(d->spank_job_env[i], name, len) && d->spank_job_env[i][len] == '=') {
            if (at)
                *at = i;
            return d->spank_job_env[i] + len + 1;
        }
    return NULL;
}

/* Set NAME=value in the job's SPANK environment (Slurm's allocator; the array grows by one when new). */
static void set_spank_env(job_desc_msg_t *d, const char *name, const char *value)
{
    char entry[TBM_JOBTAG_MAX + 64], **grown;
    uint32_t at = 0, i;

    snprintf(entry, sizeof(entry), "%s=%s", name, value);
    if (spank_env(d, name, &at)) {
        set_string(&d->spank_job_env[at], entry);
        return;
    }
    grown = slurm_xcalloc(d->spank_job_env_size + 1, sizeof(*grown), true, false, __FILE__, __LINE__, __func__);
    for (i = 0; i < d->spank_job_env_size; i++)
        grown[i] = d->spank_job_env[i];
    grown[d->spank_job_env_size] = slurm_xstrdup(entry);
    if (d->spank_job_env)
        slurm_xfree((void **)&d->spank_job_env, __FILE__, __LINE__, __func__);
    d->spank_job_env = grown;
    d->spank_job_env_size++;
}

/* Remove every tag from the job's SPANK environment (tbm_jobtag_env_is_tag: under either name, as often as
 * given): the tag is job_submit's alone, and a user may have put some in a request (libslurm takes any SPANK
 * variable, and the last of a name is the one the prolog sees). */
static void drop_spank_tags(job_desc_msg_t *d)
{
    uint32_t at = 0, i;

    while (d->spank_job_env && at < d->spank_job_env_size) {
        if (!tbm_jobtag_env_is_tag(d->spank_job_env[at])) {
            at++;
            continue;
        }
        slurm_xfree((void **)&d->spank_job_env[at], __FILE__, __LINE__, __func__);
        for (i = at; i + 1 < d->spank_job_env_size; i++)
            d->spank_job_env[i] = d->spank_job_env[i + 1];
        d->spank_job_env[--d->spank_job_env_size] = NULL;
    }
}

static void apply(job_desc_msg_t *d, const tbm_jobplan_t *plan)
{
    tbm_jobtag_t tag = { plan->nodes, plan->backend };
    char text[TBM_JOBTAG_MAX];

    if (plan->verdict == TBM_JOB_KEEP_OFF_MACS) {
        set_string(&d->exc_nodes, plan->exc_nodes);
        return;
    }
    set_string(&d->tres_per_node, plan->tres_per_node);
    set_string(&d->features, plan->features);
    if (plan->partition)
        set_string(&d->partition, plan->partition);
    d->min_nodes = d->max_nodes = plan->nodes;
    if (plan->exclusive)
        d->shared = JOB_SHARED_NONE;   /* the job owns its Macs whole (tbmesh.conf: ExclusiveMacs=yes) */
    /* The decision travels forward with the job: the nodes read it instead of asking slurmctld again. */
    if (tbm_jobtag_format(&tag, text, sizeof(text)) == 0)
        set_spank_env(d, TBM_JOBTAG_ENV, text);
}

int job_submit(job_desc_msg_t *d, uint32_t submit_uid, char **err_msg)
{
    tbm_jobreq_t req = { d->tres_per_node, d->features, d->partition, d->exc_nodes,
                         d->min_nodes == NO_VAL ? TBM_NODES_UNSET : d->min_nodes,
                         d->max_nodes == NO_VAL ? TBM_NODES_UNSET : d->max_nodes,
                         spank_env(d, TBM_MLX_BACKEND_ENV, NULL), d->req_nodes,
                         d->ntasks_per_node == NO_VAL16 ? 0 : d->ntasks_per_node,
                         d->num_tasks == NO_VAL ? 0 : d->num_tasks };
    tbm_sched_t sched = { NULL, NULL, NULL, node_usable, NULL };
    tbm_err_t err = { { 0 } };
    tbm_jobplan_t plan;
    struct timespec t0, t1;
    char group[64];
    long long n;
    int rc = SLURM_SUCCESS, mac_job;

    (void)submit_uid;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    drop_spank_tags(d);   /* only apply() below gives a job its tag */
    mac_job = tbm_gres_tbmesh(d->tres_per_node, group, sizeof(group), &n, &err) != 0;
    pthread_mutex_lock(&lock);
    reload_if_changed();
    if (d->het_job_offset == 0)
        het_mac_components = 0;   /* the first component of a heterogeneous job */
    if (!have_conf) {
        if (mac_job) {
            tbm_errprintf(&err, "the Mac groups are not configured (%s is missing or invalid): ask the "
                          "administrator; jobs without --gres=tbmesh are not affected", conf_path);
            rc = SLURM_ERROR;
        }
    } else {
        sched.mac_partition = conf.mac_partition[0] ? conf.mac_partition : NULL;
        sched.shared_partitions = conf.shared_partitions;
        sched.default_partition = conf.default_partition[0] ? conf.default_partition : NULL;
        if (tbm_jobreq_plan(&conf, &sched, &req, &plan, &err) < 0) {
            rc = SLURM_ERROR;
        } else if (plan.verdict == TBM_JOB_MESH && second_mac_component(d)) {
            tbm_errprintf(&err, "a heterogeneous job may ask for Macs in one component only (each component "
                          "would get its own group, and a step across them could not run): put all its Macs in one "
                          "--gres=tbmesh:N component");
            tbm_jobplan_free(&plan);
            rc = SLURM_ERROR;
        } else {
            if (plan.verdict != TBM_JOB_UNTOUCHED)
                apply(d, &plan);
            tbm_jobplan_free(&plan);
        }
    }
    pthread_mutex_unlock(&lock);
    if (rc == SLURM_SUCCESS && mac_job) {   /* the submit half of the job's reproducibility record */
        char why[TBM_ERR_MAX], *stamp = tbm_repro_submit_stamp(d->spank_job_env, d->spank_job_env_size,
                                                               spank_env(d, TBM_MLX_BACKEND_ENV, NULL), NULL, why,
                                                               sizeof(why));
        if (stamp && !d->admin_comment)
            set_string(&d->admin_comment, stamp);
        else if (!stamp && why[0]) {
            tbm_errprintf(&err, "%s", why);
            rc = SLURM_ERROR;
        }
        free(stamp);
    }
    if (rc != SLURM_SUCCESS) {
        char msg[TBM_ERR_MAX + 16];
        snprintf(msg, sizeof(msg), "tbmesh: %s", err.msg);
        *err_msg = slurm_xstrdup(msg);
        slurm_info("%s: refused a job of uid %u: %s", plugin_type, submit_uid, err.msg);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    slurm_debug("%s: job_submit took %ld usec", plugin_type,
                (long)((t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000));
    return rc;
}

/* The job a change names: scontrol sends its id as text ("42", an array's "42_3", a heterogeneous job's
 * "42+1"), and job_id stays NO_VAL. Its leading number, or NO_VAL. */
static uint32_t changed_job_id(const job_desc_msg_t *d)
{
    char digits[16];
    long long id;
    size_t n;

    if (d->job_id != NO_VAL || !d->job_id_str)
        return d->job_id;
    n = strspn(d->job_id_str, "0123456789");
    if (n == 0 || n >= sizeof(digits))
        return NO_VAL;
    memcpy(digits, d->job_id_str, n);
    digits[n] = '\0';
    return tbm_parse_ll(digits, 10, 1, 0xfffffffdLL, &id) == 0 ? (uint32_t)id : NO_VAL;
}

/* A job's placement fields as the refresher last saw them (an array job: its first task's); 0 when it did
 * not see the job yet. Call with `lock` held. */
static int present_fields(uint32_t job_id, tbm_jobfields_t *f)
{
    uint32_t i;

    for (i = 0; jobs && i < jobs->record_count; i++) {
        const job_info_t *j = &jobs->job_array[i];
        if (j->job_id != job_id && j->array_job_id != job_id)
            continue;
        f->tres_per_node = j->tres_per_node;
        f->features = j->features;
        f->partition = j->partition;
        f->req_nodes = j->req_nodes;
        f->exc_nodes = j->exc_nodes;
        f->min_nodes = f->max_nodes = TBM_NODES_UNSET;
        return 1;
    }
    return 0;
}

/* A change of a pending job (`scontrol update`) is held to the rules of job_submit: a Mac job stays in its
 * group, a job that asked for no Mac stays off the Macs of shared partitions. Root and SlurmUser may
 * override; that is logged. Slurm 22.05 gives job_modify no message for the user: scontrol says "Access/
 * permission denied" and slurmctld's log says why. */
int job_modify(job_desc_msg_t *d, void *job_ptr, uint32_t modify_uid)
{
    tbm_jobfields_t now, change = { d->tres_per_node, d->features, d->partition, d->req_nodes, d->exc_nodes,
                                    d->min_nodes == NO_VAL ? TBM_NODES_UNSET : d->min_nodes,
                                    d->max_nodes == NO_VAL ? TBM_NODES_UNSET : d->max_nodes };
    tbm_sched_t sched = { NULL, NULL, NULL, NULL, NULL };
    tbm_err_t err = { { 0 } };
    tbm_jobmodify_t out;
    int admin = modify_uid == 0 || modify_uid == getuid(), known, rc = SLURM_SUCCESS;
    uint32_t job_id = changed_job_id(d);

    (void)job_ptr;
    pthread_mutex_lock(&lock);
    reload_if_changed();
    if (!have_conf) {
        pthread_mutex_unlock(&lock);
        return SLURM_SUCCESS;   /* no Macs configured: nothing to keep */
    }
    known = job_id != NO_VAL && present_fields(job_id, &now);
    if (known && change.tres_per_node && now.tres_per_node && !strcmp(change.tres_per_node, now.tres_per_node))
        change.tres_per_node = NULL;   /* the same request, sent again */
    sched.mac_partition = conf.mac_partition[0] ? conf.mac_partition : NULL;
    sched.shared_partitions = conf.shared_partitions;
    sched.default_partition = conf.default_partition[0] ? conf.default_partition : NULL;
    if (tbm_jobmodify_check(&conf, &sched, job_id, known ? &now : NULL, &change, admin, &out, &err) < 0) {
        slurm_info("%s: refused uid %u's change of job %u: %s", plugin_type, modify_uid, job_id, err.msg);
        rc = ESLURM_ACCESS_DENIED;
    } else {
        if (out.overridden)
            slurm_info("%s: uid %u (an administrator) changed job %u against tbmesh's rules: %s", plugin_type,
                       modify_uid, job_id, out.refusal);
        if (out.exc_nodes)
            set_string(&d->exc_nodes, out.exc_nodes);
        tbm_jobmodify_free(&out);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int init(void)
{
    tbm_conf_default_path(getenv("SLURM_CONF"), conf_path, sizeof(conf_path));
    pthread_mutex_lock(&lock);
    stopping = 0;
    reload_if_changed();
    pthread_mutex_unlock(&lock);
    if (pthread_create(&refresher, NULL, refresh_nodes, NULL) != 0)
        slurm_error("%s: cannot start the node-state thread; refusals will not name down nodes", plugin_type);
    slurm_info("%s: loaded (configuration %s)", plugin_type, conf_path);
    return SLURM_SUCCESS;
}

int fini(void)
{
    pthread_mutex_lock(&lock);
    stopping = 1;
    pthread_cond_broadcast(&stop_cond);
    pthread_mutex_unlock(&lock);
    pthread_join(refresher, NULL);
    if (nodes)
        slurm_free_node_info_msg(nodes);
    nodes = NULL;
    if (jobs)
        slurm_free_job_info_msg(jobs);
    jobs = NULL;
    if (have_conf)
        tbm_conf_free(&conf);
    have_conf = 0;
    return SLURM_SUCCESS;
}
