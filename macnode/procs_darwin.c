/* procs_darwin.c: the process table on macOS: one sysctl (CTL_KERN, KERN_PROC, KERN_PROC_ALL) gives every
 * process's pid, parent, real and effective uids and name (procs.h). Built on macOS only; the embedded lab
 * runs procs_linux.c. */
#include "config.h"
#include "procs.h"

#ifdef __APPLE__
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/proc.h>
#include <sys/sysctl.h>
#include <sys/types.h>

static void from_kinfo(const struct kinfo_proc *k, tbm_proc_t *p)
{
    uid_t real = k->kp_eproc.e_pcred.p_ruid, eff = k->kp_eproc.e_ucred.cr_uid;

    p->pid = k->kp_proc.p_pid;
    p->ppid = k->kp_eproc.e_ppid;
    p->uid = real == eff ? (uint32_t)real : TBM_PROC_UID_MIXED;
    p->ruid = (uint32_t)real;
    p->stepd = strncmp(k->kp_proc.p_comm, "slurmstepd", sizeof(k->kp_proc.p_comm)) == 0;
}

int procs_read(tbm_proc_t **out, size_t *n, tbm_err_t *err)
{
    int mib[4] = { CTL_KERN, KERN_PROC, KERN_PROC_ALL, 0 }, tries;
    struct kinfo_proc *k = NULL;
    size_t len = 0, i;

    *out = NULL, *n = 0;
    for (tries = 0; tries < 5; tries++) {   /* the table may grow between the size asked and the read */
        if (sysctl(mib, 3, NULL, &len, NULL, 0) < 0)
            break;
        len += len / 8 + 16 * sizeof(*k);
        free(k);
        if (!(k = malloc(len)))
            return tbm_errprintf(err, "out of memory for the process table");
        if (sysctl(mib, 3, k, &len, NULL, 0) == 0)
            break;
        if (errno != ENOMEM)
            tries = 5;
    }
    if (tries >= 5 || !k) {
        free(k);
        return tbm_errprintf(err, "cannot read the process table (sysctl KERN_PROC_ALL): %s", strerror(errno));
    }
    if (!(*out = calloc(len / sizeof(*k) + 1, sizeof(**out)))) {
        free(k);
        return tbm_errprintf(err, "out of memory for the process table");
    }
    for (i = 0; i < len / sizeof(*k); i++)
        if (k[i].kp_proc.p_stat != SZOMB)   /* a zombie has ended: its parent reaps it */
            from_kinfo(&k[i], &(*out)[(*n)++]);
    free(k);
    return 0;
}

int procs_signal(const tbm_proc_t *p, int sig)
{
    int mib[4] = { CTL_KERN, KERN_PROC, KERN_PROC_PID, (int)p->pid };
    struct kinfo_proc k;
    size_t len = sizeof(k);
    tbm_proc_t now;

    /* no pidfd on macOS: the process is looked at again right before the signal */
    if (sysctl(mib, 4, &k, &len, NULL, 0) < 0 || len != sizeof(k))
        return -1;
    from_kinfo(&k, &now);
    return now.pid == p->pid && now.uid == p->uid ? kill((pid_t)p->pid, sig) : -1;
}
#endif
