#!/usr/bin/env bash
# step-launch.sh: what bridge mode costs a job step, measured in one run on the lab, inside one allocation
# per group: the median wall time of `srun -N4 true` on studio-a (bridge: forwarder + agent + grant) against
# mini-b (direct: slurmd on the Mac), and stdout throughput of a 1 GiB stream from one task through the
# forwarder against a direct step. Targets: at most 20 ms more per launch; at least half the throughput.
# Usage: tests/perf/step-launch.sh [RUNS] [MiB]   (as root, with the lab up; default 20 runs, 1024 MiB)
set -euo pipefail
RUNS=${1:-20}
MIB=${2:-1024}
LAB=${TBMESH_LAB_DIR:-/var/lib/tbmesh-lab}
export SLURM_CONF=$LAB/etc/slurm.conf
scontrol ping > /dev/null || { echo "step-launch: the lab is not up (lab/tbmesh-lab up)" >&2; exit 1; }
W=$LAB/work/tbm-alice

# inside GROUP: a script run inside one allocation of the group's 4 Macs, printing the medians in ms.
inside() {
    cat > "$W/bench-$1.sh" <<SCRIPT
#!/bin/bash
t=()
for i in \$(seq $RUNS); do
    s=\$(date +%s%N); srun -N4 true; e=\$(date +%s%N); t+=(\$(( (e - s) / 1000 )))
done
printf '%s\n' "\${t[@]}" | sort -n | awk '{ v[NR] = \$1 } END { printf "launch_us %d\n", v[int((NR + 1) / 2)] }'
s=\$(date +%s%N); srun -N1 -n1 head -c ${MIB}M /dev/zero | wc -c > /dev/null; e=\$(date +%s%N)
echo "stream_ms \$(( (e - s) / 1000000 ))"
SCRIPT
    chmod 755 "$W/bench-$1.sh"
    (cd "$W" && runuser -u tbm-alice -- env SLURM_CONF="$SLURM_CONF" salloc --gres=tbmesh:"$1":4 "$W/bench-$1.sh" 2>/dev/null)
}

b=$(inside studio-a); d=$(inside mini-b)
bl=$(awk '/launch_us/ {print $2}' <<<"$b"); dl=$(awk '/launch_us/ {print $2}' <<<"$d")
bs=$(awk '/stream_ms/ {print $2}' <<<"$b"); ds=$(awk '/stream_ms/ {print $2}' <<<"$d")
echo "srun -N4 true, median of $RUNS: bridge (studio-a) $((bl / 1000)).$(( (bl % 1000) / 100 )) ms, direct (mini-b) $((dl / 1000)).$(( (dl % 1000) / 100 )) ms: bridge adds $(( (bl - dl) / 1000 )) ms (target: at most 20 ms)"
awk -v m="$MIB" -v b="$bs" -v d="$ds" 'BEGIN { printf "stdout stream of %d MiB: bridge %.0f MB/s, direct %.0f MB/s: ratio %.2f (target: at least 0.5)\n", m, m * 1.048576 / (b / 1000), m * 1.048576 / (d / 1000), d / b }'
rm -f "$W/bench-studio-a.sh" "$W/bench-mini-b.sh"
