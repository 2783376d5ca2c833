#!/usr/bin/env bash
# demo.sh: the main job on the embedded lab, from a fresh Debian 12 or 13 machine, as root.
# Usage: scripts/demo.sh [--slurm RELEASE]   (22.05 or 24.11; a release the host lacks runs in a Debian
# root of it, scripts/slurm-root.sh)
# Installs what it needs, builds, brings the lab up, and submits as an ordinary user: a Linux job (default
# partition `all`, kept off the Macs), `--gres=tbmesh:4 --mlx-backend=jaccl` (lands on studio-a, the
# Thunderbolt 5 RDMA mesh, bridge mode; it proves and measures the mesh with macnode bench: every cable, then
# an all-reduce sweep over the JACCL matrix) and `--gres=tbmesh:mini-b:4` (the Thunderbolt 4 ring, direct
# mode); shows sinfo, squeue and sacct (gres/tbmesh in AllocTRES); the acceptance run of both groups
# (tbmesh accept) with one decision record. The lab stays up: `lab/tbmesh-lab down` ends it.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
if [ "${1:-}" = --slurm ]; then
    [ $# -ge 2 ] || { echo "demo.sh: --slurm needs a release: 22.05 or 24.11" >&2; exit 2; }
    scripts/slurm-root.sh path "$2" > /dev/null || exit 2
    if [ "$2" != "$(scripts/slurm-root.sh native)" ]; then
        scripts/install-deps.sh
        exec scripts/slurm-root.sh run "$2" "$src/scripts/demo.sh"
    fi
elif [ $# -gt 0 ]; then
    echo "demo.sh: unknown option '$1'; usage: scripts/demo.sh [--slurm 22.05|24.11]" >&2; exit 2
fi
LAB=${TBMESH_LAB_DIR:-/var/lib/tbmesh-lab}
export SLURM_CONF=$LAB/etc/slurm.conf

show() { echo; echo "\$ $*"; "$@"; }
as_alice() { (cd "$LAB/work/tbm-alice" && runuser -u tbm-alice -- env SLURM_CONF="$SLURM_CONF" "$@"); }

[ -n "${TBMESH_SLURM_ROOT:-}" ] || scripts/install-deps.sh   # a root is made with them
scripts/build.sh
lab/tbmesh-lab up

show sinfo -N -o '%10N %10P %8T %12G %f'

echo; echo "== submitting as tbm-alice"
jl=$(as_alice sbatch --parsable -N1 -J linux-job -o demo-%j.out --wrap 'hostname; sleep 5')
macnode=$LAB/inst/bin/macnode   # what the nodes run: the lab installs it in its state folder
ja=$(as_alice sbatch --parsable --gres=tbmesh:4 --mlx-backend=jaccl -J studio-a-4 -o demo-%j.out \
    --wrap "srun hostname; srun $macnode bench -o p2p -b 8 -e 16M -n 5 -L 200; srun $macnode bench -b 8 -e 16M -f 8 -n 5")
jb=$(as_alice sbatch --parsable --gres=tbmesh:mini-b:4 -J mini-b-4 -o demo-%j.out \
    --wrap 'srun sh -c "echo \$(hostname): \$(ip -o -4 addr show | awk \"\\\$2 ~ /^en[2-9]/ {print \\\$2, \\\$4}\" | paste -sd\" \" -)"; sleep 5')
echo "jobs: linux=$jl studio-a=$ja mini-b=$jb"

# until CONDITION-DESCRIPTION SECONDS CMD...: poll CMD (bounded); say what did not happen and stop.
until_ok() {
    local what=$1 secs=$2 end=$((SECONDS + $2)); shift 2
    until "$@" > /dev/null 2>&1; do
        [ "$SECONDS" -lt "$end" ] || { echo "demo.sh: $what did not happen within ${secs}s; see lab/tbmesh-lab logs slurmctld" >&2; return 1; }
        sleep 0.5
    done
}
started() { [ -z "$(squeue -h -j "$jl,$ja,$jb" -t PENDING -o %i 2>/dev/null)" ]; }
gone() { [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; }
recorded() { sacct -n -X -P -j "$1" -o state | grep -qvE '^(PENDING|RUNNING|COMPLETING)'; }
until_ok "the three jobs starting" 60 started || true
show squeue -o '%.6i %.9P %.12j %.10u %.8T %.5D %R'

for j in $jl $ja $jb; do
    until_ok "job $j ending" 600 gone "$j"
    until_ok "job $j's end being recorded by slurmdbd" 30 recorded "$j"
done
for j in $jl $ja $jb; do
    echo; echo "== output of job $j"; cat "$LAB/work/tbm-alice/demo-$j.out"
done
show sacct -X -j "$jl,$ja,$jb" -o jobid,jobname%12,user,account,partition,nodelist%12,alloctres%45,constraints%32,state,exitcode

echo; echo "== reproducibility records: the same network on one Mac, then on studio-a's four"
tbmesh=$LAB/inst/bin/tbmesh
W=$LAB/work/tbm-alice/demo-repro; mkdir -p "$W"
printf '#!/bin/sh\nsrun %s refwork -L 4 -H 256 -B 8 -o "$1"\n' "$macnode" > "$W/refwork.sh"
echo '{"text": "hello"}' > "$W/train.jsonl"; chmod +x "$W/refwork.sh"; chown -R tbm-alice: "$W"
r1=$(as_alice sbatch --parsable --gres=tbmesh:studio-a:1 --repro-model=demo/refwork --repro-data="$W/train.jsonl" \
     --repro-seed=7 --repro-output="$W/single.bin" -o "$W/one.out" "$W/refwork.sh" "$W/single.bin")
r4=$(as_alice sbatch --parsable --gres=tbmesh:studio-a:4 --repro-model=demo/refwork --repro-data="$W/train.jsonl" \
     --repro-seed=7 --repro-output="$W/mesh.bin" -o "$W/four.out" "$W/refwork.sh" "$W/mesh.bin")
for j in $r1 $r4; do until_ok "job $j ending" 300 gone "$j"; until_ok "job $j's end being recorded" 30 recorded "$j"; done
show sacct -X -j "$r1,$r4" -o jobid,state,admincomment%60
show as_alice "$tbmesh" repro show "$r4"
show as_alice "$tbmesh" repro diff "$r1" "$r4"

echo; echo "== acceptance: can each group be trusted as a research resource? (tbmesh-accept(1))"
# The plan of the task; the lab's cables are veth pairs sharing this host's cores with eight Macs, far from
# Thunderbolt's rates, so the demo's plan asks for a small share of each link (the default is half).
A=$LAB/accept-demo; mkdir -p "$A"
cat > "$A/lab.plan" <<'PLAN'
[acceptance]
task = distributed inference of the reference network on all the group's Macs
model = the reference workload (macnode refwork), 4 layers, hidden 1024
data = generated from seed 1
expected_output = the mesh's output equals the single Mac's within 1e-4 (float32 sums in another order)
backend = jaccl
link_share = 0.02
busbw_share = 0.05
sweep_max = 1M
p2p_size = 1M
PLAN
# The operations owners (step 7) belong in tbmesh.conf; the demo adds them to a copy of the lab's.
{ cat "$LAB/etc/tbmesh.conf"; printf 'OwnerRecovery=hpc-ops@lab.example\nOwnerAccess=lab-lead\nOwnerUpkeep=hpc-ops@lab.example\n'; } > "$A/tbmesh.conf"
for g in studio-a mini-b; do
    rc=0
    "$tbmesh" accept "$g" --plan "$A/lab.plan" --conf "$A/tbmesh.conf" --macnode "$macnode" --out "$A" > "$A/$g.md" || rc=$?
    echo "tbmesh accept $g: exit $rc: $(head -n1 "$A/$g.md" | sed 's/^# //')"
done
echo; echo "== the decision record of mini-b ($A/mini-b.md)"; cat "$A/mini-b.md"

echo; echo "== usage of Macs and Linux nodes this week, from slurmdbd"
show "$tbmesh" report --last 7d
mkdir -p "$LAB/report"
show "$tbmesh" report --last 7d --html "$LAB/report/demo.html"
echo "the report's page: $LAB/report/demo.html"
echo
echo "The lab is up. Try: export SLURM_CONF=$SLURM_CONF; sinfo; lab/tbmesh-lab exec mac05 ip -br addr"
echo "Take it down with: lab/tbmesh-lab down"
