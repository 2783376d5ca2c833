/* exec.c: `macnode exec`, the forwarder a bridge-mode task becomes: the command runs on the Mac through its
 * agent, one connection and one grant per task, the job's files (TBMESH_JOB_FILES) inside the spawn request;
 * stdio, signals and the exit status come back as if it ran here. */
#include "config.h"
#include "exec.h"
#include "client.h"
#include "clock.h"
#include "conf.h"
#include "fileio.h"
#include "scalar.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

extern char **environ;

#define EXIT_FWD   255   /* the forwarder or the agent failed: the command did not run (or its end is unknown) */
#define EXIT_USAGE 2
#define IN_CHUNK   (256u * 1024u)

typedef struct fwd {
    client_t cl;
    const char *grant;
    json_object *files_doc;          /* TBMESH_JOB_FILES, read; files[] point into it */
    tbm_jobfile_t files[TBM_FILES_MAX];
    int n_files;
    int pty, time_limit;
    long long uid;
    int stdin_open, stdout_ok, done;
    tbm_msg_t exit;
    struct termios saved;
    int raw;
    int verbose;                     /* --verbose or $TBMESH_LAUNCH_TIMES: say the launch's parts */
    client_launch_t launch;
} fwd_t;

static int sig_pipe[2] = { -1, -1 };
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGTSTP, SIGALRM,
                                 SIGWINCH };

static void exec_usage(FILE *out)
{
    fprintf(out,
            "usage: macnode exec [--agent ADDR[:PORT]] [--node NAME] [--grant FILE|-] [--pty] [--time-limit SECONDS]\n"
            "                    [--munge-socket PATH] [--uid UID] [--verbose] -- CMD [ARGS...]\n"
            "  Run CMD on a Mac through its agent (macnoded) as if here: same user, working directory and\n"
            "  environment; stdin, stdout, stderr and signals relayed; exits with CMD's exit code, or dies of\n"
            "  the same signal. Exit 255 when the agent could not be reached or refused (the reason on stderr,\n"
            "  naming the Mac ($SLURMD_NODENAME until the agent says its name) and the agent's address).\n"
            "  --agent   the agent (default $TBMESH_AGENT; port default %d)\n"
            "  --node    the Mac whose agent that must be: it proves itself as that Mac's before the grant or any\n"
            "            credential is sent (default: the Mac tbmesh.conf puts at that address, else\n"
            "            $SLURMD_NODENAME, else the address's host name)\n"
            "  --grant   a file holding the job grant, '-' for one line of stdin (default: $TBMESH_GRANT, the\n"
            "            credential itself, as the SPANK plug-in sets it); see macnode grant\n"
            "  --pty     run CMD on a pty (srun --pty); a terminal on stdin is put in raw mode meanwhile\n"
            "  --munge-socket  munged's socket (default $TBMESH_MUNGE_SOCKET, else libmunge's default)\n"
            "  --verbose print the launch's parts on stderr once the task has ended, in milliseconds (also when\n"
            "            $TBMESH_LAUNCH_TIMES is set and not 0): \"macnode exec: launch: grant=.. stepd=..\n"
            "            exec=.. credential=.. connect=.. proof=.. authenticate=.. spawn=.. first_output=.. total=..\n"
            "            end=..\" (grant, stepd and exec from the SPANK plug-in's $TBMESH_LAUNCH_STAMPS; '-'\n"
            "            for a part not measured)\n"
            "  $TBMESH_JOB_FILES, when set, is a JSON object mapping file names to their text: the agent writes\n"
            "  them as the user (0600) into the job's folder on the Mac before it starts CMD. $TBMESH_AGENT_FD,\n"
            "  set by the SPANK plug-in, is a connection to the agent on which the hello was said already; the\n"
            "  spawn goes on it. None of them nor $TBMESH_GRANT is passed on to CMD's environment.\n",
            TBM_CONF_AGENT_PORT);
}

static void on_signal(int sig)
{
    unsigned char b = (unsigned char)sig;
    int saved = errno;

    if (write(sig_pipe[1], &b, 1) < 0) {
        /* the pipe is full; this signal is dropped */
    }
    errno = saved;
}

