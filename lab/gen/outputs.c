/* outputs.c: the recorded macOS outputs of every simulated Mac, one folder each (DIR/NODE/replay/). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "labgen.h"

static const struct {
    const char *file;
    void (*write)(const lab_t *, int, FILE *);
} replay_files[] = {
    { "system_profiler_SPThunderboltDataType.json", lab_write_thunderbolt },
    { "networksetup_listallhardwareports.txt", lab_write_hardware_ports },
    { "ifconfig.txt", lab_write_ifconfig },
    { "ibv_devices.txt", lab_write_ibv_devices },
    { "rdma_ctl_status.txt", lab_write_rdma_ctl },
    { "sw_vers.txt", lab_write_sw_vers },
    { "sysctl.txt", lab_write_sysctl },
    { "sysctl_perflevels.txt", lab_write_perflevels },
    { "hostname.txt", lab_write_hostname },
    { "ioreg.txt", lab_write_ioreg },
    { "powermetrics.plist", lab_write_powermetrics },
};

static int make_dir(const char *path)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST)
        return 0;
    fprintf(stderr, "tbmlab-gen: cannot create %s: %s; check the output directory\n", path, strerror(errno));
    return -1;
}

static int write_node_files(const lab_t *lab, int mac, const char *dir)
{
    char path[4096];
    for (size_t i = 0; i < sizeof(replay_files) / sizeof(replay_files[0]); i++) {
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, replay_files[i].file) >= sizeof(path))
            return -1;  /* cannot happen: main bounds the directory's length */
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!f) {
            int saved = errno;
            if (fd >= 0)
                close(fd);
            fprintf(stderr, "tbmlab-gen: cannot write %s: %s; check the output directory\n", path, strerror(saved));
            return -1;
        }
        replay_files[i].write(lab, mac, f);
        if (fclose(f) != 0) {
            fprintf(stderr, "tbmlab-gen: writing %s failed: %s; check free space\n", path, strerror(errno));
            return -1;
        }
    }
    return 0;
}

int lab_write_outputs(const lab_t *lab, const char *outdir)
{
    char dir[4096];
    if (make_dir(outdir) < 0)
        return -1;
    for (int i = 0; i < lab->nmacs; i++) {
        snprintf(dir, sizeof(dir), "%.*s/%s", LAB_DIR_MAX, outdir, lab->macs[i].name);
        if (make_dir(dir) < 0)
            return -1;
        snprintf(dir, sizeof(dir), "%.*s/%s/replay", LAB_DIR_MAX, outdir, lab->macs[i].name);
        if (make_dir(dir) < 0 || write_node_files(lab, i, dir) < 0)
            return -1;
    }
    return 0;
}

