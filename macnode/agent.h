/* agent.h: the inside of macnoded, the agent on each Mac: its settings, the per-connection server
 * (agent_conn.c), the task runner (agent_task.c), the state folder (agent_state.c) and the jobs' folders
 * (agent_jobdir.c), what tasks used (agent_usage.c). The log is agent_log.h, giving up root agent_privdrop.h; main is macnoded.c. */
#ifndef MACNODE_AGENT_H
#define MACNODE_AGENT_H

#include <stdint.h>
#include <sys/types.h>

#include "agent_privdrop.h"
#include "auth.h"
#include "errbuf.h"
#include "proto.h"

typedef struct agent_conf {
    const char *listen;        /* ADDR[:PORT] */
    const char *node;          /* this node's name, as grants name it */
    const char *munge_socket;  /* NULL: libmunge's default */
    const char *replay_dir;    /* probe backend replay when set */
    const char *state_dir;     /* task records, seen credentials, job records */
    const char *jobs_dir;      /* root's folder of the per-job folders (job files) */
    int grace_s;               /* SIGTERM -> SIGKILL */
    int peer_timeout_s;        /* a client silent and unreachable this long is gone (wire_keepalive); 0: never */
    int request_timeout_ms;    /* from the welcome to the first request */
    int idle_timeout_ms;       /* between later requests: root's connections */
    int user_idle_timeout_ms;  /* ... the others' (a user's probe or spawn is one request: holding a server idle
                                  longer only keeps it from others) */
    const char *tbmesh_conf;   /* tbmesh.conf: the metrics' group and far ends of cables; NULL: none */
    const char *metrics_listen;    /* ADDR[:PORT] of the metrics endpoint; NULL: none */
    int metrics_interval_s;    /* between samples */
    int metrics_tasks;         /* 1: the running tasks' job and user in the metrics; 0: left out */
    const char *health_dir;    /* the health check's verdicts on this Mac (direct mode), served with the
                                * metrics; NULL: none */
} agent_conf_t;

/* One connection: waiting at the gate (uid not known yet), then authenticated and served. */
typedef struct agent_conn {
    const agent_conf_t *conf;
    int fd;
    char peer[96];             /* "10.0.0.1:5123", then "... uid 501" */
    uid_t uid;                 /* the caller, as MUNGE says (a grant's user when the hello was a grant) */
    int by_grant;              /* the hello's credential was a job grant, root's, for this node, made to be a
                                  hello (checked): the connection is its user's, and never root's for
                                  root's own requests, even when the grant is for uid 0 (agent_is_root) */
    int granted;               /* that grant is still unused: its spawn may use it without a second check
                                  (the same credential twice would be a replay) */
    tbm_grant_t grant;         /* that grant */
    char grant_sum[65];        /* its credential's SHA-256 (hex), to know it again in the spawn */
    tbm_fdec_t dec;            /* holds what came after the hello */
    long long accepted, proved, checking, admitted;   /* tbm_now_us at the gate: accepted, the agent's proof
                                                         sent, its hello's credential checked from, let in; for
                                                         the spawn's launch line */
    int main_ch;               /* the serving process's channel to the agent's main process (-1: none): it
                                  becomes readable (its end) when that process is gone, or lets it go */
} agent_conn_t;

/* A task this agent runs, as recorded in the state folder (task-<server pid>.json). */
typedef struct agent_task_rec {
    uint32_t job, step, uid;
    pid_t pgid;                /* the task's process group (its session) */
    pid_t server;              /* the server that serves its connection (one task at a time) */
} agent_task_rec_t;

/* Whether the caller may make root's own requests (cleanup, usage, watch): root's hello, not a job grant. */
static inline int agent_is_root(const agent_conn_t *c)
{
    return c->uid == 0 && !c->by_grant;
}

/* Serve a connection the gate authenticated, to its end (in a server, agent_pool.h); frees c->dec. */
void agent_serve(agent_conn_t *c);

