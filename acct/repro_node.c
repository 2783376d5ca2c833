/* repro_node.c: facts a record gathers on the node (see repro_node.h). */
#include "config.h"
#include "repro_node.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "facts.h"
#include "facts_json.h"
#include "fileio.h"
#include "json_read.h"
#include "proto.h"
#include "record.h"
#include "run.h"
#include "strbuf.h"

#define META_HEAD 65536   /* the headers come first; the description after them can be long */
#define OUT_MAX (8u << 20)
#define PROBE_OUT_MAX (4u << 20)   /* the most read of `macnode probe` */

const char *repro_env(char *const *env, const char *name)
{
    size_t n = strlen(name);

    for (; env && *env; env++)
        if (!strncmp(*env, name, n) && (*env)[n] == '=')
            return *env + n + 1;
    return NULL;
}

/* The first executable `name` on PATH, into out. */
static int on_path(char *const *env, const char *name, char *out, size_t len)
{
    const char *path = repro_env(env, "PATH");
    char dirs[8192], *d, *save = NULL;

    snprintf(dirs, sizeof(dirs), "%s", path ? path : "/usr/bin:/bin");
    for (d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        tbm_record_fmt(out, len, "%s/%s", *d ? d : ".", name);
        if (access(out, X_OK) == 0)
            return 1;
    }
    return 0;
}

/* The first `max` bytes of a regular file (not through a symlink at its end), NUL-terminated; NULL if none. */
static char *read_head(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    char *buf;
    ssize_t n;

    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(buf = malloc(max + 1))) {
        close(fd);
        return NULL;
    }
    n = read(fd, buf, max);
    close(fd);
    if (n <= 0) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

/* Every dist-info folder below lib/python3.X/{site,dist}-packages of prefix: distributions into `dists`. */
static void scan_site(const char *site, json_object *dists, json_object *seen)
{
    char meta[PATH_MAX + 300], name[256], version[128];
    struct dirent *e;
    tbm_err_t err;
    size_t len;
    char *text;
    DIR *d = opendir(site);

    if (!d)
        return;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 11 || strcmp(e->d_name + n - 10, ".dist-info") != 0)
            continue;
        tbm_record_fmt(meta, sizeof(meta), "%s/%s/METADATA", site, e->d_name);
        if (!(text = read_head(meta, META_HEAD, &len)))
            continue;
        if (tbm_pydist_metadata(text, len, name, sizeof(name), version, sizeof(version), &err) == 0) {
            tbm_pydist_normalize(name);
            if (!json_object_object_get_ex(seen, name, NULL)) {   /* the first on the path wins, as import does */
                json_object *o = json_object_new_object();
                json_object_object_add(o, "name", json_object_new_string(name));
                json_object_object_add(o, "version", json_object_new_string(version));
                json_object_array_add(dists, o);
                json_object_object_add(seen, name, json_object_new_string(version));
            }
        }
        free(text);
    }
    closedir(d);
}

static int cmp_dist(const void *a, const void *b)
{
    return strcmp(tbm_json_str(*(json_object *const *)a, "name"), tbm_json_str(*(json_object *const *)b, "name"));
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(json_object_get_string(*(json_object *const *)a), json_object_get_string(*(json_object *const *)b));
}

static void python_version(const char *prefix, const char *exe, char *out, size_t len)
{
    char cfg[PATH_MAX + 32], real[PATH_MAX], *text, *p;
    tbm_err_t err;
    size_t n;

    out[0] = '\0';
    tbm_record_fmt(cfg, sizeof(cfg), "%s/pyvenv.cfg", prefix);
    if ((text = tbm_read_file(cfg, 65536, &n, &err))) {
        if ((p = strstr(text, "\nversion")) || (p = strstr(text, "version")))
            if ((p = strchr(p, '=')) && sscanf(p + 1, " %63[0-9.]", out) == 1) {
                free(text);
                return;
            }
        free(text);
    }
    if (exe && realpath(exe, real) && (p = strrchr(real, '/')) && !strncmp(p + 1, "python3.", 8))
        snprintf(out, len, "%s", p + 7);
}

