/* fileio.h: the file operations the shims share, done safely: read a bounded regular file without following a
 * symlink, write a file atomically (temporary file, fsync, rename) with a fixed mode, and (fileio_at.c) write
 * where others may write too: a file opened without following a link, a folder of the caller's reached
 * without following another user's link, new files made inside it. The only file I/O in lib/; everything
 * else in lib/ takes buffers. */
#ifndef TBM_FILEIO_H
#define TBM_FILEIO_H

#include <stddef.h>
#include <sys/types.h>
#include "errbuf.h"

/* The contents of regular file `path` (at most `max` bytes), malloc'd and NUL-terminated, its length in
 * *len. NULL with err set when it is missing (errno ENOENT), a symlink, not a regular file, larger than
 * max, or unreadable. */
char *tbm_read_file(const char *path, size_t max, size_t *len, tbm_err_t *err);
/* As tbm_read_file, and only a file of `owner` ((uid_t)-1: anyone's) that nobody else may write and that has
 * no second name (a hard link someone else made): else NULL, errno EPERM, err saying why. */
char *tbm_read_file_owned(const char *path, size_t max, uid_t owner, size_t *len, tbm_err_t *err);

/* As tbm_read_file_owned, for the file `name` (no '/') of the folder open at dirfd, which `dir` names in
 * messages. */
char *tbm_read_file_owned_at(int dirfd, const char *dir, const char *name, size_t max, uid_t owner, size_t *len,
                             tbm_err_t *err);

/* The folder at `path` open (O_DIRECTORY, close-on-exec) when it is a real folder (path itself no symbolic
 * link) of `owner` that nobody else may write; else -1 with err saying what was found and what to do, and
 * errno (EPERM: another's, or writable by others). Files then opened in it with openat are those of the
 * folder checked, whatever is renamed meanwhile. */
int tbm_dir_open_owned(const char *path, uid_t owner, tbm_err_t *err);

/* Write `len` bytes to `path` atomically: a temporary file beside it, fsync, rename, fsync of the folder.
 * The file gets `mode`; an existing symlink at `path` is replaced, never followed. Returns 0 or -1 with
 * err set and errno saying why (nothing at `path` changed then). */
int tbm_write_file_atomic(const char *path, const char *data, size_t len, mode_t mode, tbm_err_t *err);

/* The same without the two fsyncs: readers still see the old file or the whole new one, never part of one,
 * but a crash of the machine may lose it. For files written again at every use (a job's files, rewritten at
 * every task's start; after a crash the job is gone too), where waiting for the disk buys nothing. Uses no
 * heap memory (the task's process calls it before its exec). */
int tbm_write_file_replace(const char *path, const char *data, size_t len, mode_t mode, tbm_err_t *err);

/* Open `path` to write it from its start: made (with `mode`) when missing; an existing plain file (one name,
 * regular) is emptied; a symbolic link (even one to nowhere), a hard-linked file, a fifo or a device is refused
 * and left as it is. The fd (close-on-exec), or -1 with err and errno. */
int tbm_open_for_writing(const char *path, mode_t mode, tbm_err_t *err);

/* A folder of the caller's own at `path`, open: made (with `mode`) when missing, or an existing empty real
 * folder owned by the caller (euid). On the way to it only symbolic links made by root or by the caller are
 * followed (another user's link could send root's writes anywhere); `path` itself is never a link. The
 * folder's fd (O_DIRECTORY, close-on-exec), or -1 with err saying what was found and what to give instead. */
int tbm_dir_make_own(const char *path, mode_t mode, tbm_err_t *err);

/* Make the new file `name` in the folder open at `dirfd` (O_CREAT | O_EXCL | O_NOFOLLOW: never an existing
 * file or a link) with `mode`, write `len` bytes and fsync it. 0, or -1 with err (the partial file removed). */
int tbm_write_file_at(int dirfd, const char *name, const char *data, size_t len, mode_t mode, tbm_err_t *err);

/* Write all of buf to fd (short writes and EINTR handled). 0, or -1 with errno set. */
int tbm_write_all(int fd, const void *buf, size_t len);

/* rel taken from file's folder ("/usr/bin/macnode", "../libexec/x" -> "/usr/bin/../libexec/x"); rel as it is
 * when it is absolute or file has no folder. 0, or -1 when it does not fit in len. */
int tbm_path_beside(const char *file, const char *rel, char *out, size_t len);

#endif
