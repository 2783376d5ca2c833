/* test_conf.c: unit tests of lib/conf*.c (the tbmesh.conf model, parser and writer): the example file,
 * every bad line with its exact message, all-or-nothing parsing, and the round trip topology -> text ->
 * configuration. */
#include "tbm_check.h"
#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "tbm_labfacts.h"

#define BASE                                                                       \
    "Group=a Nodes=m[1-2] Topology=mesh Link=tb5 Rdma=yes Backends=jaccl,mpi\n"    \
    "Cable=m1:en2,m2:en2 Addr=10.0.0.1/30,10.0.0.2/30 Rdma=rdma_en2,rdma_en2 Speed=80\n"

/* Parse text; return "" on success or the error message (and check the result was rejected whole). */
static const char *parse_text(const char *text)
{
    static tbm_err_t err;
    tbm_conf_t c;

    memset(&err, 0, sizeof(err));
    if (tbm_conf_parse(text, strlen(text), "t.conf", &c, NULL, &err) == 0) {
        tbm_conf_free(&c);
        return "";
    }
    ck_assert_uint_eq(c.n_groups, 0);
    ck_assert_uint_eq(c.n_nodes, 0);
    ck_assert_ptr_null(c.groups);
    return err.msg;
}

static char *read_example(size_t *len)
{
    char path[4096];
    FILE *f;
    char *buf = malloc(1 << 16);

    snprintf(path, sizeof(path), "%s/../../etc/tbmesh.conf.example", tbm_fixtures_dir());   /* srcdir/etc */
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    *len = fread(buf, 1, (1 << 16) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

START_TEST(example_file)
{
    tbm_conf_t c;
    tbm_err_t err = {{0}};
    const tbm_conf_group_t *a, *b;
    size_t len;
    char *text = read_example(&len);

    ck_assert_int_eq(tbm_conf_parse(text, len, "tbmesh.conf.example", &c, NULL, &err), 0);
    ck_assert_str_eq(err.msg, "");
    ck_assert_int_eq(c.agent_port, 6830);
    ck_assert_int_eq(c.coordinator_port, 32323);
    ck_assert_int_eq(c.slurmd_base_port, 6900);
    ck_assert_str_eq(c.mlx_version, "0.31.2");
    ck_assert_uint_eq(c.n_groups, 2);
    ck_assert_uint_eq(c.n_nodes, 8);
    ck_assert_uint_eq(c.n_cables, 10);
    a = tbm_conf_group(&c, "studio-a");
    b = tbm_conf_group(&c, "mini-b");
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_null(tbm_conf_group(&c, "nope"));
    ck_assert_int_eq(a->caps.topology, TBM_TOPO_MESH);
    ck_assert_int_eq(a->caps.rdma, 1);
    ck_assert_int_eq(a->mode, TBM_MODE_BRIDGE);
    ck_assert_int_eq(a->link, TBM_LINK_TB5);
    ck_assert_uint_eq(a->caps.backends, TBM_BACKENDS_ALL);
    ck_assert_int_eq(b->caps.topology, TBM_TOPO_RING);
    ck_assert_int_eq(b->mode, TBM_MODE_DIRECT);
    ck_assert_uint_eq(b->caps.backends, 0xc);
    ck_assert_str_eq(c.nodes[b->nodes[3]].name, "mac08");
    ck_assert_str_eq(c.cables[1].end[1].rdma, "rdma_en2");
    ck_assert_str_eq(c.cables[1].end[0].ipv4, "10.10.0.5");
    ck_assert_int_eq(c.cables[1].end[0].prefix_len, 30);
    ck_assert_int_eq(c.cables[9].speed_gbps, 40);
    ck_assert_int_eq(tbm_conf_node(&c, "mac05"), 4);
    ck_assert_int_eq(tbm_conf_node(&c, "mac99"), -1);
    tbm_conf_free(&c);
    free(text);
}
END_TEST

#define PLACES(g, b, n, want, text)                                            \
    do {                                                                       \
        tbm_err_t why_ = {{0}};                                                \
        ck_assert_int_eq(tbm_group_supports(&(g)->caps, (b), (n), &why_), (want)); \
        ck_assert_str_eq(why_.msg, (text));                                    \
    } while (0)

/* The placements issue 4 asks for, from the example file alone. */
START_TEST(example_placements)
{
    tbm_conf_t c;
    tbm_err_t err = {{0}};
    const tbm_conf_group_t *a, *b;
    size_t len;
    char *text = read_example(&len);

    ck_assert_int_eq(tbm_conf_parse(text, len, "tbmesh.conf.example", &c, NULL, &err), 0);
    a = tbm_conf_group(&c, "studio-a");
    b = tbm_conf_group(&c, "mini-b");
    PLACES(a, TBM_BACKEND_JACCL, 4, 1, "");
    PLACES(b, TBM_BACKEND_JACCL, 4, 0, "group mini-b is a ring, not a full mesh: JACCL mesh needs every pair of Macs "
                                       "cabled; use --mlx-backend=jaccl-ring or ring");
    PLACES(a, TBM_BACKEND_RING, 3, 1, "");
    PLACES(b, TBM_BACKEND_RING, 3, 0, "group mini-b is a ring of 4 Macs; a job on it must use all 4 (part of a ring "
                                      "is not a ring): ask for tbmesh:4");
    PLACES(a, TBM_BACKEND_RING, 4, 1, "");
    PLACES(b, TBM_BACKEND_RING, 4, 1, "");
    PLACES(b, TBM_BACKEND_AUTO, 4, 1, "");
    PLACES(a, TBM_BACKEND_MPI, 5, 0, "group studio-a has 4 Macs; you asked for 5: ask for 4 or fewer");
    tbm_conf_free(&c);
    free(text);
}
END_TEST

START_TEST(syntax_forms)
{
    ck_assert_str_eq(parse_text(""), "");
    ck_assert_str_eq(parse_text("# only a comment\n\n   \t\n"), "");
    ck_assert_str_eq(parse_text("agentport=7000 ringbaseport=40000 # two settings, any case\r\n" BASE), "");
    ck_assert_str_eq(parse_text("group=a nodes=m1 topology=single"), "");
    ck_assert_str_eq(parse_text(BASE "NodeName=m[1-2] AgentPort=7001\n"), "");
    ck_assert_str_eq(parse_text("Cable=m1:en2,m2:en2 Addr=10.0.0.1,10.0.0.2\n"
                                "Group=b Nodes=m[1-2] Topology=mesh Backends=ring,mpi\n"), "");
}
END_TEST

/* Each bad line, and the exact message that names it. */
static const struct {
    const char *text;
    const char *msg;
} bad_lines[] = {
    {BASE "AgentPort\n", "t.conf:3: 'AgentPort' is not Key=Value: write settings as Key=Value separated by spaces"},
    {BASE "AgentPort=\n", "t.conf:3: AgentPort= has no value: give it a value or remove it"},
    {BASE "AgentPort= 80\n", "t.conf:3: AgentPort= has a space after '=': write AgentPort=80"},
    {BASE "AgentPort=\tMlxVersion=0.30.0\n", "t.conf:3: AgentPort= has no value: give it a value or remove it"},
    {BASE "Group=b Nodes= m[1-2] Topology=mesh\n", "t.conf:3: Nodes= has a space after '=': write Nodes=m[1-2]"},
    {BASE "Foo=1\n", "t.conf:3: unknown key 'Foo': a line starts with Group=, NodeName=, Cable= or one of AgentPort, "
                     "CoordinatorPort, RingBasePort, SlurmdBasePort, MlxVersion, MacPartition, SharedPartitions, DefaultPartition, ExclusiveMacs, JacclOnSubsets, Placement, RecordDir, RecordReaders, Records, "
     "OwnerRecovery, OwnerAccess, OwnerUpkeep"},
    {BASE "Group=b Nodes=m3 Topology=single Colour=red\n",
     "t.conf:3: unknown key 'Colour' on a Group line: known keys there: Group, Nodes, Topology, Link, Rdma, Mode, "
     "Backends, RdmaSubset, OwnerRecovery, OwnerAccess, OwnerUpkeep"},
    {BASE "NodeName=m1 Port=1\n", "t.conf:3: unknown key 'Port' on a NodeName line: known keys there: NodeName, Group, "
                                  "AgentAddr, AgentPort, SlurmdPort"},
    {BASE "Cable=m1:en3,m2:en3 Colour=red\n", "t.conf:3: unknown key 'Colour' on a Cable line: known keys there: "
                                              "Cable, Addr, Rdma, Speed"},
    {BASE "AgentPort=1 Nodes=m1\n", "t.conf:3: unknown key 'Nodes' on a setting line: known keys there: AgentPort, "
                                    "CoordinatorPort, RingBasePort, SlurmdBasePort, MlxVersion, MacPartition, SharedPartitions, DefaultPartition, ExclusiveMacs, JacclOnSubsets, Placement, RecordDir, RecordReaders, Records, "
     "OwnerRecovery, OwnerAccess, OwnerUpkeep"},
    {BASE "Group=b Nodes=m3 Nodes=m4 Topology=single\n", "t.conf:3: Nodes= is given twice on this line: keep one of them"},
    {BASE "AgentPort=70000\n", "t.conf:3: AgentPort=70000 is not a port number: use a port number from 1 to 65535"},
    {BASE "CoordinatorPort=0\n", "t.conf:3: CoordinatorPort=0 is not a port number: use a port number from 1 to 65535"},
    {BASE "AgentPort=1\nAgentPort=2\n", "t.conf:4: AgentPort is already set at line 3: keep one of them"},
    {BASE "ExclusiveMacs=sometimes\n", "t.conf:3: ExclusiveMacs=sometimes is neither yes nor no: write yes or no"},
    {BASE "JacclOnSubsets=maybe\n", "t.conf:3: JacclOnSubsets=maybe is neither yes nor no: write yes or no"},
    {BASE "Placement=fast\n", "t.conf:3: Placement=fast is neither pack nor order: write Placement=pack (the smallest "
                              "group that holds a job first) or Placement=order (tbmesh.conf's order of groups)"},
    {BASE "Placement=order\nPlacement=pack\n", "t.conf:4: Placement is already set at line 3: keep one of them"},
#define SUB_GROUP "Group=b Nodes=n[1-3] Topology=mesh Link=tb4 Backends=mpi "
#define SUB_CABLE(e, a, b, rdma) "Cable=" a ":en" e "," b ":en" e " Addr=10.1." e ".1/30,10.1." e ".2/30" rdma "\n"
    {BASE "Group=b Nodes=n[1-2] Topology=mesh Link=tb5 Rdma=yes Backends=mpi RdmaSubset=n[1-2]\n",
     "t.conf:3: group b has Rdma=yes and RdmaSubset=: drop RdmaSubset=: every Mac of the group runs JACCL already"},
    {BASE SUB_GROUP "RdmaSubset=n1\n", "t.conf:3: RdmaSubset= names 1 Mac: name 2 to 64 Macs of the group whose cables "
                                       "all do RDMA (tbmesh inventory writes them), or drop RdmaSubset="},
    {BASE SUB_GROUP "RdmaSubset=n[1,4]\n", "t.conf:3: RdmaSubset= names n4, which is not in Nodes=: name Macs of the "
                                           "group's Nodes= only"},
    {BASE SUB_GROUP "RdmaSubset=n[1-2],n1\n", "t.conf:3: RdmaSubset= names n1 twice: name each Mac once"},
    {BASE SUB_GROUP "RdmaSubset=n[1-2\n", "t.conf:3: RdmaSubset=: hostlist 'n[1-2': '[' without a matching ']': close "
                                          "the bracket: write the Macs as a hostlist: RdmaSubset=mac[01-07]"},
    {BASE "Group=b Nodes=n[1-3] Topology=other Link=tb4 Backends=mpi RdmaSubset=n[1-3]\n"
          SUB_CABLE("2", "n1", "n2", " Rdma=rdma_en2,rdma_en2") SUB_CABLE("3", "n2", "n3", " Rdma=rdma_en3,rdma_en3"),
     "t.conf:3: RdmaSubset= of group b is not a full mesh: n1 and n3 share no cable: name Macs every two of which "
     "are cabled (tbmesh inventory writes the largest such set), or drop RdmaSubset="},
    {BASE "Group=b Nodes=n[1-2] Topology=mesh Link=tb4 Backends=mpi RdmaSubset=n[1-2]\n" SUB_CABLE("2", "n1", "n2", ""),
     "t.conf:4: the cable joins two Macs of group b's RdmaSubset= but names no RDMA devices: add "
     "Rdma=rdma_<if>,rdma_<if>, or take one of its Macs out of RdmaSubset="},
    {BASE "Group=b Nodes=n[1-2] Topology=mesh Link=tb4 Backends=mpi RdmaSubset=n[1-2]\n"
          "Cable=n1:en2,n2:en2 Rdma=rdma_en2,rdma_en2\n",
     "t.conf:4: the cable joins two Macs of group b's RdmaSubset=, where JACCL runs, but has no Addr=: give both "
     "ends' addresses: Addr=10.0.0.1/30,10.0.0.2/30"},
    {BASE "Group=b Nodes=n[1-2] Topology=mesh Link=tb4 Backends=mpi RdmaSubset=n[1-2]\n"
          SUB_CABLE("2", "n1", "n2", " Rdma=rdma_en2,rdma_en2") "Group=rdma_b Nodes=n3 Topology=single\n",
     "t.conf:5: groups b (line 3) and rdma_b give the same Slurm feature tbmesh_rdma_b: rename one of them"},
    {BASE "MlxVersion=latest\n", "t.conf:3: MlxVersion=latest is not a version: write the MLX version as "
                                 "major.minor.patch, e.g. MlxVersion=0.31.2"},
    {BASE "MlxVersion=0.1000.2\n", "t.conf:3: MlxVersion=0.1000.2 is not a version: write the MLX version as "
                                    "major.minor.patch, e.g. MlxVersion=0.31.2"},
    {BASE "MlxVersion=0.31.2.1\n", "t.conf:3: MlxVersion=0.31.2.1 is not a version: write the MLX version as "
                                    "major.minor.patch, e.g. MlxVersion=0.31.2"},
    {BASE "MlxVersion=0.31.+2\n", "t.conf:3: MlxVersion=0.31.+2 is not a version: write the MLX version as "
                                   "major.minor.patch, e.g. MlxVersion=0.31.2"},
    {BASE "DefaultPartition=a\nDefaultPartition=b\n", "t.conf:4: DefaultPartition is already set at line 3: keep "
                                                      "one of them"},
    {BASE "MacPartition=mac,all\n", "t.conf:3: MacPartition=mac,all is not a partition name: name one Slurm "
                                    "partition, e.g. MacPartition=mac"},
    {BASE "SharedPartitions=all,\n", "t.conf:3: SharedPartitions=all, ends with a comma: remove the trailing comma"},
    {BASE "SharedPartitions=a b\n", "t.conf:3: 'b' is not Key=Value: write settings as Key=Value separated by "
                                    "spaces"},
    {BASE "DefaultPartition=x/y\n", "t.conf:3: DefaultPartition=x/y is not a partition name: name one Slurm "
                                    "partition, e.g. MacPartition=mac"},
    {BASE "MacPartition=mac\nMacPartition=m2\n", "t.conf:4: MacPartition is already set at line 3: keep one of them"},
    {BASE "Group=B Nodes=m3 Topology=single\n", "t.conf:3: 'B' is not a valid group name: use lowercase letters, "
                                                "digits, '-' and '_', starting with a letter, at most 31 characters"},
    {BASE "Group=b Nodes=m[3 Topology=single\n", "t.conf:3: Nodes=: hostlist 'm[3': '[' without a matching ']': close "
                                                 "the bracket: write the Macs as a hostlist: Nodes=mac[01-04]"},
    {BASE "Group=b Nodes=m3 Topology=torus\n", "t.conf:3: Topology=torus is not a topology: use mesh, ring, other or "
                                               "single"},
    {BASE "Group=b Nodes=m3 Topology=single Link=tb3\n", "t.conf:3: Link=tb3 is not a link kind: use tb5 (above "
                                                         "40 Gb/s), tb4 or none"},
    {BASE "Group=b Nodes=m3 Topology=single Rdma=maybe\n", "t.conf:3: Rdma=maybe is not yes or no: use yes or no"},
    {BASE "Group=b Nodes=m3 Topology=single Mode=remote\n", "t.conf:3: Mode=remote is not a mode: use bridge (slurmd "
                                                            "on the bridge host) or direct (slurmd on the Mac)"},
    {BASE "Group=b Nodes=m3 Topology=single Backends=nccl\n", "t.conf:3: Backends=nccl is not a list of backends: use "
                                                              "jaccl, jaccl-ring, ring, mpi (comma-separated) or none"},
    {BASE "Group=b Topology=single\n", "t.conf:3: group b has no Nodes=: a Group line needs Nodes= and Topology=: "
                                       "Group=studio-a Nodes=mac[01-04] Topology=mesh"},
    {BASE "Group=b Nodes=m3\n", "t.conf:3: group b has no Topology=: a Group line needs Nodes= and Topology=: "
                                "Group=studio-a Nodes=mac[01-04] Topology=mesh"},
    {BASE "Group=b Nodes=m[3-4] Topology=single\n", "t.conf:3: Topology=single with 2 nodes: a single group holds one "
                                                    "Mac: use Topology=mesh, ring or other"},
    {BASE "Group=b Nodes=m[3-4] Topology=ring Backends=mpi\n", "t.conf:3: Topology=ring needs at least 3 nodes, Nodes= "
                                                               "names 2: check Nodes= and Topology="},
    {BASE "Group=b Nodes=m[3-4] Topology=mesh Link=tb4 Rdma=yes Backends=mpi\n",
     "t.conf:3: Rdma=yes needs Link=tb5: RDMA runs on Thunderbolt 5 only: set Link=tb5, or Rdma=no"},
    {BASE "Group=b Nodes=m3 Topology=single Backends=ring,mpi\n",
     "t.conf:3: Backends= lists ring, which a single group with Rdma=no cannot run: remove them from Backends=, or "
     "fix Topology= and Rdma="},
    {"Group=b Nodes=m[3-6] Topology=ring Link=tb4 Backends=jaccl-ring\n",
     "t.conf:1: Backends= lists jaccl-ring, which a ring group with Rdma=no cannot run: remove them from Backends=, "
     "or fix Topology= and Rdma="},
    {BASE "Group=a Nodes=m3 Topology=single\n", "t.conf:3: group a is already defined at line 1: merge the two Group "
                                                "lines or rename one"},
    {BASE "Group=x-y Nodes=m3 Topology=single\nGroup=x_y Nodes=m4 Topology=single\n",
     "t.conf:4: groups x-y (line 3) and x_y give the same Slurm feature tbmesh_x_y: rename one of them"},
    {BASE "Group=b Nodes=m2 Topology=single\n", "t.conf:3: node m2 is in group a (line 1) and in group b: a Mac "
                                                "belongs to one group: remove it from one Nodes= list"},
    {BASE "Group=b Nodes=m3,m3 Topology=other Backends=mpi\n", "t.conf:3: node m3 is listed twice in group b: list "
                                                               "each Mac once"},
    {BASE "NodeName=m9 AgentAddr=x\n", "t.conf:3: node m9 is in no group: add it to the Nodes= of a Group line first"},
    {BASE "NodeName=m1 Group=zz\n", "t.conf:3: NodeName=m1 says Group=zz, but the node is in group a (line 1): fix "
                                    "Group= or the group's Nodes="},
    {BASE "NodeName=m1 AgentPort=7000\nNodeName=m1 SlurmdPort=7001\n",
     "t.conf:4: node m1 is already described at line 3: merge the two NodeName lines"},
    {BASE "NodeName=m1 AgentAddr=a/b\n", "t.conf:3: AgentAddr=a/b is not a host name or address: give a host name or "
                                         "an IPv4 address"},
    {BASE "NodeName=m1 SlurmdPort=x\n", "t.conf:3: SlurmdPort=x is not a port number: use a port number from 1 to "
                                        "65535"},
    {BASE "NodeName=m[1-\n", "t.conf:3: NodeName=: hostlist 'm[1-': '[' without a matching ']': close the bracket: "
                             "write the node names as a hostlist: NodeName=mac[01-04]"},
    {BASE "Cable=m1:en3\n", "t.conf:3: Cable=m1:en3 does not name exactly two ends: write both ends as node:interface, "
                            "e.g. Cable=mac01:en2,mac02:en2"},
    {BASE "Cable=m1,m2\n", "t.conf:3: cable end 'm1' has no ':interface': write both ends as node:interface, e.g. "
                           "Cable=mac01:en2,mac02:en2"},
    {BASE "Cable=m1:EN3,m2:en3\n", "t.conf:3: cable end 'm1:EN3' is not node:interface: write both ends as "
                                   "node:interface, e.g. Cable=mac01:en2,mac02:en2"},
    {BASE "Cable=m1:en3,m9:en3\n", "t.conf:3: the cable names node m9, which is in no group: add the node to a group's "
                                   "Nodes= or fix the name"},
    {BASE "Cable=m1:en3,m1:en4\n", "t.conf:3: the cable joins node m1 to itself: a cable joins two different Macs"},
    {BASE "Group=b Nodes=m3 Topology=single\nCable=m1:en3,m3:en2\n",
     "t.conf:4: the cable joins m1 (group a) and m3 (group b): a cable stays within one group: fix the groups' Nodes="},
    {BASE "Cable=m1:en2,m2:en3 Addr=10.0.0.5/30,10.0.0.6/30 Rdma=rdma_en2,rdma_en3\n",
     "t.conf:3: m1:en2 is already used by the cable at line 2: an interface holds one cable: fix the interface names"},
    {BASE "Cable=m1:en3,m2:en3 Addr=10.0.0.300/30,10.0.0.6/30\n",
     "t.conf:3: '10.0.0.300' is not an IPv4 address: give both ends' IPv4 addresses: Addr=10.0.0.1/30,10.0.0.2/30"},
    {BASE "Cable=m1:en3,m2:en3 Addr=10.0.0.5/33,10.0.0.6/30\n",
     "t.conf:3: '/33' is not a prefix length from 1 to 32: give both ends' IPv4 addresses: Addr=10.0.0.1/30,10.0.0.2/30"},
    {BASE "Cable=m1:en3,m2:en3 Addr=10.0.0.5\n",
     "t.conf:3: Addr=10.0.0.5 does not name exactly two ends: give both ends' IPv4 addresses: "
     "Addr=10.0.0.1/30,10.0.0.2/30"},
    {BASE "Cable=m1:en3,m2:en3 Rdma=rdma-en3,rdma_en3\n",
     "t.conf:3: 'rdma-en3' is not an RDMA device name: name the RDMA device at each end: Rdma=rdma_en2,rdma_en2"},
    {BASE "Cable=m1:en3,m2:en3 Speed=fast\n", "t.conf:3: Speed=fast is not a speed in Gb/s: give the link speed in "
                                              "Gb/s, e.g. Speed=80"},
    {BASE "Cable=m1:en3,m2:en3 Addr=10.0.0.5/30,10.0.0.6/30\n",
     "t.conf:3: group a has Rdma=yes but this cable names no RDMA devices: add Rdma=rdma_<if>,rdma_<if>, or set "
     "Rdma=no on the group"},
    {BASE "Cable=m1:en3,m2:en3 Rdma=rdma_en3,rdma_en3\n",
     "t.conf:3: group a runs JACCL but this cable has no Addr=: give both ends' addresses: Addr=10.0.0.1/30,10.0.0.2/30"},
    {"Group=b Nodes=n[1-4] Topology=ring Link=tb4\nCable=n1:en2,n2:en2\nCable=n2:en3,n3:en2 Addr=1.0.0.1,1.0.0.2\n"
     "Cable=n3:en3,n4:en2 Addr=1.0.0.5,1.0.0.6\nCable=n4:en3,n1:en3 Addr=1.0.0.9,1.0.0.10\n",
     "t.conf:2: group b runs ring but this cable has no Addr=: give both ends' addresses: Addr=10.0.0.1/30,10.0.0.2/30"},
    {"Group=b Nodes=n[1-3] Topology=mesh Backends=mpi\nCable=n1:en2,n2:en2\nCable=n2:en3,n3:en2\n",
     "t.conf:1: group b says Topology=mesh but its cables make the topology other: fix the group's Cable= lines or its "
     "Topology="},
    {"Group=b Nodes=n[1-2] Topology=mesh\n", "t.conf:1: group b allows more than mpi but lists no cable: add its Cable= "
                                             "lines (tbmesh inventory writes them), or set Backends=mpi"},
};

START_TEST(each_bad_line)
{
    tbm_err_t err = {{0}};
    tbm_findings_t errors;
    tbm_conf_t c;
    const char *text = bad_lines[_i].text;

    ck_assert_str_eq(parse_text(text), bad_lines[_i].msg);
    /* the same error, one finding, in the caller's list */
    tbm_findings_init(&errors);
    ck_assert_int_eq(tbm_conf_parse(text, strlen(text), "t.conf", &c, &errors, &err), -1);
    ck_assert_uint_eq(errors.n, 1);
    ck_assert_str_eq(errors.items[0].code, "conf-error");
    ck_assert_int_eq(errors.items[0].severity, TBM_SEV_ERROR);
    tbm_findings_free(&errors);
}
END_TEST

START_TEST(collects_every_error)
{
    const char *text = "Foo=1\nGroup=a Nodes=m1 Topology=single\nAgentPort=x\nNodeName=zz\n";
    tbm_findings_t errors;
    tbm_err_t err = {{0}};
    tbm_conf_t c;

    tbm_findings_init(&errors);
    tbm_finding_add(&errors, TBM_SEV_ERROR, "conf-error", "old.conf:9", "x", "an older error");
    ck_assert_int_eq(tbm_conf_parse(text, strlen(text), "t.conf", &c, &errors, &err), -1);
    ck_assert_uint_eq(errors.n, 4);
    ck_assert_str_eq(errors.items[1].where, "t.conf:1");
    ck_assert_str_eq(errors.items[2].where, "t.conf:3");
    ck_assert_str_eq(errors.items[3].where, "t.conf:4");
    ck_assert_str_eq(errors.items[3].what, "node zz is in no group");
    ck_assert_str_eq(err.msg, "t.conf:1: unknown key 'Foo': a line starts with Group=, NodeName=, Cable= or one of "
                              "AgentPort, CoordinatorPort, RingBasePort, SlurmdBasePort, MlxVersion, MacPartition, SharedPartitions, "
                              "DefaultPartition, ExclusiveMacs, JacclOnSubsets, Placement, RecordDir, RecordReaders, Records, OwnerRecovery, OwnerAccess, "
                     "OwnerUpkeep (and 2 more errors)");
    ck_assert_uint_eq(c.n_groups, 0);
    tbm_findings_free(&errors);
}
END_TEST

START_TEST(bad_file_fixture)
{
    static const char *const want[][2] = {
        {"bad-lines.conf:3", "AgentPort is already set at line 2"},
        {"bad-lines.conf:5", "Mode=sideways is not a mode"},
        {"bad-lines.conf:9", "unknown key 'Colour'"},
        {"bad-lines.conf:5", "node mac04 is in group studio-a (line 4) and in group mini-b"},
        {"bad-lines.conf:7", "the cable names node mac13, which is in no group"},
        {"bad-lines.conf:8", "node mac09 is in no group"},
        {"bad-lines.conf:4", "group studio-a says Topology=mesh but its cables make the topology other"},
    };
    char path[4096], buf[4096];
    tbm_findings_t errors;
    tbm_err_t err = {{0}};
    tbm_conf_t c;
    size_t len, i;
    FILE *f;

    snprintf(path, sizeof(path), "%s/conf/bad-lines.conf", tbm_fixtures_dir());
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    tbm_findings_init(&errors);
    ck_assert_int_eq(tbm_conf_parse(buf, len, "bad-lines.conf", &c, &errors, &err), -1);
    for (i = 0; i < errors.n && i < 7; i++) {
        ck_assert_str_eq(errors.items[i].where, want[i][0]);
        ck_assert_str_eq(errors.items[i].what, want[i][1]);
    }
    ck_assert_uint_eq(errors.n, 7);
    ck_assert_str_eq(err.msg, "bad-lines.conf:3: AgentPort is already set at line 2: keep one of them (and 6 more errors)");
    tbm_findings_free(&errors);
}
END_TEST

START_TEST(limits)
{
    static char big[TBM_CONF_LINE_MAX + 64];
    char tokens[2048] = "", nul[] = "AgentPort=1\nAgentPort\0=2\n";
    tbm_err_t err = {{0}};
    tbm_conf_t c;
    int i;

    memset(big, 'x', sizeof(big) - 1);
    memcpy(big, "AgentPort=", 10);
    ck_assert_str_eq(parse_text(big), "t.conf:1: the line is longer than 8192 bytes: split it: one Group, NodeName or "
                                      "Cable per line");
    ck_assert_int_eq(tbm_conf_parse(nul, sizeof(nul) - 1, "t.conf", &c, NULL, &err), -1);
    ck_assert_str_eq(err.msg, "t.conf:2: the line holds a NUL byte: save the file as plain text");
    ck_assert_int_eq(tbm_conf_parse("", (size_t)TBM_CONF_MAX_BYTES + 1, "t.conf", &c, NULL, &err), -1);
    ck_assert_str_eq(err.msg, "t.conf:0: the file holds 16777217 bytes: keep tbmesh.conf under 16 MiB");
    for (i = 0; i < 33; i++)
        strcat(tokens, "AgentPort=1 ");
    ck_assert_str_eq(parse_text(tokens), "t.conf:1: more than 32 settings on one line: split the line");
    ck_assert_str_eq(parse_text("Group=a Nodes=n[1-65537] Topology=other Backends=mpi\n"),
                     "t.conf:1: Nodes=: hostlist 'n[1-65537]' names more than 65536 hosts: split it into smaller lists: "
                     "write the Macs as a hostlist: Nodes=mac[01-04]");
}
END_TEST

/* topology -> conf -> text -> conf: the same model; and text -> conf -> text: the same text. */
static void round_trip(const tbm_conf_t *c)
{
    tbm_conf_t back;
    tbm_err_t err = {{0}};
    char *text = tbm_conf_write(c), *again;

    ck_assert_ptr_nonnull(text);
    ck_assert_msg(tbm_conf_parse(text, strlen(text), "written", &back, NULL, &err) == 0, "%s\n%s", err.msg, text);
    ck_assert_int_eq(tbm_conf_equal(c, &back), 1);
    again = tbm_conf_write(&back);
    ck_assert_str_eq(again, text);
    free(again);
    free(text);
    tbm_conf_free(&back);
}

static tbm_host_facts_t lab[64];

static void conf_of_lab(size_t n, const tbm_conf_t *hint, tbm_conf_t *out)
{
    tbm_topology_t t;
    tbm_validation_t v;
    tbm_err_t err = {{0}};

    ck_assert_int_eq(tbm_topology_build(&t, lab, n, &err), 0);
    ck_assert_int_eq(tbm_validate(&t, &v, &err), 0);
    ck_assert_int_eq(tbm_conf_from_topology(&t, &v, hint, out, &err), 0);
    tbm_validation_free(&v);
    tbm_topology_free(&t);
}

START_TEST(from_topology_round_trip)
{
    tbm_conf_t c, hint;
    tbm_err_t err = {{0}};
    size_t len;
    char *example = read_example(&len), *text;

    lab_embedded(lab);
    conf_of_lab(8, NULL, &c);
    ck_assert_str_eq(c.groups[0].caps.name, "group1");
    ck_assert_str_eq(c.groups[1].caps.name, "group2");
    ck_assert_int_eq(c.groups[1].mode, TBM_MODE_BRIDGE);
    round_trip(&c);
    tbm_conf_free(&c);

    ck_assert_int_eq(tbm_conf_parse(example, len, "example", &hint, NULL, &err), 0);
    hint.nodes[5].agent_addr[0] = 'x';    /* mac06 */
    hint.nodes[5].agent_addr[1] = '\0';
    conf_of_lab(8, &hint, &c);
    ck_assert_str_eq(c.groups[0].caps.name, "studio-a");
    ck_assert_str_eq(c.groups[1].caps.name, "mini-b");
    ck_assert_int_eq(c.groups[1].mode, TBM_MODE_DIRECT);
    ck_assert_str_eq(c.mlx_version, "0.31.2");
    ck_assert_str_eq(c.nodes[5].agent_addr, "x");
    text = tbm_conf_write(&c);
    ck_assert_str_eq(text,
        "# tbmesh.conf: the Thunderbolt groups of the lab for slurm-tbmesh; see tbmesh.conf(5).\n"
        "AgentPort=6830\nCoordinatorPort=32323\nRingBasePort=32323\nSlurmdBasePort=6900\nMlxVersion=0.31.2\n"
        "MacPartition=mac\nSharedPartitions=all\nDefaultPartition=all\n"
        "\n"
        "Group=studio-a Nodes=mac[01-04] Topology=mesh Link=tb5 Rdma=yes Mode=bridge Backends=jaccl,jaccl-ring,ring,mpi\n"
        "Cable=mac01:en2,mac02:en2 Addr=10.0.0.1/30,10.0.0.2/30 Rdma=rdma_en2,rdma_en2 Speed=80\n"
        "Cable=mac01:en3,mac03:en2 Addr=10.0.0.5/30,10.0.0.6/30 Rdma=rdma_en3,rdma_en2 Speed=80\n"
        "Cable=mac01:en4,mac04:en2 Addr=10.0.0.9/30,10.0.0.10/30 Rdma=rdma_en4,rdma_en2 Speed=80\n"
        "Cable=mac02:en3,mac03:en3 Addr=10.0.0.13/30,10.0.0.14/30 Rdma=rdma_en3,rdma_en3 Speed=80\n"
        "Cable=mac02:en4,mac04:en3 Addr=10.0.0.17/30,10.0.0.18/30 Rdma=rdma_en4,rdma_en3 Speed=80\n"
        "Cable=mac03:en4,mac04:en4 Addr=10.0.0.21/30,10.0.0.22/30 Rdma=rdma_en4,rdma_en4 Speed=80\n"
        "\n"
        "Group=mini-b Nodes=mac[05-08] Topology=ring Link=tb4 Rdma=no Mode=direct Backends=ring,mpi\n"
        "NodeName=mac06 AgentAddr=x\n"
        "Cable=mac05:en2,mac06:en2 Addr=10.0.0.25/30,10.0.0.26/30 Speed=40\n"
        "Cable=mac05:en3,mac08:en3 Addr=10.0.0.38/30,10.0.0.37/30 Speed=40\n"
        "Cable=mac06:en3,mac07:en2 Addr=10.0.0.29/30,10.0.0.30/30 Speed=40\n"
        "Cable=mac07:en3,mac08:en2 Addr=10.0.0.33/30,10.0.0.34/30 Speed=40\n");
    free(text);
    round_trip(&c);
    tbm_conf_free(&c);
    tbm_conf_free(&hint);
    free(example);
}
END_TEST

START_TEST(round_trip_unfit_labs)
{
    tbm_conf_t c;
    tbm_topology_t t;
    tbm_validation_t v;
    tbm_err_t err = {{0}};
    int g, k = 0;

    /* a cut cable (one-sided), a missing address, a chain and a lone Mac: still a valid file */
    lab_embedded(lab);
    lab[3].ports[1].peer_uuid[0] = '\0';
    lab[6].ifaces[1].ipv4[0] = '\0';
    lab_host(&lab[8], "mac09");
    lab_hosts(&lab[9], 3, "chain", 1);
    lab_ring(lab, 9, 3, 100, 80, 1, 0);
    lab[9].ports[0].iface[0] = '\0';
    snprintf(lab[10].ports[1].iface, TBM_IFNAME_MAX, "En 3");
    conf_of_lab(12, NULL, &c);
    ck_assert_str_eq(c.cables[c.n_cables - 2].end[0].iface, "tb1");
    ck_assert_str_eq(c.cables[c.n_cables - 1].end[0].iface, "tb2");
    ck_assert_uint_eq(c.n_groups, 4);
    ck_assert_int_eq(c.groups[0].caps.topology, TBM_TOPO_OTHER);
    ck_assert_uint_eq(c.groups[0].caps.backends, TBM_BACKEND_BIT(TBM_BACKEND_MPI));
    ck_assert_uint_eq(c.groups[1].caps.backends, TBM_BACKEND_BIT(TBM_BACKEND_MPI));
    ck_assert_str_eq(c.cables[0 + 5].end[0].iface, "en2");
    round_trip(&c);
    tbm_conf_free(&c);

    /* 64 Macs, 8 meshes of 8 */
    lab_hosts(lab, 64, "mac", 1);
    for (g = 0; g < 8; g++)
        k = lab_mesh(lab, g * 8, 8, k, 80, 1);
    conf_of_lab(64, NULL, &c);
    ck_assert_uint_eq(c.n_cables, 224);
    round_trip(&c);
    tbm_conf_free(&c);

    /* refused: two hosts with one name */
    lab_hosts(lab, 2, "mac", 1);
    snprintf(lab[1].hostname, TBM_HOST_MAX, "mac01");
    ck_assert_int_eq(tbm_topology_build(&t, lab, 2, &err), 0);
    ck_assert_int_eq(tbm_validate(&t, &v, &err), 0);
    ck_assert_int_eq(tbm_conf_from_topology(&t, &v, NULL, &c, &err), -1);
    ck_assert_str_eq(err.msg, "two hosts are named mac01: give every Mac its own host name");
    tbm_validation_free(&v);
    tbm_topology_free(&t);
    snprintf(lab[1].hostname, TBM_HOST_MAX, "mac 2");
    ck_assert_int_eq(tbm_topology_build(&t, lab, 2, &err), 0);
    ck_assert_int_eq(tbm_validate(&t, &v, &err), 0);
    ck_assert_int_eq(tbm_conf_from_topology(&t, &v, NULL, &c, &err), -1);
    ck_assert_str_eq(err.msg, "host 'mac 2' has no valid node name: fix the host name on that Mac and probe it again");
    tbm_validation_free(&v);
    tbm_topology_free(&t);
}
END_TEST

/* mac03's capture of system_profiler failed (its facts say so, and still hold ports, which are not believed):
 * mac03 is in no group, the file says why in a comment, the other Macs keep their groups and cables, and
 * what is written reads back. */
START_TEST(mac_without_thunderbolt_facts_is_left_out)
{
    tbm_conf_t c, back;
    tbm_err_t err = {{0}};
    size_t i;
    char *text;

    lab_embedded(lab);
    snprintf(lab[2].unknown[TBM_PART_THUNDERBOLT], TBM_UNKNOWN_MAX, "the capture failed (system_profiler "
             "SPThunderboltDataType: invalid JSON at line 75 column 32)");
    conf_of_lab(8, NULL, &c);
    ck_assert_uint_eq(c.n_left_out, 1);
    ck_assert_str_eq(c.left_out[0].name, "mac03");
    ck_assert_str_eq(c.left_out[0].why, "system_profiler SPThunderboltDataType: invalid JSON at line 75 column 32");
    ck_assert_int_eq(tbm_conf_node(&c, "mac03"), -1);
    ck_assert_uint_eq(c.n_nodes, 7);
    ck_assert_uint_eq(c.n_groups, 2);
    ck_assert_uint_eq(c.groups[0].caps.n_nodes, 3);            /* mac[01-02,04]: a mesh of three */
    ck_assert_int_eq(c.groups[0].caps.topology, TBM_TOPO_MESH);
    ck_assert_uint_eq(c.groups[1].caps.n_nodes, 4);            /* mini-b's ring, as it was */
    ck_assert_int_eq(c.groups[1].caps.topology, TBM_TOPO_RING);
    ck_assert_uint_eq(c.n_cables, 3 + 4);
    for (i = 0; i < c.n_cables; i++)
        ck_assert_int_eq(c.cables[i].group, c.nodes[c.cables[i].end[0].node].group);
    text = tbm_conf_write(&c);
    ck_assert_ptr_nonnull(strstr(text, "see tbmesh.conf(5).\n# mac03 is in no group: no Thunderbolt facts for mac03 "
                                       "(probe failed: system_profiler SPThunderboltDataType: invalid JSON at line 75 "
                                       "column 32): probe it again (`macnode probe` on mac03), then run tbmesh "
                                       "inventory again\nAgentPort=6830\n"));
    ck_assert_ptr_nonnull(strstr(text, "Group=group1 Nodes=mac[01-02,04] Topology=mesh "));
    ck_assert_ptr_null(strstr(text, "mac03:"));
    ck_assert_int_eq(tbm_conf_parse(text, strlen(text), "written", &back, NULL, &err), 0);
    ck_assert_int_eq(tbm_conf_equal(&c, &back), 1);   /* the comment is not read back */
    ck_assert_uint_eq(back.n_left_out, 0);
    free(text);
    tbm_conf_free(&back);
    tbm_conf_free(&c);
}
END_TEST

/* Placement=: pack by default (not written), order read, written back and kept from a hint by the inventory. */
START_TEST(placement_setting)
{
    static const char *text =
        "# tbmesh.conf: the Thunderbolt groups of the lab for slurm-tbmesh; see tbmesh.conf(5).\n"
        "AgentPort=6830\nCoordinatorPort=32323\nRingBasePort=32323\nSlurmdBasePort=6900\nPlacement=order\n";
    tbm_conf_t c, d;
    tbm_err_t err = {{0}};
    char *out;

    ck_assert_msg(tbm_conf_parse(text, strlen(text), "t.conf", &c, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(c.placement_order, 1);
    out = tbm_conf_write(&c);
    ck_assert_str_eq(out, text);
    free(out);
    ck_assert_int_eq(tbm_conf_parse("Placement=pack\n", 15, "t.conf", &d, NULL, &err), 0);
    ck_assert_int_eq(d.placement_order, 0);
    out = tbm_conf_write(&d);
    ck_assert_ptr_null(strstr(out, "Placement"));
    free(out);
    ck_assert_int_eq(tbm_conf_equal(&c, &d), 0);
    tbm_conf_free(&d);
    tbm_conf_free(&c);
}
END_TEST

/* A group that cannot run JACCL whole, with its RdmaSubset= and the site's JacclOnSubsets=yes: read, written
 * back the same, and the subset's placement rules. */
START_TEST(rdma_subset_round_trip)
{
    static const char *text =
        "# tbmesh.conf: the Thunderbolt groups of the lab for slurm-tbmesh; see tbmesh.conf(5).\n"
        "AgentPort=6830\nCoordinatorPort=32323\nRingBasePort=32323\nSlurmdBasePort=6900\nJacclOnSubsets=yes\n"
        "\n"
        "Group=s Nodes=m[1-3] Topology=mesh Link=tb4 Rdma=no Mode=bridge Backends=ring,mpi RdmaSubset=m[1-2]\n"
        "Cable=m1:en2,m2:en2 Addr=10.0.0.1/30,10.0.0.2/30 Rdma=rdma_en2,rdma_en2 Speed=80\n"
        "Cable=m1:en3,m3:en2 Addr=10.0.0.5/30,10.0.0.6/30 Speed=80\n"
        "Cable=m2:en3,m3:en3 Addr=10.0.0.9/30,10.0.0.10/30 Speed=40\n";
    tbm_conf_t c, d;
    tbm_group_caps_t caps;
    tbm_err_t err = {{0}};
    char *out;

    ck_assert_msg(tbm_conf_parse(text, strlen(text), "t.conf", &c, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(c.jaccl_on_subsets, 1);
    ck_assert_uint_eq(c.groups[0].n_rdma_subset, 2);
    ck_assert_int_eq(c.nodes[tbm_conf_node(&c, "m1")].rdma_subset, 1);
    ck_assert_int_eq(c.nodes[tbm_conf_node(&c, "m3")].rdma_subset, 0);
    out = tbm_conf_write(&c);
    ck_assert_str_eq(out, text);
    free(out);
    round_trip(&c);
    ck_assert_int_eq(tbm_conf_rdma_subset_caps(&c, &c.groups[0], &caps), 1);
    ck_assert_str_eq(caps.name, "s");
    ck_assert_uint_eq(caps.n_nodes, 2);
    ck_assert_int_eq(caps.topology, TBM_TOPO_MESH);
    ck_assert_uint_eq(caps.backends, TBM_BACKENDS_RDMA);
    ck_assert_int_eq(caps.rdma, 1);

    /* the site does not allow it: no subset rules; and the files differ */
    ck_assert_int_eq(tbm_conf_parse(text, strlen(text), "t.conf", &d, NULL, &err), 0);
    d.jaccl_on_subsets = 0;
    ck_assert_int_eq(tbm_conf_rdma_subset_caps(&d, &d.groups[0], &caps), 0);
    ck_assert_int_eq(tbm_conf_equal(&c, &d), 0);
    d.jaccl_on_subsets = 1;
    d.nodes[tbm_conf_node(&d, "m2")].rdma_subset = 0;
    d.nodes[tbm_conf_node(&d, "m3")].rdma_subset = 1;
    ck_assert_int_eq(tbm_conf_equal(&c, &d), 0);
    tbm_conf_free(&d);
    tbm_conf_free(&c);
}
END_TEST

/* The inventory of eight Macs in a Thunderbolt 5 mesh, one cable at 40 Gb/s: the group is written Rdma=no with
 * RdmaSubset=mac[01-07], the cables among those seven with their RDMA devices, the others without; the
 * site's JacclOnSubsets= is kept from the last tbmesh.conf. */
START_TEST(rdma_subset_from_topology)
{
    tbm_conf_t c, hint;
    tbm_err_t err = {{0}};
    size_t i, with_rdma = 0;
    int j, k = 0;
    char *text, *line;

    lab_hosts(lab, 8, "mac", 1);
    for (i = 0; i < 8; i++)
        for (j = (int)i + 1; j < 8; j++)
            lab_cable(lab, (int)i, j, k++, i == 2 && j == 7 ? 40 : 80, 1);
    ck_assert_int_eq(tbm_conf_parse("JacclOnSubsets=yes\nPlacement=order\n", 35, "hint", &hint, NULL, &err), 0);
    conf_of_lab(8, &hint, &c);
    ck_assert_int_eq(c.jaccl_on_subsets, 1);
    ck_assert_int_eq(c.placement_order, 1);
    ck_assert_int_eq(c.groups[0].caps.rdma, 0);
    ck_assert_uint_eq(c.groups[0].n_rdma_subset, 7);
    for (i = 0; i < c.n_cables; i++) {
        int in = c.nodes[c.cables[i].end[0].node].rdma_subset && c.nodes[c.cables[i].end[1].node].rdma_subset;
        ck_assert_int_eq(c.cables[i].end[0].rdma[0] != 0, in);
        with_rdma += (size_t)in;
    }
    ck_assert_uint_eq(with_rdma, 21);
    text = tbm_conf_write(&c);
    ck_assert_ptr_nonnull(strstr(text, "JacclOnSubsets=yes\n"));
    ck_assert_ptr_nonnull(strstr(text, "Group=group1 Nodes=mac[01-08] Topology=mesh Link=tb4 Rdma=no Mode=bridge "
                                       "Backends=ring,mpi RdmaSubset=mac[01-07]\n"));
    ck_assert_ptr_nonnull(strstr(text, "Cable=mac01:en2,mac02:en2 Addr=10.0.0.1/30,10.0.0.2/30 Rdma=rdma_en2,rdma_en2 "
                                       "Speed=80\n"));
    line = strstr(text, "Cable=mac03:en8,mac08:en4 Addr=");
    ck_assert_ptr_nonnull(line);
    ck_assert_ptr_nonnull(strchr(line, '\n'));
    *strchr(line, '\n') = '\0';
    ck_assert_ptr_null(strstr(line, "Rdma="));   /* the slow cable: no RDMA devices */
    free(text);
    round_trip(&c);
    tbm_conf_free(&c);
    tbm_conf_free(&hint);
}
END_TEST

START_TEST(record_store_settings_are_checked)
{
    ck_assert_str_eq(parse_text(BASE "RecordDir=/srv/tbmesh/records\nRecordReaders=lab-admins\nRecords=yes\n"), "");
    ck_assert_ptr_nonnull(strstr(parse_text(BASE "Records=maybe\n"), "t.conf:3: "));
    ck_assert_ptr_nonnull(strstr(parse_text(BASE "Records=maybe\n"), "RECORD STORE"));
    ck_assert_ptr_nonnull(strstr(parse_text(BASE "RecordDir=relative\n"), "RECORD STORE"));
    /* each on a line of its own, once: as the record store reads them */
    ck_assert_str_eq(parse_text(BASE "AgentPort=5123 RecordDir=/srv/records Records=no\n"),
                     "t.conf:3: RecordDir= shares its line with other settings: put it on a line of its own: the record "
                     "store reads RecordDir=, RecordReaders= and Records= one to a line (and 1 more errors)");
    ck_assert_str_eq(parse_text(BASE "Records=no\nRecords=yes\n"),
                     "t.conf:4: Records is already set at line 3: keep one of them");
}
END_TEST

/* Operations owners: global and per group, checked, looked up with the group's own first, written back. */
START_TEST(owners)
{
    const char *text = BASE "OwnerRecovery=ops@lab.example\nOwnerAccess=lab-lead\n"
                            "Group=b Nodes=m[3-4] Topology=mesh Link=tb4 Rdma=no Backends=ring,mpi OwnerRecovery=bob\n"
                            "Cable=m3:en2,m4:en2 Addr=10.0.1.1/30,10.0.1.2/30 Speed=40\n";
    tbm_err_t err = {{0}};
    tbm_conf_t c;

    ck_assert_int_eq(tbm_conf_parse(text, strlen(text), "t.conf", &c, NULL, &err), 0);
    ck_assert_str_eq(tbm_conf_owner(&c, tbm_conf_group(&c, "a"), TBM_OWNER_RECOVERY), "ops@lab.example");
    ck_assert_str_eq(tbm_conf_owner(&c, tbm_conf_group(&c, "b"), TBM_OWNER_RECOVERY), "bob");
    ck_assert_str_eq(tbm_conf_owner(&c, tbm_conf_group(&c, "b"), TBM_OWNER_ACCESS), "lab-lead");
    ck_assert_str_eq(tbm_conf_owner(&c, tbm_conf_group(&c, "b"), TBM_OWNER_UPKEEP), "");
    ck_assert_str_eq(tbm_owner_key(TBM_OWNER_UPKEEP), "OwnerUpkeep");
    round_trip(&c);
    tbm_conf_free(&c);
    ck_assert_str_eq(parse_text(BASE "OwnerUpkeep=two words\n"),
                     "t.conf:3: 'words' is not Key=Value: write settings as Key=Value separated by spaces");
    ck_assert_str_eq(parse_text(BASE "OwnerUpkeep=a;b\n"),
                     "t.conf:3: OwnerUpkeep=a;b is not an owner: name one owner in one word (a login, an e-mail "
                     "address or a team), e.g. OwnerRecovery=ops@lab.example");
    ck_assert_str_eq(parse_text(BASE "OwnerAccess=x\nOwnerAccess=y\n"),
                     "t.conf:4: OwnerAccess is already set at line 3: keep one of them; a group's own owner goes on "
                     "its Group line");
}
END_TEST

/* A rewritten tbmesh.conf (tbmesh inventory, from the last one or a hint) keeps the record store's settings
 * as they were given, and leaves out those that were not. */
START_TEST(record_store_settings_are_kept_when_written)
{
    static const char *const text = "RecordDir=/var/lib/tbmesh-lab/records/\nrecordreaders=lab-admins\nRecords=no\n" BASE;
    tbm_conf_t c, back, hint, made;
    tbm_err_t err = {{0}};
    char *w, *example;
    size_t len;

    ck_assert_int_eq(tbm_conf_parse(text, strlen(text), "t.conf", &c, NULL, &err), 0);
    ck_assert_str_eq(c.record_dir, "/var/lib/tbmesh-lab/records");
    ck_assert_str_eq(c.record_readers, "lab-admins");
    ck_assert_int_eq(c.records, 0);
    w = tbm_conf_write(&c);
    ck_assert_ptr_nonnull(strstr(w, "\nRecordDir=/var/lib/tbmesh-lab/records\nRecordReaders=lab-admins\nRecords=no\n"));
    ck_assert_int_eq(tbm_conf_parse(w, strlen(w), "w", &back, NULL, &err), 0);
    ck_assert_int_eq(tbm_conf_equal(&c, &back), 1);
    back.records = 1;
    ck_assert_int_eq(tbm_conf_equal(&c, &back), 0);
    back.records = 0;
    back.record_dir[1] = 'x';
    ck_assert_int_eq(tbm_conf_equal(&c, &back), 0);
    free(w);
    tbm_conf_free(&back);
    tbm_conf_free(&c);

    /* not given: not written */
    ck_assert_int_eq(tbm_conf_parse(BASE, strlen(BASE), "t.conf", &c, NULL, &err), 0);
    ck_assert_int_eq(c.records, -1);
    w = tbm_conf_write(&c);
    ck_assert_ptr_null(strstr(w, "Record"));
    free(w);
    tbm_conf_free(&c);

    /* from a hint: the store's settings go with the other global settings */
    example = read_example(&len);
    ck_assert_int_eq(tbm_conf_parse(example, len, "example", &hint, NULL, &err), 0);
    snprintf(hint.record_dir, sizeof(hint.record_dir), "/srv/records");
    hint.records = 1;
    lab_embedded(lab);
    conf_of_lab(8, &hint, &made);
    w = tbm_conf_write(&made);
    ck_assert_ptr_nonnull(strstr(w, "\nRecordDir=/srv/records\nRecords=yes\n"));
    round_trip(&made);
    free(w);
    free(example);
    tbm_conf_free(&made);
    tbm_conf_free(&hint);
}
END_TEST

START_TEST(equal_sees_differences)
{
    tbm_conf_t a, b;
    tbm_err_t err = {{0}};
    size_t len;
    char *text = read_example(&len);

    ck_assert_int_eq(tbm_conf_parse(text, len, "x", &a, NULL, &err), 0);
    ck_assert_int_eq(tbm_conf_parse(text, len, "x", &b, NULL, &err), 0);
    ck_assert_int_eq(tbm_conf_equal(&a, &b), 1);
    b.cables[3].end[1].prefix_len = 24;
    ck_assert_int_eq(tbm_conf_equal(&a, &b), 0);
    b.cables[3].end[1].prefix_len = 30;
    b.groups[1].mode = TBM_MODE_BRIDGE;
    ck_assert_int_eq(tbm_conf_equal(&a, &b), 0);
    b.groups[1].mode = TBM_MODE_DIRECT;
    b.nodes[2].agent_port = 1;
    ck_assert_int_eq(tbm_conf_equal(&a, &b), 0);
    b.nodes[2].agent_port = 0;
    b.ring_base_port = 1;
    ck_assert_int_eq(tbm_conf_equal(&a, &b), 0);
    b.ring_base_port = a.ring_base_port;
    ck_assert_int_eq(a.exclusive_macs, 1);   /* a Mac job owns its Macs unless the site says otherwise */
    b.exclusive_macs = 0;
    ck_assert_int_eq(tbm_conf_equal(&a, &b), 0);
    {   /* ExclusiveMacs=no is written and read back */
        char *w = tbm_conf_write(&b);
        tbm_conf_t c;
        ck_assert_ptr_nonnull(strstr(w, "ExclusiveMacs=no\n"));
        ck_assert_int_eq(tbm_conf_parse(w, strlen(w), "w", &c, NULL, &err), 0);
        ck_assert_int_eq(tbm_conf_equal(&b, &c), 1);
        tbm_conf_free(&c);
        free(w);
    }
    ck_assert_str_eq(tbm_mode_name(TBM_MODE_DIRECT), "direct");
    tbm_conf_free(&a);
    tbm_conf_free(&b);
    free(text);
}
END_TEST

START_TEST(default_path_is_beside_slurm_conf)
{
    char buf[256];

    tbm_conf_default_path("/var/lib/tbmesh-lab/etc/slurm.conf", buf, sizeof(buf));
    ck_assert_str_eq(buf, "/var/lib/tbmesh-lab/etc/tbmesh.conf");
    tbm_conf_default_path(NULL, buf, sizeof(buf));
    ck_assert_str_eq(buf, "/etc/slurm/tbmesh.conf");
    tbm_conf_default_path("", buf, sizeof(buf));
    ck_assert_str_eq(buf, "/etc/slurm/tbmesh.conf");
    tbm_conf_default_path("slurm.conf", buf, sizeof(buf));
    ck_assert_str_eq(buf, "tbmesh.conf");
}
END_TEST

START_TEST(agents_by_address)
{
    static const char *const text = "AgentPort=7000\n"
        "Group=a Nodes=m[1-4] Topology=mesh Link=tb5 Rdma=yes Backends=mpi\n"
        "NodeName=m1 AgentAddr=10.0.0.11\n"
        "NodeName=m2 AgentAddr=10.0.0.12 AgentPort=7002\n"
        "NodeName=m3 AgentAddr=10.0.0.99\n"
        "NodeName=m4 AgentAddr=10.0.0.99 AgentPort=7004\n";
    tbm_err_t err = { { 0 } };
    tbm_conf_t c;
    char buf[128];

    ck_assert_int_eq(tbm_conf_parse(text, strlen(text), "t.conf", &c, NULL, &err), 0);
    tbm_conf_agent_of(&c, tbm_conf_node(&c, "m1"), buf, sizeof(buf));
    ck_assert_str_eq(buf, "10.0.0.11:7000");
    tbm_conf_agent_of(&c, tbm_conf_node(&c, "m2"), buf, sizeof(buf));
    ck_assert_str_eq(buf, "10.0.0.12:7002");
    ck_assert_int_eq(tbm_conf_node_at(&c, "10.0.0.11:7000"), tbm_conf_node(&c, "m1"));
    ck_assert_int_eq(tbm_conf_node_at(&c, "10.0.0.11"), tbm_conf_node(&c, "m1"));       /* any port */
    ck_assert_int_eq(tbm_conf_node_at(&c, "10.0.0.11:7002"), -1);                        /* another port */
    ck_assert_int_eq(tbm_conf_node_at(&c, "10.0.0.1:7000"), -1);                         /* a prefix of it */
    ck_assert_int_eq(tbm_conf_node_at(&c, "10.0.0.12:7002"), tbm_conf_node(&c, "m2"));
    ck_assert_int_eq(tbm_conf_node_at(&c, "10.0.0.99:7004"), tbm_conf_node(&c, "m4"));
    ck_assert_int_eq(tbm_conf_node_at(&c, "10.0.0.99"), -1);                             /* two Macs there */
    ck_assert_int_eq(tbm_conf_node_at(&c, "m1:7000"), -1);                               /* m1's is its AgentAddr */
    tbm_conf_free(&c);
}
END_TEST

static Suite *conf_suite(void)
{
    Suite *s = suite_create("conf");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, example_file);
    tcase_add_test(tc, owners);
    tcase_add_test(tc, example_placements);
    tcase_add_test(tc, syntax_forms);
    tcase_add_loop_test(tc, each_bad_line, 0, (int)(sizeof(bad_lines) / sizeof(bad_lines[0])));
    tcase_add_test(tc, collects_every_error);
    tcase_add_test(tc, bad_file_fixture);
    tcase_add_test(tc, limits);
    tcase_add_test(tc, from_topology_round_trip);
    tcase_add_test(tc, round_trip_unfit_labs);
    tcase_add_test(tc, mac_without_thunderbolt_facts_is_left_out);
    tcase_add_test(tc, placement_setting);
    tcase_add_test(tc, rdma_subset_round_trip);
    tcase_add_test(tc, rdma_subset_from_topology);
    tcase_add_test(tc, equal_sees_differences);
    tcase_add_test(tc, record_store_settings_are_checked);
    tcase_add_test(tc, record_store_settings_are_kept_when_written);
    tcase_add_test(tc, default_path_is_beside_slurm_conf);
    tcase_add_test(tc, agents_by_address);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(conf_suite)
