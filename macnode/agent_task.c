/* agent_task.c: run one granted task as its user and relay it: stdout/stderr (or a pty) to data frames,
 * stdin frames to the task, signals to its process group, SIGTERM then SIGKILL when the client goes, the
 * time limit passes or the agent stops; finally the exit status and resource use (wait4 rusage and wall
 * time; the Mac's GPU and energy meanwhile, agent_usage_meter), kept in the state folder for the job's
 * record (agent_usage.c) and sent in the exit (see agent.h).
 * On Linux the server is the subreaper of its task (PR_SET_CHILD_SUBREAPER): what the task started and
 * left (setsid, a double fork, nohup) comes back to the server as its child, and ends with the task. */
#include "config.h"
#include "agent.h"
#include "agent_log.h"
#include "agent_privdrop.h"
#include "clock.h"
#include "scalar.h"
#include "sweep.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#ifdef __linux__
#include <sched.h>
#include <sys/prctl.h>
#endif
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define OUT_CHUNK  TBM_DATA_MAX   /* one read of task output is one data frame */
#define STDIN_MAX  (1u << 20)   /* stdin bytes queued for the task before the socket is read no further */
#define DRAIN_MS   2000         /* after the task ended, how long its leftovers' output is waited for */

typedef struct task {
    pid_t pid;
    int out, err, in, pty;    /* fds; -1 when closed. With a pty, out == in's master and err is -1. */
    int setup;                /* the child's setup-error pipe */
    int exited, status;
    struct rusage ru;
    long long start_us, end_us; /* fork and reaping, for the wall time */
    long long kill_at;        /* SIGKILL time once SIGTERM was sent; 0: not killing */
    long long limit_at;       /* time limit; 0: none */
    long long drain_until;
    int sock_open, stdin_eof;
    char *inbuf;
    size_t inlen;
    uint32_t job, uid;        /* the grant's: whose leftovers end with the task */
} task_t;

static int chld_pipe[2] = { -1, -1 };
static volatile sig_atomic_t stop_requested;

static void on_sigchld(int sig)
{
    int saved = errno;

    (void)sig;
    if (write(chld_pipe[1], "c", 1) < 0) {
        /* the pipe is full: a wakeup is already pending */
    }
    errno = saved;
}

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
    on_sigchld(0);
}

static void set_flags(int fd, int fl, int fdfl)
{
    if (fl)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | fl);
    if (fdfl)
        fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | fdfl);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* The child -------------------------------------------------------------------------------------------- */

static const char *env_get(const tbm_msg_t *s, const char *name)
{
    size_t i, n = strlen(name);

    for (i = 0; i < s->envc; i++)
        if (strncmp(s->env[i], name, n) == 0 && s->env[i][n] == '=')
            return s->env[i] + n + 1;
    return NULL;
}

/* execve argv[0], searched in the task's own PATH when it has no '/'. Returns only on failure. */
static void exec_search(const tbm_msg_t *s)
{
    char *const *argv = (char *const *)s->argv, *const *envp = (char *const *)s->env;
    const char *path = env_get(s, "PATH"), *p, *colon;
    char full[4096];
    struct stat st;
    int eacces = 0, n;

    if (strchr(s->argv[0], '/')) {
        execve(s->argv[0], argv, envp);
        return;
    }
    for (p = path ? path : "/usr/bin:/bin"; *p; p += n + (colon ? 1 : 0)) {
        colon = strchr(p, ':');
        n = colon ? (int)(colon - p) : (int)strlen(p);
        if (snprintf(full, sizeof(full), "%.*s/%s", n, n ? p : ".", s->argv[0]) >= (int)sizeof(full))
            continue;
        execve(full, argv, envp);
        eacces |= errno == EACCES && stat(full, &st) == 0;   /* there, but not ours to run */
    }
    errno = eacces ? EACCES : ENOENT;
}

/* The byte the task's process sends on the setup pipe once the job's files are written; a failure is its
 * exit code's byte (1, 126 or 127) and a message. */
