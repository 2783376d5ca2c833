/* probe_darwin.c: the macOS probe backend: runs system_profiler, networksetup, ifconfig, ibv_devices,
 * rdma_ctl, sw_vers and sysctl (argv from tbm_raw_sources, no shell, a time limit each, no retries) and
 * keeps their raw outputs for lib/ to parse. The only place where slurm-tbmesh runs a macOS command.
 * Portable C: the tests run it on Linux against stand-in commands printing captured outputs. */
#include "config.h"
#include "probe.h"
#include "run.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DARWIN_PATH "/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/bin:/opt/homebrew/bin"

int probe_darwin_capture(int timeout_ms, probe_capture_t *cap, tbm_err_t *err)
{
    const char *path = getenv("TBMESH_PROBE_PATH");
    tbm_err_t one;
    tbm_raw_t *slot;
    size_t i, len;
    int rc;

    memset(cap, 0, sizeof(*cap));
    if (!path || !*path)
        path = DARWIN_PATH;
    for (i = 0; i < tbm_raw_nsources; i++) {
        tbm_errclear(&one);
        rc = run_capture(tbm_raw_sources[i].argv, path, timeout_ms, TBM_RAW_MAX, &cap->bufs[i], &len, &one);
        if (rc != 0) {
            /* A command that fails leaves its slot empty: the parsers report the missing output, and
             * the first failure is kept in err for the caller to show. */
            if (rc > 0)
                tbm_errprintf(&one, "%s exited with status %d", tbm_raw_sources[i].argv[0], rc);
            if (!tbm_erris(err))
                tbm_errprintf(err, "%s", one.msg);
            free(cap->bufs[i]);
            cap->bufs[i] = NULL;
            continue;
        }
        slot = tbm_raw_slot(&cap->raw, i);
        slot->data = cap->bufs[i];
        slot->len = len;
    }
    return 0;
}

int probe_darwin_apply(const char *script, tbm_err_t *err)
{
#ifdef __APPLE__
    const char *argv[] = { "/bin/sh", "-e", "-c", script, NULL };
    char *out = NULL;
    size_t len;
    int rc;

    if (geteuid() != 0)
        return tbm_errprintf(err, "--apply changes network interfaces: run it as root (sudo)"), 3;
    rc = run_capture(argv, DARWIN_PATH, 60000, 1 << 20, &out, &len, err);
    free(out);
    if (rc > 0)
        tbm_errprintf(err, "the netplan commands failed (exit %d); run them by hand to see which", rc);
    return rc == 0 ? 0 : 3;
#else
    (void)script;
    tbm_errprintf(err, "--apply changes a Mac's Thunderbolt interfaces with macOS commands: run it on the Mac "
                  "(this host is not macOS); without --apply the plan is only printed");
    return 3;
#endif
}
