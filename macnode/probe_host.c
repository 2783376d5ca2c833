/* probe_host.c: pick the probe backend and run it (see probe_host.h). */
#include "config.h"
#include "probe_host.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *probe_default_backend(void)
{
#ifdef __APPLE__
    return "darwin";
#else
    return "linux";
#endif
}

/* Capture and parse the macOS outputs (darwin or replay backend). */
static int probe_macos(const char *backend, const char *dir, int timeout_ms, const char *name, tbm_host_facts_t *f,
                       tbm_findings_t *fs, tbm_err_t *err)
{
    probe_capture_t cap;
    char me[TBM_HOST_MAX] = "";
    int rc = strcmp(backend, "replay") == 0 ? probe_replay_capture(dir, &cap, err)
                                            : probe_darwin_capture(timeout_ms, &cap, err);

    if (rc < 0)
        return -1;
    if (!name && gethostname(me, sizeof(me) - 1) == 0)
        name = me;
    cap.raw.hostname = name;   /* the findings name the ports as "host:en2", as the inventory does */
    if (tbm_erris(err))
        tbm_finding_add(fs, TBM_SEV_WARNING, "command-failed", NULL, "run the command by hand to see why",
                        "%s", err->msg);
    tbm_errclear(err);
    tbm_facts_parse_all(&cap.raw, f, fs);
    probe_capture_free(&cap);
    return 0;
}

int probe_host(const char *backend, const char *dir, int timeout_ms, const char *name, tbm_host_facts_t *f,
               tbm_findings_t *fs, tbm_err_t *err)
{
    int rc;

    if (!backend)
        backend = probe_default_backend();
    rc = !strcmp(backend, "linux") ? probe_linux_facts(f, fs, err)
                                   : probe_macos(backend, dir, timeout_ms, name, f, fs, err);
    if (rc == 0 && name)
        snprintf(f->hostname, sizeof(f->hostname), "%s", name);
    if (rc == 0 && !f->hostname[0])
        gethostname(f->hostname, sizeof(f->hostname) - 1);
    return rc;
}