#define FILES_WRITTEN "W"

/* Report a setup failure to the agent (exit code byte, then the message) and end. */
static void child_fail(int fd, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));

static void child_fail(int fd, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    int n;

    msg[0] = (char)code;
    va_start(ap, fmt);
    n = vsnprintf(msg + 1, sizeof(msg) - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || write(fd, msg, (size_t)(n + 1 < (int)sizeof(msg) ? n + 1 : (int)sizeof(msg) - 1)) < 0)
        _exit(code);
    _exit(code);
}

/* Close every descriptor from 3 up but keep: one system call or two where the system has close_range. */
static void close_others(int keep)
{
    int fd;

#ifdef HAVE_CLOSE_RANGE
    if ((keep <= 3 || close_range(3, (unsigned)keep - 1, 0) == 0) && close_range((unsigned)keep + 1, ~0U, 0) == 0)
        return;
#endif
    for (fd = 3; fd < 1024; fd++)
        if (fd != keep)
            close(fd);
}

static void child_stdio(int pty, const char *slave, int fds[3], int uid, int setup)
{
    int i, fd;

    if (pty) {
        fd = open(slave, O_RDWR);
        if (fd < 0)
            child_fail(setup, 1, "cannot open the pty %s: %s", slave, strerror(errno));
#ifdef TIOCSCTTY
        ioctl(fd, TIOCSCTTY, 0);
#endif
        if (fchown(fd, (uid_t)uid, (gid_t)-1) < 0 || fchmod(fd, 0620) < 0) {
            /* a pty the user cannot chown still works through the open descriptor */
        }
        fds[0] = fds[1] = fds[2] = fd;
    }
    for (i = 0; i < 3; i++)
        if (dup2(fds[i], i) < 0)
            child_fail(setup, 1, "cannot set up stdio: %s", strerror(errno));
    close_others(setup);
}

/* Every signal the agent catches or ignores back to its default, then none blocked. The process comes with
 * every signal blocked (see start_child): until its handlers are the defaults, none of the agent's may run
 * in it. */
