/* macnode.c: the node-side command of slurm-tbmesh. `macnode probe` prints this host's facts as JSON
 * (Thunderbolt ports and peers, interfaces, RDMA, OS, model, cores by kind, memory); `macnode netplan`
 * prints (or applies) the per-cable Thunderbolt addressing; `macnode exec`, `grant` and `cleanup` are
 * the bridge mode's forwarder, grant maker and job cleanup (exec.c, grant.c, cleanup.c); `bench`
 * and `refwork` run the kernels (kernels/). */
#include "config.h"
#include "probe_host.h"
#include "cleanup.h"
#include "usage.h"
#include "watch.h"
#include "exec.h"
#include "grant.h"
#include "client.h"
#include "health_check.h"
#include "facts_json.h"
#include "netplan.h"
#include "scalar.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_FINDINGS 1   /* facts printed, but the probe found errors */
#define EXIT_USAGE    2
#define EXIT_PROBE    3   /* nothing could be probed */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: macnode probe [--backend darwin|linux|replay] [--replay DIR] [--hostname NAME]\n"
            "                     [--timeout MS] [--compact] | --agent ADDR[:PORT] [--node NAME] [--munge-socket PATH]\n"
            "  Print this host's facts as one JSON document (tbmesh_facts version %d) on stdout and what the\n"
            "  probe found wrong on stderr. Backends: darwin (runs the macOS commands; the default on macOS),\n"
            "  linux (hwloc and the kernel; the default elsewhere), replay (recorded outputs in DIR, as the\n"
            "  embedded lab writes them; implied by --replay). --agent asks a Mac's agent (macnoded) for its\n"
            "  facts instead, e.g. from the bridge host: then tbmesh inventory takes the files. The agent proves\n"
            "  itself first as --node's (default: the Mac tbmesh.conf puts at that address, else the address's\n"
            "  host name).\n"
            "  Exit: 0 fit, 1 facts printed with errors found, 2 bad usage, 3 nothing could be probed.\n"
            "usage: macnode check [--drain] ...\n"
            "  Check this Mac (or a bridge-mode Mac through its agent) against tbmesh.conf; --drain drains it in\n"
            "  Slurm with the reason, and resumes it once well; see macnode check --help.\n"
            "usage: macnode watch [--conf FILE] [--munge-socket PATH] [--scontrol PATH] [--node NAME ...]\n"
            "  Drain (or resume) a Mac as soon as one of its Thunderbolt links goes down (or up), through the\n"
            "  agents (root, on the bridge host); see macnode watch --help.\n"
            "usage: macnode netplan --help      the per-cable /30 plan and its macOS commands\n"
            "usage: macnode exec [--agent ADDR[:PORT]] [--grant FILE|-] [--pty] -- CMD [ARGS...]\n"
            "  Run CMD on a Mac through its agent, as if here (bridge mode); see macnode exec --help.\n"
            "usage: macnode grant --job J --step S --node NAME --uid UID [--ttl SECONDS]\n"
            "  Print a job grant for a Mac's agent (root only); see macnode grant --help.\n"
            "usage: macnode cleanup --job J ...: end a job on a Mac and remove its files; see macnode cleanup --help.\n"
            "usage: macnode usage --job J --step S ...: what a step's tasks used on a Mac (root only); see macnode\n"
            "  usage --help.\n"
            "usage: macnode bench [options]\n"
            "  Collective and per-cable benchmarks over exactly what MLX reads (in a tbmesh job, under srun),\n"
            "  or with -l N ranks on this host; see macnode bench --help.\n"
            "usage: macnode refwork [options] | --compare A B\n"
            "  The reference workload: one Mac against the mesh, outputs compared; see macnode refwork --help.\n",
            TBM_FACTS_VERSION);
}

static void netplan_usage(FILE *out)
{
    fprintf(out,
            "usage: macnode netplan [--conf tbmesh.conf] [--host NAME | --all] [--base CIDR] [--renumber]\n"
            "                       [--os macos|linux] [--apply]\n"
            "  The per-cable /30 plan of the lab's Thunderbolt links and the macOS commands that set it up\n"
            "  (bridge0 down, an IPv4 address per interface, a host route to each peer, routes to the other\n"
            "  hosts' Thunderbolt addresses over the cables, and IPv4 forwarding where a ring needs it, so that\n"
            "  Open MPI reaches every address). Prints; --apply runs this Mac's commands (macOS only, as root).\n"
            "  --os linux prints ip(8) commands instead (for Linux hosts; the embedded lab uses them). Cables\n"
            "  with addresses in tbmesh.conf keep them unless --renumber; new ones take the next free /30 of\n"
            "  --base (default 169.254.0.0/16). Kept addresses that are not one link (ends on different /30s)\n"
            "  are named on stderr and no commands are given (exit 1): run with --renumber.\n"
            "  --conf defaults to $TBMESH_CONF, else /etc/slurm/tbmesh.conf; --host to this host's name.\n");
}

