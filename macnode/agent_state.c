/* agent_state.c: macnoded's state folder (task records, seen credentials) and killing a task's process group
 * with a grace period (see agent.h). */
#include "config.h"
#include "agent.h"
#include "agent_log.h"
#include "clock.h"
#include "fileio.h"
#include "scalar.h"
#include "json_read.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PATH_LEN 4096

/* Make path's missing parents (0755), then path itself with mode; it must end up a real folder of ours. */
static int make_dir(const char *path, mode_t mode, tbm_err_t *err)
{
    char parent[PATH_LEN];
    struct stat st;
    char *slash;

    snprintf(parent, sizeof(parent), "%s", path);
    for (slash = strchr(parent + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (mkdir(parent, 0755) < 0 && errno != EEXIST)
            return tbm_errprintf(err, "%s: cannot create: %s", parent, strerror(errno));
        *slash = '/';
    }
    if (mkdir(path, mode) < 0 && errno != EEXIST)
        return tbm_errprintf(err, "%s: cannot create: %s", path, strerror(errno));
    if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
        return tbm_errprintf(err, "%s: must be a folder owned by uid %u (not a link); remove it and restart",
                             path, (unsigned)geteuid());
    if (st.st_mode & 022)
        return tbm_errprintf(err, "%s: must not be writable by group or others (mode 0%o); chmod go-w it, or "
                             "remove it, and restart", path, (unsigned)(st.st_mode & 07777));
    return 0;
}

int agent_state_init(const agent_conf_t *conf, tbm_err_t *err)
{
    char seen[PATH_LEN], usage[PATH_LEN];

    snprintf(seen, sizeof(seen), "%s/seen", conf->state_dir);
    snprintf(usage, sizeof(usage), "%s/usage", conf->state_dir);
    return make_dir(conf->state_dir, 0700, err) < 0 || make_dir(seen, 0700, err) < 0 ||
                   make_dir(usage, 0700, err) < 0 || agent_jobs_base(conf, err) < 0
               ? -1
               : 0;
}

/* Seen credentials ------------------------------------------------------------------------------------ */

int agent_cred_digest(const char *cred, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0, i;

    if (!EVP_Digest(cred, strlen(cred), md, &n, EVP_sha256(), NULL) || n != 32)
        return -1;
    for (i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return 0;
}

int agent_seen(const agent_conf_t *conf, const char *cred, int64_t expires, tbm_err_t *err)
{
    char hex[65], path[PATH_LEN], text[32];
    int fd, n;

    if (agent_cred_digest(cred, hex) < 0)
        return tbm_errprintf(err, "cannot digest a credential (libcrypto)");
    snprintf(path, sizeof(path), "%s/seen/%s", conf->state_dir, hex);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST)
        return 0;
    if (fd < 0)
        return tbm_errprintf(err, "%s: cannot record a seen credential: %s", path, strerror(errno));
    n = snprintf(text, sizeof(text), "%lld\n", (long long)expires);
    if (write(fd, text, (size_t)n) != n) {
        close(fd);
        return tbm_errprintf(err, "%s: cannot write: %s", path, strerror(errno));
    }
    close(fd);
    return 1;
}

void agent_seen_sweep(const agent_conf_t *conf)
{
    char dir[PATH_LEN], path[PATH_LEN + 300], *text;
    DIR *d;
    struct dirent *e;
    size_t len;
    long long expires;
    time_t now = time(NULL);

    snprintf(dir, sizeof(dir), "%s/seen", conf->state_dir);
    d = opendir(dir);
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        text = tbm_read_file(path, 64, &len, NULL);
        if (text)
            text[strcspn(text, "\n")] = '\0';
        if (!text || tbm_parse_ll(text, 10, 0, INT64_MAX, &expires) < 0 || expires < (long long)now)
            unlink(path);
        free(text);
    }
    if (d)
        closedir(d);
}

/* Task records ---------------------------------------------------------------------------------------- */

/* The serving process holds a lock on its task record for as long as it lives: a record nobody locks
 * belongs to a dead server (however it died, and whatever its pid is now). The record is made in two halves
 * so that no task ever runs unrecorded: the server creates and locks it before the task's process starts,
 * and that process writes its group and puts the record in place before its exec. One task per server: the
 * record's state is this process's. */
static struct {
    int fd;                               /* locked; -1 when there is none */
    char path[PATH_LEN], tmp[PATH_LEN + 16];
    agent_task_rec_t rec;
} task_rec = { .fd = -1 };

