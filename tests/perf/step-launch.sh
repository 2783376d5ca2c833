#!/usr/bin/env bash
# step-launch.sh: what bridge mode costs a job step, measured in one run on the lab, inside one allocation
# per group, both held at once: studio-a (bridge: forwarder + agent + grant) against mini-b (direct: slurmd
# on the Mac), their launches in turns (bridge, direct, bridge, ...). Per group, over RUNS launches each: the
# median and 90th percentile of the wall time of `srun -N4 true` (the whole launch) and of the time to the
# first line of `srun -N4 echo` (launch up to the first output), the median of the RUNS pairs' differences,
# and the stdout throughput of a MiB stream from one task through the forwarder against a direct step.
# Targets: at most 20 ms more per launch (median); at least half the throughput.
# The launch's inner parts: RUNS more launches of `srun -N4 echo x` in bridge mode with TBMESH_LAUNCH_TIMES=1,
# where each task's forwarder prints its launch's parts (macnode exec --verbose: grant, stepd, exec, credential,
# connect, authenticate, spawn, first output) and each agent logs its own (at the gate, the hello's
# credential, the welcome, the grant's check, the job's files): the median of each part over all the tasks.
# And from slurmd's log, every step's launch request to the plug-in's user_init and from there to its end.
# Usage: tests/perf/step-launch.sh [RUNS] [MiB]   (as root, with the lab up; default 30 runs, 1024 MiB)
# TBM_BRIDGE_GROUP, TBM_DIRECT_GROUP and TBM_NODES: the groups and the Macs per step (default studio-a, mini-b,
# 4; tests/perf/lab-size.sh compares eight-Mac groups of a lab at size).
set -euo pipefail
RUNS=${1:-30}
MIB=${2:-1024}
BG=${TBM_BRIDGE_GROUP:-studio-a} DG=${TBM_DIRECT_GROUP:-mini-b} NN=${TBM_NODES:-4}
LAB=${TBMESH_LAB_DIR:-/var/lib/tbmesh-lab}
export SLURM_CONF=$LAB/etc/slurm.conf
scontrol ping > /dev/null || { echo "step-launch: the lab is not up (lab/tbmesh-lab up)" >&2; exit 1; }
W=$LAB/work/tbm-alice

# Both groups are allocated at once and their launches take turns (bridge, direct, bridge, ...), each told by
# the script through a FIFO and answering through another, so that the two modes meet the machine in the same
# state: on a loaded machine a launch's time drifts by tens of ms within a minute, more than the difference
# measured. serve GROUP: the loop run inside the group's allocation (as the user).
serve() {
    cat > "$W/bench-$1.sh" <<SCRIPT
#!/bin/bash
exec 3<>"$W/sl-go-$1" 4<>"$W/sl-done"
t() { echo \$(( \$(date +%s%N) / 1000 )); }
while read -r what <&3; do
    case \$what in
    launch) s=\$(t); srun -N$NN true; echo "$1 launch \$(( \$(t) - s ))" >&4 ;;
    first)  s=\$(t); srun -N$NN echo x | { read -r _; echo "$1 first \$(( \$(t) - s ))" >&4; cat > /dev/null; } ;;
    stream) s=\$(t); srun -N1 -n1 head -c ${MIB}M /dev/zero | wc -c > /dev/null; echo "$1 stream \$(( \$(t) - s ))" >&4 ;;
    parts)  for i in \$(seq $RUNS); do TBMESH_LAUNCH_TIMES=1 srun -N$NN echo x 2>&1 >/dev/null | grep '^macnode exec: launch: '; done > "$W/sl-parts"
            echo "$1 parts 0" >&4 ;;
    *)      break ;;
    esac
