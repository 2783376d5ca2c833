/* metrics.c: `tbmesh metrics`, what Slurm knows of the Macs for Prometheus (tbmesh-metrics(1),
 * doc/METRICS.md): a long-running service on the bridge host serving GET /metrics over HTTP (common/httpd.c),
 * or one exposition on stdout with --once. A thread reads Slurm, tbmesh.conf and the health verdicts every
 * --interval seconds (metrics_read.c) and makes the exposition (lib/slurmmetrics.c) twice: with Slurm's series
 * and without; a scrape takes the first while the last answer Slurm gave is at most --max-age old, else the
 * second. So a scrape costs a copy, and a flood of scrapes asks nothing of slurmctld. */
#include "config.h"
#include "metrics_main.h"
#include "httpd.h"
#include "metrics_read.h"
#include "clock.h"
#include "fileio.h"
#include "record.h"
#include "scalar.h"
#include "slurmmetrics.h"
#include "wire.h"

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXIT_SLURM_DOWN 1
#define EXIT_USAGE      2
#define EXIT_NORUN      3
#define DEFAULT_PORT    9432
#define PROMETHEUS_TYPE "text/plain; version=0.0.4; charset=utf-8"

typedef struct mx_opts {
    mx_source_t src;
    const char *listen, *cluster_opt;
    char conf_path[4096], cluster[64];
    int once, interval_s, max_age_s;
} mx_opts_t;

/* What the server hands out: the two expositions of the last reading (under lock). */
typedef struct mx_served {
    pthread_mutex_t lock;
    char *full, *bare;        /* with Slurm's series, without them */
    long long nodes_at;       /* when the reading in `full` was answered (tbm_now_ms); 0: none */
    int max_age_ms;
} mx_served_t;

static volatile sig_atomic_t stopping;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tbmesh metrics [--listen ADDR[:PORT] | --once] [--conf FILE] [--interval S] [--max-age S]\n"
            "                      [--health-dir DIR] [--no-jobs] [--cluster NAME] [--timeout S]\n"
            "                      [--records-window S] [--records-every S] [--records-grace S]\n"
            "  What Slurm knows of the Macs of tbmesh.conf, in Prometheus' text format (doc/METRICS.md): each Mac's\n"
            "  state and drain reason, the health check's last verdict, each group's Macs by state and its running\n"
            "  jobs, whether Slurm answers. Serves GET /metrics (and a pointer at /) over HTTP until stopped.\n"
            "  --listen ADDR[:PORT]  where to serve (default 0.0.0.0:%d)\n"
            "  --once                print one exposition on stdout and exit, instead of serving\n"
            "  --conf FILE           tbmesh.conf (default $TBMESH_CONF, else beside $SLURM_CONF)\n"
            "  --interval S          read Slurm every S seconds, 1 to 3600 (default 15); scrapes get the last reading\n"
            "  --max-age S           Slurm's series are served while its last answer is at most S old, at least the\n"
            "                        interval plus twice the time limit (default 60, or that); after that only\n"
            "                        tbmesh_slurm_up 0 is served about Slurm\n"
            "  --health-dir DIR      the health check's verdicts, root's (default " TBM_HEALTH_VERDICT_DIR ")\n"
            "  --no-jobs             ask nothing about jobs (a site with PrivateData=jobs)\n"
            "  --records-window S    the Mac jobs that ended in the last S seconds are looked up in the record store\n"
            "                        (tbmesh_job_records_missing; sacct, as root): 0 to 2592000, 0 none (default 86400)\n"
            "  --records-every S     ... at most every S seconds, 1 to 3600 (default 60)\n"
            "  --records-grace S     ... once they have been over S seconds, 0 to 3600 (default 60)\n"
            "  --cluster NAME        tbmesh_exporter_info's cluster (default slurm.conf's ClusterName)\n"
            "  --timeout S           each scontrol and squeue call's time limit, 1 to 300 (default 20; scontrol\n"
            "                        itself gives up on a slurmctld that is down after about 10 s)\n"
            "  Exit: 0 done (or stopped); with --once 1 when Slurm did not answer (the exposition is printed all the\n"
            "  same); 2 bad usage; 3 tbmesh.conf unreadable or the address not to be listened on.\n",
            DEFAULT_PORT);
}

