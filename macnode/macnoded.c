/* macnoded.c: the agent on each Mac. Listens on the management address; connections wait at the gate until
 * their MUNGE hello checks out (agent_gate.c), then each is served in a process of its own (probe, spawn,
 * cleanup), and sweeps up after tasks whose
 * serving process is gone, including those of an agent that ran before it. Runs as root (launchd). */
#include "config.h"
#include "agent.h"
#include "agent_gate.h"
#include "agent_log.h"
#include "clock.h"
#include "conf.h"
#include "fileio.h"
#include "scalar.h"
#include "wire.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define EXIT_START 3
#define SWEEP_S    10
#define MAX_CONNS  256   /* authenticated connections served at once; more are refused (busy) */
#define MAX_CONNS_PER_UID 64   /* ... of one user other than root */

#ifdef __APPLE__
#define STATE_DIR "/var/run/tbmesh/macnoded"
#define JOBS_DIR  "/private/var/tmp/tbmesh-jobs"
#else
#define STATE_DIR "/run/tbmesh/macnoded"
#define JOBS_DIR  "/var/tmp/tbmesh-jobs"
#endif

static volatile sig_atomic_t stopping;
static pid_t sweeper;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: macnoded [--listen ADDR[:PORT]] [--node NAME] [--munge-socket PATH] [--replay DIR]\n"
            "                [--state-dir DIR] [--jobs-dir DIR] [--grace SECONDS] [--log FILE] [--pid-file FILE]\n"
            "  The slurm-tbmesh agent on a Mac: runs tasks for the bridge host as their users (MUNGE-authenticated,\n"
            "  job grants made by root), streams their stdio, forwards signals, answers probes, writes job files.\n"
            "  --listen     address to listen on (default 0.0.0.0:%d, the AgentPort of tbmesh.conf)\n"
            "  --node       this node's name as grants name it (default: the short hostname)\n"
            "  --munge-socket  munged's socket (default: libmunge's)\n"
            "  --replay     answer probes from recorded macOS outputs in DIR (the embedded lab)\n"
            "  --state-dir  task records and seen credentials (default %s; keep it on a folder emptied at boot)\n"
            "  --jobs-dir   root's folder of the per-job folders of job files (default %s)\n"
            "  --grace      seconds between SIGTERM and SIGKILL when a task is ended (default 10)\n"
            "  --log        append the log to FILE instead of stderr\n"
            "  Runs in the foreground; every refusal is logged with its reason.\n",
            TBM_CONF_AGENT_PORT, STATE_DIR, JOBS_DIR);
}

