#!/usr/bin/env bash
# mesh-vs-mpi.sh: libtbmcoll against Open MPI over the same Thunderbolt links of the lab, in one run, on the
# 4 Macs of one group (studio-a: the full mesh; mini-b: the ring):
#  - libtbmcoll as a user runs it: `macnode bench` under srun in a --gres=tbmesh job (bridge mode on
#    studio-a), from MLX's environment (JACCL matrix and coordinator on a mesh, ring hostfile on a ring);
#  - Open MPI's MPI_Allreduce: mpirun on the bridge host starts one rank in each Mac (the lab's rsh
#    stands in for ssh between Macs), BTL tcp on the Thunderbolt addresses only (169.254.0.0/16; the routes
#    come from macnode netplan), mpi_yield_when_idle as the ranks share the cores;
#  - every cable alone (-o p2p) with both, for the rate of one link;
#  - every rank sending to the next while receiving (-o sendrecv, libtbmcoll), the yardstick of each size:
#    what the kernel's TCP moves per rank when every rank sends and receives at once, as in an all-reduce.
# Prints all-reduce busbw per size with the ratio (target: at least 1.2 from 1 MiB to 64 MiB), the 8-byte
# latency of both (target: no worse than Open MPI), busbw as a share of one link's rate, and the per-cable
# table. CPU: every rank, the kernel's veth and TCP work share the machine's cores (2 here): say so.
# How the two take turns (-M):
#  - turns (the default): in one tbmesh job, `mpirun --map-by node` starts one rank in each Mac that holds
#    both, libtbmcoll's mesh from MLX's environment and Open MPI (`macnode bench -T both`), and at each size
#    the two take turns ROUNDS times each, so each pair of figures is taken within a second (the machine's
#    speed swings from second to second); a launch that Open MPI's own crash in MPI_Init ends (see
#    tests/lab/0110-kernels.t) is tried once more, and said;
#  - launches: whole runs taken in turns ROUNDS times, libtbmcoll's by srun in the job, Open MPI's by mpirun
#    from the bridge host, as above.
# Each side's figure is the median of its rounds, the rounds' ratios printed beside it.
# Two Open MPI peers (-P both, the default; -P default: the first alone): Open MPI with its defaults, and Open
# MPI tuned for these links by a search first (kernels/mpi-tune.sh: its all-reduce algorithm per size, then
# its TCP BTL's settings; runs of Open MPI alone, -s ITERS iterations each, -S ROUNDS rounds), started from
# the bridge host as root over the same links; the tuned peer then runs as the other one does, beside
# libtbmcoll (in turns, its own launch). The rules file lies in a root-owned folder of the lab's work folder,
# which every Mac sees.
# Usage: tests/perf/mesh-vs-mpi.sh [-g GROUP] [-b SIZE] [-e SIZE] [-n ITERS] [-r ROUNDS] [-M turns|launches]
#                                  [-P both|default] [-s ITERS] [-S ROUNDS] [-t SECONDS] [-x ARGS]
#   -t: the longest a run of the search may take (mpi-tune.sh's -t, 120)
#   (as root, with the lab up); -x: more options for libtbmcoll's sweep and 8-byte run (e.g. "-S 1")
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
group=studio-a min=1M max=64M iters=10 rounds=3 extra= method=turns peers=both siters=4 srounds=1 limit=120
while getopts g:b:e:n:r:M:x:P:s:S:t: opt; do
    case $opt in
        g) group=$OPTARG ;; b) min=$OPTARG ;; e) max=$OPTARG ;; n) iters=$OPTARG ;; r) rounds=$OPTARG ;;
        M) method=$OPTARG ;; x) extra=$OPTARG ;; P) peers=$OPTARG ;; s) siters=$OPTARG ;; S) srounds=$OPTARG ;;
        t) limit=$OPTARG ;;
        *) echo "usage: $0 [-g GROUP] [-b SIZE] [-e SIZE] [-n ITERS] [-r ROUNDS] [-M turns|launches] [-P both|default] [-s ITERS] [-S ROUNDS] [-t SECONDS] [-x ARGS]" >&2
           exit 2 ;;
    esac
