/* agent_privdrop.c: giving up root for a task's user (see agent_privdrop.h). */
#include "config.h"
#include "agent_privdrop.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int agent_user_lookup(uid_t uid, gid_t gid, agent_user_t *u, tbm_err_t *err)
{
    struct passwd *pw;
    long max = sysconf(_SC_NGROUPS_MAX);
    int n = AGENT_GROUPS_MAX;
#ifdef __APPLE__
    int list[AGENT_GROUPS_MAX], i;   /* macOS's getgrouplist speaks int */
#endif

    memset(u, 0, sizeof(*u));
    u->uid = uid;
    u->gid = gid;
    if (!(pw = getpwuid(uid))) {
        snprintf(u->why, sizeof(u->why), "uid %u has no account on this node; create the user on the Mac with the "
                 "same uid as on the bridge", (unsigned)uid);
        return tbm_errprintf(err, "%s", u->why);
    }
    snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
#ifdef __APPLE__
    if (getgrouplist(u->name, (int)gid, list, &n) < 0)
        n = -1;
    for (i = 0; i < n; i++)
        u->groups[i] = (gid_t)list[i];
#else
    if (getgrouplist(u->name, gid, u->groups, &n) < 0)
        n = -1;
#endif
    if (n > max && max > 0)
        n = -1;   /* more than setgroups takes: initgroups chooses, as it always did */
    u->ngroups = n;
    return 0;
}

int agent_become(const agent_user_t *u, tbm_err_t *err)
{
    int rc;

    if (u->why[0])
        return tbm_errprintf(err, "%s", u->why);
    rc = u->ngroups >= 0 ? setgroups(u->ngroups, u->groups) : initgroups(u->name, (int)u->gid);
    if (rc < 0 && geteuid() == 0)
        return tbm_errprintf(err, "cannot give %s its groups: %s", u->name, strerror(errno));
    if (setgid(u->gid) < 0 || setuid(u->uid) < 0)
        return tbm_errprintf(err, "cannot become uid %u gid %u: %s", (unsigned)u->uid, (unsigned)u->gid,
                             strerror(errno));
    if (u->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
        return tbm_errprintf(err, "could regain root after becoming uid %u; refusing", (unsigned)u->uid);
    return 0;
}

int agent_become_user(uid_t uid, gid_t gid, tbm_err_t *err)
{
    agent_user_t u;

    if (agent_user_lookup(uid, gid, &u, err) < 0)
        return -1;
    return agent_become(&u, err);
}

/* fn(arg) in a child as the user: u when looked up already, else uid and gid looked up in the child. */
static int run_as(const agent_user_t *u, uid_t uid, gid_t gid, int (*fn)(void *arg, tbm_err_t *err), void *arg,
                  tbm_err_t *err)
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
        rc = (u ? agent_become(u, &e) : agent_become_user(uid, gid, &e)) < 0 ? -1 : fn(arg, &e);
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

int agent_as(const agent_user_t *u, int (*fn)(void *arg, tbm_err_t *err), void *arg, tbm_err_t *err)
{
    return run_as(u, u->uid, u->gid, fn, arg, err);
}

int agent_as_user(uid_t uid, gid_t gid, int (*fn)(void *arg, tbm_err_t *err), void *arg, tbm_err_t *err)
{
    return run_as(NULL, uid, gid, fn, arg, err);
}
