#!/usr/bin/env bash
# tbm-mlxcheck.sh: the tbm-mlxcheck command as the lab runs it inside each rank: a good ring and JACCL
# environment pass, a broken one fails with the rule's code (exit 1), --dump then --job checks the ranks together,
# --local reads this host's own addresses, and bad usage exits 2.
set -u

CHECK=${TBM_MLXCHECK:?set TBM_MLXCHECK to the tbm-mlxcheck program}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tbm-mlxcheck-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failures=0
checks=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# expect NAME EXIT-CODE PATTERN -- command...: the command exits EXIT-CODE and its output matches PATTERN.
expect() {
    local name=$1 want=$2 pattern=$3 out rc
    shift 4
    checks=$((checks + 1))
    out=$("$@" 2>&1); rc=$?
    [ "$rc" = "$want" ] || { fail "$name: exit $rc, expected $want: $out"; return; }
    grep -q -- "$pattern" <<<"$out" || fail "$name: output lacks [$pattern]: $out"
}

# Runs tbm-mlxcheck with only the given variables in its environment.
run() { env -i PATH="$PATH" "$@"; }

printf '[\n  ["10.0.0.1:32323"],\n  ["10.0.0.2:32324"]\n]\n' >"$TMP/ring.json"
printf '[\n  [null, "rdma_en2"],\n  ["rdma_en2", null]\n]\n' >"$TMP/dev.json"
ring0=(TBMESH_BACKEND=ring TBMESH_RANK=0 TBMESH_SIZE=2 MLX_RANK=0 MLX_HOSTFILE="$TMP/ring.json")
ring1=(TBMESH_BACKEND=ring TBMESH_RANK=1 TBMESH_SIZE=2 MLX_RANK=1 MLX_HOSTFILE="$TMP/ring.json")
jaccl0=(TBMESH_BACKEND=jaccl TBMESH_RANK=0 TBMESH_SIZE=2 MLX_RANK=0 MLX_IBV_DEVICES="$TMP/dev.json"
        MLX_JACCL_COORDINATOR=0.0.0.0:32323 JACCL_RANK=0 JACCL_IBV_DEVICES="$TMP/dev.json"
        JACCL_COORDINATOR=0.0.0.0:32323)

expect "ring rank 0" 0 "rank 0 of 2: backend ring: ok" -- run "${ring0[@]}" "$CHECK" --addrs 10.0.0.1/30
expect "jaccl rank 0" 0 "rank 0 of 2: backend jaccl: ok" -- run "${jaccl0[@]}" "$CHECK"
expect "one Mac" 0 "rank 0 of 1: backend none: ok" -- run TBMESH_BACKEND=none TBMESH_RANK=0 TBMESH_SIZE=1 "$CHECK"
expect "ring wins" 1 "rank 0: ring-wins: MLX_HOSTFILE is set beside JACCL" -- \
    run "${jaccl0[@]}" MLX_HOSTFILE="$TMP/ring.json" "$CHECK"
expect "not local" 1 "hostfile-not-local" -- run "${ring0[@]}" "$CHECK" --addrs 10.0.0.5/30
expect "missing file" 1 "file-missing" -- run "${ring0[@]/$TMP\/ring.json/$TMP/nope.json}" "$CHECK"
expect "local addresses" 1 "hostfile-not-local" -- run "${ring0[@]}" "$CHECK" --local
printf '[\n  ["127.0.0.1:32323"],\n  ["127.0.0.2:32324"]\n]\n' >"$TMP/lo.json"
expect "loopback is local" 0 "ok" -- run "${ring0[@]/ring.json/lo.json}" "$CHECK" --local

# Each rank dumps what it saw; the job is then checked as a whole.
expect "dump rank 0" 0 "ok" -- run "${ring0[@]}" "$CHECK" --addrs 10.0.0.1/30 --dump "$TMP/r0.json"
expect "dump rank 1" 0 "ok" -- run "${ring1[@]}" "$CHECK" --addrs 10.0.0.2/30 --dump "$TMP/r1.json"
expect "job" 0 "job of 2 ranks: ok" -- "$CHECK" --job "$TMP/r0.json" "$TMP/r1.json"
expect "job with a rank twice" 1 "rank-duplicate" -- "$CHECK" --job "$TMP/r0.json" "$TMP/r0.json"
run "${ring1[@]}" "$CHECK" --addrs 10.0.9.2/30 --dump "$TMP/far.json" >/dev/null 2>&1
expect "unreachable" 1 "hostfile-not-own" -- "$CHECK" --job "$TMP/r0.json" "$TMP/far.json"
echo '{"env": 3' >"$TMP/bad.json"
expect "bad dump" 2 "bad.json" -- "$CHECK" --job "$TMP/r0.json" "$TMP/bad.json"
expect "usage" 2 "usage: tbm-mlxcheck" -- "$CHECK" --bogus
expect "job usage" 2 "usage: tbm-mlxcheck" -- "$CHECK" --job

echo "tbm-mlxcheck.sh: $checks checks, $failures failures"
[ "$failures" = 0 ]
