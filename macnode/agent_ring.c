/* agent_ring.c: the sample ring in the state folder (agent_metrics.h, lib/samplering.h): the sampler adds a
 * point per sample; a task's server reads the window of its task when the task ends. Root's file (0600), made
 * again when it is damaged or of another version. */
#include "config.h"
#include "agent_metrics.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void agent_metrics_path(const agent_conf_t *conf, char *buf, size_t len)
{
    snprintf(buf, len, "%s/metrics.prom", conf->state_dir);
}

static void ring_path(const agent_conf_t *conf, char *buf, size_t len)
{
    snprintf(buf, len, "%s/samples.ring", conf->state_dir);
}

/* A new empty ring in fd. */
static int ring_reset(int fd, tbm_ring_header_t *h)
{
    tbm_ring_header_init(h, TBM_RING_POINTS);
    if (ftruncate(fd, 0) < 0 || ftruncate(fd, (off_t)tbm_ring_bytes(TBM_RING_POINTS)) < 0 ||
        pwrite(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h))
        return -1;
    return 0;
}

int agent_ring_append(const agent_conf_t *conf, const tbm_ring_point_t *p, tbm_err_t *err)
{
    char path[1024];
    tbm_ring_header_t h;
    struct stat st;
    int fd, rc = -1;

    ring_path(conf, path, sizeof(path));
    fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return tbm_errprintf(err, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        tbm_errprintf(err, "%s: not a file of the agent's alone; remove it", path);
        goto out;
    }
    if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || tbm_ring_header_check(&h, (size_t)st.st_size, NULL) < 0 ||
        h.cap != TBM_RING_POINTS) {
        if (ring_reset(fd, &h) < 0) {
            tbm_errprintf(err, "%s: cannot make the ring: %s", path, strerror(errno));
            goto out;
        }
    }
    if (pwrite(fd, p, sizeof(*p), (off_t)tbm_ring_next_offset(&h)) != (ssize_t)sizeof(*p)) {
        tbm_errprintf(err, "%s: cannot write: %s", path, strerror(errno));
        goto out;
    }
    h.count++;
    if (pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
        tbm_errprintf(err, "%s: cannot write: %s", path, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    close(fd);
    return rc;
}

int agent_ring_window(const agent_conf_t *conf, double from, double to, tbm_task_gpu_t *out, tbm_err_t *err)
{
    char path[1024];
    size_t len = 0;
    char *buf;
    int rc;

    memset(out, 0, sizeof(*out));
    ring_path(conf, path, sizeof(path));
    if (!(buf = tbm_read_file_owned(path, tbm_ring_bytes(TBM_RING_POINTS), geteuid(), &len, err)))
        return -1;
    if ((rc = tbm_ring_check(buf, len, err)) == 0)
        tbm_ring_window(buf, len, from, to, 3.0 * conf->metrics_interval_s + 5, out);
    free(buf);
    return rc;
}
