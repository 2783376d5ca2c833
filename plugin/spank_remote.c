/* spank_remote.c: spank_tbmesh in slurmstepd (remote context): for every srun step of a Mac job, works out
 * this node's rank and exports the chosen backend's MLX variables (lib/envplan.c), writes the files the
 * ranks read (device matrix, ring hostfile) in direct mode, and says once on the job's stderr what it chose. */
#include "config.h"
#include "spank_tbmesh.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "tbmesh.h"

#define BACKEND_ENV "SLURM_SPANK_" TBM_BACKEND_ENV

static char conf_arg[4096];

void tbm_spank_remote_args(int ac, char **av)
{
    int i;

    for (i = 0; i < ac; i++)
        if (!strncmp(av[i], "conf=", 5))
            snprintf(conf_arg, sizeof(conf_arg), "%s", av[i] + 5);
}

/* tbmesh.conf: the plugstack argument conf=, else beside slurm.conf. */
int tbm_spank_load_conf(tbm_conf_t *conf, tbm_err_t *err)
{
    char path[4096];
    size_t len;
    char *text;
    int rc;

    if (conf_arg[0])
        snprintf(path, sizeof(path), "%s", conf_arg);
    else
        tbm_conf_default_path(getenv("SLURM_CONF"), path, sizeof(path));
    text = tbm_read_file(path, TBM_CONF_MAX_BYTES, &len, err);
    if (!text)
        return -1;
    rc = tbm_conf_parse(text, len, path, conf, NULL, err);
    free(text);
    return rc;
}

/* The step's nodes in Slurm's order, through Slurm's own hostlist. */
char **tbm_spank_step_nodes(spank_t sp, size_t *n, tbm_err_t *err)
{
    char list[8192], *host, **names = NULL, **grown;
    hostlist_t hl;

    *n = 0;
    if (spank_getenv(sp, "SLURM_STEP_NODELIST", list, sizeof(list)) != ESPANK_SUCCESS &&
        spank_getenv(sp, "SLURM_JOB_NODELIST", list, sizeof(list)) != ESPANK_SUCCESS)
        return tbm_errprintf(err, "the step's node list is not in its environment"), NULL;
    if (!(hl = slurm_hostlist_create(list)))
        return tbm_errprintf(err, "cannot read the node list '%s'", list), NULL;
    while ((host = slurm_hostlist_shift(hl))) {
        grown = realloc(names, (*n + 1) * sizeof(*names));
        if (!grown) {
            free(host);
            break;
        }
        names = grown;
        names[(*n)++] = strdup(host);
        free(host);
    }
    slurm_hostlist_destroy(hl);
    return names;
}

void tbm_spank_free_nodes(char **names, size_t n)
{
    while (n--)
        free(names[n]);
    free(names);
}

/* What this step wrote, removed again when it ends. */
static char written_dir[4096];
static char *written[8];
static size_t n_written;

/* The job's folder: made by this user, or already theirs (a real folder, not a link, mode 0700). */
static int own_dir(const char *dir, tbm_err_t *err)
{
    struct stat st;

    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return tbm_errprintf(err, "cannot make %s: %s", dir, strerror(errno));
    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
        return tbm_errprintf(err, "%s exists but is not this user's private folder: remove it and run again", dir);
    return 0;
}

/* Direct mode: this process runs on the Mac, as the user: write the job's files. */
static int write_files(const tbm_envplan_t *plan, tbm_err_t *err)
{
    char dir[4096], *slash;
    size_t i;

    for (i = 0; i < plan->n_files; i++) {
        snprintf(dir, sizeof(dir), "%s", plan->files[i].path);
        if ((slash = strrchr(dir, '/')))
            *slash = '\0';
        if (own_dir(dir, err) < 0)
            return -1;
        if (tbm_write_file_atomic(plan->files[i].path, plan->files[i].data, plan->files[i].len, 0600, err) < 0)
            return -1;
        snprintf(written_dir, sizeof(written_dir), "%s", dir);
        if (n_written < sizeof(written) / sizeof(written[0]))
            written[n_written++] = strdup(plan->files[i].path);
    }
    return 0;
}

void tbm_spank_remote_exit(void)
{
    while (n_written > 0) {
        n_written--;
        if (written[n_written])
            unlink(written[n_written]);
        free(written[n_written]);
    }
    if (written_dir[0])
        rmdir(written_dir);
    written_dir[0] = '\0';
}

