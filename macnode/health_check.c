/* health_check.c: `macnode check`, the health check of a Mac: its facts (probed here, or asked of a bridge-mode
 * Mac's agent) against tbmesh.conf (lib/health.c); with --drain, the Mac is drained in Slurm with the first
 * error as the reason, and a Mac that slurm-tbmesh drained is resumed once it is well again. Meant as
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
            "  Check a Mac against tbmesh.conf: a Thunderbolt port bound to each of its cables' interfaces with a\n"
            "  Mac at the other end, the interface up with its planned address, the RDMA device where the group\n"
            "  has RDMA, bridge0 down. Its facts are probed here, or asked of its agent when it is a bridge-mode\n"
            "  Mac other than this host (or --agent is given). Prints the verdict; what is wrong on stderr.\n"
            "  --drain: drain the Mac in Slurm with the first error as the reason (\"tbmesh: ...\"), or, when it\n"
            "  is well, resume it if slurm-tbmesh drained it (other drains are left alone). As Slurm's\n"
            "  HealthCheckProgram it runs with --drain in a wrapper; slurmd names the node in $SLURMD_NODENAME.\n"
            "  --if-mac: a node that is not in tbmesh.conf (a Linux node) passes quietly.\n"
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

int macnode_check(int argc, char **argv)
{
    static const struct option opts[] = {
        { "conf", required_argument, NULL, 'c' },    { "node", required_argument, NULL, 'n' },
        { "agent", required_argument, NULL, 'a' },   { "backend", required_argument, NULL, 'b' },
        { "replay", required_argument, NULL, 'r' },  { "munge-socket", required_argument, NULL, 'm' },
        { "drain", no_argument, NULL, 'd' },         { "scontrol", required_argument, NULL, 's' },
        { "if-mac", no_argument, NULL, 'i' },
        { "help", no_argument, NULL, 'h' },          { NULL, 0, NULL, 0 },
    };
    const char *conf_path = getenv("TBMESH_CONF"), *node = getenv("SLURMD_NODENAME"), *agent = NULL;
    const char *backend = NULL, *dir = NULL, *socket = getenv("TBMESH_MUNGE_SOCKET"), *scontrol = "scontrol";
    char me[TBM_HOSTNAME_MAX] = "", agent_buf[TBM_HOSTNAME_MAX + 16], reason[REASON_MAX] = "", *text = NULL;
    char conf_buf[4096];
    int drain = 0, if_mac = 0, c, n, rc, have_conf = 0;
    tbm_host_facts_t *f = calloc(1, sizeof(*f));
    tbm_err_t err = { { 0 } };
    tbm_findings_t fs, pfs;
    tbm_conf_t conf;
    size_t len, errors;

    tbm_findings_init(&fs);
    tbm_findings_init(&pfs);
    if (!f) {
        fprintf(stderr, "macnode check: out of memory\n");
        return EXIT_NOFACTS;
    }
    while ((c = getopt_long(argc, argv, "c:n:a:b:r:m:ds:ih", opts, NULL)) != -1) {
        switch (c) {
        case 'c': conf_path = optarg; break;
        case 'n': node = optarg; break;
        case 'a': agent = optarg; break;
        case 'b': backend = optarg; break;
        case 'r': dir = optarg; backend = "replay"; break;
        case 'm': socket = optarg; break;
        case 'd': drain = 1; break;
        case 's': scontrol = optarg; break;
        case 'i': if_mac = 1; break;
        case 'h': check_usage(stdout); free(f); return 0;
        default: check_usage(stderr); free(f); return EXIT_USAGE;
        }
    }
    rc = EXIT_USAGE;
    if (optind < argc || (agent && backend)) {
        fprintf(stderr, "macnode check: %s; see macnode check --help\n", optind < argc ? "unexpected argument" :
                "--agent asks the Mac's agent, --backend probes here: give one of them");
        goto out;
    }
    if (backend && strcmp(backend, "darwin") && strcmp(backend, "linux") && strcmp(backend, "replay")) {
        fprintf(stderr, "macnode check: unknown backend '%s'; use darwin, linux or replay\n", backend);
        goto out;
    }
    if (backend && !strcmp(backend, "replay") && !dir) {
        fprintf(stderr, "macnode check: the replay backend needs --replay DIR (the recorded outputs)\n");
        goto out;
    }
    gethostname(me, sizeof(me) - 1);
    if (!node || !*node)
        node = me;
    if (!conf_path || !*conf_path) {
        tbm_conf_default_path(getenv("SLURM_CONF"), conf_buf, sizeof(conf_buf));
        conf_path = conf_buf;
    }
    rc = EXIT_NOFACTS;
    if (!(text = tbm_read_file(conf_path, TBM_CONF_MAX_BYTES, &len, &err)) ||
        tbm_conf_parse(text, len, conf_path, &conf, NULL, &err) < 0) {
        fprintf(stderr, "macnode check: %s (give the lab's tbmesh.conf with --conf)\n", err.msg);
        goto out;
    }
    have_conf = 1;
    n = tbm_conf_node(&conf, node);
    if (n < 0 && node == me && strchr(me, '.')) {   /* "mac01.local": tbmesh.conf has "mac01" */
        me[strcspn(me, ".")] = '\0';
        n = tbm_conf_node(&conf, node);
    }
    if (n < 0 && if_mac) {   /* HealthCheckProgram runs on every node: a Linux node passes quietly */
        rc = 0;
        goto out;
    }
    if (!agent && !backend && n >= 0 && conf.groups[conf.nodes[n].group].mode == TBM_MODE_BRIDGE &&
        strcmp(node, me) != 0) {
        tbm_conf_agent_of(&conf, n, agent_buf, sizeof(agent_buf));
        agent = agent_buf;
    }
    if (agent ? client_probe(agent, node, socket, TBM_HEALTH_AGENT_MS, f, &err)
              : probe_host(backend ? backend : probe_default_backend(), dir, 20000, f, &pfs, &err)) {
        fprintf(stderr, "macnode check: %s: no facts: %s\n", node, err.msg);
        snprintf(reason, sizeof(reason), TBM_HEALTH_REASON_PREFIX "no facts: %.100s", err.msg);
        printf("%s: cannot tell (no facts)\n", node);
    } else {
        errors = tbm_health_check(&conf, node, f, &fs);
        print_findings(&fs);
        tbm_health_reason(&fs, reason, sizeof(reason));
        if (errors && !reason[0])   /* the findings themselves were dropped (out of memory) */
            snprintf(reason, sizeof(reason), TBM_HEALTH_REASON_PREFIX "%zu errors (details lost)", errors);
        if (errors)
            printf("%s: %zu error%s: %s\n", node, errors, errors == 1 ? "" : "s", reason);
        else
            printf("%s: well%s\n", node, fs.n ? " (with warnings)" : "");
        rc = errors ? EXIT_UNHEALTHY : 0;
    }
    if (drain && n >= 0) {
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
    fflush(stdout);
out:
    if (have_conf)
        tbm_conf_free(&conf);
    tbm_findings_free(&fs);
    tbm_findings_free(&pfs);
    free(text);
    free(f);
    return rc;
}