done
[[ "$method" =~ ^(turns|launches)$ ]] || { echo "mesh-vs-mpi: -M takes turns or launches, not '$method'" >&2; exit 2; }
[[ "$peers" =~ ^(both|default)$ ]] || { echo "mesh-vs-mpi: -P takes both or default, not '$peers'" >&2; exit 2; }
[[ "$limit" =~ ^[1-9][0-9]{0,3}$ ]] || { echo "mesh-vs-mpi: -t takes the seconds a run of the search may take, 1 to 9999, not '$limit'" >&2; exit 2; }
# the sizes and the search's options, checked as bench-compare.sh and mpi-tune.sh check them
bad() { echo "mesh-vs-mpi: $*" >&2; exit 2; }
. "$here/kernels/bench-args.sh"
check_search "$siters" "$srounds"
check_sizes "$min" "$max"
[[ "$iters" =~ ^[1-9][0-9]{0,3}$ ]] || { echo "mesh-vs-mpi: -n takes a number of iterations from 1 to 9999, not '$iters'" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || { echo "mesh-vs-mpi: -r takes a number of rounds from 1 to 99, not '$rounds'" >&2; exit 2; }
re_opts='^[-A-Za-z0-9 .=]*$'
[[ "$extra" =~ $re_opts ]] ||
    { echo "mesh-vs-mpi: -x takes macnode bench options (letters, digits, '-', '.', '=', spaces), not '$extra'" >&2; exit 2; }
LAB=${TBMESH_LAB_DIR:-/var/lib/tbmesh-lab}
export SLURM_CONF=$LAB/etc/slurm.conf
[ "$(id -u)" = 0 ] || { echo "mesh-vs-mpi: run as root (mpirun enters the Macs' namespaces)" >&2; exit 2; }
scontrol ping > /dev/null 2>&1 || { echo "mesh-vs-mpi: the lab is not up (lab/tbmesh-lab up)" >&2; exit 1; }
inst=${TBMESH_INST:-$LAB/inst}   # what the nodes run, as the lab installed it at up
macnode=$inst/bin/macnode
bench=$inst/libexec/slurm-tbmesh/macnode-bench
[ -x "$bench" ] || { echo "mesh-vs-mpi: $bench is not built: run scripts/build.sh" >&2; exit 2; }
feature=tbmesh_${group//-/_}
hosts=$(sinfo -h -N -o '%N %f' | awk -v f="$feature" 'index("," $2 ",", "," f ",") { print $1 }' | sort -u | paste -sd,)
[ "$(tr ',' '\n' <<<"$hosts" | grep -c .)" = 4 ] || { echo "mesh-vs-mpi: group $group has not 4 Macs: '$hosts'" >&2; exit 2; }
backend=jaccl
[ "$group" = studio-a ] || backend=ring
W=$LAB/work/tbm-alice
# What the user's steps write goes in a folder of the user's; root writes only in a folder of its own (the
# step script, Open MPI's outputs), never in one the user can fill with links first.
tmp=$(mktemp -d "$W/mesh-vs-mpi.XXXXXX")
own=$(mktemp -d)
# the tuned peer's rules file: a folder of root's where every Mac sees it (their /tmp is their own)
tune=$(mktemp -d "$LAB/work/.mesh-vs-mpi-tune.XXXXXX")
trap 'rm -rf "$tmp" "$own" "$tune"' EXIT
chmod 755 "$tune"
chown tbm-alice: "$tmp"
chmod 755 "$own"
# from_user FILE: a file of the user's folder copied into root's, read with the user's rights (a link the user
# put there in its place reaches nothing the user could not read).
from_user() { runuser -u tbm-alice -- cat "$tmp/$1" > "$own/$1"; }
# Open MPI over the same links, started by root from the bridge host (mpi-tune.sh adds -np)
mpirun_base=(mpirun --allow-run-as-root -H "$hosts" --mca plm_rsh_agent "$inst/libexec/tbmesh-lab/rsh"
             --mca btl self,tcp --mca btl_tcp_if_include 169.254.0.0/16 --mca oob_tcp_if_include 10.77.0.0/24
             --mca mpi_yield_when_idle 1)
tuned=
if [ "$peers" = both ]; then
    MACNODE_BENCH=$bench sh "$here/kernels/mpi-tune.sh" -n 4 -b "$min" -e "$max" -s "$siters" -S "$srounds" -t "$limit" \
        -o "$tune/found" "${mpirun_base[@]}" || { echo "mesh-vs-mpi: the search for the tuned Open MPI failed" >&2; exit 1; }
    tuned=$(cat "$tune/found/mca")
fi
if [ "$method" = turns ]; then
    # One job: mpirun (inside it, as a user would) starts a rank in each Mac holding both libraries; then
    # every cable alone with each, and which all-reduce libtbmcoll runs.
    cat > "$own/job.sh" <<SCRIPT
#!/bin/sh
set -e
export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=169.254.0.0/16 OMPI_MCA_mpi_yield_when_idle=1
both() {   # both OUT "MPIRUN OPTIONS" ARGS...
    out=\$1 mopts=\$2; shift 2
    for try in 1 2; do
        mpirun \$mopts -np 4 --map-by node "$macnode" bench -T both --turns $rounds "\$@" -F csv > "\$out" 2> "$tmp/both.err" &&
            return 0
        [ \$try = 2 ] || { echo "mesh-vs-mpi: a launch of both failed, once more:" >&2; tail -n 5 "$tmp/both.err" >&2; }
    done
    cat "$tmp/both.err" >&2
    return 1
}
both "$tmp/both.csv" "" $extra -b $min -e $max -n $iters -w 2
[ -z "$tuned" ] || both "$tmp/tboth.csv" "$tuned" $extra -b $min -e $max -n $iters -w 2
both "$tmp/both8.csv" "" $extra -b 8 -e 8 -n 500 -w 50
[ -z "$tuned" ] || both "$tmp/tboth8.csv" "$tuned" $extra -b 8 -e 8 -n 500 -w 50
srun "$macnode" bench -o p2p -b 8 -e $max -n $iters -w 2 -L 500 -F csv > "$tmp/tcp-p2p.csv"
mpirun -np 4 --map-by node "$macnode" bench -T mpi -o p2p -b 8 -e $max -n $iters -w 2 -L 500 -F csv > "$tmp/mpi-p2p.csv"
srun "$macnode" bench $extra -o sendrecv -b $min -e $max -n $iters -w 2 -F csv > "$tmp/tcp-sr.csv"
srun "$macnode" bench $extra -b 1M -e 1M -n 1 -w 0 | grep '^# all-reduce ' > "$tmp/plan.txt" || true
SCRIPT
    chmod 755 "$own/job.sh"
    (cd "$tmp" && runuser -u tbm-alice -- env SLURM_CONF="$SLURM_CONF" \
        salloc -Q --gres=tbmesh:"$group":4 --mlx-backend=$backend "$own/job.sh") ||
        { echo "mesh-vs-mpi: the job failed" >&2; exit 1; }
    for f in both.csv both8.csv tcp-p2p.csv mpi-p2p.csv tcp-sr.csv plan.txt ${tuned:+tboth.csv tboth8.csv}; do
        from_user "$f"
    done
    for f in both both8 ${tuned:+tboth tboth8}; do
        t=${f%both*} to=${f#*both}
        awk -F, '$1 == "op" || $2 != "mpi"' "$own/$f.csv" > "$own/${t}tcp$to.csv"
        awk -F, '$1 == "op" || $2 == "mpi"' "$own/$f.csv" > "$own/${t}mpi$to.csv"
    done
else
    # libtbmcoll's part of a round, in one allocation: the sweep, the 8-byte run and, in the first round
    # ($1 = 1), every cable; each round's rows are added to the run's files.
    cat > "$own/tcp.sh" <<SCRIPT
#!/bin/sh
set -e
srun "$macnode" bench $extra -b $min -e $max -n $iters -w 2 -F csv >> "$tmp/tcp.csv"
srun "$macnode" bench $extra -b 8 -e 8 -n 500 -w 50 -F csv >> "$tmp/tcp8.csv"
[ "\$1" = 0 ] || srun "$macnode" bench -o p2p -b 8 -e $max -n $iters -w 2 -L 500 -F csv > "$tmp/tcp-p2p.csv"
[ "\$1" = 0 ] || srun "$macnode" bench $extra -o sendrecv -b $min -e $max -n $iters -w 2 -F csv > "$tmp/tcp-sr.csv"
[ "\$1" = 0 ] || srun "$macnode" bench $extra -b 1M -e 1M -n 1 -w 0 | grep '^# all-reduce ' > "$tmp/plan.txt" || true
SCRIPT
    chmod 755 "$own/tcp.sh"

    # One round: libtbmcoll, then Open MPI over the same links.
    round() {
        local first=$1
        (cd "$tmp" && runuser -u tbm-alice -- env SLURM_CONF="$SLURM_CONF" \
            salloc -Q --gres=tbmesh:"$group":4 --mlx-backend=$backend "$own/tcp.sh" "$first") ||
            { echo "mesh-vs-mpi: the libtbmcoll steps failed" >&2; return 1; }
        "${mpirun[@]}" "$bench" -T mpi -b "$min" -e "$max" -n "$iters" -w 2 -F csv >> "$own/mpi.csv" 2> "$own/mpi.err" &&
        "${mpirun[@]}" "$bench" -T mpi -b 8 -e 8 -n 500 -w 50 -F csv >> "$own/mpi8.csv" 2>> "$own/mpi.err" &&
        { [ -z "$tuned" ] ||
          { "${mpirun[@]}" $tuned "$bench" -T mpi -b "$min" -e "$max" -n "$iters" -w 2 -F csv >> "$own/tmpi.csv" 2>> "$own/mpi.err" &&
            "${mpirun[@]}" $tuned "$bench" -T mpi -b 8 -e 8 -n 500 -w 50 -F csv >> "$own/tmpi8.csv" 2>> "$own/mpi.err"; }; } &&
        { [ "$first" = 0 ] ||
          "${mpirun[@]}" "$bench" -T mpi -o p2p -b 8 -e "$max" -n "$iters" -w 2 -L 500 -F csv > "$own/mpi-p2p.csv" 2>> "$own/mpi.err"; } ||
            { echo "mesh-vs-mpi: Open MPI failed:" >&2; grep -v setpgid "$own/mpi.err" >&2; return 1; }
    }

    mpirun=("${mpirun_base[@]}" -np 4)
    for ((r = 1; r <= rounds; r++)); do
        round $((r == 1)) || exit 1
    done
    for f in tcp.csv tcp8.csv tcp-p2p.csv tcp-sr.csv plan.txt; do
        from_user "$f"
    done
    # libtbmcoll's runs are the same for both peers
    [ -z "$tuned" ] || { cp "$own/tcp.csv" "$own/ttcp.csv"; cp "$own/tcp8.csv" "$own/ttcp8.csv"; }
fi

what="group $group ($hosts), backend $backend${extra:+ (libtbmcoll: $extra)}, in $method; 4 ranks and their TCP/veth work on $(getconf _NPROCESSORS_ONLN) shared cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "$tuned" ]; then
    awk -v what="$what" -f "$here/kernels/bench-report.awk" "$own/tcp.csv" "$own/mpi.csv" "$own/tcp8.csv" "$own/mpi8.csv" \
        "$own/tcp-p2p.csv" "$own/mpi-p2p.csv" "$own/tcp-sr.csv"
else
    awk -v what="$what" -v launches="$([ "$method" = launches ] && echo 1 || echo 0)" -v ttcp="$own/ttcp.csv" -v tmpi="$own/tmpi.csv" \
        -v ttcp8="$own/ttcp8.csv" -v tmpi8="$own/tmpi8.csv" -v won="$tune/found/won" -f "$here/kernels/bench-report.awk" \
        "$own/tcp.csv" "$own/mpi.csv" "$own/tcp8.csv" "$own/mpi8.csv" "$own/tcp-p2p.csv" "$own/mpi-p2p.csv" "$own/tcp-sr.csv"
    cat "$tune/found/report"
fi
sed 's/^# all-reduce/# libtbmcoll'"'"'s all-reduce/' "$own/plan.txt"
echo "# per cable (libtbmcoll, -o p2p): rank a, end a, rank b, end b, a->b, b->a, both ways (GB/s), latency (us)"
awk -F, 'NR > 1 { printf "#   %s %-12s %s %-12s %7.3f %7.3f %7.3f %7.1f\n", $3, $4, $5, $6, $8, $9, $10, $12 }' "$own/tcp-p2p.csv"
