/* cleanup.c: `macnode cleanup` (see cleanup.h): end job J's tasks on a Mac and remove its folder, through the
 * Mac's agent; root only, for the epilog. */
#include "config.h"
#include "cleanup.h"
#include "client.h"
#include "scalar.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#define EXIT_FAIL  1
#define EXIT_USAGE 2

static void cleanup_usage(FILE *out)
{
    fprintf(out,
            "usage: macnode cleanup [--agent ADDR[:PORT]] [--munge-socket PATH] --job J\n"
            "  End job J's tasks on the Mac (SIGTERM, SIGKILL after the agent's grace) and remove its folder;\n"
            "  prints how many tasks were ended. Root only. The agent and munged's socket default to\n"
            "  $TBMESH_AGENT and $TBMESH_MUNGE_SOCKET, as for macnode exec.\n");
}

int macnode_cleanup(int argc, char **argv)
{
    static const struct option opts[] = {
        { "agent", required_argument, NULL, 'a' }, { "job", required_argument, NULL, 'j' },
        { "munge-socket", required_argument, NULL, 'm' }, { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    client_t c = { .fd = -1 };
    tbm_msg_t req = { .type = TBM_MSG_CLEANUP }, reply;
    tbm_err_t err = { { 0 } };
    long long job = -1;
    int o, rc;

    while ((o = getopt_long(argc, argv, "a:j:m:h", opts, NULL)) != -1) {
        switch (o) {
        case 'a': c.agent = optarg; break;
        case 'm': c.socket = optarg; break;
        case 'j':
            if (tbm_parse_ll(optarg, 10, 0, UINT32_MAX, &job) < 0)
                job = -2;
            break;
        case 'h': cleanup_usage(stdout); return 0;
        default: cleanup_usage(stderr); return EXIT_USAGE;
        }
    }
    if (job < 0 || optind < argc) {
        fprintf(stderr, "macnode cleanup: --job J (a job id) is needed, and nothing else\n");
        return EXIT_USAGE;
    }
    if (client_defaults(&c, "cleanup") < 0)
        return EXIT_USAGE;
    req.job = (uint32_t)job;
    rc = client_open(&c, &err) == 0 && client_call(&c, &req, TBM_MSG_CLEANED, &reply, &err) == 0 ? 0 : -1;
    if (rc == 0) {
        printf("job %u: %d tasks ended\n", reply.job, reply.killed);
        tbm_msg_free(&reply);
    } else {
        fprintf(stderr, "macnode cleanup: %s\n", err.msg);
    }
    client_close(&c);
    return rc < 0 ? EXIT_FAIL : 0;
}
