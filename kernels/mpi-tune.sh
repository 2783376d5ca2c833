#!/bin/sh
# mpi-tune.sh: Open MPI set up for the links as one would tune it by hand, found by a search: the peer that
# kernels/bench-compare.sh (loopback, one host) and tests/perf/mesh-vs-mpi.sh (the lab's Macs) compare
# libtbmcoll with beside Open MPI's defaults. Runs of Open MPI alone (`macnode bench -T mpi`, the check off,
# -s ITERS timed iterations each after one warm-up), -S ROUNDS rounds taken in turns, each figure the median:
#   1. its all-reduce algorithm per size, with its default BTL settings: coll_tuned_use_dynamic_rules 1 and
#      coll_tuned_allreduce_algorithm forced to each algorithm ompi_info lists, and its own choice (0), over the
#      sweep from -b to -e (per size the harmonic mean of both placements' busbw: the least time for the two)
#      and at 8 bytes (the mean time); the fastest at each size goes in a rules file
#      (coll_tuned_dynamic_rules_filename, the classic format), Open MPI's own choice at the sizes not measured
#      below the sweep, the rule of the size below between two of the sweep's;
#   2. its TCP BTL's settings with those rules, at the sweep's smallest and largest sizes (at most 2^20 apart;
#      the geometric mean busbw of both sizes and placements), one setting after the other, each of its values
#      against the current one: socket buffers (btl_tcp_sndbuf and rcvbuf: 0, the kernel's autotuning, or
#      4 MiB), links per peer (btl_tcp_links 1, 2, 4), then eager limit, rendezvous eager limit and send size
#      together (btl_tcp_eager_limit/rndv_eager_limit/max_send_size: 64K/64K/128K, Open MPI 4.1's own,
#      256K/256K/1M or 1M/1M/4M); another value is taken when it is 5% above the current one, so that a
#      difference inside the noise leaves Open MPI's own.
# A run that takes longer than -t SECONDS (120) is stopped and counts as failed: some settings make Open MPI
# crawl (4 links per peer between the lab's Macs moved under 0.1 GB/s), and the search must end.
# Usage: mpi-tune.sh -n RANKS -b SIZE -e SIZE [-s ITERS] [-S ROUNDS] [-t SECONDS] -o DIR MPIRUN [OPTION...]
#   MPIRUN [OPTION...]: how the ranks are started, up to -np (which mpi-tune adds), e.g.
#   "mpirun --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo --bind-to core --map-by core".
#   MACNODE_BENCH names the program (default: macnode-bench beside this script); every rank must reach it
#   and DIR at the same paths.
# Writes in DIR (made if missing, must be empty of these names):
#   allreduce.rules  the rules file (Open MPI reads it by its path: DIR must be a path every rank sees);
#   mca              the tuned peer's mpirun options, one line (--mca NAME VALUE ...), the rules by DIR's path;
#   won              "SIZE ALGORITHM NAME" per rule (0 own: Open MPI's own choice);
#   settings         "SNDBUF LINKS EAGER RNDV MAXSEND", the BTL values taken;
#   report           '#' lines: the search's figures, what was taken, and the tuned settings in one line.
# Says what it runs on stderr ("mpi-tune: ..."). Exit 0; 2 bad usage; 1 when no algorithm ran at all.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bench=${MACNODE_BENCH:-$here/macnode-bench}
n="" min="" max="" siters=4 srounds=1 dir="" limit=120
usage="usage: $0 -n RANKS -b SIZE -e SIZE [-s ITERS] [-S ROUNDS] [-t SECONDS] -o DIR MPIRUN [OPTION...]"
bad() { echo "mpi-tune: $*" >&2; exit 2; }
while getopts n:b:e:s:S:t:o: opt; do
  case $opt in
    n) n=$OPTARG ;; b) min=$OPTARG ;; e) max=$OPTARG ;; s) siters=$OPTARG ;; S) srounds=$OPTARG ;; o) dir=$OPTARG ;;
    t) limit=$OPTARG ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || bad "no MPIRUN command to start the ranks ($usage)"
launcher="$*"   # split into words again where it runs (paths with spaces are not taken)
case $n in
  [2-9]|[1-9][0-9]) ;;
  *) bad "-n takes a number of ranks from 2 to 99, not '$n'" ;;
esac
case $limit in
  [1-9]|[1-9][0-9]|[1-9][0-9][0-9]|[1-9][0-9][0-9][0-9]) ;;
  *) bad "-t takes the seconds a run may take, 1 to 9999, not '$limit'" ;;
