/* health_check.c: `macnode check`, the health check of a Mac: its facts (probed here, or asked of a bridge-mode
 * Mac's agent) against tbmesh.conf (lib/health.c); with --drain, the Mac is drained in Slurm with the first
 * error as the reason, and a Mac that slurm-tbmesh drained is resumed once it is well again; with
 * --verdict-dir, the verdict is left in DIR/NODE.json (lib/health_verdict.c) for `tbmesh metrics`. Meant as
 * Slurm's HealthCheckProgram: slurmd names the node in $SLURMD_NODENAME.
 *
 * DESIGN EXCEPTION: DESIGN.md says a Slurm call is made only in plugin/, gres/ and acct/. This file is the
 * one place in macnode/ that reaches Slurm, and only through the scontrol command (drain, resume, reading the
 * node's state): a direct-mode Mac has no libslurm to link against, only the scontrol command of its
 * site-built slurmd, and the health check must run there, as the HealthCheckProgram of that slurmd. The
 * decision (healthy or not, drained by us or by an admin, the reason text) stays in lib/health.c; this file
 * only runs scontrol with the verdict. */
#include "config.h"
#include "health_check.h"
#include "client.h"
#include "fileio.h"
#include "health.h"
#include "probe_host.h"
#include "run.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXIT_UNHEALTHY 1
#define EXIT_USAGE     2
#define EXIT_NOFACTS   3
#define REASON_MAX     128
#define SCONTROL_MS    60000   /* the longest an scontrol call may take */

static void check_usage(FILE *out)
{
    fprintf(out,
            "usage: macnode check [--conf FILE] [--node NAME] [--agent ADDR[:PORT] | --backend B [--replay DIR]]\n"
            "                     [--munge-socket PATH] [--drain] [--if-mac] [--scontrol PATH]\n"
            "                     [--verdict-dir DIR]\n"
            "  Check a Mac against tbmesh.conf: a Thunderbolt port bound to each of its cables' interfaces with a\n"
            "  Mac at the other end, the interface up with its planned address, the RDMA device where the group\n"
            "  has RDMA, bridge0 down. Its facts are probed here, or asked of its agent when it is a bridge-mode\n"
            "  Mac other than this host (or --agent is given). Prints the verdict; what is wrong on stderr.\n"
            "  --drain: drain the Mac in Slurm with the first error as the reason (\"tbmesh: ...\"), or, when it\n"
            "  is well, resume it if slurm-tbmesh drained it (other drains are left alone). As Slurm's\n"
            "  HealthCheckProgram it runs with --drain in a wrapper; slurmd names the node in $SLURMD_NODENAME.\n"
            "  --if-mac: a node that is not in tbmesh.conf (a Linux node) passes quietly.\n"
            "  --verdict-dir DIR: leave the verdict in DIR/NODE.json (root's, made when missing; the wrapper gives\n"
            "  " TBM_HEALTH_VERDICT_DIR ") for tbmesh metrics to export.\n"
            "  --conf defaults to $TBMESH_CONF, else tbmesh.conf beside $SLURM_CONF (/etc/slurm); --node to\n"
            "  $SLURMD_NODENAME, else this host's name.\n"
            "  Exit: 0 well, 1 something is wrong, 2 bad usage, 3 no facts (the probe or the agent failed).\n");
}

/* Run argv (no shell, our environment, SCONTROL_MS at most), its stdout into out (when given), stderr passed
 * on. Returns its exit status, or -1 (said on stderr). */
static int run(char *const argv[], char *out, size_t outsz)
{
    extern char **environ;
    run_opts_t o = { .env = environ, .timeout_ms = SCONTROL_MS, .max = out ? outsz - 1 : 0, .truncate = 1,
                     .stderr_to = RUN_STDERR_PASS };
    tbm_err_t err = { { 0 } };
    run_out_t r;
    int rc = run_command((const char *const *)argv, &o, &r, &err);

    if (rc < 0)
        fprintf(stderr, "macnode check: %s\n", err.msg);
    if (out)
        snprintf(out, outsz, "%s", r.out ? r.out : "");
    run_out_free(&r);
    return rc;
}