json_object *repro_python_env(char *const *env)
{
    const char *venv = repro_env(env, "VIRTUAL_ENV"), *conda = repro_env(env, "CONDA_PREFIX"), *source;
    char prefix[PATH_MAX], exe[PATH_MAX], real[PATH_MAX], site[PATH_MAX + 64], version[64], *slash;
    json_object *py, *dists = json_object_new_array(), *seen = json_object_new_object(), *v;
    static const char *const subs[] = { "site-packages", "dist-packages" };
    struct dirent *e;
    size_t i;
    DIR *d;

    if (venv && *venv) {
        source = "VIRTUAL_ENV";
        snprintf(prefix, sizeof(prefix), "%s", venv);
        tbm_record_fmt(exe, sizeof(exe), "%s/bin/python3", prefix);
    } else if (conda && *conda) {
        source = "CONDA_PREFIX";
        snprintf(prefix, sizeof(prefix), "%s", conda);
        tbm_record_fmt(exe, sizeof(exe), "%s/bin/python3", prefix);
    } else if (on_path(env, "python3", exe, sizeof(exe))) {
        source = "PATH";
        snprintf(prefix, sizeof(prefix), "%s", realpath(exe, real) ? real : exe);
        for (i = 0; i < 2 && (slash = strrchr(prefix, '/')); i++)
            *slash = '\0';   /* PREFIX/bin/python3.X -> PREFIX */
        if (!prefix[0])
            snprintf(prefix, sizeof(prefix), "/");
    } else {
        json_object_put(dists);
        json_object_put(seen);
        return tbm_record_absent("no VIRTUAL_ENV, no CONDA_PREFIX and no python3 on the job's PATH");
    }
    py = json_object_new_object();
    json_object_object_add(py, "prefix", json_object_new_string(prefix));
    json_object_object_add(py, "source", json_object_new_string(source));
    json_object_object_add(py, "executable", json_object_new_string(exe));
    python_version(prefix, exe, version, sizeof(version));
    json_object_object_add(py, "version", version[0] ? json_object_new_string(version)
                                                     : tbm_record_absent("neither pyvenv.cfg nor the executable's "
                                                                         "name says which Python it is"));
    tbm_record_fmt(site, sizeof(site), "%s/lib", prefix);
    if ((d = opendir(site))) {
        json_object *dirs = json_object_new_array();
        while ((e = readdir(d)))
            if (!strncmp(e->d_name, "python3", 7))
                json_object_array_add(dirs, json_object_new_string(e->d_name));
        closedir(d);
        json_object_array_sort(dirs, cmp_name);
        for (i = 0; i < json_object_array_length(dirs); i++)
            for (size_t k = 0; k < 2; k++) {
                tbm_record_fmt(site, sizeof(site), "%s/lib/%s/%s", prefix,
                               json_object_get_string(json_object_array_get_idx(dirs, i)), subs[k]);
                scan_site(site, dists, seen);
            }
        json_object_put(dirs);
    }
    json_object_array_sort(dists, cmp_dist);
    json_object_object_add(py, "mlx", (v = json_object_object_get(seen, "mlx")) ? json_object_get(v)
                                      : tbm_record_absent("mlx is not installed in this environment"));
    json_object_object_add(py, "mlx_lm", (v = json_object_object_get(seen, "mlx-lm")) ? json_object_get(v)
                                         : tbm_record_absent("mlx-lm is not installed in this environment"));
    json_object_object_add(py, "mlx_metal", (v = json_object_object_get(seen, "mlx-metal")) ? json_object_get(v)
                                            : tbm_record_absent("mlx-metal is not installed in this environment"));
    json_object_object_add(py, "distributions", dists);
    json_object_put(seen);
    return py;
}