esac
. "$here/bench-args.sh"
check_search "$siters" "$srounds"
check_sizes "$min" "$max"
[ -n "$dir" ] || bad "-o names the folder for the rules file and the settings"
case $dir in
  /*) ;;
  *) dir=$(pwd)/$dir ;;
esac
case $dir in
  *[!A-Za-z0-9/._+-]*) bad "-o: the folder's path must hold only letters, digits and / . _ + - (Open MPI reads it from an option), not '$dir'" ;;
esac
mkdir -p "$dir" || bad "-o: cannot make the folder $dir"
for f in allreduce.rules mca won settings report; do
  [ ! -e "$dir/$f" ] && [ ! -L "$dir/$f" ] || bad "-o: $dir/$f exists already: give an empty folder"
done
[ -x "$bench" ] || bad "$bench is not built (scripts/build.sh; MACNODE_BENCH names another)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say() { echo "mpi-tune: $*" >&2; }

# search OUT "OPTIONS": one run of Open MPI alone with those mpirun options and macnode bench's arguments
# run_args, its CSV in OUT; says so and fails when the run fails
search() {
  out=$1 opts=$2; shift 2
  # (the launcher and options are split into words on purpose)
  # shellcheck disable=SC2086
  timeout -k 10 "$limit" $launcher $opts -np "$n" "$bench" -T mpi -c 0 --progress off -F csv $run_args </dev/null \
    >"$out" 2>"$tmp/err" && return 0
  rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    say "a run took over $limit s and was stopped; it counts as failed ($opts)"
  else
    say "a run failed ($opts): $(tail -n 3 "$tmp/err" | tr '\n' ' ')"
  fi
  rm -f "$out"
  return 1
}
# run_args: the bench's arguments of a search run, set before each search
# the BTL settings Open MPI has here, as ompi_info says (Open MPI 4.1's where it does not)
btl_default() {
  v=$(ompi_info --param btl tcp --level 9 --parsable 2>/dev/null | sed -n "s/^mca:btl:tcp:param:btl_tcp_$1:value://p" | head -n 1)
  echo "${v:-$2}"
}
# btl SNDBUF LINKS EAGER RNDV MAXSEND: the mpirun options for those TCP BTL settings
btl() {
  echo "--mca btl_tcp_sndbuf $1 --mca btl_tcp_rcvbuf $1 --mca btl_tcp_links $2 --mca btl_tcp_eager_limit $3" \
       "--mca btl_tcp_rndv_eager_limit $4 --mca btl_tcp_max_send_size $5"
}
def="$(btl_default sndbuf 0) $(btl_default links 1) $(btl_default eager_limit 65536) $(btl_default rndv_eager_limit 65536) $(btl_default max_send_size 131072)"
# the all-reduce algorithms this Open MPI has (0: its own choice)
ompi_info --param coll tuned --level 9 --parsable 2>/dev/null |
  sed -n 's/^mca:coll:tuned:param:coll_tuned_allreduce_algorithm:enumerator:value:\([0-9]*\):\(.*\)/\1 \2/p' |
  awk '$1 != 0' >"$tmp/algs1"
[ -s "$tmp/algs1" ] || { say "ompi_info names no all-reduce algorithm: trying 1 to 6"; printf '%s\n' 1 2 3 4 5 6 >"$tmp/algs1"; }
{ echo "0 own"; cat "$tmp/algs1"; } >"$tmp/algs"
# algorithms, with Open MPI's default BTL settings: per size the harmonic mean of both placements' busbw (the
# algorithm that takes the least time for the two; "s SIZE ALG GB/s"), at 8 bytes the mean time ("l 8 ALG
# us"); -S rounds, each algorithm once per round, in turn
: >"$tmp/scores"
r=0
while [ "$r" -lt "$srounds" ]; do
  r=$((r + 1))
  while read -r a name; do
    say "round $r of $srounds: algorithm $a ($name), $min to $max and 8 bytes"
    opts=$(btl $def)
    [ "$a" = 0 ] || opts="$opts --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm $a"
    run_args="-b $min -e $max -n $siters -w 1"
    if search "$tmp/s.csv" "$opts"; then
      awk -F, -v a="$a" '$1 == "allreduce" { if ($12 > 0) s[$4] += 1 / $12; else z[$4] = 1; c[$4]++ }
                         END { for (k in c) print "s", k, a, (k in z ? 0 : c[k] / s[k]) }' "$tmp/s.csv" >>"$tmp/scores"
    fi
    run_args="-b 8 -e 8 -n 100 -w 10"
    if search "$tmp/s.csv" "$opts"; then
      awk -F, -v a="$a" '$1 == "allreduce" { s += $10; c++ } END { if (c) print "l", 8, a, s / c }' "$tmp/s.csv" >>"$tmp/scores"
    fi
  done <"$tmp/algs"
done
[ -s "$tmp/scores" ] || { say "no run of Open MPI succeeded: nothing to tune"; exit 1; }
# each one's median over the rounds ("KIND SIZE ALG VALUE")
awk '{ k = $1 " " $2 " " $3; v[k, ++c[k]] = $4 }
     END { for (k in c) { m = c[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
                          for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
                          print k, (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2) } }' "$tmp/scores" >"$tmp/medians"
# the winners ("SIZE ALG", the 8-byte run's for 8 bytes) and Open MPI's rules file: for each message size
# (bytes), the algorithm from there up; 0 is Open MPI's own choice, below the sweep but at 8 bytes
awk -v min="$minb" '
  { k = $2
    if (!(($1, k) in best) || ($1 == "l" ? $4 < best[$1, k] : $4 > best[$1, k])) { best[$1, k] = $4; won[$1, k] = $3 } }
  END { for (key in won) { split(key, p, SUBSEP); if (p[1] == "l") rule[p[2]] = won[key] }
        for (key in won) { split(key, p, SUBSEP); if (p[1] == "s" && !(p[2] in rule)) rule[p[2]] = won[key] }
        if (!(0 in rule)) rule[0] = 0
        if ((8 in rule) && min > 9) rule[9] = 0
        for (s in rule) print s, rule[s] }' "$tmp/medians" | sort -n >"$tmp/won"
{ echo 1; echo 2; echo 1; echo "$n"; wc -l <"$tmp/won"; awk '{ print $1, $2, 0, 0 }' "$tmp/won"; } >"$dir/allreduce.rules"
rules="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename $dir/allreduce.rules"
# BTL settings, with those rules, at the sweep's smallest and largest sizes (at most 2^20 apart): one setting
# after the other, its values (the current one first) in -S rounds taken in turns; the best other value
# replaces the current one when its busbw (the median of its rounds' geometric means over both sizes and
# placements) is 5% above the current one's
top=$minb f=1
while [ $((top * 2)) -le "$maxb" ] && [ "$f" -lt 1048576 ]; do top=$((top * 2)) f=$((f * 2)); done
low=$((top / f))
if [ "$f" -gt 1 ]; then sizes="-b $low -e $top -f $f"; else sizes="-b $low -e $low"; fi
# btl_score SETTINGS: the busbw of those settings (0 when the run failed)
btl_score() {
  run_args="$sizes -n $siters -w 1"
  if search "$tmp/s.csv" "$(btl $1) $rules"; then
    awk -F, '$1 == "allreduce" { if ($12 <= 0) z = 1; else l += log($12); c++ } END { printf "%.4f\n", (c && !z ? exp(l / c) : 0) }' "$tmp/s.csv"
  else echo 0; fi
}
# others CURRENT VALUE...: the values, the current one first
others() { c=$1; shift; echo "$c"; for v in "$@"; do [ "$v" = "$c" ] || echo "$v"; done; }
# with_dim SETTINGS DIM VALUE: the five BTL values (sndbuf, links, eager, rndv, max send) with DIM set to VALUE
with_dim() {
  wd=$2 wv=$3
  # shellcheck disable=SC2086
  set -- $1
  case $wd in
    sndbuf) echo "$wv $2 $3 $4 $5" ;;
    links) echo "$1 $wv $3 $4 $5" ;;
    limits) echo "$1 $2 $(echo "$wv" | tr / ' ')" ;;
  esac
}
cur=$def
: >"$tmp/btl.log"
for dim in sndbuf links limits; do
  # shellcheck disable=SC2086
  set -- $cur
  case $dim in
    sndbuf) vals=$(others "$1" 0 4194304) said="sndbuf/rcvbuf" ;;
    links) vals=$(others "$2" 1 2 4) said="links" ;;
    limits) vals=$(others "$3/$4/$5" 65536/65536/131072 262144/262144/1048576 1048576/1048576/4194304) said="eager/rndv/max send" ;;
  esac
  : >"$tmp/dim"
  r=0
  while [ "$r" -lt "$srounds" ]; do
    r=$((r + 1))
    for v in $vals; do
      cand=$(with_dim "$cur" "$dim" "$v")
      say "round $r of $srounds: BTL at $low and $top bytes, $said $v"
      echo "$v $(btl_score "$cand")" >>"$tmp/dim"
    done
  done
  # two lines: the value kept, and the log line (each value's median)
  got=$(awk -v said="$said" '
    { if (!($1 in c)) order[++k] = $1; v[$1, ++c[$1]] = $2 }
    END {
      for (i = 1; i <= k; i++) {
        key = order[i]; m = c[key]; delete a
        for (j = 1; j <= m; j++) a[j] = v[key, j]
        for (j = 2; j <= m; j++) { x = a[j]; for (h = j - 1; h >= 1 && a[h] > x; h--) a[h + 1] = a[h]; a[h + 1] = x }
        med[key] = (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2)
      }
      keep = order[1]
      for (i = 2; i <= k; i++) if (med[order[i]] > 1.05 * med[order[1]] && med[order[i]] > med[keep]) keep = order[i]
      line = said
      for (i = 1; i <= k; i++)
        line = line sprintf("%s %s: %.4f%s", (i > 1 ? " |" : ""), order[i], med[order[i]],
                            (i == 1 ? " (current)" : order[i] == keep ? " (taken)" : ""))
      print keep; print line }' "$tmp/dim")
  keep=$(echo "$got" | sed -n 1p)
  echo "$got" | sed -n 2p >>"$tmp/btl.log"
  cur=$(with_dim "$cur" "$dim" "$keep")
done
echo "$cur" >"$dir/settings"
echo "$(btl $cur) $rules" >"$dir/mca"
# the algorithm that won at each size, named
awk 'NR == FNR { name[$1] = $2; next } { print $1, $2, ($2 == 0 ? "own" : name[$2]) }' "$tmp/algs" "$tmp/won" >"$dir/won"
{
  echo "# tuned Open MPI, found before the comparison by runs of Open MPI alone ($siters iterations each, 100 at 8 bytes;"
  echo "# $srounds round(s) taken in turns, each figure the median):"
  echo "#   algorithms with its default BTL settings (coll_tuned_allreduce_algorithm; 0 its own choice): the harmonic"
  echo "#   mean of both placements' busbw in GB/s, at 8 bytes the mean time in us; * the fastest, which the rules take"
  awk 'NR == FNR { name[$1] = $2; ids[++m] = $1; next }
       { key = ($1 == "l" ? "8 B" : $2); v[key, $3] = $4; if (!(key in seen)) { seen[key] = 1; order[++k] = key; num[key] = ($1 == "l" ? -1 : $2 + 0) } }
       END {
         printf "#   %12s", "size (B)"; for (i = 1; i <= m; i++) printf " %14s", ids[i] " " substr(name[ids[i]], 1, 12); printf "\n"
         for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (num[order[j]] < num[order[i]]) { t = order[i]; order[i] = order[j]; order[j] = t }
         for (i = 1; i <= k; i++) {
           key = order[i]; b = ""
           for (j = 1; j <= m; j++) if ((key, ids[j]) in v && (b == "" || (key == "8 B" ? v[key, ids[j]] < v[key, b] : v[key, ids[j]] > v[key, b]))) b = ids[j]
           printf "#   %12s", key
           for (j = 1; j <= m; j++) {
             if (!((key, ids[j]) in v)) { printf " %14s", "failed"; continue }
             printf (key == "8 B" ? " %13.1f%s" : " %13.3f%s"), v[key, ids[j]], (ids[j] == b ? "*" : " ")
           }
           printf "\n"
         } }' "$tmp/algs" "$tmp/medians"
  echo "#   BTL settings with those rules at $low and $top bytes, one after the other: geometric mean busbw in GB/s;"
  echo "#   another value taken when 5% above the current one"
  sed 's/^/#     /' "$tmp/btl.log"
  # shellcheck disable=SC2086
  set -- $cur
  summary=$(awk '{ x = ($2 == 0 ? "own choice" : $2 " " $3) } x != last { printf "%s%s from %s B", (NR > 1 ? ", " : ""), x, $1; last = x }' "$dir/won")
  echo "# tuned settings: btl_tcp_sndbuf=$1 btl_tcp_rcvbuf=$1 btl_tcp_links=$2 btl_tcp_eager_limit=$3 btl_tcp_rndv_eager_limit=$4 btl_tcp_max_send_size=$5; all-reduce algorithm: $summary"
} >"$dir/report"
