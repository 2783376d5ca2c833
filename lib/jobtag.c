/* jobtag.c: the decision job_submit/tbmesh carries forward to the nodes (see jobtag.h). */
#include "jobtag.h"

#include <stdio.h>
#include <string.h>

#include "scalar.h"

#define TAG_VERSION "v1"

int tbm_jobtag_format(const tbm_jobtag_t *t, char *buf, size_t len)
{
    int n = snprintf(buf, len, TAG_VERSION " macs=%u backend=%s", t->macs, tbm_backend_name(t->backend));

    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int tbm_jobtag_parse(const char *s, tbm_jobtag_t *t, tbm_err_t *err)
{
    char copy[TBM_JOBTAG_MAX], *tok, *save = NULL, *eq;
    int have_macs = 0, have_backend = 0;
    long long macs;

    if (!s || strlen(s) >= sizeof(copy))
        return tbm_errprintf(err, "the job's tbmesh tag is missing or too long");
    snprintf(copy, sizeof(copy), "%s", s);
    tok = strtok_r(copy, " ", &save);
    if (!tok || strcmp(tok, TAG_VERSION) != 0)
        return tbm_errprintf(err, "the job's tbmesh tag '%s' is of another version: resubmit the job with this "
                             "release's job_submit/tbmesh", s);
    while ((tok = strtok_r(NULL, " ", &save))) {
        if (!(eq = strchr(tok, '=')))
            return tbm_errprintf(err, "the job's tbmesh tag '%s' has a field without '=' ('%s')", s, tok);
        *eq++ = '\0';
        if (!strcmp(tok, "macs")) {
            if (tbm_parse_ll(eq, 10, 0, 1000000, &macs) < 0)
                return tbm_errprintf(err, "the job's tbmesh tag '%s' has a bad Mac count", s);
            t->macs = (unsigned)macs;
            have_macs = 1;
        } else if (!strcmp(tok, "backend")) {
            if (tbm_backend_parse(eq, &t->backend, NULL) < 0)
                return tbm_errprintf(err, "the job's tbmesh tag '%s' names an unknown backend", s);
            have_backend = 1;
        }   /* fields of later releases are skipped */
    }
    if (!have_macs || !have_backend)
        return tbm_errprintf(err, "the job's tbmesh tag '%s' lacks %s", s, have_macs ? "the backend" : "the Mac count");
    return 0;
}
