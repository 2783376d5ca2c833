#!/usr/bin/env bash
# step-launch.sh: what bridge mode costs a job step, measured in one run on the lab, inside one allocation
# per group: studio-a (bridge: forwarder + agent + grant) against mini-b (direct: slurmd on the Mac). Per
# group, over RUNS launches each: the median and 90th percentile of the wall time of `srun -N4 true` (the
# whole launch) and of the time to the first line of `srun -N4 echo` (launch up to the first output), and
# the stdout throughput of a MiB stream from one task through the forwarder against a direct step.
# Targets: at most 20 ms more per launch (median); at least half the throughput.
# The launch's inner parts: RUNS more launches of `srun -N4 echo x` in bridge mode with TBMESH_LAUNCH_TIMES=1,
# where each task's forwarder prints its launch's parts (macnode exec --verbose: grant, stepd, exec, credential,
# connect, authenticate, spawn, first output) and each agent logs its own (at the gate, the hello's
# credential, the welcome, the grant's check, the job's files): the median of each part over all the tasks.
# And from slurmd's log, every step's launch request to the plug-in's user_init and from there to its end.
# Usage: tests/perf/step-launch.sh [RUNS] [MiB]   (as root, with the lab up; default 30 runs, 1024 MiB)
set -euo pipefail
RUNS=${1:-30}
MIB=${2:-1024}
LAB=${TBMESH_LAB_DIR:-/var/lib/tbmesh-lab}
export SLURM_CONF=$LAB/etc/slurm.conf
scontrol ping > /dev/null || { echo "step-launch: the lab is not up (lab/tbmesh-lab up)" >&2; exit 1; }
W=$LAB/work/tbm-alice

# inside GROUP: a script run inside one allocation of the group's 4 Macs, printing the medians in ms.
inside() {
    cat > "$W/bench-$1.sh" <<SCRIPT
#!/bin/bash
# the median and the 90th percentile (us) of the numbers on stdin
stats() { sort -n | awk -v what=\$1 '{ v[NR] = \$1 } END { printf "%s %d %d\\n", what, v[int((NR + 1) / 2)], v[int((NR * 9 + 9) / 10)] }'; }
for i in \$(seq $RUNS); do
    s=\$(date +%s%N); srun -N4 true; e=\$(date +%s%N); echo \$(( (e - s) / 1000 ))
done | stats launch_us
for i in \$(seq $RUNS); do
    s=\$(date +%s%N)
    srun -N4 echo x | { read -r _; e=\$(date +%s%N); cat > /dev/null; echo \$(( (e - s) / 1000 )); }
done | stats first_output_us
s=\$(date +%s%N); srun -N1 -n1 head -c ${MIB}M /dev/zero | wc -c > /dev/null; e=\$(date +%s%N)
echo "stream_ms \$(( (e - s) / 1000000 ))"
if [ "$1" = studio-a ]; then
    for i in \$(seq $RUNS); do TBMESH_LAUNCH_TIMES=1 srun -N4 echo x 2>&1 >/dev/null | grep '^macnode exec: launch: '; done
fi
SCRIPT
    chmod 755 "$W/bench-$1.sh"
    (cd "$W" && runuser -u tbm-alice -- env SLURM_CONF="$SLURM_CONF" salloc --gres=tbmesh:"$1":4 "$W/bench-$1.sh" 2>/dev/null)
}

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
b=$(inside studio-a); d=$(inside mini-b)
agent=$(new_lines macnoded- | grep 'launch on the agent (ms): ' || true)
read -r _ bl bl9 <<<"$(grep launch_us <<<"$b")"; read -r _ dl dl9 <<<"$(grep launch_us <<<"$d")"
read -r _ bf bf9 <<<"$(grep first_output_us <<<"$b")"; read -r _ df df9 <<<"$(grep first_output_us <<<"$d")"
bs=$(awk '/stream_ms/ {print $2}' <<<"$b"); ds=$(awk '/stream_ms/ {print $2}' <<<"$d")
echo "srun -N4 true, median (p90) of $RUNS: bridge (studio-a) $(ms "$bl") ($(ms "$bl9")), direct (mini-b) $(ms "$dl") ($(ms "$dl9")): bridge adds $(ms $((bl - dl))) (target: at most 20 ms)"
echo "  to the first output (srun -N4 echo), median (p90): bridge $(ms "$bf") ($(ms "$bf9")), direct $(ms "$df") ($(ms "$df9")): bridge adds $(ms $((bf - df)))"
echo "  after the first output (the step's end, srun's exit): bridge $(ms $((bl - bf))), direct $(ms $((dl - df)))"
echo "  bridge mode's launch, in parts ($RUNS x 4 tasks of srun -N4 echo x, TBMESH_LAUNCH_TIMES=1):"
echo "    forwarder: $(grep '^macnode exec: launch: ' <<<"$b" | sed 's/^macnode exec: launch: //' | parts)"
echo "    agent:     $(sed 's/.*launch on the agent (ms): //' <<<"$agent" | parts)"
echo "  every step on the nodes, as slurmd logs it (each group's rank 0; the medians):"
new_lines slurmd- | steps
awk -v m="$MIB" -v b="$bs" -v d="$ds" 'BEGIN { printf "stdout stream of %d MiB: bridge %.0f MB/s, direct %.0f MB/s: ratio %.2f (target: at least 0.5)\n", m, m * 1.048576 / (b / 1000), m * 1.048576 / (d / 1000), d / b }'
rm -f "$W/bench-studio-a.sh" "$W/bench-mini-b.sh"
