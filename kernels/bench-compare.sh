#!/bin/sh
# bench-compare.sh: one run on this host (N local ranks over loopback) comparing libtbmcoll's TCP all-reduce
# with Open MPI's MPI_Allreduce: busbw per size from -b to -e and their ratio, the 8-byte latency, and busbw
# as a share of one link's rate (2 ranks, -o p2p, run as often as the rounds). For the lab's Thunderbolt mesh see
# tests/perf/mesh-vs-mpi.sh.
# Two Open MPI peers (-P both, the default; -P default: the first alone, no search):
#   mpi: Open MPI with its defaults (TCP BTL on lo, its own choice of all-reduce algorithm);
#   tuned: Open MPI set up for these links by a search first (kernels/mpi-tune.sh, which says how: its
#     all-reduce algorithm per size in a rules file, then its TCP BTL's settings), -s ITERS timed iterations
#     per run and -S ROUNDS rounds taken in turns; the ranks placed as in the comparison (-B).
#     The report prints the search's figures, what won and the lines that run the tuned peer again.
# How the two libraries take turns (-M):
#   turns (the default): one mpirun per peer whose ranks hold both, Open MPI and libtbmcoll's TCP mesh over
#     127.0.0.1 (`macnode bench -T both`, the tuned peer's with its settings); at each size they take turns
#     ROUNDS times each (libtbmcoll, Open MPI, libtbmcoll, ...), so each pair of figures is taken within a
#     second of each other, on the same cores and the same buffers; libtbmcoll's figures beside the tuned
#     peer (tcp') are those of its own launch;
#   launches: the sweeps are whole runs taken in turns, ROUNDS times (libtbmcoll's ranks started by
#     `macnode bench -l`, each Open MPI peer's by mpirun), each run seconds after the other.
# Each side's figure is the median of its rounds, and the rounds' ratios (taken pairwise) are printed beside it.
# Where the ranks run (-B): core, each rank bound to a core (mpirun --bind-to core --map-by core, round robin
# with overload allowed when there are more ranks than cores; `macnode bench -l --bind auto`, which binds only
# when every rank has a core of its own); none, unbound (--bind-to none, --bind none); without -B, as mpirun
# and macnode bench do by default (mpirun binds 2 ranks to cores and leaves more, oversubscribed, unbound).
# Usage: bench-compare.sh [-n RANKS] [-b SIZE] [-e SIZE] [-A auto|mesh|ring] [-i ITERS] [-r ROUNDS]
#                         [-M turns|launches] [-B core|none] [-P both|default] [-s ITERS] [-S ROUNDS] [-x ARGS]
# -n: 2 to 16 ranks (more than the cores: mpirun --oversubscribe; 4 by default). -s, -S: the search's
# iterations per run (4) and rounds (3: with one, a swing of the machine could pick a setting). -x: more
# options for libtbmcoll's runs (macnode bench's own, e.g. "-S 1 -s 0"), for experiments.
# MACNODE_BENCH names the program (default: macnode-bench beside this script); MPIRUN the launcher
# (default: mpirun --oversubscribe, TCP on lo only). The search says what it runs on stderr.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bench=${MACNODE_BENCH:-$here/macnode-bench}
n=4 min=1M max=64M algo=auto iters=10 rounds=3 extra="" method=turns bind="" peers=both siters=4 srounds=3
usage="usage: $0 [-n RANKS] [-b SIZE] [-e SIZE] [-A auto|mesh|ring] [-i ITERS] [-r ROUNDS] [-M turns|launches]
       [-B core|none] [-P both|default] [-s ITERS] [-S ROUNDS] [-x ARGS]"
while getopts n:b:e:A:i:r:M:x:B:P:s:S: opt; do
  case $opt in
    n) n=$OPTARG ;; b) min=$OPTARG ;; e) max=$OPTARG ;; A) algo=$OPTARG ;; i) iters=$OPTARG ;; r) rounds=$OPTARG ;;
    M) method=$OPTARG ;; x) extra=$OPTARG ;; B) bind=$OPTARG ;; P) peers=$OPTARG ;; s) siters=$OPTARG ;; S) srounds=$OPTARG ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# = 0 ] || { echo "$0: unexpected argument '$1'" >&2; echo "$usage" >&2; exit 2; }
