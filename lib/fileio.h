/* fileio.h: the two file operations the shims share, done safely: read a bounded regular file without
 * following a symlink, and write a file atomically (temporary file, fsync, rename) with a fixed mode.
 * The only file I/O in lib/; everything else in lib/ takes buffers. */
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

/* Write `len` bytes to `path` atomically: a temporary file beside it, fsync, rename, fsync of the folder.
 * The file gets `mode`; an existing symlink at `path` is replaced, never followed. Returns 0 or -1 with
 * err set and errno saying why (nothing at `path` changed then). */
int tbm_write_file_atomic(const char *path, const char *data, size_t len, mode_t mode, tbm_err_t *err);

/* The same without the two fsyncs: readers still see the old file or the whole new one, never part of one,
 * but a crash of the machine may lose it. For files written again at every use (a job's files, rewritten at
 * every task's start; after a crash the job is gone too), where waiting for the disk buys nothing. Uses no
 * heap memory (the task's process calls it before its exec). */
int tbm_write_file_replace(const char *path, const char *data, size_t len, mode_t mode, tbm_err_t *err);

/* Write all of buf to fd (short writes and EINTR handled). 0, or -1 with errno set. */
int tbm_write_all(int fd, const void *buf, size_t len);

/* rel taken from file's folder ("/usr/bin/macnode", "../libexec/x" -> "/usr/bin/../libexec/x"); rel as it is
 * when it is absolute or file has no folder. 0, or -1 when it does not fit in len. */
int tbm_path_beside(const char *file, const char *rel, char *out, size_t len);

#endif