static void child_signals(void)
{
    struct sigaction sa, dfl;
    sigset_t none;
    int sig;

    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL)
            sigaction(sig, &dfl, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* As slurmstepd does: say why the working directory is out of reach and run in /tmp instead. */
static void cwd_fallback(const char *cwd)
{
    char msg[4200];
    int n = snprintf(msg, sizeof(msg), "macnoded: error: cannot change to %s: %s; going to /tmp instead\n", cwd,
                     strerror(errno));

    if (write(STDERR_FILENO, msg, (size_t)(n < (int)sizeof(msg) ? n : (int)sizeof(msg) - 1)) < 0 ||
        chdir("/tmp") < 0) {
        /* /tmp is gone too: the task runs where the agent is (/) */
    }
}

/* The task's process: its session, signals and stdio, the user, the job's files (then FILES_WRITTEN on the
 * setup pipe), its working directory, the command. */
static void child_run(const tbm_msg_t *s, const agent_user_t *u, const char *slave, int fds[3], int setup,
                      const char *jobdir)
{
    tbm_err_t err = { { 0 } };

    setsid();
    agent_task_record_place(getpid());   /* before anything of the user's runs (the server says when not) */
    child_signals();
    child_stdio(s->pty, slave, fds, (int)u->uid, setup);
    if (agent_become(u, &err) < 0 || (jobdir && agent_job_write(jobdir, s->files, s->n_files, &err) < 0))
        child_fail(setup, 1, "%s", err.msg);
    if (jobdir && write(setup, FILES_WRITTEN, 1) != 1)
        _exit(1);
    if (chdir(s->cwd) < 0)
        cwd_fallback(s->cwd);
    exec_search(s);
    child_fail(setup, errno == ENOENT ? 127 : 126, "cannot run '%s': %s", s->argv[0], strerror(errno));
}

typedef struct child_args {
    const tbm_msg_t *s;
    const agent_user_t *u;
    const char *slave, *jobdir;
    int *fds, setup;
} child_args_t;

#ifdef __linux__
/* The task's process's own stack while it shares the server's memory (one task at a time per server). Its deepest
 * user is the files' write (a path and a message of 4 KiB each) and the PATH search's 4 KiB. */
#define CHILD_STACK (256 * 1024)

static int child_entry(void *arg)
{
    const child_args_t *a = arg;

    child_run(a->s, a->u, a->slave, a->fds, a->setup, a->jobdir);
    return 127;
}
#endif

/* Start the task's process; its pid, or -1 with errno. On Linux, as posix_spawn does it: the process shares
 * the server's memory until its exec (or its end), on its own stack, while the server waits. No page tables
 * are copied and none of the server's pages become copy-on-write, which a fork costs both processes on every
 * page they write next (most of a server's CPU where page faults trap to a hypervisor). What it runs before
 * its exec makes system calls only, into its own stack: setsid, the signals' defaults, stdio, the user's
 * groups and ids, the job's files, the working directory. Every signal is blocked meanwhile, so that no
 * handler of the server runs in it. Elsewhere (macOS), a fork. */
static pid_t start_child(const child_args_t *a)
{
#ifdef __linux__
    static char stack[CHILD_STACK] __attribute__((aligned(16)));
    sigset_t all, old;
    pid_t pid;
    int saved;

#ifdef __SANITIZE_ADDRESS__
    /* the server runs one task after another on this stack: the previous task's process never returned from
     * its frames, whose red zones AddressSanitizer would still see */
    __asan_unpoison_memory_region(stack, sizeof(stack));
#endif
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid = clone(child_entry, stack + CHILD_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, (void *)a);
    saved = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    errno = saved;
    return pid;
#else
    pid_t pid = fork();

    if (pid == 0)
        child_run(a->s, a->u, a->slave, a->fds, a->setup, a->jobdir);
    return pid;
#endif
}

/* Starting ---------------------------------------------------------------------------------------------- */

static int open_pty(const tbm_msg_t *s, int *master, char *slave, size_t len, tbm_err_t *err)
{
    struct winsize ws = { .ws_row = (unsigned short)s->rows, .ws_col = (unsigned short)s->cols };
    const char *name;

    *master = posix_openpt(O_RDWR | O_NOCTTY);
    if (*master < 0 || grantpt(*master) < 0 || unlockpt(*master) < 0 || !(name = ptsname(*master))) {
        close_fd(master);
        return tbm_errprintf(err, "cannot make a pty: %s", strerror(errno));
    }
    snprintf(slave, len, "%s", name);
    if (s->rows > 0 && s->cols > 0)
        ioctl(*master, TIOCSWINSZ, &ws);
    return 0;
}

static int make_pipes(int p[3][2], tbm_err_t *err)
{
    int i;

    for (i = 0; i < 3; i++)
        p[i][0] = p[i][1] = -1;
    for (i = 0; i < 3; i++)
        if (pipe(p[i]) < 0)
            return tbm_errprintf(err, "pipe: %s", strerror(errno));
#ifdef F_SETPIPE_SZ
    fcntl(p[1][1], F_SETPIPE_SZ, 1 << 20);
#endif
    return 0;
}

/* With job files: wait for the task's process to say they are written. 0, or -1 with its reason in err (the
 * process has ended then: nothing ran). */
static int files_written(task_t *t, tbm_err_t *err)
{
    char msg[1100];
    ssize_t n;
    size_t got = 0;
    int status;

    /* the byte that says so, else the failure's code byte and message up to the pipe's end */
    while (got < sizeof(msg) - 1 && (n = read(t->setup, msg + got, got ? sizeof(msg) - 1 - got : 1)) != 0) {
        if (n < 0 && errno != EINTR)
            break;
        got += n > 0 ? (size_t)n : 0;
        if (got == 1 && msg[0] == FILES_WRITTEN[0])
            return 0;
    }
    msg[got] = '\0';
    while (waitpid(t->pid, &status, 0) < 0 && errno == EINTR)
        ;
    t->exited = 1;
    return tbm_errprintf(err, "%s", got > 1 ? msg + 1 : "the task's process ended before it wrote them");
}

static int task_start(task_t *t, const tbm_msg_t *s, const agent_user_t *u, const char *jobdir, tbm_err_t *err)
{
    int p[3][2], setup[2], fds[3], i, rc, started;
    char slave[256] = "";

    rc = s->pty ? open_pty(s, &t->pty, slave, sizeof(slave), err) : make_pipes(p, err);
    if (rc < 0 || pipe(setup) < 0)
        return rc < 0 ? -1 : tbm_errprintf(err, "pipe: %s", strerror(errno));
    set_flags(setup[1], 0, FD_CLOEXEC);
    t->start_us = tbm_now_us();
    fds[0] = s->pty ? -1 : p[0][0], fds[1] = s->pty ? -1 : p[1][1], fds[2] = s->pty ? -1 : p[2][1];
    t->pid = start_child(&(child_args_t){ s, u, slave, jobdir, fds, setup[1] });
    started = errno;
    close(setup[1]);
    t->setup = setup[0];
    if (s->pty) {
        t->out = dup(t->pty), t->in = dup(t->pty), t->err = -1;
    } else {
        t->in = p[0][1], t->out = p[1][0], t->err = p[2][0];
        for (i = 0; i < 3; i++)
            close(p[i][i == 0 ? 0 : 1]);
    }
    set_flags(t->in, O_NONBLOCK, FD_CLOEXEC);
    set_flags(t->out, O_NONBLOCK, FD_CLOEXEC);
    if (t->err >= 0)
        set_flags(t->err, O_NONBLOCK, FD_CLOEXEC);
    if (t->pid < 0)
        return tbm_errprintf(err, "cannot start the task's process: %s", strerror(started));
    return jobdir && files_written(t, err) < 0 ? -2 : 0;
}

/* Relaying --------------------------------------------------------------------------------------------- */

static void start_kill(agent_conn_t *c, task_t *t, const char *why)
{
    if (t->kill_at || t->exited)
        return;
    agent_log("%s: task %ld: %s: SIGTERM to its group, SIGKILL in %d s", c->peer, (long)t->pid, why,
              c->conf->grace_s);
    kill(-t->pid, SIGTERM);
    kill(-t->pid, SIGCONT);
    t->kill_at = tbm_now_ms() + (long long)c->conf->grace_s * 1000;
}

static void client_gone(agent_conn_t *c, task_t *t, const char *why)
{
    t->sock_open = 0;
    start_kill(c, t, why);
}

/* Read what a task's output fd has and send it as data frames of `kind`. */
static void pump_output(agent_conn_t *c, task_t *t, int *fd, tbm_frame_kind_t kind, char *buf)
{
    ssize_t n = read(*fd, buf, OUT_CHUNK);

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        close_fd(fd);
        return;
    }
    if (t->sock_open && wire_send_data(c->fd, kind, buf, (size_t)n) < 0)
        client_gone(c, t, "the client stopped reading");
}

