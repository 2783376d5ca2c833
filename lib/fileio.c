/* fileio.c: bounded, symlink-refusing file reads and atomic file writes (see fileio.h). */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *read_all(int fd, const char *path, size_t max, size_t *len, tbm_err_t *err)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1), *grown;
    ssize_t got;

    if (!buf)
        return tbm_errprintf(err, "%s: out of memory", path), NULL;
    for (;;) {
        if (n == cap) {
            if (cap > max) {
                free(buf);
                tbm_errprintf(err, "%s: larger than %zu bytes; this is not a command output the probe reads",
                              path, max);
                return NULL;
            }
            cap *= 2;
            grown = realloc(buf, cap + 1);
            if (!grown)
                return free(buf), tbm_errprintf(err, "%s: out of memory", path), NULL;
            buf = grown;
        }
        got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            tbm_errprintf(err, "%s: cannot read: %s", path, strerror(errno));
            return free(buf), NULL;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    if (n > max) {
        tbm_errprintf(err, "%s: larger than %zu bytes; this is not a command output the probe reads", path, max);
        return free(buf), NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

char *tbm_read_file(const char *path, size_t max, size_t *len, tbm_err_t *err)
{
    return tbm_read_file_owned(path, max, (uid_t)-1, len, err);
}

/* Checks the file open at fd (named path in messages) and reads it: a regular file, of owner ((uid_t)-1:
 * anyone's) alone when one is named, at most max bytes. Closes fd. */
static char *read_checked(int fd, const char *path, size_t max, uid_t owner, size_t *len, tbm_err_t *err)
{
    struct stat st;
    char *buf;

    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        tbm_errprintf(err, "%s: not a regular file; only regular files are read", path);
        errno = EINVAL;
        return NULL;
    }
    if (owner != (uid_t)-1 && (st.st_uid != owner || (st.st_mode & 022) || st.st_nlink != 1)) {
        close(fd);
        tbm_errprintf(err, "%s: %s: it was not written by uid %u alone; not trusted (remove it, or restore it "
                      "from a copy you trust)", path,
                      st.st_uid != owner ? "owned by another user" : (st.st_mode & 022) ? "writable by others"
                                                                      : "linked under another name",
                      (unsigned)owner);
        errno = EPERM;
        return NULL;
    }
    buf = read_all(fd, path, max, len, err);
    close(fd);
    if (!buf)
        errno = EINVAL;
    return buf;
}

/* The message for a failed open of path (errno saved). */
static char *open_failed(const char *path, tbm_err_t *err)
{
    int saved = errno;

    if (saved == ELOOP)
        tbm_errprintf(err, "%s: is a symbolic link; only regular files are read (replace the link "
                      "with the file)", path);
    else
        tbm_errprintf(err, "%s: cannot open: %s", path, strerror(saved));
    errno = saved;
    return NULL;
}

char *tbm_read_file_owned(const char *path, size_t max, uid_t owner, size_t *len, tbm_err_t *err)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

    return fd < 0 ? open_failed(path, err) : read_checked(fd, path, max, owner, len, err);
}

char *tbm_read_file_owned_at(int dirfd, const char *dir, const char *name, size_t max, uid_t owner, size_t *len,
                             tbm_err_t *err)
{
    char path[4096];
    int fd;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
        errno = EINVAL;
        return tbm_errprintf(err, "%s: not a file name of the folder", path), NULL;
    }
    fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    return fd < 0 ? open_failed(path, err) : read_checked(fd, path, max, owner, len, err);
}

int tbm_dir_open_owned(const char *path, uid_t owner, tbm_err_t *err)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), saved;

    if (fd < 0) {
        saved = errno;
        tbm_errprintf(err, "%s: %s", path, saved == ELOOP || saved == ENOTDIR ? "not a folder (a symbolic link, or a "
                      "file): give the real folder" : strerror(saved));
        errno = saved;
        return -1;
    }
    if (fstat(fd, &st) < 0 || st.st_uid != owner || (st.st_mode & 022)) {
        tbm_errprintf(err, "%s: %s; not trusted (it must be uid %u's alone: chown %u and chmod go-w it, or give "
                      "another folder)", path, st.st_uid != owner ? "owned by another user" : "writable by others",
                      (unsigned)owner, (unsigned)owner);
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

int tbm_write_all(int fd, const void *buf, size_t len)
{
    const char *data = buf;
    ssize_t n;

    while (len > 0) {
        n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static void sync_folder(const char *path)
{
    char *copy = strdup(path);
    int fd;

    if (!copy)
        return;
    fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

static int write_replacing(const char *path, const char *data, size_t len, mode_t mode, int durable,
                           tbm_err_t *err)
{
    char tmp[4096];
    int fd, saved;

    if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
        return tbm_errprintf(err, "%s: path too long", path);
    fd = mkstemp(tmp);
    if (fd < 0) {
        saved = errno;
        tbm_errprintf(err, "%s: cannot create a temporary file beside it: %s (is the folder there and "
                      "writable?)", path, strerror(saved));
        errno = saved;
        return -1;
    }
    if (fchmod(fd, mode) < 0 || tbm_write_all(fd, data, len) < 0 || (durable && fsync(fd) < 0)) {
        saved = errno;
        close(fd);
        unlink(tmp);
        tbm_errprintf(err, "%s: cannot write: %s", path, strerror(saved));
        errno = saved;
        return -1;
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        saved = errno;
        unlink(tmp);
        tbm_errprintf(err, "%s: cannot put in place: %s", path, strerror(saved));
        errno = saved;
        return -1;
    }
    if (durable)
        sync_folder(path);
    return 0;
}

int tbm_write_file_atomic(const char *path, const char *data, size_t len, mode_t mode, tbm_err_t *err)
{
    return write_replacing(path, data, len, mode, 1, err);
}

int tbm_write_file_replace(const char *path, const char *data, size_t len, mode_t mode, tbm_err_t *err)
{
    return write_replacing(path, data, len, mode, 0, err);
}

int tbm_path_beside(const char *file, const char *rel, char *out, size_t len)
{
    const char *slash = strrchr(file, '/');
    int n = rel[0] == '/' ? snprintf(out, len, "%s", rel)
            : slash     ? snprintf(out, len, "%.*s/%s", (int)(slash - file), file, rel)
                        : snprintf(out, len, "%s", rel);

    return n >= 0 && (size_t)n < len ? 0 : -1;
}