done
SCRIPT
    chmod 755 "$W/bench-$1.sh"
    (cd "$W" && exec runuser -u tbm-alice -- env SLURM_CONF="$SLURM_CONF" salloc --gres=tbmesh:"$1":$NN "$W/bench-$1.sh" \
        > /dev/null 2>&1)
}
# ask GROUP WHAT: one turn; its number (us) on stdout
ask() {
    local g w v
    [ "$1" = "$BG" ] && echo "$2" >&7 || echo "$2" >&8
    read -r -t 600 g w v <&6 || { echo "step-launch: $1 did not answer '$2' (allocation refused or lost?)" >&2; exit 1; }
    [ "$g $w" = "$1 $2" ] || { echo "step-launch: wanted $1 $2, got: $g $w $v" >&2; exit 1; }
    echo "$v"
}
# busy: the machine's busy and total clock ticks so far, all CPUs (/proc/stat)
busy() { local _c u n s i w q sq st; read -r _c u n s i w q sq st _ < /proc/stat; echo "$((u + n + s + q + sq + st)) $((u + n + s + i + w + q + sq + st))"; }
# turn GROUP WHAT: ask, and add the turn's busy and total ticks to the group's (BUSY and TOTAL)
declare -A BUSY=([$BG]=0 [$DG]=0) TOTAL=([$BG]=0 [$DG]=0)
turn() {
    local b0 t0 b1 t1
    read -r b0 t0 <<<"$(busy)"; v=$(ask "$1" "$2") || return 1; read -r b1 t1 <<<"$(busy)"
    BUSY[$1]=$(( BUSY[$1] + b1 - b0 )); TOTAL[$1]=$(( TOTAL[$1] + t1 - t0 ))
}
# agents_cpu GROUP: the clock ticks the group's agents have used so far: every macnoded process of its Macs
# (the main one and its servers, which serve one connection after another), each with what it reaped (the
# main process: the servers that ended; a server: the tasks it ran). A server that ends between two calls is
# counted once, in its main process's.
agents_cpu() {
    local nodes p t=0 f
    nodes=$(scontrol show hostnames "$(sed -n "s/^Group=$1 Nodes=\([^ ]*\).*/\1/p" "$LAB/etc/tbmesh.conf")" | paste -sd'|')
    for p in $(pgrep -x macnoded); do
        tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -Eq -- "--node ($nodes) " || continue
        f=($(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null)) || continue
        t=$(( t + f[11] + f[12] + f[13] + f[14] ))
    done
    echo "$t"
}
# stats: the median and the 90th percentile of the numbers on stdin
stats() { sort -n | awk '{ v[NR] = $1 } END { printf "%d %d\n", v[int((NR + 1) / 2)], v[int((NR * 9 + 9) / 10)] }'; }

ms() { awk -v us="$1" 'BEGIN { printf "%.1f ms", us / 1000 }'; }
# parts: the median of each key=value (ms) on stdin's lines after their prefix, in the order first seen.
parts() {
    awk '{ for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2 && kv[2] != "-") {
               if (!(kv[1] in n)) order[++k] = kv[1]; v[kv[1], ++n[kv[1]]] = kv[2] } }
         END { for (j = 1; j <= k; j++) { key = order[j]; m = n[key]
                   for (a = 1; a <= m; a++) s[a] = v[key, a]
                   for (a = 2; a <= m; a++) { x = s[a]; for (b = a - 1; b >= 1 && s[b] > x; b--) s[b + 1] = s[b]; s[b + 1] = x }
                   printf "%s%s %.2f", (j > 1 ? ", " : ""), key, s[int((m + 1) / 2)] }
               printf " (medians in ms of %d tasks)\n", n[order[1]] }'
}
# steps: from slurmd's and slurmstepd's log lines on stdin, per group (its rank 0's node says the group), the
# median of the launch request to the plug-in's user_init, and of user_init to the step's end, in ms.
steps() {
    awk 'function ms(stamp, a) { split(stamp, a, /[T:\]]/); return (a[2] * 3600 + a[3] * 60 + a[4]) * 1000 }
         /launch task StepId=/ { if (match($0, /StepId=[0-9]+\.[0-9]+/)) start[substr($0, RSTART + 7, RLENGTH - 7)] = ms($1) }
         /\] tbmesh: group .*; rank 0/ { id = $2; gsub(/[][]/, "", id); g = $5; sub(/,$/, "", g); group[id] = g; init[id] = ms($1) }
         /\] done with job/ { id = $2; gsub(/[][]/, "", id); done[id] = ms($1) }
         END { for (id in group) if ((id in start) && (id in done)) {
                   g = group[id]; n[g]++; a[g, n[g]] = init[id] - start[id]; b[g, n[g]] = done[id] - init[id] }
               for (g in n) { m = n[g]
                   for (i = 1; i <= m; i++) { x[i] = a[g, i]; y[i] = b[g, i] }
                   for (i = 2; i <= m; i++) {
                       v = x[i]; for (j = i - 1; j >= 1 && x[j] > v; j--) x[j + 1] = x[j]; x[j + 1] = v
                       v = y[i]; for (j = i - 1; j >= 1 && y[j] > v; j--) y[j + 1] = y[j]; y[j + 1] = v }
                   printf "    %s: %d steps, launch request to user_init %.0f ms, user_init to the step'"'"'s end %.0f ms\n",
                          g, m, x[int((m + 1) / 2)], y[int((m + 1) / 2)] } }'
}
# the agents' and the slurmds' log lines written from now on: their sizes before
declare -A size
for f in "$LAB"/log/macnoded-*.log "$LAB"/log/slurmd-*.log; do size[$f]=$(stat -c %s "$f" 2>/dev/null || echo 0); done
new_lines() { local f; for f in "${!size[@]}"; do [[ $f == */"$1"* ]] && tail -c +"$((size[$f] + 1))" "$f"; done; true; }
rm -f "$W/sl-go-$BG" "$W/sl-go-$DG" "$W/sl-done" "$W/sl-parts"
mkfifo -m 600 "$W/sl-go-$BG" "$W/sl-go-$DG" "$W/sl-done"
chown tbm-alice: "$W/sl-go-$BG" "$W/sl-go-$DG" "$W/sl-done"
exec 6<>"$W/sl-done" 7<>"$W/sl-go-$BG" 8<>"$W/sl-go-$DG"
serve "$BG" &
serve "$DG" &
trap 'echo end >&7; echo end >&8; wait; rm -f "$W/sl-go-$BG" "$W/sl-go-$DG" "$W/sl-done" "$W/sl-parts" "$W/bench-$BG.sh" "$W/bench-$DG.sh"' EXIT
declare -a BL DL BF DF
a0=$(agents_cpu "$BG")
for i in $(seq "$RUNS"); do
    turn "$BG" launch && BL+=("$v") && turn "$DG" launch && DL+=("$v") || exit 1
