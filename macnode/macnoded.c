/* macnoded.c: the agent on each Mac. Listens on the management address; connections wait at the gate until
 * their MUNGE hello checks out (agent_gate.c), then each is served by a server, a process that serves one
 * connection at a time (probe, spawn, cleanup, watch, usage) and then the next (agent_pool.c); and sweeps up
 * after tasks whose server is gone, including those of an agent that ran before it. Runs as root (launchd). */
#include "config.h"
#include "agent.h"
#include "agent_gate.h"
#include "agent_log.h"
#include "agent_metrics.h"
#include "agent_pool.h"
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
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define EXIT_START 3
#define SWEEP_S    10
#define METRICS_RESTART_S 5   /* a metrics server that ended starts again after this long */
#define MAX_CONNS  256   /* authenticated connections served at once; more are refused (busy) */
#define MAX_CONNS_PER_UID 64   /* ... of one user other than root */
#define ROOT_RESERVE 16        /* ... of which root's alone: users together hold at most MAX_CONNS - this */

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
            "                [--conf PATH] [--metrics ADDR[:PORT]|off] [--metrics-interval SECONDS]\n"
            "                [--metrics-tasks on|off] [--health-dir DIR] [--peer-timeout SECONDS]\n"
            "  The slurm-tbmesh agent on a Mac: runs tasks for the bridge host as their users (MUNGE-authenticated,\n"
            "  job grants made by root), streams their stdio, forwards signals, answers probes, writes job files.\n"
            "  --listen     address to listen on (default 0.0.0.0:%d, the AgentPort of tbmesh.conf)\n"
            "  --node       this node's name as grants name it (default: the short hostname)\n"
            "  --munge-socket  munged's socket (default: libmunge's)\n"
            "  --replay     answer probes from recorded macOS outputs in DIR (the embedded lab)\n"
            "  --state-dir  task records and seen credentials (default %s; keep it on a folder emptied at boot)\n"
            "  --jobs-dir   root's folder of the per-job folders of job files (default %s)\n"
            "  --grace      seconds between SIGTERM and SIGKILL when a task is ended (default 10)\n"
            "  --peer-timeout  seconds after which a client that went silent and unreachable (a bridge host\n"
            "               that lost its power or network) is gone and its tasks end (default %d; 0: never)\n"
            "  --log        append the log to FILE instead of stderr\n"
            "  --conf       tbmesh.conf, for the metrics' group and the far ends of cables (default: none)\n"
            "  --metrics    serve Prometheus metrics on ADDR[:PORT] (default: the --listen address, port %d);\n"
            "               off: none (doc/METRICS.md)\n"
            "  --metrics-interval  seconds between samples (default %d, 1 to 3600)\n"
            "  --metrics-tasks     on: the running tasks' job and user in the metrics (default); off: left out\n"
            "  --health-dir DIR    where the health check leaves its verdict on this Mac (direct mode: macnode check\n"
            "                      --verdict-dir DIR, as tbmesh-healthcheck runs it): served as tbmesh_health_ok;\n"
            "                      read only when the folder and file are root's alone (default: none)\n"
            "  Runs in the foreground; every refusal is logged with its reason.\n",
            TBM_CONF_AGENT_PORT, STATE_DIR, JOBS_DIR, WIRE_PEER_TIMEOUT_S, AGENT_METRICS_PORT,
            AGENT_METRICS_INTERVAL_S);
}

