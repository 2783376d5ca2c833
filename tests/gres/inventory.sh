#!/bin/sh
# inventory.sh: `tbmesh inventory` on the captured facts of two Macs: the report, the files it writes, the
# exit status, --json, and a message for each bad use (no facts, a bad facts file, --out not a folder,
# --last and --hint together, a bad --hint file). Two Macs joined through a dock are no cable; a cable whose
# ends sit on different /30s is not written with its addresses, and `macnode netplan` numbers it afresh
# (on a tbmesh.conf that keeps such a pair, it names the pair and says to run --renumber); two cables on one
# subnet are named, and netplan refuses to keep both. A cable from a Mac to itself is the same error in the
# probe and the inventory. A Mac whose capture failed is said so, and one without Thunderbolt facts is in no
# group of what is written. One slow cable in a mesh of eight names the Macs that still run JACCL, and writes
# them as the group's RdmaSubset= (with their cables' RDMA devices and their Slurm feature).
tbmesh=${TBM_TBMESH:-../gres/tbmesh}
macnode=${TBM_MACNODE:-../macnode/macnode}
facts=${TBM_FIXTURES:-../fixtures}/facts
dir=$(mktemp -d)
fail=0
say() { echo "inventory: $*"; }
trap 'rm -rf "$dir"' EXIT

out=$("$tbmesh" inventory --out "$dir" "$facts/studio-a1.json" "$facts/mini-b1.json"); rc=$?
echo "$out" | grep -q '^tbmesh inventory: 2 Macs' || { say "report: $out"; fail=1; }
echo "$out" | grep -q '^verdict: ' || { say "no verdict: $out"; fail=1; }
case $rc in 0|1) ;; *) say "exit $rc for readable facts"; fail=1 ;; esac
for f in tbmesh.conf slurm-nodes.conf gres.conf cabling.dot; do
  [ -s "$dir/$f" ] || { say "$f not written"; fail=1; }
done
"$tbmesh" inventory --json "$facts/studio-a1.json" | grep -Eq '"macs": ?1,' || { say "--json: no macs"; fail=1; }

err=$("$tbmesh" inventory 2>&1); rc=$?
[ $rc = 2 ] && echo "$err" | grep -q 'no facts given; pass one `macnode probe` JSON file per Mac' ||
  { say "no facts: $rc $err"; fail=1; }
printf '{"tbmesh_facts": 1}' > "$dir/bad.json"
err=$("$tbmesh" inventory "$dir/bad.json" 2>&1); rc=$?
[ $rc = 3 ] && echo "$err" | grep -q "bad.json: .*(make it with \`macnode probe > FILE\` on that Mac)" ||
  { say "bad facts: $rc $err"; fail=1; }
err=$("$tbmesh" inventory --out "$dir/none" "$facts/studio-a1.json" 2>&1); rc=$?
[ $rc = 2 ] && echo "$err" | grep -q "none is not a folder; create it first" || { say "--out: $rc $err"; fail=1; }
err=$("$tbmesh" inventory --last "$dir/tbmesh.conf" --hint "$dir/tbmesh.conf" "$facts/studio-a1.json" 2>&1); rc=$?
[ $rc = 2 ] && echo "$err" | grep -q "give one of --last and --hint, once" || { say "--last --hint: $rc $err"; fail=1; }
printf 'Group=x Colour=red\n' > "$dir/bad.conf"
err=$("$tbmesh" inventory --hint "$dir/bad.conf" "$facts/studio-a1.json" 2>&1); rc=$?
[ $rc = 3 ] && echo "$err" | grep -q "bad.conf was not used: fix the lines above" &&
  echo "$err" | grep -q "bad.conf:1: " || { say "bad hint: $rc $err"; fail=1; }
# Two Macs that reach each other only through a Thunderbolt dock: no cable, a warning saying what to do.
out=$("$tbmesh" inventory "$facts/hub-a.json" "$facts/hub-b.json"); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q '^tbmesh inventory: 2 Macs, 0 cables, 2 groups' &&
  echo "$out" | grep -q '^warning cable-through-hub at hub-a:en2 <-> hub-b:en2: hub-a and hub-b are joined through the hub or dock "TS4", not by a direct cable; it is not counted as a cable of any group Fix: cable the two Macs directly' ||
  { say "hub: $rc $out"; fail=1; }

