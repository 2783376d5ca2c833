/* spank_bridge.c: spank_tbmesh for a bridge-mode Mac: slurmstepd runs on the bridge host, so each task of a
 * step becomes the forwarder (`macnode exec`), which has the Mac's agent run the real command there. As
 * root (task_init_privileged) it makes the task's job grant, a MUNGE credential of uid 0 naming job, step,
 * node, user and expiry; as the user (task_init) it execs the forwarder with the task's argv and env. One
 * grant and one connection per task: the step's files (device matrix, ring hostfile) ride in the spawn
 * request (TBMESH_JOB_FILES), and the agent writes them in the job's folder on the Mac. The connection is
 * opened as root too while slurmstepd still sets the task up: the agent proves itself on it (lib/proto.h:
 * prove, proof; nothing is sent before) and the grant itself is its hello; the forwarder takes it over
 * (TBMESH_AGENT_FD) with the agent's welcome on its way, and only sends the spawn. When that cannot be done,
 * the forwarder connects itself and says why it cannot. Root's own questions to an agent (tbm_spank_agent_ask)
 * have it prove itself first as well. */
#include "config.h"
#include "spank_tbmesh.h"

#include <errno.h>
#include <fcntl.h>
#include <munge.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>
#include "tbm_slurm.h"
#include "run.h"

#define FORWARDER_BESIDE "../libexec/slurm-tbmesh/macnode-forward"   /* from macnode's folder */
#define GRANT_TTL 300   /* seconds: long enough for the spawn, not for reuse */
#define FORWARDER_FAILED 255   /* macnode exec's status when the agent could not be reached or refused */
#define AGENT_PROBE_MS 3000    /* how long root waits for the agent's answer at a failed task's end */
#define GREET_CONNECT_MS 200   /* how long the task's early connection may take before the forwarder is left
                                * to connect itself (and to say what is wrong) */
#define GREET_PROOF_MS 1000    /* ... and the agent's proof on it */
#define MACNODE_RUN_MS 300000  /* the longest a macnode command of an epilog may take */

static char *grant;     /* made as root for this task */
static long long grant_start, grant_end;   /* when (tbm_now_us), for the forwarder's launch times */
static int agent_fd = -1;   /* the task's connection to its agent, greeted; -1: the forwarder connects */

static int agent_connect(const char *agent, int ms, char *why, size_t len);
static int agent_proves(int fd, tbm_fdec_t *dec, const char *agent, const char *node, long long end, char *why,
                        size_t len);

static int make_grant(spank_t sp, char **out, tbm_err_t *err)
{
    const tbm_spank_step_t *s = &tbm_spank_step;
    const char *sock = tbm_spank_args.munge_socket;
    tbm_grant_t g;
    munge_ctx_t ctx;
    munge_err_t mrc;
    char *payload;

    (void)sp;
    memset(&g, 0, sizeof(g));
    g.job = s->job;
    g.step = s->step;
    g.uid = s->uid;
    g.gid = s->gid;
    tbm_spank_say(g.node, sizeof(g.node), "%s", s->node);
    g.expires = (int64_t)time(NULL) + GRANT_TTL;
    g.hello = 1;   /* it opens the task's connection itself (greet_agent) */
    if (!(payload = tbm_grant_payload(&g, err)))
        return -1;
    ctx = munge_ctx_create();
    if (!ctx || (sock[0] && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, sock) != EMUNGE_SUCCESS)) {
        free(payload);
        if (ctx)
            munge_ctx_destroy(ctx);
        return tbm_errprintf(err, "munge: cannot use the socket %s", sock);
    }
    mrc = munge_encode(out, ctx, payload, (int)strlen(payload));
    free(payload);
    if (mrc != EMUNGE_SUCCESS)
        tbm_errprintf(err, "munge: cannot make the job grant: %s (is munged running?)", munge_ctx_strerror(ctx));
    munge_ctx_destroy(ctx);
    return mrc == EMUNGE_SUCCESS ? 0 : -1;
}

/* srun --mpi=pmix (or pmi2) in bridge mode: the PMI server is slurmstepd's, on the bridge host, where an MPI
 * rank on the Mac cannot reach it, so MPI_Init would fail there. Said once per step (task 0); the tasks still
 * run (a program that does not call MPI_Init does not mind). */
