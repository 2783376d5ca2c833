/* watch.c: `macnode watch`: on the bridge host (or any host that reaches the agents and has scontrol), one
 * process per Mac of tbmesh.conf keeps a watch request open to its agent (macnoded; root only) and, when the
 * agent says a Thunderbolt link changed (or that changes were missed), runs the Mac's health check with
 * --drain at once (`macnode check --drain --node NAME --agent ADDR`, in a child), so a pulled cable drains
 * the Macs at both ends within seconds and a mended one resumes them. Each time it (re)connects it checks
 * the Mac too, since changes may have happened while it was away. An agent that goes away is tried again
 * with a growing pause (1 s to WATCH_BACKOFF_MAX_S), logged once when it goes and once when it is back (the
 * Mac's own health check, and the first step that cannot reach it, see to an agent that stays away). */
#include "config.h"
#include "watch.h"
#include "client.h"
#include "conf.h"
#include "fileio.h"
#include "health_check.h"
#include "wire.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE          2
#define EXIT_NOCONF         3
#define WATCH_BACKOFF_MAX_S 30
#define WATCH_MACS_MAX      256

typedef struct watch_opts {
    const char *conf, *socket, *scontrol;
} watch_opts_t;

typedef struct mac {
    char name[TBM_HOSTNAME_MAX];
    char agent[TBM_HOSTNAME_MAX + 16];
    pid_t pid;
} mac_t;

static volatile sig_atomic_t stopping;
static pid_t parent;   /* the supervising process: a Mac's watcher ends when it has gone */

#define ORPHAN_POLL_MS 2000

/* The supervisor has gone (killed with SIGKILL): its Mac watchers end too, so that a new one does not watch
 * beside them. */
static int orphaned(void)
{
    return parent > 0 && getppid() != parent;
}

static void wlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void wlog(const char *fmt, ...)
{
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    va_list ap;

    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
    fprintf(stderr, "%s macnode watch[%ld]: ", when, (long)getpid());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

static void watch_usage(FILE *out)
{
    fprintf(out,
            "usage: macnode watch [--conf FILE] [--munge-socket PATH] [--scontrol PATH] [--node NAME ...]\n"
            "                     [--log FILE]\n"
            "  Watch the Thunderbolt links of every Mac of tbmesh.conf (or of the --node ones) through their agents\n"
            "  and run a Mac's health check (macnode check --drain --agent) as soon as one of its links goes down\n"
            "  or up: a pulled cable drains the Macs at both ends with the cable as the reason within seconds, a\n"
            "  mended one resumes them. Runs as root (the agents serve root only) until SIGTERM, on the bridge\n"
            "  host or any host that reaches the agents and has Slurm's scontrol; keep it running with a service\n"
            "  manager (tbmesh-watch.service in PKGDATADIR/systemd). An agent that goes away is tried again\n"
            "  every 1 to %d s.\n"
            "  --conf defaults to $TBMESH_CONF, else tbmesh.conf beside $SLURM_CONF; --log appends to FILE.\n",
            WATCH_BACKOFF_MAX_S);
}

static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}

/* The health check of the Mac, with --drain, in a child (macnode check's own messages go to the log). */
static void check_mac(const watch_opts_t *o, const mac_t *m, const char *why)
{
    char *argv[16];
    int argc = 0, st = 0;
    pid_t pid;

    wlog("%s: %s; checking it", m->name, why);
    argv[argc++] = "check";
    argv[argc++] = "--drain";
    argv[argc++] = "--node";
    argv[argc++] = (char *)m->name;
    argv[argc++] = "--agent";
    argv[argc++] = (char *)m->agent;
    argv[argc++] = "--conf";
    argv[argc++] = (char *)o->conf;
    argv[argc++] = "--scontrol";
    argv[argc++] = (char *)o->scontrol;
    if (o->socket) {
        argv[argc++] = "--munge-socket";
        argv[argc++] = (char *)o->socket;
    }
    argv[argc] = NULL;
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        optind = 0;
        st = macnode_check(argc, argv);
        fflush(NULL);
        _exit(st);
    }
    if (pid < 0) {
        wlog("%s: cannot fork its health check: %s", m->name, strerror(errno));
        return;
    }
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
}