static void queue_stdin(task_t *t, const tbm_frame_t *f)
{
    char *grown;

    if (f->len == 0) {
        t->stdin_eof = 1;
        return;
    }
    if (t->in < 0 || t->stdin_eof)
        return;
    grown = realloc(t->inbuf, t->inlen + f->len);
    if (!grown)
        return;
    t->inbuf = grown;
    memcpy(t->inbuf + t->inlen, f->data, f->len);
    t->inlen += f->len;
}

static void flush_stdin(task_t *t)
{
    ssize_t n = t->inlen ? write(t->in, t->inbuf, t->inlen) : 0;

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n < 0) {   /* the task closed its stdin: what is left is dropped */
        t->inlen = 0;
        t->stdin_eof = 1;
        n = 0;
    }
    if (n > 0) {
        memmove(t->inbuf, t->inbuf + n, t->inlen - (size_t)n);
        t->inlen -= (size_t)n;
    }
    if (t->inlen || t->stdin_eof != 1)
        return;
    if (t->pty < 0) {
        close_fd(&t->in);
        return;
    }
    if (write(t->in, "\004", 1) < 0) {
        /* the line discipline is gone: nothing to end */
    }
    t->stdin_eof = 2;
}

static void handle_request(agent_conn_t *c, task_t *t, const tbm_frame_t *f)
{
    tbm_msg_t m;
    tbm_err_t err = { { 0 } };
    struct winsize ws;

    if (tbm_msg_parse(f, &m, &err) < 0 || (m.type != TBM_MSG_SIGNAL && m.type != TBM_MSG_RESIZE)) {
        if (!tbm_erris(&err))
            tbm_errprintf(&err, "a %s request while a task runs; only stdin, signal and resize are read now",
                          tbm_msg_type_name(m.type));
        agent_log("%s: refused: malformed request during a task: %s", c->peer, err.msg);
        wire_send_error(c->fd, "request", err.msg);
        client_gone(c, t, "bad request");
    } else if (m.type == TBM_MSG_SIGNAL && !t->exited) {
        agent_log("%s: task %ld: SIG%s to its group", c->peer, (long)t->pid, m.signal);
        kill(-t->pid, tbm_signal_by_name(m.signal));
    } else if (m.type == TBM_MSG_RESIZE && t->pty >= 0) {
        ws.ws_row = (unsigned short)m.rows, ws.ws_col = (unsigned short)m.cols;
        ws.ws_xpixel = ws.ws_ypixel = 0;
        ioctl(t->pty, TIOCSWINSZ, &ws);
    }
    tbm_msg_free(&m);
}

