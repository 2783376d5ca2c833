#!/bin/sh
# bench-compare.sh: one run on this host (N local ranks over loopback) comparing libtbmcoll's TCP all-reduce
# with Open MPI's MPI_Allreduce: busbw per size from -b to -e and their ratio, the 8-byte latency, and busbw
# as a share of one link's rate (2 ranks, -o p2p). For the lab's Thunderbolt mesh see tests/perf/mesh-vs-mpi.sh.
# Two Open MPI peers (-P both, the default; -P default: the first alone, no search):
#   mpi: Open MPI with its defaults (TCP BTL on lo, its own choice of all-reduce algorithm);
#   tuned: Open MPI set up for these links by a search first, runs of Open MPI alone (`macnode bench -T mpi`,
#     -s ITERS timed iterations each, the check off), -S ROUNDS rounds taken in turns, medians:
#     1. its all-reduce algorithm per size, with its default BTL settings: coll_tuned_use_dynamic_rules 1 and
#        coll_tuned_allreduce_algorithm forced to each algorithm ompi_info lists, and its own choice, over the
#        sweep (the harmonic mean of both placements' busbw: the least time for the two) and at 8 bytes (the
#        time); the fastest at each size goes in a rules file (coll_tuned_dynamic_rules_filename), Open MPI's
#        own choice at the sizes not measured;
#     2. its TCP BTL's settings with those rules, at the sweep's smallest and largest sizes (the geometric
#        mean busbw of both sizes and placements), one setting after the other, each of its values against
#        the current one: socket buffers (btl_tcp_sndbuf and rcvbuf: 0, the kernel's autotuning, or 4 MiB),
#        links per peer (btl_tcp_links 1, 2, 4), then eager limit, rendezvous eager limit and send size
#        together (btl_tcp_eager_limit/rndv_eager_limit/max_send_size: 64K/64K/128K, Open MPI 4.1's own,
#        256K/256K/1M or 1M/1M/4M); another value is taken when it is 5% above the current one.
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
# iterations per run (4) and rounds (1). -x: more options for libtbmcoll's runs (macnode bench's own, e.g.
# "-S 1 -s 0"), for experiments.
# MACNODE_BENCH names the program (default: macnode-bench beside this script); MPIRUN the launcher
# (default: mpirun --oversubscribe, TCP on lo only). The search says what it runs on stderr.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bench=${MACNODE_BENCH:-$here/macnode-bench}
n=4 min=1M max=64M algo=auto iters=10 rounds=3 extra="" method=turns bind="" peers=both siters=4 srounds=1
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
case $siters in
  [1-9]|[1-9][0-9]) ;;
  *) bad "-s takes a number of iterations for the search from 1 to 99, not '$siters'" ;;