# The same two Macs, one naming the other as its direct peer while the other sees it behind the dock: the dock
# link, once; no one-sided cable, no group of two without a joined pair, and the verdict stays fit.
out=$("$tbmesh" inventory "$facts/dock-a.json" "$facts/hub-b.json"); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q '^tbmesh inventory: 2 Macs, 0 cables, 2 groups' &&
  [ "$(echo "$out" | grep -c 'cable-through-hub at')" = 1 ] &&
  ! echo "$out" | grep -Eq 'cable-one-sided|not-mesh-or-ring|reseat' ||
  { say "dock seen from one side: $rc $out"; fail=1; }

# A cable whose ends sit on different /30s: named, and tbmesh.conf does not keep the pair.
mkdir "$dir/addr"
out=$("$tbmesh" inventory --out "$dir/addr" "$facts/addr-a.json" "$facts/addr-b.json"); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q '^error   subnet-mismatch at addr-a:en2 <-> addr-b:en2' &&
  echo "$out" | grep -q "^warning addr-left-out at addr-a:en2 <-> addr-b:en2: tbmesh.conf leaves out this cable's addresses 169.254.0.5 and 169.254.0.10" ||
  { say "mismatched /30s: $rc $out"; fail=1; }
grep -qx 'Cable=addr-a:en2,addr-b:en2 Rdma=rdma_en2,rdma_en2 Speed=80' "$dir/addr/tbmesh.conf" ||
  { say "the mismatched pair was written: $(grep Cable= "$dir/addr/tbmesh.conf")"; fail=1; }
