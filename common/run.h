/* run.h: run a command without a shell, with a time limit, capturing its standard output (bounded). */
#ifndef TBM_COMMON_RUN_H
#define TBM_COMMON_RUN_H

#include <stddef.h>
#include "errbuf.h"

/* Run argv[0] (looked up in `path`, a PATH-style list) with stdin and stderr on /dev/null and a minimal
 * environment. Captures at most `max` bytes of stdout into a malloc'd NUL-terminated buffer (*out, *len).
 * The child is killed (SIGKILL, whole process group) when it runs past timeout_ms.
 * Returns the exit status (0..255), or -1 with err set: not found, killed by a signal, timed out, output too
 * large. */
int run_capture(const char *const *argv, const char *path, int timeout_ms, size_t max, char **out, size_t *len,
                tbm_err_t *err);

#endif