/* Handle the whole frames the decoder holds. */
static void client_frames(agent_conn_t *c, task_t *t)
{
    tbm_frame_t f;
    tbm_err_t err = { { 0 } };
    int rc;

    while (t->sock_open && (rc = tbm_fdec_next(&c->dec, &f, &err)) != 0) {
        if (rc < 0) {
            agent_log("%s: refused: malformed frame: %s", c->peer, err.msg);
            wire_send_error(c->fd, "frame", err.msg);
            client_gone(c, t, "malformed frame");
        } else if (f.kind == TBM_FRAME_STDIN) {
            queue_stdin(t, &f);
        } else if (f.kind == TBM_FRAME_JSON) {
            handle_request(c, t, &f);
        } else {
            agent_log("%s: refused: the client sent an output data frame", c->peer);
            wire_send_error(c->fd, "frame", "a client sends stdin data frames only");
            client_gone(c, t, "malformed frame");
        }
    }
}

static void read_client(agent_conn_t *c, task_t *t)
{
    ssize_t n = wire_fill(c->fd, &c->dec);

    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
        client_gone(c, t, n == 0 ? "the client closed the connection" : "the connection failed");
    else
        client_frames(c, t);
}

/* The child's setup error, if any, goes to the client's stderr. */
static void read_setup(agent_conn_t *c, task_t *t)
{
    char msg[1100], line[1200];
    ssize_t n = read(t->setup, msg, sizeof(msg) - 1);

    close_fd(&t->setup);
    if (n <= 1)
        return;
    msg[n] = '\0';
    agent_log("%s: task %ld did not start: %s", c->peer, (long)t->pid, msg + 1);
    n = snprintf(line, sizeof(line), "macnoded: %s: %s\n", c->conf->node, msg + 1);
    if (t->sock_open)
        wire_send_data(c->fd, TBM_FRAME_STDERR, line, (size_t)n);
}

/* The task has ended and its group was sent SIGKILL: what it started and left out of its group (setsid, a
 * double fork, nohup) still runs under the server (Linux: their subreaper) and ends now, with SIGKILL as the
 * group did, so that it neither outlives the task nor holds its output open. With no child left (nothing
 * escaped) this is one system call. Root's tasks' leftovers are never looked for (lib/reap.h). */