int agent_task_record_open(const agent_conf_t *conf, const agent_task_rec_t *r, tbm_err_t *err)
{
    task_rec.rec = *r;
    snprintf(task_rec.path, sizeof(task_rec.path), "%s/task-%ld.json", conf->state_dir, (long)r->server);
    /* locked before it is in place, so that no sweep ever sees it unlocked. Not synced to the disk: it
     * serves an agent restarted while the Mac runs on (the page cache has it); after a crash of the Mac its
     * tasks are gone too, and a torn task_rec is removed by the sweep. Syncing made every launch wait for the
     * disk (2-8 ms on an ext4 build machine). */
    snprintf(task_rec.tmp, sizeof(task_rec.tmp), "%s.tmp.XXXXXX", task_rec.path);
    task_rec.fd = mkstemp(task_rec.tmp);
    if (task_rec.fd < 0)
        return tbm_errprintf(err, "%s: cannot create the task record: %s", task_rec.tmp, strerror(errno));
    fcntl(task_rec.fd, F_SETFD, FD_CLOEXEC);
    if (flock(task_rec.fd, LOCK_EX | LOCK_NB) < 0) {
        tbm_errprintf(err, "%s: cannot lock the task record: %s", task_rec.tmp, strerror(errno));
        unlink(task_rec.tmp);
        close(task_rec.fd);
        task_rec.fd = -1;
        return -1;
    }
    return 0;
}

int agent_task_record_place(pid_t pgid)
{
    char text[256];
    int n;

    if (task_rec.fd < 0)
        return -1;
    n = snprintf(text, sizeof(text), "{\"job\":%u,\"step\":%u,\"uid\":%u,\"pgid\":%ld,\"server\":%ld}\n",
                 task_rec.rec.job, task_rec.rec.step, task_rec.rec.uid, (long)pgid, (long)task_rec.rec.server);
    if (pwrite(task_rec.fd, text, (size_t)n, 0) != n || rename(task_rec.tmp, task_rec.path) < 0)
        return -1;
    return 0;
}

int agent_task_recorded(tbm_err_t *err)
{
    struct stat st;

    if (task_rec.fd < 0)
        return 0;
    if (lstat(task_rec.path, &st) == 0 && S_ISREG(st.st_mode))
        return 1;
    tbm_errprintf(err, "%s: the task's process could not put its task_rec in place", task_rec.path);
    unlink(task_rec.tmp);
    close(task_rec.fd);
    task_rec.fd = -1;
    return 0;
}

void agent_task_forget(void)
{
    if (task_rec.fd < 0)
        return;
    unlink(task_rec.path);
    unlink(task_rec.tmp);
    close(task_rec.fd);
    task_rec.fd = -1;
}

static int read_record(const char *path, agent_task_rec_t *r)
{
    size_t len;
    char *text = tbm_read_file(path, 4096, &len, NULL);
    json_object *o = text ? tbm_proto_json(text, len, "task record", NULL) : NULL;
    int64_t job = 0, step = 0, uid = 0, pgid = 0, server = 0;
    int rc = -1;

    if (o && tbm_json_get_int(o, "task", "job", 1, 0, UINT32_MAX, &job, NULL) == 0 &&
        tbm_json_get_int(o, "task", "step", 1, 0, UINT32_MAX, &step, NULL) == 0 &&
        tbm_json_get_int(o, "task", "uid", 1, 0, UINT32_MAX, &uid, NULL) == 0 &&
        tbm_json_get_int(o, "task", "pgid", 1, 2, INT32_MAX, &pgid, NULL) == 0 &&
        tbm_json_get_int(o, "task", "server", 1, 2, INT32_MAX, &server, NULL) == 0) {
        r->job = (uint32_t)job, r->step = (uint32_t)step, r->uid = (uint32_t)uid;
        r->pgid = (pid_t)pgid, r->server = (pid_t)server;
        rc = 0;
    }
    if (o)
        json_object_put(o);
    free(text);
    return rc;
}

/* Wait until the group is gone (reaping the leader when it is ours), at most ms. 1 when gone. */
static int group_gone_within(pid_t pgid, pid_t leader, long long ms)
{
    long long end = tbm_now_ms() + ms;
    struct timespec pause = { 0, 20 * 1000 * 1000 };

    for (;;) {
        if (leader > 0)
            waitpid(leader, NULL, WNOHANG);
        if (kill(-pgid, 0) < 0 && errno == ESRCH)
            return 1;
        if (tbm_now_ms() >= end)
            return 0;
        nanosleep(&pause, NULL);
    }
}

