/* accept_run.c: running what `tbmesh accept` needs (see accept_run.h): a program with a time limit and both its
 * outputs captured (no shell), and a step's Slurm job through salloc, its job id read from salloc's lines. */
#include "config.h"
#include "accept_run.h"

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

#include "clock.h"
#include "strbuf.h"

extern char **environ;

#define KILL_GRACE_MS 5000

void accept_out_free(accept_out_t *o)
{
    free(o->out);
    free(o->err);
    o->out = o->err = NULL;
}

/* Read what is there on fd into sb (bounded); returns 0 at its end. */
static int drain(int fd, tbm_strbuf_t *sb)
{
    char buf[65536];
    ssize_t n = read(fd, buf, sizeof(buf));

    if (n < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : 0;
    if (n > 0 && sb->len + (size_t)n <= ACCEPT_OUT_MAX)
        tbm_sb_append(sb, buf, (size_t)n);
    return n > 0;
}

static int spawn(char *const argv[], int out[2], int err[2], pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    int rc;

    if (pipe(out) < 0)
        return -1;
    if (pipe(err) < 0) {
        close(out[0]);
        close(out[1]);
        return -1;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    posix_spawn_file_actions_addclose(&fa, err[0]);
    rc = posix_spawnp(pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err[1]);
    if (rc != 0) {
        close(out[0]);
        close(err[0]);
        errno = rc;
        return -1;
    }
    return 0;
}

int accept_run(char *const argv[], int seconds, accept_out_t *o)
{
    tbm_strbuf_t sb[2];
    int out[2], err[2], open_fds = 2, st = 0, killed = 0;
    long long deadline = tbm_now_ms() + (long long)seconds * 1000;
    struct pollfd pfd[2];
    pid_t pid;

    memset(o, 0, sizeof(*o));
    tbm_sb_init(&sb[0]);
    tbm_sb_init(&sb[1]);
    if (spawn(argv, out, err, &pid) < 0) {
        tbm_sb_printf(&sb[1], "cannot run %s: %s\n", argv[0], strerror(errno));
        o->status = -1;
        o->out = tbm_sb_take(&sb[0]);
        o->err = tbm_sb_take(&sb[1]);
        return -1;
    }
    pfd[0].fd = out[0];
    pfd[1].fd = err[0];
    pfd[0].events = pfd[1].events = POLLIN;
    while (open_fds > 0) {
        long long now = tbm_now_ms();
        int i, wait_ms;
        if (now >= deadline && killed < 2) {
            kill(pid, killed ? SIGKILL : SIGTERM);
            o->timed_out = 1;
            deadline = now + KILL_GRACE_MS;
            killed++;
        }
        wait_ms = deadline > now ? (int)(deadline - now) : 100;
        if (poll(pfd, 2, wait_ms > 1000 ? 1000 : wait_ms) < 0 && errno != EINTR)
            break;
        for (i = 0; i < 2; i++)
            if (pfd[i].fd >= 0 && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) && !drain(pfd[i].fd, &sb[i])) {
                close(pfd[i].fd);
                pfd[i].fd = -1;
                open_fds--;
            }
    }
    if (pfd[0].fd >= 0)
        close(pfd[0].fd);
    if (pfd[1].fd >= 0)
        close(pfd[1].fd);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    o->out = tbm_sb_take(&sb[0]);
    o->err = tbm_sb_take(&sb[1]);
    if (!o->out || !o->err) {
        accept_out_free(o);
        o->out = strdup("");
        o->err = strdup("out of memory");
    }
    return o->status;
}

/* The job id in salloc's "... job allocation N" lines, else in the script's "tbmesh-accept-job N" line. */
static uint32_t job_id(const accept_job_t *j)
{
    const char *s = j->o.err ? strstr(j->o.err, "job allocation ") : NULL;
    unsigned long v = 0;

    if (s)
        v = strtoul(s + strlen("job allocation "), NULL, 10);
    if (!v && j->o.out && (s = strstr(j->o.out, "tbmesh-accept-job ")))
        v = strtoul(s + strlen("tbmesh-accept-job "), NULL, 10);
    return v <= UINT32_MAX ? (uint32_t)v : 0;
}

int accept_job_run(const char *name, const char *partition, char *const opts[], const char *script, int wait_s,
                   int run_min, accept_job_t *j)
{
    char jname[96], imm[32], tlim[32], part[96], wrapped[16384];
    char *argv[32];
    int n = 0, i;

    memset(j, 0, sizeof(*j));
    snprintf(jname, sizeof(jname), "--job-name=%s", name);
    snprintf(imm, sizeof(imm), "--immediate=%d", wait_s);
    snprintf(tlim, sizeof(tlim), "--time=%d", run_min);
    snprintf(wrapped, sizeof(wrapped), "echo \"tbmesh-accept-job $SLURM_JOB_ID\"\n%s", script);
    argv[n++] = "salloc";
    argv[n++] = jname;
    argv[n++] = imm;
    argv[n++] = tlim;
    if (partition && *partition) {
        snprintf(part, sizeof(part), "--partition=%s", partition);
        argv[n++] = part;
    }
    for (i = 0; opts[i] && n < 26; i++)
        argv[n++] = opts[i];
    argv[n++] = "sh";
    argv[n++] = "-c";
    argv[n++] = wrapped;
    argv[n] = NULL;
    accept_run(argv, wait_s + run_min * 60 + 30, &j->o);
    j->id = job_id(j);
    j->started = j->o.out && strstr(j->o.out, "tbmesh-accept-job ") != NULL;
    return j->o.status;
}

void accept_job_error(const accept_job_t *j, char *buf, size_t len)
{
    const char *s = j->o.err ? strstr(j->o.err, "error: ") : NULL;

    buf[0] = '\0';
    if (s)
        snprintf(buf, len, "%.*s", (int)strcspn(s + 7, "\n"), s + 7);
    else if (j->o.timed_out)
        snprintf(buf, len, "the job did not end within its time limit");
}
