/* repro_node.h: what a record learns on a node: the Python environment (dist-info METADATA, never pip), Open
 * MPI's version, the Mac's facts through `macnode probe --agent`, what a step used there through `macnode
 * usage --agent`, data digests and the end of a file, each
 * read with the job user's rights (a child process that has dropped root). */
#ifndef TBM_REPRO_NODE_H
#define TBM_REPRO_NODE_H

#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "conf.h"
#include "errbuf.h"

/* The value of NAME in a NULL-terminated "NAME=value" list, or NULL. */
const char *repro_env(char *const *env, const char *name);

/* The Python environment a job will use: VIRTUAL_ENV, else CONDA_PREFIX, else the first python3 on PATH:
 * prefix, source, executable, version, mlx, mlx-lm, mlx-metal and every distribution from its dist-info
 * METADATA. An object, or {"absent": why}. */
json_object *repro_python_env(char *const *env);

/* Open MPI's version from the ompi.pc beside the first mpirun on PATH: a string, or {"absent": why}. */
json_object *repro_openmpi(char *const *env);

/* The last `lines` lines of a text file (at most 64 KiB read from its end): an array, or {"absent": why}. */
json_object *repro_tail(const char *path, int lines);

/* Call fn(arg) in a child that runs as uid/gid (no supplementary groups beyond gid) and hand its JSON back;
 * the child is killed after timeout_s seconds, or as soon as it is seen stopped (the user may stop it: it is
 * theirs). The result, or NULL with err. */
json_object *repro_as_user(uid_t uid, gid_t gid, json_object *(*fn)(void *arg), void *arg, int timeout_s,
                           tbm_err_t *err);

/* Fill node (macos, chip, memory, rdma, links) from `macnode probe --agent AGENT` (the Mac's agent), or mark
 * them absent with why. Starts the probe and returns its pid; repro_probe_finish collects it. */
typedef struct repro_probe {
    pid_t pid;
    int fd;
} repro_probe_t;
int repro_probe_start(repro_probe_t *p, const char *macnode, const char *agent, const char *node,
                      const char *munge_socket);
void repro_probe_finish(repro_probe_t *p, json_object *node, const char *agent, int timeout_ms);

/* What the job's user may read, read as the user (run it with repro_as_user): Python and Open MPI (when
 * python), the digests of paths (absolute, or against work_dir) with the user's digest cache (cache_text,
 * its text), the last tail_lines lines of stderr_path (when not NULL). An object: python, openmpi, digests,
 * stderr_tail, cache (the cache's new text), bytes_read. */
typedef struct repro_user_work {
    char *const *env;
    json_object *paths;
    const char *work_dir;
    const char *stderr_path;
    int python;
    int tail_lines;
    const char *cache_text;
} repro_user_work_t;
json_object *repro_user_facts(void *arg);

/* Every node's entry of the record: its facts through each Mac's agent (probed in parallel, each within
 * probe_ms), Python and Open MPI from user (repro_user_facts) for node node_id when the batch step ran on the
 * Mac itself (direct mode). */
typedef struct repro_nodes {
    const tbm_conf_t *conf;
    char *const *names;
    size_t n;
    size_t node_id;
    int bridge;
    json_object *user;
    const char *macnode, *munge_socket;
    int probe_ms;
} repro_nodes_t;
json_object *repro_node_facts(const repro_nodes_t *in);

#endif