void agent_kill_group(pid_t pgid, pid_t leader, int grace_s)
{
    if (pgid <= 1)
        return;
    kill(-pgid, SIGTERM);
    kill(-pgid, SIGCONT);
    if (group_gone_within(pgid, leader, (long long)grace_s * 1000))
        return;
    agent_log("task group %ld outlived SIGTERM by %d s: SIGKILL", (long)pgid, grace_s);
    kill(-pgid, SIGKILL);
    if (!group_gone_within(pgid, leader, 5000))
        agent_log("task group %ld is still there 5 s after SIGKILL", (long)pgid);
}

static int server_alive(const char *record)
{
    int fd = open(record, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), alive;

    if (fd < 0)
        return 0;
    alive = flock(fd, LOCK_EX | LOCK_NB) < 0;
    close(fd);
    return alive;
}

/* Call fn on every task record of the state folder (a file that is not one is removed); the sum of what fn
 * returned. */
static int each_record(const agent_conf_t *conf, int (*fn)(const agent_conf_t *conf, const char *path,
                                                         const agent_task_rec_t *r, void *arg), void *arg)
{
    char path[PATH_LEN + 300];
    DIR *d = opendir(conf->state_dir);
    struct dirent *e;
    agent_task_rec_t r;
    int n = 0;

    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "task-", 5) != 0 || strstr(e->d_name, ".tmp."))
            continue;
        snprintf(path, sizeof(path), "%s/%s", conf->state_dir, e->d_name);
        if (read_record(path, &r) < 0) {
            agent_log("state: %s is not a task record; removed", path);
            unlink(path);
            continue;
        }
        n += fn(conf, path, &r, arg);
    }
    if (d)
        closedir(d);
    return n;
}

typedef struct which {
    uint32_t job, step;
    int all, orphans, any_step;
    uint32_t uid;        /* count_others: whose other jobs */
} which_t;

static int count_running(const agent_conf_t *conf, const char *path, const agent_task_rec_t *r, void *arg)
{
    const which_t *w = arg;

    (void)conf;
    return r->job == w->job && (w->any_step || r->step == w->step) && server_alive(path);
}

int agent_tasks_running(const agent_conf_t *conf, uint32_t job, uint32_t step)
{
    which_t w = { job, step, 0, 0, 0, 0 };

    return each_record(conf, count_running, &w);
}

typedef struct visit {
    void (*fn)(const agent_task_rec_t *r, void *ctx);
    void *ctx;
} visit_t;

static int visit_running(const agent_conf_t *conf, const char *path, const agent_task_rec_t *r, void *arg)
{
    const visit_t *v = arg;

    (void)conf;
    if (!server_alive(path))
        return 0;
    v->fn(r, v->ctx);
    return 1;
}

int agent_tasks_each(const agent_conf_t *conf, void (*fn)(const agent_task_rec_t *r, void *ctx), void *ctx)
{
    visit_t v = { fn, ctx };

    return each_record(conf, visit_running, &v);
}

int agent_tasks_wait(const agent_conf_t *conf, uint32_t job, int ms)
{
    which_t w = { job, 0, 0, 0, 1, 0 };
    long long end = tbm_now_ms() + ms;
    struct timespec pause = { 0, 20 * 1000 * 1000 };
    int left;

    while ((left = each_record(conf, count_running, &w)) > 0 && tbm_now_ms() < end)
        nanosleep(&pause, NULL);
    return left;
}

static int count_others(const agent_conf_t *conf, const char *path, const agent_task_rec_t *r, void *arg)
{
    const which_t *w = arg;

    (void)conf;
    return r->job != w->job && r->uid == w->uid && server_alive(path);
}

int agent_other_jobs(const agent_conf_t *conf, uint32_t job, uint32_t uid)
{
    which_t w = { job, 0, 0, 0, 0, uid };

    return each_record(conf, count_others, &w);
}

static int kill_one(const agent_conf_t *conf, const char *path, const agent_task_rec_t *r, void *arg)
{
    const which_t *w = arg;
    int alive = server_alive(path);

    if ((!w->all && r->job != w->job) || (w->orphans && alive))
        return 0;
    agent_log("killing task group %ld of job %u step %u (uid %u)%s", (long)r->pgid, r->job, r->step, r->uid,
              w->orphans ? ": its server is gone" : "");
    agent_kill_group(r->pgid, 0, conf->grace_s);
    if (!alive)
        unlink(path);   /* a live server forgets its task itself, once it has ended what the task left */
    return 1;
}

int agent_kill_tasks(const agent_conf_t *conf, uint32_t job, int all, int orphans)
{
    which_t w = { job, 0, all, orphans, 0, 0 };

    return each_record(conf, kill_one, &w);
}
