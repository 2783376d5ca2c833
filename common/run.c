/* run.c: run a command without a shell, with a time limit and bounded output (see run.h). */
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
#include <unistd.h>

#define DRAIN_MS 1000   /* after the last kill, how long what is left in the pipes is still read */

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

static const char *search_path(const run_opts_t *o)
{
    const char *env = getenv("PATH");

    return o->path ? o->path : env && *env ? env : "/usr/bin:/bin";
}

/* The command's environment: o->env (or PATH and LC_ALL=C), with o->env_add on top. malloc'd array. */
static char **environment(const run_opts_t *o, char *pathvar)
{
    char *mini[] = { pathvar, "LC_ALL=C", NULL };
    char *const *base = o->env ? o->env : mini;
    size_t nb = 0, na = 0, n = 0, i, j, k;
    char **env;

    while (base[nb])
        nb++;
    while (o->env_add && o->env_add[na])
        na++;
    if (!(env = calloc(nb + na + 1, sizeof(*env))))
        return NULL;
    for (i = 0; i < nb; i++) {
        k = strcspn(base[i], "=");
        for (j = 0; j < na && strncmp(o->env_add[j], base[i], k + 1) != 0; j++)
            ;
        if (j == na)
            env[n++] = base[i];
    }
    for (j = 0; j < na; j++)
        env[n++] = (char *)o->env_add[j];
    return env;
}

static int cloexec_pipe(int fds[2])
{
    if (pipe(fds) < 0)
        return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
}

static void close_pair(int fds[2])
{
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
}

