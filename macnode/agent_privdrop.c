/* agent_privdrop.c: giving up root for a task's user (see agent_privdrop.h). */
#include "config.h"
#include "agent_privdrop.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int agent_become_user(uid_t uid, gid_t gid, tbm_err_t *err)
{
    struct passwd *pw = getpwuid(uid);

    if (!pw)
        return tbm_errprintf(err, "uid %u has no account on this node; create the user on the Mac with the "
                             "same uid as on the bridge", (unsigned)uid);
    if (initgroups(pw->pw_name, (int)gid) < 0 && geteuid() == 0)
        return tbm_errprintf(err, "initgroups(%s): %s", pw->pw_name, strerror(errno));
    if (setgid(gid) < 0 || setuid(uid) < 0)
        return tbm_errprintf(err, "cannot become uid %u gid %u: %s", (unsigned)uid, (unsigned)gid,
                             strerror(errno));
    if (uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
        return tbm_errprintf(err, "could regain root after becoming uid %u; refusing", (unsigned)uid);
    return 0;
}

int agent_as_user(uid_t uid, gid_t gid, int (*fn)(void *arg, tbm_err_t *err), void *arg, tbm_err_t *err)
{
    int p[2], status = 0;
    pid_t pid;
    ssize_t n;
    char buf[TBM_ERR_MAX];

    if (pipe(p) < 0)
        return tbm_errprintf(err, "pipe: %s", strerror(errno));
    pid = fork();
    if (pid < 0) {
        close(p[0]), close(p[1]);
        return tbm_errprintf(err, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        tbm_err_t e = { { 0 } };
        int rc;

        close(p[0]);
        rc = agent_become_user(uid, gid, &e) < 0 ? -1 : fn(arg, &e);
        if (rc < 0 && write(p[1], e.msg, strlen(e.msg)) < 0)
            _exit(2);
        _exit(rc < 0 ? 1 : 0);
    }
    close(p[1]);
    do
        n = read(p[0], buf, sizeof(buf) - 1);
    while (n < 0 && errno == EINTR);
    buf[n > 0 ? n : 0] = '\0';
    close(p[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    return buf[0] ? tbm_errprintf(err, "%s", buf)
                  : tbm_errprintf(err, "the helper running as uid %u failed", (unsigned)uid);
}
