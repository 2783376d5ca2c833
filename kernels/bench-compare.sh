#!/bin/sh
# bench-compare.sh: one run on this host (N local ranks over loopback) comparing libtbmcoll's TCP all-reduce
# with Open MPI's MPI_Allreduce: busbw per size from -b to -e and their ratio, the 8-byte latency, and busbw
# as a share of one link's rate (2 ranks, -o p2p). For the lab's Thunderbolt mesh see tests/perf/mesh-vs-mpi.sh.
# How the two take turns (-M):
#   turns (the default): one mpirun whose ranks hold both, Open MPI and libtbmcoll's TCP mesh over 127.0.0.1
#     (`macnode bench -T both`); at each size they take turns ROUNDS times each (libtbmcoll, Open MPI,
#     libtbmcoll, ...), so each pair of figures is taken within a second of each other, on the same cores
#     (where mpirun binds its ranks, both are bound alike) and the same buffers;
#   launches: the sweeps are whole runs taken in turns, ROUNDS times (libtbmcoll's ranks started by
#     `macnode bench -l`, Open MPI's by mpirun), each run seconds after the other.
# Each side's figure is the median of its rounds, and the rounds' ratios (taken pairwise) are printed beside it.
# Usage: bench-compare.sh [-n RANKS] [-b SIZE] [-e SIZE] [-A auto|mesh|ring] [-i ITERS] [-r ROUNDS]
#                         [-M turns|launches] [-x ARGS]
# -x: more options for libtbmcoll's runs (macnode bench's own, e.g. "-S 1 -s 0"), for experiments.
# MACNODE_BENCH names the program (default: macnode-bench beside this script); MPIRUN the launcher
# (default: mpirun --oversubscribe, TCP on lo only).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bench=${MACNODE_BENCH:-$here/macnode-bench}
n=4 min=1M max=64M algo=auto iters=10 rounds=3 extra="" method=turns
while getopts n:b:e:A:i:r:M:x: opt; do
  case $opt in
    n) n=$OPTARG ;; b) min=$OPTARG ;; e) max=$OPTARG ;; A) algo=$OPTARG ;; i) iters=$OPTARG ;; r) rounds=$OPTARG ;;
    M) method=$OPTARG ;; x) extra=$OPTARG ;;
    *) echo "usage: $0 [-n RANKS] [-b SIZE] [-e SIZE] [-A auto|mesh|ring] [-i ITERS] [-r ROUNDS] [-M turns|launches] [-x ARGS]" >&2
       exit 2 ;;
  esac
done
case $method in
  turns|launches) ;;
  *) echo "$0: -M takes turns or launches, not '$method'" >&2; exit 2 ;;
esac
case $rounds in
  [1-9]|[1-9][0-9]) ;;
  *) echo "$0: -r takes a number of rounds from 1 to 99, not '$rounds'" >&2; exit 2 ;;
esac
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
mpirun=${MPIRUN:-"mpirun $root --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$method" = turns ]; then
  # one launch for the sweeps and one for the 8-byte runs; each output split by its transport column
  $mpirun -np "$n" "$bench" -T both --turns "$rounds" -A "$algo" $extra -b "$min" -e "$max" -n "$iters" -w 2 -F csv >"$tmp/both.csv"
  $mpirun -np "$n" "$bench" -T both --turns "$rounds" -A "$algo" $extra -b 8 -e 8 -n 500 -w 50 -F csv >"$tmp/both8.csv"
  for f in both both8; do
    to=${f#both}
    awk -F, '$1 == "op" || $2 != "mpi"' "$tmp/$f.csv" >"$tmp/tcp$to.csv"
    awk -F, '$1 == "op" || $2 == "mpi"' "$tmp/$f.csv" >"$tmp/mpi$to.csv"
  done
else
  r=0
  while [ "$r" -lt "$rounds" ]; do
    r=$((r + 1))
    "$bench" -l "$n" -A "$algo" $extra -b "$min" -e "$max" -n "$iters" -w 2 -F csv >>"$tmp/tcp.csv"
    $mpirun -np "$n" "$bench" -T mpi -b "$min" -e "$max" -n "$iters" -w 2 -F csv >>"$tmp/mpi.csv"
    "$bench" -l "$n" -A "$algo" $extra -b 8 -e 8 -n 500 -w 50 -F csv >>"$tmp/tcp8.csv"
    $mpirun -np "$n" "$bench" -T mpi -b 8 -e 8 -n 500 -w 50 -F csv >>"$tmp/mpi8.csv"
  done
fi
"$bench" -l 2 -o p2p -b 8 -e "$max" -n "$iters" -w 2 -L 500 -F csv >"$tmp/p2p.csv"
awk -v what="$n ranks on $(hostname) ($(getconf _NPROCESSORS_ONLN) cores), loopback, in $method, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')" \
  -f "$here/bench-report.awk" "$tmp/tcp.csv" "$tmp/mpi.csv" "$tmp/tcp8.csv" "$tmp/mpi8.csv" "$tmp/p2p.csv"