/* How Slurm has the node now (lib/health.c reads scontrol's line). */
static tbm_drain_state_t drain_state(const char *scontrol, const char *node)
{
    char out[8192];
    char *argv[] = { (char *)scontrol, "show", "node", (char *)node, "--oneliner", NULL };

    return run(argv, out, sizeof(out)) == 0 ? tbm_health_drain_state(out) : TBM_DRAIN_UNKNOWN;
}

static int set_state(const char *scontrol, const char *node, const char *reason)
{
    char name[TBM_HOSTNAME_MAX + 16], why[REASON_MAX + 16];
    char *drain[] = { (char *)scontrol, "update", name, "State=DRAIN", why, NULL };
    char *resume[] = { (char *)scontrol, "update", name, "State=RESUME", NULL };

    snprintf(name, sizeof(name), "NodeName=%s", node);
    snprintf(why, sizeof(why), "Reason=%s", reason ? reason : "");
    return run(reason ? drain : resume, NULL, 0);
}

/* Where the node's agent listens: AgentAddr (or its name) and AgentPort. */
static void print_findings(const tbm_findings_t *fs)
{
    size_t i;

    for (i = 0; i < fs->n; i++) {
        const tbm_finding_t *x = &fs->items[i];
        fprintf(stderr, "macnode check: %s: %s at %s: %s", tbm_severity_name(x->severity), x->code, x->where,
                x->what);
        if (x->fix[0])
            fprintf(stderr, " (%s)", x->fix);
        fputc('\n', stderr);
    }
}

/* What `macnode check` was asked to do. */
typedef struct check_opts {
    const char *conf_path, *node, *agent, *backend, *dir, *socket, *scontrol, *verdict_dir;
    int drain, if_mac;
} check_opts_t;