/* A whole number of seconds from 1 to max for option `name`, or -1 (said). */
static int seconds(const char *name, const char *arg, int max, int *out)
{
    if (tbm_parse_uint(arg, max, out) == 0)
        return 0;
    fprintf(stderr, "tbmesh metrics: --%s %s is not a number of seconds from 1 to %d\n", name, arg, max);
    return -1;
}

/* Reads the command line into o. -1 to run, else the exit status. */
static int parse_options(mx_opts_t *o, int argc, char **argv)
{
    static const struct option opts[] = {
        { "listen", required_argument, NULL, 'l' },     { "once", no_argument, NULL, '1' },
        { "conf", required_argument, NULL, 'c' },       { "interval", required_argument, NULL, 'i' },
        { "max-age", required_argument, NULL, 'a' },    { "health-dir", required_argument, NULL, 'd' },
        { "no-jobs", no_argument, NULL, 'J' },          { "cluster", required_argument, NULL, 'C' },
        { "timeout", required_argument, NULL, 't' },    { "help", no_argument, NULL, 'h' },
        { "records-window", required_argument, NULL, 'W' }, { "records-every", required_argument, NULL, 'E' },
        { "records-grace", required_argument, NULL, 'G' },
        { NULL, 0, NULL, 0 },
    };
    const char *env = getenv("TBMESH_CONF");
    int c, timeout_s = 20, max_age_given = 0, floor_s;

    optind = 1;
    while ((c = getopt_long(argc, argv, "l:c:h", opts, NULL)) != -1) {
        switch (c) {
        case 'l': o->listen = optarg; break;
        case '1': o->once = 1; break;
        case 'c': snprintf(o->conf_path, sizeof(o->conf_path), "%s", optarg); break;
        case 'i': if (seconds("interval", optarg, 3600, &o->interval_s) < 0) return EXIT_USAGE; break;
        case 'a': if (seconds("max-age", optarg, 86400, &o->max_age_s) < 0) return EXIT_USAGE; max_age_given = 1; break;
        case 'd': o->src.health_dir = optarg; break;
        case 'J': o->src.no_jobs = 1; break;
        case 'C': o->cluster_opt = optarg; break;
        case 't': if (seconds("timeout", optarg, 300, &timeout_s) < 0) return EXIT_USAGE; break;
        case 'W':
            if (strcmp(optarg, "0") == 0)
                o->src.records_window_s = 0;
            else if (tbm_parse_uint(optarg, 2592000, &o->src.records_window_s) < 0)
                return fprintf(stderr, "tbmesh metrics: --records-window %s is not a number of seconds from 0 (none) to "
                               "2592000 (30 days)\n", optarg), EXIT_USAGE;
            break;
        case 'E': if (seconds("records-every", optarg, 3600, &o->src.records_every_s) < 0) return EXIT_USAGE; break;
        case 'G':
            if (strcmp(optarg, "0") == 0)
                o->src.records_grace_s = 0;
            else if (tbm_parse_uint(optarg, 3600, &o->src.records_grace_s) < 0)
                return fprintf(stderr, "tbmesh metrics: --records-grace %s is not a number of seconds from 0 to 3600\n",
                               optarg), EXIT_USAGE;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc)
        return fprintf(stderr, "tbmesh metrics: unexpected argument '%s'; see tbmesh metrics --help\n", argv[optind]),
               EXIT_USAGE;
    if (o->once && o->listen)
        return fprintf(stderr, "tbmesh metrics: --once prints and exits, --listen serves: give one of them\n"),
               EXIT_USAGE;
    /* a reading is followed by the next after the interval and its two commands: the series must outlive that */
    floor_s = o->interval_s + 2 * timeout_s;
    if (!max_age_given && o->max_age_s < floor_s)
        o->max_age_s = floor_s;
    if (o->max_age_s < floor_s)
        return fprintf(stderr, "tbmesh metrics: --max-age %d is shorter than the interval and two time limits (%d "
                       "s): Slurm's series would come and go between readings; give at least %d\n", o->max_age_s,
                       floor_s, floor_s), EXIT_USAGE;
    o->src.timeout_ms = timeout_s * 1000;
    if (!o->conf_path[0]) {
        if (env && *env)
            snprintf(o->conf_path, sizeof(o->conf_path), "%s", env);
        else
            tbm_conf_default_path(getenv("SLURM_CONF"), o->conf_path, sizeof(o->conf_path));
    }
    o->src.conf_path = o->conf_path;
    return -1;
}

/* The cluster's name: --cluster, else slurm.conf's ClusterName, else "" (said). */
static void find_cluster(mx_opts_t *o)
{
    const char *sc = getenv("SLURM_CONF");
    tbm_err_t err = { { 0 } };
    size_t len;
    char *text;

    if (o->cluster_opt) {
        snprintf(o->cluster, sizeof(o->cluster), "%s", o->cluster_opt);
        return;
    }
    sc = sc && *sc ? sc : "/etc/slurm/slurm.conf";
    text = tbm_read_file(sc, 16u << 20, &len, &err);
    if (!text || !tbm_record_conf_value(text, len, "ClusterName", o->cluster, sizeof(o->cluster)))
        mx_log("the cluster's name is not known (%s): tbmesh_exporter_info has cluster=\"\" (give --cluster NAME)",
               text ? "slurm.conf has no ClusterName=" : err.msg);
    free(text);
}

/* The two expositions of the reading in st. 0, or -1 (said). */
static int expose(const mx_opts_t *o, const mx_state_t *st, char **full, char **bare)
{
    tbm_exporter_view_t v = { &st->conf, PACKAGE_VERSION, o->cluster, st->slurm_up, NULL, NULL, st->have_verdict,
                              st->records_missing };
    tbm_err_t err = { { 0 } };

    *bare = tbm_exporter_text(&v, &err);
    v.nodes = st->have_nodes ? &st->nodes : NULL;
    v.jobs = st->have_jobs ? &st->jobs : NULL;
    *full = *bare ? tbm_exporter_text(&v, &err) : NULL;
    if (*full)
        return 0;
    mx_log("no exposition: %s", err.msg);
    free(*bare);
    *bare = NULL;
    return -1;
}

/* A new reading's expositions into what the server hands out. */
static void publish(mx_served_t *s, const mx_opts_t *o, const mx_state_t *st)
{
    char *full, *bare, *old_full, *old_bare;

    if (expose(o, st, &full, &bare) < 0)
        return;
    pthread_mutex_lock(&s->lock);
    old_full = s->full;
    old_bare = s->bare;
    s->full = full;
    s->bare = bare;
    s->nodes_at = st->have_nodes ? st->nodes_at : 0;
    pthread_mutex_unlock(&s->lock);
    free(old_full);
    free(old_bare);
}

static const char index_page[] =
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>tbmesh metrics</title></head>\n"
    "<body><h1>tbmesh metrics</h1>\n<p>What Slurm knows of the Macs of slurm-tbmesh, for Prometheus: "
    "<a href=\"/metrics\">/metrics</a>.</p></body></html>\n";

static void handler(void *arg, const char *path, httpd_reply_t *r)
{
    mx_served_t *s = arg;
    const char *text;

    if (!strcmp(path, "/")) {
        r->body = strdup(index_page);
        r->content_type = "text/html; charset=utf-8";
    } else if (!strcmp(path, "/metrics")) {
        pthread_mutex_lock(&s->lock);
        text = s->nodes_at && tbm_now_ms() - s->nodes_at <= s->max_age_ms ? s->full : s->bare;
        r->body = text ? strdup(text) : NULL;
        pthread_mutex_unlock(&s->lock);
        r->content_type = PROMETHEUS_TYPE;
        if (!r->body)
            r->status = 503;
    } else {
        return;   /* the server's 404 */
    }
    if (r->body)
        r->len = strlen(r->body);
}

typedef struct refresher {
    const mx_opts_t *o;
    mx_state_t *st;
    mx_served_t *s;
} refresher_t;

/* Reads every interval until stopping; the first reading was made before. */
static void *refresh(void *arg)
{
    refresher_t *r = arg;
    long long next = tbm_now_ms() + (long long)r->o->interval_s * 1000;
    struct timespec tick = { 0, 100 * 1000 * 1000 };

    while (!stopping) {
        if (tbm_now_ms() < next) {
            nanosleep(&tick, NULL);
            continue;
        }
        next = tbm_now_ms() + (long long)r->o->interval_s * 1000;
        mx_read(&r->o->src, r->st);
        publish(r->s, r->o, r->st);
    }
    return NULL;
}

static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}

