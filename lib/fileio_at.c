/* fileio_at.c: writing where someone else may also write (see fileio.h): a file opened for writing without
 * following a link, a folder of the caller's own reached without following another user's link, and new
 * files made inside a folder already open (openat, O_EXCL, O_NOFOLLOW). */
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WALK_MAX     8192
#define LINKS_MAX    40      /* links followed in one path, as the kernel's own limit */

int tbm_open_for_writing(const char *path, mode_t mode, tbm_err_t *err)
{
    struct stat st;
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode), saved;

    if (fd < 0) {
        saved = errno;
        if (saved == ELOOP)
            tbm_errprintf(err, "%s: is a symbolic link; a file is never written through a link: remove the link "
                          "or give another path", path);
        else
            tbm_errprintf(err, "%s: cannot create: %s", path, strerror(saved));
        errno = saved;
        return -1;
    }
    if (fstat(fd, &st) < 0)
        st.st_mode = 0;
    if (!S_ISREG(st.st_mode) || st.st_nlink > 1) {
        close(fd);
        tbm_errprintf(err, "%s: is %s; only a new or a plain file is written: remove it or give another path", path,
                      !S_ISREG(st.st_mode) ? "not a regular file" : "a file with more than one name (a hard link)");
        errno = EINVAL;
        return -1;
    }
    if (ftruncate(fd, 0) < 0 || fcntl(fd, F_SETFL, 0) < 0) {
        saved = errno;
        close(fd);
        tbm_errprintf(err, "%s: cannot empty it: %s", path, strerror(saved));
        errno = saved;
        return -1;
    }
    return fd;
}

/* A link the caller may follow: made by root or by the caller. */
static int link_trusted(const struct stat *st)
{
    return st->st_uid == 0 || st->st_uid == geteuid();
}

/* Replace `todo` (the components still to walk) by the link's target followed by them. */
static int splice_link(int at, const char *name, char *todo, const char *rest, const char *path, tbm_err_t *err)
{
    char target[WALK_MAX], joined[WALK_MAX];
    ssize_t n = readlinkat(at, name, target, sizeof(target) - 1);

    if (n < 0)
        return tbm_errprintf(err, "%s: cannot read the link %s: %s", path, name, strerror(errno));
    target[n] = '\0';
    if (snprintf(joined, sizeof(joined), "%s/%s", target, rest) >= (int)sizeof(joined))
        return tbm_errprintf(err, "%s: too long once its links are followed: give a shorter path", path);
    memcpy(todo, joined, strlen(joined) + 1);
    return 0;
}

/* Step from folder `fd` into its entry `name`: the folder itself, or (a link of root's or the caller's) the
 * start of its target with the target's words put in front of `todo`. The new fd, or -1 with err. */
