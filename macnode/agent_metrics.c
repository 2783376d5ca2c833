/* agent_metrics.c: the agent's metrics process (agent_metrics.h): it keeps a sampler running below it and
 * serves the sampler's last exposition on the metrics endpoint (common/httpd.h), until the agent's main
 * process is gone. */
#include "config.h"
#include "agent_metrics.h"
#include "agent_log.h"
#include "clock.h"
#include "fileio.h"
#include "httpd.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __APPLE__
#define MTIME(st) ((st).st_mtimespec)
#else
#define MTIME(st) ((st).st_mtim)
#endif

#define SAMPLER_RESTART_MS 5000   /* a sampler that ended is started again after this long */
#define SCRAPE_MAX (4u << 20)     /* the most an exposition may take */

typedef struct server {
    const agent_conf_t *conf;
    char *text;              /* the last exposition read, and what told it apart */
    size_t len;
    struct timespec mtime;
    off_t size;
} server_t;

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}

/* The exposition as the sampler left it last (read again only when it changed); NULL when there is none or
 * it is stale (a sampler stuck or gone: serving its last figures would say a cut cable is still up). */
static const char *exposition(server_t *sv, size_t *len, char *why, size_t whylen)
{
    char path[1024];
    struct stat st;
    tbm_err_t err = { { 0 } };
    struct timeval now;
    char *text;

    agent_metrics_path(sv->conf, path, sizeof(path));
    if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "no sample yet (the sampler starts its first within %d s)",
                 sv->conf->metrics_interval_s);
        return NULL;
    }
    gettimeofday(&now, NULL);
    if (now.tv_sec - st.st_mtime > (time_t)AGENT_METRICS_STALE * sv->conf->metrics_interval_s + 5) {
        snprintf(why, whylen, "the last sample is %ld s old: the sampler is stuck (see the agent's log)",
                 (long)(now.tv_sec - st.st_mtime));
        return NULL;
    }
    if (!sv->text || st.st_size != sv->size || MTIME(st).tv_sec != sv->mtime.tv_sec ||
        MTIME(st).tv_nsec != sv->mtime.tv_nsec) {
        if (!(text = tbm_read_file_owned(path, SCRAPE_MAX, geteuid(), len, &err))) {
            snprintf(why, whylen, "%.400s", err.msg);
            return NULL;
        }
        free(sv->text);
        sv->text = text;
        sv->len = *len;
        sv->size = st.st_size;
        sv->mtime = MTIME(st);
    }
    *len = sv->len;
    return sv->text;
}

static void reply_text(httpd_reply_t *r, int status, const char *text)
{
    r->status = status;
    r->content_type = "text/plain; charset=utf-8";
    r->body = strdup(text);
    r->len = r->body ? strlen(r->body) : 0;
}

/* The answer to one request. */
static void answer(void *ctx, const char *path, httpd_reply_t *r)
{
    server_t *sv = ctx;
    char why[512], body[700];
    const char *text;
    size_t len = 0;

    if (strcmp(path, "/metrics") != 0) {
        reply_text(r, strcmp(path, "/") == 0 ? 200 : 404,
                   strcmp(path, "/") == 0 ? "slurm-tbmesh agent: the metrics are at /metrics\n"
                                          : "not found: the metrics are at /metrics\n");
        return;
    }
    if (!(text = exposition(sv, &len, why, sizeof(why)))) {
        snprintf(body, sizeof(body), "no metrics: %s\n", why);
        agent_log_noisy(AGENT_NOISE_METRICS, tbm_now_ms(), "metrics: a scrape got no figures: %s", why);
        reply_text(r, 503, body);
        return;
    }
    r->status = 200;
    r->content_type = "text/plain; version=0.0.4; charset=utf-8";
    if ((r->body = malloc(len ? len : 1))) {
        memcpy(r->body, text, len);
        r->len = len;
    } else
        reply_text(r, 503, "no metrics: out of memory\n");
}

static void log_line(void *arg, const char *line)
{
    (void)arg;
    agent_log("metrics: %s", line);
}

static pid_t start_sampler(const agent_conf_t *conf, double start_time, int lfd)
{
    pid_t me = getpid(), pid = fork();

    if (pid == 0) {
        close(lfd);
        agent_sampler_run(conf, start_time, me);
        _exit(0);
    }
    if (pid < 0)
        agent_log("metrics: cannot fork the sampler: %s", strerror(errno));
    return pid;
}

static void metrics_main(const agent_conf_t *conf, int lfd, double start_time, pid_t agent)
{
    server_t sv = { .conf = conf };
    httpd_opts_t o = { .handler = answer, .arg = &sv, .log = log_line };
    httpd_t *h;
    tbm_err_t err = { { 0 } };
    struct sigaction sa;
    pid_t sampler, pid;
    long long restart_at = 0;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    if (!(h = httpd_new(lfd, &o, &err))) {
        agent_log("metrics: cannot serve: %s", err.msg);
        return;
    }
    sampler = start_sampler(conf, start_time, lfd);
    while (!stopping && getppid() == agent) {
        httpd_turn(h, 500);
        while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
            if (pid == sampler) {
                agent_log("metrics: the sampler ended; it starts again in %d s", SAMPLER_RESTART_MS / 1000);
                sampler = -1;
                restart_at = tbm_now_ms() + SAMPLER_RESTART_MS;
            }
        if (sampler < 0 && tbm_now_ms() >= restart_at)
            sampler = start_sampler(conf, start_time, lfd);
    }
    if (sampler > 0) {
        kill(sampler, SIGTERM);
        waitpid(sampler, NULL, 0);
    }
    httpd_close(h);
    free(sv.text);
}

pid_t agent_metrics_start(const agent_conf_t *conf, int lfd, double start_time, void (*drop)(void *ctx),
                          void *ctx)
{
    pid_t agent = getpid(), pid = fork();

    if (pid == 0) {
        if (drop)
            drop(ctx);
        signal(SIGCHLD, SIG_DFL);
        metrics_main(conf, lfd, start_time, agent);
        _exit(0);
    }
    if (pid < 0)
        agent_log("metrics: cannot fork the metrics server: %s", strerror(errno));
    return pid;
}
