/* store.c: the record store's files (see store.h). */
#include "config.h"
#include "store.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef HAVE_LIBACL
#include <sys/acl.h>
#endif

#include "fileio.h"
#include "json_read.h"

#ifndef TBM_RECORD_DIR_DEFAULT
#define TBM_RECORD_DIR_DEFAULT "/var/lib/slurm-tbmesh/records"
#endif

/* ClusterName, and munged's socket from AuthInfo=socket=PATH (the seal is checked with Slurm's munged). */
static void read_cluster(tbm_store_t *st, const char *slurm_conf)
{
    tbm_err_t ignored;
    size_t len, i;
    char *text = slurm_conf ? tbm_read_file(slurm_conf, 4u << 20, &len, &ignored) : NULL, info[1100], *sock;

    snprintf(st->cluster, sizeof(st->cluster), "cluster");
    if (text && tbm_record_conf_value(text, len, "ClusterName", st->cluster, sizeof(st->cluster)))
        for (i = 0; st->cluster[i]; i++)
            if (!isalnum((unsigned char)st->cluster[i]) && !strchr("_-.", st->cluster[i]))
                snprintf(st->cluster, sizeof(st->cluster), "cluster");
    if (text && tbm_record_conf_value(text, len, "AuthInfo", info, sizeof(info)) && (sock = strstr(info, "socket="))) {
        sock += 7;
        sock[strcspn(sock, ",")] = '\0';
        snprintf(st->munge_socket, sizeof(st->munge_socket), "%s", sock);
    }
    free(text);
}

int tbm_store_open(tbm_store_t *st, const char *tbmesh_conf, const char *slurm_conf, const char *dir_override,
                   tbm_err_t *err)
{
    size_t len;
    char *text;
    struct group *g;

    memset(st, 0, sizeof(*st));
    snprintf(st->set.dir, sizeof(st->set.dir), "%s", TBM_RECORD_DIR_DEFAULT);
    st->set.records = 1;
    st->readers_gid = (gid_t)-1;
    if (tbmesh_conf && (text = tbm_read_file(tbmesh_conf, 4u << 20, &len, err))) {
        int rc = tbm_record_settings_parse(text, len, tbmesh_conf, &st->set, err);
        free(text);
        if (rc < 0)
            return -1;
    } else if (tbmesh_conf && errno != ENOENT) {
        return -1;
    }
    if (dir_override && *dir_override) {
        char line[TBM_RECORD_PATH_MAX + 16];
        snprintf(line, sizeof(line), "RecordDir=%s", dir_override);
        if (tbm_record_settings_parse(line, strlen(line), "record_dir", &st->set, err) < 0)
            return -1;
    }
    if (st->set.readers[0]) {
        if (!(g = getgrnam(st->set.readers)))
            return tbm_errprintf(err, "RecordReaders=%s: no such group on this host: create it or fix tbmesh.conf",
                                 st->set.readers);
        st->readers_gid = g->gr_gid;
    }
    read_cluster(st, slurm_conf);
    return 0;
}

void tbm_store_path(const tbm_store_t *st, uint32_t job, const char *ext, char *buf, size_t len)
{
    tbm_record_fmt(buf, len, "%s/%s/%u.%s", st->set.dir, st->cluster, job, ext);
}

/* A folder of root's: made with `mode` when missing; refused when it is a link, not root's, or writable by
 * others. */
static int root_dir(const char *path, mode_t mode, tbm_err_t *err)
{
    struct stat s;

    if (mkdir(path, mode) == 0)
        return chmod(path, mode) == 0 ? 0 : tbm_errprintf(err, "cannot set the mode of %s: %s", path, strerror(errno));
    if (errno != EEXIST)
        return tbm_errprintf(err, "cannot make the record folder %s: %s (is RecordDir on a filesystem this node "
                             "mounts?)", path, strerror(errno));
    if (lstat(path, &s) < 0 || !S_ISDIR(s.st_mode) || s.st_uid != 0 || (s.st_mode & 022))
        return tbm_errprintf(err, "%s is not a folder of root's that only root may write: fix its owner and mode "
                             "(root, 0711) or choose another RecordDir", path);
    return 0;
}