/* A number of seconds for option `opt`, from min to 3600. */
static int parse_seconds(const char *opt, const char *s, int min, int *out)
{
    long long v;

    if (tbm_parse_ll(s, 10, min, 3600, &v) < 0) {
        fprintf(stderr, "macnoded: --%s '%s' must be a number of seconds from %d to 3600\n", opt, s, min);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* The metrics' default address: the agent's own (--listen's address), on the metrics port. */
static void metrics_default(agent_conf_t *c)
{
    static char addr[300];
    const char *l = c->listen, *colon = strrchr(l, ':');
    size_t n = strlen(l);

    if (l[0] == '[')
        colon = strstr(l, "]:") ? strstr(l, "]:") + 1 : NULL;
    else if (colon && strchr(l, ':') != colon)
        colon = NULL;   /* a bare IPv6 address */
    if (colon)
        n = (size_t)(colon - l);
    snprintf(addr, sizeof(addr), "%.*s:%d", (int)n, l, AGENT_METRICS_PORT);
    c->metrics_listen = addr;
}

static int parse_options(int argc, char **argv, agent_conf_t *c, const char **log, const char **pidfile)
{
    static const struct option opts[] = {
        { "listen", required_argument, NULL, 'l' },    { "node", required_argument, NULL, 'n' },
        { "munge-socket", required_argument, NULL, 'm' }, { "replay", required_argument, NULL, 'r' },
        { "state-dir", required_argument, NULL, 's' }, { "jobs-dir", required_argument, NULL, 'j' },
        { "grace", required_argument, NULL, 'g' },     { "log", required_argument, NULL, 'L' },
        { "pid-file", required_argument, NULL, 'p' },  { "help", no_argument, NULL, 'h' },
        { "conf", required_argument, NULL, 'c' },      { "metrics", required_argument, NULL, 'M' },
        { "metrics-interval", required_argument, NULL, 'I' }, { "metrics-tasks", required_argument, NULL, 'T' },
        { "health-dir", required_argument, NULL, 'H' }, { "peer-timeout", required_argument, NULL, 'P' },
        { NULL, 0, NULL, 0 },
    };
    int o;

    int metrics_set = 0;

    while ((o = getopt_long(argc, argv, "l:n:m:r:s:j:g:L:p:hc:M:I:T:H:P:", opts, NULL)) != -1) {
        switch (o) {
        case 'l': c->listen = optarg; break;
        case 'n': c->node = optarg; break;
        case 'm': c->munge_socket = optarg; break;
        case 'r': c->replay_dir = optarg; break;
        case 's': c->state_dir = optarg; break;
        case 'j': c->jobs_dir = optarg; break;
        case 'g': if (parse_seconds("grace", optarg, 0, &c->grace_s) < 0) return -1; break;
        case 'P': if (parse_seconds("peer-timeout", optarg, 0, &c->peer_timeout_s) < 0) return -1; break;
        case 'L': *log = optarg; break;
        case 'p': *pidfile = optarg; break;
        case 'c': c->tbmesh_conf = optarg; break;
        case 'M': c->metrics_listen = strcmp(optarg, "off") == 0 ? NULL : optarg; metrics_set = 1; break;
        case 'I': if (parse_seconds("metrics-interval", optarg, 1, &c->metrics_interval_s) < 0) return -1; break;
        case 'T':
            if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
                fprintf(stderr, "macnoded: --metrics-tasks '%s' must be on or off\n", optarg);
                return -1;
            }
            c->metrics_tasks = strcmp(optarg, "on") == 0;
            break;
        case 'H': c->health_dir = optarg; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "macnoded: unexpected argument '%s'; see macnoded --help\n", argv[optind]);
        return -1;
    }
    if (!metrics_set)
        metrics_default(c);
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

/* The main loop's parts, for the gate's admit and the pool's new servers. */
struct serving {
    const agent_conf_t *conf;
    agent_gate_t *gate;
    agent_pool_t *pool;
    int lfd;
    int mfd;                 /* the metrics endpoint's listening socket; -1 none */
    pid_t metrics;           /* the metrics process; 0 none (started again after METRICS_RESTART_S) */
    time_t metrics_gone;
    double start_time;
};

/* Kill the tasks whose server is gone and forget expired credentials, in a child (grace periods block),
 * which keeps no copy of the connections waiting at the gate nor of the servers' channels. */
static void sweep(struct serving *sv)
{
    if (sweeper > 0)
        return;
    sweeper = fork();
    if (sweeper == 0) {
        close(sv->lfd);
        if (sv->mfd >= 0)
            close(sv->mfd);
        agent_gate_drop(sv->gate);
        agent_pool_drop(sv->pool);
        agent_kill_tasks(sv->conf, 0, 1, 1);
        agent_seen_sweep(sv->conf);
        _exit(0);
    }
}

static void reap_children(struct serving *sv)
{
    pid_t pid;

    while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
        if (pid == sweeper)
            sweeper = 0;
        else if (pid == sv->metrics) {
            agent_log("metrics: the metrics server ended; it starts again in %d s", METRICS_RESTART_S);
            sv->metrics = 0;
            sv->metrics_gone = time(NULL);
        } else
            agent_pool_reaped(sv->pool, pid);
    }
}

/* In the metrics process: what is the main process's alone. */
static void in_metrics(void *ctx)
{
    struct serving *sv = ctx;

    close(sv->lfd);
    agent_gate_drop(sv->gate);
    agent_pool_drop(sv->pool);
}

/* In a new server: what is the main process's alone. */
static void in_new_server(void *ctx)
{
    struct serving *sv = ctx;

    close(sv->lfd);
    if (sv->mfd >= 0)
        close(sv->mfd);
    agent_gate_drop(sv->gate);
}

static void serve_conn(void *ctx, agent_conn_t *c)
{
    struct serving *sv = ctx;

    c->conf = sv->conf;
    agent_serve(c);
}

/* The gate let c in: root's usage request is answered here; else c goes to a server, unless the agent (or
 * this user) has all the connections it may. */
static void admit(void *ctx, agent_conn_t *c)
{
    struct serving *sv = ctx;
    char why[200], msg[320];
    int rc;

    if (agent_usage_inline(c)) {
        close(c->fd);
        tbm_fdec_free(&c->dec);
        return;
    }
    rc = agent_pool_give(sv->pool, c, why, sizeof(why));
    if (rc == -1) {
        snprintf(msg, sizeof(msg), "busy: %s (%d in all, %d per user, %d kept for root); try again when some "
                 "have ended", why, MAX_CONNS, MAX_CONNS_PER_UID, ROOT_RESERVE);
        agent_log_noisy(AGENT_NOISE_BUSY, tbm_now_ms(), "%s: refused (busy): %s", c->peer, msg);
        wire_send_error(c->fd, "busy", msg);
    } else if (rc < 0) {
        agent_log("%s: %s", c->peer, why);
        wire_send_error(c->fd, "internal", "the agent cannot fork a server for the connection");
    }
    close(c->fd);
    tbm_fdec_free(&c->dec);
}

static void serve(const agent_conf_t *c, int lfd, int mfd, double start_time)
{
    struct serving sv = { .conf = c, .lfd = lfd, .mfd = mfd, .start_time = start_time };
    const agent_pool_limits_t lim = { .max = MAX_CONNS, .max_per_uid = MAX_CONNS_PER_UID,
                                      .root_reserve = ROOT_RESERVE, .idle_keep = AGENT_POOL_IDLE,
                                      .idle_ms = AGENT_POOL_IDLE_S * 1000, .conns = AGENT_POOL_CONNS };
    tbm_err_t err = { { 0 } };
    time_t last = 0;

    sv.gate = agent_gate_new(c, lfd, &err);
    sv.pool = sv.gate ? agent_pool_new(&lim, serve_conn, in_new_server, &sv, &err) : NULL;
    if (!sv.pool) {
        agent_log("cannot serve: %s", err.msg);
        agent_gate_free(sv.gate);
        return;
    }
    while (!stopping) {
        if (time(NULL) - last >= SWEEP_S) {
            sweep(&sv);
            last = time(NULL);
        }
        if (sv.mfd >= 0 && sv.metrics == 0 && time(NULL) - sv.metrics_gone >= METRICS_RESTART_S &&
            (sv.metrics = agent_metrics_start(c, sv.mfd, start_time, in_metrics, &sv)) < 0)
            sv.metrics = 0, sv.metrics_gone = time(NULL);
        agent_gate_turn(sv.gate, 1000, admit, &sv);
        agent_log_tick(tbm_now_ms());
        reap_children(&sv);
        agent_pool_tick(sv.pool, tbm_now_ms());
    }
    agent_gate_free(sv.gate);
    agent_pool_free(sv.pool);
    if (sv.metrics > 0) {
        kill(sv.metrics, SIGTERM);
        waitpid(sv.metrics, NULL, 0);
    }
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
                       .peer_timeout_s = WIRE_PEER_TIMEOUT_S, .request_timeout_ms = 10000, .idle_timeout_ms = 600000, .user_idle_timeout_ms = 10000,
                       .metrics_interval_s = AGENT_METRICS_INTERVAL_S, .metrics_tasks = 1 };
    const char *log = NULL, *pidfile = NULL;
    char host[256];
    tbm_err_t err = { { 0 } };
    agent_user_t root;
    struct timeval tv;
    int lfd, mfd = -1;

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
    agent_log("node %s listening on %s (grace %d s, peer timeout %d s, state %s, jobs %s%s%s)", c.node, c.listen,
              c.grace_s, c.peer_timeout_s,
              c.state_dir, c.jobs_dir, c.replay_dir ? ", replay " : "", c.replay_dir ? c.replay_dir : "");
    if (c.metrics_listen && (mfd = wire_listen(c.metrics_listen, AGENT_METRICS_PORT, &err)) < 0)
        agent_log("metrics: not served: %s (the agent runs tasks without them; give --metrics ADDR:PORT or off)",
                  err.msg);
    else if (c.metrics_listen)
        agent_log("metrics: served on http://%s/metrics, a sample every %d s%s", c.metrics_listen,
                  c.metrics_interval_s, c.metrics_tasks ? "" : ", without tasks");
    gettimeofday(&tv, NULL);
    serve(&c, lfd, mfd, (double)tv.tv_sec + tv.tv_usec / 1e6);
    if (mfd >= 0)
        close(mfd);
    agent_log("stopping");
    close(lfd);
    if (pidfile)
        unlink(pidfile);
    return 0;
}
