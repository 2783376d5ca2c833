/* job_submit_repro.c: job_submit/tbmesh's part of the reproducibility records: the submit half that sbatch
 * passed in the job control environment is checked (a job whose details do not read is refused), and the
 * job's AdminComment gets the TBM1 summary at submit (phase, state, backend, group, records on/off), so that
 * even a job cancelled while pending is known as a Mac job with records. The submit half itself stays in the
 * job control environment, which only the job's user and root see: AdminComment is shown to every user. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "record.h"
#include "job_submit_repro.h"

#define SUBMIT_VAR "TBMESH_REPRO_SUBMIT="

static const char *submit_half(char **env, uint32_t n)
{
    uint32_t i;

    for (i = 0; env && i < n; i++)
        if (env[i] && !strncmp(env[i], SUBMIT_VAR, strlen(SUBMIT_VAR)))
            return env[i] + strlen(SUBMIT_VAR);
    return NULL;
}

char *tbm_repro_submit_stamp(char **spank_env, uint32_t n_env, const char *backend, const char *group, char *why,
                             size_t why_len)
{
    const char *text = submit_half(spank_env, n_env);
    json_object *doc = NULL, *s;
    tbm_err_t err = { { 0 } };
    char *out;

    why[0] = '\0';
    if (text && !(doc = tbm_submit_half_parse(text, strlen(text), &err))) {
        snprintf(why, why_len, "the reproducibility details from sbatch do not read (%s): %s", err.msg,
                 strlen(text) > TBM_SUBMIT_HALF_MAX ? "use a shorter --repro-note or fewer --repro-data paths"
                                                    : "submit with sbatch and the site's plugstack");
        return NULL;
    }
    s = tbm_summary_at_submit(backend, group, tbm_json_str(doc, "records"));
    json_object_put(doc);
    if (!s)
        return NULL;
    tbm_redact_tree(s, NULL, 0);
    if (!(out = tbm_summary_encode(s, &err)))
        snprintf(why, why_len, "%s: the backend or group name is too long", err.msg);
    json_object_put(s);
    return out;
}
