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

int tbm_jobtag_env_is_tag(const char *entry)
{
    static const char *const names[] = { TBM_JOBTAG_ENV "=", "SPANK_" TBM_JOBTAG_ENV "=" };
    size_t i;

    for (i = 0; entry && i < sizeof(names) / sizeof(names[0]); i++)
        if (strncmp(entry, names[i], strlen(names[i])) == 0)
            return 1;
    return 0;
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

long tbm_jobtag_run_parse(const char *s)
{
    long long run;

    if (!s || !*s || tbm_parse_ll(s, 10, 0, TBM_JOBTAG_RUN_MAX, &run) < 0)
        return -1;
    return (long)run;
}

int tbm_jobtag_kept_format(const char *tag, long run, char *buf, size_t len)
{
    int n;

    if (!tag || strchr(tag, '\n') || run > TBM_JOBTAG_RUN_MAX)
        return -1;
    n = run < 0 ? snprintf(buf, len, "%s\n", tag) : snprintf(buf, len, "%s\nrun=%ld\n", tag, run);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int tbm_jobtag_kept_parse(const char *text, char *tag, size_t tag_len, long *run, tbm_err_t *err)
{
    const char *nl = text ? strchr(text, '\n') : NULL, *rest;
    size_t n = nl ? (size_t)(nl - text) : (text ? strlen(text) : 0);
    char line[32];
    size_t m;

    *run = -1;
    if (!text)
        return tbm_errprintf(err, "the job's kept tbmesh tag is missing");
    if (n >= tag_len)
        return tbm_errprintf(err, "the job's kept tbmesh tag is too long (%zu bytes)", n);
    memcpy(tag, text, n);
    tag[n] = '\0';
    if (!nl || !nl[1])
        return 0;   /* the tag alone: kept without its run */
    rest = nl + 1;
    m = strcspn(rest, "\n");
    if (m >= sizeof(line) || strncmp(rest, "run=", 4) != 0 || (rest[m] == '\n' && rest[m + 1]))
        return tbm_errprintf(err, "the job's kept tbmesh tag has a bad second line (not 'run=N')");
    memcpy(line, rest + 4, m - 4);
    line[m - 4] = '\0';
    if ((*run = tbm_jobtag_run_parse(line)) < 0)
        return tbm_errprintf(err, "the job's kept tbmesh tag names a bad run '%s' (0 to %d)", line,
                             TBM_JOBTAG_RUN_MAX);
    return 0;
}

int tbm_jobtag_kept_drop(const char *text, long epilog_run)
{
    char tag[TBM_JOBTAG_KEPT_MAX];
    tbm_err_t err = { { 0 } };
    long run;

    if (epilog_run < 0 || tbm_jobtag_kept_parse(text, tag, sizeof(tag), &run, &err) < 0 || run < 0)
        return 1;
    return run <= epilog_run;
}