bad() { echo "$0: $*" >&2; exit 2; }
case $method in
  turns|launches) ;;
  *) bad "-M takes turns or launches, not '$method'" ;;
esac
case $rounds in
  [1-9]|[1-9][0-9]) ;;
  *) bad "-r takes a number of rounds from 1 to 99, not '$rounds'" ;;
esac
case $n in
  [2-9]|1[0-6]) ;;
  *) bad "-n takes a number of ranks from 2 to 16, not '$n'" ;;
esac
case $iters in
  [1-9]|[1-9][0-9]|[1-9][0-9][0-9]|[1-9][0-9][0-9][0-9]) ;;
  *) bad "-i takes a number of iterations from 1 to 9999, not '$iters'" ;;
esac
case $bind in
  ""|core|none) ;;
  *) bad "-B takes core or none, not '$bind'" ;;
esac
case $peers in
  both|default) ;;
  *) bad "-P takes both or default, not '$peers'" ;;
esac
case $algo in
  auto|mesh|ring) ;;
  *) bad "-A takes auto, mesh or ring, not '$algo'" ;;
esac
. "$here/bench-args.sh"
check_search "$siters" "$srounds"
check_sizes "$min" "$max"
[ -x "$bench" ] || bad "$bench is not built (scripts/build.sh; MACNODE_BENCH names another)"

root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
mpirun=${MPIRUN:-"mpirun $root --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo"}
cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)
case $bind in
  core) lbind="--bind auto"
        if [ "$n" -le "$cores" ]; then mbind="--bind-to core --map-by core"; where="each rank bound to a core of its own (-B core)"
        else mbind="--bind-to core:overload-allowed --map-by core"
             where="ranks bound to cores round robin, $n on $cores (-B core)"
             [ "$method" = turns ] || where="$where, libtbmcoll's unbound (macnode bench -l binds only when each has a core)"; fi ;;
  none) lbind="--bind none" mbind="--bind-to none" where="ranks unbound (-B none)" ;;
  *) lbind="" mbind="" where="ranks where mpirun and macnode bench put them by default" ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say() { echo "bench-compare: $*" >&2; }

if [ "$peers" = both ]; then
  # the tuned peer: the search (mpi-tune.sh) with the ranks placed as in the comparison
  # shellcheck disable=SC2086
  MACNODE_BENCH=$bench sh "$here/mpi-tune.sh" -n "$n" -b "$min" -e "$max" -s "$siters" -S "$srounds" -o "$tmp/tune" \
    $mpirun $mbind || exit
  tuned=$(cat "$tmp/tune/mca")
fi