json_object *repro_openmpi(char *const *env)
{
    char exe[PATH_MAX], real[PATH_MAX], pc[PATH_MAX + 64], why[PATH_MAX + 200], *slash, *text, *p;
    static const char *const where[] = { "lib/pkgconfig", "lib/x86_64-linux-gnu/pkgconfig",
                                         "lib/aarch64-linux-gnu/pkgconfig", "lib64/pkgconfig" };
    char version[64];
    size_t i, len;

    if (!on_path(env, "mpirun", exe, sizeof(exe)))
        return tbm_record_absent("no mpirun on the job's PATH");
    if (!realpath(exe, real))
        snprintf(real, sizeof(real), "%s", exe);
    for (i = 0; i < 2 && (slash = strrchr(real, '/')); i++)
        *slash = '\0';
    for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
        char pcreal[PATH_MAX];
        tbm_record_fmt(pc, sizeof(pc), "%s/%s/ompi.pc", real, where[i]);
        if (realpath(pc, pcreal) && (text = read_head(pcreal, 65536, &len))) {   /* read as the user */
            p = strstr(text, "\nVersion:");
            if (p && sscanf(p + 9, " %63s", version) == 1) {
                free(text);
                return json_object_new_string(version);
            }
            free(text);
        }
    }
    tbm_record_fmt(why, sizeof(why), "mpirun is %s, but no ompi.pc beside it under %s says its version", exe,
                   real[0] ? real : "/");
    return tbm_record_absent(why);
}

json_object *repro_tail(const char *path, int lines)
{
    char buf[65536], why[600];
    json_object *a;
    ssize_t n;
    off_t size;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), i, count = 0;
    char *p, *end;

    if (fd < 0) {
        tbm_record_fmt(why, sizeof(why), "cannot read %s: %s", path, strerror(errno));
        return tbm_record_absent(why);
    }
    size = lseek(fd, 0, SEEK_END);
    lseek(fd, size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0, SEEK_SET);
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n < 0)
        return tbm_record_absent("the file could not be read");
    buf[n] = '\0';
    while (n > 0 && buf[n - 1] == '\n')
        buf[--n] = '\0';
    for (p = buf + n; p > buf && count < lines; p--)
        if (p[-1] == '\n')
            count++;
    if (count == lines)
        p++;
    a = json_object_new_array();
    for (i = 0; *p && i < lines; i++) {
        end = strchr(p, '\n');
        if (end)
            *end = '\0';
        for (char *c = p; *c; c++)
            if ((unsigned char)*c < 0x20 && *c != '\t')
                *c = '?';
        json_object_array_add(a, json_object_new_string_len(p, (int)strnlen(p, 1000)));
        if (!end)
            break;
        p = end + 1;
    }
    return a;
}

/* How often the reader's state is looked at while it says nothing (ms). */
#define WATCH_MS 200

/* Read all of the reader's fd until EOF or the deadline, watching the reader (pid): once it has been stopped
 * (a signal from a process of its uid, which may signal it: SIGSTOP, SIGTSTP), stop waiting (*stopped = the
 * signal), or root would wait the whole deadline for a reader its user holds. *status, *reaped: the reader's
 * end when it was reaped here. malloc'd text, or NULL. */
static char *read_until(int fd, pid_t pid, long long deadline_ms, size_t max, int *status, int *reaped, int *stopped)
{
    tbm_strbuf_t sb;
    char buf[65536];
    struct pollfd p = { fd, POLLIN, 0 };
    ssize_t n;
    long long left;
    int st, r;

    tbm_sb_init(&sb);
    for (;;) {
        if (!*reaped && (r = (int)waitpid(pid, &st, WNOHANG | WUNTRACED | WCONTINUED)) == pid) {
            if (WIFSTOPPED(st) || WIFCONTINUED(st)) {
                *stopped = WIFSTOPPED(st) ? WSTOPSIG(st) : SIGCONT;
                break;
            }
            *status = st, *reaped = 1;   /* it has ended: what it wrote is in the pipe */
        }
        left = deadline_ms - tbm_now_ms();
        if (left <= 0)
            break;
        r = poll(&p, 1, (int)(left < WATCH_MS ? left : WATCH_MS));
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0)
            continue;
        n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return tbm_sb_take(&sb);
        if (sb.len + (size_t)n > max)
            break;
        tbm_sb_append(&sb, buf, (size_t)n);
    }
    tbm_sb_free(&sb);
    return NULL;
}