static void end_leftovers(agent_conn_t *c, const task_t *t)
{
    long self = (long)getpid();
    tbm_reap_ask_t ask = { .job = t->job, .uid = t->uid, .self = self, .roots = &self, .n_roots = 1 };
    tbm_err_t err = { { 0 } };
    char why[TBM_ERR_MAX];
    int ended = 0;
    pid_t pid;

    while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
        ;
    if (pid < 0 || t->uid == 0)
        return;
    if (sweep_job(&ask, 0, &ended, why, sizeof(why), &err) < 0)
        agent_log("%s: job %u: cannot look for what its task left: %s", c->peer, t->job, err.msg);
    else if (ended > 0)
        agent_log("%s: job %u: task %ld left %d processes outside its group: ended", c->peer, t->job,
                  (long)t->pid, ended);
}

/* Reap the task, and the orphans of it that came back to the server (its subreaper) and ended. */
static void reap(agent_conn_t *c, task_t *t)
{
    char b[64];
    struct rusage ru;
    int status;
    pid_t pid;

    while (read(chld_pipe[0], b, sizeof(b)) > 0)
        ;
    if (stop_requested)
        start_kill(c, t, "the agent is stopping");
    while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
        if (pid != t->pid || t->exited)
            continue;
        t->status = status;
        t->ru = ru;
        t->end_us = tbm_now_us();
        t->exited = 1;
        t->drain_until = tbm_now_ms() + DRAIN_MS;
        kill(-t->pid, SIGKILL);   /* what the task left behind in its group ends with it, as in a Slurm step */
        end_leftovers(c, t);
    }
}

static int poll_timeout(const task_t *t)
{
    long long now = tbm_now_ms(), next = -1, cand[3] = { t->kill_at, t->limit_at, t->exited ? t->drain_until : 0 };
    int i;

    for (i = 0; i < 3; i++)
        if (cand[i] && (next < 0 || cand[i] < next))
            next = cand[i];
    return next < 0 ? -1 : next <= now ? 0 : (int)(next - now);
}

static void check_timers(agent_conn_t *c, task_t *t)
{
    long long now = tbm_now_ms();

    if (t->limit_at && now >= t->limit_at) {
        t->limit_at = 0;
        start_kill(c, t, "the time limit passed");
    }
    if (t->kill_at && now >= t->kill_at && !t->exited) {
        agent_log("%s: task %ld outlived SIGTERM by %d s: SIGKILL to its group", c->peer, (long)t->pid,
                  c->conf->grace_s);
        kill(-t->pid, SIGKILL);
        t->kill_at = 0;
    }
    if (t->exited && now >= t->drain_until) {
        close_fd(&t->out);
        close_fd(&t->err);
    }
}

static void relay(agent_conn_t *c, task_t *t, char *buf)
{
    struct pollfd p[6];
    int n;

    while (!t->exited || t->out >= 0 || t->err >= 0 || t->setup >= 0) {
        p[0] = (struct pollfd){ chld_pipe[0], POLLIN, 0 };
        p[1] = (struct pollfd){ t->out, POLLIN, 0 };
        p[2] = (struct pollfd){ t->err, POLLIN, 0 };
        p[3] = (struct pollfd){ t->sock_open && t->inlen < STDIN_MAX ? c->fd : -1, POLLIN, 0 };
        p[4] = (struct pollfd){ t->inlen || t->stdin_eof == 1 ? t->in : -1, POLLOUT, 0 };
        p[5] = (struct pollfd){ t->setup, POLLIN, 0 };
        n = poll(p, 6, poll_timeout(t));
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0 && p[5].revents)
            read_setup(c, t);
        if (n > 0 && p[1].revents)
            pump_output(c, t, &t->out, TBM_FRAME_STDOUT, buf);
        if (n > 0 && p[2].revents)
            pump_output(c, t, &t->err, TBM_FRAME_STDERR, buf);
        if (n > 0 && p[3].revents)
            read_client(c, t);
        if (t->in >= 0 && (t->inlen || t->stdin_eof == 1))
            flush_stdin(t);
        reap(c, t);
        check_timers(c, t);
    }
    while (!t->exited && wait4(t->pid, &t->status, 0, &t->ru) < 0 && errno == EINTR)
        ;
    if (!t->exited)
        t->end_us = tbm_now_us();
}


