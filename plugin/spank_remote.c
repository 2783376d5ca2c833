/* spank_remote.c: spank_tbmesh on the nodes (slurmstepd): a Mac job's MLX environment. Every rank gets the
 * variables of the backend chosen for it (decided once in spank_step.c); on a direct-mode Mac the files the
 * ranks read (device matrix, ring hostfile) are written in the job's folder, which root made; the choice is
 * said once on the job's stderr. A step the plug-in refuses fails visibly: each of its tasks exits with
 * TBM_SPANK_REFUSED and the reason on its stderr, so srun exits non-zero and sacct does not say COMPLETED. */
#include "config.h"
#include "spank_remote.h"
#include "spank_bridge.h"
#include "spank_step.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbm_slurm.h"

/* What this step wrote, removed again when it ends. */
static char *written[TBM_SPANK_FILES_MAX];
static size_t n_written;

/* Direct mode: this process runs on the Mac, as the user, in the folder root made for the job. */
static int write_files(const tbm_envplan_t *plan, tbm_err_t *err)
{
    size_t i;

    for (i = 0; i < plan->n_files; i++) {
        if (tbm_write_file_replace(plan->files[i].path, plan->files[i].data, plan->files[i].len, 0600, err) < 0)
            return -1;
        if (n_written < TBM_SPANK_FILES_MAX)
            written[n_written++] = strdup(plan->files[i].path);
    }
    return 0;
}

int tbm_spank_remote_user_init(spank_t sp)
{
    const tbm_spank_step_t *s = tbm_spank_step();
    tbm_err_t err = { { 0 } };
    size_t i;

    if (!s->active || s->refusal[0])
        return 0;   /* a refusal is said by every task (tbm_spank_remote_task_init) */
    if (s->planned) {
        for (i = 0; i < s->plan.n_vars; i++)
            if (spank_setenv(sp, s->plan.vars[i].name, s->plan.vars[i].value, 1) != ESPANK_SUCCESS) {
                tbm_spank_step_refuse("cannot export %s",
                         s->plan.vars[i].name);
                return 0;
            }
        if (!s->bridge && write_files(&s->plan, &err) < 0) {
            tbm_spank_step_refuse("%s", err.msg);
            return 0;
        }
    }
    if (s->note[0] && s->node_id == 0)
        slurm_spank_log("%s", s->note);
    return 0;
}

int tbm_spank_remote_task_init(spank_t sp)
{
    const tbm_spank_step_t *s = tbm_spank_step();
    uint32_t task = 0;

    if (!s->active || !s->refusal[0])
        return 0;
    spank_get_item(sp, S_TASK_GLOBAL_ID, &task);
    dprintf(STDERR_FILENO, "tbmesh: step %u.%u refused on %s (task %u): %s\n", s->job, s->step,
            s->node[0] ? s->node : "this node", task, s->refusal);
    _exit(TBM_SPANK_REFUSED);
}

void tbm_spank_remote_exit(void)
{
    while (n_written > 0) {
        n_written--;
        if (written[n_written])
            unlink(written[n_written]);
        free(written[n_written]);
    }
}

#define EPILOG_GRACE "5"   /* seconds from SIGTERM to SIGKILL for what a direct-mode job left */

void tbm_spank_remote_epilog(uint32_t job, const char *node, uid_t uid, int exclusive)
{
    tbm_err_t err = { { 0 } };
    char jobarg[16], uidarg[16];
    char *argv[] = { "macnode", "cleanup", "--local", "--job", jobarg, "--uid", uidarg, "--grace", EPILOG_GRACE,
                     exclusive ? "--exclusive" : NULL, NULL };

    snprintf(jobarg, sizeof(jobarg), "%u", job);
    snprintf(uidarg, sizeof(uidarg), "%u", (unsigned)uid);
    /* Slurm's proctrack/pgid (macOS has no other) ended the steps' process groups; what left them is found here */
    if (uid != 0 && tbm_spank_run_macnode(argv) < 0)
        slurm_error("tbmesh: job %u: macnode cleanup --local on %s failed: what the job left outside its steps' "
                    "process groups may still run", job, node);
    if (tbm_jobdir_remove(tbm_spank_args()->jobs_dir, job, &err) < 0)
        slurm_error("tbmesh: job %u: cannot remove its folder on %s: %s", job, node, err.msg);
}