/* Sleep s seconds unless told to stop. */
static void pause_s(int s)
{
    struct timespec ts = { .tv_sec = s, .tv_nsec = 0 };

    while (!stopping && nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Is more already here (a frame in the decoder or bytes on the socket)? */
static int more_waiting(client_t *c)
{
    struct pollfd p = { .fd = c->fd, .events = POLLIN };

    return tbm_fdec_pending(&c->dec) > 0 || poll(&p, 1, 0) > 0;
}

/* One connection's life: the watch request, then the agent's link messages until it goes. Returns 1 when
 * the agent took the watch (the outage, if any, is over), 0 when not; err says why it ended. */
static int watch_once(const watch_opts_t *o, const mac_t *m, int *outage, tbm_err_t *err)
{
    client_t c = { .agent = m->agent, .socket = o->socket, .mac = m->name, .want = m->name, .fd = -1 };
    tbm_msg_t req = { .type = TBM_MSG_WATCH }, msg;
    char names[TBM_WATCH_IFACES_MAX * (TBM_IFACE_MAX + 1) + 1] = "";
    int rc, pending = 0;
    size_t i;
    long long missed = 0;

    if (client_open(&c, err) < 0 || client_call(&c, &req, TBM_MSG_WATCHING, &msg, err) < 0) {
        client_close(&c);
        return 0;
    }
    for (i = 0; i < msg.n_ifaces; i++) {
        strcat(names, " ");
        strcat(names, msg.ifaces[i]);
    }
    tbm_msg_free(&msg);
    wlog("%s: %s: the agent follows%s", m->name, *outage ? "watching again" : "watching",
         names[0] ? names : " no Thunderbolt interface");
    *outage = 0;
    check_mac(o, m, "changes may have come before the watch");
    for (;;) {
        struct pollfd p = { .fd = c.fd, .events = POLLIN };
        if (tbm_fdec_pending(&c.dec) == 0 && poll(&p, 1, ORPHAN_POLL_MS) <= 0) {
            if (orphaned() || stopping) {
                tbm_errprintf(err, "the watcher's supervisor has gone");
                break;
            }
            continue;
        }
        rc = wire_next_msg(c.fd, &c.dec, &msg, 10000, err);
        if (rc == 0)
            tbm_errprintf(err, "the agent of %s at %s closed the connection", m->name, m->agent);
        if (rc <= 0)
            break;
        if (msg.type == TBM_MSG_LINK) {
            wlog("%s: link %s %s (change %lld)", m->name, msg.iface, msg.up ? "up" : "down", (long long)msg.seq);
            pending++;
        } else if (msg.type == TBM_MSG_MISSED) {
            wlog("%s: %lld link messages were not sent (the watch was behind)", m->name, (long long)msg.count);
            missed += msg.count;
            pending++;
        } else if (msg.type == TBM_MSG_ERROR) {
            tbm_errprintf(err, "the agent of %s at %s ended the watch: %s", m->name, m->agent, msg.message);
            tbm_msg_free(&msg);
            break;
        }
        tbm_msg_free(&msg);
        if (pending && !more_waiting(&c)) {   /* one check after a burst of changes */
            check_mac(o, m, pending + missed > 1 ? "its links changed" : "its link changed");
            pending = 0;
            missed = 0;
        }
    }
    client_close(&c);
    return 1;
}

/* A Mac's watcher process: watch, and watch again when the agent goes, until SIGTERM. */
static void watch_mac(const watch_opts_t *o, const mac_t *m)
{
    tbm_err_t err = { { 0 } };
    int outage = 0, backoff = 1;

    wlog("%s: watching its Thunderbolt links through %s", m->name, m->agent);
    while (!stopping && !orphaned()) {
        tbm_errclear(&err);
        if (watch_once(o, m, &outage, &err))
            backoff = 1;
        if (stopping || orphaned())
            break;
        if (!outage) {
            wlog("%s: %s; trying again every 1 to %d s (quietly until it answers)", m->name,
                 tbm_erris(&err) ? err.msg : "the watch ended", WATCH_BACKOFF_MAX_S);
            outage = 1;   /* (its health check sees to an agent that stays away; the watch checks it when back) */
        }
        pause_s(backoff);
        backoff = backoff * 2 > WATCH_BACKOFF_MAX_S ? WATCH_BACKOFF_MAX_S : backoff * 2;
    }
}

static pid_t start_mac(const watch_opts_t *o, const mac_t *m)
{
    pid_t pid = fork();

    if (pid == 0) {
        setpgid(0, 0);   /* its own group: stopping it stops a health check it runs */
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        watch_mac(o, m);
        _exit(0);
    }
    if (pid < 0)
        wlog("%s: cannot fork its watcher: %s", m->name, strerror(errno));
    else
        setpgid(pid, pid);   /* (both sides: whichever runs first) */
    return pid;
}

/* The Macs to watch: the named ones (which must be in tbmesh.conf) or all. */
static int pick_macs(const tbm_conf_t *conf, char **names, int n_names, mac_t *macs, int *n)
{
    size_t i;
    int k, j;

    *n = 0;
    for (i = 0; i < conf->n_nodes && *n < WATCH_MACS_MAX; i++) {
        const tbm_conf_node_t *nd = &conf->nodes[i];
        for (j = 0, k = n_names == 0; j < n_names && !k; j++)
            k = strcmp(names[j], nd->name) == 0;
        if (!k)
            continue;
        snprintf(macs[*n].name, sizeof(macs[*n].name), "%s", nd->name);
        tbm_conf_agent_of(conf, (int)i, macs[*n].agent, sizeof(macs[*n].agent));
        macs[(*n)++].pid = -1;
    }
    for (j = 0; j < n_names; j++)
        if (tbm_conf_node(conf, names[j]) < 0) {
            fprintf(stderr, "macnode watch: --node %s: no such Mac in tbmesh.conf; give a node of its groups\n",
                    names[j]);
            return -1;
        }
    return 0;
}

static void supervise(const watch_opts_t *o, mac_t *macs, int n)
{
    struct sigaction sa;
    pid_t pid;
    int i, st;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    parent = getpid();
    for (i = 0; i < n; i++)
        macs[i].pid = start_mac(o, &macs[i]);
    while (!stopping) {
        pid = wait(&st);
        if (pid < 0) {
            if (errno == ECHILD)
                break;
            continue;
        }
        for (i = 0; i < n; i++)
            if (macs[i].pid == pid) {
                wlog("%s: its watcher process ended (status %d); starting it again in 1 s", macs[i].name, st);
                pause_s(1);
                macs[i].pid = stopping ? -1 : start_mac(o, &macs[i]);
            }
    }
    for (i = 0; i < n; i++)
        if (macs[i].pid > 0)
            if (kill(-macs[i].pid, SIGTERM) < 0)
                kill(macs[i].pid, SIGTERM);
    for (i = 0; i < n; i++)
        if (macs[i].pid > 0)
            while (waitpid(macs[i].pid, &st, 0) < 0 && errno == EINTR)
                ;
    wlog("stopped");
}

int macnode_watch(int argc, char **argv)
{
    static const struct option opts[] = {
        { "conf", required_argument, NULL, 'c' },     { "munge-socket", required_argument, NULL, 'm' },
        { "scontrol", required_argument, NULL, 's' }, { "node", required_argument, NULL, 'n' },
        { "log", required_argument, NULL, 'L' },      { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    watch_opts_t o = { .conf = getenv("TBMESH_CONF"), .socket = getenv("TBMESH_MUNGE_SOCKET"),
                       .scontrol = "scontrol" };
    char conf_buf[4096], *text = NULL, **names = calloc((size_t)argc + 1, sizeof(char *));
    const char *log = NULL;
    mac_t *macs = calloc(WATCH_MACS_MAX, sizeof(*macs));
    int c, n_names = 0, n = 0, rc = EXIT_USAGE;
    tbm_err_t err = { { 0 } };
    tbm_conf_t conf;
    size_t len;

    if (!names || !macs) {
        fprintf(stderr, "macnode watch: out of memory\n");
        free(names);
        free(macs);
        return EXIT_NOCONF;
    }
    while ((c = getopt_long(argc, argv, "c:m:s:n:L:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': o.conf = optarg; break;
        case 'm': o.socket = optarg; break;
        case 's': o.scontrol = optarg; break;
        case 'n': names[n_names++] = optarg; break;
        case 'L': log = optarg; break;
        case 'h': watch_usage(stdout); rc = 0; goto out;
        default: watch_usage(stderr); goto out;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "macnode watch: unexpected argument '%s'; see macnode watch --help\n", argv[optind]);
        goto out;
    }
    if (!o.conf || !*o.conf) {
        tbm_conf_default_path(getenv("SLURM_CONF"), conf_buf, sizeof(conf_buf));
        o.conf = conf_buf;
    }
    rc = EXIT_NOCONF;
    if (!(text = tbm_read_file(o.conf, TBM_CONF_MAX_BYTES, &len, &err)) ||
        tbm_conf_parse(text, len, o.conf, &conf, NULL, &err) < 0) {
        fprintf(stderr, "macnode watch: %s (give tbmesh.conf with --conf)\n", err.msg);
        goto out;
    }
    rc = pick_macs(&conf, names, n_names, macs, &n) < 0 ? EXIT_USAGE : 0;
    tbm_conf_free(&conf);
    if (rc == 0 && n == 0) {
        fprintf(stderr, "macnode watch: %s names no Mac: nothing to watch\n", o.conf);
        rc = EXIT_NOCONF;
    }
    if (rc == 0 && log && (!freopen(log, "a", stderr) || !freopen(log, "a", stdout))) {
        fprintf(stderr, "macnode watch: cannot open the log %s: %s\n", log, strerror(errno));
        rc = EXIT_NOCONF;
    }
    if (rc == 0) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        supervise(&o, macs, n);
    }
out:
    free(text);
    free(names);
    free(macs);
    return rc;
}
