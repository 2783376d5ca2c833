/* cleanup.c: `macnode cleanup` (see cleanup.h): end job J on a Mac, through the Mac's agent (bridge mode: its
 * tasks, then what they left outside their groups, and the job's folder), or here (--local, a direct-mode Mac's
 * epilog: what the job left outside Slurm's process groups); root only. */
#include "config.h"
#include "cleanup.h"
#include "client.h"
#include "scalar.h"
#include "sweep.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define EXIT_FAIL  1
#define EXIT_USAGE 2

typedef struct cleanup_opts {
    client_t c;
    long long job, uid;
    int exclusive, local, grace_s;
} cleanup_opts_t;

static void cleanup_usage(FILE *out)
{
    fprintf(out,
            "usage: macnode cleanup [--agent ADDR[:PORT]] [--node NAME] [--munge-socket PATH] --job J\n"
            "                       [--uid U [--exclusive]]\n"
            "       macnode cleanup --local --job J --uid U [--exclusive] [--grace SECONDS]\n"
            "  End job J on a Mac. Through its agent (bridge mode): its tasks (SIGTERM, SIGKILL after the agent's\n"
            "  grace), then what they left outside their process groups, and its folder; the agent proves itself\n"
            "  first as --node's (default: the Mac tbmesh.conf puts at that address). --local, on the Mac itself\n"
            "  (a direct-mode Mac's epilog): what the job left outside Slurm's process groups. With --uid U (the\n"
            "  job's user) and --exclusive (tbmesh.conf's ExclusiveMacs=yes: the Mac was the job's alone), every\n"
            "  process of U on the Mac ends, unless U has another job there; without --exclusive only the job's\n"
            "  own processes. Root's and other users' processes never. Prints how many ended. Root only. The agent\n"
            "  and munged's socket default to $TBMESH_AGENT and $TBMESH_MUNGE_SOCKET, as for macnode exec.\n");
}

static int number(const char *opt, const char *s, long long max, long long *out)
{
    if (tbm_parse_ll(s, 10, 0, max, out) == 0)
        return 0;
    fprintf(stderr, "macnode cleanup: %s '%s' must be a number from 0 to %lld\n", opt, s, max);
    return -1;
}

static int cleanup_options(int argc, char **argv, cleanup_opts_t *o)
{
    static const struct option opts[] = {
        { "agent", required_argument, NULL, 'a' },  { "job", required_argument, NULL, 'j' },
        { "munge-socket", required_argument, NULL, 'm' }, { "node", required_argument, NULL, 'n' },
        { "uid", required_argument, NULL, 'u' },    { "exclusive", no_argument, NULL, 'x' },
        { "local", no_argument, NULL, 'l' },        { "grace", required_argument, NULL, 'g' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long long v;
    int c;

    while ((c = getopt_long(argc, argv, "a:j:m:n:u:xlg:h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': o->c.agent = optarg; break;
        case 'm': o->c.socket = optarg; break;
        case 'n': o->c.want = optarg; break;
        case 'j': if (number("--job", optarg, UINT32_MAX, &o->job) < 0) return -1; break;
        case 'u': if (number("--uid", optarg, UINT32_MAX - 1, &o->uid) < 0) return -1; break;
        case 'x': o->exclusive = 1; break;
        case 'l': o->local = 1; break;
        case 'g': if (number("--grace", optarg, 3600, &v) < 0) return -1; o->grace_s = (int)v; break;
        case 'h': cleanup_usage(stdout); return 1;
        default: cleanup_usage(stderr); return -1;
        }
    }
    if (o->job < 0 || optind < argc || (o->local && o->uid < 0) || (o->exclusive && o->uid < 0)) {
        fprintf(stderr, "macnode cleanup: --job J (a job id) is needed%s, and nothing else\n",
                o->local || o->exclusive ? ", with --uid U (the job's user)" : "");
        return -1;
    }
    return o->local ? 0 : client_defaults(&o->c, "cleanup");
}

/* --local: what the job left on this Mac, ended here. */
static int cleanup_here(const cleanup_opts_t *o)
{
    tbm_reap_ask_t ask = { .job = (uint32_t)o->job, .uid = (uint32_t)o->uid, .exclusive = o->exclusive,
                           .self = (long)getpid() };
    tbm_err_t err = { { 0 } };
    char why[TBM_ERR_MAX];
    int ended;

    if (sweep_job(&ask, o->grace_s * 1000, &ended, why, sizeof(why), &err) < 0) {
        fprintf(stderr, "macnode cleanup: job %u: %s\n", ask.job, err.msg);
        return EXIT_FAIL;
    }
    printf("job %u: %d processes left outside its steps ended (%s)\n", ask.job, ended, why);
    return 0;
}

/* Through the agent. */
static int cleanup_there(cleanup_opts_t *o)
{
    tbm_msg_t req = { .type = TBM_MSG_CLEANUP, .job = (uint32_t)o->job, .job_uid = o->uid,
                      .exclusive = o->exclusive }, reply;
    tbm_err_t err = { { 0 } };
    int rc = client_open(&o->c, &err) == 0 && client_call(&o->c, &req, TBM_MSG_CLEANED, &reply, &err) == 0 ? 0 : -1;

    if (rc == 0) {
        printf("job %u: %d tasks ended", reply.job, reply.killed);
        if (reply.swept)
            printf(", and %d processes they left outside their groups", reply.swept);
        printf("\n");
        tbm_msg_free(&reply);
    } else {
        fprintf(stderr, "macnode cleanup: %s\n", err.msg);
    }
    client_close(&o->c);
    return rc < 0 ? EXIT_FAIL : 0;
}

int macnode_cleanup(int argc, char **argv)
{
    cleanup_opts_t o = { .c = { .fd = -1 }, .job = -1, .uid = -1, .grace_s = 10 };
    int rc = cleanup_options(argc, argv, &o);

    if (rc != 0)
        return rc > 0 ? 0 : EXIT_USAGE;
    return o.local ? cleanup_here(&o) : cleanup_there(&o);
}