static int spawn(const char *const *argv, const run_opts_t *o, int out[2], int err[2], pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    char pathvar[1024], full[1024], **env;
    const char *path = search_path(o);
    int rc;

    snprintf(pathvar, sizeof(pathvar), "PATH=%s", path);
    if (find_in_path(argv[0], path, full, sizeof(full)) < 0)
        return ENOENT;
    if (!(env = environment(o, pathvar)))
        return ENOMEM;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    if (o->stderr_to == RUN_STDERR_CAPTURE)
        posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    else if (o->stderr_to == RUN_STDERR_NULL)
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    rc = posix_spawn(pid, full, &fa, &attr, (char *const *)argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    free(env);
    return rc;
}

int run_start(const char *const *argv, const run_opts_t *o, run_proc_t *p, tbm_err_t *err)
{
    int out[2] = { -1, -1 }, errp[2] = { -1, -1 }, rc;

    p->pid = -1;
    p->out = p->err = -1;
    snprintf(p->name, sizeof(p->name), "%s", argv[0]);
    if (cloexec_pipe(out) < 0 || (o->stderr_to == RUN_STDERR_CAPTURE && cloexec_pipe(errp) < 0)) {
        rc = errno;
        close_pair(out);
        return tbm_errprintf(err, "%s: cannot make a pipe: %s", argv[0], strerror(rc));
    }
    fflush(NULL);   /* what we printed is not printed again by the child's copy */
    rc = spawn(argv, o, out, errp, &p->pid);
    close(out[1]);
    if (errp[1] >= 0)
        close(errp[1]);
    if (rc != 0) {
        close(out[0]);
        if (errp[0] >= 0)
            close(errp[0]);
        p->pid = -1;
        return tbm_errprintf(err, "%s: cannot run: %s (looked in %s)", argv[0], strerror(rc), search_path(o));
    }
    p->out = out[0];
    p->err = errp[0];
    return 0;
}

/* One stream of the command's output, kept up to max bytes. */
typedef struct sink {
    int fd;
    char *buf;
    size_t len, cap;
    int over;   /* more came than max */
} sink_t;

/* Read what is there: 1 while the stream goes on, 0 at its end, -1 on a read error or no memory. */
static int sink_read(sink_t *s, size_t max)
{
    char chunk[65536], *grown;
    ssize_t n = read(s->fd, chunk, sizeof(chunk));
    size_t keep, want;

    if (n < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : -1;
    if (n == 0)
        return 0;
    keep = (size_t)n < max - s->len ? (size_t)n : max - s->len;
    s->over |= keep < (size_t)n;
    if (s->len + keep > s->cap) {
        for (want = s->cap ? s->cap : 8192; want < s->len + keep; want *= 2)
            ;
        want = want < max ? want : max;
        if (!(grown = realloc(s->buf, want + 1)))
            return -1;
        s->buf = grown;
        s->cap = want;
    }
    memcpy(s->buf + s->len, chunk, keep);
    s->len += keep;
    return 1;
}

/* Past the deadline: the next step of the kill (SIGTERM, SIGKILL, then stop reading). 0 to go on reading with
 * a new *deadline, 1 to stop. */
static int escalate(pid_t pid, const run_opts_t *o, int *stage, long long *deadline)
{
    long long now = tbm_now_ms();

    if (*stage == 0 && o->grace_ms > 0) {
        kill(-pid, SIGTERM);
        *deadline = now + o->grace_ms;
        *stage = 1;
        return 0;
    }
    if (*stage < 2) {
        kill(-pid, SIGKILL);
        *deadline = now + DRAIN_MS;
        *stage = 2;
        return 0;
    }
    return 1;
}

/* Read both streams until they end, the time limit or the bound. 0; 1 when timed out (killed); 2 when
 * refused for its size (killed); -1 on a read error. */
static int collect(run_proc_t *p, const run_opts_t *o, sink_t s[2])
{
    size_t max = o->max ? o->max : RUN_MAX;
    long long deadline = o->timeout_ms > 0 ? tbm_now_ms() + o->timeout_ms : -1;
    struct pollfd pfd[2];
    int stage = 0, open = 0, i, got, left;

    for (i = 0; i < 2; i++) {
        pfd[i] = (struct pollfd){ .fd = s[i].fd, .events = POLLIN };
        open += s[i].fd >= 0;
    }
    while (open > 0) {
        left = deadline < 0 ? -1 : (int)(deadline - tbm_now_ms());
        if (deadline >= 0 && left <= 0) {
            if (escalate(p->pid, o, &stage, &deadline))
                break;
            continue;
        }
        if (poll(pfd, 2, left) < 0 && errno != EINTR)
            return -1;
        for (i = 0; i < 2; i++) {
            if (pfd[i].fd < 0 || !pfd[i].revents)
                continue;
            if ((got = sink_read(&s[i], max)) < 0)
                return -1;
            if (s[i].over && !o->truncate)
                return 2;
            if (got == 0) {
                pfd[i].fd = -1;
                open--;
            }
        }
    }
    return stage > 0;
}

static int finish_error(const run_proc_t *p, const run_opts_t *o, int rc, int status, int saved, tbm_err_t *err)
{
    if (rc == 2)
        return tbm_errprintf(err, "%s: printed more than %zu bytes, more than is read of it; killed", p->name,
                             o->max ? o->max : (size_t)RUN_MAX);
    if (rc < 0)
        return tbm_errprintf(err, "%s: cannot read its output: %s", p->name, strerror(saved));
    if (rc == 1)
        return tbm_errprintf(err, "%s: no answer within %d ms; killed (is the host overloaded or the command "
                             "hung?)", p->name, o->timeout_ms);
    return tbm_errprintf(err, "%s: killed by signal %d", p->name, WTERMSIG(status));
}

/* A stream's text, NUL-terminated ("" when nothing came). */
static char *text_of(sink_t *s, size_t *len)
{
    *len = s->len;
    if (!s->buf)
        return calloc(1, 1);
    s->buf[s->len] = '\0';
    return s->buf;
}

int run_finish(run_proc_t *p, const run_opts_t *o, run_out_t *r, tbm_err_t *err)
{
    sink_t s[2] = { { .fd = p->out }, { .fd = p->err } };
    int rc, status = 0, saved, i;

    memset(r, 0, sizeof(*r));
    r->status = -1;
    if (p->pid <= 0)
        return tbm_errprintf(err, "%s: not started", p->name[0] ? p->name : "the command");
    rc = collect(p, o, s);
    saved = errno;
    if (rc != 0)
        kill(-p->pid, SIGKILL);
    for (i = 0; i < 2; i++)
        if (s[i].fd >= 0)
            close(s[i].fd);
    while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
        ;
    p->pid = -1;
    p->out = p->err = -1;
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r->timed_out = rc == 1;
    r->out = text_of(&s[0], &r->out_len);
    if (o->stderr_to == RUN_STDERR_CAPTURE)
        r->err = text_of(&s[1], &r->err_len);
    else
        free(s[1].buf);
    if (!r->out || (o->stderr_to == RUN_STDERR_CAPTURE && !r->err))
        return tbm_errprintf(err, "%s: out of memory", p->name);
    if (rc != 0 || WIFSIGNALED(status))
        return finish_error(p, o, rc, status, saved, err);
    return r->status;
}

int run_command(const char *const *argv, const run_opts_t *o, run_out_t *r, tbm_err_t *err)
{
    run_proc_t p;

    memset(r, 0, sizeof(*r));
    r->status = -1;
    if (run_start(argv, o, &p, err) < 0)
        return -1;
    return run_finish(&p, o, r, err);
}

void run_out_free(run_out_t *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
    r->out_len = r->err_len = 0;
}

int run_capture(const char *const *argv, const char *path, int timeout_ms, size_t max, char **out, size_t *len,
                tbm_err_t *err)
{
    run_opts_t o = { .path = path, .timeout_ms = timeout_ms, .max = max };
    run_out_t r;
    int rc = run_command(argv, &o, &r, err);

    *out = NULL;
    *len = 0;
    if (rc < 0) {
        run_out_free(&r);
        return -1;
    }
    *out = r.out;
    *len = r.out_len;
    free(r.err);
    return rc;
}