static void httpd_log(void *arg, const char *line)
{
    (void)arg;
    mx_log("%s", line);
}

/* Serves until SIGTERM or SIGINT. */
static int serve(const mx_opts_t *o, mx_state_t *st)
{
    mx_served_t s = { .max_age_ms = o->max_age_s * 1000 };
    refresher_t r = { o, st, &s };
    httpd_opts_t ho = { .handler = handler, .arg = &s, .log = httpd_log };
    struct sigaction sa;
    sigset_t block, old;
    tbm_err_t err = { { 0 } };
    pthread_t thread;
    char host[256] = "?";
    httpd_t *h;
    int port, started;

    pthread_mutex_init(&s.lock, NULL);
    publish(&s, o, st);
    if (!(h = httpd_open(o->listen ? o->listen : "0.0.0.0", DEFAULT_PORT, &ho, &err))) {
        mx_log("%s (give another --listen ADDR[:PORT])", err.msg);
        pthread_mutex_destroy(&s.lock);
        free(s.full);
        free(s.bare);
        return EXIT_NORUN;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&block);   /* the signals wake the server's poll, not the reader */
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    if (!(started = pthread_create(&thread, NULL, refresh, &r) == 0)) {
        mx_log("cannot start the thread that reads Slurm");
        stopping = 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    wire_split_addr(o->listen ? o->listen : "0.0.0.0", DEFAULT_PORT, host, sizeof(host), &port, &err);
    mx_log("serving http://%s%s%s:%d/metrics (Slurm read every %d s; %s, %zu Macs)", strchr(host, ':') ? "[" : "", host,
           strchr(host, ':') ? "]" : "", httpd_port(h), o->interval_s,
           o->src.conf_path, st->conf.n_nodes);
    httpd_serve(h, &stopping);
    if (started)
        pthread_join(thread, NULL);
    httpd_close(h);
    mx_log("stopped");
    pthread_mutex_destroy(&s.lock);
    free(s.full);
    free(s.bare);
    return 0;
}

int metrics_main(int argc, char **argv)
{
    mx_opts_t o = { .src.health_dir = TBM_HEALTH_VERDICT_DIR, .src.records_window_s = 86400,
                    .src.records_every_s = 60, .src.records_grace_s = 60, .interval_s = 15, .max_age_s = 60 };
    static mx_state_t st;
    char *full, *bare;
    int rc;

    if ((rc = parse_options(&o, argc, argv)) >= 0)
        return rc;
    mx_state_init(&st);
    if (mx_read_conf(&o.src, &st) < 0) {
        fprintf(stderr, "tbmesh metrics: give the lab's tbmesh.conf with --conf FILE\n");
        mx_state_free(&st);
        return EXIT_NORUN;
    }
    find_cluster(&o);
    mx_read(&o.src, &st);
    if (!o.once) {
        rc = serve(&o, &st);
    } else if (expose(&o, &st, &full, &bare) == 0) {
        fputs(st.slurm_up ? full : bare, stdout);
        rc = st.slurm_up ? 0 : EXIT_SLURM_DOWN;
        free(full);
        free(bare);
    } else {
        rc = EXIT_NORUN;
    }
    mx_state_free(&st);
    return rc;
}