out=$("$macnode" netplan --conf "$dir/addr/tbmesh.conf" --all 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q '^#   addr-a:en2 169.254.0.5/30 <-> addr-b:en2 169.254.0.6/30$' ||
  { say "netplan after inventory: $rc $out"; fail=1; }
# The same pair kept in a tbmesh.conf written by hand: named, what to run, and no commands.
sed 's|^Cable=addr-a:en2,addr-b:en2|& Addr=169.254.0.5/30,169.254.0.10/30|' "$dir/addr/tbmesh.conf" > "$dir/broken.conf"
cmds=$("$macnode" netplan --conf "$dir/broken.conf" --all 2> "$dir/err"); rc=$?
[ $rc = 1 ] && [ -z "$cmds" ] &&
  grep -q '^macnode netplan: addr-a:en2 <-> addr-b:en2: tbmesh.conf gives the two ends 169.254.0.5 and 169.254.0.10, not on one /30 nor on one common network: the cable cannot carry traffic with them. Fix: run `macnode netplan --renumber`' "$dir/err" &&
  grep -q '^addr-a:en2 169.254.0.5/30 <-> addr-b:en2 169.254.0.10/30   (kept from tbmesh.conf, BROKEN: not one link; run `macnode netplan --renumber`)$' "$dir/err" ||
  { say "netplan on a broken pair: $rc $cmds $(cat "$dir/err")"; fail=1; }
out=$("$macnode" netplan --conf "$dir/broken.conf" --all --renumber 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q 'ifconfig en2 inet 169.254.0.6 netmask 255.255.255.252 up' ||
  { say "netplan --renumber: $rc $out"; fail=1; }
# Two cables of one pair on one /30: an error naming both and the subnet; tbmesh.conf keeps the first cable's
# addresses only, and netplan numbers the second afresh; a tbmesh.conf that keeps both is refused.
mkdir "$dir/clash"
out=$("$tbmesh" inventory --out "$dir/clash" "$facts/clash-a.json" "$facts/clash-b.json"); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q '^error   addr-collision at clash-a:en2 <-> clash-b:en2, clash-a:en3 <-> clash-b:en3: the cables clash-a:en2 <-> clash-b:en2 and clash-a:en3 <-> clash-b:en3 use one subnet 169.254.0.4/30: traffic for one leaves through the other Fix: run `macnode netplan --renumber`' &&
  echo "$out" | grep -q '^group group1: mesh of 2 (clash-a,clash-b), tb5, RDMA, bridge mode; backends: mpi$' &&
  echo "$out" | grep -q "^warning addr-left-out at clash-a:en3 <-> clash-b:en3: .*: they collide with those of clash-a:en2 <-> clash-b:en2" ||
  { say "colliding cables: $rc $out"; fail=1; }
grep -qx 'Cable=clash-a:en3,clash-b:en3 Rdma=rdma_en3,rdma_en3 Speed=80' "$dir/clash/tbmesh.conf" ||
  { say "the colliding pair was written: $(grep Cable= "$dir/clash/tbmesh.conf")"; fail=1; }
out=$("$macnode" netplan --conf "$dir/clash/tbmesh.conf" --all 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q '^#   clash-a:en3 169.254.0.9/30 <-> clash-b:en3 169.254.0.10/30$' ||
  { say "netplan after inventory (collision): $rc $out"; fail=1; }
sed 's|^Cable=clash-a:en3,clash-b:en3|& Addr=169.254.0.5/30,169.254.0.6/30|' "$dir/clash/tbmesh.conf" > "$dir/clash.conf"
cmds=$("$macnode" netplan --conf "$dir/clash.conf" --all 2> "$dir/err"); rc=$?
[ $rc = 1 ] && [ -z "$cmds" ] &&
  grep -q '^macnode netplan: clash-a:en2 <-> clash-b:en2, clash-a:en3 <-> clash-b:en3: tbmesh.conf gives the cable clash-a:en3 <-> clash-b:en3 the addresses 169.254.0.5 and 169.254.0.6, in 169.254.0.4/30, which the cable clash-a:en2 <-> clash-b:en2 uses too' "$dir/err" ||
  { say "netplan on colliding cables: $rc $cmds $(cat "$dir/err")"; fail=1; }
# Two Macs whose captures failed (k1: an empty ifconfig, k2: a truncated system_profiler JSON): what is
# unknown is said, with why and what to do, and nothing is concluded from it.
out=$("$tbmesh" inventory "$facts/capture-no-ifconfig.json" "$facts/capture-tb-truncated.json"); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q '^error   facts-unknown at k2: no Thunderbolt facts for k2 (probe failed: system_profiler SPThunderboltDataType: invalid JSON at line 75 column 32: the text ends inside the document (truncated?); capture the output again in full): nothing is concluded from them, and k2 is left out of every group Fix: probe it again' &&
  echo "$out" | grep -q '^error   facts-unknown at k1: no network facts for k1 (probe failed: ifconfig: the output is empty)' &&
  echo "$out" | grep -q '^info    cable-end-unknown at k1:en2 <-> ?: .*the Thunderbolt facts of k2 are unknown, so it may be there' &&
  echo "$out" | grep -q '^verdict: UNFIT (2 errors, 0 warnings)$' &&
  ! echo "$out" | grep -Eq 'cable-one-sided at|host-uncabled|ipv4-missing|iface-unknown|add the Mac at the other end' ||
  { say "failed captures: $rc $out"; fail=1; }
# What is written of them: k2, whose Thunderbolt facts are unknown, is in no group (a comment says why and what
# to do), not in the Slurm node lines nor gres.conf; k1 keeps its group; the file reads back.
mkdir "$dir/unknown"
out=$("$tbmesh" inventory --out "$dir/unknown" "$facts/capture-no-ifconfig.json" "$facts/capture-tb-truncated.json"); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q '^left out: k2, in no group (no Thunderbolt facts: probe it again)$' &&
  echo "$out" | grep -q '^tbmesh inventory: 2 Macs, 3 cables, 1 groups$' &&
  grep -qxF '# k2 is in no group: no Thunderbolt facts for k2 (probe failed: system_profiler SPThunderboltDataType: invalid JSON at line 75 column 32: the text ends inside the document (truncated?); capture the output again in full): probe it again (`macnode probe` on k2), then run tbmesh inventory again' "$dir/unknown/tbmesh.conf" &&
  grep -qx 'Group=group1 Nodes=k1 Topology=single Link=none Rdma=no Mode=bridge Backends=mpi' "$dir/unknown/tbmesh.conf" &&
  [ "$(grep -c '^Group=' "$dir/unknown/tbmesh.conf")" = 1 ] && ! grep -q '^[^#].*k2' "$dir/unknown/tbmesh.conf" &&
  ! grep -q 'k2' "$dir/unknown/slurm-nodes.conf" "$dir/unknown/gres.conf" &&
  "$tbmesh" inventory --json "$facts/capture-no-ifconfig.json" "$facts/capture-tb-truncated.json" |
    tr -d ' \n' | grep -q '"left_out":\["k2"\]' ||
  { say "a Mac without Thunderbolt facts written: $rc $out $(cat "$dir/unknown/tbmesh.conf")"; fail=1; }
"$tbmesh" inventory --hint "$dir/unknown/tbmesh.conf" "$facts/capture-no-ifconfig.json" > /dev/null 2> "$dir/err"
[ $? -le 1 ] && [ ! -s "$dir/err" ] || { say "the file written without k2 does not read back: $(cat "$dir/err")"; fail=1; }
# A cable from a Mac to itself (studio-a1's Thunderbolt 1 and 2 cabled to each other): the probe and the
# inventory say it alike, as an error naming the ports by interface, once.
cp -r "${TBM_FIXTURES:-../fixtures}/macos/studio-a1" "$dir/self"
sed -i -e 's/5E21A9C0-3B64-4D7F-8E12-90AB3C5D2F10/0B7C1E42-5D8A-4F13-9A6E-2C4D8F1B7E02/' \
  -e 's/9F44D1B3-7A20-4C8E-B51D-6E0F2A9C4B21/0B7C1E42-5D8A-4F13-9A6E-2C4D8F1B7E01/' \
  "$dir/self/system_profiler_SPThunderboltDataType.json"
self='cable-to-self at s1:en3 <-> s1:en2: a cable joins two ports of the same Mac (s1:en3 and s1:en2): it carries nothing between Macs'
"$macnode" probe --backend replay --replay "$dir/self" --hostname s1 > "$dir/self.json" 2> "$dir/err"; rc=$?
[ $rc = 1 ] && grep -qF "macnode probe: error: $self (move one end of the cable to another Mac" "$dir/err" &&
  [ "$(grep -c 'cable-to-self' "$dir/err")" = 1 ] || { say "probe of a cable to itself: $rc $(cat "$dir/err")"; fail=1; }
out=$("$tbmesh" inventory "$dir/self.json"); rc=$?
[ $rc = 1 ] && echo "$out" | grep -qF "error   $self Fix: move one end of the cable to another Mac" &&
  [ "$(echo "$out" | grep -c 'cable-to-self')" = 1 ] || { say "inventory of a cable to itself: $rc $out"; fail=1; }
# Eight Macs in a Thunderbolt 5 mesh, one of the 28 cables at 40 Gb/s: the group is written Rdma=no as before,
# and a warning names the cable, its speed and the speed wanted, the fix and the Macs that still run JACCL.
mkdir "$dir/slow8"
out=$("$tbmesh" inventory --out "$dir/slow8" "$facts"/slow8-mac0[1-8].json); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q '^tbmesh inventory: 8 Macs, 28 cables, 1 groups' &&
  echo "$out" | grep -qF 'warning rdma-subset at mac[01-08]: 1 cable keeps JACCL from the whole group: mac03:en8 <-> mac08:en4 at 40 Gb/s where RDMA wants above 40 Gb/s (Thunderbolt 5); mac[01-07] form an RDMA mesh without mac08 (jaccl); all of them form an RDMA ring (jaccl-ring, in the order mac01 mac02 mac03 mac04 mac05 mac06 mac07 mac08) Fix: replace the cable with Thunderbolt 5 cables' &&
  grep -q '^Group=group1 Nodes=mac\[01-08\] Topology=mesh Link=tb4 Rdma=no Mode=bridge Backends=ring,mpi RdmaSubset=mac\[01-07\]$' "$dir/slow8/tbmesh.conf" &&
  echo "$out" | grep -qxF '  RDMA subset: mac[01-07] (jaccl and jaccl-ring jobs may go there when tbmesh.conf says JacclOnSubsets=yes; it says no)' &&
  [ "$(grep -c '^Cable=.* Rdma=rdma_' "$dir/slow8/tbmesh.conf")" = 21 ] &&
  ! grep -q '^Cable=mac03:en8,mac08:en4 .*Rdma=' "$dir/slow8/tbmesh.conf" &&
  [ "$(grep -c 'Features=tbmesh,tbmesh_group1,tbmesh_rdma_group1,' "$dir/slow8/slurm-nodes.conf")" = 7 ] &&
  grep -q '^NodeName=mac08 .*Features=tbmesh,tbmesh_group1,macos' "$dir/slow8/slurm-nodes.conf" ||
  { say "one slow cable in eight: $rc $out $(cat "$dir/slow8/tbmesh.conf")"; fail=1; }
# The site allows JACCL on the subset (JacclOnSubsets=yes in the last tbmesh.conf): kept when written again.
sed -i 's/^SlurmdBasePort=6900$/&\nJacclOnSubsets=yes/' "$dir/slow8/tbmesh.conf"
mkdir "$dir/slow8b"
out=$("$tbmesh" inventory --last "$dir/slow8/tbmesh.conf" --out "$dir/slow8b" "$facts"/slow8-mac0[1-8].json)
grep -qx 'JacclOnSubsets=yes' "$dir/slow8b/tbmesh.conf" && echo "$out" | grep -q 'JacclOnSubsets=yes; it says yes)' &&
  grep -q 'RdmaSubset=mac\[01-07\]$' "$dir/slow8b/tbmesh.conf" ||
  { say "JacclOnSubsets kept: $out $(cat "$dir/slow8b/tbmesh.conf")"; fail=1; }
[ $fail = 0 ] && say "ok"
exit $fail