static int step_into(int fd, const char *name, char *todo, const char *rest, int *links, const char *path,
                     tbm_err_t *err)
{
    struct stat st;
    int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), saved = errno;

    if (next >= 0)
        return next;
    if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
        return tbm_errprintf(err, "%s: cannot open the folder %s on the way: %s", path, name, strerror(saved));
    if (!link_trusted(&st))
        return tbm_errprintf(err, "%s: %s on the way is a symbolic link owned by uid %u; a link made by another "
                             "user is never followed: give the path without it", path, name, (unsigned)st.st_uid);
    if (++*links > LINKS_MAX)
        return tbm_errprintf(err, "%s: more than %d symbolic links on the way: give the real path", path, LINKS_MAX);
    if (splice_link(fd, name, todo, rest, path, err) < 0)
        return -1;
    return openat(fd, todo[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Open the folder `dir` (absolute, or relative to the working folder), following only links of root's or the
 * caller's. Returns its fd, or -1 with err. */
static int walk(const char *dir, const char *path, tbm_err_t *err)
{
    char todo[WALK_MAX], name[WALK_MAX];
    int fd, next, links = 0;
    size_t n;

    if (snprintf(todo, sizeof(todo), "%s", dir) >= (int)sizeof(todo))
        return tbm_errprintf(err, "%.200s...: path too long", path);
    fd = open(todo[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    while (fd >= 0 && todo[0]) {
        const char *s = todo + strspn(todo, "/");
        n = strcspn(s, "/");
        memcpy(name, s, n);
        name[n] = '\0';
        s += n;
        memmove(todo, s, strlen(s) + 1);
        if (!name[0] || !strcmp(name, "."))
            continue;
        next = step_into(fd, name, todo, todo, &links, path, err);
        close(fd);
        fd = next;
    }
    if (fd < 0 && !tbm_erris(err))
        tbm_errprintf(err, "%s: cannot open a folder on the way: %s", path, strerror(errno));
    return fd;
}

static int folder_empty(int fd)
{
    int dup_fd = dup(fd), empty = 1;
    struct dirent *e;
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;

    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return 0;
    }
    while (empty && (e = readdir(d)))
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

/* Split path into its folder and its last name (no trailing slashes); -1 with err when it has none. */
static int split(const char *path, char *dir, char *last, tbm_err_t *err)
{
    size_t n = strlen(path), slash;

    while (n > 1 && path[n - 1] == '/')
        n--;
    if (n == 0 || n >= WALK_MAX)
        return tbm_errprintf(err, "'%.200s' is not a folder's path: give the path of a new folder", path);
    for (slash = n; slash > 0 && path[slash - 1] != '/'; slash--)
        ;
    snprintf(last, WALK_MAX, "%.*s", (int)(n - slash), path + slash);
    snprintf(dir, WALK_MAX, "%.*s", (int)slash, path);
    if (!last[0] || !strcmp(last, ".") || !strcmp(last, ".."))
        return tbm_errprintf(err, "%s: name the new folder itself (not '.', '..' or '/'), e.g. %s%scrate", path,
                             path, path[strlen(path) - 1] == '/' ? "" : "/");
    if (!dir[0])
        snprintf(dir, WALK_MAX, ".");
    return 0;
}

/* The folder `last` in the folder open at `at`, just made (made) or found: a real folder of the caller's,
 * empty unless just made. Its fd, or -1 with err. */
static int open_own(int at, const char *last, int made, mode_t mode, const char *path, tbm_err_t *err)
{
    struct stat st;
    int fd = openat(at, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0) {
        if (fstatat(at, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
            return tbm_errprintf(err, "%s: is a symbolic link; the folder is never reached through a link: give "
                                 "the name of a new folder, or of an empty folder of yours", path);
        return tbm_errprintf(err, "%s: exists and is not a folder: give the name of a new folder", path);
    }
    if (fstat(fd, &st) < 0)
        st.st_uid = (uid_t)-1;
    if (st.st_uid != geteuid()) {
        close(fd);
        return tbm_errprintf(err, "%s: belongs to uid %u, not to you (uid %u): give the name of a new folder, or "
                             "of an empty folder of yours", path, (unsigned)st.st_uid, (unsigned)geteuid());
    }
    if (!made && !folder_empty(fd)) {
        close(fd);
        return tbm_errprintf(err, "%s: is not empty; nothing in it is replaced: give the name of a new folder, or "
                             "of an empty one", path);
    }
    if (made && fchmod(fd, mode) < 0) {
        close(fd);
        return tbm_errprintf(err, "%s: cannot set its mode: %s", path, strerror(errno));
    }
    return fd;
}

int tbm_dir_make_own(const char *path, mode_t mode, tbm_err_t *err)
{
    char dir[WALK_MAX], last[WALK_MAX];
    int at, fd, made;

    if (split(path, dir, last, err) < 0 || (at = walk(dir, path, err)) < 0)
        return -1;
    made = mkdirat(at, last, mode) == 0;
    if (!made && errno != EEXIST) {
        tbm_errprintf(err, "%s: cannot make the folder: %s", path, strerror(errno));
        close(at);
        return -1;
    }
    fd = open_own(at, last, made, mode, path, err);
    close(at);
    return fd;
}

int tbm_write_file_at(int dirfd, const char *name, const char *data, size_t len, mode_t mode, tbm_err_t *err)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode), saved;

    if (fd < 0) {
        saved = errno;
        tbm_errprintf(err, "%s: cannot create%s: %s", name, saved == EEXIST ? " (something is there already)" : "",
                      strerror(saved));
        errno = saved;
        return -1;
    }
    if (fchmod(fd, mode) < 0 || tbm_write_all(fd, data, len) < 0 || fsync(fd) < 0) {
        saved = errno;
        close(fd);
        unlinkat(dirfd, name, 0);
        tbm_errprintf(err, "%s: cannot write: %s", name, strerror(saved));
        errno = saved;
        return -1;
    }
    if (close(fd) < 0) {
        saved = errno;
        unlinkat(dirfd, name, 0);
        tbm_errprintf(err, "%s: cannot write: %s", name, strerror(saved));
        errno = saved;
        return -1;
    }
    return 0;
}
