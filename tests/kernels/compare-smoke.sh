#!/bin/sh
# compare-smoke.sh: kernels/bench-compare.sh at tiny sizes on 2 ranks: with the tuned Open MPI peer (the
# default), in turns and in launches, the report has per size both Open MPI figures (default and tuned),
# libtbmcoll's beside each, both ratios and the algorithm the tuned peer took; the search's table, the
# winning settings and the lines that run the tuned peer again; -B core binds the ranks and says so; bad
# options get a message and exit 2. No timing is asserted.
macnode=${TBM_MACNODE:-../macnode/macnode}
bench=${MACNODE_LIBEXECDIR:-$(dirname "$macnode")/../kernels}/macnode-bench
compare=$(dirname "$0")/../../kernels/bench-compare.sh
fail=0
say() { echo "compare-smoke: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
# (Open MPI leaves its own allocations at exit, which LeakSanitizer cannot name: leak checking is off for its ranks)
mpirun="mpirun $root --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo -x ASAN_OPTIONS=detect_leaks=0"
run() { MACNODE_BENCH=$bench MPIRUN=$mpirun sh "$compare" "$@"; }

num='[0-9]+\.[0-9]+'
o=$tmp/out
for method in turns launches; do
  # the search in its default rounds (3) once, in one round the other time
  if [ "$method" = turns ]; then srounds=3 sopt=""; else srounds=1 sopt="-S 1"; fi
  # shellcheck disable=SC2086
  run -M "$method" -n 2 -b 8K -e 16K -r 1 -i 2 -s 2 $sopt >"$o" 2>"$tmp/err" ||
    { say "$method: exit $?"; cat "$o" "$tmp/err"; fail=1; continue; }
  grep -qF "# $srounds round(s) taken in turns, each figure the median):" "$o" &&
    [ "$(grep -c "^mpi-tune: round $srounds of $srounds: " "$tmp/err")" -gt 0 ] &&
    [ "$(grep -c "^mpi-tune: round $((srounds + 1)) of " "$tmp/err")" = 0 ] ||
    { say "$method: the search should take $srounds round(s)"; cat "$o" "$tmp/err"; fail=1; }
  # the columns: libtbmcoll and Open MPI's defaults, libtbmcoll and the tuned peer, the link, the algorithm
  grep -qE "^# +size \(B\) placement +tcp +mpi +ratio +tcp' +tuned +ratio +link +tuned algorithm$" "$o" ||
    { say "$method: no header with the default and tuned columns"; cat "$o"; fail=1; }
  rows=$(grep -cE "^ +(8192|16384) (out-of-place|in-place) +$num +$num +$num +$num +$num +$num +[0-9]+%  [0-9]+ " "$o")
  [ "$rows" = 4 ] || { say "$method: want 4 rows with both peers, $rows"; cat "$o"; fail=1; }
  # (each busbw is a figure, as the rows above read; at these sizes on a loaded machine one may print as 0.000,
  # so no figure is asserted)
  grep -qE "^# busbw ratio tcp/mpi: lowest $num " "$o" && grep -qE "^# busbw ratio tcp'/tuned: lowest $num " "$o" &&
    grep -qE "^# busbw ratio against Open MPI at its best \(the lower of the two ratios at each size\): lowest $num \(at (8192|16384) (out-of-place|in-place)\)$" "$o" ||
    { say "$method: no lowest ratios"; cat "$o"; fail=1; }
  grep -qE "^# 8-byte all-reduce beside the tuned peer: tcp' $num us, tuned $num us, algorithm [0-9]+ .*: ratio $num$" "$o" ||
    { say "$method: no tuned 8-byte line"; cat "$o"; fail=1; }
  # the search: a column per algorithm ompi_info lists and Open MPI's own choice, a row per size and 8 bytes,
  # one winner each; the BTL settings tried
  algs=$(ompi_info --param coll tuned --level 9 --parsable | grep -c ':coll_tuned_allreduce_algorithm:enumerator:value:[1-9]')
  for size in "8 B" 8192 16384; do
    awk -v size="$size" -v want=$((algs + 1)) '
      { line = $0 }
      sub(/^#  +/, "", line) && index(line, size " ") == 1 { n = gsub(/[0-9]+\.[0-9]+/, "&", line); stars = gsub(/\*/, "&", line); found++ }
      END { exit !(found == 1 && n == want && stars == 1) }' "$o" ||
      { say "$method: search row '$size' wants $((algs + 1)) figures, one *"; cat "$o"; fail=1; }
  done
  [ "$(grep -cE "^#     (sndbuf/rcvbuf|links|eager/rndv/max send) [0-9/]+: $num \(current\)( \| [0-9/]+: $num( \(taken\))?)+$" "$o")" = 3 ] ||
    { say "$method: want 3 BTL settings tried, each against the current value"; cat "$o"; fail=1; }
  # what won, and how to run it again
  grep -qE '^# tuned settings: btl_tcp_sndbuf=[0-9]+ btl_tcp_rcvbuf=[0-9]+ btl_tcp_links=[124] btl_tcp_eager_limit=[0-9]+ btl_tcp_rndv_eager_limit=[0-9]+ btl_tcp_max_send_size=[0-9]+; all-reduce algorithm: [^;]+ from 0 B' "$o" ||
    { say "$method: no winning settings line"; cat "$o"; fail=1; }
  grep -qF "# to run it again: printf '1\\n2\\n1\\n2\\n" "$o" &&
    grep -qE '^#   mpirun .*--mca btl_tcp_links [124] .*--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename allreduce.rules -np 2 .*macnode-bench -T both ' "$o" ||
    { say "$method: no lines to run it again"; cat "$o"; fail=1; }
  # the rules file as printed is one Open MPI reads, size by size: Open MPI alone with it runs; with an
  # algorithm that does not exist from 16 KiB up (Open MPI ignores a file it cannot read), 8 KiB still runs
  # and 16 KiB fails
  sed -n "s/^# to run it again: printf '\(.*\)' >allreduce.rules$/\1/p" "$o" >"$tmp/rules.fmt"
  printf "$(cat "$tmp/rules.fmt")" >"$tmp/allreduce.rules"
  rules() { $mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename "$1" -np 2 "$bench" \
              -T mpi -b 8K -e 16K -n 1 -w 0 -F csv </dev/null 2>&1; }
  rules "$tmp/allreduce.rules" >"$tmp/re" && [ "$(grep -c '^allreduce,mpi,2,' "$tmp/re")" = 4 ] ||
    { say "$method: the printed rules: $(cat "$tmp/allreduce.rules") $(cat "$tmp/re")"; fail=1; }
  sed 's/^16384 [0-9]* /16384 99 /' "$tmp/allreduce.rules" >"$tmp/wrong.rules"
  rules "$tmp/wrong.rules" >"$tmp/re" && { say "$method: the rules with algorithm 99 ran"; fail=1; }
  [ "$(grep -c '^allreduce,mpi,2,8192,' "$tmp/re")" = 2 ] && ! grep -q '^allreduce,mpi,2,16384,' "$tmp/re" &&
    grep -q 'MPI failed' "$tmp/re" || { say "$method: the rules with algorithm 99 from 16 KiB: $(cat "$tmp/re")"; fail=1; }
done

# -B core: one rank per core (where there are 2), said in the header; the default peer alone (-P default)
run -n 2 -B core -P default -b 8K -e 8K -r 1 -i 2 >"$o" 2>&1 || { say "-B core: exit $?"; cat "$o"; fail=1; }
if [ "$(nproc)" -ge 2 ]; then want="each rank bound to a core of its own (-B core)"; else want="ranks bound to cores round robin, 2 on 1 (-B core)"; fi
grep -qF "$want" "$o" && grep -qE "^ +8192 in-place +$num GB/s +$num GB/s" "$o" && ! grep -q tuned "$o" ||
  { say "-B core -P default"; cat "$o"; fail=1; }

# bad options: a message and exit 2
for bad in "-B tight|-B takes core or none, not 'tight'" "-P tuned|-P takes both or default, not 'tuned'" \
           "-s 0|-s takes a number of iterations for the search from 1 to 99, not '0'" \
           "-S 10|-S takes a number of rounds for the search from 1 to 9, not '10'" \
           "-n 1|-n takes a number of ranks from 2 to 16, not '1'" "-b 1Q|-b takes a size (digits, then K, M or G: 1M), not '1Q'" \
           "-b 4M|-b must not exceed -e (4M > 1M)"; do
  opt=${bad%%|*} want=${bad#*|}
  run $opt -e 1M >/dev/null 2>"$tmp/err"; rc=$?
  [ $rc = 2 ] && grep -qF -- "$want" "$tmp/err" || { say "$opt: exit $rc: $(cat "$tmp/err")"; fail=1; }
done

# mpi-tune.sh (the search) alone: its files, and bad usage named
tune=$(dirname "$0")/../../kernels/mpi-tune.sh
MACNODE_BENCH=$bench sh "$tune" -n 2 -b 8K -e 8K -s 1 -o "$tmp/tune" $mpirun >"$tmp/tout" 2>"$tmp/terr" ||
  { say "mpi-tune: exit $?: $(cat "$tmp/terr")"; fail=1; }
for f in allreduce.rules mca won settings report; do
  [ -s "$tmp/tune/$f" ] || { say "mpi-tune: no $f"; fail=1; }
done
grep -qE "^--mca btl_tcp_sndbuf [0-9]+ .*--mca coll_tuned_dynamic_rules_filename $tmp/tune/allreduce.rules$" "$tmp/tune/mca" &&
  grep -qE '^[0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+$' "$tmp/tune/settings" && grep -q '^# tuned settings: ' "$tmp/tune/report" ||
  { say "mpi-tune: $(cat "$tmp/tune/mca" "$tmp/tune/settings")"; fail=1; }
for bad in "-o $tmp/tune|-o: $tmp/tune/allreduce.rules exists already: give an empty folder" \
           "-o $tmp/x;y|-o: the folder's path must hold only letters" "-n 1 -o $tmp/t2|-n takes a number of ranks from 2 to 99, not '1'" \
           "-o $tmp/t3 -s 0|-s takes a number of iterations for the search from 1 to 99, not '0'" \
           "-o $tmp/t4 -e 1Q|-e takes a size (digits, then K, M or G: 64M), not '1Q'"; do
  opt=${bad%%|*} want=${bad#*|}
  MACNODE_BENCH=$bench sh "$tune" -n 2 -b 8K -e 8K $opt $mpirun >/dev/null 2>"$tmp/err"; rc=$?
  [ $rc = 2 ] && grep -qF -- "$want" "$tmp/err" || { say "mpi-tune $opt: exit $rc: $(cat "$tmp/err")"; fail=1; }
done
MACNODE_BENCH=$bench sh "$tune" -n 2 -b 8K -e 8K -o "$tmp/t5" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -qF "no MPIRUN command to start the ranks" "$tmp/err" || { say "mpi-tune without MPIRUN: exit $rc: $(cat "$tmp/err")"; fail=1; }
[ $fail = 0 ] && say "ok"
exit $fail