/* The script's first line, the plan as comments, then the rest: the whole output runs with sh. */
static void print_plan(const char *table, const char *cmds)
{
    const char *nl = strchr(cmds, '\n'), *line = table;

    if (!nl)
        nl = cmds + strlen(cmds);
    printf("%.*s\n# The plan, one cable a line:\n", (int)(nl - cmds), cmds);
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        printf("%s%.*s\n", line[0] == '#' ? "" : "#   ", (int)len, line);
        line += len + (end ? 1 : 0);
    }
    printf("%s", *nl ? nl + 1 : "");
}

/* Kept cables whose two addresses are not one link: named on stderr with what to run, with the plan; no
 * commands are given for such a tbmesh.conf. Returns 1 when there are any. */
static int netplan_broken(const tbm_netplan_t *plan, const char *table)
{
    tbm_findings_t fs;
    size_t i;

    tbm_findings_init(&fs);
    if (tbm_netplan_broken(plan, &fs) == 0) {
        tbm_findings_free(&fs);
        return 0;
    }
    for (i = 0; i < fs.n; i++)
        fprintf(stderr, "macnode netplan: %s: %s. Fix: %s\n", fs.items[i].where, fs.items[i].what, fs.items[i].fix);
    fprintf(stderr, "macnode netplan: no commands given while tbmesh.conf holds a broken pair; the plan:\n%s", table);
    tbm_findings_free(&fs);
    return 1;
}