/* The agent's proof for a prove's nonce: a MUNGE credential made by this process (root) whose payload names
 * this node and the nonce (tbm_proof_payload). malloc'd, or NULL with err. */
char *agent_proof(const agent_conf_t *conf, const char *nonce, tbm_err_t *err);

/* Check a credential once: munged decodes it (*out: auth_cred_free it) and the state folder remembers it, so
 * a replay is refused. 0, or -1 with the error code in *code ("forged", "replay", ...) and err. */
int agent_cred_once(const agent_conf_t *conf, const char *what, const char *cred, auth_cred_t *out,
                    const char **code, tbm_err_t *err);

/* Run the task of a granted spawn as the grant's user (u: looked up), relaying stdio and signals until it
 * has ended and its exit was sent. jobdir: the job's folder (agent_job_folder) when the spawn carries files:
 * the task's own process writes them there as the user before it runs the command, and the task is refused
 * ("files", nothing run) when they cannot be written. The agent's parts of the launch (gate, hello's
 * credential, welcome, request wait, grant check: stamps in c and `welcomed`, `requested`, `granted`) and the
 * files' are logged once the files are written. */
void agent_task_run(agent_conn_t *c, const tbm_msg_t *spawn, const tbm_grant_t *g, const agent_user_t *u,
                    const char *jobdir, const long long stamps[3]);

/* Whether a SIGTERM or SIGINT came while a task ran (its server ends once the task's connection is served). */
int agent_task_stop_asked(void);

/* Serve a watch request (root's; the caller checked): link messages until the client goes. Returns -1 (the
 * connection ends with it). */
int agent_watch(agent_conn_t *c);

/* State folder ---------------------------------------------------------------------------------------- */

/* Create the state folder (0700) and its seen/ and usage/ folders, and check the jobs folder
 * (agent_jobs_base). 0, or -1 with err. */
int agent_state_init(const agent_conf_t *conf, tbm_err_t *err);

/* Remember credential text until `expires`. 1 when it was new, 0 when it was seen before (a replay),
 * -1 with err when it cannot be recorded (refuse then: fail closed). */
int agent_seen(const agent_conf_t *conf, const char *cred, int64_t expires, tbm_err_t *err);

/* A credential's SHA-256 in hex (what agent_seen records it by). 0, or -1 when libcrypto fails. */
int agent_cred_digest(const char *cred, char hex[65]);

/* This connection's task record, in two halves so that no task runs unrecorded. The server, before the
 * task's process starts: agent_task_record_open creates and locks it (r's pgid unused; 0, or -1 with err).
 * The task's process, before its exec, as root still (system calls into its own stack only):
 * agent_task_record_place writes its group and puts the record in place (0, or -1 with errno). The server,
 * once the process has started: agent_task_recorded says whether it is in place (1; 0 with err when it is
 * not, and drops it). agent_task_forget removes it once the task has ended. */
int agent_task_record_open(const agent_conf_t *conf, const agent_task_rec_t *r, tbm_err_t *err);
int agent_task_record_place(pid_t pgid);
int agent_task_recorded(tbm_err_t *err);
void agent_task_forget(void);

/* Signal every recorded task of `job` (all jobs when all != 0, only those whose server is gone when
 * orphans != 0) with SIGTERM, SIGKILL after the grace period; removes the records of dead servers (a live
 * one removes its own when its task has ended). Returns how many tasks were signalled. */
int agent_kill_tasks(const agent_conf_t *conf, uint32_t job, int all, int orphans);

/* How many recorded tasks of job `job` step `step` still have a live server (are running). */
int agent_tasks_running(const agent_conf_t *conf, uint32_t job, uint32_t step);

/* Call fn on each recorded task whose server is alive (a running task); how many. */
int agent_tasks_each(const agent_conf_t *conf, void (*fn)(const agent_task_rec_t *r, void *ctx), void *ctx);

/* Wait up to ms until no task of job (any step) is recorded with a live server: their servers have seen them
 * end and ended what they left. How many are still there. */