json_object *repro_as_user(uid_t uid, gid_t gid, json_object *(*fn)(void *arg), void *arg, int timeout_s,
                           tbm_err_t *err)
{
    int fd[2], status = 0, reaped = 0, stopped = 0;
    pid_t pid;
    char *text;
    json_object *out;

    if (pipe2(fd, O_CLOEXEC) < 0)
        return tbm_errprintf(err, "cannot make a pipe: %s", strerror(errno)), NULL;
    if ((pid = fork()) < 0) {
        close(fd[0]);
        close(fd[1]);
        return tbm_errprintf(err, "cannot fork: %s", strerror(errno)), NULL;
    }
    if (pid == 0) {
        const char *s;
        close(fd[0]);
        if ((getuid() == 0 || geteuid() == 0) &&
            (setgroups(1, &gid) < 0 || setgid(gid) < 0 || setuid(uid) < 0 || setuid(0) == 0))
            _exit(3);
        out = fn(arg);
        s = out ? json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN) : "null";
        tbm_write_all(fd[1], s, strlen(s));
        json_object_put(out);
        _exit(0);
    }
    close(fd[1]);
    text = read_until(fd[0], pid, tbm_now_ms() + timeout_s * 1000LL, OUT_MAX, &status, &reaped, &stopped);
    close(fd[0]);
    if (!text && !reaped)
        kill(pid, SIGKILL);
    while (!reaped && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (stopped) {
        free(text);
        return tbm_errprintf(err, "the reader as uid %u was stopped (signal %d, which only root and that user "
                             "may send): left out", (unsigned)uid, stopped), NULL;
    }
    if (!text)
        return tbm_errprintf(err, "gave no answer within %d s", timeout_s), NULL;
    out = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? tbm_json_parse(text, strlen(text), err) : NULL;
    if (!out && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        tbm_errprintf(err, "the reader as uid %u failed (status %d)", (unsigned)uid, status);
    free(text);
    return out;
}

/* How `macnode probe` runs: our environment, its stderr dropped, its facts at most PROBE_OUT_MAX bytes. */
static run_opts_t probe_opts(int timeout_ms)
{
    extern char **environ;
    run_opts_t o = { .env = environ, .timeout_ms = timeout_ms, .max = PROBE_OUT_MAX };

    return o;
}

int repro_probe_start(repro_probe_t *p, const char *macnode, const char *agent, const char *node,
                      const char *munge_socket)
{
    /* --node: the Mac the agent must prove to be, whatever tbmesh.conf the probe would find itself */
    const char *argv[] = { macnode, "probe", "--agent", agent, "--node", node, "--compact",
                           munge_socket && *munge_socket ? "--munge-socket" : NULL, munge_socket, NULL };
    run_opts_t o = probe_opts(0);
    run_proc_t run;
    int rc = run_start(argv, &o, &run, NULL);

    p->pid = run.pid;
    p->fd = run.out;
    return rc;
}

void repro_probe_finish(repro_probe_t *p, json_object *node, const char *agent, int timeout_ms)
{
    char why[600];
    tbm_host_facts_t *f = NULL;
    tbm_err_t err = { { 0 } }, ran = { { 0 } };
    run_proc_t run = { .pid = p->pid, .out = p->fd, .err = -1, .name = "macnode" };
    run_opts_t o = probe_opts(timeout_ms);
    run_out_t r;
    int rc = run_finish(&run, &o, &r, &ran);
    const char *text = rc >= 0 ? r.out : NULL;

    p->fd = p->pid = -1;
    if (text && *text && (f = malloc(sizeof(*f))) && tbm_facts_from_json(text, strlen(text), f, &err) == 0) {
        tbm_record_node_facts(node, f);
    } else {
        tbm_record_fmt(why, sizeof(why), "macnode probe --agent %s gave no facts (%s)", agent,
                       r.timed_out ? "no answer in time" : rc < 0 && r.status > 128 ? "it died"
                       : rc < 0 ? ran.msg : err.msg[0] ? err.msg : "the agent could not be asked");
        tbm_record_node_absent(node, why);
    }
    free(f);
    run_out_free(&r);
}

/* ---- what the record learns as the job's user, and from every node ---- */

json_object *repro_user_facts(void *arg)
{
    repro_user_work_t *w = arg;
    json_object *out = json_object_new_object(), *digests = json_object_new_array();
    tbm_digest_cache_t *cache = tbm_digest_cache_new();
    tbm_err_t err;
    char path[PATH_MAX + 8];
    char *text;
    size_t i;

    if (w->python) {
        json_object_object_add(out, "python", repro_python_env(w->env));
        json_object_object_add(out, "openmpi", repro_openmpi(w->env));
    }
    if (w->cache_text)
        tbm_digest_cache_load(cache, w->cache_text, strlen(w->cache_text), &err);
    for (i = 0; w->paths && i < json_object_array_length(w->paths); i++) {
        const char *p = json_object_get_string(json_object_array_get_idx(w->paths, i));
        if (p[0] == '/')
            snprintf(path, sizeof(path), "%s", p);
        else
            tbm_record_fmt(path, sizeof(path), "%s/%s", w->work_dir ? w->work_dir : ".", p);
        json_object_array_add(digests, tbm_digest_path(path, cache));
    }
    json_object_object_add(out, "digests", digests);
    if (w->stderr_path)
        json_object_object_add(out, "stderr_tail", repro_tail(w->stderr_path, w->tail_lines));
    if ((text = tbm_digest_cache_text(cache))) {
        json_object_object_add(out, "cache", json_object_new_string(text));
        free(text);
    }
    json_object_object_add(out, "bytes_read", json_object_new_int64((int64_t)tbm_digest_cache_bytes(cache)));
    tbm_digest_cache_free(cache);
    return out;
}

/* The Python and Open MPI facts of node i: read where the batch step runs on the Mac itself (direct mode). */
static void node_python(const repro_nodes_t *in, size_t i, json_object *node)
{
    json_object *v;
    const char *why;

    if (i == in->node_id && !in->bridge && in->user && (v = json_object_object_get(in->user, "python"))) {
        json_object_object_add(node, "python", json_object_get(v));
        json_object_object_add(node, "openmpi", json_object_get(json_object_object_get(in->user, "openmpi")));
        return;
    }
    why = in->bridge ? "bridge mode: the batch step runs on the bridge host and the Mac's agent does not report "
                       "Python environments"
                     : "read only on the node that runs the batch script; the Mac's agent does not report Python "
                       "environments";
    tbm_record_set(node, "python", NULL, why);
    tbm_record_set(node, "openmpi", NULL, in->bridge ? "bridge mode: the agent does not report Open MPI"
                                                      : "read only on the node that runs the batch script");
}

json_object *repro_node_facts(const repro_nodes_t *in)
{
    json_object *nodes = json_object_new_array();
    repro_probe_t *probes = calloc(in->n ? in->n : 1, sizeof(*probes));
    char agent[TBM_HOSTNAME_MAX + 16];
    size_t i;
    int idx;

    for (i = 0; i < in->n && probes; i++) {
        probes[i].pid = -1;
        probes[i].fd = -1;
        if ((idx = tbm_conf_node(in->conf, in->names[i])) >= 0) {
            tbm_conf_agent_of(in->conf, idx, agent, sizeof(agent));
            repro_probe_start(&probes[i], in->macnode, agent, in->names[i], in->munge_socket);
        }
    }
    for (i = 0; i < in->n; i++) {
        json_object *node = json_object_new_object();
        idx = tbm_conf_node(in->conf, in->names[i]);
        json_object_object_add(node, "name", json_object_new_string(in->names[i]));
        json_object_object_add(node, "rank", json_object_new_int((int)i));
        if (idx >= 0) {
            int bridge = in->conf->groups[in->conf->nodes[idx].group].mode == TBM_MODE_BRIDGE;
            tbm_conf_agent_of(in->conf, idx, agent, sizeof(agent));
            json_object_object_add(node, "mode", json_object_new_string(bridge ? "bridge" : "direct"));
            if (probes)
                repro_probe_finish(&probes[i], node, agent, in->probe_ms);
        } else {
            tbm_record_node_absent(node, "not a Mac of tbmesh.conf");
        }
        node_python(in, i, node);
        json_object_array_add(nodes, node);
    }
    free(probes);
    return nodes;
}