# --- the comparison: each peer beside libtbmcoll ---
if [ "$method" = turns ]; then
  # one launch per peer for the sweeps and one for the 8-byte runs; each output split by its transport column
  $mpirun $mbind -np "$n" "$bench" -T both --turns "$rounds" -A "$algo" $extra -b "$min" -e "$max" -n "$iters" -w 2 -F csv >"$tmp/both.csv"
  [ "$peers" = default ] ||
    $mpirun $mbind $tuned -np "$n" "$bench" -T both --turns "$rounds" -A "$algo" $extra -b "$min" -e "$max" -n "$iters" -w 2 -F csv >"$tmp/tboth.csv"
  $mpirun $mbind -np "$n" "$bench" -T both --turns "$rounds" -A "$algo" $extra -b 8 -e 8 -n 500 -w 50 -F csv >"$tmp/both8.csv"
  [ "$peers" = default ] ||
    $mpirun $mbind $tuned -np "$n" "$bench" -T both --turns "$rounds" -A "$algo" $extra -b 8 -e 8 -n 500 -w 50 -F csv >"$tmp/tboth8.csv"
  for f in both both8 tboth tboth8; do
    [ -f "$tmp/$f.csv" ] || continue
    t=${f%both*} to=${f#*both}
    awk -F, '$1 == "op" || $2 != "mpi"' "$tmp/$f.csv" >"$tmp/${t}tcp$to.csv"
    awk -F, '$1 == "op" || $2 == "mpi"' "$tmp/$f.csv" >"$tmp/${t}mpi$to.csv"
  done
else
  r=0
  while [ "$r" -lt "$rounds" ]; do
    r=$((r + 1))
    "$bench" -l "$n" $lbind -A "$algo" $extra -b "$min" -e "$max" -n "$iters" -w 2 -F csv >>"$tmp/tcp.csv"
    $mpirun $mbind -np "$n" "$bench" -T mpi -b "$min" -e "$max" -n "$iters" -w 2 -F csv >>"$tmp/mpi.csv"
    [ "$peers" = default ] ||
      $mpirun $mbind $tuned -np "$n" "$bench" -T mpi -b "$min" -e "$max" -n "$iters" -w 2 -F csv >>"$tmp/tmpi.csv"
    "$bench" -l "$n" $lbind -A "$algo" $extra -b 8 -e 8 -n 500 -w 50 -F csv >>"$tmp/tcp8.csv"
    $mpirun $mbind -np "$n" "$bench" -T mpi -b 8 -e 8 -n 500 -w 50 -F csv >>"$tmp/mpi8.csv"
    [ "$peers" = default ] ||
      $mpirun $mbind $tuned -np "$n" "$bench" -T mpi -b 8 -e 8 -n 500 -w 50 -F csv >>"$tmp/tmpi8.csv"
  done
  # libtbmcoll's runs are the same for both peers
  [ "$peers" = default ] || { cp "$tmp/tcp.csv" "$tmp/ttcp.csv"; cp "$tmp/tcp8.csv" "$tmp/ttcp8.csv"; }
fi
# one link's rate, as often as the rounds (each direction's figure the median of its runs): a single run of it
# swung from 4.7 to 7.6 GB/s one way here, and every size's `link` share with it
r=0
while [ "$r" -lt "$rounds" ]; do
  r=$((r + 1))
  "$bench" -l 2 $lbind -o p2p -b 8 -e "$max" -n "$iters" -w 2 -L 500 -F csv >>"$tmp/p2p.csv"
done
what="$n ranks on $(hostname) ($cores cores), loopback, in $method, $where, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
if [ "$peers" = default ]; then
  awk -v what="$what" -f "$here/bench-report.awk" "$tmp/tcp.csv" "$tmp/mpi.csv" "$tmp/tcp8.csv" "$tmp/mpi8.csv" "$tmp/p2p.csv"
  exit 0
fi
awk -v what="$what" -v launches="$([ "$method" = launches ] && echo 1 || echo 0)" -v ttcp="$tmp/ttcp.csv" -v tmpi="$tmp/tmpi.csv" -v ttcp8="$tmp/ttcp8.csv" -v tmpi8="$tmp/tmpi8.csv" \
  -v won="$tmp/tune/won" -f "$here/bench-report.awk" "$tmp/tcp.csv" "$tmp/mpi.csv" "$tmp/tcp8.csv" "$tmp/mpi8.csv" "$tmp/p2p.csv"
# how the tuned peer was found, and how to run it again
cat "$tmp/tune/report"
printf "# to run it again: printf '%s' >allreduce.rules\n" "$(awk '{ printf "%s\\n", $0 }' "$tmp/tune/allreduce.rules")"
echo "#   $(echo "$mpirun $mbind $(sed "s|$tmp/tune/allreduce.rules|allreduce.rules|" "$tmp/tune/mca")" \
  "-np $n $bench -T both --turns $rounds -A $algo $extra -b $min -e $max -n $iters -w 2 -F csv" | tr -s ' ')"
