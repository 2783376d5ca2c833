/* run.c: run a command without a shell, with a time limit, and capture its bounded stdout (see run.h). */
#include "config.h"
#include "run.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The first executable `name` in the PATH-style list `path` (a name with a '/' is taken as it is). */
static int find_in_path(const char *name, const char *path, char *full, size_t len)
{
    const char *p = path, *colon;
    int n;

    if (strchr(name, '/'))
        return snprintf(full, len, "%s", name) < (int)len ? 0 : -1;
    while (*p) {
        colon = strchr(p, ':');
        n = colon ? (int)(colon - p) : (int)strlen(p);
        if (n > 0 && snprintf(full, len, "%.*s/%s", n, p, name) < (int)len && access(full, X_OK) == 0)
            return 0;
        p += n + (colon ? 1 : 0);
    }
    return -1;
}

static int spawn_child(const char *const *argv, const char *path, int outfd, pid_t *pid, tbm_err_t *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    char pathvar[1024], full[1024];
    char *envp[] = { pathvar, "LC_ALL=C", NULL };
    int rc;

    snprintf(pathvar, sizeof(pathvar), "PATH=%s", path);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, outfd, 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    rc = find_in_path(argv[0], path, full, sizeof(full)) < 0 ? ENOENT
         : posix_spawn(pid, full, &fa, &attr, (char *const *)argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0)
        return tbm_errprintf(err, "%s: cannot run: %s (looked in %s)", argv[0], strerror(rc), path);
    return 0;
}

/* Read what the child writes until EOF, the deadline or the size limit. Returns 0 at EOF, 1 on timeout,
 * 2 when too large, -1 on a read error. */
static int collect(int fd, long long deadline, size_t max, char **buf, size_t *n)
{
    size_t cap = 0;
    struct pollfd pfd = { .fd = fd, .events = POLLIN };
    ssize_t got;
    char *grown;
    int left;

    for (;;) {
        left = (int)(deadline - tbm_now_ms());
        if (left <= 0)
            return 1;
        if (poll(&pfd, 1, left) < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (pfd.revents == 0)
            continue;
        if (*n == cap) {
            if (cap > max)
                return 2;
            cap = cap ? cap * 2 : 8192;
            grown = realloc(*buf, cap + 1);
            if (!grown)
                return -1;
            *buf = grown;
        }
        got = read(fd, *buf + *n, cap - *n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            return *n > max ? 2 : 0;
        *n += (size_t)got;
    }
}

int run_capture(const char *const *argv, const char *path, int timeout_ms, size_t max, char **out, size_t *len,
                tbm_err_t *err)
{
    int fds[2], status = 0, rc;
    char *buf = NULL;
    size_t n = 0;
    pid_t pid;

    *out = NULL;
    *len = 0;
    if (pipe(fds) < 0)
        return tbm_errprintf(err, "%s: cannot make a pipe: %s", argv[0], strerror(errno));
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    if (spawn_child(argv, path, fds[1], &pid, err) < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    close(fds[1]);
    rc = collect(fds[0], tbm_now_ms() + timeout_ms, max, &buf, &n);
    close(fds[0]);
    if (rc != 0)
        kill(-pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc != 0) {
        free(buf);
        if (rc == 1)
            return tbm_errprintf(err, "%s: no answer within %d ms; killed (is the host overloaded or the "
                                 "command hung?)", argv[0], timeout_ms);
        if (rc == 2)
            return tbm_errprintf(err, "%s: printed more than %zu bytes; not an output the probe reads",
                                 argv[0], max);
        return tbm_errprintf(err, "%s: cannot read its output: %s", argv[0], strerror(errno));
    }
    if (WIFSIGNALED(status)) {
        free(buf);
        return tbm_errprintf(err, "%s: killed by signal %d", argv[0], WTERMSIG(status));
    }
    if (!buf && !(buf = malloc(1)))
        return tbm_errprintf(err, "%s: out of memory", argv[0]);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return WEXITSTATUS(status);
}