/* Reads the command line into o. Returns -1 when the check is to run, else the exit status (0 after --help). */
static int check_options(int argc, char **argv, check_opts_t *o)
{
    static const struct option opts[] = {
        { "conf", required_argument, NULL, 'c' },    { "node", required_argument, NULL, 'n' },
        { "agent", required_argument, NULL, 'a' },   { "backend", required_argument, NULL, 'b' },
        { "replay", required_argument, NULL, 'r' },  { "munge-socket", required_argument, NULL, 'm' },
        { "drain", no_argument, NULL, 'd' },         { "scontrol", required_argument, NULL, 's' },
        { "if-mac", no_argument, NULL, 'i' },        { "verdict-dir", required_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },          { NULL, 0, NULL, 0 },
    };
    int c;

    *o = (check_opts_t){ .conf_path = getenv("TBMESH_CONF"), .node = getenv("SLURMD_NODENAME"),
                         .socket = getenv("TBMESH_MUNGE_SOCKET"), .scontrol = "scontrol" };
    while ((c = getopt_long(argc, argv, "c:n:a:b:r:m:ds:iv:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': o->conf_path = optarg; break;
        case 'n': o->node = optarg; break;
        case 'a': o->agent = optarg; break;
        case 'b': o->backend = optarg; break;
        case 'r': o->dir = optarg; o->backend = "replay"; break;
        case 'm': o->socket = optarg; break;
        case 'd': o->drain = 1; break;
        case 's': o->scontrol = optarg; break;
        case 'i': o->if_mac = 1; break;
        case 'v': o->verdict_dir = optarg; break;
        case 'h': check_usage(stdout); return 0;
        default: check_usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc || (o->agent && o->backend)) {
        fprintf(stderr, "macnode check: %s; see macnode check --help\n", optind < argc ? "unexpected argument" :
                "--agent asks the Mac's agent, --backend probes here: give one of them");
        return EXIT_USAGE;
    }
    if (o->backend && strcmp(o->backend, "darwin") && strcmp(o->backend, "linux") && strcmp(o->backend, "replay")) {
        fprintf(stderr, "macnode check: unknown backend '%s'; use darwin, linux or replay\n", o->backend);
        return EXIT_USAGE;
    }
    if (o->backend && !strcmp(o->backend, "replay") && !o->dir) {
        fprintf(stderr, "macnode check: the replay backend needs --replay DIR (the recorded outputs)\n");
        return EXIT_USAGE;
    }
    return -1;
}

/* Reads tbmesh.conf (conf_path, else the default beside $SLURM_CONF) into conf. Returns 0, or -1 with the
 * reason printed. */
static int check_conf(const char *conf_path, tbm_conf_t *conf)
{
    char conf_buf[4096], *text;
    tbm_err_t err = { { 0 } };
    size_t len;
    int rc = 0;

    if (!conf_path || !*conf_path) {
        tbm_conf_default_path(getenv("SLURM_CONF"), conf_buf, sizeof(conf_buf));
        conf_path = conf_buf;
    }
    if (!(text = tbm_read_file(conf_path, TBM_CONF_MAX_BYTES, &len, &err)) ||
        tbm_conf_parse(text, len, conf_path, conf, NULL, &err) < 0) {
        fprintf(stderr, "macnode check: %s (give the lab's tbmesh.conf with --conf)\n", err.msg);
        rc = -1;
    }
    free(text);
    return rc;
}

/* Gets the Mac's facts (from its agent when o->agent is set, else probed here) and checks them against conf,
 * printing the verdict; the reason to drain it for (empty when it is well) into reason. Returns the exit
 * status. */
static int check_verdict(const check_opts_t *o, const tbm_conf_t *conf, tbm_host_facts_t *f, char *reason,
                         size_t reasonsz)
{
    tbm_err_t err = { { 0 } };
    tbm_findings_t fs, pfs;
    size_t errors;
    int rc = EXIT_NOFACTS;

    tbm_findings_init(&fs);
    tbm_findings_init(&pfs);
    if (o->agent ? client_probe(o->agent, o->node, o->socket, TBM_HEALTH_AGENT_MS, f, &err)
              : probe_host(o->backend ? o->backend : probe_default_backend(), o->dir, 20000, NULL, f, &pfs, &err)) {
        fprintf(stderr, "macnode check: %s: no facts: %s\n", o->node, err.msg);
        snprintf(reason, reasonsz, TBM_HEALTH_REASON_PREFIX "no facts: %.100s", err.msg);
        printf("%s: cannot tell (no facts)\n", o->node);
    } else {
        errors = tbm_health_check(conf, o->node, f, &fs);
        print_findings(&fs);
        tbm_health_reason(&fs, reason, reasonsz);
        if (errors && !reason[0])   /* the findings themselves were dropped (out of memory) */
            snprintf(reason, reasonsz, TBM_HEALTH_REASON_PREFIX "%zu errors (details lost)", errors);
        if (errors)
            printf("%s: %zu error%s: %s\n", o->node, errors, errors == 1 ? "" : "s", reason);
        else
            printf("%s: well%s\n", o->node, fs.n ? " (with warnings)" : "");
        rc = errors ? EXIT_UNHEALTHY : 0;
    }
    tbm_findings_free(&fs);
    tbm_findings_free(&pfs);
    return rc;
}

/* --drain: drains the Mac for reason, or, when it is well (reason empty), resumes it if slurm-tbmesh drained
 * it; a Mac drained for another reason, or whose state is not known, is left as it is. */
static void check_drain(const char *scontrol, const char *node, const char *reason)
{
    tbm_drain_state_t now = drain_state(scontrol, node);

    if (now == TBM_DRAIN_UNKNOWN)
        fprintf(stderr, "macnode check: %s: scontrol show node failed: its state is not known, so it is left "
                "as it is\n", node);
    else if (now == TBM_DRAIN_OTHER)
        printf("%s: left as it is (drained for another reason)\n", node);
    else if (reason[0] && set_state(scontrol, node, reason) == 0)
        printf("%s: drained\n", node);
    else if (reason[0])
        fprintf(stderr, "macnode check: %s: scontrol could not drain it (see its message above)\n", node);
    else if (now == TBM_DRAIN_OURS && set_state(scontrol, node, NULL) == 0)
        printf("%s: resumed (slurm-tbmesh had drained it)\n", node);
    else if (now == TBM_DRAIN_OURS)
        fprintf(stderr, "macnode check: %s: scontrol could not resume it (see its message above)\n", node);
}

/* The folder dir, and those above it, made when missing (root's, 0755). */
static void make_folders(const char *dir)
{
    char path[4096], *slash;

    snprintf(path, sizeof(path), "%s", dir);
    for (slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(path, 0755);
        *slash = '/';
    }
    mkdir(path, 0755);
}

/* --verdict-dir: the verdict (from the exit status rc and the drain reason) into DIR/NODE.json, atomically,
 * in a folder of this user's alone, for `tbmesh metrics`. A failure is said and changes nothing else. */
static void leave_verdict(const char *dir, const char *node, int rc, const char *reason)
{
    tbm_health_verdict_t v = { .verdict = rc == 0 ? TBM_HEALTH_WELL : rc == EXIT_UNHEALTHY ? TBM_HEALTH_UNWELL
                                                                                            : TBM_HEALTH_UNKNOWN,
                               .time = (long long)time(NULL) };
    char name[TBM_HOSTNAME_MAX + 8], path[4200];
    tbm_err_t err = { { 0 } };
    char *text = NULL;
    int fd;

    snprintf(v.node, sizeof(v.node), "%s", node);
    snprintf(v.reason, sizeof(v.reason), "%s", rc == 0 ? "" : reason);
    make_folders(dir);
    if (tbm_health_verdict_file(node, name, sizeof(name)) < 0)
        tbm_errprintf(&err, "'%s' is not a node name to name a file after", node);
    else if ((fd = tbm_dir_open_owned(dir, geteuid(), &err)) >= 0)
        close(fd);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (tbm_erris(&err) || !(text = tbm_health_verdict_json(&v, &err)) ||
        tbm_write_file_atomic(path, text, strlen(text), 0644, &err) < 0)
        fprintf(stderr, "macnode check: %s: the verdict was not left for tbmesh metrics: %s\n", node, err.msg);
    free(text);
}

int macnode_check(int argc, char **argv)
{
    char me[TBM_HOSTNAME_MAX] = "", agent_buf[TBM_HOSTNAME_MAX + 16], reason[REASON_MAX] = "";
    tbm_host_facts_t *f = calloc(1, sizeof(*f));
    check_opts_t o;
    tbm_conf_t conf;
    int n, rc;

    if (!f) {
        fprintf(stderr, "macnode check: out of memory\n");
        return EXIT_NOFACTS;
    }
    if ((rc = check_options(argc, argv, &o)) >= 0) {
        free(f);
        return rc;
    }
    gethostname(me, sizeof(me) - 1);
    if (!o.node || !*o.node)
        o.node = me;
    if (check_conf(o.conf_path, &conf) < 0) {
        free(f);
        return EXIT_NOFACTS;
    }
    n = tbm_conf_node(&conf, o.node);
    if (n < 0 && o.node == me && strchr(me, '.')) {   /* "mac01.local": tbmesh.conf has "mac01" */
        me[strcspn(me, ".")] = '\0';
        n = tbm_conf_node(&conf, o.node);
    }
    if (n < 0 && o.if_mac) {   /* HealthCheckProgram runs on every node: a Linux node passes quietly */
        rc = 0;
        goto out;
    }
    if (!o.agent && !o.backend && n >= 0 && conf.groups[conf.nodes[n].group].mode == TBM_MODE_BRIDGE &&
        strcmp(o.node, me) != 0) {
        tbm_conf_agent_of(&conf, n, agent_buf, sizeof(agent_buf));
        o.agent = agent_buf;
    }
    rc = check_verdict(&o, &conf, f, reason, sizeof(reason));
    if (o.verdict_dir && n >= 0)
        leave_verdict(o.verdict_dir, o.node, rc, reason);
    if (o.drain && n >= 0)
        check_drain(o.scontrol, o.node, reason);
    fflush(stdout);
out:
    tbm_conf_free(&conf);
    free(f);
    return rc;
}