static int cluster_dir(const tbm_store_t *st, char *buf, size_t len, tbm_err_t *err)
{
    char parent[TBM_RECORD_PATH_MAX], *slash;

    /* the store's parent folders are the site's; RecordDir itself and the cluster's folder are ours */
    snprintf(parent, sizeof(parent), "%s", st->set.dir);
    for (slash = strchr(parent + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (mkdir(parent, 0755) < 0 && errno != EEXIST)
            return tbm_errprintf(err, "cannot make %s: %s", parent, strerror(errno));
        *slash = '/';
    }
    if (root_dir(st->set.dir, 0711, err) < 0)
        return -1;
    tbm_record_fmt(buf, len, "%s/%s", st->set.dir, st->cluster);
    return root_dir(buf, 0711, err);
}

/* Let the job's user read a file of root's without owning it: an ACL entry user:UID:r (the owner root, the
 * group RecordReaders or root, nobody else). 0; -1 with err when the system or the filesystem has no ACLs. */
static int reader_acl(int fd, const char *path, uid_t owner, tbm_err_t *err)
{
#ifdef HAVE_LIBACL
    char text[128];
    acl_t acl;
    int rc;

    if (owner == 0)
        return 0;
    snprintf(text, sizeof(text), "u::r,u:%u:r,g::r,m::r,o::-", (unsigned)owner);
    if (!(acl = acl_from_text(text)))
        return tbm_errprintf(err, "cannot make the ACL %s: %s", text, strerror(errno));
    rc = acl_set_fd(fd, acl);
    acl_free(acl);
    if (rc == 0)
        return 0;
    return tbm_errprintf(err, "%s is kept, readable by root and RecordReaders only: its user (uid %u) cannot be "
                         "given read access (%s): put RecordDir on a filesystem with POSIX ACLs (ext4, xfs; NFS "
                         "with ACL support)", path, (unsigned)owner, strerror(errno));
#else
    (void)fd;
    if (owner == 0)
        return 0;
    return tbm_errprintf(err, "%s is kept, readable by root and RecordReaders only: this system has no POSIX ACLs to "
                         "let its user (uid %u) read it", path, (unsigned)owner);
#endif
}

int tbm_store_put(const tbm_store_t *st, uint32_t job, uid_t owner, const char *ext, const char *data, size_t len,
                  tbm_err_t *err)
{
    char dir[TBM_RECORD_PATH_MAX + 80], path[TBM_RECORD_PATH_MAX + 128];
    int fd, rc;

    if (cluster_dir(st, dir, sizeof(dir), err) < 0)
        return -1;
    tbm_store_path(st, job, ext, path, sizeof(path));
    if (tbm_write_file_atomic(path, data, len, 0400, err) < 0)
        return -1;
    /* root's, the group RecordReaders (or root), 0440; its user reads it through an ACL entry and owns nothing */
    if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return tbm_errprintf(err, "cannot open %s again: %s", path, strerror(errno));
    if (fchown(fd, 0, st->readers_gid == (gid_t)-1 ? 0 : st->readers_gid) < 0 || fchmod(fd, 0440) < 0) {
        rc = tbm_errprintf(err, "cannot give %s to root and RecordReaders: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    rc = reader_acl(fd, path, owner, err) < 0 ? 1 : 0;
    close(fd);
    return rc;
}

char *tbm_store_get(const tbm_store_t *st, uint32_t job, const char *ext, size_t *len, tbm_err_t *err)
{
    char path[TBM_RECORD_PATH_MAX + 128];
    char *text;

    tbm_store_path(st, job, ext, path, sizeof(path));
    /* only root's files: one that anybody else wrote or could have written is no record */
    text = tbm_read_file_owned(path, TBM_RECORD_MAX, 0, len, err);
    if (!text && errno == ENOENT && !strcmp(ext, "seal"))
        tbm_errprintf(err, "job %u has a record but no seal in %s/%s: it was not sealed (munged was not reachable "
                      "when it was written?): do not trust it", job, st->set.dir, st->cluster);
    else if (!text && (errno == ENOENT || errno == EACCES))   /* another user's job answers as one without a record */
        tbm_errprintf(err, "job %u has no record that you may read in %s/%s: the job made none (not a Mac job, "
                      "records off), `tbmesh repro sync` has not filled it in yet, or it is not your job (its user, "
                      "root and the RecordReaders group read a record)", job, st->set.dir, st->cluster);
    return text;
}

/* Store rec's text as JOB.<json_ext> and root's seal of it as JOB.<seal_ext>. 0, 1 (stored; its user cannot read
 * it) or -1 with err. */
static int put_sealed(const tbm_store_t *st, json_object *rec, uid_t owner, const char *json_ext,
                      const char *seal_ext, char *sha, tbm_err_t *err)
{
    json_object *job = tbm_json_typed(rec, "job", json_type_object);
    const char *phase = tbm_json_str(job, "phase");
    json_object *rs = tbm_json_typed(job, "restarts", json_type_int);
    char hex[TBM_SHA256_HEX], *text, *seal;
    tbm_seal_what_t what;
    tbm_err_t seal_err = { { 0 } };
    uint32_t id = (uint32_t)json_object_get_int64(tbm_json_typed(job, "id", json_type_int));
    size_t len;
    int rc, seal_rc;

    if (!(text = tbm_record_text(rec, &len, err)))
        return -1;
    tbm_sha256_hex(text, len, hex);
    rc = tbm_store_put(st, id, owner, json_ext, text, len, err);
    free(text);
    if (rc < 0)
        return -1;
    snprintf(what.phase, sizeof(what.phase), "%s", phase ? phase : "");
    what.restarts = rs ? (long long)json_object_get_int64(rs) : 0;
    if (!(seal = tbm_seal_make(st, id, hex, &what, &seal_err)))
        return tbm_errprintf(err, "%s", seal_err.msg);
    seal_rc = tbm_store_put(st, id, owner, seal_ext, seal, strlen(seal), &seal_err);
    free(seal);
    if (seal_rc < 0)
        return tbm_errprintf(err, "%s", seal_err.msg);
    if (sha)
        memcpy(sha, hex, TBM_SHA256_HEX);
    return rc;   /* 1: stored, but its user cannot read it (err says why) */
}

int tbm_store_record(const tbm_store_t *st, json_object *rec, uid_t owner, char *sha, tbm_err_t *err)
{
    json_object *job = tbm_json_typed(rec, "job", json_type_object), *old, *r;
    char from[TBM_RECORD_PATH_MAX + 128], to[TBM_RECORD_PATH_MAX + 128], ext[32];
    tbm_err_t ignored;
    uint32_t id;

    id = (uint32_t)json_object_get_int64(tbm_json_typed(job, "id", json_type_int));
    r = tbm_json_typed(job, "restarts", json_type_int);
    /* a requeued job's earlier run keeps its record */
    if (r && json_object_get_int64(r) > 0 && (old = tbm_store_load(st, id, NULL, &ignored))) {
        json_object *oj = tbm_json_typed(old, "job", json_type_object);
        json_object *orr = tbm_json_typed(oj, "restarts", json_type_int);
        long long n = orr ? (long long)json_object_get_int64(orr) : 0;
        if (n < json_object_get_int64(r)) {
            snprintf(ext, sizeof(ext), "run%lld.json", n);
            tbm_store_path(st, id, "json", from, sizeof(from));
            tbm_store_path(st, id, ext, to, sizeof(to));
            rename(from, to);
            tbm_store_path(st, id, "seal", from, sizeof(from));
            snprintf(ext, sizeof(ext), "run%lld.seal", n);
            tbm_store_path(st, id, ext, to, sizeof(to));
            rename(from, to);
        }
        json_object_put(old);
    }
    return put_sealed(st, rec, owner, "json", "seal", sha, err);
}

int tbm_store_record_run(const tbm_store_t *st, json_object *rec, uid_t owner, tbm_err_t *err)
{
    json_object *rs = tbm_json_typed(tbm_json_typed(rec, "job", json_type_object), "restarts", json_type_int);
    char json_ext[32], seal_ext[32];
    long long run = rs ? (long long)json_object_get_int64(rs) : -1;

    if (run < 0)
        return tbm_errprintf(err, "an earlier run's record names no run (job.restarts)");
    snprintf(json_ext, sizeof(json_ext), "run%lld.json", run);
    snprintf(seal_ext, sizeof(seal_ext), "run%lld.seal", run);
    return put_sealed(st, rec, owner, json_ext, seal_ext, NULL, err);
}

/* A stored record is this job's of this cluster, or refused (never rewritten under the job it names). */
static int same_job(const tbm_store_t *st, json_object *rec, uint32_t job, tbm_err_t *err)
{
    json_object *j = tbm_json_typed(rec, "job", json_type_object);
    json_object *id = tbm_json_typed(j, "id", json_type_int);
    const char *cluster = tbm_json_str(j, "cluster");

    if (!id || json_object_get_int64(id) != (int64_t)job || (cluster && strcmp(cluster, st->cluster) != 0))
        return tbm_errprintf(err, "the record stored as job %u of %s names job %lld of %s: refused (a record is "
                             "only ever read back under its own job)", job, st->cluster,
                             id ? (long long)json_object_get_int64(id) : -1LL, cluster ? cluster : "?");
    return 0;
}

/* The stored record of job under ext (its text's sha256 in sha, may be NULL). */
static json_object *load_ext(const tbm_store_t *st, uint32_t job, const char *ext, char *sha, tbm_err_t *err)
{
    size_t len;
    char *text = tbm_store_get(st, job, ext, &len, err);
    json_object *rec;

    if (!text)
        return NULL;
    rec = tbm_record_parse(text, len, err);
    if (!rec)
        tbm_errprefix(err, "job %u: ", job);
    else if (same_job(st, rec, job, err) < 0) {
        json_object_put(rec);
        rec = NULL;
    }
    if (rec && sha)
        tbm_sha256_hex(text, len, sha);
    free(text);
    return rec;
}

json_object *tbm_store_load(const tbm_store_t *st, uint32_t job, char *sha, tbm_err_t *err)
{
    return load_ext(st, job, "json", sha, err);
}

json_object *tbm_store_load_run(const tbm_store_t *st, uint32_t job, long long run, tbm_err_t *err)
{
    char ext[32];
    json_object *rec, *rs;

    snprintf(ext, sizeof(ext), "run%lld.json", run);
    rec = load_ext(st, job, ext, NULL, err);
    rs = rec ? tbm_json_typed(tbm_json_typed(rec, "job", json_type_object), "restarts", json_type_int) : NULL;
    if (rec && (!rs || json_object_get_int64(rs) != run)) {
        tbm_errprintf(err, "job %u: the record kept as run %lld names run %lld: refused", job, run,
                      rs ? (long long)json_object_get_int64(rs) : -1LL);
        json_object_put(rec);
        rec = NULL;
    }
    return rec;
}

static int parts_dir(const tbm_store_t *st, uint32_t job, char *buf, size_t len, tbm_err_t *err)
{
    char dir[TBM_RECORD_PATH_MAX + 80];

    if (cluster_dir(st, dir, sizeof(dir), err) < 0)
        return -1;
    tbm_record_fmt(buf, len, "%s/.parts", dir);
    if (root_dir(buf, 0700, err) < 0)
        return -1;
    tbm_record_fmt(buf, len, "%s/.parts/%u", dir, job);
    return root_dir(buf, 0700, err);
}

int tbm_store_part_put(const tbm_store_t *st, uint32_t job, const char *name, const char *text, tbm_err_t *err)
{
    char dir[TBM_RECORD_PATH_MAX + 128], path[TBM_RECORD_PATH_MAX + 256];
    int tries, rc = -1;

    /* The batch step's end removes the job's folder once it merged what it holds: a part written in that very
     * moment finds its folder gone (its temporary file or its rename fails with ENOENT) and is written again. */
    for (tries = 0; tries < 5; tries++) {
        if (parts_dir(st, job, dir, sizeof(dir), err) < 0)
            return -1;
        tbm_record_fmt(path, sizeof(path), "%s/%s.json", dir, name);
        errno = 0;
        if ((rc = tbm_write_file_atomic(path, text, strlen(text), 0600, err)) == 0 || errno != ENOENT)
            break;
    }
    return rc;
}

/* A finished part's file name: NAME.json (not a temporary file beside it, NAME.json.tmp.XXXXXX). */
static int part_name(const char *name)
{
    size_t n = strlen(name);

    return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".json") == 0;
}

json_object *tbm_store_parts(const tbm_store_t *st, uint32_t job, json_object **names)
{
    char dir[TBM_RECORD_PATH_MAX + 128], path[TBM_RECORD_PATH_MAX + 512];
    json_object *all = json_object_new_array(), *doc;
    struct dirent *e;
    tbm_err_t err;
    size_t len;
    char *text;
    DIR *d;

    if (names)
        *names = json_object_new_array();
    tbm_record_fmt(dir, sizeof(dir), "%s/%s/.parts/%u", st->set.dir, st->cluster, job);
    if (!(d = opendir(dir)))
        return all;
    while ((e = readdir(d))) {
        if (!part_name(e->d_name))
            continue;
        tbm_record_fmt(path, sizeof(path), "%s/%s", dir, e->d_name);
        if ((text = tbm_read_file_owned(path, TBM_RECORD_MAX, 0, &len, &err)) && (doc = tbm_json_parse(text, len, &err)))
            json_object_array_add(all, doc);
        else if ((doc = json_object_new_object())) {   /* said in the record, not dropped unseen */
            json_object_object_add(doc, "unreadable", json_object_new_string(e->d_name));
            json_object_object_add(doc, "why", json_object_new_string(err.msg));
            json_object_array_add(all, doc);
        }
        if (text && names)   /* read, whether or not it parsed: merged or known to be unreadable */
            json_object_array_add(*names, json_object_new_string(e->d_name));
        free(text);
    }
    closedir(d);
    return all;
}

void tbm_store_parts_remove(const tbm_store_t *st, uint32_t job, json_object *names)
{
    char dir[TBM_RECORD_PATH_MAX + 128], path[TBM_RECORD_PATH_MAX + 512];
    const char *name;
    size_t i;

    tbm_record_fmt(dir, sizeof(dir), "%s/%s/.parts/%u", st->set.dir, st->cluster, job);
    for (i = 0; names && i < json_object_array_length(names); i++) {
        name = json_object_get_string(json_object_array_get_idx(names, i));
        if (name && part_name(name) && !strchr(name, '/')) {
            tbm_record_fmt(path, sizeof(path), "%s/%s", dir, name);
            unlink(path);
        }
    }
    rmdir(dir);   /* only once empty: a part that came since stays */
}

char *tbm_store_cache_get(const tbm_store_t *st, const char *name, size_t *len)
{
    char path[TBM_RECORD_PATH_MAX + 256];
    tbm_err_t err;

    tbm_record_fmt(path, sizeof(path), "%s/%s/.cache/%s", st->set.dir, st->cluster, name);
    return tbm_read_file_owned(path, TBM_RECORD_MAX, 0, len, &err);   /* root's alone, as every file of the store */
}

int tbm_store_cache_put(const tbm_store_t *st, const char *name, const char *text, tbm_err_t *err)
{
    char dir[TBM_RECORD_PATH_MAX + 128], path[TBM_RECORD_PATH_MAX + 256];

    if (cluster_dir(st, dir, sizeof(dir), err) < 0)
        return -1;
    tbm_record_fmt(path, sizeof(path), "%s/.cache", dir);
    if (root_dir(path, 0700, err) < 0)
        return -1;
    tbm_record_fmt(path, sizeof(path), "%s/.cache/%s", dir, name);
    return tbm_write_file_atomic(path, text, strlen(text), 0600, err);
}