static int export_plan(spank_t sp, const tbm_envplan_t *plan, tbm_err_t *err)
{
    size_t i;

    for (i = 0; i < plan->n_vars; i++)
        if (spank_setenv(sp, plan->vars[i].name, plan->vars[i].value, 1) != ESPANK_SUCCESS)
            return tbm_errprintf(err, "cannot export %s", plan->vars[i].name);
    return 0;
}

static int plan_step(spank_t sp, const char *backend_name, tbm_err_t *err)
{
    tbm_conf_t conf;
    tbm_envplan_t plan;
    tbm_backend_t backend = TBM_BACKEND_AUTO;
    uint32_t job_id = 0, node_id = 0;
    tbm_envplan_opts_t opts = { NULL, NULL, NULL };
    char **nodes, job_dir[1100];
    size_t n;
    int rc = -1, g, bridge;

    if (backend_name[0] && tbm_backend_parse(backend_name, &backend, err) < 0)
        return tbm_errprefix(err, "--mlx-backend=");
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_NODEID, &node_id) != ESPANK_SUCCESS)
        return tbm_errprintf(err, "slurmstepd gave no job or node id");
    if (tbm_spank_load_conf(&conf, err) < 0)
        return -1;
    nodes = tbm_spank_step_nodes(sp, &n, err);
    g = nodes && node_id < n ? tbm_conf_node(&conf, nodes[node_id]) : -1;
    bridge = g >= 0 && conf.groups[conf.nodes[g].group].mode == TBM_MODE_BRIDGE;
    if (bridge)   /* the files go into the agent's job folder on the Mac */
        tbm_spank_bridge_job_dir(job_id, job_dir, sizeof(job_dir));
    opts.job_dir = bridge ? job_dir : NULL;
    if (nodes && node_id < n &&
        tbm_envplan_make(&conf, (const char *const *)nodes, n, nodes[node_id], backend, job_id, &opts, &plan,
                         err) == 0) {
        rc = export_plan(sp, &plan, err);
        if (rc == 0)
            rc = bridge ? tbm_spank_bridge_stage(&plan, err) : write_files(&plan, err);
        if (rc == 0 && node_id == 0)
            slurm_spank_log("%s", plan.note);
        tbm_envplan_free(&plan);
    } else if (nodes && node_id >= n) {
        tbm_errprintf(err, "this node (%u) is not in the step's node list", node_id);
    }
    tbm_spank_free_nodes(nodes, n);
    tbm_conf_free(&conf);
    return rc;
}

/* Is this a --gres=tbmesh job? Asked of slurmctld (no SPANK item carries GRES): once placed by
 * job_submit/tbmesh its request reads "gres:tbmesh:1" per node. -1 when the controller cannot say. */
static int is_mac_job(uint32_t job_id)
{
    job_info_msg_t *msg = NULL;
    const char *tres;
    int mac;

    if (slurm_load_job(&msg, job_id, SHOW_DETAIL) != SLURM_SUCCESS || !msg || msg->record_count < 1) {
        if (msg)
            slurm_free_job_info_msg(msg);
        return -1;
    }
    tres = msg->job_array[0].tres_per_node;
    mac = tres && (strstr(tres, "gres:tbmesh") || strstr(tres, "gres/tbmesh"));
    slurm_free_job_info_msg(msg);
    return mac;
}

int tbm_spank_remote_user_init(spank_t sp, int ac, char **av)
{
    char backend[32] = "";
    tbm_err_t err = { { 0 } };
    uint32_t step_id = 0, job_id = 0;
    int mac;

    (void)ac;
    (void)av;
    if (spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS || step_id == SLURM_BATCH_SCRIPT ||
        step_id == SLURM_EXTERN_CONT || step_id == SLURM_INTERACTIVE_STEP)
        return 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS || (mac = is_mac_job(job_id)) == 0)
        return 0;   /* not a --gres=tbmesh job */
    if (mac < 0) {
        slurm_error("tbmesh: cannot ask slurmctld about job %u: %s; the step runs without its MLX setup",
                    job_id, slurm_strerror(slurm_get_errno()));
        return -1;
    }
    if (!tbm_spank_backend(backend, sizeof(backend)))
        spank_getenv(sp, BACKEND_ENV, backend, sizeof(backend));
    if (plan_step(sp, backend, &err) < 0) {
        slurm_error("tbmesh: cannot set up MLX for this step: %s", err.msg);
        return -1;
    }
    return 0;
}