static int parse_grace(const char *s, int *out)
{
    long long v;

    if (tbm_parse_ll(s, 10, 0, 3600, &v) < 0) {
        fprintf(stderr, "macnoded: --grace '%s' must be a number of seconds from 0 to 3600\n", s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_options(int argc, char **argv, agent_conf_t *c, const char **log, const char **pidfile)
{
    static const struct option opts[] = {
        { "listen", required_argument, NULL, 'l' },    { "node", required_argument, NULL, 'n' },
        { "munge-socket", required_argument, NULL, 'm' }, { "replay", required_argument, NULL, 'r' },
        { "state-dir", required_argument, NULL, 's' }, { "jobs-dir", required_argument, NULL, 'j' },
        { "grace", required_argument, NULL, 'g' },     { "log", required_argument, NULL, 'L' },
        { "pid-file", required_argument, NULL, 'p' },  { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int o;

    while ((o = getopt_long(argc, argv, "l:n:m:r:s:j:g:L:p:h", opts, NULL)) != -1) {
        switch (o) {
        case 'l': c->listen = optarg; break;
        case 'n': c->node = optarg; break;
        case 'm': c->munge_socket = optarg; break;
        case 'r': c->replay_dir = optarg; break;
        case 's': c->state_dir = optarg; break;
        case 'j': c->jobs_dir = optarg; break;
        case 'g': if (parse_grace(optarg, &c->grace_s) < 0) return -1; break;
        case 'L': *log = optarg; break;
        case 'p': *pidfile = optarg; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "macnoded: unexpected argument '%s'; see macnoded --help\n", argv[optind]);
        return -1;
    }
    return 0;
}

static int node_name(agent_conf_t *c, char *buf, size_t len)
{
    char *dot;

    if (c->node)
        return 0;
    if (gethostname(buf, len - 1) < 0)
        return -1;
    buf[len - 1] = '\0';
    if ((dot = strchr(buf, '.')))
        *dot = '\0';
    c->node = buf;
    return 0;
}

static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}

static void on_child(int sig)
{
    (void)sig;
}

static void setup_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_child;
    sa.sa_flags = SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
}

/* Kill the tasks whose server is gone and forget expired credentials, in a child (grace periods block),
 * which keeps no copy of the connections waiting at the gate. */
static void sweep(const agent_conf_t *c, agent_gate_t *gate)
{
    if (sweeper > 0)
        return;
    sweeper = fork();
    if (sweeper == 0) {
        agent_gate_drop(gate);
        agent_kill_tasks(c, 0, 1, 1);
        agent_seen_sweep(c);
        _exit(0);
    }
}

/* The forked servers of authenticated connections, with their callers' uids. */
static struct server {
    pid_t pid;
    uid_t uid;
} servers[MAX_CONNS];
static int n_servers;

static void reap_children(void)
{
    pid_t pid;
    int i;

    while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
        if (pid == sweeper)
            sweeper = 0;
        for (i = 0; i < n_servers; i++)
            if (servers[i].pid == pid) {
                servers[i] = servers[--n_servers];
                break;
            }
    }
}

static int servers_of(uid_t uid)
{
    int i, n = 0;

    for (i = 0; i < n_servers; i++)
        n += servers[i].uid == uid;
    return n;
}

struct serving {
    agent_gate_t *gate;
    int lfd;
};

/* The gate let c in: root's usage request is answered here; else refuse c when the agent (or this user) has
 * all the servers it may have, or fork its server. */
static void admit(void *ctx, agent_conn_t *c)
{
    struct serving *sv = ctx;
    const char *why = NULL;
    char msg[160];
    pid_t pid;

    if (agent_usage_inline(c)) {
        close(c->fd);
        tbm_fdec_free(&c->dec);
        return;
    }
    if (n_servers >= MAX_CONNS)
        why = "the agent is serving all the connections it may";
    else if (c->uid != 0 && servers_of(c->uid) >= MAX_CONNS_PER_UID)
        why = "this user has all the connections to the agent a user may have";
    if (why) {
        snprintf(msg, sizeof(msg), "busy: %s (%d in all, %d per user); try again when some have ended", why,
                 MAX_CONNS, MAX_CONNS_PER_UID);
        agent_log_noisy(AGENT_NOISE_BUSY, tbm_now_ms(), "%s: refused (busy): %s", c->peer, msg);
        wire_send_error(c->fd, "busy", msg);
    } else if ((pid = fork()) == 0) {
        close(sv->lfd);
        agent_gate_drop(sv->gate);
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        agent_serve(c);
        close(c->fd);
        _exit(0);
    } else if (pid < 0) {
        agent_log("%s: cannot fork a server for the connection: %s", c->peer, strerror(errno));
        wire_send_error(c->fd, "internal", "the agent cannot fork a server for the connection");
    } else {
        servers[n_servers++] = (struct server){ pid, c->uid };
    }
    close(c->fd);
    tbm_fdec_free(&c->dec);
}

static void serve(const agent_conf_t *c, int lfd)
{
    struct serving sv = { .lfd = lfd };
    tbm_err_t err = { { 0 } };
    time_t last = 0;

    sv.gate = agent_gate_new(c, lfd, &err);
    if (!sv.gate) {
        agent_log("cannot serve: %s", err.msg);
        return;
    }
    while (!stopping) {
        if (time(NULL) - last >= SWEEP_S) {
            sweep(c, sv.gate);
            last = time(NULL);
        }
        agent_gate_turn(sv.gate, 1000, admit, &sv);
        agent_log_tick(tbm_now_ms());
        reap_children();
    }
    agent_gate_free(sv.gate);
}

static int write_pidfile(const char *path)
{
    char text[32];
    tbm_err_t err = { { 0 } };
    int n = snprintf(text, sizeof(text), "%ld\n", (long)getpid());

    if (path && tbm_write_file_atomic(path, text, (size_t)n, 0644, &err) < 0) {
        fprintf(stderr, "macnoded: %s\n", err.msg);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    agent_conf_t c = { .listen = "0.0.0.0", .state_dir = STATE_DIR, .jobs_dir = JOBS_DIR, .grace_s = 10,
                       .request_timeout_ms = 10000, .idle_timeout_ms = 600000 };
    const char *log = NULL, *pidfile = NULL;
    char host[256];
    tbm_err_t err = { { 0 } };
    agent_user_t root;
    int lfd;

    if (parse_options(argc, argv, &c, &log, &pidfile) < 0)
        return EXIT_USAGE;
    if (log && !freopen(log, "a", stderr)) {
        fprintf(stdout, "macnoded: cannot open the log %s: %s\n", log, strerror(errno));
        return EXIT_START;
    }
    if (node_name(&c, host, sizeof(host)) < 0 || agent_state_init(&c, &err) < 0) {
        agent_log("cannot start: %s", tbm_erris(&err) ? err.msg : "no hostname; give --node");
        return EXIT_START;
    }
    setup_signals();
    /* the account databases' modules are loaded here once, not again in every connection's user lookup */
    agent_user_lookup(0, 0, &root, NULL);
    lfd = wire_listen(c.listen, TBM_CONF_AGENT_PORT, &err);
    if (lfd < 0 || write_pidfile(pidfile) < 0) {
        agent_log("cannot start: %s", tbm_erris(&err) ? err.msg : "cannot write the pid file");
        return EXIT_START;
    }
    if (geteuid() != 0)
        agent_log("not running as root: tasks can run only as uid %u", (unsigned)geteuid());
    agent_log("node %s listening on %s (grace %d s, state %s, jobs %s%s%s)", c.node, c.listen, c.grace_s,
              c.state_dir, c.jobs_dir, c.replay_dir ? ", replay " : "", c.replay_dir ? c.replay_dir : "");
    serve(&c, lfd);
    agent_log("stopping");
    close(lfd);
    if (pidfile)
        unlink(pidfile);
    return 0;
}
