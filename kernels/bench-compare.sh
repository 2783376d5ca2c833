#!/bin/sh
# collbench-compare.sh: one run that compares libtbmcoll's TCP all-reduce with Open MPI's MPI_Allreduce on
# this host (N local ranks over loopback) and prints the ratios: busbw per size from -b to -e, the 8-byte
# latency, and busbw as a fraction of the point-to-point TCP rate of one link (2 ranks, sendrecv).
# Usage: collbench-compare.sh [-n RANKS] [-b SIZE] [-e SIZE] [-A auto|mesh|ring] [-i ITERS]
# MPIRUN overrides the launcher (default: mpirun --oversubscribe, TCP on lo only).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bench=${TBM_COLLBENCH:-$here/tbm-collbench}
n=4 min=1M max=64M algo=auto iters=10
while getopts n:b:e:A:i: opt; do
  case $opt in
    n) n=$OPTARG ;; b) min=$OPTARG ;; e) max=$OPTARG ;; A) algo=$OPTARG ;; i) iters=$OPTARG ;;
    *) echo "usage: $0 [-n RANKS] [-b SIZE] [-e SIZE] [-A auto|mesh|ring] [-i ITERS]" >&2; exit 2 ;;
  esac
done
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
mpirun=${MPIRUN:-"mpirun $root --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bench" -l "$n" -A "$algo" -b "$min" -e "$max" -n "$iters" -w 2 -F csv >"$tmp/tcp.csv"
$mpirun -np "$n" "$bench" -T mpi -b "$min" -e "$max" -n "$iters" -w 2 -F csv >"$tmp/mpi.csv"
"$bench" -l "$n" -A "$algo" -b 8 -e 8 -n 500 -w 50 -F csv >"$tmp/tcp8.csv"
$mpirun -np "$n" "$bench" -T mpi -b 8 -e 8 -n 500 -w 50 -F csv >"$tmp/mpi8.csv"
"$bench" -l 2 -o sendrecv -b "$max" -e "$max" -n "$iters" -w 2 -F csv >"$tmp/p2p.csv"

echo "# all-reduce f32 sum, $n ranks on $(hostname) ($(getconf _NPROCESSORS_ONLN) cores), load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
awk -F, -v n="$n" '
  FNR == 1 { file++; next }
  file == 1 { tcp[$4 "," $9] = $12; algo = $2; sizes[$4] = 1 }
  file == 2 { mpi[$4 "," $9] = $12 }
  file == 3 && $9 == "out-of-place" { t8 = $10 }
  file == 4 && $9 == "out-of-place" { m8 = $10 }
  file == 5 { link = $12 }
  END {
    printf "#%13s %-13s %12s %12s %7s %9s\n", "size (B)", "placement", "tcp busbw", "mpi busbw", "ratio", "of link"
    worst = -1
    for (s in sizes) order[++k] = s + 0
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (order[j] < order[i]) { t = order[i]; order[i] = order[j]; order[j] = t }
    for (i = 1; i <= k; i++) for (p = 0; p < 2; p++) {
      pl = p ? "in-place" : "out-of-place"; key = order[i] "," pl
      r = (mpi[key] > 0 ? tcp[key] / mpi[key] : 0)
      if (worst < 0 || r < worst) worst = r
      printf "%14d %-13s %9.3f GB/s %7.3f GB/s %7.2f %8.0f%%\n", order[i], pl, tcp[key], mpi[key], r, (link > 0 ? 100 * tcp[key] / link : 0)
    }
    printf "# %s: busbw ratio tcp/mpi, lowest over the sweep: %.2f\n", algo, worst
    printf "# 8-byte all-reduce: tcp %.1f us, mpi %.1f us (ratio %.2f)\n", t8, m8, (m8 > 0 ? t8 / m8 : 0)
    printf "# point-to-point TCP rate of one link (2 ranks, sendrecv, largest size): %.3f GB/s\n", link
  }' "$tmp/tcp.csv" "$tmp/mpi.csv" "$tmp/tcp8.csv" "$tmp/mpi8.csv" "$tmp/p2p.csv"