done
for i in $(seq "$RUNS"); do
    turn "$BG" first && BF+=("$v") && turn "$DG" first && DF+=("$v") || exit 1
done
a1=$(agents_cpu "$BG")
v=$(ask "$BG" stream) && bs=$(( v / 1000 )) && v=$(ask "$DG" stream) && ds=$(( v / 1000 )) || exit 1
ask "$BG" parts > /dev/null
b=$(cat "$W/sl-parts")
agent=$(new_lines macnoded- | grep 'launch on the agent (ms): ' || true)
read -r bl bl9 <<<"$(printf '%s\n' "${BL[@]}" | stats)"; read -r dl dl9 <<<"$(printf '%s\n' "${DL[@]}" | stats)"
read -r bf bf9 <<<"$(printf '%s\n' "${BF[@]}" | stats)"; read -r df df9 <<<"$(printf '%s\n' "${DF[@]}" | stats)"
# each bridge launch less the direct one right after it: the median of the pairs
read -r pl _ <<<"$(for i in "${!BL[@]}"; do echo $(( BL[i] - DL[i] )); done | stats)"
read -r pf _ <<<"$(for i in "${!BF[@]}"; do echo $(( BF[i] - DF[i] )); done | stats)"
echo "srun -N$NN true, median (p90) of $RUNS, the two modes in turns: bridge ($BG) $(ms "$bl") ($(ms "$bl9")), direct ($DG) $(ms "$dl") ($(ms "$dl9")): bridge adds $(ms $((bl - dl))) (target: at most 20 ms); median of the $RUNS pairs' differences $(ms "$pl")"
echo "  to the first output (srun -N$NN echo), median (p90): bridge $(ms "$bf") ($(ms "$bf9")), direct $(ms "$df") ($(ms "$df9")): bridge adds $(ms $((bf - df))); pairs $(ms "$pf")"
echo "  after the first output (the step's end, srun's exit): bridge $(ms $((bl - bf))), direct $(ms $((dl - df)))"
awk -v bb="${BUSY[$BG]}" -v bt="${TOTAL[$BG]}" -v db="${BUSY[$DG]}" -v dt="${TOTAL[$DG]}" \
    -v a="$((a1 - a0))" -v hz="$(getconf CLK_TCK)" -v n="$((RUNS * 8))" -v cpus="$(nproc)" 'BEGIN {
    printf "  the machine (%d CPUs, /proc/stat) was busy %.0f%% of the bridge turns and %.0f%% of the direct ones;", cpus, 100 * bb / (bt ? bt : 1), 100 * db / (dt ? dt : 1)
    printf " the Macs'"'"' agents used %.1f ms of CPU per bridge task (%d tasks)\n", a * 1000 / hz / n, n }'
echo "  bridge mode's launch, in parts ($RUNS x $NN tasks of srun -N$NN echo x, TBMESH_LAUNCH_TIMES=1):"
echo "    forwarder: $(grep '^macnode exec: launch: ' <<<"$b" | sed 's/^macnode exec: launch: //' | parts)"
echo "    agent:     $(sed 's/.*launch on the agent (ms): //' <<<"$agent" | parts)"
echo "  every step on the nodes, as slurmd logs it (each group's rank 0; the medians):"
new_lines slurmd- | steps
awk -v m="$MIB" -v b="$bs" -v d="$ds" 'BEGIN { printf "stdout stream of %d MiB: bridge %.0f MB/s, direct %.0f MB/s: ratio %.2f (target: at least 0.5)\n", m, m * 1.048576 / (b / 1000), m * 1.048576 / (d / 1000), d / b }'
