/* forge_tag.c: what any user can send slurmctld through libslurm: a batch job whose SPANK job environment
 * holds a variable of the user's choosing (sbatch offers no option for it; the API takes it). The lab's tests
 * use it to check that job_submit/tbmesh drops a tbmesh tag it did not give.
 * Usage: forge-tag PARTITION NODE NAME=VALUE OUTPUT [NAME=VALUE...]; prints the job id. The job prints its
 * kept tag. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tbm_slurm.h"

int main(int argc, char **argv)
{
    char *env[] = { "PATH=/usr/bin:/bin", NULL }, *spank[16], cwd[4096];
    submit_response_msg_t *resp = NULL;
    job_desc_msg_t d;

    int i, n = 0;

    if (argc < 5 || argc > 4 + 16) {
        fprintf(stderr, "usage: forge-tag PARTITION NODE NAME=VALUE OUTPUT [NAME=VALUE...] (at most 16)\n");
        return 2;
    }
    if (!getcwd(cwd, sizeof(cwd)))
        return 1;
    slurm_init_job_desc_msg(&d);
    d.name = "forge-tag";
    d.partition = argv[1];
    d.req_nodes = argv[2];
    d.min_nodes = 1;
    d.script = "#!/bin/sh\ncat /run/slurm-tbmesh/$SLURM_JOB_ID.tag\n";
    d.environment = env;
    d.env_size = 1;
    d.work_dir = cwd;
    d.std_out = argv[4];
    d.user_id = getuid();
    d.group_id = getgid();
    spank[n++] = argv[3];
    for (i = 5; i < argc; i++)
        spank[n++] = argv[i];
    d.spank_job_env = spank;
    d.spank_job_env_size = (uint32_t)n;
    if (slurm_submit_batch_job(&d, &resp) != SLURM_SUCCESS || !resp) {
        fprintf(stderr, "forge-tag: the job was refused: %s\n", tbm_slurm_errstr());
        return 1;
    }
    printf("%u\n", resp->job_id);
    slurm_free_submit_response_response_msg(resp);
    return 0;
}