static void warn_pmi(spank_t sp)
{
    char type[32] = "";
    uint32_t task = 1;

    if (spank_get_item(sp, S_TASK_GLOBAL_ID, &task) != ESPANK_SUCCESS || task != 0 ||
        spank_getenv(sp, "SLURM_MPI_TYPE", type, sizeof(type)) != ESPANK_SUCCESS || strncmp(type, "pmi", 3) != 0)
        return;
    slurm_spank_log("tbmesh: srun --mpi=%s on a bridge-mode Mac: its PMI server runs on the bridge host, which "
                    "MPI on the Mac cannot reach, so MPI_Init will fail; run mpirun inside the job instead (it "
                    "starts its daemons on the Macs through srun)", type);
}

/* A MUNGE credential of uid's without a payload: munged goes by the caller's effective ids, so the process
 * takes uid's and gid's for the call and its own again after (root's questions to an agent: 0, 0). NULL on
 * any failure. */
static char *user_credential(uid_t uid, gid_t gid)
{
    const char *sock = tbm_spank_args.munge_socket;
    uid_t euid = geteuid();
    gid_t egid = getegid();
    munge_ctx_t ctx = munge_ctx_create();
    char *cred = NULL;

    if (!ctx || (sock[0] && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, sock) != EMUNGE_SUCCESS)) {
        if (ctx)
            munge_ctx_destroy(ctx);
        return NULL;
    }
    if (setegid(gid) == 0) {
        if (seteuid(uid) == 0) {
            if (munge_encode(&cred, ctx, NULL, 0) != EMUNGE_SUCCESS)
                cred = NULL;
            if (seteuid(euid) < 0) {   /* cannot happen (the saved uid is root's); then the task does not run */
                dprintf(STDERR_FILENO, "tbmesh: cannot take root's ids back: %m\n");
                _exit(TBM_SPANK_REFUSED);
            }
        }
        if (setegid(egid) < 0) {
            dprintf(STDERR_FILENO, "tbmesh: cannot take root's group back: %m\n");
            _exit(TBM_SPANK_REFUSED);
        }
    }
    munge_ctx_destroy(ctx);
    return cred;
}

/* Open the task's connection to its agent, have the agent prove itself on it, and say hello with the task's
 * grant (agent_fd), while slurmstepd finishes the task's set-up: the agent checks the grant meanwhile, takes
 * the connection for the grant's user's, and the forwarder's spawn, naming the same grant, needs no other
 * credential. One MUNGE credential per task, made and checked once. When the connection cannot be made, the
 * agent does not prove itself in time, or the hello is not written, nothing is kept and the forwarder
 * connects itself (it has the agent prove itself too, and says what is wrong; the grant is unspent). */
static void greet_agent(const tbm_spank_step_t *s)
{
    unsigned char *frame = NULL;
    char why[1024];
    size_t len;
    tbm_fdec_t dec;
    int fd = agent_connect(s->agent, GREET_CONNECT_MS, why, sizeof(why)), proved = 0;

    if (fd < 0)
        return;
    if (tbm_fdec_init(&dec, TBM_FRAME_MAX, NULL) == 0) {
        proved = agent_proves(fd, &dec, s->agent, s->node, tbm_now_ms() + GREET_PROOF_MS, why, sizeof(why)) == 1;
        tbm_fdec_free(&dec);
    }
    if (proved && (frame = tbm_msg_encode_hello(grant, NULL, &len, NULL)) && tbm_write_all(fd, frame, len) == 0)
        agent_fd = fd;
    else
        close(fd);
    free(frame);
}

int tbm_spank_bridge_task_privileged(spank_t sp)
{
    const tbm_spank_step_t *s = &tbm_spank_step;
    tbm_err_t err = { { 0 } };

    if (!s->active || !s->bridge || s->refusal[0])
        return 0;
    warn_pmi(sp);
    grant_start = tbm_now_us();
    if (make_grant(sp, &grant, &err) < 0) {
        /* the task then fails in tbm_spank_remote_task_init, saying why */
        tbm_spank_say(tbm_spank_step.refusal, sizeof(tbm_spank_step.refusal), "cannot forward this task to %s: %s",
                 s->node, err.msg);
    }
    grant_end = tbm_now_us();
    if (grant)
        greet_agent(s);
    return 0;
}

