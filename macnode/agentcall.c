/* agentcall.c: `macnode prepare` (write a job's files on the Mac through its agent) and `macnode cleanup`
 * (end a job's tasks there and remove its files; root), for the SPANK plug-in and the epilog. */
#include "config.h"
#include "exec.h"
#include "client.h"
#include "fileio.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_FAIL  1
#define EXIT_USAGE 2

static void call_usage(FILE *out)
{
    fprintf(out,
            "usage: macnode prepare [--agent ADDR[:PORT]] [--grant FILE|-] [--mode OCTAL] --file NAME=PATH...\n"
            "  Write each PATH as NAME into the job's folder on the Mac (made for the grant's user, 0700) and\n"
            "  print the folder. Files get the --mode given before them (default 0644). A grant is used once:\n"
            "  make one per call.\n"
            "usage: macnode cleanup [--agent ADDR[:PORT]] --job J\n"
            "  End job J's tasks on the Mac (SIGTERM, SIGKILL after the agent's grace) and remove its folder;\n"
            "  prints how many tasks were ended. Root only.\n"
            "  Both take --munge-socket PATH, and $TBMESH_AGENT, $TBMESH_GRANT, $TBMESH_MUNGE_SOCKET as\n"
            "  macnode exec does.\n");
}

/* Send req, wait for `want`, print what `show` makes of the reply. */
static int call(client_t *c, const tbm_msg_t *req, tbm_msg_type_t want, const char *cmd,
                void (*show)(const tbm_msg_t *))
{
    tbm_err_t err = { { 0 } };
    tbm_msg_t reply;
    int rc = client_open(c, &err) == 0 && client_call(c, req, want, &reply, &err) == 0 ? 0 : -1;

    if (rc == 0) {
        show(&reply);
        tbm_msg_free(&reply);
    } else {
        fprintf(stderr, "macnode %s: %s\n", cmd, err.msg);
    }
    client_close(c);
    return rc < 0 ? EXIT_FAIL : 0;
}

static void show_dir(const tbm_msg_t *m)
{
    printf("%s\n", m->dir);
}

static void show_killed(const tbm_msg_t *m)
{
    printf("job %u: %d tasks ended\n", m->job, m->killed);
}

/* Read NAME=PATH into the next file of req. */
static int add_file(tbm_msg_t *req, const char *spec, int mode)
{
    const char *eq = strchr(spec, '=');
    tbm_jobfile_t *f = &req->files[req->n_files];
    tbm_err_t err = { { 0 } };
    size_t len;

    if (!eq || eq == spec || req->n_files >= TBM_FILES_MAX) {
        fprintf(stderr, "macnode prepare: --file '%s' must be NAME=PATH (at most %d files)\n", spec,
                TBM_FILES_MAX);
        return -1;
    }
    f->name = strndup(spec, (size_t)(eq - spec));
    f->data = tbm_read_file(eq + 1, TBM_FILE_DATA_MAX, &len, &err);
    if (!f->name || !f->data) {
        fprintf(stderr, "macnode prepare: %s\n", tbm_erris(&err) ? err.msg : "out of memory");
        free((void *)f->name), free((void *)f->data);
        return -1;
    }
    f->len = len;
    f->mode = mode;
    req->n_files++;
    return 0;
}

static void free_files(tbm_msg_t *req)
{
    int i;

    for (i = 0; i < req->n_files; i++)
        free((void *)req->files[i].name), free((void *)req->files[i].data);
}

static int mode_of(const char *s, int *mode)
{
    char *end;
    long v = strtol(s, &end, 8);

    if (!*s || *end || v < 0 || v > 0777) {
        fprintf(stderr, "macnode prepare: --mode '%s' must be an octal mode like 0644\n", s);
        return -1;
    }
    *mode = (int)v;
    return 0;
}

int macnode_prepare(int argc, char **argv)
{
    static const struct option opts[] = {
        { "agent", required_argument, NULL, 'a' }, { "grant", required_argument, NULL, 'g' },
        { "mode", required_argument, NULL, 'M' },  { "file", required_argument, NULL, 'f' },
        { "munge-socket", required_argument, NULL, 'm' }, { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    client_t c = { .fd = -1 };
    tbm_msg_t req = { .type = TBM_MSG_PREPARE };
    tbm_err_t err = { { 0 } };
    const char *grant_arg = NULL;
    char *grant = NULL;
    int o, mode = 0644, rc = EXIT_USAGE;

    while ((o = getopt_long(argc, argv, "a:g:M:f:m:h", opts, NULL)) != -1) {
        if (o == 'h') {
            call_usage(stdout);
            rc = 0;
            goto out;
        }
        if ((o == 'M' && mode_of(optarg, &mode) < 0) || (o == 'f' && add_file(&req, optarg, mode) < 0) ||
            (o != 'a' && o != 'g' && o != 'M' && o != 'f' && o != 'm'))
            goto out;
        c.agent = o == 'a' ? optarg : c.agent;
        c.socket = o == 'm' ? optarg : c.socket;
        grant_arg = o == 'g' ? optarg : grant_arg;
    }
    if (optind < argc || client_defaults(&c, "prepare") < 0)
        goto out;
    grant = client_load_grant(grant_arg, &err);
    if (!grant && tbm_erris(&err)) {
        fprintf(stderr, "macnode prepare: %s\n", err.msg);
        rc = EXIT_FAIL;
        goto out;
    }
    req.grant = grant;
    rc = call(&c, &req, TBM_MSG_PREPARED, "prepare", show_dir);
out:
    if (rc == EXIT_USAGE)
        call_usage(stderr);
    free(grant);
    free_files(&req);
    return rc;
}

int macnode_cleanup(int argc, char **argv)
{
    static const struct option opts[] = {
        { "agent", required_argument, NULL, 'a' }, { "job", required_argument, NULL, 'j' },
        { "munge-socket", required_argument, NULL, 'm' }, { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    client_t c = { .fd = -1 };
    tbm_msg_t req = { .type = TBM_MSG_CLEANUP };
    char *end;
    long long job = -1;
    int o;

    while ((o = getopt_long(argc, argv, "a:j:m:h", opts, NULL)) != -1) {
        switch (o) {
        case 'a': c.agent = optarg; break;
        case 'm': c.socket = optarg; break;
        case 'j':
            job = strtoll(optarg, &end, 10);
            if (!*optarg || *end || job < 0 || job > UINT32_MAX)
                job = -2;
            break;
        case 'h': call_usage(stdout); return 0;
        default: call_usage(stderr); return EXIT_USAGE;
        }
    }
    if (job < 0 || optind < argc) {
        fprintf(stderr, "macnode cleanup: --job J (a job id) is needed, and nothing else\n");
        return EXIT_USAGE;
    }
    if (client_defaults(&c, "cleanup") < 0)
        return EXIT_USAGE;
    req.job = (uint32_t)job;
    return call(&c, &req, TBM_MSG_CLEANED, "cleanup", show_killed);
}
