#!/bin/sh
# bench-smoke.sh: `macnode bench` (macnode running macnode-bench) runs every operation on 3 local ranks,
# counts no wrong value, writes its three formats, measures every cable with -o p2p (mesh: every pair; ring:
# neighbours), reports progress and (--verbose) where the time goes, counts what each rank sent to each peer
# (--traffic), and refuses bad options and a missing environment with a message. No
# timing is asserted.
macnode=${TBM_MACNODE:-../macnode/macnode}
bench() { "$macnode" bench "$@"; }
fail=0
say() { echo "bench-smoke: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for op in allreduce allgather reducescatter broadcast sendrecv; do
  for algo in mesh ring; do
    out=$(bench -l 3 -A "$algo" -o "$op" -d bf16 -r max -R 2 -b 4 -e 64K -f 16 -n 2 -w 1 -F csv) ||
      { say "$op $algo: exit $?"; fail=1; continue; }
    rows=$(echo "$out" | awk -F, 'NR > 1' | wc -l)
    wrong=$(echo "$out" | awk -F, 'NR > 1 { w += $13 } END { print w + 0 }')
    [ "$rows" -ge 2 ] && [ "$wrong" = 0 ] || { say "$op $algo: $rows rows, $wrong wrong"; fail=1; }
  done
done
table=$(bench -l 2 -b 8 -e 1K -f 4 -n 2 -w 1)
echo "$table" | grep -q '^# Wrong values       : 0 OK' || { say "table: no OK line"; echo "$table"; fail=1; }
echo "$table" | grep -q 'transport mesh' || { say "table: no transport"; fail=1; }
# nccl-tests' long options do the same
long=$(bench --local 2 --minbytes 8 --maxbytes 1K --stepfactor 4 --iters 2 --warmup_iters 1 --datatype i32 --format csv)
[ "$(echo "$long" | awk -F, 'NR > 1 && $6 == "i32"' | wc -l)" = 8 ] || { say "long options: $long"; fail=1; }
# one connection per pair, the kernel's own socket buffers, no spinning: the same results
out=$(bench -l 3 -S 1 -B 0 -s 0 -b 1M -e 1M -n 2 -w 1 -F csv) && [ "$(echo "$out" | awk -F, 'NR > 1 { w += $13 } END { print w + 0 }')" = 0 ] ||
  { say "-S 1 -B 0 -s 0: $out"; fail=1; }
# --verbose: per size and placement, where the time went, with the calls that moved the data
table=$(bench -l 2 -b 64K -e 256K -f 4 -n 2 -w 1 --verbose)
[ "$(echo "$table" | grep -cE '^#   [0-9]+ B (out-of-place|in-place), per op .*send/recv [0-9.]+ us in [1-9][0-9.]* calls .*reduce [0-9.]+ us, waiting')" = 4 ] ||
  { say "--verbose: want 4 counter lines"; echo "$table"; fail=1; }
bench -l 2 -b 64K -e 64K -n 2 -w 1 -V -F csv > "$tmp/out" 2>"$tmp/err"
[ "$(grep -c 'send/recv' "$tmp/err")" = 2 ] && [ "$(grep -c 'send/recv' "$tmp/out")" = 0 ] ||
  { say "-V with csv: the counters go to stderr: $(cat "$tmp/err")"; fail=1; }
# --recv-staging and --offset: with the buffers 16 bytes past a page boundary (where glibc puts a large
# malloc() block), on, the results' receives go through the staging buffer; off, or with page-aligned
# buffers, none does; the values are right every way
for case in on:16:yes off:16:no on:0:no on:48:no; do
  z=${case%%:*} rest=${case#*:} off=${rest%%:*} want=${rest#*:}
  table=$(bench -l 2 -Z "$z" -O "$off" -b 1M -e 1M -n 2 -w 1 -V) || { say "-Z $z -O $off: exit $?"; fail=1; }
  staged=$(echo "$table" | sed -n 's/.*; \([0-9]*\) KiB staged).*/\1/p' | head -1)
  echo "$table" | grep -q '^# Wrong values       : 0 OK' && case $want:$staged in yes:[1-9]*|no:0) true ;; *) false ;; esac ||
    { say "-Z $z -O $off: staged '$staged' KiB, want staging $want"; echo "$table"; fail=1; }
