#!/usr/bin/env bash
# repro-overhead.sh: what the reproducibility records cost, printed as figures (no pass/fail).
#  1. The record's start and end work per job, in one run: N one-Mac jobs (`srun true`) with records and N with
#     --repro=off, alternating, on a bridge-mode and a direct-mode group; for each, the job's life in slurmctld
#     (allocation to completion, from its log) and the work the plug-in itself timed on the node.
#  2. Data digests: SHA-256 throughput per core (CPU time) on a large file, beside its peers on the same file
#     in the same run (openssl dgst, sha256sum) and the machine's ceiling (openssl speed -evp sha256), and that
#     an unchanged file is not read again (the device/inode/size/mtime cache).
# Usage: tests/perf/repro-overhead.sh [N] [MB]   (as root, with the lab up; default N=20, MB=1024)
#        tests/perf/repro-overhead.sh digests [MB]   (part 2 only; no lab needed)
set -euo pipefail
only_digests=0
if [ "${1:-}" = digests ]; then only_digests=1; shift; set -- 0 "$@"; fi
N=${1:-20}
MB=${2:-1024}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
LAB=${TBMESH_LAB_DIR:-/var/lib/tbmesh-lab}
export SLURM_CONF=$LAB/etc/slurm.conf
TBMESH=$SRC/build/inst/bin/tbmesh
[ "$only_digests" = 1 ] || scontrol ping > /dev/null ||
    { echo "repro-overhead: the lab is not up (lab/tbmesh-lab up)" >&2; exit 1; }

submit() {   # submit ARGS...: a job id
    (cd "$LAB/work/tbm-alice" && runuser -u tbm-alice -- env SLURM_CONF="$SLURM_CONF" \
        sbatch --parsable -o /dev/null "$@" --wrap 'srun true')
}
wait_gone() {   # wait_gone JOBID...: until none is in the queue
    while [ -n "$(squeue -h -j "$(IFS=,; echo "$*")" 2>/dev/null)" ]; do sleep 0.2; done
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; else printf "-" }'; }
# life_ms JOBID: from "sched: Allocate JobId=N" to "_job_complete: JobId=N done" in slurmctld's log.
life_ms() {
    awk -v j="JobId=$1" '
        function ms(ts) { gsub(/[][]/, "", ts); split(ts, a, "T"); split(a[2], b, ":"); return ((b[1] * 60 + b[2]) * 60 + b[3]) * 1000 }
        index($0, "Allocate " j " ") { s = ms($1) } index($0, "_job_complete: " j " done") { e = ms($1) }
        END { if (s && e) printf "%.0f\n", e - s }' "$LAB/log/slurmctld.log"
}

bench_group() {   # bench_group GROUP
    local g=$1 on=() off=() i
    for i in $(seq "$N"); do
        on+=("$(submit --gres=tbmesh:$g:1)"); wait_gone "${on[-1]}"
        off+=("$(submit --gres=tbmesh:$g:1 --repro=off)"); wait_gone "${off[-1]}"
    done
    sleep 1
    local lon loff work_start work_end work_step
    lon=$(for j in "${on[@]}"; do life_ms "$j"; done | median)
    loff=$(for j in "${off[@]}"; do life_ms "$j"; done | median)
    work_end=$(for j in "${on[@]}"; do grep -h "tbmesh: job $j: record end work took" "$LAB"/log/slurmd-*.log; done | sed 's/.* took \([0-9]*\) us .*/\1/' | awk '{ print $1 / 1000 }' | median)
    work_start=$(for j in "${on[@]}"; do grep -h "tbmesh: job $j: record end work took" "$LAB"/log/slurmd-*.log; done | sed 's/.*(\([0-9]*\) us of it waiting.*/\1/' | awk '{ print $1 / 1000 }' | median)
    work_step=$(for j in "${on[@]}"; do grep -h "tbmesh: job $j: record step work took" "$LAB"/log/slurmd-*.log; done | sed 's/.* took \([0-9]*\) us .*/\1/' | awk '{ print $1 / 1000 }' | median)
    printf '%-9s %3d jobs each: job life (slurmctld) median %s ms with records, %s ms with --repro=off: +%s ms\n' \
        "$g" "$N" "$lon" "$loff" "$(awk -v a="$lon" -v b="$loff" 'BEGIN { printf "%.1f", a - b }')"
    printf '%-9s   the plug-in timed its own work: step end %s ms, batch end %s ms, of which waiting for the start work (which runs beside the batch script) %s ms (medians)\n' \
        "$g" "$work_step" "$work_end" "$work_start"
}

if [ "$only_digests" = 0 ]; then
    echo "== record work per job (N=$N, alternating with and without records)"
    bench_group studio-a
    bench_group mini-b
fi

echo "== data digests ($MB MiB file; a folder of 1000 files)"
d=$(mktemp -d /var/tmp/tbm-digest-XXXXXX)
trap 'rm -rf "$d"' EXIT
dd if=/dev/urandom of="$d/big" bs=1M count="$MB" status=none
mkdir "$d/folder"; for i in $(seq 1000); do head -c 4096 /dev/urandom > "$d/folder/f$i"; done
echo -n "the big file: "; "$TBMESH" repro digest --cache "$d/cache.json" "$d/big" 2>&1 >/dev/null
echo -n "the folder (the big file from the cache): "; "$TBMESH" repro digest --cache "$d/cache.json" "$d/big" "$d/folder" 2>&1 >/dev/null
echo -n "second run: "; "$TBMESH" repro digest --cache "$d/cache.json" "$d/big" "$d/folder" 2>&1 >/dev/null
touch "$d/folder/f1"
echo -n "one file touched: "; "$TBMESH" repro digest --cache "$d/cache.json" "$d/big" "$d/folder" 2>&1 >/dev/null
# peer CMD...: the CPU time (user + system) of CMD on the big file, as GB/s per core.
peer() {
    local t
    t=$( { TIMEFORMAT='%U %S'; time "$@" "$d/big" > /dev/null; } 2>&1 )
    awk -v t="$t" -v b=$((MB * 1048576)) 'BEGIN { split(t, a, " "); c = a[1] + a[2]
        printf "CPU %.3f s (%.2f GB/s per core)\n", c, (c > 0 ? b / c / 1e9 : 0) }'
}
echo -n "peer, the same file, openssl dgst -sha256: "; peer openssl dgst -sha256
echo -n "peer, the same file, sha256sum:            "; peer sha256sum
echo -n "ceiling, openssl speed -evp sha256 (1 MiB blocks in memory): "
openssl speed -evp sha256 -bytes 1048576 -seconds 2 2>/dev/null | awk '/^sha256/ { printf "%.2f GB/s per core\n", $2 / 1e6 }'