/* How the task ended and what it used: wait4's rusage (its own and that of the children it waited for;
 * ru_maxrss is in bytes on macOS, KiB on Linux) and the wall time from fork to reaping. */
static void task_usage(const task_t *t, const tbm_msg_t *spawn, const tbm_grant_t *g, tbm_task_usage_t *u)
{
    int sig = WIFSIGNALED(t->status) ? WTERMSIG(t->status) : 0;
    const char *name = sig ? tbm_signal_name(sig) : NULL, *procid = env_get(spawn, "SLURM_PROCID");
    long long task = -1;

    memset(u, 0, sizeof(*u));
    u->job = g->job, u->step = g->step, u->pid = (long)t->pid;
    if (!procid || tbm_parse_ll(procid, 10, 0, INT32_MAX, &task) < 0)
        task = -1;
    u->task = task;
    snprintf(u->signal, sizeof(u->signal), "%s", name ? name : "");
    u->status = WIFEXITED(t->status) ? WEXITSTATUS(t->status) : name ? 0 : 128 + sig;
#ifdef WCOREDUMP
    u->core = sig && WCOREDUMP(t->status);
#endif
    u->rusage.utime_us = (int64_t)t->ru.ru_utime.tv_sec * 1000000 + t->ru.ru_utime.tv_usec;
    u->rusage.stime_us = (int64_t)t->ru.ru_stime.tv_sec * 1000000 + t->ru.ru_stime.tv_usec;
#ifdef __APPLE__
    u->rusage.maxrss_kb = t->ru.ru_maxrss / 1024;
#else
    u->rusage.maxrss_kb = t->ru.ru_maxrss;
#endif
    u->rusage.wall_us = t->end_us > t->start_us ? t->end_us - t->start_us : 0;
}

static void send_exit(agent_conn_t *c, const task_t *t, const tbm_task_usage_t *u)
{
    tbm_msg_t m = { .type = TBM_MSG_EXIT, .status = u->status, .core = u->core, .rusage = u->rusage };
    tbm_err_t err = { { 0 } };
    char how[32];

    m.signal = u->signal[0] ? u->signal : NULL;
    if (m.signal)
        snprintf(how, sizeof(how), "signal %s", m.signal);
    else
        snprintf(how, sizeof(how), "exit %d", m.status);
    agent_log("%s: task %ld ended: %s; cpu %lld+%lld ms, max rss %lld KiB, wall %lld ms", c->peer, (long)t->pid,
              how, (long long)u->rusage.utime_us / 1000,
              (long long)u->rusage.stime_us / 1000, (long long)u->rusage.maxrss_kb,
              (long long)u->rusage.wall_us / 1000);
    if (t->sock_open && wire_send(c->fd, &m, &err) < 0)
        agent_log("%s: %s", c->peer, err.msg);
}

static void catch_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    if (chld_pipe[0] < 0 && pipe(chld_pipe) == 0) {   /* once per server: it serves one task after another */
        set_flags(chld_pipe[0], O_NONBLOCK, FD_CLOEXEC);
        set_flags(chld_pipe[1], O_NONBLOCK, FD_CLOEXEC);
#ifdef PR_SET_CHILD_SUBREAPER
        if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
            agent_log("cannot be the subreaper of the tasks (%s): what a task leaves outside its group is found "
                      "only at the job's cleanup", strerror(errno));
#endif
    }
    sa.sa_handler = on_sigchld;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

int agent_task_stop_asked(void)
{
    return stop_requested != 0;
}

static double ms(long long from, long long to)
{
    return from > 0 && to >= from ? (double)(to - from) / 1000.0 : 0.0;
}

