#!/usr/bin/env bash
# submit-overhead.sh: what job_submit/tbmesh adds to a submit RPC, measured by slurmctld itself (the usec= of
# each _slurm_rpc_submit_batch_job line). Submits N held jobs with the plug-in (`--gres=tbmesh:4
# --mlx-backend=jaccl`) and N without it (`-p mac -N"$NN" --gres=tbmesh:1 -C "$FEAT"`, the request the
# plug-in makes of it), in the same run, and prints both medians and their difference and ratio.
# Usage: tests/perf/submit-overhead.sh [N]   (as root, with the lab up; default N=1000)
# TBM_SUBMIT_GROUP and TBM_NODES: the group and the Macs asked for (default studio-a, 4).
set -euo pipefail
N=${1:-1000}
G=${TBM_SUBMIT_GROUP:-studio-a} NN=${TBM_NODES:-4}
FEAT=tbmesh_${G//-/_}
WANT=${TBM_SUBMIT_GROUP:+$G:}$NN   # the default asks for 4 Macs of any group, as a user would
LAB=${TBMESH_LAB_DIR:-/var/lib/tbmesh-lab}
export SLURM_CONF=$LAB/etc/slurm.conf
LOG=$LAB/log/slurmctld.log
scontrol ping > /dev/null || { echo "submit-overhead: the lab is not up (lab/tbmesh-lab up)" >&2; exit 1; }

# run LABEL ARGS...: submit N held jobs, cancel them, print the median usec of their submit RPCs.
run() {
    local label=$1 first last; shift
    first=$(cd "$LAB/work/tbm-alice" && runuser -u tbm-alice -- env SLURM_CONF="$SLURM_CONF" \
        sbatch --parsable --hold -o /dev/null "$@" --wrap true)
    for _ in $(seq 2 "$N"); do
        last=$(cd "$LAB/work/tbm-alice" && runuser -u tbm-alice -- env SLURM_CONF="$SLURM_CONF" \
            sbatch --parsable --hold -o /dev/null "$@" --wrap true)
    done
    scancel -u tbm-alice
    sleep 1
    awk -v a="$first" -v b="$last" '
        match($0, /_slurm_rpc_submit_batch_job: JobId=([0-9]+) .* usec=([0-9]+)/, m) && m[1] >= a && m[1] <= b { print m[2] }' \
        "$LOG" | sort -n > "/tmp/tbm-bench-$label.txt"
    awk '{ v[NR] = $1 } END { printf "%d", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }' "/tmp/tbm-bench-$label.txt"
}

set_plugin() {   # set_plugin on|off, then reconfigure
    if [ "$1" = on ]; then
        grep -q '^JobSubmitPlugins=tbmesh' "$SLURM_CONF" || echo "JobSubmitPlugins=tbmesh" >> "$SLURM_CONF"
    else
        sed -i '/^JobSubmitPlugins=/d' "$SLURM_CONF"
    fi
    scontrol reconfigure
    sleep 2
}

trap 'set_plugin on' EXIT
# Warm up (first submits after a reconfigure are slower), then alternate halves so order does not decide.
set_plugin off
run warm -p mac -N"$NN" --gres=tbmesh:1 -C "$FEAT" > /dev/null
N=$((N / 2))
w1=$(run without -p mac -N"$NN" --gres=tbmesh:1 -C "$FEAT")
set_plugin on
run warm --gres=tbmesh:"$WANT" --mlx-backend=jaccl > /dev/null
x1=$(run with --gres=tbmesh:"$WANT" --mlx-backend=jaccl)
set_plugin off
w2=$(run without -p mac -N"$NN" --gres=tbmesh:1 -C "$FEAT")
set_plugin on
x2=$(run with --gres=tbmesh:"$WANT" --mlx-backend=jaccl)
with=$(( (x1 + x2) / 2 )); without=$(( (w1 + w2) / 2 ))
N=$((N * 2))
echo "submit RPC, median of $N (slurmctld usec=): with job_submit/tbmesh ${with} us, without ${without} us"
awk -v a="$with" -v b="$without" 'BEGIN { printf "plug-in adds %d us at the median (ratio %.2f; target: under 50 us)\n", a - b, (b > 0 ? a / b : 0) }'
