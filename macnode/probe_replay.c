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
        cap->bufs[i] = tbm_read_file(path, TBM_RAW_MAX, &len, err);
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
