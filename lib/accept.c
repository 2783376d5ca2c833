/* accept.c: the acceptance run's model (see accept.h): levels and steps by name, a run made empty and freed,
 * job ids and findings added to a step. */
#include "config.h"
#include "accept.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const level_names[TBM_ACCEPT_LEVELS] = {
    "macOS compatibility only", "prototype", "plannable research resource",
};
static const char *const level_keys[TBM_ACCEPT_LEVELS] = { "macos-only", "prototype", "plannable" };
static const char *const step_titles[TBM_ACCEPT_STEPS] = {
    "The task", "A single-Mac baseline", "The distributed path", "The physical design",
    "Configure and launch through Slurm", "Compare", "Operations",
};

const char *tbm_accept_level_name(tbm_accept_level_t l)
{
    return l < TBM_ACCEPT_LEVELS ? level_names[l] : "?";
}

const char *tbm_accept_level_key(tbm_accept_level_t l)
{
    return l < TBM_ACCEPT_LEVELS ? level_keys[l] : "?";
}

const char *tbm_step_state_name(tbm_step_state_t s)
{
    switch (s) {
    case TBM_STEP_PASSED: return "passed";
    case TBM_STEP_FINDINGS: return "findings";
    case TBM_STEP_FAILED: return "failed";
    default: return "not run";
    }
}

const char *tbm_accept_step_title(int step)
{
    return step >= 1 && step <= TBM_ACCEPT_STEPS ? step_titles[step - 1] : "?";
}

int tbm_accept_exit_status(tbm_accept_level_t l)
{
    return l == TBM_ACCEPT_PLANNABLE ? 0 : l == TBM_ACCEPT_PROTOTYPE ? 10 : 20;
}

void tbm_accept_init(tbm_accept_t *a)
{
    int i;

    memset(a, 0, sizeof(*a));
    tbm_accept_plan_defaults(&a->plan);
    for (i = 0; i < TBM_ACCEPT_STEPS; i++)
        tbm_findings_init(&a->step[i].findings);
    for (i = 0; i < TBM_ACCEPT_LEVELS; i++)
        tbm_findings_init(&a->kept[i]);
    a->chosen = TBM_BACKEND_AUTO;
    a->busbw_share = -1;
}

void tbm_accept_free(tbm_accept_t *a)
{
    int i;

    for (i = 0; i < TBM_ACCEPT_STEPS; i++)
        tbm_findings_free(&a->step[i].findings);
    for (i = 0; i < TBM_ACCEPT_LEVELS; i++)
        tbm_findings_free(&a->kept[i]);
    tbm_accept_refwork_free(&a->base_rw);
    tbm_accept_refwork_free(&a->mesh_rw);
}

void tbm_accept_add_job(tbm_accept_t *a, int step, uint32_t job)
{
    char *jobs;
    size_t len;

    if (step < 1 || step > TBM_ACCEPT_STEPS || job == 0)
        return;
    jobs = a->step[step - 1].jobs;
    len = strlen(jobs);
    snprintf(jobs + len, TBM_ACCEPT_JOBS_MAX - len, "%s%u", len ? "," : "", job);
}

void tbm_accept_step_add(tbm_accept_t *a, int step, tbm_severity_t sev, const char *code, const char *where,
                         const char *fix, const char *fmt, ...)
{
    char *what = NULL;
    va_list ap;

    if (step < 1 || step > TBM_ACCEPT_STEPS)
        return;
    va_start(ap, fmt);
    if (vasprintf(&what, fmt, ap) < 0)
        what = NULL;
    va_end(ap);
    tbm_finding_add(&a->step[step - 1].findings, sev, code, where, fix, "%s", what ? what : "(no memory for the text)");
    free(what);
}