done
# -Z auto (the default): staged or not as the CPU's copy measured at start says, the header says which and
# on what figure, and the receives do as it says; -Z on and off are said as such
table=$(bench -l 2 -O 16 -b 1M -e 1M -n 2 -w 1 -V) || { say "-Z auto: exit $?"; fail=1; }
said=$(echo "$table" | sed -n 's/^# receives: \(staged\|not staged\) (-Z auto: a copy to 16 bytes past a 64-byte boundary takes [0-9][0-9.]*x the aligned one on this CPU)$/\1/p')
staged=$(echo "$table" | sed -n 's/.*; \([0-9]*\) KiB staged).*/\1/p' | head -1)
case $said:$staged in "staged":[1-9]*|"not staged":0) true ;; *) say "-Z auto: header says '$said', $staged KiB staged"; echo "$table"; fail=1 ;; esac
for z in on off; do
  word=staged; [ "$z" = off ] && word="not staged"
  bench -l 2 -Z "$z" -b 64K -e 64K -n 2 -w 1 | grep -qx "# receives: $word (-Z $z)" || { say "-Z $z: header"; fail=1; }
done
# streams per pair: -S as given; without it three where the machine has a core to spare beyond its ranks,
# else one (the machine's CPUs online, as the library counts them), and the header says why
online=$(getconf _NPROCESSORS_ONLN)
for n in 2 4; do
  if [ "$online" -gt "$n" ]; then want="3"; else want="1 (no core to spare on some machine for more; -S to choose)"; fi
  got=$(bench -l "$n" -b 64K -e 64K -n 2 -w 1 | sed -n 's/^# TCP streams per pair of ranks: //p')
  [ "$got" = "$want" ] || { say "-l $n on $online CPUs: streams '$got', want '$want'"; fail=1; }
done
[ "$(bench -l 2 -S 2 -b 64K -e 64K -n 2 -w 1 | sed -n 's/^# TCP streams per pair of ranks: //p')" = 2 ] ||
  { say "-S 2: the header should say 2 streams"; fail=1; }
bench -l 2 -A ring -b 64K -e 64K -n 2 -w 1 | grep -q '^# TCP streams' && { say "a ring has no streams line"; fail=1; }
# --bind: local ranks each on a CPU of its own when they fit, in the order the process may use them; the
# header says where; none when there are more ranks than CPUs or with --bind none
# the CPUs this test may use, in order (its affinity, as the ranks see it)
allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr ',' '\n' |
  awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }' | paste -sd' ')
set -- $allowed
cpus=$# first=$1
bench -l 1 -b 8 -e 8 -n 1 -w 0 | grep -q "^# local ranks: each bound to a CPU of its own (rank:CPU 0:$first)\$" ||
  { say "--bind: one rank should be on CPU $first (of $allowed)"; fail=1; }
taskset -c "$first" "$macnode" bench -l 2 -b 8 -e 8 -n 1 -w 0 | grep -q '^# local ranks: not bound to CPUs' ||
  { say "--bind: 2 ranks on 1 CPU should not be bound"; fail=1; }
bench -l 1 --bind none -b 8 -e 8 -n 1 -w 0 | grep -q '^# local ranks: not bound to CPUs (--bind none' ||
  { say "--bind none: bound"; fail=1; }
