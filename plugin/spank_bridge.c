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
#include "spank_bridge.h"
#include "spank_step.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>
#include "tbm_slurm.h"
#include "auth.h"
#include "client.h"
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

/* munged's socket from plugstack.conf; NULL: libmunge's default. */
static const char *munge_socket(void)
{
    return tbm_spank_args()->munge_socket[0] ? tbm_spank_args()->munge_socket : NULL;
}

static int make_grant(spank_t sp, char **out, tbm_err_t *err)
{
    const tbm_spank_step_t *s = tbm_spank_step();
    tbm_grant_t g;
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
    *out = auth_encode_doing("make the job grant", munge_socket(), payload, strlen(payload), 0, err);
    free(payload);
    return *out ? 0 : -1;
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

/* Open the task's connection to its agent, have the agent prove itself on it, and say hello with the task's
 * grant (agent_fd), while slurmstepd finishes the task's set-up: the agent checks the grant meanwhile, takes
 * the connection for the grant's user's, and the forwarder's spawn, naming the same grant, needs no other
 * credential. One MUNGE credential per task, made and checked once. When the connection cannot be made, the
 * agent does not prove itself in time, or the hello is not written, nothing is kept and the forwarder
 * connects itself (it has the agent prove itself too, and says what is wrong; the grant is unspent). */
static void greet_agent(const tbm_spank_step_t *s)
{
    client_t c = { .agent = s->agent, .want = s->node, .mac = s->node, .socket = munge_socket(),
                   .connect_ms = GREET_CONNECT_MS, .reply_ms = GREET_PROOF_MS,
                   .deadline = tbm_now_ms() + GREET_CONNECT_MS + GREET_PROOF_MS, .fd = -1, .task_lane = 1 };
    tbm_err_t err = { { 0 } };

    agent_fd = client_greet(&c, grant, &err);
}

int tbm_spank_bridge_task_privileged(spank_t sp)
{
    const tbm_spank_step_t *s = tbm_spank_step();
    tbm_err_t err = { { 0 } };

    if (!s->active || !s->bridge || s->refusal[0])
        return 0;
    warn_pmi(sp);
    grant_start = tbm_now_us();
    if (make_grant(sp, &grant, &err) < 0) {
        /* the task then fails in tbm_spank_remote_task_init, saying why */
        tbm_spank_step_refuse("cannot forward this task to %s: %s",
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
    char path[sizeof(tbm_spank_args()->forwarder)] = "";

    if (tbm_spank_args()->forwarder[0])
        snprintf(path, sizeof(path), "%s", tbm_spank_args()->forwarder);
    else if (tbm_path_beside(tbm_spank_args()->macnode, FORWARDER_BESIDE, path, sizeof(path)) < 0)
        path[0] = '\0';
    if (path[0]) {
        fwd[1] = "macnode-forward";
        execve(path, fwd + 1, env);
        if (tbm_spank_args()->forwarder[0])   /* named in plugstack.conf: worth a word on the task's stderr */
            dprintf(STDERR_FILENO, "tbmesh: cannot start the forwarder %s (%m); running macnode exec instead\n",
                    path);
        fwd[1] = "exec";
    }
    execve(tbm_spank_args()->macnode, fwd, env);
}

/* As the user, just before the task would exec: exec the forwarder instead. */
int tbm_spank_bridge_task_init(spank_t sp)
{
    const tbm_spank_step_t *s = tbm_spank_step();
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
        (tbm_spank_args()->munge_socket[0] && set(sp, "TBMESH_MUNGE_SOCKET", tbm_spank_args()->munge_socket) < 0) ||
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
    dprintf(STDERR_FILENO, "tbmesh: cannot start the forwarder %s: %m\n", tbm_spank_args()->macnode);
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
    char sock[sizeof(tbm_spank_args()->munge_socket) + 32], *name = argv[0];
    const char *add[] = { sock, NULL };
    run_opts_t o = { .env = environ, .env_add = tbm_spank_args()->munge_socket[0] ? add : NULL,
                     .timeout_ms = MACNODE_RUN_MS, .truncate = 1, .stderr_to = RUN_STDERR_PASS };
    tbm_err_t err = { { 0 } };
    run_out_t r;
    int rc;

    snprintf(sock, sizeof(sock), "TBMESH_MUNGE_SOCKET=%s", tbm_spank_args()->munge_socket);
    argv[0] = (char *)tbm_spank_args()->macnode;   /* run_command only reads argv */
    rc = run_command((const char *const *)argv, &o, &r, &err);
    argv[0] = name;
    if (rc < 0)
        slurm_error("tbmesh: %s", err.msg);
    run_out_free(&r);
    return rc == 0 ? 0 : -1;
}

/* A failed exchange as tbm_spank_agent_ask says it: 0 the agent answered otherwise, -1 no answer, -2 root
 * cannot ask from here; why says which. */
static int ask_failed(const client_t *c, const tbm_err_t *err, char *why, size_t len)
{
    switch (c->fault) {
    case CLIENT_UNREACHABLE:
        tbm_spank_say(why, len, "%s", c->fault_errno ? strerror(c->fault_errno) : err->msg);
        return -1;
    case CLIENT_SILENT:
        return tbm_spank_say(why, len, "it took the connection but sent no answer in time"), -1;
    case CLIENT_CLOSED:
        return tbm_spank_say(why, len, "it took the connection and closed it without an answer"), -1;
    case CLIENT_UNPROVED:   /* no agent answered: something else holds its port */
        return tbm_spank_say(why, len, "%s", err->msg), -1;
    case CLIENT_ANSWERED:
        return tbm_spank_say(why, len, "%s", err->msg), 0;
    default:
        return tbm_spank_say(why, len, "%s", err->msg), -2;
    }
}

/* One exchange with node's agent ("addr:port") as root, within ms (tbm_spank_agent_ask): the agent proves
 * itself, then root's hello with req behind it in one write, then the reply of type want (with no req: the
 * welcome is the answer, and reply is not used). */
static int ask_node(const char *node, const char *agent, const tbm_msg_t *req, tbm_msg_type_t want,
                    tbm_msg_t *reply, int ms, char *why, size_t len)
{
    client_t c = { .agent = agent, .want = node, .mac = node, .socket = munge_socket(), .connect_ms = ms,
                   .reply_ms = ms, .deadline = tbm_now_ms() + ms, .fd = -1 };
    tbm_err_t err = { { 0 } };
    int rc;

    if (geteuid() != 0)   /* the hello is root's: a credential of this process's */
        return tbm_spank_say(why, len, "no MUNGE credential for root (not running as root)"), -2;
    rc = req ? client_ask(&c, req, want, reply, &err) : client_open(&c, &err);
    client_close(&c);
    return rc == 0 ? 1 : ask_failed(&c, &err, why, len);
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
    return ask_node(node, agent, NULL, TBM_MSG_WELCOME, NULL, AGENT_PROBE_MS, why, len) == -1 ? -1 : 0;
}

/* As root, when a forwarded task ends: a forwarder that failed (255) or was killed may mean the Mac's agent is
 * gone. Root looks for itself (a user's exit 255 alone drains nothing) and, when the agent does not answer a hello,
 * drains the Mac at once with the reason; `macnode check` resumes it once the agent is back. */
int tbm_spank_bridge_task_exit(spank_t sp)
{
    const tbm_spank_step_t *s = tbm_spank_step();
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