/* The step's files as the forwarder passes them on: {"name": "text", ...}; NULL when there are none. */
static char *files_json(const tbm_envplan_t *plan)
{
    json_object *o;
    const char *name;
    char *text = NULL;
    size_t i;

    if (plan->n_files == 0 || !(o = json_object_new_object()))
        return NULL;
    for (i = 0; i < plan->n_files; i++) {
        name = strrchr(plan->files[i].path, '/') ? strrchr(plan->files[i].path, '/') + 1 : plan->files[i].path;
        json_object_object_add(o, name, json_object_new_string_len(plan->files[i].data, (int)plan->files[i].len));
    }
    text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return text;
}

static int set(spank_t sp, const char *name, const char *value)
{
    return spank_setenv(sp, name, value, 1) == ESPANK_SUCCESS ? 0 : -1;
}

/* When the task asks for its launch times ($TBMESH_LAUNCH_TIMES, see macnode exec --verbose): the grant's
 * and the exec's stamps, for the forwarder alone (TBMESH_LAUNCH_STAMPS). */
static int launch_stamps(spank_t sp)
{
    char want[8] = "", text[80];

    if (spank_getenv(sp, "TBMESH_LAUNCH_TIMES", want, sizeof(want)) != ESPANK_SUCCESS || !want[0] ||
        strcmp(want, "0") == 0)
        return 0;
    snprintf(text, sizeof(text), "%lld %lld %lld", grant_start, grant_end, tbm_now_us());
    return set(sp, "TBMESH_LAUNCH_STAMPS", text);
}

/* Become the forwarder: macnode-forward (fwd[1..], its argv[0] its own name), whose exec loads only what it
 * needs; where it is not installed (or cannot run here), `macnode exec` (fwd). Returns only when neither runs
 * (errno: macnode's). */
static void exec_forwarder(char **fwd, char **env)
{
    char path[sizeof(tbm_spank_args.forwarder)] = "";

    if (tbm_spank_args.forwarder[0])
        snprintf(path, sizeof(path), "%s", tbm_spank_args.forwarder);
    else if (tbm_path_beside(tbm_spank_args.macnode, FORWARDER_BESIDE, path, sizeof(path)) < 0)
        path[0] = '\0';
    if (path[0]) {
        fwd[1] = "macnode-forward";
        execve(path, fwd + 1, env);
        if (tbm_spank_args.forwarder[0])   /* named in plugstack.conf: worth a word on the task's stderr */
            dprintf(STDERR_FILENO, "tbmesh: cannot start the forwarder %s (%m); running macnode exec instead\n",
                    path);
        fwd[1] = "exec";
    }
    execve(tbm_spank_args.macnode, fwd, env);
}