static void catch_signals(void)
{
    struct sigaction sa;
    size_t i;

    if (pipe(sig_pipe) == 0) {
        fcntl(sig_pipe[0], F_SETFL, O_NONBLOCK);
        fcntl(sig_pipe[1], F_SETFL, O_NONBLOCK);
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
        sigaction(forwarded[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* An option's number from min to max, or -1 with a message. */
static int number(const char *opt, const char *s, long long min, long long max, long long *out)
{
    if (tbm_parse_ll(s, 10, min, max, out) == 0)
        return 0;
    fprintf(stderr, "macnode exec: %s '%s' must be a number from %lld to %lld\n", opt, s, min, max);
    return -1;
}

static int exec_options(int argc, char **argv, fwd_t *f, const char **grant_arg)
{
    static const struct option opts[] = {
        { "agent", required_argument, NULL, 'a' },  { "grant", required_argument, NULL, 'g' },
        { "pty", no_argument, NULL, 'p' },          { "time-limit", required_argument, NULL, 't' },
        { "munge-socket", required_argument, NULL, 'm' }, { "uid", required_argument, NULL, 'u' },
        { "verbose", no_argument, NULL, 'v' },      { "help", no_argument, NULL, 'h' },
        { "node", required_argument, NULL, 'n' },   { NULL, 0, NULL, 0 },
    };
    long long v;
    int o;

    while ((o = getopt_long(argc, argv, "+a:g:pt:m:u:vn:h", opts, NULL)) != -1) {
        switch (o) {
        case 'a': f->cl.agent = optarg; break;
        case 'n': f->cl.want = optarg; break;
        case 'g': *grant_arg = optarg; break;
        case 'p': f->pty = 1; break;
        case 't': if (number("--time-limit", optarg, 0, TBM_TIME_LIMIT_MAX, &v) < 0) return -1;
                  f->time_limit = (int)v; break;
        case 'm': f->cl.socket = optarg; break;
        case 'u': if (number("--uid", optarg, 0, UINT32_MAX, &f->uid) < 0) return -1; break;
        case 'v': f->verbose = 1; break;
        case 'h': exec_usage(stdout); exit(0);
        default: exec_usage(stderr); return -1;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "macnode exec: no command given; usage: macnode exec [options] -- CMD [ARGS...]\n");
        return -1;
    }
    return client_defaults(&f->cl, "exec");
}

/* Variables for the forwarder alone, never passed on to the task. */
static int forwarder_only(const char *var)
{
    return strncmp(var, "TBMESH_GRANT=", 13) == 0 || strncmp(var, "TBMESH_JOB_FILES=", 17) == 0 ||
           strncmp(var, "TBMESH_LAUNCH_STAMPS=", 21) == 0 || strncmp(var, "TBMESH_AGENT_FD=", 16) == 0;
}

/* The environment sent with the spawn: ours, without the grant and the job's files. */
static const char **task_env(size_t *n)
{
    size_t i, k = 0;
    const char **env;

    for (i = 0; environ[i]; i++)
        ;
    env = calloc(i + 1, sizeof(*env));
    for (i = 0; env && environ[i]; i++)
        if (!forwarder_only(environ[i]) && strchr(environ[i], '=') != environ[i] && strchr(environ[i], '='))
            env[k++] = environ[i];
    *n = k;
    return env;
}

/* The job's files from $TBMESH_JOB_FILES (when set): checked here as the agent will check them. */
static int job_files(fwd_t *f, tbm_err_t *err)
{
    const char *text = getenv("TBMESH_JOB_FILES");

    if (!text)
        return 0;
    f->files_doc = tbm_proto_json(text, strlen(text), "TBMESH_JOB_FILES", err);
    if (!f->files_doc || tbm_job_files_read(f->files_doc, "TBMESH_JOB_FILES", f->files, &f->n_files, err) < 0)
        return -1;
    return 0;
}

static void get_winsize(int *rows, int *cols)
{
    struct winsize ws;

    if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
        *rows = ws.ws_row, *cols = ws.ws_col;
}

/* The connection the SPANK plug-in opened to the agent for this task and said hello on ($TBMESH_AGENT_FD,
 * while slurmstepd was still setting the task up): used when it is a stream socket, else the forwarder
 * connects itself. */
static void greeted_connection(fwd_t *f)
{
    const char *text = getenv("TBMESH_AGENT_FD");
    long long fd;
    int type = 0;
    socklen_t len = sizeof(type);

    if (!text || tbm_parse_ll(text, 10, 3, INT_MAX, &fd) < 0 ||
        getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM)
        return;
    fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    f->cl.fd = (int)fd;
    f->cl.greeted = 1;
}

/* Connect and authenticate with the spawn right behind the hello (client_open_with): one round trip; on a
 * greeted connection, the spawn alone. */
static int open_and_spawn(fwd_t *f, char **argv, int argc, tbm_err_t *err)
{
    tbm_msg_t s = { .type = TBM_MSG_SPAWN, .grant = f->grant, .pty = f->pty, .time_limit = f->time_limit,
                    .n_files = f->n_files };
    char cwd[PATH_MAX];
    int rc;

    memcpy(s.files, f->files, sizeof(s.files));
    if (!getcwd(cwd, sizeof(cwd)))
        return tbm_errprintf(err, "cannot tell the working directory: %s", strerror(errno));
    s.uid = f->uid >= 0 ? (uint32_t)f->uid : (uint32_t)getuid();
    s.argv = (const char **)argv;
    s.argc = (size_t)argc;
    s.env = task_env(&s.envc);
    s.cwd = cwd;
    if (f->pty)
        get_winsize(&s.rows, &s.cols);
    rc = s.env ? client_open_with(&f->cl, &s, err) : tbm_errprintf(err, "out of memory");
    free((void *)s.env);
    return rc;
}

static void raw_terminal(fwd_t *f)
{
    struct termios t;

    if (!f->pty || !isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &f->saved) < 0)
        return;
    t = f->saved;
    cfmakeraw(&t);
    if (tcsetattr(STDIN_FILENO, TCSADRAIN, &t) == 0)
        f->raw = 1;
}

static void restore_terminal(fwd_t *f)
{
    if (f->raw)
        tcsetattr(STDIN_FILENO, TCSADRAIN, &f->saved);
    f->raw = 0;
}

/* Relaying --------------------------------------------------------------------------------------------- */

static void send_stdin(fwd_t *f, char *buf)
{
    ssize_t n = read(STDIN_FILENO, buf, IN_CHUNK);

    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0)
        f->stdin_open = 0;
    if (wire_send_data(f->cl.fd, TBM_FRAME_STDIN, buf, n > 0 ? (size_t)n : 0) < 0)
        f->stdin_open = 0;
}

static void send_signals(fwd_t *f)
{
    unsigned char b[64];
    ssize_t n, i;
    tbm_msg_t m;

    while ((n = read(sig_pipe[0], b, sizeof(b))) > 0)
        for (i = 0; i < n; i++) {
            memset(&m, 0, sizeof(m));
            if (b[i] == SIGWINCH && f->pty) {
                m.type = TBM_MSG_RESIZE;
                get_winsize(&m.rows, &m.cols);
                if (m.rows == 0)
                    continue;
            } else if (b[i] != SIGWINCH) {
                m.type = TBM_MSG_SIGNAL;
                m.signal = tbm_signal_name(b[i]);
            } else {
                continue;
            }
            wire_send(f->cl.fd, &m, NULL);
        }
}

static void write_out(fwd_t *f, int fd, const tbm_frame_t *fr)
{
    if (fd == STDOUT_FILENO && !f->stdout_ok)
        return;
    if (tbm_write_all(fd, fr->data, fr->len) < 0 && fd == STDOUT_FILENO)
        f->stdout_ok = 0;
}

/* A JSON message during the task: exit ends it, error ends it with the agent's reason. */
static int task_message(fwd_t *f, const tbm_frame_t *fr, tbm_err_t *err)
{
    tbm_msg_t m;
    tbm_msg_type_t type;
    char who[160];

    client_who(&f->cl, who, sizeof(who));
    if (tbm_msg_parse(fr, &m, err) < 0)
        return tbm_errprefix(err, "%s sent a bad message: ", who);
    if (m.type == TBM_MSG_STARTED && !f->launch.started)
        f->launch.started = tbm_now_us();
    if (m.type == TBM_MSG_EXIT) {
        f->launch.exit = tbm_now_us();
        f->exit = m;
        f->done = 1;
        return 0;
    }
    type = m.type;
    if (type == TBM_MSG_ERROR)
        tbm_errprintf(err, "%s refused: %s", who, m.message);
    else if (type != TBM_MSG_STARTED)
        tbm_errprintf(err, "%s sent %s during the task", who, tbm_msg_type_name(type));
    tbm_msg_free(&m);
    return type == TBM_MSG_STARTED ? 0 : -1;
}

/* Handle the whole frames the decoder holds. */
static int agent_frames(fwd_t *f, tbm_err_t *err)
{
    tbm_frame_t fr;
    char who[160];
    int rc;

    while (!f->done && (rc = tbm_fdec_next(&f->cl.dec, &fr, err)) != 0) {
        if (rc < 0)
            return tbm_errprefix(err, "from %s: ", client_who(&f->cl, who, sizeof(who)));
        if ((fr.kind == TBM_FRAME_STDOUT || fr.kind == TBM_FRAME_STDERR) && !f->launch.first_output)
            f->launch.first_output = tbm_now_us();
        if (fr.kind == TBM_FRAME_STDOUT)
            write_out(f, STDOUT_FILENO, &fr);
        else if (fr.kind == TBM_FRAME_STDERR)
            write_out(f, STDERR_FILENO, &fr);
        else if (fr.kind != TBM_FRAME_JSON || task_message(f, &fr, err) < 0)
            return tbm_erris(err) ? -1 : tbm_errprintf(err, "the agent sent a stdin frame");
    }
    return 0;
}

static int read_agent(fwd_t *f, tbm_err_t *err)
{
    ssize_t n = wire_fill(f->cl.fd, &f->cl.dec);
    char who[160];

    client_who(&f->cl, who, sizeof(who));
    if (n == 0)
        return tbm_errprintf(err, "%s closed the connection before the task's exit status", who);
    if (n < 0)
        return errno == EINTR ? 0 : tbm_errprintf(err, "lost %s: %s", who, strerror(errno));
    return agent_frames(f, err);
}

static int relay(fwd_t *f, tbm_err_t *err)
{
    struct pollfd p[3];
    static char buf[IN_CHUNK];   /* one relay per process: no buffer mapped and unmapped per task */
    int rc = 0;

    rc = agent_frames(f, err);
    while (!f->done && rc == 0) {
        p[0] = (struct pollfd){ f->stdin_open ? STDIN_FILENO : -1, POLLIN, 0 };
        p[1] = (struct pollfd){ f->cl.fd, POLLIN, 0 };
        p[2] = (struct pollfd){ sig_pipe[0], POLLIN, 0 };
        if (poll(p, 3, -1) < 0 && errno != EINTR)
            rc = tbm_errprintf(err, "poll: %s", strerror(errno));
        if (p[2].revents)
            send_signals(f);
        if (p[0].revents)
            send_stdin(f, buf);
        if (p[1].revents)
            rc = read_agent(f, err);
    }
    return rc;
}

/* Exit as the remote task did: its code, or death by its signal. */
static int finish(fwd_t *f)
{
    int sig = f->exit.signal ? tbm_signal_by_name(f->exit.signal) : 0, status = f->exit.status;

    tbm_msg_free(&f->exit);
    restore_terminal(f);
    if (sig) {
        sigset_t set;

        signal(sig, SIG_DFL);
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
        return 128 + sig;
    }
    return status;
}

/* --verbose: the launch's parts, once the task has ended. */
static void say_launch(fwd_t *f)
{
    const char *want = getenv("TBMESH_LAUNCH_TIMES");
    char line[512];

    if (!f->verbose && (!want || !*want || strcmp(want, "0") == 0))
        return;
    f->launch.open = f->cl.times;
    client_launch_line(&f->launch, line, sizeof(line));
    fprintf(stderr, "macnode exec: launch: %s\n", line);
}

int macnode_exec(int argc, char **argv)
{
    fwd_t f = { .cl.fd = -1, .uid = -1, .stdin_open = 1, .stdout_ok = 1 };
    const char *grant_arg = NULL;
    char *grant;
    tbm_err_t err = { { 0 } };
    int rc;

    f.launch.main = tbm_now_us();
    if (getenv("TBMESH_LAUNCH_STAMPS"))
        client_launch_stamps(getenv("TBMESH_LAUNCH_STAMPS"), &f.launch);
    if (exec_options(argc, argv, &f, &grant_arg) < 0)
        return EXIT_USAGE;
    grant = client_load_grant(grant_arg, &err);
    if (!grant && tbm_erris(&err)) {
        fprintf(stderr, "macnode exec: %s\n", err.msg);
        return EXIT_FWD;
    }
    f.grant = grant;
    greeted_connection(&f);
    catch_signals();
    if (job_files(&f, &err) == 0 && open_and_spawn(&f, argv + optind, argc - optind, &err) == 0) {
        raw_terminal(&f);
        relay(&f, &err);
    }
    restore_terminal(&f);
    if (f.files_doc)
        json_object_put(f.files_doc);
    free(grant);
    client_close(&f.cl);
    say_launch(&f);
    if (!f.done) {
        fprintf(stderr, "macnode exec: %s\n", err.msg);
        return EXIT_FWD;
    }
    rc = finish(&f);
    return rc;
}
