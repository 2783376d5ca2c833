/* job_submit_repro.c: job_submit/tbmesh's part of the reproducibility records: the submit half of a Mac job's
 * record (what sbatch passed in the job control environment, checked, and the batch script's SHA-256) as a
 * TBM1 summary in the job's AdminComment, so that even a job cancelled while pending keeps it. */
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

char *tbm_repro_submit_stamp(char **spank_env, uint32_t n_env, const char *script, const char *backend,
                             const char *group, char *why, size_t why_len)
{
    const char *text = submit_half(spank_env, n_env);
    json_object *s = json_object_new_object(), *doc = NULL, *v, *git;
    char sha[TBM_SHA256_HEX];
    tbm_err_t err = { { 0 } };
    char *out;

    why[0] = '\0';
    json_object_object_add(s, "v", json_object_new_int(1));
    json_object_object_add(s, "phase", json_object_new_string("submit"));
    json_object_object_add(s, "state", json_object_new_string("PENDING"));
    json_object_object_add(s, "backend", json_object_new_string(backend && *backend ? backend : "auto"));
    if (group && *group)
        json_object_object_add(s, "group", json_object_new_string(group));
    if (text) {
        if (!(doc = tbm_json_parse(text, strlen(text), &err))) {
            snprintf(why, why_len, "the reproducibility details from sbatch do not read (%s): submit with "
                     "sbatch and the site's plugstack", err.msg);
            json_object_put(s);
            return NULL;
        }
        if ((v = tbm_json_typed(doc, "submit", json_type_object)))
            json_object_object_add(s, "submit", json_object_get(v));
        if ((v = tbm_json_typed(doc, "declared", json_type_object)))
            json_object_object_add(s, "declared", json_object_get(v));
        if ((v = tbm_json_typed(doc, "records", json_type_string)))
            json_object_object_add(s, "records", json_object_get(v));
        json_object_put(doc);
    }
    if (script) {   /* the script itself is here: its digest is a fact, not a claim */
        tbm_sha256_hex(script, strlen(script), sha);
        json_object_object_add(s, "script", json_object_new_string(sha));
        if ((v = tbm_json_typed(s, "submit", json_type_object)))
            json_object_object_add(v, "script_sha256", json_object_new_string(sha));
    }
    if ((git = tbm_json_typed(tbm_json_typed(s, "submit", json_type_object), "git", json_type_object)) &&
        tbm_json_str(git, "commit")) {
        json_object_object_add(s, "commit", json_object_new_string(tbm_json_str(git, "commit")));
        if ((v = tbm_json_typed(git, "dirty", json_type_boolean)))
            json_object_object_add(s, "dirty", json_object_get(v));
    }
    if ((v = tbm_json_typed(tbm_json_typed(s, "declared", json_type_object), "seed", json_type_string)))
        json_object_object_add(s, "seed", json_object_get(v));
    tbm_redact_tree(s, NULL, 0);
    if (tbm_summary_validate(s, &err) < 0) {
        snprintf(why, why_len, "the reproducibility details from sbatch are not valid (%s): submit with sbatch "
                 "and the site's plugstack", err.msg);
        json_object_put(s);
        return NULL;
    }
    out = tbm_summary_encode(s, &err);
    if (!out && (v = tbm_json_typed(s, "submit", json_type_object))) {   /* too long: drop the command line */
        json_object_object_add(v, "sbatch_line", tbm_record_absent("too long for AdminComment; see the record"));
        out = tbm_summary_encode(s, &err);
    }
    if (!out)
        snprintf(why, why_len, "%s: use a shorter --repro-note or fewer --repro-data paths", err.msg);
    json_object_put(s);
    return out;
}
