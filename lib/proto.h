/* proto.h: the bridge-agent wire protocol (macnode exec and tbmesh on the bridge <-> macnoded on each Mac):
 * framing, an incremental decoder, typed messages with their validation, job grants and signal names. Pure.
 *
 * FRAMES. Every frame is a 4-byte big-endian length N (1 <= N <= TBM_FRAME_MAX) and N bytes of body. The
 * first body byte says what the frame is:
 *   '{'   a JSON frame: the whole body is one JSON object (UTF-8, strict syntax) with a "type" member;
 *   0x01  stdin data, 0x02 stdout data, 0x03 stderr data: the rest of the body is raw bytes.
 * Data travels in binary frames so that a stream costs 5 bytes of header per chunk of up to
 * TBM_DATA_MAX bytes and no encoding: a 1 GiB stdout stream is a memcpy, not base64. An empty stdin data
 * frame (N = 1) means end of input; empty stdout/stderr frames are allowed and mean nothing.
 * Any other first byte, N = 0 or N > the limit is a framing error: the reader sends an error frame and
 * closes the connection (a frame stream cannot be resynchronised).
 *
 * CONVERSATION. The agent proves itself first, before the client sends any credential: the client's first
 * frame must be prove, carrying a fresh random nonce and nothing else; the agent answers proof, a MUNGE
 * credential made by root on the Mac whose payload names the agent's node and that nonce
 * (tbm_proof_payload); the client has its own munged decode it and checks it (tbm_proof_check: root's, a
 * proof, its own nonce, the node it meant to reach) and only then says hello. A squatter on the agent's port
 * gets a nonce, which nothing accepts; a proof it replays answers another nonce. The agent makes proofs at a
 * bounded rate (agent_gate.h). Then the hello: the agent reads nothing else before the MUNGE credential in it
 * checks out (and limits each of these first frames to TBM_HELLO_MAX bytes). Then requests:
 *   prove    {"type":"prove","version":4,"nonce":N}                      -> proof {"version","node","cred"}
 *             N: TBM_NONCE_LEN lowercase hex digits (16 random bytes), new for every connection.
 *   hello    {"type":"hello","version":4,"cred":"MUNGE:..."}               -> welcome {"version","uid","node"}
 *             The credential is the caller's without a payload (the connection is its uid's), or a job grant
 *             made to be a hello (root's credential whose payload is a grant for this node with "hello":1,
 *             current and unused: the connection is the grant's user's, never with root's rights even when
 *             the grant is for uid 0, and a spawn on it naming the same credential, or none, uses that grant
 *             without checking it twice). A root credential with any other payload, or a grant without
 *             "hello":1, is refused (code "grant"; tbm_grant_hello).
 *   probe    {"type":"probe"}                                             -> facts {"facts":{...}}
 *   spawn    {"type":"spawn","grant":G,"uid":U,"argv":[..],"env":["K=V"..],"cwd":"/..","pty":false,
 *             "rows":0,"cols":0,"time_limit":0,"files":{NAME:TEXT,..}}    -> started {"pid"}, then stdout
 *             and stderr data frames, then exit {"status","signal","core","rusage":{"utime_us",
 *             "stime_us","maxrss_kb","wall_us",...}} when the task has ended and its output is drained: its
 *             wait4 rusage (user and system CPU, peak resident memory of the task) and its wall time from
 *             fork to reaping; then, each optional, the Mac's GPU while the task ran ("gpu_samples",
 *             "gpu_mean", "gpu_peak": all three or none; shares 0..1, the mean not above the peak) or why
 *             not ("gpu_why"), and its package energy ("power_samples", "energy_j" in joules: both or
 *             none) or why not ("energy_why"); a why is a tbm_meter_why_name. An agent older than these
 *             sends none of them: not reported. While it runs the client may send stdin data frames, signal
 *             {"signal":"TERM"} and resize {"rows","cols"}.
 *   cleanup  {"type":"cleanup","job":J,"uid":U,"exclusive":B}  (root only)  -> cleaned {"job","killed","swept"}
 *             ends the job's tasks (killed: their process groups), then whatever else of the job is left on
 *             the Mac (swept), whatever it did to leave its group (lib/reap.h): when B (the Macs are the jobs'
 *             own, ExclusiveMacs=yes) and uid U has no other job here, every process of U; else the
 *             processes descended from the job's tasks. "uid" and "exclusive" may be left out (then only
 *             the job's tasks' descendants).
 *   usage    {"type":"usage","job":J,"step":S}  (root only)  -> used {"job","step","running":R,"tasks":[T..]}
 *             what the agent measured of the step's ended tasks (at most TBM_USAGE_TASKS_MAX), each T a task
 *             usage {"job","step","task","pid","status","signal","core","rusage":{...as in exit}} ("task" is
 *             the task's SLURM_PROCID, -1 when its spawn did not say), and R the step's tasks still running.
 *             The agent keeps these until the job's cleanup. A usage request is its connection's last:
 *             the agent closes after the reply (its gate answers one sent right behind the hello itself).
 *   watch    {"type":"watch"}  (root only)  -> watching {"ifaces":["en2",..]} (the Thunderbolt interfaces
 *             followed, at most TBM_WATCH_IFACES_MAX), then link {"iface":"en2","up":false,"seq":N} for every
 *             change of one's link (at most one per interface per 200 ms), until the client goes;
 *             missed {"count":K,"seq":N} when K messages could not be sent (a slow client). seq counts
 *             the changes the agent saw (1, 2, ...).
 * "files" (optional) are the job's files: each NAME (1 to TBM_FILE_NAME_MAX of [A-Za-z0-9._-], not starting
 * with '.') maps to its text (a JSON string without NUL, at most TBM_FILE_DATA_MAX bytes), at most
 * TBM_FILES_MAX of them, and the whole spawn fits one frame. Before it starts the task the agent makes the
 * job's folder <jobs-dir>/<job> (root's jobs folder; 0700, the grant's user's) and writes each file there as
 * the user, mode 0600; when it cannot, it answers error instead of started.
 * "grant" may be left out of spawn on the wire so that the agent itself refuses (and logs) a request
 * without one. Any refusal is error {"code","message"}. Signals travel by name ("TERM", "USR1") because their numbers
 * differ between Linux and macOS. A spawn runs one task per connection; the connection ends after exit.
 *
 * GRANTS. G is a MUNGE credential made by root (uid 0) on the bridge host whose payload is the JSON
 * object {"tbmesh_grant":1,"job":J,"step":S,"node":"mac01","uid":U,"gid":G,"expires":EPOCH} with "hello":1
 * when root made it to be a hello too (tbm_grant_t.hello). In a spawn, the agent decodes it and checks it with
 * tbm_grant_check() and tbm_grant_allows() (the connection's uid is its user's or root's). As a hello, the gate
 * decodes it and checks it with tbm_grant_hello(); the connection's uid is then
 * the grant's, and the spawn naming it (or none) uses it without decoding it again. */
