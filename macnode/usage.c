/* usage.c: `macnode usage` (see usage.h): what a step's tasks used on a Mac, as its agent measured them;
 * root only, for the reproducibility record's step end on the bridge host. */
#include "config.h"
#include "usage.h"
#include "client.h"
#include "scalar.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#define EXIT_FAIL  1
#define EXIT_USAGE 2

static void usage_usage(FILE *out)
{
    fprintf(out,
            "usage: macnode usage [--agent ADDR[:PORT]] [--node NAME] [--munge-socket PATH] --job J --step S\n"
            "  Print what step S of job J used on the Mac, one JSON object: {\"job\",\"step\",\"running\" (its\n"
            "  tasks not ended yet), \"tasks\": [{\"task\" (SLURM_PROCID, -1 unknown), \"pid\", \"status\",\n"
            "  \"signal\", \"core\", \"rusage\": {\"utime_us\", \"stime_us\", \"maxrss_kb\", \"wall_us\", and\n"
            "  the Mac's GPU and energy meanwhile: \"gpu_samples\", \"gpu_mean\", \"gpu_peak\" or \"gpu_why\";\n"
            "  \"power_samples\", \"energy_j\" or \"energy_why\"}}]}, as the agent measured each task (wait4,\n"
            "  its own clock, its sampler); kept until the job's cleanup. Root only.\n"
            "  The agent and munged's socket default to $TBMESH_AGENT and $TBMESH_MUNGE_SOCKET; the agent proves\n"
            "  itself first as --node's (default: the Mac tbmesh.conf puts at that address).\n");
}

static int id_arg(const char *s, long long *out)
{
    return tbm_parse_ll(s, 10, 0, UINT32_MAX, out) < 0 ? (*out = -2, -1) : 0;
}

static void print_used(const tbm_msg_t *m)
{
    json_object *o = json_object_new_object(), *a = json_object_new_array();
    size_t i;

    json_object_object_add(o, "job", json_object_new_int64(m->job));
    json_object_object_add(o, "step", json_object_new_int64(m->step));
    json_object_object_add(o, "running", json_object_new_int(m->running));
    for (i = 0; i < m->n_tasks; i++)
        json_object_array_add(a, tbm_task_usage_json(&m->tasks[i]));
    json_object_object_add(o, "tasks", a);
    printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
}

int macnode_usage(int argc, char **argv)
{
    static const struct option opts[] = {
        { "agent", required_argument, NULL, 'a' }, { "job", required_argument, NULL, 'j' },
        { "step", required_argument, NULL, 's' }, { "munge-socket", required_argument, NULL, 'm' },
        { "node", required_argument, NULL, 'n' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
    };
    client_t c = { .fd = -1 };
    tbm_msg_t req = { .type = TBM_MSG_USAGE }, reply;
    tbm_err_t err = { { 0 } };
    long long job = -1, step = -1;
    int o, rc;

    while ((o = getopt_long(argc, argv, "a:j:s:m:n:h", opts, NULL)) != -1) {
        switch (o) {
        case 'a': c.agent = optarg; break;
        case 'n': c.want = optarg; break;
        case 'm': c.socket = optarg; break;
        case 'j': id_arg(optarg, &job); break;
        case 's': id_arg(optarg, &step); break;
        case 'h': usage_usage(stdout); return 0;
        default: usage_usage(stderr); return EXIT_USAGE;
        }
    }
    if (job < 0 || step < 0 || optind < argc) {
        fprintf(stderr, "macnode usage: --job J and --step S (numbers from 0 to 4294967295) are needed, and "
                "nothing else\n");
        return EXIT_USAGE;
    }
    if (client_defaults(&c, "usage") < 0)
        return EXIT_USAGE;
    req.job = (uint32_t)job;
    req.step = (uint32_t)step;
    rc = client_ask(&c, &req, TBM_MSG_USED, &reply, &err);
    if (rc == 0) {
        print_used(&reply);
        tbm_msg_free(&reply);
    } else {
        fprintf(stderr, "macnode usage: %s\n", err.msg);
    }
    client_close(&c);
    return rc < 0 ? EXIT_FAIL : 0;
}
