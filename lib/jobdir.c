/* jobdir.c: a job's folder on a Mac, made and removed by root (see jobdir.h). */
#include "jobdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REMOVE_DEPTH_MAX 16

/* A folder that only its owner (this process's euid) may write, not a link. */
static int base_trusted(const struct stat *st)
{
    return S_ISDIR(st->st_mode) && st->st_uid == geteuid() && !(st->st_mode & 022);
}

int tbm_jobdir_base(const char *jobs, char *note, size_t note_len, tbm_err_t *err)
{
    char aside[4200];
    struct stat st;

    if (note && note_len)
        note[0] = '\0';
    if (!jobs[0] || jobs[0] != '/')
        return tbm_errprintf(err, "the jobs folder '%s' is not an absolute path: set jobs_dir= in plugstack.conf",
                             jobs);
    if (lstat(jobs, &st) == 0) {
        if (base_trusted(&st))
            return 0;
        /* Something is at that path that this process did not make: move it aside, never into use. */
        snprintf(aside, sizeof(aside), "%s.squatted.%ld", jobs, (long)getpid());
        if (rename(jobs, aside) < 0)
            return tbm_errprintf(err, "%s is not a folder only root may write, and cannot be moved aside: %s; "
                                 "remove it", jobs, strerror(errno));
        if (note && note_len)
            snprintf(note, note_len, "%s was not a folder only root may write (owner uid %u, mode %04o): moved "
                     "aside to %s", jobs, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), aside);
    } else if (errno != ENOENT) {
        return tbm_errprintf(err, "cannot look at the jobs folder %s: %s", jobs, strerror(errno));
    }
    if (mkdir(jobs, 0711) < 0 && errno != EEXIST)
        return tbm_errprintf(err, "cannot make the jobs folder %s: %s", jobs, strerror(errno));
    if (lstat(jobs, &st) < 0 || !base_trusted(&st))
        return tbm_errprintf(err, "the jobs folder %s was replaced while it was made: try again", jobs);
    chmod(jobs, 0711);
    return 0;
}

int tbm_jobdir_make(const char *jobs, uint32_t job, uid_t uid, gid_t gid, char *buf, size_t len, tbm_err_t *err)
{
    char note[512];
    struct stat st;
    int n;

    if (tbm_jobdir_base(jobs, note, sizeof(note), err) < 0)
        return -1;
    n = snprintf(buf, len, "%s/%u", jobs, (unsigned)job);
    if (n < 0 || (size_t)n >= len)
        return tbm_errprintf(err, "the jobs folder path %s is too long", jobs);
    if (mkdir(buf, 0700) == 0) {
        if (chown(buf, uid, gid) < 0) {
            rmdir(buf);
            return tbm_errprintf(err, "cannot give %s to uid %u: %s", buf, (unsigned)uid, strerror(errno));
        }
        return 0;
    }
    if (errno != EEXIST)
        return tbm_errprintf(err, "cannot make %s: %s", buf, strerror(errno));
    if (lstat(buf, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 07777) != 0700)
        return tbm_errprintf(err, "%s exists and is not this job's private folder: remove it", buf);
    return 0;
}

/* Empty the folder open at `fd` (entries only; links removed, never followed). */
static int empty_at(int fd, int depth, tbm_err_t *err)
{
    struct dirent *e;
    struct stat st;
    DIR *d;
    int sub, rc = 0;

    if (depth > REMOVE_DEPTH_MAX)
        return tbm_errprintf(err, "folders nested deeper than %d", REMOVE_DEPTH_MAX);
    if (!(d = fdopendir(fd))) {
        close(fd);
        return tbm_errprintf(err, "cannot read a folder: %s", strerror(errno));
    }
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0 || empty_at(sub, depth + 1, err) < 0)
                rc = sub < 0 ? tbm_errprintf(err, "cannot open %s: %s", e->d_name, strerror(errno)) : -1;
            else if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) < 0)
                rc = tbm_errprintf(err, "cannot remove %s: %s", e->d_name, strerror(errno));
        } else if (unlinkat(dirfd(d), e->d_name, 0) < 0 && errno != ENOENT) {
            rc = tbm_errprintf(err, "cannot remove %s: %s", e->d_name, strerror(errno));
        }
    }
    closedir(d);
    return rc;
}

int tbm_dir_empty(const char *dir, tbm_err_t *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return tbm_errprintf(err, "cannot open %s: %s", dir, strerror(errno));
    return empty_at(fd, 0, err) < 0 ? tbm_errprefix(err, "%s: ", dir) : 0;
}

int tbm_jobdir_remove(const char *jobs, uint32_t job, tbm_err_t *err)
{
    char path[4200];
    int fd;

    snprintf(path, sizeof(path), "%s/%u", jobs, (unsigned)job);
    fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        if (errno == ENOTDIR || errno == ELOOP)   /* a link or a file where the folder was: remove just that */
            return unlink(path) < 0 ? tbm_errprintf(err, "cannot remove %s: %s", path, strerror(errno)) : 0;
        return tbm_errprintf(err, "cannot open %s: %s", path, strerror(errno));
    }
    if (empty_at(fd, 0, err) < 0)
        return tbm_errprefix(err, "%s: ", path);
    if (rmdir(path) < 0 && errno != ENOENT)
        return tbm_errprintf(err, "cannot remove %s: %s", path, strerror(errno));
    return 0;
}
