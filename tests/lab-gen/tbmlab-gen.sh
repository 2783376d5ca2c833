#!/usr/bin/env bash
# tbmlab-gen.sh: checks that tbmlab-gen's plan, replayed macOS outputs and node lines agree with lab/lab.conf
# and with each other, that --cut shows on both ends, and that bad spec lines give file:line messages, exit 2.
set -u

GEN=${TBMLAB_GEN:?set TBMLAB_GEN to the tbmlab-gen program}
TBCHECK=${TBMLAB_TBCHECK:?set TBMLAB_TBCHECK to the tbcheck program}
CONF=${TBMLAB_CONF:?set TBMLAB_CONF to lab/lab.conf}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tbmlab-gen-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failures=0
checks=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_eq() {  # what expected actual
    checks=$((checks + 1))
    [ "$2" = "$3" ] || fail "$1: expected [$2], got [$3]"
}

# The lines of interface $2's block in ifconfig file $1.
if_block() { awk -v want="$2:" '/^[a-z0-9]+:/ { cur = $1 } cur == want' "$1"; }
# The tbcheck line of receptacle $2 in node $1's Thunderbolt JSON (under output dir $3).
tb_line() { "$TBCHECK" "$3/$1/replay/system_profiler_SPThunderboltDataType.json" | awk -F'\t' -v r="$2" '$1 == r'; }

