/* spank_submit.c: spank_tbmesh on the submit side (srun, salloc, sbatch): registers --mlx-backend, checks it
 * at once with a clear message, and passes it to job_submit/tbmesh and the nodes in the job control env. */
#include "config.h"
#include "spank_submit.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbmesh.h"

static char backend[16];

static int backend_cb(int val, const char *optarg, int remote)
{
    tbm_backend_t b;
    tbm_err_t err;

    (void)val;
    if (tbm_backend_parse(optarg, &b, &err) < 0) {
        if (!remote)
            slurm_error("tbmesh: --mlx-backend=%s", err.msg);
        return -1;
    }
    snprintf(backend, sizeof(backend), "%s", tbm_backend_name(b));
    return 0;
}

static struct spank_option options[] = {
    { "mlx-backend", "auto|jaccl|jaccl-ring|ring|mpi",
      "MLX distributed backend for a --gres=tbmesh job: jaccl (RDMA mesh), jaccl-ring (RDMA ring), ring "
      "(TCP over Thunderbolt), mpi (Open MPI), auto (the best the group can do; default)",
      1, 0, backend_cb },
    SPANK_OPTIONS_TABLE_END
};

int tbm_spank_submit_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (spank_option_register(sp, &options[0]) != ESPANK_SUCCESS) {
        slurm_error("tbmesh: cannot register --mlx-backend");
        return -1;
    }
    return 0;
}

/* Does this srun's own command line ask for --gres=tbmesh? (Linux: /proc/self/cmdline.) */
static int srun_asks_for_macs(void)
{
    char buf[65536], *p, *end;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC), prev_gres = 0;
    ssize_t n;

    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    for (p = buf, end = buf + n; p < end; p += strlen(p) + 1) {
        if (!strcmp(p, "--"))
            break;
        if ((prev_gres || !strncmp(p, "--gres=", 7)) && strstr(p, "tbmesh"))
            return 1;
        prev_gres = !strcmp(p, "--gres");
    }
    return 0;
}

int tbm_spank_submit_post_opt(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    /* srun outside an allocation would ask its step for N tbmesh units on every node (the job has one per
     * node once job_submit/tbmesh has placed it): say so now instead of failing after the allocation. */
    if (spank_context() == S_CTX_LOCAL && !getenv("SLURM_JOB_ID") && srun_asks_for_macs()) {
        slurm_error("tbmesh: srun --gres=tbmesh:N cannot allocate the Macs and start its step in one go: "
                    "use `salloc --gres=tbmesh:N srun CMD`, or sbatch with srun inside the script");
        return -1;
    }
    if (!backend[0])
        return 0;
    if (spank_job_control_setenv(sp, TBM_MLX_BACKEND_ENV, backend, 1) != ESPANK_SUCCESS) {
        slurm_error("tbmesh: cannot pass --mlx-backend to the controller");
        return -1;
    }
    return 0;
}

int tbm_spank_backend(char *buf, size_t len)
{
    if (!backend[0])
        return 0;
    snprintf(buf, len, "%s", backend);
    return 1;
}
