/* tbmesh.c: the admin's command: `tbmesh inventory`, accept, metrics, repro and report. */
#include "config.h"
#include "accept_main.h"
#include "inventory.h"
#include "metrics_main.h"
#include "report_main.h"
#include "repro.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: tbmesh COMMAND [ARGS]\n"
                 "  accept      the staged acceptance run of a Mac group through Slurm, and its decision record\n"
                 "  inventory   the lab's Thunderbolt groups from the Macs' facts; tbmesh.conf and Slurm lines\n"
                 "  metrics     what Slurm knows of the Macs, for Prometheus (serves /metrics, or --once)\n"
                 "  report      usage of Macs and Linux nodes from Slurm's accounting\n"
                 "  repro       reproducibility records of Mac jobs: show, diff, verify, export, rerun, sync\n"
                 "Run `tbmesh COMMAND --help` for its options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
        return usage(stdout), 0;
    if (!strcmp(argv[1], "accept"))
        return accept_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "metrics"))
        return metrics_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "inventory"))
        return inventory_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "report"))
        return report_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "repro"))
        return repro_main(argc - 1, argv + 1);
    fprintf(stderr, "tbmesh: unknown command '%s'; see tbmesh --help\n", argv[1]);
    return 2;
}