void agent_task_run(agent_conn_t *c, const tbm_msg_t *spawn, const tbm_grant_t *g, const agent_user_t *u,
                    const char *jobdir, const long long stamps[3])
{
    task_t t = { .out = -1, .err = -1, .in = -1, .pty = -1, .setup = -1, .sock_open = 1, .job = g->job,
                 .uid = g->uid };
    agent_task_rec_t rec = { g->job, g->step, g->uid, 0, getpid() };
    tbm_msg_t started = { .type = TBM_MSG_STARTED };
    tbm_task_usage_t usage;
    tbm_err_t err = { { 0 } };
    static char out_chunk[OUT_CHUNK];   /* one task per server: no megabyte mapped and unmapped per task */
    char *buf = out_chunk, msg[TBM_ERR_MAX + 128];
    int rc = -1;

    catch_signals();
    if (agent_task_record_open(c->conf, &rec, &err) < 0)
        agent_log("%s: job %u step %u: its task will not be recorded (a restarted agent will not know it): %s",
                  c->peer, g->job, g->step, err.msg);
    if ((rc = task_start(&t, spawn, u, jobdir, &err)) < 0) {
        const char *code = rc == -2 ? "files" : "spawn";

        if (rc == -2)
            snprintf(msg, sizeof(msg), "job %u: cannot write the job's files on %s: %s", g->job, c->conf->node,
                     err.msg);
        else
            snprintf(msg, sizeof(msg), "%s", err.msg);
        agent_log(rc == -2 ? "%s: refused (files): %s" : "%s: spawn failed: %s", c->peer, msg);
        wire_send_error(c->fd, code, msg);
        agent_task_forget();
        close_fd(&t.in), close_fd(&t.out), close_fd(&t.err), close_fd(&t.setup), close_fd(&t.pty);
        return;
    }
    if (jobdir)
        agent_log("%s: job %u: %d files written in %s", c->peer, g->job, spawn->n_files, jobdir);
    agent_log("%s: job %u step %u: launch on the agent (ms): gate=%.2f proof=%.2f hello_credential=%.2f "
              "welcome=%.2f request=%.2f grant=%.2f files=%.2f", c->peer, g->job, g->step,
              ms(c->accepted, c->admitted), ms(c->accepted, c->proved), ms(c->checking, c->admitted),
              ms(c->admitted, stamps[0]), ms(stamps[0], stamps[1]), ms(stamps[1], stamps[2]),
              jobdir ? ms(stamps[2], tbm_now_us()) : 0.0);
    err.msg[0] = '\0';
    if (!agent_task_recorded(&err) && err.msg[0])
        agent_log("%s: task %ld is not recorded (a restarted agent will not know it): %s", c->peer, (long)t.pid,
                  err.msg);
    agent_log("%s: job %u step %u: task %ld started as uid %u: %s", c->peer, g->job, g->step, (long)t.pid,
              g->uid, spawn->argv[0]);
    started.pid = t.pid;
    if (wire_send(c->fd, &started, &err) < 0)
        client_gone(c, &t, "the client went away before the start");
    t.limit_at = spawn->time_limit ? tbm_now_ms() + (long long)spawn->time_limit * 1000 : 0;
    client_frames(c, &t);   /* stdin that came with the spawn */
    relay(c, &t, buf);
    task_usage(&t, spawn, g, &usage);
    agent_usage_meter(c->conf, t.start_us, t.end_us, &usage.rusage);
    if (agent_usage_keep(c->conf, &usage, getpid(), &err) < 0)
        agent_log("%s: job %u step %u: what task %ld used is not kept (its record will say so): %s", c->peer,
                  g->job, g->step, (long)t.pid, err.msg);
    agent_task_forget();   /* before the exit: a usage request after it finds the task ended */
    send_exit(c, &t, &usage);
    close_fd(&t.in), close_fd(&t.out), close_fd(&t.err), close_fd(&t.setup), close_fd(&t.pty);
    free(t.inbuf);
}