esac
case $srounds in
  [1-9]) ;;
  *) bad "-S takes a number of rounds for the search from 1 to 9, not '$srounds'" ;;
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
# bytes SIZE: a size as macnode bench takes it (digits, then K, M or G) in bytes
bytes() {
  case $1 in
    *[!0-9KkMmGg]*|[!1-9]*|*[KkMmGg]?*|???????????*) return 1 ;;
    *[Kk]) echo $((${1%?} * 1024)) ;;
    *[Mm]) echo $((${1%?} * 1048576)) ;;
    *[Gg]) echo $((${1%?} * 1073741824)) ;;
    *) echo "$1" ;;
  esac
}
minb=$(bytes "$min") || bad "-b takes a size (digits, then K, M or G: 1M), not '$min'"
maxb=$(bytes "$max") || bad "-e takes a size (digits, then K, M or G: 64M), not '$max'"
[ "$minb" -le "$maxb" ] || bad "-b must not exceed -e ($min > $max)"
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
  # --- the search for the tuned peer: Open MPI alone, a run per algorithm, then a run per BTL setting ---
  # search OUT "OPTIONS" ARGS...: one run of Open MPI alone with those mpirun options and macnode bench
  # arguments, its CSV in OUT; says so and fails when the run fails
  search() {
    out=$1 opts=$2; shift 2
    if $mpirun $mbind $opts -np "$n" "$bench" -T mpi -c 0 --progress off -F csv "$@" </dev/null >"$out" 2>"$tmp/err"; then
      return 0
    fi
    say "search: a run failed ($opts): $(tail -n 3 "$tmp/err" | tr '\n' ' ')"
    rm -f "$out"
    return 1
  }
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
      say "search: round $r of $srounds: algorithm $a ($name), $min to $max and 8 bytes"
      opts=$(btl $def)
      [ "$a" = 0 ] || opts="$opts --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm $a"
      if search "$tmp/s.csv" "$opts" -b "$min" -e "$max" -n "$siters" -w 1; then
        awk -F, -v a="$a" '$1 == "allreduce" { if ($12 > 0) s[$4] += 1 / $12; else z[$4] = 1; c[$4]++ }
                           END { for (k in c) print "s", k, a, (k in z ? 0 : c[k] / s[k]) }' "$tmp/s.csv" >>"$tmp/scores"
      fi
      if search "$tmp/s.csv" "$opts" -b 8 -e 8 -n 100 -w 10; then
        awk -F, -v a="$a" '$1 == "allreduce" { s += $10; c++ } END { if (c) print "l", 8, a, s / c }' "$tmp/s.csv" >>"$tmp/scores"
      fi
    done <"$tmp/algs"
  done
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
  { echo 1; echo 2; echo 1; echo "$n"; wc -l <"$tmp/won"; awk '{ print $1, $2, 0, 0 }' "$tmp/won"; } >"$tmp/allreduce.rules"
  rules="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename $tmp/allreduce.rules"
  # BTL settings, with those rules, at the sweep's smallest and largest sizes (at most 2^20 apart): one
  # setting after the other, its values (the current one first) in -S rounds taken in turns; the best other
  # value replaces the current one when its busbw (the median of its rounds' geometric means over both sizes
  # and placements) is 5% above the current one's
  top=$minb f=1
  while [ $((top * 2)) -le "$maxb" ] && [ "$f" -lt 1048576 ]; do top=$((top * 2)) f=$((f * 2)); done
  low=$((top / f))
  if [ "$f" -gt 1 ]; then sizes="-b $low -e $top -f $f"; else sizes="-b $low -e $low"; fi
  # btl_score SETTINGS: the busbw of those settings (0 when the run failed)
  btl_score() {
    if search "$tmp/s.csv" "$(btl $1) $rules" $sizes -n "$siters" -w 1; then
      awk -F, '$1 == "allreduce" { if ($12 <= 0) z = 1; else l += log($12); c++ } END { printf "%.4f\n", (c && !z ? exp(l / c) : 0) }' "$tmp/s.csv"
    else echo 0; fi
  }
  # others CURRENT VALUE...: the values, the current one first
  others() { c=$1; shift; echo "$c"; for v in "$@"; do [ "$v" = "$c" ] || echo "$v"; done; }
  # with_dim SETTINGS DIM VALUE: the five BTL values (sndbuf, links, eager, rndv, max send) with DIM set to VALUE
  with_dim() {
    wd=$2 wv=$3
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
        say "search: round $r of $srounds: BTL at $low and $top bytes, $said $v"
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
  tuned="$(btl $cur) $rules"
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
"$bench" -l 2 $lbind -o p2p -b 8 -e "$max" -n "$iters" -w 2 -L 500 -F csv >"$tmp/p2p.csv"
what="$n ranks on $(hostname) ($cores cores), loopback, in $method, $where, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
if [ "$peers" = default ]; then
  awk -v what="$what" -f "$here/bench-report.awk" "$tmp/tcp.csv" "$tmp/mpi.csv" "$tmp/tcp8.csv" "$tmp/mpi8.csv" "$tmp/p2p.csv"
  exit 0
fi
# the algorithm that won at each size, named, for the report
awk 'NR == FNR { name[$1] = $2; next } { print $1, $2, ($2 == 0 ? "own" : name[$2]) }' "$tmp/algs" "$tmp/won" >"$tmp/wonnamed"
awk -v what="$what" -v launches="$([ "$method" = launches ] && echo 1 || echo 0)" -v ttcp="$tmp/ttcp.csv" -v tmpi="$tmp/tmpi.csv" -v ttcp8="$tmp/ttcp8.csv" -v tmpi8="$tmp/tmpi8.csv" \
  -v won="$tmp/wonnamed" -f "$here/bench-report.awk" "$tmp/tcp.csv" "$tmp/mpi.csv" "$tmp/tcp8.csv" "$tmp/mpi8.csv" "$tmp/p2p.csv"
# how the tuned peer was found, and how to run it again
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
set -- $cur
summary=$(awk '{ x = ($2 == 0 ? "own choice" : $2 " " $3) } x != last { printf "%s%s from %s B", (NR > 1 ? ", " : ""), x, $1; last = x }' "$tmp/wonnamed")
echo "# tuned settings: btl_tcp_sndbuf=$1 btl_tcp_rcvbuf=$1 btl_tcp_links=$2 btl_tcp_eager_limit=$3 btl_tcp_rndv_eager_limit=$4 btl_tcp_max_send_size=$5; all-reduce algorithm: $summary"
printf "# to run it again: printf '%s' >allreduce.rules\n" "$(awk '{ printf "%s\\n", $0 }' "$tmp/allreduce.rules")"
echo "#   $(echo "$mpirun $mbind $(btl $cur) --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename allreduce.rules" \
  "-np $n $bench -T both --turns $rounds -A $algo $extra -b $min -e $max -n $iters -w 2 -F csv" | tr -s ' ')"