int agent_tasks_wait(const agent_conf_t *conf, uint32_t job, int ms);

/* How many other jobs than `job` of uid run tasks through this agent now. (A job folder says less: one a
 * failed cleanup left would keep the user's processes from ever being ended on this Mac.) */
int agent_other_jobs(const agent_conf_t *conf, uint32_t job, uint32_t uid);

/* Drop expired seen-credential entries. */
void agent_seen_sweep(const agent_conf_t *conf);

/* SIGTERM the process group, wait up to grace_s for it to go (reaping `leader` if it is our child),
 * then SIGKILL it. */
void agent_kill_group(pid_t pgid, pid_t leader, int grace_s);

/* Task usage (agent_usage.c) -------------------------------------------------------------------------- */

/* Keep an ended task's usage in the state folder (usage/, 0600) until its job's cleanup; server is the pid
 * of the server that ran it (with the task's pid in u, the file's name). 0, or -1 with err. */
int agent_usage_keep(const agent_conf_t *conf, const tbm_task_usage_t *u, pid_t server, tbm_err_t *err);

/* What the Mac's GPU and package power did while a task ran from start_us to end_us (tbm_now_us), from the
 * sampler's ring, into ru's GPU and energy members (reported, or why not; lib/taskgpu.h). A ring that cannot
 * be read is logged (rate-limited). */
void agent_usage_meter(const agent_conf_t *conf, long long start_us, long long end_us, tbm_rusage_t *ru);

/* Forget what job's tasks used (its cleanup). */
void agent_usage_forget(const agent_conf_t *conf, uint32_t job);

/* The used message answering a usage request (m->tasks malloc'd: free it). 0. */
int agent_usage_reply(const agent_conf_t *conf, const tbm_msg_t *req, tbm_msg_t *m);

/* A usage request answered by the gate's own process, without forking a server (a step's end asks one per
 * node and step): only root's, only when what came behind the hello is that request, whole and alone, and
 * only when the welcome and the reply together take at most AGENT_USAGE_INLINE_MAX bytes (what an empty
 * send buffer takes at once: the gate does not wait on a reader). 1 when answered (the caller closes the
 * connection), 0 when the connection goes to a server as any other. */
#define AGENT_USAGE_INLINE_MAX 8192
int agent_usage_inline(agent_conn_t *c);

/* Serve a usage request: root only; the step's ended tasks and how many still run. Returns -1: a usage
 * request is the last of its connection (the gate may answer it and close, agent_usage_inline). */
int agent_usage_serve(agent_conn_t *c, const tbm_msg_t *req);

/* Jobs folders ---------------------------------------------------------------------------------------- */

/* The jobs folder (jobs_dir, in a folder every user may write, such as /var/tmp): a real folder of root's that
 * no one else may write, made when missing; anything else found at its path (a user's folder or link, made
 * when the old one was cleaned away) is moved aside, logged, and never used. Checked at the agent's start and
 * before every job folder is made in it. 0, or -1 with err. */
int agent_jobs_base(const agent_conf_t *conf, tbm_err_t *err);

/* Check the n files' names, then make the job's folder <jobs_dir>/<job> (as root; then the grant's user's,
 * 0700), or reuse the one this agent made before for the same user; refuse a link or a folder it did not
 * make. The folder's path in dir. 0, or -1 with err. */
int agent_job_folder(const agent_conf_t *conf, const tbm_grant_t *g, const tbm_jobfile_t *files, int n, char *dir,
                     size_t dirlen, tbm_err_t *err);

/* Write the n files into dir (0600), as whoever calls it: the task's process, once it is the user and before
 * it runs the command. 0, or -1 with err. */
int agent_job_write(const char *dir, const tbm_jobfile_t *files, int n, tbm_err_t *err);

/* Remove the job's folder (its contents as the owner, the folder as root). 0, or -1 with err. */
int agent_job_remove(const agent_conf_t *conf, uint32_t job, tbm_err_t *err);

#endif
