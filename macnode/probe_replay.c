/* probe_replay.c: the probe backend of the embedded lab: reads the macOS outputs recorded for a simulated
 * Mac (tbmlab-gen writes them) instead of running the commands. */
#include "config.h"
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void probe_capture_free(probe_capture_t *cap)
{
    size_t i;

    for (i = 0; i < sizeof(cap->bufs) / sizeof(cap->bufs[0]); i++)
        free(cap->bufs[i]);
    memset(cap, 0, sizeof(*cap));
}

static char *read_all(int fd, const char *path, size_t max, size_t *len, tbm_err_t *err)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1), *grown;
    ssize_t got;

    if (!buf)
        return tbm_errprintf(err, "%s: out of memory", path), NULL;
    for (;;) {
        if (n == cap) {
            if (cap > max) {
                free(buf);
                tbm_errprintf(err, "%s: larger than %zu bytes; this is not a command output the probe reads",
                              path, max);
                return NULL;
            }
            cap *= 2;
            grown = realloc(buf, cap + 1);
            if (!grown)
                return free(buf), tbm_errprintf(err, "%s: out of memory", path), NULL;
            buf = grown;
        }
        got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            tbm_errprintf(err, "%s: cannot read: %s", path, strerror(errno));
            return free(buf), NULL;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    if (n > max) {
        tbm_errprintf(err, "%s: larger than %zu bytes; this is not a command output the probe reads", path, max);
        return free(buf), NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

char *probe_read_file(const char *path, size_t max, size_t *len, tbm_err_t *err)
{
    struct stat st;
    char *buf;
    int fd, saved;

    fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        saved = errno;
        if (saved == ELOOP)
            tbm_errprintf(err, "%s: is a symbolic link; the probe reads only regular files (replace the link "
                          "with the file)", path);
        else
            tbm_errprintf(err, "%s: cannot open: %s", path, strerror(saved));
        errno = saved;
        return NULL;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        tbm_errprintf(err, "%s: not a regular file; the probe reads only regular files", path);
        errno = EINVAL;
        return NULL;
    }
    buf = read_all(fd, path, max, len, err);
    close(fd);
    if (!buf)
        errno = EINVAL;
    return buf;
}

int probe_replay_capture(const char *dir, probe_capture_t *cap, tbm_err_t *err)
{
    char path[4096];
    size_t i, len;
    tbm_raw_t *slot;
    struct stat st;

    memset(cap, 0, sizeof(*cap));
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return tbm_errprintf(err, "%s: no such folder of recorded outputs; give the folder that holds %s",
                             dir, tbm_raw_sources[0].file);
    for (i = 0; i < tbm_raw_nsources; i++) {
        if (snprintf(path, sizeof(path), "%s/%s", dir, tbm_raw_sources[i].file) >= (int)sizeof(path))
            return probe_capture_free(cap), tbm_errprintf(err, "%s: replay folder name too long", dir);
        cap->bufs[i] = probe_read_file(path, TBM_RAW_MAX, &len, err);
        if (!cap->bufs[i]) {
            if (errno == ENOENT) {
                tbm_errclear(err);
                continue;
            }
            probe_capture_free(cap);
            return -1;
        }
        slot = tbm_raw_slot(&cap->raw, i);
        slot->data = cap->bufs[i];
        slot->len = len;
    }
    return 0;
}