# Checks one cable end: $1 out dir, $2 node, $3 iface, $4 addr/30, $5 hwaddr, $6 peer, $7 peer iface, $8 state.
check_end() {
    local out=$1 node=$2 ifc=$3 addr=${4%/30} hw=$5 peer=$6 pifc=$7 state=$8
    local c=${addr#169.254.}; c=${c%.*}
    local block; block=$(if_block "$out/$node/replay/ifconfig.txt" "$ifc")
    local rcpt=$(( ${ifc#en} - 1 )) prcpt=$(( ${pifc#en} - 1 ))
    local mine theirs peer_uuid
    mine=$(tb_line "$node" "$rcpt" "$out")
    theirs=$(tb_line "$peer" "$prcpt" "$out")
    peer_uuid=$(cut -f2 <<<"$theirs")
    expect_eq "$node $ifc ether" "1" "$(grep -c "^	ether $hw\$" <<<"$block")"
    expect_eq "$node $ifc in networksetup" "Device: $ifc" \
        "$(grep -A1 "^Hardware Port: Thunderbolt $rcpt\$" "$out/$node/replay/networksetup_listallhardwareports.txt" | tail -1)"
    if [ "$state" = state=up ]; then
        expect_eq "$node $ifc inet" "	inet $addr netmask 0xfffffffc broadcast 169.254.$c.3" "$(grep '	inet ' <<<"$block")"
        expect_eq "$node $ifc status" "	status: active" "$(grep 'status:' <<<"$block")"
        expect_eq "$node receptacle $rcpt status" "receptacle_connected" "$(cut -f3 <<<"$mine")"
        expect_eq "$node receptacle $rcpt peer UUID = $peer receptacle $prcpt UUID" "$peer_uuid" "$(cut -f4 <<<"$mine")"
    else
        expect_eq "$node $ifc inet (cut)" "" "$(grep '	inet ' <<<"$block")"
        expect_eq "$node $ifc status (cut)" "	status: inactive" "$(grep 'status:' <<<"$block")"
        expect_eq "$node receptacle $rcpt (cut)" "receptacle_no_devices_connected	-" "$(cut -f3,4 <<<"$mine")"
    fi
}

# Checks every cable of plan file $1 against output dir $2.
check_cables() {
    local node ifc addr hw peer pifc paddr phw state
    while IFS=$'\t' read -r _ node ifc addr hw peer pifc paddr phw state; do
        check_end "$2" "$node" "$ifc" "$addr" "$hw" "$peer" "$pifc" "$state"
        check_end "$2" "$peer" "$pifc" "$paddr" "$phw" "$node" "$ifc" "$state"
    done < <(grep '^cable' "$1")
}

# ---- the plan --------------------------------------------------------------------------------------------
"$GEN" plan "$CONF" >"$TMP/plan" || fail "plan exited $?"
expect_eq "node lines" 8 "$(grep -c '^node' "$TMP/plan")"
expect_eq "linux lines" 1 "$(grep -c '^linux' "$TMP/plan")"
expect_eq "cable lines (6 mesh + 4 ring)" 10 "$(grep -c '^cable' "$TMP/plan")"
expect_eq "mac01 node line" "node	mac01	group=studio-a	mode=bridge	mgmt=10.77.0.11	mac=02:7b:00:01:00:00	port=16831" \
    "$(grep -P '^node\tmac01\t' "$TMP/plan")"
expect_eq "mac05 node line" "node	mac05	group=mini-b	mode=direct	mgmt=10.77.0.15	mac=02:7b:00:05:00:00	port=16818" \
    "$(grep -P '^node\tmac05\t' "$TMP/plan")"
expect_eq "lnx01 line" "linux	lnx01	mgmt=10.77.0.21	port=16818" "$(grep '^linux' "$TMP/plan")"
expect_eq "first cable" "cable	mac01	en2	169.254.1.1/30	02:7b:00:01:00:02	mac02	en2	169.254.1.2/30	02:7b:00:02:00:02	state=up" \
    "$(grep '^cable' "$TMP/plan" | head -1)"
expect_eq "ring closing cable" "cable	mac08	en3	169.254.10.1/30	02:7b:00:08:00:03	mac05	en3	169.254.10.2/30	02:7b:00:05:00:03	state=up" \
    "$(grep '^cable' "$TMP/plan" | tail -1)"
expect_eq "hardware addresses distinct" "" "$(grep -oE '02:7b(:[0-9a-f]{2}){4}' "$TMP/plan" | sort | uniq -d)"
expect_eq "plan is stable" "$(cat "$TMP/plan")" "$("$GEN" plan "$CONF")"

# ---- the outputs -----------------------------------------------------------------------------------------
"$GEN" outputs "$CONF" "$TMP/out" || fail "outputs exited $?"
expect_eq "replay files of mac01" "hostname.txt ibv_devices.txt ifconfig.txt ioreg.txt networksetup_listallhardwareports.txt \
powermetrics.plist rdma_ctl_status.txt sw_vers.txt sysctl.txt sysctl_perflevels.txt system_profiler_SPThunderboltDataType.json" \
    "$(cd "$TMP/out/mac01/replay" && echo *)"
expect_eq "nodes written" "mac01 mac02 mac03 mac04 mac05 mac06 mac07 mac08" "$(cd "$TMP/out" && echo *)"
check_cables "$TMP/plan" "$TMP/out"
for n in mac01 mac05; do
    "$TBCHECK" "$TMP/out/$n/replay/system_profiler_SPThunderboltDataType.json" >/dev/null || fail "$n JSON does not parse"
done
expect_eq "mac01 receptacles (listed last-first)" "6 5 4 3 2 1" \
    "$("$TBCHECK" "$TMP/out/mac01/replay/system_profiler_SPThunderboltDataType.json" | cut -f1 | tr '\n' ' ' | sed 's/ $//')"
expect_eq "mac05 receptacles" "1 2 3" \
    "$("$TBCHECK" "$TMP/out/mac05/replay/system_profiler_SPThunderboltDataType.json" | cut -f1 | tr '\n' ' ' | sed 's/ $//')"
expect_eq "mac01 empty receptacle 5" "5	receptacle_no_devices_connected	-	-	Up to 120 Gb/s" "$(tb_line mac01 5 "$TMP/out" | cut -f1,3-)"
expect_eq "mac01 receptacle 1 peer and speed" "Mac15,14	80 Gb/s" "$(tb_line mac01 1 "$TMP/out" | cut -f5,6)"
expect_eq "mac05 receptacle 1 peer and speed" "Mac mini	Up to 40 Gb/s" "$(tb_line mac05 1 "$TMP/out" | cut -f5,6)"
expect_eq "mac05 empty receptacle 3" "receptacle_no_devices_connected	-	Up to 40 Gb/s" "$(tb_line mac05 3 "$TMP/out" | cut -f3,4,6)"
expect_eq "domain UUIDs distinct (8 Macs: 4x6 + 4x3 ports)" "36" \
    "$(for n in "$TMP"/out/*/replay/system_profiler_SPThunderboltDataType.json; do "$TBCHECK" "$n"; done | cut -f2 | sort -u | wc -l)"
expect_eq "mac01 en5 empty" "	status: inactive" "$(if_block "$TMP/out/mac01/replay/ifconfig.txt" en5 | grep -E 'inet|status')"
expect_eq "mac01 en0" "	inet 10.77.0.11 netmask 0xffffff00 broadcast 10.77.0.255" \
    "$(if_block "$TMP/out/mac01/replay/ifconfig.txt" en0 | grep '	inet ')"
expect_eq "mac01 bridge0 not up" "bridge0: flags=8822<BROADCAST,SMART,SIMPLEX,MULTICAST> mtu 1500" \
    "$(grep '^bridge0:' "$TMP/out/mac01/replay/ifconfig.txt")"
expect_eq "mac01 interfaces" "lo0 en0 en1 en2 en3 en4 en5 en6 en7 bridge0" \
    "$(grep -oE '^[a-z0-9]+:' "$TMP/out/mac01/replay/ifconfig.txt" | tr -d : | tr '\n' ' ' | sed 's/ $//')"
expect_eq "mac01 hardware ports" "Ethernet/en0 Thunderbolt 1/en2 Thunderbolt 2/en3 Thunderbolt 3/en4 Thunderbolt 4/en5 \
Thunderbolt 5/en6 Thunderbolt 6/en7 Thunderbolt Bridge/bridge0 Wi-Fi/en1" \
    "$(awk -F': ' '/^Hardware Port/ { p = $2 } /^Device/ { printf "%s%s/%s", sep, p, $2; sep = " " }' \
        "$TMP/out/mac01/replay/networksetup_listallhardwareports.txt")"
expect_eq "mac01 VLAN trailer" "VLAN Configurations
===================" "$(tail -2 "$TMP/out/mac01/replay/networksetup_listallhardwareports.txt")"
expect_eq "mac01 ibv_devices (one per port)" "rdma_en2 rdma_en3 rdma_en4 rdma_en5 rdma_en6 rdma_en7" \
    "$(tail -n +3 "$TMP/out/mac01/replay/ibv_devices.txt" | awk '{ print $1 }' | tr '\n' ' ' | sed 's/ $//')"
expect_eq "mac05 ibv_devices (TB4: none)" "2" "$(wc -l <"$TMP/out/mac05/replay/ibv_devices.txt")"
expect_eq "mac01 rdma_ctl" "enabled" "$(cat "$TMP/out/mac01/replay/rdma_ctl_status.txt")"
expect_eq "mac05 rdma_ctl (TB4 quirk)" "enabled" "$(cat "$TMP/out/mac05/replay/rdma_ctl_status.txt")"
expect_eq "mac01 sysctl" "274877906944
Apple M3 Ultra
Mac15,14" "$(cat "$TMP/out/mac01/replay/sysctl.txt")"
expect_eq "mac05 sysctl" "34359738368
Apple M4
Mac16,10" "$(cat "$TMP/out/mac05/replay/sysctl.txt")"
expect_eq "mac01 perflevels" "hw.perflevel0.physicalcpu: 24
hw.perflevel1.physicalcpu: 8" "$(cat "$TMP/out/mac01/replay/sysctl_perflevels.txt")"
expect_eq "mac06 sw_vers" "ProductName:		macOS
ProductVersion:		26.2
BuildVersion:		25C56" "$(cat "$TMP/out/mac06/replay/sw_vers.txt")"
expect_eq "mac07 hostname" "mac07" "$(cat "$TMP/out/mac07/replay/hostname.txt")"

# ---- a pulled cable shows on both ends -------------------------------------------------------------------
"$GEN" plan "$CONF" --cut mac02:en2 --cut=mac07:en3 >"$TMP/plan-cut" || fail "plan --cut exited $?"
expect_eq "cut cables" "mac01 en2 mac02 en2
mac07 en3 mac08 en2" "$(awk -F'\t' '$10 == "state=cut" { print $2, $3, $6, $7 }' "$TMP/plan-cut")"
expect_eq "other cables up" 8 "$(grep -c 'state=up$' "$TMP/plan-cut")"
"$GEN" outputs "$CONF" "$TMP/cut" --cut mac02:en2 --cut=mac07:en3 || fail "outputs --cut exited $?"
check_cables "$TMP/plan-cut" "$TMP/cut"
expect_eq "mac01 ibv_devices after cut (devices stay)" "rdma_en2 rdma_en3 rdma_en4 rdma_en5 rdma_en6 rdma_en7" \
    "$(tail -n +3 "$TMP/cut/mac01/replay/ibv_devices.txt" | awk '{ print $1 }' | tr '\n' ' ' | sed 's/ $//')"

# ---- slurm node lines ------------------------------------------------------------------------------------
"$GEN" slurm-nodes "$CONF" >"$TMP/nodes" || fail "slurm-nodes exited $?"
expect_eq "slurm mac01" "NodeName=mac01 NodeAddr=10.77.0.1 Port=16831 CPUs=32 RealMemory=253952 Gres=tbmesh:1 \
Features=tbmesh,tbmesh_studio_a,rdma,macos_26_2 State=UNKNOWN" "$(grep '^NodeName=mac01 ' "$TMP/nodes")"
expect_eq "slurm mac05" "NodeName=mac05 NodeAddr=10.77.0.15 Port=16818 CPUs=10 RealMemory=31744 Gres=tbmesh:1 \
Features=tbmesh,tbmesh_mini_b,macos_26_2 State=UNKNOWN" "$(grep '^NodeName=mac05 ' "$TMP/nodes")"
expect_eq "slurm lnx01" "NodeName=lnx01 NodeAddr=10.77.0.21 Port=16818 CPUs=2 RealMemory=2048 Features=linux State=UNKNOWN" \
    "$(grep '^NodeName=lnx01 ' "$TMP/nodes")"
expect_eq "slurm partitions" "PartitionName=mac Nodes=mac01,mac02,mac03,mac04,mac05,mac06,mac07,mac08 Default=NO MaxTime=INFINITE State=UP
PartitionName=linux Nodes=lnx01 Default=YES MaxTime=INFINITE State=UP" "$(grep '^PartitionName' "$TMP/nodes")"

# RealMemory is the one of lib/slurmconf (tbm_slurm_real_memory_mib), as tbmesh inventory writes it from the Macs'
# probes of the generated outputs: the two node lines agree. Probing needs each Mac's host name (a UTS
# namespace: root); tbmesh is built with the Slurm side only.
MACNODE=$(dirname "$GEN")/../macnode/macnode TBMESH=$(dirname "$GEN")/../gres/tbmesh
HINT_CONF=$(dirname "$CONF")/../etc/tbmesh.conf.example
if [ "$(id -u)" = 0 ] && [ -x "$TBMESH" ] && [ -x "$MACNODE" ] && [ -r "$HINT_CONF" ]; then
    mkdir -p "$TMP/inv"
    "$GEN" outputs "$CONF" "$TMP/agree" || fail "outputs for the inventory exited $?"
    for n in $(ls "$TMP/agree"); do
        unshare -u sh -c 'hostname "$1" && exec "$2" probe --replay "$3"' sh "$n" "$MACNODE" "$TMP/agree/$n/replay" \
            > "$TMP/inv/$n.json" 2>/dev/null
    done
    "$TBMESH" inventory --hint "$HINT_CONF" --out "$TMP/inv" "$TMP"/inv/*.json > /dev/null 2>&1 || fail "tbmesh inventory exited $?"
    for n in mac01 mac05; do
        expect_eq "$n: RealMemory as tbmesh inventory writes it" \
            "$(grep "^NodeName=$n " "$TMP/inv/slurm-nodes.conf" | grep -o 'RealMemory=[0-9]*')" \
            "$(grep "^NodeName=$n " "$TMP/nodes" | grep -o 'RealMemory=[0-9]*')"
    done
else
    echo "note: RealMemory against tbmesh inventory not compared (needs root and the Slurm side's tbmesh)"
fi

# ---- errors: exit 2 and a message naming the place, the problem and the fix -----------------------------
# Runs the generator on a spec of line 1 (a valid group: $FIRST or G1), a comment, then line $2; expects exit 2
# and message $3.
G1='Group=g1 Mode=bridge Wiring=mesh Nodes=mac01,mac02 ModelName="Mac Studio" ModelId=Mac15,14 Chip="Apple M3 Ultra" MemoryGiB=256 PCores=24 ECores=8 OS=26.2 Build=25C56 LinkGbps=80 Rdma=yes'
G2='Group=g2 Mode=direct Wiring=ring Nodes=mac05,mac06,mac07 ModelName="Mac mini" ModelId=Mac16,10 Chip="Apple M4" MemoryGiB=32 PCores=4 ECores=6 OS=26.2 Build=25C56 LinkGbps=40 Rdma=no'
expect_spec_error() {
    local what=$1 line=$2 msg=$3 err rc
    printf '%s\n# a comment\n%s\n' "${FIRST:-$G1}" "$line" >"$TMP/bad.conf"
    err=$("$GEN" plan "$TMP/bad.conf" 2>&1 >/dev/null); rc=$?
    expect_eq "$what: exit" 2 "$rc"
    expect_eq "$what: message" "$TMP/bad.conf:3: $msg" "$err"
}
expect_spec_error "unknown key" "${G2/Rdma=no/Rdma=no Colour=red}" \
    "unknown key 'Colour' on a Group line; keys are Group Mode Wiring Nodes ModelName ModelId Chip MemoryGiB PCores ECores OS Build LinkGbps Rdma [Ports] [Bridge]"
expect_spec_error "missing key" "${G2/ Chip=\"Apple M4\"/}" "Group line without Chip=; add it"
expect_spec_error "duplicate key" "${G2/OS=26.2/OS=26.2 OS=26.3}" "OS is given twice; keep one"
expect_spec_error "bad mode" "${G2/Mode=direct/Mode=remote}" "Mode=remote is not valid; use Mode=bridge or Mode=direct"
expect_spec_error "bad wiring" "${G2/Wiring=ring/Wiring=star}" "Wiring=star is not valid; use Wiring=ring or Wiring=mesh"
expect_spec_error "bad rdma" "${G2/Rdma=no/Rdma=maybe}" "Rdma=maybe is not valid; use Rdma=yes or Rdma=no"
expect_spec_error "bad memory" "${G2/MemoryGiB=32/MemoryGiB=32G}" "MemoryGiB=32G is not a number from 8 to 4096; fix the value"
expect_spec_error "huge number" "${G2/PCores=4/PCores=99999999999999999999}" \
    "PCores=99999999999999999999 is not a number from 1 to 256; fix the value"
expect_spec_error "bad link" "${G2/LinkGbps=40/LinkGbps=60}" \
    "LinkGbps=60 is not valid; use 40 (Thunderbolt 4) or 80 (Thunderbolt 5)"
expect_spec_error "unterminated quote" "${G2/\"Apple M4\"/\"Apple M4}" "Chip has an unterminated quote; close it with '\"'"
expect_spec_error "not key=value" "${G2/Rdma=no/Rdma=no junk}" \
    "expected Key=Value at \"junk\"; write Key=Value pairs separated by spaces"
expect_spec_error "unknown line" "Switch=sw1" "line starts with Switch=; a line starts with Group= or Linux="
expect_spec_error "node twice" "${G2/mac05,/mac01,}" "node mac01 is listed twice; a node belongs to one group only"
expect_spec_error "empty node name" "${G2/mac05,/mac05,,}" "Nodes has an empty name; separate names by single commas"
expect_spec_error "bad node name" "${G2/mac05,/Mac05,}" "node name 'Mac05' must start with a lower-case letter; rename it"
expect_spec_error "unnumbered node" "${G2/mac05,/macfive,}" "node name 'macfive' must end in its number (mac01); rename it"
expect_spec_error "group twice" "${G2/Group=g2/Group=g1}" "group g1 is defined twice; give each group its own name"
expect_spec_error "short ring" "${G2/mac05,mac06,mac07/mac05,mac06}" \
    "Wiring=ring needs at least 3 nodes, this group has 2; add nodes or use Wiring=mesh"
expect_spec_error "too few ports" "${G2/Rdma=no/Rdma=no Ports=1}" \
    "mac06 runs out of Thunderbolt ports (it has 1); use Wiring=ring, fewer nodes or a larger Ports="
expect_spec_error "unknown model" "${G2/Mac16,10/Mac99,1}" \
    "ModelId=Mac99,1 is not a model this tool knows; add Ports=N (its Thunderbolt receptacles)"
expect_spec_error "mgmt clash" "${G2/mac05,/mac1,}" \
    "node mac1 would get mgmt address 10.77.0.11, already taken; renumber it"
# A Linux node takes the first free management address from 10.77.0.21 (here mac11 holds .21).
printf '%s\nLinux=lnx01\n' "${G1/mac02/mac11}" >"$TMP/lnx.conf"
expect_eq "a Linux node after the Macs' addresses" "linux	lnx01	mgmt=10.77.0.22	port=16818" \
    "$("$GEN" plan "$TMP/lnx.conf" | grep '^linux')"
expect_spec_error "mgmt of a bridge host" "${G2/mac05,/mac191,}" \
    "node mac191 would get mgmt address 10.77.0.201, already taken; renumber it"
expect_spec_error "linux extra key" "Linux=lnx01 Port=1" \
    "unexpected Port= on a Linux line; a Linux line holds only Linux=NAME[,NAME]"
expect_spec_error "quote glued" "${G2/\"Mac mini\"/\"Mac mini\"x}" \
    "ModelName: text right after the closing quote; put a space after it"
expect_spec_error "empty value" "${G2/Chip=\"Apple M4\"/Chip=\"\"}" "Chip is empty; give it a value"
expect_spec_error "value too long" "${G2/Chip=\"Apple M4\"/Chip=$(printf 'x%.0s' {1..64})}" \
    "Chip is longer than 63 characters; shorten it"
expect_spec_error "control character" "${G2/Chip=\"Apple M4\"/Chip=\"Apple$(printf '\001')M4\"}" \
    "Chip has a control character, quote or backslash; use plain text"
expect_spec_error "bad group name" "${G2/Group=g2/Group=g_2}" "Group=g_2 has the character '_'; use letters, digits and -"
expect_spec_error "bad build" "${G2/Build=25C56/Build=25C56.1}" "Build=25C56.1 has the character '.'; use letters, digits"
expect_spec_error "node name too long" "${G2/mac05,/mac$(printf '0%.0s' {1..30})5,}" \
    "node name 'mac0000000000000000000000000000005' must have 1 to 31 characters; rename it"
expect_spec_error "node name characters" "${G2/mac05,/mac_05,}" "node name 'mac_05' may hold only a-z, 0-9 and '-'; rename it"
expect_spec_error "node number too long" "${G2/mac05,/mac0005,}" \
    "node name 'mac0005' must end in its number (mac01); rename it"
expect_spec_error "node number zero" "${G2/mac05,/mac00,}" \
    "node mac00: its number must be 1 to 244 (mgmt 10.77.0.(10+N)); renumber it"
expect_spec_error "one-node mesh" "${G2/Wiring=ring Nodes=mac05,mac06,mac07/Wiring=mesh Nodes=mac05}" \
    "Wiring=mesh needs at least 2 nodes; add nodes"
expect_spec_error "too many pairs" "$G2 A=1 B=2 C=3 D=4" "more than 17 Key=Value pairs; put one group per line"
expect_spec_error "too many Macs" "${G2/mac05,mac06,mac07/$(echo mac{3..66} | tr ' ' ,)}" \
    "more than 64 Macs; make the lab smaller"
expect_spec_error "too many Linux nodes" "Linux=$(echo lnx{1..17} | tr ' ' ,)" \
    "more than 16 Linux nodes; make the lab smaller"
expect_spec_error "long line" "$(printf 'Linux=%05000d' 1)" "line longer than 4094 characters; split it"

# Bridge hosts besides the controller: Bridge=NAME on a bridge-mode group; its Macs' slurmds are reached at
# the bridge host's address, which the plan lists.
printf '%s\n%s\n%s\n' "${G1/Rdma=yes/Rdma=yes Bridge=brg1}" \
    "$(sed 's/Group=g1/Group=g3/; s/mac01,mac02/mac03,mac04/; s/Rdma=yes/Rdma=yes Bridge=brg2/' <<<"$G1")" \
    "$(sed 's/Group=g1/Group=g4/; s/mac01,mac02/mac09,mac10/' <<<"$G1")" >"$TMP/bridges.conf"
"$GEN" plan "$TMP/bridges.conf" >"$TMP/bridges.plan" || fail "plan of two bridge hosts exited $?"
expect_eq "bridge hosts in the plan" "bridgehost	brg1	mgmt=10.77.0.201	mac=02:7b:00:07:00:00
bridgehost	brg2	mgmt=10.77.0.202	mac=02:7b:00:08:00:00" "$(grep '^bridgehost' "$TMP/bridges.plan")"
expect_eq "each Mac names its bridge host" "mac01 bridge=brg1
mac02 bridge=brg1
mac03 bridge=brg2
mac04 bridge=brg2
mac09 
mac10 " "$(awk -F'\t' '$1 == "node" { print $2, $8 }' "$TMP/bridges.plan")"
expect_eq "slurmctld reaches each at its bridge host (the controller without Bridge=)" "mac01 10.77.0.201
mac03 10.77.0.202
mac09 10.77.0.1" "$("$GEN" slurm-nodes "$TMP/bridges.conf" | sed -n 's/^NodeName=\(mac0[139]\) NodeAddr=\([^ ]*\) .*/\1 \2/p')"
expect_eq "hint: a Group line per group, for tbmesh inventory" "Group=studio-a Nodes=mac01,mac02,mac03,mac04 Topology=mesh Mode=bridge Backends=mpi
Group=mini-b Nodes=mac05,mac06,mac07,mac08 Topology=ring Mode=direct Backends=mpi" "$("$GEN" hint "$CONF")"
expect_spec_error "Bridge= in direct mode" "${G2/Rdma=no/Rdma=no Bridge=brg1}" \
    "Bridge=brg1 on a Mode=direct group; a direct-mode Mac runs its own slurmd: drop Bridge= or use Mode=bridge"
expect_spec_error "bad bridge host name" "$(sed 's/Group=g1/Group=g3/; s/mac01,mac02/mac03,mac04/; s/Rdma=yes/Rdma=yes Bridge=b_1/' <<<"$G1")" \
    "Bridge=b_1 has the character '_'; use letters, digits and -"
printf '%s\n' "${G1/Rdma=yes/Rdma=yes Bridge=mac02}" >"$TMP/bridge-name.conf"
expect_eq "a bridge host named as a node" "$TMP/bridge-name.conf: Bridge=mac02 is also a node's name; name the bridge host apart" \
    "$("$GEN" plan "$TMP/bridge-name.conf" 2>&1 >/dev/null)"
{ for g in $(seq 1 9); do
    sed "s/Group=g1/Group=g$g/; s/mac01,mac02/mac$((2 * g + 10)),mac$((2 * g + 11))/; s/Rdma=yes/Rdma=yes Bridge=b$g/" <<<"$G1"
  done; } >"$TMP/many-bridges.conf"
expect_eq "too many bridge hosts" "$TMP/many-bridges.conf:9: more than 8 bridge hosts; let groups share them" \
    "$("$GEN" plan "$TMP/many-bridges.conf" 2>&1 >/dev/null)"

# The lab at size (tbmesh-lab spec --macs N --bridges B, what `up --macs` brings up): every size from 2 to 64
# is a plan of N Macs, no group of 1, no mesh of more than 8.
LABCMD=$(dirname "$CONF")/tbmesh-lab
bad_sizes=""
for m in $(seq 2 64); do
    "$LABCMD" spec --macs "$m" --bridges 2 > "$TMP/sized.conf" 2> "$TMP/sized.err" &&
        "$GEN" plan "$TMP/sized.conf" > "$TMP/sized.plan" 2>> "$TMP/sized.err" || { bad_sizes+=" $m"; continue; }
    [ "$(grep -c '^node' "$TMP/sized.plan")" = "$m" ] || bad_sizes+=" $m(count)"
    awk '$1 ~ /^Group=/ { n = split($0, a, "Nodes="); split(a[2], b, " "); c = split(b[1], x, ",")
                          if (c < 2 || ($0 ~ /Wiring=mesh/ && c > 8)) exit 1 }' "$TMP/sized.conf" || bad_sizes+=" $m(group)"
done
expect_eq "tbmesh-lab spec --macs 2..64: each a plan of that many Macs in groups of 2 to 8 (mesh)" "" "$bad_sizes"
expect_eq "... 64 Macs: 12 groups behind 2 bridge hosts" "12 2" \
    "$("$LABCMD" spec --macs 64 --bridges 2 > "$TMP/s64.conf" && grep -c '^Group=' "$TMP/s64.conf") $("$GEN" plan "$TMP/s64.conf" | grep -c '^bridgehost')"
out=$("$LABCMD" spec --macs 65 2>&1); rc=$?
expect_eq "spec --macs 65 is refused, saying what to give" "1 tbmesh-lab: --macs 65: give a number of Macs from 2 to 64" "$rc $out"

# Too many groups: the 17th group line is refused.
{ for g in $(seq 1 17); do
    echo "${G2/mac05,mac06,mac07/mac$((3 * g)),mac$((3 * g + 1)),mac$((3 * g + 2))}" | sed "s/Group=g2/Group=g$g/"
  done; } >"$TMP/groups.conf"
err=$("$GEN" plan "$TMP/groups.conf" 2>&1 >/dev/null); rc=$?
expect_eq "too many groups: exit" 2 "$rc"
expect_eq "too many groups: message" "$TMP/groups.conf:17: more than 16 groups; make the lab smaller" "$err"
printf '# only Linux\nLinux=lnx01\n' >"$TMP/nogroup.conf"
expect_eq "no group" "$TMP/nogroup.conf: no Group= line; describe at least one group of Macs" \
    "$("$GEN" plan "$TMP/nogroup.conf" 2>&1 >/dev/null)"

# Arguments.
expect_arg_error() {
    local what=$1 msg=$2 err rc; shift 2
    err=$("$GEN" "$@" 2>&1 >/dev/null); rc=$?
    expect_eq "$what: exit" 2 "$rc"
    expect_eq "$what: message" "$msg" "$err"
}
expect_arg_error "cut of an empty port" \
    "tbmlab-gen: --cut mac01:en7: mac01 has no cable in en7; name a cabled end (see \`tbmlab-gen plan\`)" plan "$CONF" --cut mac01:en7
expect_arg_error "cut of an unknown node" \
    "tbmlab-gen: --cut mac99:en2: no Mac named mac99 in the spec; name a Mac of lab.conf" plan "$CONF" --cut mac99:en2
expect_arg_error "cut malformed" \
    "tbmlab-gen: --cut mac01: expected NODE:enN (e.g. mac01:en2); fix the argument" plan "$CONF" --cut mac01
expect_arg_error "unknown command" \
    "tbmlab-gen: unknown command 'draw' (plan, outputs, slurm-nodes, hint); see tbmlab-gen --help" draw "$CONF"
expect_arg_error "missing spec" \
    "$TMP/none.conf: cannot open: No such file or directory; give the path of the lab spec" plan "$TMP/none.conf"
# Output that cannot be written: exit 1 and a message; a planted symlink is not followed.
err=$("$GEN" outputs "$CONF" "$TMP/missing/out" 2>&1); rc=$?
expect_eq "outputs into a missing parent: exit" 1 "$rc"
expect_eq "outputs into a missing parent: message" \
    "tbmlab-gen: cannot create $TMP/missing/out: No such file or directory; check the output directory" "$err"
ln -sf "$TMP/victim" "$TMP/out/mac03/replay/hostname.txt"
err=$("$GEN" outputs "$CONF" "$TMP/out" 2>&1); rc=$?
expect_eq "symlinked replay file: exit" 1 "$rc"
expect_eq "symlinked replay file: message" "tbmlab-gen: cannot write $TMP/out/mac03/replay/hostname.txt: Too many \
levels of symbolic links; check the output directory" "$err"
expect_eq "symlink target untouched" "no" "$([ -e "$TMP/victim" ] && echo yes || echo no)"
expect_arg_error "outputs without a directory" \
    "tbmlab-gen: outputs needs a directory; see tbmlab-gen --help" outputs "$CONF"
expect_arg_error "slurm-nodes with a cut" \
    "tbmlab-gen: unexpected argument '--cut'; see tbmlab-gen --help" slurm-nodes "$CONF" --cut mac01:en2
expect_arg_error "stray argument" "tbmlab-gen: unexpected argument 'extra'; see tbmlab-gen --help" plan "$CONF" extra
expect_arg_error "no arguments" "tbmlab-gen: missing command or lab spec; see tbmlab-gen --help"
expect_arg_error "output path too long" "tbmlab-gen: output directory path is longer than 3000 characters; use a shorter one; see tbmlab-gen --help" \
    outputs "$CONF" "/$(printf 'd%.0s' {1..3001})"
"$GEN" --help | grep -q '^  cable  MAC_A IFACE_A' || fail "--help does not document the cable record"

echo "tbmlab-gen: $checks checks, $failures failed"
[ "$failures" = 0 ]