/* As the user, just before the task would exec: exec the forwarder instead. */
int tbm_spank_bridge_task_init(spank_t sp)
{
    const tbm_spank_step_t *s = &tbm_spank_step;
    char **argv = NULL, **env = NULL, **fwd, pty[16], fdtext[16], *files = NULL;
    int argc = 0, i, n = 0, rc = 0;

    if (!s->active || !s->bridge || !grant)
        return 0;
    if (s->planned && !(files = files_json(&s->plan)) && s->plan.n_files)
        rc = -1;
    if (agent_fd >= 0 && fcntl(agent_fd, F_GETFD) < 0) {
        /* the agent has spent the grant on it: the forwarder could not use it again */
        dprintf(STDERR_FILENO, "tbmesh: the task's connection to the agent on %s was closed before the task "
                "started (its grant was spent on it); run the step again\n", s->node);
        _exit(TBM_SPANK_REFUSED);
    }
    if (agent_fd >= 0) {
        snprintf(fdtext, sizeof(fdtext), "%d", agent_fd);
        rc = rc < 0 ? rc : set(sp, "TBMESH_AGENT_FD", fdtext);
    } else {
        spank_unsetenv(sp, "TBMESH_AGENT_FD");
    }
    if (rc < 0 || set(sp, "TBMESH_GRANT", grant) < 0 || set(sp, "TBMESH_AGENT", s->agent) < 0 ||
        (tbm_spank_args.munge_socket[0] && set(sp, "TBMESH_MUNGE_SOCKET", tbm_spank_args.munge_socket) < 0) ||
        (files && set(sp, "TBMESH_JOB_FILES", files) < 0) || launch_stamps(sp) < 0 ||
        spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS || !(fwd = calloc((size_t)argc + 5, sizeof(*fwd)))) {
        free(files);
        dprintf(STDERR_FILENO, "tbmesh: cannot prepare the forwarder of this task to %s\n", s->node);
        _exit(TBM_SPANK_REFUSED);
    }
    free(files);
    fwd[n++] = "macnode";
    fwd[n++] = "exec";
    if (spank_getenv(sp, "SLURM_PTY_PORT", pty, sizeof(pty)) == ESPANK_SUCCESS)
        fwd[n++] = "--pty";
    fwd[n++] = "--";
    for (i = 0; i < argc; i++)
        fwd[n++] = argv[i];
    exec_forwarder(fwd, env);
    dprintf(STDERR_FILENO, "tbmesh: cannot start the forwarder %s: %m\n", tbm_spank_args.macnode);
    _exit(TBM_SPANK_REFUSED);
}

/* Job epilog (slurmd, root): `macnode cleanup` has the agent (once it has proved itself as node's) end what
 * is left of the job on the Mac and remove the job's folder; with the job's user, and whether the Macs are
 * the jobs' own (ExclusiveMacs), it ends too what the job's processes left outside their groups. */
void tbm_spank_bridge_epilog(uint32_t job, const char *node, const char *agent, uid_t uid, int exclusive)
{
    char jobarg[16], uidarg[16], agentarg[TBM_HOSTNAME_MAX + 8], nodearg[TBM_HOSTNAME_MAX];
    char *argv[] = { "macnode", "cleanup", "--agent", agentarg, "--node", nodearg, "--job", jobarg, "--uid", uidarg,
                     exclusive ? "--exclusive" : NULL, NULL };

    snprintf(jobarg, sizeof(jobarg), "%u", job);
    snprintf(uidarg, sizeof(uidarg), "%u", (unsigned)uid);
    snprintf(agentarg, sizeof(agentarg), "%s", agent);
    snprintf(nodearg, sizeof(nodearg), "%s", node);
    if (tbm_spank_run_macnode(argv) < 0)
        slurm_error("tbmesh: job %u: macnode cleanup on %s (%s) failed; the agent sweeps leftovers itself", job,
                    node, agent);
}

int tbm_spank_run_macnode(char **argv)
{
    extern char **environ;
    char sock[sizeof(tbm_spank_args.munge_socket) + 32], *name = argv[0];
    const char *add[] = { sock, NULL };
    run_opts_t o = { .env = environ, .env_add = tbm_spank_args.munge_socket[0] ? add : NULL,
                     .timeout_ms = MACNODE_RUN_MS, .truncate = 1, .stderr_to = RUN_STDERR_PASS };
    tbm_err_t err = { { 0 } };
    run_out_t r;
    int rc;

    snprintf(sock, sizeof(sock), "TBMESH_MUNGE_SOCKET=%s", tbm_spank_args.munge_socket);
    argv[0] = tbm_spank_args.macnode;
    rc = run_command((const char *const *)argv, &o, &r, &err);
    argv[0] = name;
    if (rc < 0)
        slurm_error("tbmesh: %s", err.msg);
    run_out_free(&r);
    return rc == 0 ? 0 : -1;
}

/* A TCP connection to the agent ("addr:port") made within ms: its fd (blocking, TCP_NODELAY, kept across
 * exec), or -1 with why. */