if [ "$cpus" -ge 2 ]; then
  second=$2
  eval "last=\${$#}"
  taskset -c "$last" "$macnode" bench -l 1 -b 8 -e 8 -n 1 -w 0 | grep -q "(rank:CPU 0:$last)\$" ||
    { say "--bind: under taskset -c $last the rank should be on CPU $last"; fail=1; }
  # the ranks themselves: while they run, each is allowed its own CPU only; and killed, the process that
  # started them takes them with it (they do not run on through their sweep)
  "$macnode" bench -l 2 -b 1M -e 1M -n 1000000 -w 0 -c 0 > /dev/null 2>&1 &
  pid=$!   # macnode execs macnode-bench: the ranks are its children
  seen="" ranks=""
  for try in $(seq 1 300); do   # up to 30 s on a busy machine
    ranks=$(pgrep -P "$pid" | paste -sd' ')
    seen=$(for k in $ranks; do sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$k/status"; done 2>/dev/null | sort | paste -sd' ')
    [ "$seen" = "$first $second" ] && break
    sleep 0.1
  done
  kill "$pid"
  wait "$pid" 2>/dev/null
  [ "$seen" = "$first $second" ] ||
    { say "--bind: 2 running ranks should be allowed CPUs $first and $second, saw '$seen'"; fail=1; }
  left=$ranks
  for try in $(seq 1 300); do   # up to 30 s on a busy machine
    left=$(for k in $ranks; do [ -d "/proc/$k" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$k/status" 2>/dev/null && echo "$k"; done | paste -sd' ')
    [ -z "$left" ] && break
    sleep 0.1
  done
  [ -z "$left" ] || { say "the ranks ($left) outlived the killed benchmark"; kill $left; fail=1; }
fi
# the mesh's all-reduce above 128 KiB, said in the table: halving and direct give the same (exact) values
for how in halving direct; do
  table=$(bench -l 4 -a "$how" -b 16K -e 1M -f 8 -n 2 -w 1 -d bf16) || { say "-a $how: exit $?"; fail=1; }
  echo "$table" | grep -q "^# all-reduce above 128 KiB: $how\$" && echo "$table" | grep -q '^# Wrong values       : 0 OK' ||
    { say "-a $how"; echo "$table"; fail=1; }
done
bench -l 3 -a halving -b 1M -e 1M -n 2 -w 1 | grep -q '^# all-reduce above 128 KiB: direct$' ||
  { say "-a halving on 3 ranks should say direct"; fail=1; }
# the mesh's all-reduce up to 128 KiB, said in the table: each way gives right values; doubling needs a power
# of two (3 ranks: one round), through rank 0 three ranks or more (2: one round); a ring goes both ways around
for case in oneround:4:one\ round rooted:4:through\ rank\ 0 doubling:4:recursive\ doubling doubling:3:one\ round \
            rooted:2:one\ round; do
  how=${case%%:*} rest=${case#*:} n=${rest%%:*} want=${rest#*:}
  table=$(bench -l "$n" -y "$how" -b 8 -e 128K -f 16 -n 2 -w 1 -d bf16) || { say "-y $how: exit $?"; fail=1; }
  echo "$table" | grep -q "^# all-reduce up to 128 KiB: $want\$" && echo "$table" | grep -q '^# Wrong values       : 0 OK' ||
    { say "-y $how on $n ranks: want $want"; echo "$table"; fail=1; }
done
# a ring of 4 doubles over its corners where its ranks outnumber the cores, or when asked; else both ways around
auto=both_ways_around
[ "$(nproc)" -ge 4 ] || auto=recursive_doubling
for case in auto:4:$auto doubling:4:recursive_doubling oneround:4:both_ways_around doubling:3:both_ways_around; do
  how=${case%%:*} rest=${case#*:} n=${rest%%:*} want=$(echo "${rest#*:}" | tr _ ' ')
  table=$(bench -l "$n" -A ring -y "$how" -b 8 -e 32K -f 16 -n 2 -w 1 -d bf16) || { say "ring -y $how: exit $?"; fail=1; }
  echo "$table" | grep -q "^# all-reduce up to 32 KiB: $want\$" && echo "$table" | grep -q '^# Wrong values       : 0 OK' ||
    { say "ring of $n, -y $how: want $want"; echo "$table"; fail=1; }
done
# a ring of 4 halves too when asked (each step with a neighbour), and by itself where its ranks outnumber the
# cores; it runs its own otherwise; a ring of 3 cannot
auto=ring
[ "$(nproc)" -ge 4 ] || auto=halving
for case in halving:4:halving direct:4:ring auto:4:$auto halving:3:ring; do
  how=${case%%:*} rest=${case#*:} n=${rest%%:*} want=${rest#*:}
  table=$(bench -l "$n" -A ring -a "$how" -b 16K -e 1M -f 8 -n 2 -w 1 -d bf16) || { say "ring -a $how: exit $?"; fail=1; }
  echo "$table" | grep -q "^# all-reduce above 32 KiB: $want\$" && echo "$table" | grep -q '^# Wrong values       : 0 OK' ||
    { say "ring of $n, -a $how: want $want"; echo "$table"; fail=1; }
done
json=$(bench -l 2 -b 8 -e 64 -f 2 -n 2 -w 1 -F json)
echo "$json" | grep -q '"wrong_total": 0,' || { say "json: no wrong_total"; echo "$json"; fail=1; }

# p2p: a mesh of 4 has 6 cables, a ring of 4 has 4; each with rates, a latency and no wrong value
for algo in mesh:6 ring:4; do
  out=$(bench -l 4 -A "${algo%:*}" -o p2p -b 8 -e 256K -n 3 -w 1 -L 20 -F csv) || { say "p2p $algo: exit $?"; fail=1; }
  [ "$(echo "$out" | awk -F, 'NR > 1 && $8 > 0 && $9 > 0 && $10 > 0 && $12 > 0 && $13 == 0' | wc -l)" = "${algo#*:}" ] ||
    { say "p2p $algo: want ${algo#*:} cables measured"; echo "$out"; fail=1; }
done
out=$(bench -l 4 -A ring -o p2p -b 8 -e 64K -n 2 -w 1 -L 5 -F csv)
pairs=$(echo "$out" | awk -F, 'NR > 1 { printf "%s-%s ", $3, $5 }')
[ "$pairs" = "0-1 0-3 1-2 2-3 " ] || { say "ring p2p pairs: $pairs"; fail=1; }
echo "$out" | awk -F, 'NR > 1 && ($4 !~ /:lo$/ || $6 !~ /:lo$/) { bad = 1 } END { exit bad }' ||
  { say "p2p ends should name host and interface (lo on loopback): $out"; fail=1; }
# sizes below one element: one element is sent, and said
out=$(bench -l 2 -o p2p -b 1 -e 2 -n 2 -w 1 -L 5 -F csv) || { say "p2p -b 1 -e 2: exit $?"; fail=1; }
echo "$out" | awk -F, 'NR > 1 && !($7 == 4 && $11 == 4 && $13 == 0) { bad = 1 } END { exit bad }' ||
  { say "p2p of less than one element: $out"; fail=1; }
table=$(bench -l 3 -o p2p -b 8 -e 64K -n 2 -w 1 -L 5)
echo "$table" | grep -q '^# Slowest cable      : .* GB/s one way' || { say "p2p table: no slowest"; echo "$table"; fail=1; }
echo "$table" | grep -q '^# Wrong values       : 0 OK' || { say "p2p table: no OK"; fail=1; }
json=$(bench -l 2 -o p2p -b 8 -e 4K -n 2 -w 1 -L 5 -F json)
echo "$json" | grep -q '"cables": \[' && echo "$json" | grep -q '"wrong_total": 0,' || { say "p2p json: $json"; fail=1; }
if bench -l 1 -o p2p 2>"$tmp/err"; then say "p2p on one rank accepted"; fail=1; fi
grep -q "p2p needs at least 2 ranks" "$tmp/err" || { say "p2p 1 rank: $(cat "$tmp/err")"; fail=1; }

# --traffic: what each rank sent to and received from each peer, and the interface. A direct mesh all-reduce
# of 1 MiB among 4 sends each peer a quarter twice (reduce-scatter, all-gather): 8 all-reduces (2 timed, 1
# warm-up, 1 check; out of place and in place) make 4 MiB per peer, plus the check's few bytes; what one rank
# sent, its peer received
out=$(bench -l 4 -A mesh -a direct -b 1M -e 1M -n 2 -w 1 -F csv --traffic) || { say "--traffic: exit $?"; fail=1; }
echo "$out" | awk -F, '
  $1 == "traffic" && $2 != "rank" { n++; s[$2 "," $4] = $7; r[$2 "," $4] = $8
                                     if ($7 < 4194304 || $7 > 4194304 + 4096 || $6 != "lo") bad = bad " " $0 }
  END { for (k in s) { split(k, a, ","); if (s[k] != r[a[2] "," a[1]]) bad = bad " sent " k " != received" }
        if (n != 12 || bad != "") { print n " rows;" bad; exit 1 } }' > "$tmp/traffic" ||
  { say "--traffic, mesh of 4: $(cat "$tmp/traffic"): $out"; fail=1; }
# a ring of 3: everything goes to the right neighbour; what went around adds up
out=$(bench -l 3 -A ring -b 1M -e 1M -n 2 -w 1 -F csv --traffic)
echo "$out" | awk -F, '$1 == "traffic" && $2 != "rank" { n++; sent += $7; got += $8 }
  END { exit !(n == 6 && sent == got && sent >= 3 * 2 * 8 * 2 * 1048576 / 3) }' ||
  { say "--traffic, ring of 3: $out"; fail=1; }
json=$(bench -l 2 -b 64K -e 64K -n 1 -w 0 -F json --traffic)
echo "$json" | python3 -c 'import json, sys; d = json.load(sys.stdin); t = d["traffic"]
assert len(t) == 2 and t[0]["sent_bytes"] == t[1]["received_bytes"] > 0 and d["wrong_total"] == 0, t' 2> "$tmp/err" ||
  { say "--traffic, JSON: $(cat "$tmp/err"): $json"; fail=1; }
table=$(bench -l 2 -b 64K -e 64K -n 1 -w 0 --traffic)
echo "$table" | grep -q '^#    1 .* 0 .* lo  *[0-9][0-9]*  *[0-9][0-9]*$' || { say "--traffic, table: $table"; fail=1; }

# progress on stderr: with --progress on a line after every size (and every cable), nothing else there
bench -l 2 -b 8 -e 512 -f 8 -n 2 -w 1 --progress on > /dev/null 2>"$tmp/err" || { say "progress on: exit $?"; fail=1; }
[ "$(grep -c 'macnode bench: [1-3] of 3 sizes done, [0-9]*% of the work, .* left' "$tmp/err")" = 3 ] ||
  { say "progress: $(cat "$tmp/err")"; fail=1; }
bench -l 3 -o p2p -b 8 -e 4K -n 2 -w 1 -L 5 --progress on > /dev/null 2>"$tmp/err"
[ "$(grep -c 'of 3 cables done' "$tmp/err")" = 3 ] || { say "p2p progress: $(cat "$tmp/err")"; fail=1; }
bench -l 2 -b 8 -e 512 -f 8 -n 2 -w 1 > /dev/null 2>"$tmp/err"
[ ! -s "$tmp/err" ] || { say "short run, progress auto, off a terminal: $(cat "$tmp/err")"; fail=1; }

# bad input: a message saying what is wrong and what to do
check_err() {   # check_err "what" "expected message" args...
  what=$1 want=$2; shift 2
  if bench "$@" > /dev/null 2>"$tmp/err"; then say "$what accepted"; fail=1; return; fi
  grep -q -- "$want" "$tmp/err" || { say "$what: $(cat "$tmp/err")"; fail=1; }
}
check_err "bad op" "bad value 'allsum' for -o/--op (give allreduce" -l 2 -o allsum
check_err "-b > -e" "\-b must not exceed -e (1048576 > 1024 bytes)" -l 2 -b 1M -e 1K
check_err "bad size" "bad value '12Q' for -e/--maxbytes" -l 2 -e 12Q
check_err "bad progress" "bad value 'loud' for --progress (give auto, on or off)" -l 2 --progress loud
check_err "missing value" "option -n/--iters needs a value" -l 2 -n
check_err "unknown option" "unknown option '--frobnicate'" --frobnicate
check_err "stray argument" "unexpected argument 'extra'" -l 2 extra
check_err "bad streams" "bad value '5' for -S/--streams (give 1 to 4)" -l 2 -S 5
check_err "bad segment" "bad value '1K' for -G/--segment (give 4K to 64M)" -l 2 -G 1K
check_err "bad sockbuf" "bad value 'lots' for -B/--sockbuf" -l 2 -B lots
check_err "bad staging" "bad value 'maybe' for -Z/--recv-staging (give auto, on or off)" -l 2 -Z maybe
check_err "bad bind" "bad value 'tight' for --bind (give auto or none)" -l 2 --bind tight
check_err "bad offset" "bad value '4096' for -O/--offset (give 0 to 4095)" -l 2 -O 4096
check_err "bad mesh all-reduce" "bad value 'sideways' for -a/--mesh-allreduce: unknown mesh all-reduce 'sideways': use auto, direct or halving" -l 4 -a sideways
check_err "bad small all-reduce" "bad value 'tree' for -y/--small-allreduce: unknown small all-reduce 'tree': use auto, oneround, rooted or doubling" -l 4 -y tree
check_err "too many local ranks" "bad value '99' for -l/--local" -l 99
check_err "-l with mpi" "start MPI ranks with mpirun" -T mpi -l 2
check_err "both as a table" "-T both writes the sweeps' rows of both transports, in turns, as CSV: give -F csv" -T both
check_err "both p2p" "give -F csv (and an operation other than p2p)" -T both -o p2p -F csv
check_err "turns alone" "--turns is for -T both" -l 2 --turns 2
check_err "bad turns" "bad value '0' for --turns (give 1 to 99)" -T both -F csv --turns 0
check_err "bad transport" "bad value 'ib' for -T/--transport (give tcp, mpi or both)" -T ib
check_err "traffic of p2p" "--traffic counts what libtbmcoll's TCP transport moves in a sweep: not with -o p2p" -l 2 -o p2p --traffic
check_err "traffic over MPI" "not with -T mpi or -T both" -T mpi --traffic

# -T both under mpirun: libtbmcoll's mesh and Open MPI in the same two ranks take turns at each size (a row
# each per turn, mesh first), every value right; bench-compare.sh reads them so (one size, one round; the
# default Open MPI peer alone: compare-smoke.sh runs the tuned one)
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
# (Open MPI leaves its own allocations at exit, some in components it has unloaded, which LeakSanitizer
# cannot name: leak checking is off for its ranks; the ranks of -l, the same code without MPI, keep it)
mpirun="mpirun $root --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo -x ASAN_OPTIONS=detect_leaks=0"
out=$($mpirun -np 2 "$macnode" bench -T both --turns 2 -d bf16 -b 1K -e 64K -f 8 -n 2 -w 1 -F csv) ||
  { say "-T both: exit $?"; fail=1; }
order=$(echo "$out" | awk -F, 'NR > 1 && $9 == "in-place" { printf "%s:%s ", $4, $2 }')
[ "$order" = "1024:mesh 1024:mpi 1024:mesh 1024:mpi 8192:mesh 8192:mpi 8192:mesh 8192:mpi 65536:mesh 65536:mpi 65536:mesh 65536:mpi " ] &&
  [ "$(echo "$out" | awk -F, 'NR > 1 && $3 == 2 && $10 > 0 && $13 == 0' | wc -l)" = 24 ] ||
  { say "-T both: want 24 rows in turns, none wrong"; echo "$out"; fail=1; }
out=$(MACNODE_BENCH=$(dirname "$macnode")/../kernels/macnode-bench MPIRUN="$mpirun" \
      sh "$(dirname "$0")/../../kernels/bench-compare.sh" -P default -n 2 -b 64K -e 64K -i 2 -r 1 2>&1) ||
  { say "bench-compare.sh: exit $?"; echo "$out"; fail=1; }
echo "$out" | grep -q 'loopback, in turns' && echo "$out" | grep -qE '^ +65536 in-place +[0-9.]+ GB/s +[0-9.]+ GB/s' &&
  echo "$out" | grep -qE '^# 8-byte all-reduce: tcp [0-9.]+ us, mpi [0-9.]+ us' ||
  { say "bench-compare.sh in turns:"; echo "$out"; fail=1; }

unset MLX_RANK JACCL_RANK
check_err "no environment" "MLX_RANK is not set, so this is not a rank of a tbmesh job" -b 8
MACNODE_LIBEXECDIR=$tmp/none "$macnode" bench -l 2 2>"$tmp/err" && { say "missing program: exit 0"; fail=1; }
grep -q "macnode bench: cannot run $tmp/none/macnode-bench: No such file or directory (MACNODE_LIBEXECDIR names that folder" "$tmp/err" || { say "missing program: $(cat "$tmp/err")"; fail=1; }
# bench-report.awk (bench-compare.sh's and mesh-vs-mpi.sh's report): rounds appended to one file each, a
# header before each round; each side's figure is the median of its rounds, the rounds' ratios beside it.
report=$(dirname "$0")/../../kernels/bench-report.awk
hdr='op,transport,ranks,size_bytes,count,type,redop,root,placement,time_us,algbw_gbs,busbw_gbs,wrong'
row() { echo "allreduce,$1,2,$2,0,f32,sum,-1,$3,$4,0,$5,0"; }
{ for bw in 1.0 3.0 2.0; do echo "$hdr"; row mesh 1048576 out-of-place 1 "$bw"; row mesh 1048576 in-place 1 "$bw"; done; } > "$tmp/t.csv"
{ for bw in 1.0 1.0 4.0; do echo "$hdr"; row mpi 1048576 out-of-place 1 "$bw"; row mpi 1048576 in-place 1 "$bw"; done; } > "$tmp/m.csv"
{ for us in 9 5 7 20; do echo "$hdr"; row mesh 8 out-of-place "$us" 0; done; } > "$tmp/t8.csv"
{ for us in 10 14 12 1; do echo "$hdr"; row mpi 8 out-of-place "$us" 0; done; } > "$tmp/m8.csv"
bench -l 2 -o p2p -b 1K -e 1K -n 2 -w 1 -F csv > "$tmp/p2p.csv" || { say "p2p csv: exit $?"; fail=1; }
out=$(awk -f "$report" "$tmp/t.csv" "$tmp/m.csv" "$tmp/t8.csv" "$tmp/m8.csv" "$tmp/p2p.csv")
# medians 2.0 and 1.0: ratio 2.00; the rounds' ratios 1.00, 3.00 and 0.50; 8-byte medians 8.0 and 11.0 us
echo "$out" | grep -q 'median of 3 rounds' &&
  [ "$(echo "$out" | grep -cE '^ +1048576 (out-of-place|in-place) +2\.000 GB/s +1\.000 GB/s +2\.00 .* 0\.50-3\.00$')" = 2 ] &&
  echo "$out" | grep -q '^# busbw ratio tcp/mpi: lowest 2\.00 ' &&
  echo "$out" | grep -q '^# 8-byte all-reduce (medians of 4 rounds): tcp 8\.0 us, mpi 11\.0 us: ratio 0\.73' ||
  { say "bench-report rounds:"; echo "$out"; fail=1; }
# one round: no median line, no rounds' ratios
sed -n 1,3p "$tmp/t.csv" > "$tmp/t1.csv"; sed -n 1,3p "$tmp/m.csv" > "$tmp/m1.csv"
out=$(awk -f "$report" "$tmp/t1.csv" "$tmp/m1.csv" "$tmp/t8.csv" "$tmp/m8.csv" "$tmp/p2p.csv")
! echo "$out" | grep -q 'median of' &&
  [ "$(echo "$out" | grep -cE '^ +1048576 (out-of-place|in-place) +1\.000 GB/s +1\.000 GB/s +1\.00 +[0-9]+%$')" = 2 ] ||
  { say "bench-report, one round:"; echo "$out"; fail=1; }
# the link rates: one way (the slowest cable's slower direction) and both ways at once, per direction
hdrp='op,transport,rank_a,end_a,rank_b,end_b,size_bytes,a_to_b_gbs,b_to_a_gbs,both_ways_gbs,latency_bytes,latency_us,wrong'
{ echo "$hdrp"
  echo "p2p,mesh,0,h0:lo,1,h1:lo,1048576,3.0000,2.5000,4.0000,8,5.00,0"
  echo "p2p,mesh,0,h0:lo,2,h2:lo,1048576,3.5000,3.0000,6.0000,8,7.00,0"; } > "$tmp/p2pk.csv"
out=$(awk -f "$report" "$tmp/t1.csv" "$tmp/m1.csv" "$tmp/t8.csv" "$tmp/m8.csv" "$tmp/p2pk.csv")
echo "$out" | grep -q '^# one link, one way (tcp p2p, 2 cables): slowest 2\.500 GB/s (h0:lo <-> h1:lo), mean 2\.750 GB/s; latency 6\.0 us$' &&
  echo "$out" | grep -q '^# one link, both ways at once (tcp p2p): mean 2\.500 GB/s per direction$' ||
  { say "bench-report, link rates:"; echo "$out"; fail=1; }
# the p2p run given three times (bench-compare.sh runs it once per round, appended): per cable and direction
# the median of its runs, then the slowest; a run's swing alone does not set the link
p2prow() { echo "p2p,mesh,0,h0:lo,$1,h$1:lo,1048576,$2,$3,$4,8,$5,0"; }
{ echo "$hdrp"; p2prow 1 3.0 9.0 4.0 5; p2prow 2 3.5 3.0 6.0 7
  echo "$hdrp"; p2prow 1 1.0 2.0 2.0 9; p2prow 2 4.5 4.0 8.0 9
  echo "$hdrp"; p2prow 1 5.0 4.0 3.0 1; p2prow 2 4.0 3.5 7.0 5; } > "$tmp/p2pr.csv"
out=$(awk -f "$report" "$tmp/t1.csv" "$tmp/m1.csv" "$tmp/t8.csv" "$tmp/m8.csv" "$tmp/p2pr.csv")
# cable 1: medians 3.0 one way, 4.0 the other (slower 3.0); cable 2: 4.0 and 3.5 (3.5); both 3.0 and 7.0
echo "$out" | grep -q '^# one link, one way (tcp p2p, 2 cables, each the median of its 3 runs): slowest 3\.000 GB/s (h0:lo <-> h1:lo), mean 3\.250 GB/s; latency 6\.0 us$' &&
  echo "$out" | grep -q '^# one link, both ways at once (tcp p2p): mean 2\.500 GB/s per direction$' &&
  [ "$(echo "$out" | grep -cE '^ +1048576 (out-of-place|in-place) +1\.000 GB/s +1\.000 GB/s +1\.00 +33%$')" = 2 ] ||
  { say "bench-report, link rates of several runs:"; echo "$out"; fail=1; }
# the yardstick (file 7, -o sendrecv rows, one per round): its median per size, each busbw's share of it, and
# where 1.2x Open MPI's busbw passes it
sr() { for bw in "$@"; do echo "$hdr"; echo "sendrecv,mesh,2,1048576,0,f32,sum,0,out-of-place,1,0,$bw,0"; done; }
sr 2.0 1.0 1.1 > "$tmp/sr.csv"
out=$(awk -f "$report" "$tmp/t.csv" "$tmp/m.csv" "$tmp/t8.csv" "$tmp/m8.csv" "$tmp/p2pk.csv" "$tmp/p2pk.csv" "$tmp/sr.csv")
echo "$out" | grep -qE '^ +1048576 +1\.100 GB/s +182% / +182% +91% / +91%$' &&
  echo "$out" | grep -q '^# 1.2x Open MPI.s busbw is above the yardstick at: 1048576 out-of-place, 1048576 in-place$' ||
  { say "bench-report, yardstick:"; echo "$out"; fail=1; }
sr 4.0 > "$tmp/sr.csv"
out=$(awk -f "$report" "$tmp/t.csv" "$tmp/m.csv" "$tmp/t8.csv" "$tmp/m8.csv" "$tmp/p2pk.csv" "$tmp/p2pk.csv" "$tmp/sr.csv")
echo "$out" | grep -qE '^ +1048576 +4\.000 GB/s +50% / +50% +25% / +25%$' &&
  echo "$out" | grep -q '^# 1.2x Open MPI.s busbw is above the yardstick at: no size$' ||
  { say "bench-report, yardstick far above:"; echo "$out"; fail=1; }
out=$(awk -f "$report" "$tmp/t.csv" "$tmp/m.csv" "$tmp/t8.csv" "$tmp/m8.csv" "$tmp/p2pk.csv")
! echo "$out" | grep -q yardstick || { say "bench-report without file 7 speaks of a yardstick:"; echo "$out"; fail=1; }
# the lab's comparison refuses bad options before it looks for the lab
mvm=$(dirname "$0")/../perf/mesh-vs-mpi.sh
for bad in "-x a;b|-x takes macnode bench options (letters, digits, '-', '.', '=', spaces), not 'a;b'" \
           "-r 0|-r takes a number of rounds from 1 to 99, not '0'" \
           "-M both|-M takes turns or launches, not 'both'"; do
  opt=${bad%%|*}; want=${bad#*|}
  bash "$mvm" ${opt%% *} "${opt#* }" 2>"$tmp/err" >/dev/null; rc=$?
  [ $rc = 2 ] && grep -qF "mesh-vs-mpi: $want" "$tmp/err" || { say "mesh-vs-mpi $opt: exit $rc: $(cat "$tmp/err")"; fail=1; }
done
bcmp=$(dirname "$0")/../../kernels/bench-compare.sh
sh "$bcmp" -M both 2>"$tmp/err" >/dev/null; rc=$?
[ $rc = 2 ] && grep -qF -- "-M takes turns or launches, not 'both'" "$tmp/err" || { say "bench-compare -M both: exit $rc: $(cat "$tmp/err")"; fail=1; }
[ $fail = 0 ] && say "ok"
exit $fail
