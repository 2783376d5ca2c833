/* tbmlab-gen.c: turns the lab spec (lab/lab.conf) into the wiring plan the lab scripts execute, the replayed
 * macOS command outputs of every simulated Mac (agreeing exactly with that wiring) and slurm.conf node lines. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gen/labgen.h"

static const char usage_text[] =
"Usage: tbmlab-gen plan LAB.CONF [--cut NODE:IFACE]...\n"
"       tbmlab-gen outputs LAB.CONF DIR [--cut NODE:IFACE]...\n"
"       tbmlab-gen slurm-nodes LAB.CONF\n"
"       tbmlab-gen hint LAB.CONF\n"
"       tbmlab-gen --help\n"
"\n"
"Turns the lab spec into what the embedded lab needs. Output is tab-separated, one record a line, in a\n"
"stable order (spec order of groups and nodes, then cable order).\n"
"\n"
"LAB.CONF: one record a line, Key=Value pairs (values with spaces in \"quotes\"), '#' starts a comment:\n"
"  Group=NAME Mode=bridge|direct Wiring=mesh|ring Nodes=mac01,mac02,... ModelName=\"Mac Studio\"\n"
"    ModelId=Mac15,14 Chip=\"Apple M3 Ultra\" MemoryGiB=N PCores=N ECores=N OS=26.2 Build=25C56\n"
"    LinkGbps=40|80 Rdma=yes|no [Ports=N, else known from ModelId]\n"
"    [Bridge=HOST: with Mode=bridge, the Macs' slurmds run on that bridge host, else on the controller]\n"
"  Linux=lnx01[,lnx02...]\n"
"  Node names end in their number (mac01); a node belongs to one group.\n"
"\n"
"plan: the wiring the lab scripts build, records (fields separated by TAB):\n"
"  node   NAME group=G mode=bridge|direct mgmt=10.77.0.X mac=EN0_HWADDR port=SLURMD_PORT [bridge=HOST]\n"
"  linux  NAME mgmt=10.77.0.X port=16818\n"
"  bridgehost  HOST mgmt=10.77.0.X mac=ETH0_HWADDR\n"
"  cable  MAC_A IFACE_A ADDR_A/30 HWADDR_A MAC_B IFACE_B ADDR_B/30 HWADDR_B state=up|cut\n"
"  Management addresses: macNN -> 10.77.0.(10+NN); Linux nodes the first free from 10.77.0.21, in spec\n"
"  order; bridge hosts 10.77.0.201, .202, ... in order of first mention.\n"
"  Slurmd ports: bridge-mode Macs 16830+i (i = 1, 2, ... over bridge-mode Macs), others 16818.\n"
"  Cables: Wiring=mesh joins every pair once, Wiring=ring joins node i to node i+1 (mod n). Cable c\n"
"  (1-based, counted over all groups) is 169.254.c.1/30 - 169.254.c.2/30. On each Mac the cables take\n"
"  receptacles 1, 2, ... in cable order; receptacle k (\"Thunderbolt k\") is interface en(k+1).\n"
"\n"
"outputs: writes DIR/NODE/replay/ for every Mac: system_profiler_SPThunderboltDataType.json,\n"
"  networksetup_listallhardwareports.txt, ifconfig.txt, ibv_devices.txt, rdma_ctl_status.txt, sw_vers.txt,\n"
"  sysctl.txt (hw.memsize, machdep.cpu.brand_string, hw.model), sysctl_perflevels.txt, hostname.txt.\n"
"  Every receptacle of the model is a bus; a cabled one holds the peer Mac with the peer port's domain UUID.\n"
"  Rdma=yes: ibv_devices lists rdma_enX for every Thunderbolt port, rdma_ctl says enabled. Rdma=no: no\n"
"  devices; rdma_ctl says enabled on Thunderbolt 4 (LinkGbps=40, as real TB4 Macs do), else disabled.\n"
"\n"
"slurm-nodes: slurm.conf NodeName lines for every node, then PartitionName lines (mac, linux).\n"
"\n"
"hint: a Group= line per group for tbmesh inventory --hint (its name, nodes, wiring and mode; the inventory\n"
"  finds the cables).\n"
"\n"
"--cut NODE:IFACE pulls the cable plugged into IFACE of NODE (both ends read as disconnected).\n"
"\n"
"Exit status: 0 done, 1 cannot write output, 2 bad spec or bad arguments (messages on stderr).\n";

/* ---- main ------------------------------------------------------------------------------------------- */

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Says what is wrong with the command line; returns exit status 2. */
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tbmlab-gen: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "; see tbmlab-gen --help\n");
    va_end(ap);
    return 2;
}

/* Reads the trailing --cut options (from argv[first]) into the lab. */
static int apply_cuts(lab_t *lab, int argc, char **argv, int first)
{
    for (int i = first; i < argc; i++) {
        const char *value = NULL;
        if (strcmp(argv[i], "--cut") == 0 && i + 1 < argc)
            value = argv[++i];
        else if (strncmp(argv[i], "--cut=", 6) == 0)
            value = argv[i] + 6;
        else
            return usage_error("unexpected argument '%s'", argv[i]);
        if (lab_apply_cut(lab, value) < 0)
            return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static lab_t lab;
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (argc < 3)
        return usage_error("%s", "missing command or lab spec");
    const char *cmd = argv[1];
    int outputs = strcmp(cmd, "outputs") == 0;
    if (!outputs && strcmp(cmd, "plan") != 0 && strcmp(cmd, "slurm-nodes") != 0 && strcmp(cmd, "hint") != 0)
        return usage_error("unknown command '%s' (plan, outputs, slurm-nodes, hint)", cmd);
    if (outputs && argc < 4)
        return usage_error("%s", "outputs needs a directory");
    if (outputs && strlen(argv[3]) > LAB_DIR_MAX)
        return usage_error("output directory path is longer than %d characters; use a shorter one", LAB_DIR_MAX);
    if (lab_load(&lab, argv[2]) < 0)
        return 2;
    if (strcmp(cmd, "slurm-nodes") == 0 || strcmp(cmd, "hint") == 0) {
        if (argc > 3)
            return usage_error("unexpected argument '%s'", argv[3]);
        if (cmd[0] == 's')
            lab_print_slurm_nodes(&lab, stdout);
        else
            lab_print_hint(&lab, stdout);
        return 0;
    }
    int rc = apply_cuts(&lab, argc, argv, outputs ? 4 : 3);
    if (rc != 0)
        return rc;
    if (outputs)
        return lab_write_outputs(&lab, argv[3]) < 0 ? 1 : 0;
    lab_print_plan(&lab, stdout);
    return 0;
}
