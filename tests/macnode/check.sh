#!/bin/sh
# check.sh: macnode check's command line: bad options and files get a message and exit 2 or 3; a Mac that
# is not what tbmesh.conf says is drained through scontrol with the first error as the reason (a stand-in
# scontrol records the call); an unknown node is never drained; --verdict-dir leaves the verdict for tbmesh
# metrics, never in a folder others may write. The whole cycle (drain on a pulled cable,
# resume once mended) runs against real Slurm in tests/lab/0060-inventory.t.
macnode=${TBM_MACNODE:-../macnode/macnode}
fail=0
say() { echo "check: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset SLURMD_NODENAME TBMESH_CONF

cat > "$tmp/tbmesh.conf" <<CONF
Group=g Nodes=m[1-2] Topology=mesh Link=tb5 Rdma=no Mode=direct Backends=ring,mpi
Cable=m1:en2,m2:en2 Addr=169.254.1.1/30,169.254.1.2/30
CONF
# a stand-in scontrol: records updates; `show node` prints the state in $dir/state (default: idle)
cat > "$tmp/scontrol" <<'SC'
#!/bin/sh
dir=${0%/*}
if [ "$1" = show ]; then
  echo "NodeName=$3 Arch=arm64 CoresPerSocket=1 $(cat "$dir/state" 2>/dev/null || echo 'State=IDLE ThreadsPerCore=1')"
  exit 0
fi
echo "$*" >> "$dir/scontrol.calls"
SC
chmod 755 "$tmp/scontrol"

expect() {   # expect "what" EXIT "message" args...
  what=$1 want_rc=$2 want=$3; shift 3
  "$macnode" check "$@" > "$tmp/out" 2> "$tmp/err"; rc=$?
  [ "$rc" = "$want_rc" ] || { say "$what: exit $rc, want $want_rc: $(cat "$tmp/err")"; fail=1; return; }
  grep -q -- "$want" "$tmp/err" "$tmp/out" || { say "$what: no '$want' in: $(cat "$tmp/out" "$tmp/err")"; fail=1; }
}
expect "agent and backend" 2 "give one of them" --agent 127.0.0.1 --backend linux
expect "unknown backend" 2 "unknown backend 'beos'" --backend beos
expect "replay without dir" 2 "needs --replay DIR" --backend replay
expect "stray argument" 2 "unexpected argument" --conf "$tmp/tbmesh.conf" extra
expect "missing conf" 3 "give the lab's tbmesh.conf with --conf" --conf "$tmp/none.conf" --node m1
expect "unknown node" 1 "m9 is not a node of tbmesh.conf" --conf "$tmp/tbmesh.conf" --node m9 --backend linux \
  --drain --scontrol "$tmp/scontrol"
[ ! -e "$tmp/scontrol.calls" ] || { say "an unknown node was drained: $(cat "$tmp/scontrol.calls")"; fail=1; }
# --if-mac (HealthCheckProgram on every node): a Linux node passes quietly
out=$("$macnode" check --if-mac --conf "$tmp/tbmesh.conf" --node lnx01 --backend linux --drain --scontrol "$tmp/scontrol" 2>&1)
rc=$?
[ "$rc" = 0 ] && [ -z "$out" ] && [ ! -e "$tmp/scontrol.calls" ] || { say "--if-mac on lnx01: exit $rc: $out"; fail=1; }
# this Linux host as m1: no Thunderbolt port is bound to en2, so it is drained with that reason
expect "a Mac without its cable" 1 "port-missing at m1:en2 <-> m2:en2" --conf "$tmp/tbmesh.conf" --node m1 \
  --backend linux --drain --scontrol "$tmp/scontrol"
grep -q '^update NodeName=m1 State=DRAIN Reason=tbmesh: port-missing at m1:en2 <-> m2:en2: no Thunderbolt port is bound to en2' \
  "$tmp/scontrol.calls" 2>/dev/null || { say "drain: $(cat "$tmp/scontrol.calls" 2>/dev/null)"; fail=1; }
grep -q '^m1: drained$' "$tmp/out" || { say "no 'drained': $(cat "$tmp/out")"; fail=1; }
# a Mac an admin drained for another reason is left alone (its reason kept, never resumed by us)
rm -f "$tmp/scontrol.calls"
echo 'State=IDLE+DRAIN ThreadsPerCore=1 Reason=swap the PSU [root@2026-11-30T08:00:00]' > "$tmp/state"
expect "drained by an admin" 1 "left as it is (drained for another reason)" --conf "$tmp/tbmesh.conf" --node m1 \
  --backend linux --drain --scontrol "$tmp/scontrol"
[ ! -e "$tmp/scontrol.calls" ] || { say "an admin's drain was replaced: $(cat "$tmp/scontrol.calls")"; fail=1; }
rm -f "$tmp/state"
# no agent at the address: no facts, exit 3, drained with that reason
rm -f "$tmp/scontrol.calls"
expect "agent unreachable" 3 "no facts" --conf "$tmp/tbmesh.conf" --node m1 --agent 127.0.0.1:1 --drain \
  --scontrol "$tmp/scontrol"
grep -Eq 'State=DRAIN Reason=tbmesh: no facts: (agent 127\.0\.0\.1:1: munge|cannot reach the agent at 127\.0\.0\.1:1: )' \
  "$tmp/scontrol.calls" 2>/dev/null ||
  { say "no-facts drain: $(cat "$tmp/scontrol.calls" 2>/dev/null)"; fail=1; }
# macnode probe --agent is the same client: one source of facts at a time
"$macnode" probe --agent 127.0.0.1:1 --backend linux > /dev/null 2> "$tmp/err" && { say "probe --agent --backend accepted"; fail=1; }
grep -q -- "--agent asks a Mac's agent, --backend and --replay probe here: give one" "$tmp/err" ||
  { say "probe --agent --backend: $(cat "$tmp/err")"; fail=1; }
# --verdict-dir: the verdict left for tbmesh metrics in DIR/NODE.json (the folders made, the check unchanged)
vd=$tmp/run/tbmesh/health
expect "verdict left" 1 "port-missing at m1:en2" --conf "$tmp/tbmesh.conf" --node m1 --backend linux --verdict-dir "$vd"
grep -q '^{"node":"m1","verdict":"unwell","reason":"tbmesh: port-missing at m1:en2 <-> m2:en2: no Thunderbolt port is bound to en2 (and 1 more)","time":[0-9]*}$' \
  "$vd/m1.json" 2>/dev/null || { say "verdict file: $(cat "$vd/m1.json" 2>&1)"; fail=1; }
[ "$(stat -c %a "$vd/m1.json" 2>/dev/null) $(stat -c %a "$vd" 2>/dev/null)" = "644 755" ] ||
  { say "verdict file and folder modes: $(stat -c '%a %n' "$vd/m1.json" "$vd" 2>&1)"; fail=1; }
expect "verdict: no facts" 3 "no facts" --conf "$tmp/tbmesh.conf" --node m1 --agent 127.0.0.1:1 --verdict-dir "$vd"
grep -q '"verdict":"unknown","reason":"tbmesh: no facts: ' "$vd/m1.json" || { say "no-facts verdict: $(cat "$vd/m1.json")"; fail=1; }
expect "verdict: unknown node" 1 "m9 is not a node" --conf "$tmp/tbmesh.conf" --node m9 --backend linux --verdict-dir "$vd"
[ ! -e "$vd/m9.json" ] || { say "a verdict on a node not in tbmesh.conf was left"; fail=1; }
chmod 777 "$vd"
expect "verdict: folder writable by others" 1 "the verdict was not left for tbmesh metrics: .*writable by others" \
  --conf "$tmp/tbmesh.conf" --node m1 --backend linux --verdict-dir "$vd"
grep -q '"verdict":"unknown"' "$vd/m1.json" || { say "the verdict was written into a folder others may write"; fail=1; }
[ $fail = 0 ] && say "ok"
exit $fail
