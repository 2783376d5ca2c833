/* jobdir.h: a job's folder on a Mac, made and removed by root. The folders live in a jobs folder that only
 * root may write (so no user can predict a name and make it first), each `<jobs>/<job id>`, mode 0700,
 * owned by the job's user. Nothing here follows a symbolic link. */
#ifndef TBM_JOBDIR_H
#define TBM_JOBDIR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "errbuf.h"

/* Make sure `jobs` is a real folder owned by root (euid 0) or by this process's euid, writable by its owner
 * only (mode 0711 when made here). Anything else at that path (a user's folder, a link, a file: something
 * placed there before) is moved aside to "<jobs>.squatted.<pid>" and a fresh folder made; the move is
 * named in `note` (when given). Returns 0, or -1 with err. */
int tbm_jobdir_base(const char *jobs, char *note, size_t note_len, tbm_err_t *err);

/* Make `<jobs>/<job>` for uid:gid (0700) under a checked jobs folder, its path in buf. An existing folder is
 * kept only when it is a real folder owned by uid with mode 0700 (a step after the first); else -1. */
int tbm_jobdir_make(const char *jobs, uint32_t job, uid_t uid, gid_t gid, char *buf, size_t len, tbm_err_t *err);

/* Empty the folder `dir` (a real folder, not a link), never following a link: links are removed, not
 * followed; folders at most 16 deep. The folder itself stays. Returns 0, or -1 with err. */
int tbm_dir_empty(const char *dir, tbm_err_t *err);

/* Remove `<jobs>/<job>` and everything in it, never following a link (links are removed, not followed).
 * A folder that is not there is fine. Returns 0, or -1 with err. */
int tbm_jobdir_remove(const char *jobs, uint32_t job, tbm_err_t *err);

#endif
