/* procs_linux.c: the process table on Linux (the embedded lab's simulated Macs): /proc/PID/stat for the
 * parent and the command's name, /proc/PID/status for the uids, /proc/PID/ns/net for the Mac (procs.h). */
#include "config.h"
#include "procs.h"

#ifdef __linux__
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fileio.h"

/* The uid of /proc/PID/status when its real and effective uids agree, else TBM_PROC_UID_MIXED; -1 when the
 * process is gone. *ruid (if given): the real uid (TBM_PROC_UID_MIXED when unreadable). */
static long long status_uid(long pid, uint32_t *ruid)
{
    char path[64], *text, *line;
    unsigned long real, eff;
    size_t len;
    long long uid = -1;

    if (ruid)
        *ruid = TBM_PROC_UID_MIXED;
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    if (!(text = tbm_read_file(path, 16384, &len, NULL)))
        return -1;
    if ((line = strstr(text, "\nUid:")) && sscanf(line + 5, "%lu %lu", &real, &eff) == 2) {
        uid = real == eff && real < TBM_PROC_UID_MIXED ? (long long)real : TBM_PROC_UID_MIXED;
        if (ruid && real < TBM_PROC_UID_MIXED)
            *ruid = (uint32_t)real;
    }
    free(text);
    return uid;
}

/* Parent and name from /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold spaces and parentheses); -1
 * when the process is gone or only a zombie (it has ended: its parent reaps it). */
static int stat_of(long pid, long *ppid, int *stepd)
{
    char path[64], buf[1024], *open_paren, *close_paren;
    char state;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    open_paren = strchr(buf, '(');
    close_paren = strrchr(buf, ')');
    if (!open_paren || !close_paren || close_paren < open_paren ||
        sscanf(close_paren + 1, " %c %ld", &state, ppid) != 2 || state == 'Z' || state == 'X')
        return -1;
    *stepd = close_paren - open_paren - 1 == 10 && strncmp(open_paren + 1, "slurmstepd", 10) == 0;
    return 0;
}

/* Is pid in the network namespace `mine` (readlink of /proc/self/ns/net)? */
static int same_netns(long pid, const char *mine)
{
    char path[64], ns[64];
    ssize_t n;

    snprintf(path, sizeof(path), "/proc/%ld/ns/net", pid);
    n = readlink(path, ns, sizeof(ns) - 1);
    if (n <= 0)
        return 0;
    ns[n] = '\0';
    return strcmp(ns, mine) == 0;
}

static int grow(tbm_proc_t **t, size_t *cap, size_t n)
{
    tbm_proc_t *more;

    if (n < *cap)
        return 0;
    more = realloc(*t, (*cap ? *cap * 2 : 256) * sizeof(**t));
    if (!more)
        return -1;
    *t = more;
    *cap = *cap ? *cap * 2 : 256;
    return 0;
}

int procs_read(tbm_proc_t **out, size_t *n, tbm_err_t *err)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    char mine[64];
    ssize_t k = readlink("/proc/self/ns/net", mine, sizeof(mine) - 1);
    tbm_proc_t p, *t = NULL;
    size_t cap = 0;
    long long uid;

    *out = NULL, *n = 0;
    if (!d || k <= 0) {
        if (d)
            closedir(d);
        return tbm_errprintf(err, "cannot read the process table (/proc): %s", strerror(errno));
    }
    mine[k] = '\0';
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        memset(&p, 0, sizeof(p));
        p.pid = strtol(e->d_name, NULL, 10);
        if (stat_of(p.pid, &p.ppid, &p.stepd) < 0 || (uid = status_uid(p.pid, &p.ruid)) < 0 || !same_netns(p.pid, mine))
            continue;   /* gone meanwhile (or a zombie), or another (simulated) Mac's */
        p.uid = (uint32_t)uid;
        if (grow(&t, &cap, *n) < 0) {
            closedir(d), free(t);
            *n = 0;
            return tbm_errprintf(err, "out of memory for the process table");
        }
        t[(*n)++] = p;
    }
    closedir(d);
    *out = t;
    return 0;
}

int procs_signal(const tbm_proc_t *p, int sig)
{
    int rc = -1;
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
    int fd = (int)syscall(SYS_pidfd_open, (pid_t)p->pid, 0);

    if (fd >= 0) {
        /* the pidfd holds the process it was opened for: the uid read now is that process's, or the signal
         * finds it gone */
        if (status_uid(p->pid, NULL) == (long long)p->uid)
            rc = (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0) == 0 ? 0 : -1;
        close(fd);
        return rc;
    }
    if (errno != ENOSYS)
        return -1;
#endif
    if (status_uid(p->pid, NULL) == (long long)p->uid)
        rc = kill((pid_t)p->pid, sig);
    return rc;
}
#endif