static int agent_connect(const char *agent, int ms, char *why, size_t len)
{
    char host[TBM_HOSTNAME_MAX + 8], *colon;
    struct addrinfo hints, *ai = NULL;
    struct pollfd pfd;
    socklen_t sl = sizeof(int);
    int fd, rc, soerr = 0, one = 1;

    tbm_spank_say(host, sizeof(host), "%s", agent);
    if (!(colon = strrchr(host, ':')))
        return tbm_spank_say(why, len, "no port in %s", agent), -1;
    *colon = '\0';
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if ((rc = getaddrinfo(host, colon + 1, &hints, &ai)) != 0)
        return tbm_spank_say(why, len, "%s: %s", host, gai_strerror(rc)), -1;
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
    rc = fd < 0 ? -1 : connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc < 0 && fd >= 0 && errno == EINPROGRESS) {
        pfd.fd = fd;
        pfd.events = POLLOUT;
        rc = poll(&pfd, 1, ms);
        if (rc == 0)
            errno = ETIMEDOUT;
        rc = rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0 ? 0 : -1;
        if (soerr)
            errno = soerr;
    }
    if (rc == 0 && (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0 ||
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0))
        rc = -1;
    if (rc < 0) {
        snprintf(why, len, "%s", strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

/* The next whole message on fd by `end` (tbm_now_ms), into *m. 1; 0 when what came is no message (why says
 * what); -1 when nothing came (closed, silent, a read error: why); -2 when this side cannot wait. */
static int next_msg(int fd, tbm_fdec_t *dec, long long end, tbm_msg_t *m, char *why, size_t len)
{
    tbm_err_t err = { { 0 } };
    tbm_frame_t fr;
    struct pollfd p;
    unsigned char *space;
    size_t avail;
    long long left;
    ssize_t r;
    int got;

    for (;;) {
        if ((got = tbm_fdec_next(dec, &fr, &err)) > 0 && tbm_msg_parse(&fr, m, &err) == 0)
            return 1;
        if (got != 0)
            return tbm_spank_say(why, len, "it answered with %s: %s", got < 0 ? "bytes that are no message" :
                                 "a message that does not parse", err.msg), 0;
        if ((left = end - tbm_now_ms()) <= 0)
            return tbm_spank_say(why, len, "it took the connection but sent no answer in time"), -1;
        p = (struct pollfd){ fd, POLLIN, 0 };
        if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
            return tbm_spank_say(why, len, "cannot wait for its answer: %s", strerror(errno)), -2;
        if (!p.revents)
            continue;
        space = tbm_fdec_space(dec, &avail);
        r = read(fd, space, avail);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return tbm_spank_say(why, len, "it took the connection and closed it without an answer%s%s",
                                 r < 0 ? ": " : "", r < 0 ? strerror(errno) : ""), -1;
        tbm_fdec_commit(dec, (size_t)r);
    }
}

/* Is the proof's credential root's proof for node and nonce (lib's tbm_proof_check, munged decoding it)? 0, or
 * -1 with why. */
static int proof_holds(const char *cred, const char *agent, const char *node, const char *nonce, char *why,
                       size_t len)
{
    const char *sock = tbm_spank_args.munge_socket;
    munge_ctx_t ctx = munge_ctx_create();
    tbm_proof_cred_t p = { 0 };
    tbm_err_t err = { { 0 } };
    void *payload = NULL;
    int plen = 0, rc;
    uid_t uid = (uid_t)-1;
    gid_t gid;
    munge_err_t mrc = EMUNGE_SNAFU;

    if (ctx && (!sock[0] || munge_ctx_set(ctx, MUNGE_OPT_SOCKET, sock) == EMUNGE_SUCCESS))
        mrc = munge_decode(cred, ctx, &payload, &plen, &uid, &gid);
    p.decoded = mrc == EMUNGE_SUCCESS;
    p.why = ctx && munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(mrc);
    p.uid = (uint32_t)uid, p.payload = payload, p.len = plen > 0 ? (size_t)plen : 0;
    rc = tbm_proof_check(&p, agent, node, nonce, &err);
    if (rc < 0)
        tbm_spank_say(why, len, "%s", err.msg);
    free(payload);
    if (ctx)
        munge_ctx_destroy(ctx);
    return rc;
}

/* Before anything of root's or a task's goes to the agent: a prove with a fresh nonce, and its proof by `end`,
 * checked. 1 when it proved itself as node's; 0 when it answered with no proof or a false one, -1 when it did
 * not answer (why says which); -2 when this side cannot ask (no random bytes, no memory). */
static int agent_proves(int fd, tbm_fdec_t *dec, const char *agent, const char *node, long long end, char *why,
                        size_t len)
{
    unsigned char raw[TBM_NONCE_LEN / 2], *frame;
    char nonce[TBM_NONCE_LEN + 1];
    tbm_msg_t prove = { .type = TBM_MSG_PROVE, .version = TBM_PROTO_VERSION, .nonce = nonce }, m;
    size_t n;
    int rc;

    if (getentropy(raw, sizeof(raw)) < 0)
        return tbm_spank_say(why, len, "no random bytes for the agent's challenge: %s", strerror(errno)), -2;
    tbm_nonce_format(raw, nonce);
    if (!(frame = tbm_msg_encode(&prove, &n, NULL)))
        return tbm_spank_say(why, len, "out of memory"), -2;
    rc = tbm_write_all(fd, frame, n);
    free(frame);
    if (rc < 0)
        return tbm_spank_say(why, len, "the connection failed: %s", strerror(errno)), -1;
    if ((rc = next_msg(fd, dec, end, &m, why, len)) != 1)
        return rc;
    if (m.type != TBM_MSG_PROOF) {
        tbm_spank_say(why, len, "it did not prove itself: it answered %s%s%s where a proof was expected (something "
                      "other than macnoded, or an older one, holds the port)", tbm_msg_type_name(m.type),
                      m.type == TBM_MSG_ERROR ? ": " : "", m.type == TBM_MSG_ERROR && m.message ? m.message : "");
        rc = 0;
    } else {
        rc = proof_holds(m.cred, agent, node, nonce, why, len) == 0 ? 1 : 0;
    }
    tbm_msg_free(&m);
    return rc;
}

/* One exchange with node's agent ("addr:port") as root, within ms (tbm_spank_agent_ask): the agent proves
 * itself, then root's hello with req behind it in one write, then messages until one of type want. */
static int ask_node(const char *node, const char *agent, const tbm_msg_t *req, tbm_msg_type_t want,
                    tbm_msg_t *reply, int ms, char *why, size_t len)
{
    long long end = tbm_now_ms() + ms;
    unsigned char *frame = NULL;
    char *cred = NULL;
    tbm_err_t err = { { 0 } };
    tbm_fdec_t dec;
    tbm_msg_t m;
    size_t n;
    int fd = agent_connect(agent, ms, why, len), rc;

    if (fd < 0)
        return -1;
    if (tbm_fdec_init(&dec, TBM_FRAME_MAX, &err) < 0) {
        close(fd);
        return -2;
    }
    if ((rc = agent_proves(fd, &dec, agent, node, end, why, len)) == 0)
        rc = -1;   /* no agent answered: something else holds its port */
    if (rc < 0)
        goto out;
    cred = user_credential(0, 0);
    if (!cred || !(frame = tbm_msg_encode_hello(cred, req, &n, &err))) {
        tbm_spank_say(why, len, "%s", !cred ? "no MUNGE credential for root (is munged running?)" : err.msg);
        rc = -2;
        goto out;
    }
    if (tbm_write_all(fd, frame, n) < 0) {
        tbm_spank_say(why, len, "the connection failed: %s", strerror(errno));
        rc = -1;
        goto out;
    }
    while ((rc = next_msg(fd, &dec, end, &m, why, len)) == 1 && m.type == TBM_MSG_WELCOME && want != m.type)
        tbm_msg_free(&m);   /* the welcome before the reply */
    if (rc == 1 && m.type != want) {
        if (m.type == TBM_MSG_ERROR)
            tbm_spank_say(why, len, "it refused: %s", m.message ? m.message : "(no reason)");
        else
            tbm_spank_say(why, len, "it answered %s where %s was expected", tbm_msg_type_name(m.type),
                          tbm_msg_type_name(want));
        tbm_msg_free(&m);
        rc = 0;
    } else if (rc == 1) {
        *reply = m;
    }
out:
    free(frame);
    free(cred);
    tbm_fdec_free(&dec);
    close(fd);
    return rc;
}

/* One exchange with a bridge-mode Mac's agent ("addr:port") as root, within ms: the agent proves itself as the
 * Mac tbmesh.conf puts at that address, then a hello (MUNGE, uid 0) with req (unless NULL) behind it in the
 * same write, then frames until one of type want, which lands in *reply (the caller frees it with
 * tbm_msg_free). The welcome before it is read past, unless it is what is wanted. 1: *reply holds it; 0: the
 * agent answered, but not with want (its refusal, another message, or bytes that are no frame: why says which);
 * -1: no answer (refused, closed, silent for ms, or no proof of the agent: why says which); -2: root cannot ask
 * from here (no credential from munged, no memory, no Mac of tbmesh.conf at that address), which says nothing of
 * the agent. */
int tbm_spank_agent_ask(const char *agent, const tbm_msg_t *req, tbm_msg_type_t want, tbm_msg_t *reply, int ms,
                        char *why, size_t len)
{
    tbm_conf_t conf;
    tbm_err_t err = { { 0 } };
    char node[TBM_HOSTNAME_MAX];
    int i;

    if (tbm_spank_load_conf(&conf, &err) < 0)
        return tbm_spank_say(why, len, "%s", err.msg), -2;
    i = tbm_conf_node_at(&conf, agent);
    if (i >= 0)
        tbm_spank_say(node, sizeof(node), "%s", conf.nodes[i].name);
    tbm_conf_free(&conf);
    if (i < 0)
        return tbm_spank_say(why, len, "tbmesh.conf puts no Mac (or more than one) at %s, so its agent cannot prove "
                             "itself", agent), -2;
    return ask_node(node, agent, req, want, reply, ms, why, len);
}

/* Does node's agent answer within AGENT_PROBE_MS? Its proof on a new connection, then a hello as root and a
 * whole frame back (its welcome, or a refusal: either way it is there). A port that takes the connection is not
 * enough: the kernel completes connections on the listening socket of an agent that is stopped, or still being
 * killed when its connection's end reached the forwarder, and something else may hold the port of an agent
 * that is gone. 0 yes (or root cannot tell from here); -1 with why. */
static int agent_answers(const char *node, const char *agent, char *why, size_t len)
{
    tbm_msg_t m;
    int rc = ask_node(node, agent, NULL, TBM_MSG_WELCOME, &m, AGENT_PROBE_MS, why, len);

    if (rc == 1)
        tbm_msg_free(&m);
    return rc == -1 ? -1 : 0;
}

/* As root, when a forwarded task ends: a forwarder that failed (255) or was killed may mean the Mac's agent is
 * gone. Root looks for itself (a user's exit 255 alone drains nothing) and, when the agent does not answer a hello,
 * drains the Mac at once with the reason; `macnode check` resumes it once the agent is back. */
int tbm_spank_bridge_task_exit(spank_t sp)
{
    const tbm_spank_step_t *s = &tbm_spank_step;
    update_node_msg_t msg;
    char why[256], reason[512];
    int status = 0;

    if (!s->active || !s->bridge || spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS)
        return 0;
    /* A forwarder that lost its agent exits 255; but when the other ranks fail first (their peer on the Mac
     * is gone too), Slurm may kill it before it does: a forwarder killed by a signal is looked at as well. */
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == FORWARDER_FAILED) && !WIFSIGNALED(status))
        return 0;
    if (agent_answers(s->node, s->agent, why, sizeof(why)) == 0)
        return 0;
    tbm_spank_say(reason, sizeof(reason), TBM_HEALTH_REASON_PREFIX "agent-unreachable at %s (%s): a task of job %u could not be forwarded",
             s->agent, why, s->job);
    slurm_init_update_node_msg(&msg);
    msg.node_names = (char *)s->node;
    msg.node_state = NODE_STATE_DRAIN;
    msg.reason = reason;
    msg.reason_uid = 0;
    if (slurm_update_node(&msg) != SLURM_SUCCESS)
        slurm_error("tbmesh: cannot drain %s (%s): %s", s->node, reason, tbm_slurm_errstr());
    else
        slurm_error("tbmesh: drained %s: %s", s->node, reason);
    return 0;
}