static int cmd_netplan(int argc, char **argv)
{
    static const struct option opts[] = {
        { "conf", required_argument, NULL, 'c' }, { "host", required_argument, NULL, 'H' },
        { "all", no_argument, NULL, 'a' },        { "base", required_argument, NULL, 'b' },
        { "renumber", no_argument, NULL, 'r' },   { "apply", no_argument, NULL, 'A' },
        { "os", required_argument, NULL, 'o' },   { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *conf_path = getenv("TBMESH_CONF"), *host = NULL, *base = "169.254.0.0/16";
    tbm_netplan_os_t os = TBM_NETPLAN_MACOS;
    int all = 0, renumber = 0, apply = 0, c, rc = EXIT_USAGE;
    char myname[TBM_HOST_MAX] = "", *text = NULL, *table = NULL, *cmds = NULL;
    tbm_err_t err = { { 0 } };
    tbm_netplan_t plan = { NULL, 0 };
    tbm_conf_t conf;
    size_t len;

    if (!conf_path || !*conf_path)
        conf_path = "/etc/slurm/tbmesh.conf";
    while ((c = getopt_long(argc, argv, "c:H:ab:rAo:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': conf_path = optarg; break;
        case 'H': host = optarg; break;
        case 'a': all = 1; break;
        case 'b': base = optarg; break;
        case 'r': renumber = 1; break;
        case 'A': apply = 1; break;
        case 'o':
            if (strcmp(optarg, "macos") && strcmp(optarg, "linux")) {
                fprintf(stderr, "macnode netplan: --os %s: give macos or linux\n", optarg);
                return EXIT_USAGE;
            }
            os = strcmp(optarg, "linux") == 0 ? TBM_NETPLAN_LINUX : TBM_NETPLAN_MACOS;
            break;
        case 'h': netplan_usage(stdout); return 0;
        default: netplan_usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc || (all && (host || apply)) || (apply && os != TBM_NETPLAN_MACOS)) {
        fprintf(stderr, "macnode netplan: %s; see macnode netplan --help\n",
                optind < argc ? "unexpected argument" : apply && os != TBM_NETPLAN_MACOS ?
                "--apply runs the macOS commands: drop --os linux (or run its output with sh)" :
                "--all prints every host: drop --host and --apply");
        return EXIT_USAGE;
    }
    if (!host && !all) {
        gethostname(myname, sizeof(myname) - 1);
        host = myname;
    }
    text = tbm_read_file(conf_path, TBM_CONF_MAX_BYTES, &len, &err);
    if (!text) {
        fprintf(stderr, "macnode netplan: %s (give the lab's tbmesh.conf with --conf)\n", err.msg);
        return EXIT_PROBE;
    }
    if (tbm_conf_parse(text, len, conf_path, &conf, NULL, &err) < 0) {
        fprintf(stderr, "macnode netplan: %s\n", err.msg);
        free(text);
        return EXIT_PROBE;
    }
    if (tbm_netplan_make(&conf, base, renumber, &plan, &err) == 0 && (table = tbm_netplan_table(&plan)) &&
        netplan_broken(&plan, table)) {
        rc = EXIT_FINDINGS;
    } else if (table && (cmds = tbm_netplan_commands(&plan, all ? NULL : host, os, &err))) {
        print_plan(table, cmds);
        rc = apply ? probe_darwin_apply(cmds, &err) : 0;
        if (rc != 0)
            fprintf(stderr, "macnode netplan: %s\n", err.msg);
    } else {
        fprintf(stderr, "macnode netplan: %s\n", err.msg);
    }
    free(table);
    free(cmds);
    tbm_netplan_free(&plan);
    tbm_conf_free(&conf);
    free(text);
    return rc == 0 ? 0 : rc == EXIT_USAGE || rc == EXIT_FINDINGS ? rc : EXIT_PROBE;
}

static void print_findings(const tbm_findings_t *fs)
{
    size_t i;

    for (i = 0; i < fs->n; i++) {
        const tbm_finding_t *f = &fs->items[i];
        fprintf(stderr, "macnode probe: %s: %s%s%s: %s", tbm_severity_name(f->severity), f->code,
                f->where[0] ? " at " : "", f->where, f->what);
        if (f->fix[0])
            fprintf(stderr, " (%s)", f->fix);
        fputc('\n', stderr);
    }
    if (fs->dropped)
        fprintf(stderr, "macnode probe: error: %zu more findings were dropped\n", fs->dropped);
}

static int cmd_probe(int argc, char **argv)
{
    static const struct option opts[] = {
        { "backend", required_argument, NULL, 'b' }, { "replay", required_argument, NULL, 'r' },
        { "hostname", required_argument, NULL, 'H' }, { "timeout", required_argument, NULL, 't' },
        { "compact", no_argument, NULL, 'c' },         { "help", no_argument, NULL, 'h' },
        { "agent", required_argument, NULL, 'a' },     { "munge-socket", required_argument, NULL, 'm' },
        { "node", required_argument, NULL, 'n' },      { NULL, 0, NULL, 0 },
    };
    const char *backend = probe_default_backend();
    const char *dir = NULL, *hostname = NULL, *agent = NULL, *socket = getenv("TBMESH_MUNGE_SOCKET"), *node = NULL;
    int local = 0;
    int timeout_ms = 20000, pretty = 1, c, rc;
    long long timeout;
    tbm_host_facts_t *f;
    tbm_findings_t fs;
    tbm_err_t err = { { 0 } };
    char *json;

    while ((c = getopt_long(argc, argv, "b:r:H:t:ca:m:n:h", opts, NULL)) != -1) {
        switch (c) {
        case 'b': backend = optarg; local = 1; break;
        case 'r': dir = optarg; backend = "replay"; local = 1; break;
        case 'a': agent = optarg; break;
        case 'n': node = optarg; break;
        case 'm': socket = optarg; break;
        case 'H': hostname = optarg; break;
        case 't':
            if (tbm_parse_ll(optarg, 10, 100, 600000, &timeout) < 0) {
                fprintf(stderr, "macnode probe: --timeout '%s' is not a number of milliseconds from 100 to 600000\n",
                        optarg);
                return EXIT_USAGE;
            }
            timeout_ms = (int)timeout;
            break;
        case 'c': pretty = 0; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "macnode probe: unexpected argument '%s'; see macnode probe --help\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (agent && local) {
        fprintf(stderr, "macnode probe: --agent asks a Mac's agent, --backend and --replay probe here: give one\n");
        return EXIT_USAGE;
    }
    if (strcmp(backend, "darwin") && strcmp(backend, "linux") && strcmp(backend, "replay")) {
        fprintf(stderr, "macnode probe: unknown backend '%s'; use darwin, linux or replay\n", backend);
        return EXIT_USAGE;
    }
    if (!strcmp(backend, "replay") && !dir) {
        fprintf(stderr, "macnode probe: the replay backend needs --replay DIR (the recorded outputs)\n");
        return EXIT_USAGE;
    }
    if (hostname && (!*hostname || strlen(hostname) >= TBM_HOST_MAX)) {
        fprintf(stderr, "macnode probe: --hostname must be 1 to %d characters\n", TBM_HOST_MAX - 1);
        return EXIT_USAGE;
    }
    f = calloc(1, sizeof(*f));
    if (!f) {
        fprintf(stderr, "macnode probe: out of memory\n");
        return EXIT_PROBE;
    }
    tbm_findings_init(&fs);
    rc = agent ? client_probe(agent, node, socket, timeout_ms, f, &err)
               : probe_host(backend, dir, timeout_ms, hostname, f, &fs, &err);
    if (rc < 0) {
        fprintf(stderr, "macnode probe: %s\n", err.msg);
        tbm_findings_free(&fs);
        free(f);
        return EXIT_PROBE;
    }
    if (hostname)
        snprintf(f->hostname, sizeof(f->hostname), "%s", hostname);
    json = tbm_facts_to_json_string(f, pretty);
    if (json)
        printf("%s\n", json);
    print_findings(&fs);
    rc = !json ? EXIT_PROBE : tbm_findings_count(&fs, TBM_SEV_ERROR) ? EXIT_FINDINGS : 0;
    free(json);
    tbm_findings_free(&fs);
    free(f);
    return rc;
}

/* `macnode bench` and `macnode refwork` are programs of their own (they link Open MPI and OpenSSL, which
 * macnode, started on every bridged step, does without): run them in macnode's place. MACNODE_LIBEXECDIR
 * (for a build tree) overrides where they are. */
static int run_kernel(const char *name, int argc, char **argv)
{
    const char *dir = getenv("MACNODE_LIBEXECDIR");
    char path[4096], self[4096];

    if (!dir || !*dir) {
        dir = TBM_PKGLIBEXECDIR;
        /* An installed tree copied elsewhere whole (the embedded lab's): the folder beside this program's. */
        if ((size_t)snprintf(path, sizeof(path), "%s/macnode-%s", dir, name) < sizeof(path) &&
            access(path, X_OK) != 0) {
            ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
            char *slash;

            if (n > 0) {
                self[n] = '\0';
                slash = strrchr(self, '/');
                if (slash && (size_t)snprintf(slash, sizeof(self) - (size_t)(slash - self),
                                              "/../libexec/slurm-tbmesh") < sizeof(self) - (size_t)(slash - self))
                    dir = self;
            }
        }
    }
    if ((size_t)snprintf(path, sizeof(path), "%s/macnode-%s", dir, name) >= sizeof(path)) {
        fprintf(stderr, "macnode %s: MACNODE_LIBEXECDIR is too long\n", name);
        return EXIT_USAGE;
    }
    (void)argc;
    argv[0] = path;
    execv(path, argv);
    fprintf(stderr, "macnode %s: cannot run %s: %s (%s)\n", name, path, strerror(errno),
            getenv("MACNODE_LIBEXECDIR") && *getenv("MACNODE_LIBEXECDIR") ?
            "MACNODE_LIBEXECDIR names that folder: unset it or fix it" :
            "is slurm-tbmesh installed whole? it installs macnode-bench and macnode-refwork there");
    return 127;
}

static int cmd_bench(int argc, char **argv)
{
    return run_kernel("bench", argc, argv);
}

static int cmd_refwork(int argc, char **argv)
{
    return run_kernel("refwork", argc, argv);
}

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    { "probe", cmd_probe },      { "netplan", cmd_netplan },       { "exec", macnode_exec },
    { "grant", macnode_grant },  { "cleanup", macnode_cleanup },
    { "bench", cmd_bench },      { "refwork", cmd_refwork },       { "check", macnode_check },
    { "watch", macnode_watch },  { "usage", macnode_usage },
};

int main(int argc, char **argv)
{
    size_t i;

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "macnode: unknown command '%s'; commands: probe, check, netplan, exec, grant, cleanup, "
            "usage, watch, bench, refwork (see "
            "macnode --help)\n", argv[1]);
    return EXIT_USAGE;
}