#ifndef TBM_PROTO_H
#define TBM_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "errbuf.h"

#define TBM_PROTO_VERSION 4   /* 2: wall_us in exit rusage; usage/used. 3: a hello may carry a job grant.
                               * 4: the agent proves itself (prove, proof) before the hello; cleanup may sweep
                               * the job's user's processes (uid, exclusive; cleaned's swept) */
#define TBM_NONCE_LEN     32                     /* hex digits of a prove's nonce (16 random bytes) */
#define TBM_PROOF_KIND    "tbmesh-agent-proof"   /* the kind a proof's payload names */
#define TBM_FRAME_MAX     (1u << 20)             /* largest frame body */
#define TBM_DATA_MAX      (TBM_FRAME_MAX - 1u)   /* largest data chunk in one data frame */
#define TBM_HELLO_MAX     4096u                  /* largest first frame of a connection */
#define TBM_FRAME_HDR     4u                     /* the length prefix */
#define TBM_DATA_HDR      5u                     /* length prefix + kind byte of a data frame */
#define TBM_ARGV_MAX      4096                   /* argv and env entries in a spawn */
#define TBM_FILES_MAX     16                     /* job files in one spawn */
#define TBM_FILE_DATA_MAX (256u * 1024u)         /* bytes of one job file */
#define TBM_FILE_NAME_MAX 64                     /* characters of a job file's name */
#define TBM_PROTO_DEPTH   16                     /* deepest JSON nesting in a message or grant */
#define TBM_NODE_MAX      64                     /* characters of a node name, plus NUL */
#define TBM_TIME_LIMIT_MAX (366 * 86400)         /* seconds */
#define TBM_GRANT_TTL_MAX 86400                  /* a grant may not live longer than this (seconds) */
#define TBM_WINSIZE_MAX   10000                  /* rows or columns of a pty */
#define TBM_IFACE_MAX     15                     /* characters of an interface's name in a link message */
#define TBM_WATCH_IFACES_MAX 32                  /* interfaces in a watching message */
#define TBM_USAGE_TASKS_MAX 1024                 /* task usages in a used message */

/* What a frame is: the first body byte. */
typedef enum tbm_frame_kind {
    TBM_FRAME_STDIN = 1,
    TBM_FRAME_STDOUT = 2,
    TBM_FRAME_STDERR = 3,
    TBM_FRAME_JSON = '{',
} tbm_frame_kind_t;

/* One decoded frame. For JSON, data/len is the JSON text; for data frames, the bytes after the kind byte.
 * It points into the decoder's buffer and stays valid until the next call on that decoder. */
typedef struct tbm_frame {
    tbm_frame_kind_t kind;
    const unsigned char *data;
    size_t len;
} tbm_frame_t;

/* The incremental decoder: bytes in (in any pieces), whole frames out. */
typedef struct tbm_fdec {
    unsigned char *buf;
    size_t cap;      /* the buffer's size: from TBM_FRAME_HDR + TBM_FDEC_START (or the limit when less) up to
                      * TBM_FRAME_HDR + the limit, grown when a frame needs it, never shrunk */
    size_t start;    /* first byte not yet handed out */
    size_t end;      /* one past the last byte received */
    size_t limit;    /* largest frame body accepted now */
    int failed;      /* sticky after the first framing error */
    tbm_err_t err;
} tbm_fdec_t;

/* A decoder's first buffer: frames up to this size need no other (a connection's requests and replies, a
 * line of output); larger ones grow it. */
#define TBM_FDEC_START (64u * 1024u)

/* Set up a decoder accepting frames of up to `limit` bytes (at most TBM_FRAME_MAX); its buffer starts at
 * TBM_FDEC_START (or the limit when less: a decoder for an unauthenticated hello costs TBM_HELLO_MAX bytes)
 * and grows to hold the frames that come, never beyond one frame of the limit. Returns 0, or -1 with err set
 * when memory ran out. */
int tbm_fdec_init(tbm_fdec_t *d, size_t limit, tbm_err_t *err);
void tbm_fdec_free(tbm_fdec_t *d);

/* Change the largest frame body accepted from now on (1..TBM_FRAME_MAX; other values are clamped); what was
 * received is kept, and the buffer grows when a frame needs it. */
void tbm_fdec_set_limit(tbm_fdec_t *d, size_t limit);

/* Where to put received bytes without copying: *avail bytes at the returned pointer. After reading into
 * it, call tbm_fdec_commit() with the count. After tbm_fdec_next() returned 0 there is always room for
 * the rest of the frame being received (a partial frame is moved to the front only when it would not fit
 * behind its start, so big data frames are not copied again). */
unsigned char *tbm_fdec_space(tbm_fdec_t *d, size_t *avail);
void tbm_fdec_commit(tbm_fdec_t *d, size_t n);

/* Copy in as many of `len` bytes as fit; returns how many were taken (call tbm_fdec_next() until it
 * returns 0, then feed the rest). */
size_t tbm_fdec_feed(tbm_fdec_t *d, const void *data, size_t len);

/* The next whole frame: 1 and *f filled, 0 when more bytes are needed, -1 with err set on a framing error
 * (empty frame, frame over the limit, unknown kind byte) or when no memory was left for a frame within the
 * limit. Errors are sticky. */
int tbm_fdec_next(tbm_fdec_t *d, tbm_frame_t *f, tbm_err_t *err);

/* 1 and *f filled when what is buffered is exactly one whole frame within the limit, of a known kind; else
 * 0. Nothing is consumed and nothing is marked failed: the frame is still next for tbm_fdec_next(). */
int tbm_fdec_only(const tbm_fdec_t *d, tbm_frame_t *f);

/* Bytes buffered but not yet handed out as frames (a partial frame). */
size_t tbm_fdec_pending(const tbm_fdec_t *d);

/* The 5-byte header of a data frame carrying `len` (<= TBM_DATA_MAX) bytes of `kind`; write it and then
 * the bytes themselves (writev) to send the frame without copying. */
void tbm_data_header(unsigned char hdr[TBM_DATA_HDR], tbm_frame_kind_t kind, size_t len);

/* Messages -------------------------------------------------------------------------------------------- */

typedef enum tbm_msg_type {
    TBM_MSG_HELLO = 1,
    TBM_MSG_WELCOME,
    TBM_MSG_PROBE,
    TBM_MSG_FACTS,
    TBM_MSG_SPAWN,
    TBM_MSG_STARTED,
    TBM_MSG_SIGNAL,
    TBM_MSG_RESIZE,
    TBM_MSG_EXIT,
    TBM_MSG_CLEANUP,
    TBM_MSG_CLEANED,
    TBM_MSG_ERROR,
    TBM_MSG_WATCH,
    TBM_MSG_WATCHING,
    TBM_MSG_LINK,
    TBM_MSG_MISSED,
    TBM_MSG_USAGE,
    TBM_MSG_USED,
    TBM_MSG_PROVE,
    TBM_MSG_PROOF,
} tbm_msg_type_t;

/* One job file of a spawn: a plain name (no folders) and its text, written into the job's folder. */
typedef struct tbm_jobfile {
    const char *name;
    const char *data;
    size_t len;
} tbm_jobfile_t;

/* Why a task's GPU figures or energy are not reported (each travels as its name, tbm_meter_why_name). */
typedef enum tbm_meter_why {
    TBM_METER_SAID_NOTHING = 0,  /* reported, or the agent said nothing (an agent older than the figures) */
    TBM_METER_OFF,               /* "metrics-off": the agent runs no sampler (macnoded --metrics off) */
    TBM_METER_NO_RING,           /* "no-ring": the agent's sample ring is missing or damaged */
    TBM_METER_SHORT,             /* "short": the task ran less than one sample interval */
    TBM_METER_NO_SAMPLES,        /* "no-samples": no sample of the task's time had the figure (the Mac does not
                                  * report it, or its sampler did not run then) */
    TBM_METER_N
} tbm_meter_why_t;

/* What a task used, as the agent measured it: wait4's rusage of the task and its wall time; and what the
 * Mac's GPU and package power did while it ran (the agent's sample ring, lib/samplering.h). A task shares
 * its Mac with the other tasks running there: the GPU figures and the energy are the whole Mac's over the
 * task's time. Each of the two is reported or not, never 0 for "not known": gpu_samples > 0 when the GPU
 * figures are, power_samples > 0 when the energy is; else its why says why not. */
typedef struct tbm_rusage {
    int64_t utime_us;
    int64_t stime_us;
    int64_t maxrss_kb;
    int64_t wall_us;             /* from the fork to the reaping of the task */
    int gpu_samples;             /* samples of the GPU's busy share in the task's time; 0: not reported */
    double gpu_mean, gpu_peak;   /* their mean and largest, 0..1 (gpu_samples > 0) */
    int gpu_why;                 /* tbm_meter_why_t when gpu_samples is 0 */
    int power_samples;           /* samples of the package power in the task's time; 0: energy not reported */
    double energy_j;             /* the package's energy over the task's time, joules (power_samples > 0) */
    int energy_why;              /* tbm_meter_why_t when power_samples is 0 */
} tbm_rusage_t;

/* One ended task's usage as the agent keeps it (its state folder) and reports it (used). */
typedef struct tbm_task_usage {
    uint32_t job, step;
    int64_t task;                /* SLURM_PROCID of the task; -1 when not known */
    long pid;
    int status;                  /* exit code 0..255 when signal is empty */
    char signal[16];             /* the fatal signal's portable name, or "" */
    int core;
    tbm_rusage_t rusage;
} tbm_task_usage_t;

/* A message. Which members count depends on type (see the table at the top). A parsed message's strings
 * live in `doc` (and argv/env arrays are malloc'd): release it with tbm_msg_free(). To send one, fill the
 * members with your own pointers and call tbm_msg_encode(). */
typedef struct tbm_msg {
    tbm_msg_type_t type;
    json_object *doc;
    int version;                 /* prove, proof, hello, welcome */
    const char *nonce;           /* prove */
    const char *cred;            /* hello, proof */
    const char *grant;           /* spawn */
    uint32_t uid;                /* spawn (the user asked for), welcome (the caller as MUNGE says) */
    const char *node;            /* welcome, proof (what the agent says it is; its credential is what counts) */
    const char **argv;           /* spawn: argc strings */
    size_t argc;
    const char **env;            /* spawn: envc "NAME=value" strings */
    size_t envc;
    const char *cwd;             /* spawn: absolute */
    int pty, rows, cols;         /* spawn, resize */
    int time_limit;              /* spawn: seconds, 0 = none */
    long pid;                    /* started */
    const char *signal;          /* signal: a name from tbm_signal_by_name; exit: the fatal signal or NULL */
    int status;                  /* exit: exit code 0..255 when signal is NULL */
    int core;                    /* exit */
    tbm_rusage_t rusage;         /* exit */
    tbm_jobfile_t files[TBM_FILES_MAX]; /* spawn: the job's files (n_files of them) */
    int n_files;
    uint32_t job;                /* cleanup, cleaned */
    int64_t job_uid;             /* cleanup: the job's user (-1: not said; the agent then sweeps nothing) */
    int exclusive;               /* cleanup: the Mac was the job's alone (ExclusiveMacs=yes) */
    int killed;                  /* cleaned: the job's tasks signalled */
    int swept;                   /* cleaned: other processes of the job ended (outside its tasks' groups) */
    json_object *facts;          /* facts */
    const char *code, *message;  /* error */
    const char *iface;           /* link: the interface's name (1..TBM_IFACE_MAX of [A-Za-z0-9._-]) */
    int up;                      /* link: the link is up (running) */
    int64_t seq;                 /* link, missed: the agent's change counter (>= 1) */
    int64_t count;               /* missed: changes not sent (>= 1) */
    const char **ifaces;         /* watching: n_ifaces interface names */
    size_t n_ifaces;
    uint32_t step;               /* usage, used */
    int running;                 /* used: the step's tasks not ended yet */
    tbm_task_usage_t *tasks;     /* used: n_tasks ended tasks (parsed: malloc'd) */
    size_t n_tasks;
} tbm_msg_t;

/* The wire name of a type ("spawn"), or "?" for a value out of range. */
const char *tbm_msg_type_name(tbm_msg_type_t type);

/* Parse and validate a JSON frame: known type, every required member present with the right JSON type and
 * within bounds, nothing unknown that matters ignored silently (unknown members are allowed for later
 * versions). Returns 0, or -1 with err naming the message type, the member and the rule broken. */
int tbm_msg_parse(const tbm_frame_t *f, tbm_msg_t *m, tbm_err_t *err);

/* Release what a parsed message holds; the struct is zeroed. Safe on a zeroed or encoded-only message. */
void tbm_msg_free(tbm_msg_t *m);

/* A whole frame (length prefix included) for message m, malloc'd, its size in *len. The members are
 * validated as tbm_msg_parse would. NULL with err set when something is out of bounds or too large. */
unsigned char *tbm_msg_encode(const tbm_msg_t *m, size_t *len, tbm_err_t *err);

/* A hello carrying credential cred, and req (unless NULL) right behind it: both frames in one buffer, to go in
 * one write (the agent reads the hello first, and the request only once the credential checks out). malloc'd,
 * its size in *len; NULL with err naming the message that could not be encoded. */
unsigned char *tbm_msg_encode_hello(const char *cred, const tbm_msg_t *req, size_t *len, tbm_err_t *err);

/* Read a protocol text (a frame's JSON, a grant's payload, a task record): one strict JSON object of at most
 * TBM_FRAME_MAX bytes and TBM_PROTO_DEPTH levels (lib/json_read). NULL with err starting with `what`. */
json_object *tbm_proto_json(const void *text, size_t len, const char *what, tbm_err_t *err);

/* A frame around JSON text: malloc'd, its size in *out_len; NULL with err when too large. */
unsigned char *tbm_frame_wrap(const char *json, size_t len, size_t *out_len, tbm_err_t *err);

/* Task usage ----------------------------------------------------------------------------------------- */

/* A task usage as a JSON object (the members named for used above), or NULL when out of memory. */
json_object *tbm_task_usage_json(const tbm_task_usage_t *u);

/* Read a task usage object strictly: every member present, the right type, within bounds (a signal the
 * other side named must be one this side knows, and a task killed by a signal has status 0). `what` starts
 * the error ("used tasks[3]", "usage file x"). 0, or -1 with err. */
int tbm_task_usage_read(json_object *o, const char *what, tbm_task_usage_t *u, tbm_err_t *err);

/* The "rusage" member of an exit or a task usage (o holds it), read strictly as above: the four measures,
 * then the optional GPU and energy members (absent: not reported). `what` starts the error. 0, or -1 with err. */
int tbm_rusage_read(json_object *o, const char *what, tbm_rusage_t *ru, tbm_err_t *err);

/* Just the GPU and energy members of a "rusage" object ru (the rest untouched). 0, or -1 with err. */
int tbm_rusage_gpu_read(json_object *ru, const char *what, tbm_rusage_t *out, tbm_err_t *err);

/* Add the "rusage" member for ru to o (the GPU and energy members only when reported, or their why). */
void tbm_rusage_add(json_object *o, const tbm_rusage_t *ru);

/* How a task ended (status, signal, core) in o, consistent with each other. 0, or -1 with err. */
int tbm_task_end_read(json_object *o, const char *what, int *status, const char **signal, int *core,
                      tbm_err_t *err);

/* The wire name of a why ("metrics-off", ...; "" for TBM_METER_SAID_NOTHING and values out of range), and the
 * why of a name (-1 when it is none). */
const char *tbm_meter_why_name(int why);
int tbm_meter_why_parse(const char *name);

/* Job files ------------------------------------------------------------------------------------------- */

/* Is `name` a job file's name (1..TBM_FILE_NAME_MAX of [A-Za-z0-9._-], not starting with '.')? */
int tbm_job_file_name_ok(const char *name);

/* Read a JSON object mapping job file names to their text (a spawn's "files", or TBMESH_JOB_FILES) into
 * out[0..*n): names and texts point into `files`. 0, or -1 with err starting with `what`. */
int tbm_job_files_read(json_object *files, const char *what, tbm_jobfile_t out[TBM_FILES_MAX], int *n,
                       tbm_err_t *err);

/* Grants ---------------------------------------------------------------------------------------------- */

typedef struct tbm_grant {
    uint32_t job;
    uint32_t step;
    char node[TBM_NODE_MAX];
    uint32_t uid;
    uint32_t gid;
    int64_t expires;             /* seconds since the epoch */
    int hello;                   /* 1: the grant may be the hello of its own connection (payload "hello":1),
                                  * so whoever holds it needs no credential of its own: the SPANK plug-in's,
                                  * which it spends at once; 0 (absent): only in a spawn, on a connection of
                                  * its user's or root's */
} tbm_grant_t;

/* The payload text of a grant (malloc'd, NUL-terminated), NULL with err set when a field is invalid. */
char *tbm_grant_payload(const tbm_grant_t *g, tbm_err_t *err);

/* Read a decoded grant payload. Returns 0, or -1 with err saying which member is missing or wrong. */
int tbm_grant_parse(const void *payload, size_t len, tbm_grant_t *g, tbm_err_t *err);

/* Is the grant good here and now? The credential must have been made by uid 0 (cred_uid), name this node,
 * and expire after `now` but no more than TBM_GRANT_TTL_MAX seconds after it. 0, or -1 with err. */
int tbm_grant_check(const tbm_grant_t *g, uint32_t cred_uid, const char *node, int64_t now, tbm_err_t *err);

/* May `caller_uid` (the connection's MUNGE uid) start a task as `want_uid` under this grant? The caller
 * must be the grant's user or root, and want_uid must be the grant's user. 0, or -1 with err. */
int tbm_grant_allows(const tbm_grant_t *g, uint32_t caller_uid, uint32_t want_uid, tbm_err_t *err);

/* A hello's credential whose payload (len bytes) MUNGE decoded, made by cred_uid: whether it opens its
 * connection as a job grant: a grant (tbm_grant_parse) good here and now (tbm_grant_check) and made to be a
 * hello ("hello":1). 0 with *g, or -1 with err naming the grant's job, step and uid once it is one. */
int tbm_grant_hello(const void *payload, size_t len, uint32_t cred_uid, const char *node, int64_t now,
                    tbm_grant_t *g, tbm_err_t *err);

/* The agent's proof --------------------------------------------------------------------------------- */

/* Is `s` a prove's nonce: exactly TBM_NONCE_LEN lowercase hex digits? */
int tbm_nonce_ok(const char *s);

/* The nonce of TBM_NONCE_LEN / 2 random bytes: out gets its hex digits and a NUL. */
void tbm_nonce_format(const unsigned char *raw, char out[TBM_NONCE_LEN + 1]);

/* The payload of the agent's proof for a prove's nonce: {"tbmesh_proof":1,"kind":TBM_PROOF_KIND,"node":NODE,
 * "nonce":N} (malloc'd), which is no grant (tbm_grant_parse wants "tbmesh_grant") and no record's seal. NULL
 * with err when the node's name or the nonce is not one. */
char *tbm_proof_payload(const char *node, const char *nonce, tbm_err_t *err);

/* A proof's credential as the client's munged saw it. */
typedef struct tbm_proof_cred {
    int decoded;                 /* munged decoded it; else `why` says what munged said */
    const char *why;
    uint32_t uid;                /* who made it (decoded) */
    const void *payload;         /* its payload (decoded) */
    size_t len;
} tbm_proof_cred_t;

/* Did the agent at `agent` (ADDR:PORT, for messages) prove that it is macnoded of `node`, answering `nonce`?
 * The credential must decode (the cluster's MUNGE key), be root's, be a proof (its kind), name `nonce` (else
 * it was made for another connection: replayed) and `node`. 0, or -1 with err saying what was wrong and what
 * to do: nothing may be sent to that agent then. */
int tbm_proof_check(const tbm_proof_cred_t *p, const char *agent, const char *node, const char *nonce,
                    tbm_err_t *err);

/* Signals by portable name --------------------------------------------------------------------------- */

/* The local number of signal `name` ("TERM", "USR1"; without "SIG"), 0 when unknown. */
int tbm_signal_by_name(const char *name);

/* The portable name of local signal `signo`, NULL when it has none. */
const char *tbm_signal_name(int signo);

#endif
