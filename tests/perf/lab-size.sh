#!/usr/bin/env bash
# lab-size.sh: the lab at size, measured in one run. Brings up `tbmesh-lab up --macs MACS --bridges BRIDGES`
# (default 64 Macs in 12 groups of every shape, their bridge-mode groups behind two bridge hosts), then prints:
#   - what an idle simulated Mac costs: the memory (PSS) of its processes (its agent and supervisor; its slurmd,
#     inside it in direct mode, on its bridge host in bridge mode) and the CPU they use over 30 s idle, and the
#     lab's whole footprint against the machine's memory;
#   - slurmctld's time in a submit RPC with and without job_submit/tbmesh (tests/perf/submit-overhead.sh) at
#     this size, and again with the default lab's 8 Macs at the end;
#   - JOBS queued jobs (Mac and Linux, half each, sizes drawn with a fixed seed): the submit rate and the
#     submit-to-start latency, with the plug-ins against without them (plain Slurm, given the constraint the
#     plug-in would have written);
#   - placement: the same seeded stream of small and whole-group Mac jobs under Placement=pack and
#     Placement=order: the whole-group jobs' and the small jobs' waits, the Macs' utilisation;
#   - a step's launch on an 8-Mac group in bridge mode against one in direct mode (tests/perf/step-launch.sh);
#   - the inventory of every Mac, `tbmesh report` over the day, `tbmesh accept` of one group while jobs run on
#     the others: their wall times.
# Figures are printed, never asserted. The default lab is brought back at the end (also on failure).
# Usage: tests/perf/lab-size.sh [MACS] [BRIDGES] [JOBS]   (as root; default 64 2 500)
# TBM_SIZE_PARTS: the parts to run, of "idle submit queue placement launch admin" (default: all of them).
set -euo pipefail
MACS=${1:-64} BRIDGES=${2:-2} JOBS=${3:-500}
PARTS=" ${TBM_SIZE_PARTS:-idle submit queue placement launch admin} "
part() { [[ "$PARTS" == *" $1 "* ]]; }
SRC=$(cd "$(dirname "$0")/../.." && pwd)
LABCMD=$SRC/lab/tbmesh-lab
LAB=${TBMESH_LAB_DIR:-/var/lib/tbmesh-lab}
export SLURM_CONF=$LAB/etc/slurm.conf
TBMESH=$LAB/inst/bin/tbmesh
W=$LAB/work/tbm-alice
[ "$(id -u)" = 0 ] || { echo "lab-size: run as root (the lab's namespaces)" >&2; exit 2; }
# shellcheck source=../lab/lib.sh
. "$SRC/tests/lab/lib.sh"   # accept_setup: the acceptance plan the lab tests use
set -e
say() { echo "lab-size: $*"; }
as_alice() { (cd "$W" && runuser -u tbm-alice -- env SLURM_CONF="$SLURM_CONF" "$@"); }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
p90() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR * 9 + 9) / 10)]; else print "-" }'; }

restore() {
    set +e
    say "bringing the default lab back"
    "$LABCMD" down > /dev/null 2>&1
    env -u TBMESH_LAB_SPEC "$LABCMD" up > /dev/null 2>&1 || say "the default lab did not come up: run lab/tbmesh-lab up"
}
trap restore EXIT

"$LABCMD" down > /dev/null 2>&1 || true
t0=$(now_ms)
"$LABCMD" up --macs "$MACS" --bridges "$BRIDGES" > "$LAB/lab-size-up.log" 2>&1 ||
    { cat "$LAB/lab-size-up.log"; exit 1; }
up_ms=$(( $(now_ms) - t0 ))
macs=$(awk -F'\t' '$1 == "node" { print $2 }' "$LAB/etc/plan.tsv")
groups=$(grep -c '^Group=' "$LAB/etc/tbmesh.conf")
say "up with $(wc -w <<<"$macs") Macs in $groups groups, $BRIDGES bridge hosts: $((up_ms / 1000)) s"
grep -o '^[0-9:]* [a-z_]*: [0-9]* s' "$LAB/log/up.log" | tail -n 25 | sort -t: -k4 -n -r | head -n 5 |
    sed 's/^/  slowest part of up: /'

# ---- what an idle Mac costs ----
pss() { awk '/^Pss:/ { s += $2 } END { print s + 0 }' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
ticks() { local f; f=($(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null)) || { echo 0; return; }; echo $(( f[11] + f[12] )); }
mac_pids() {   # a Mac's processes: those in its namespace, and its slurmd on a bridge host
    ip netns pids "tbml-$1" 2>/dev/null
    if grep -qP "^node\t$1\t.*\tmode=bridge" "$LAB/etc/plan.tsv"; then cat "$LAB/run/slurmd-$1.pid" 2>/dev/null; fi
    true
}
run_idle() {
    local n p kb t all_kb ctl_kb d mem_total hz
    declare -A T0
    for n in $macs; do T0[$n]=0; for p in $(mac_pids "$n"); do T0[$n]=$(( T0[$n] + $(ticks "$p") )); done; done
    sleep 30
    hz=$(getconf CLK_TCK)
    : > /tmp/lab-size-mem-direct; : > /tmp/lab-size-mem-bridge; : > /tmp/lab-size-cpu
    rm -f /tmp/lab-size-lat /tmp/lab-size-w8 /tmp/lab-size-ws
    for n in $macs; do
        kb=0 t=0
        for p in $(mac_pids "$n"); do kb=$(( kb + $(pss "$p") )); t=$(( t + $(ticks "$p") )); done
        if grep -qP "^node\t$n\t.*\tmode=bridge" "$LAB/etc/plan.tsv"; then echo "$kb" >> /tmp/lab-size-mem-bridge; else echo "$kb" >> /tmp/lab-size-mem-direct; fi
        awk -v d=$(( t - T0[$n] )) -v hz="$hz" 'BEGIN { printf "%.4f\n", d / hz / 30 * 100 }' >> /tmp/lab-size-cpu
    done
    all_kb=0
    for p in $({ for f in /run/netns/tbml-*; do ip netns pids "${f##*/}" 2>/dev/null; done
                cat "$LAB"/run/*.pid "$LAB"/run/*/*.pid 2>/dev/null; } | sort -un); do
        all_kb=$(( all_kb + $(pss "$p") ))
    done
    ctl_kb=0
    for d in slurmctld slurmdbd mysql/mysqld munge/munged; do
        p=$(cat "$LAB/run/$d.pid" 2>/dev/null) && ctl_kb=$(( ctl_kb + $(pss "$p") ))
    done
    mem_total=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
    say "an idle Mac, memory (PSS): direct mode (agent, supervisor, slurmd) median $(( $(median < /tmp/lab-size-mem-direct) / 1024 )) MiB," \
        "bridge mode (agent and supervisor on the Mac, its slurmd on the bridge host) median $(( $(median < /tmp/lab-size-mem-bridge) / 1024 )) MiB"
    say "an idle Mac, CPU over 30 s: median $(median < /tmp/lab-size-cpu)% of a core, max $(sort -n /tmp/lab-size-cpu | tail -n1)%;" \
        "all $(wc -l < /tmp/lab-size-cpu) together $(awk '{ s += $1 } END { printf "%.2f", s }' /tmp/lab-size-cpu)% of a core"
    say "the lab's processes: $(( all_kb / 1024 )) MiB (the controller's daemons $(( ctl_kb / 1024 )) MiB) of the machine's $(( mem_total / 1024 )) MiB"
}

# ---- submit RPCs with and without job_submit/tbmesh ----
run_submit() {
    big=$(sed -n 's/^Group=\([^ ]*\) Nodes=[^ ]* Topology=mesh .*Mode=bridge.*/\1/p' "$LAB/etc/tbmesh.conf" | head -n1)
    say "submit RPC at $(wc -w <<<"$macs") Macs (group $big, 8 Macs):"
    TBM_SUBMIT_GROUP=$big TBM_NODES=8 "$SRC/tests/perf/submit-overhead.sh" 200 | sed 's/^/  /'

}

# ---- JOBS queued jobs, Mac and Linux, with and without the plug-ins ----
sizes=(2 2 2 4 2 8 4 2)   # a Mac job's size, drawn with RANDOM from a fixed seed
declare -A FEAT
feature_of() {   # the constraint job_submit/tbmesh writes for a job of N Macs (a held job, cancelled)
    local j
    j=$(as_alice sbatch --parsable --hold -o /dev/null --gres=tbmesh:"$1" --wrap true)
    scontrol show job "$j" | grep -o 'Features=[^ ]*' | cut -d= -f2
    scancel "$j"
}
set_plugins() {   # on|off: job_submit/tbmesh and the spank plug-in, then reconfigure
    if [ "$1" = off ]; then
        cp "$LAB/etc/plugstack.conf" "$LAB/etc/plugstack.conf.size"; : > "$LAB/etc/plugstack.conf"
        sed -i 's/^JobSubmitPlugins=/#&/' "$SLURM_CONF"
    else
        [ ! -e "$LAB/etc/plugstack.conf.size" ] || mv "$LAB/etc/plugstack.conf.size" "$LAB/etc/plugstack.conf"
        sed -i 's/^#\(JobSubmitPlugins=\)/\1/' "$SLURM_CONF"
    fi
    scontrol reconfigure; sleep 3
}
queue() {   # queue on|off: JOBS jobs; prints "submit_rate_per_s latency_median latency_p90 makespan_s"
    local mode=$1 i s first="" last t0 t1 j
    RANDOM=4242
    t0=$(now_ms)
    for ((i = 0; i < JOBS; i++)); do
        if [ $((i % 2)) = 0 ]; then
            s=${sizes[$((RANDOM % 8))]}
            if [ "$mode" = on ]; then
                j=$(as_alice sbatch --parsable -o /dev/null -t 5 --gres=tbmesh:"$s" --wrap 'srun true')
            else
                j=$(as_alice sbatch --parsable -o /dev/null -t 5 -p mac -N "$s" --gres=tbmesh:1 --exclusive -C "${FEAT[$s]}" --wrap 'srun true')
            fi
        else
            j=$(as_alice sbatch --parsable -o /dev/null -t 5 -p linux -n 1 --wrap true)
        fi
        first=${first:-$j}; last=$j
    done
    t1=$(now_ms)
    local end=$((SECONDS + 1800))
    while [ -n "$(squeue -h -u tbm-alice -o %i)" ] && [ $SECONDS -lt $end ]; do sleep 2; done
    sleep 3
    SLURM_TIME_FORMAT=%s sacct -n -X -P -a -j "$(seq -s, "$first" "$last")" -o Submit,Start,End 2>/dev/null |
        awk -F'|' '$2 ~ /^[0-9]+$/ { print $2 - $1 > "/tmp/lab-size-lat"
                       if (min == "" || $1 < min) min = $1; if ($3 > max) max = $3 }
                   END { print max - min > "/tmp/lab-size-span" }'
    echo "$(awk -v n="$JOBS" -v ms=$((t1 - t0)) 'BEGIN { printf "%.1f", n / (ms / 1000) }') $(median < /tmp/lab-size-lat) $(p90 < /tmp/lab-size-lat) $(cat /tmp/lab-size-span)"
}
run_queue() {
    local s r1 l1 q1 m1 r0 l0 q0 m0
        for s in 2 4 8; do FEAT[$s]=$(feature_of "$s"); done
    read -r r1 l1 q1 m1 <<<"$(queue on)"
    set_plugins off
    read -r r0 l0 q0 m0 <<<"$(queue off)"
    set_plugins on
    say "$JOBS jobs (half Mac of 2-8 Macs, half Linux), as fast as sbatch takes them:"
    say "  with the plug-ins: $r1 submits/s, submit to start median ${l1} s (p90 ${q1} s), all done in ${m1} s"
    say "  without (plain Slurm, the same constraints): $r0 submits/s, median ${l0} s (p90 ${q0} s), all done in ${m0} s"
}

# ---- placement: pack against order, one seeded workload ----
# Long jobs of 2 Macs, more than the meshes of 2 and 4 hold (13 at once; 60-120 s each), then, once they run,
# jobs of 8 Macs (4, one every 5 s; 20-40 s each): where the pairs went decides whether a mesh of 8 is free.
# Pairs run in meshes only (a ring runs only whole). Under Placement=order they fill tbmesh.conf's meshes in
# its order, meshes of 8 among the first; under pack the meshes of 2 and 4 first.
stream() {   # stream pack|order: prints "wait8_median wait8_p90 wait2_median util_pct jobs8 jobs2"
    sed -i '/^Placement=/d' "$LAB/etc/tbmesh.conf"
    [ "$1" = pack ] || sed -i '0,/^Group=/s//Placement=order\nGroup=/' "$LAB/etc/tbmesh.conf"
    sleep 6   # job_submit/tbmesh reads tbmesh.conf again when it changes
    local i first="" last="" j end
    RANDOM=777
    for ((i = 0; i < 13; i++)); do
        j=$(as_alice sbatch --parsable -o /dev/null -t 5 --gres=tbmesh:2 --wrap "sleep $((60 + RANDOM % 61))")
        first=${first:-$j}; last=$j
    done
    end=$((SECONDS + 60))
    while [ -n "$(squeue -h -u tbm-alice -t PENDING -o %i)" ] && [ $SECONDS -lt $end ]; do sleep 1; done
    for ((i = 0; i < 4; i++)); do
        last=$(as_alice sbatch --parsable -o /dev/null -t 5 --gres=tbmesh:8 --wrap "sleep $((20 + RANDOM % 21))")
        sleep 5
    done
    end=$((SECONDS + 1800))
    while [ -n "$(squeue -h -u tbm-alice -o %i)" ] && [ $SECONDS -lt $end ]; do sleep 2; done
    sleep 3
    : > /tmp/lab-size-w8; : > /tmp/lab-size-ws
    SLURM_TIME_FORMAT=%s sacct -n -X -P -a -j "$(seq -s, "$first" "$last")" -o Submit,Start,End,NNodes 2>/dev/null |
        awk -F'|' -v macs="$(wc -w <<<"$macs")" '$2 ~ /^[0-9]+$/ { w = $2 - $1; if ($4 == 8) print w >> "/tmp/lab-size-w8"; else print w >> "/tmp/lab-size-ws"
                busy += ($3 - $2) * $4; if (min == "" || $1 < min) min = $1; if ($3 > max) max = $3 }
            END { printf "%.1f\n", busy / (macs * (max - min)) * 100 > "/tmp/lab-size-util" }'
    echo "$(median < /tmp/lab-size-w8) $(p90 < /tmp/lab-size-w8) $(median < /tmp/lab-size-ws) $(cat /tmp/lab-size-util) $(wc -l < /tmp/lab-size-w8) $(wc -l < /tmp/lab-size-ws)"
}
run_placement() {
    local w8p w8p9 wsp up n8 n2 w8o w8o9 wso uo
        read -r w8p w8p9 wsp up n8 n2 <<<"$(stream pack)"
        read -r w8o w8o9 wso uo _ _ <<<"$(stream order)"
        sed -i '/^Placement=/d' "$LAB/etc/tbmesh.conf"
        say "placement, one seeded workload (seed 777): $n2 jobs of 2 Macs (60-120 s) at once, then $n8 of 8 Macs (20-40 s), one every 5 s:"
        say "  Placement=pack:  8-Mac jobs wait median ${w8p} s (p90 ${w8p9} s), 2-Mac jobs ${wsp} s; the Macs busy ${up}%"
        say "  Placement=order: 8-Mac jobs wait median ${w8o} s (p90 ${w8o9} s), 2-Mac jobs ${wso} s; the Macs busy ${uo}%"
}

# ---- a step's launch on eight Macs, bridge against direct ----
run_launch() {
    local dg g
    bg=$(sed -n 's/^Group=\([^ ]*\) Nodes=[^ ]* Topology=mesh .*Mode=bridge.*/\1/p' "$LAB/etc/tbmesh.conf" | head -n1)
    dg=""
    for g in $(sed -n 's/^Group=\([^ ]*\) .*Mode=direct.*/\1/p' "$LAB/etc/tbmesh.conf"); do
        [ "$(scontrol show hostnames "$(sed -n "s/^Group=$g Nodes=\([^ ]*\).*/\1/p" "$LAB/etc/tbmesh.conf")" | wc -l)" = 8 ] && dg=$g && break
    done
    if [ -n "$dg" ]; then
        say "a step's launch on 8 Macs, $bg (bridge) against $dg (direct):"
        TBM_BRIDGE_GROUP=$bg TBM_DIRECT_GROUP=$dg TBM_NODES=8 "$SRC/tests/perf/step-launch.sh" 15 64 | sed 's/^/  /'
    else
        say "no 8-Mac group in direct mode at this size: the step launch comparison is left out"
    fi
}

# ---- the admin's commands at size ----
run_admin() {
    local t0 t1 g out rc load=()
    t0=$(now_ms); "$LABCMD" inventory > /dev/null 2>&1 || true; t1=$(now_ms)
    say "inventory of $(wc -w <<<"$macs") Macs (each probes itself, then tbmesh inventory): $(( t1 - t0 )) ms"
    t0=$(now_ms); "$TBMESH" report --last 1 > /tmp/lab-size-report.txt 2>&1 || true; t1=$(now_ms)
    say "tbmesh report over the last day ($(grep -c . /tmp/lab-size-report.txt) lines): $(( t1 - t0 )) ms"
    for g in $(sed -n 's/^Group=\([^ ]*\) .*Topology=mesh.*/\1/p' "$LAB/etc/tbmesh.conf" | grep -vx "$bg" | head -n 4); do
        load+=("$(as_alice sbatch --parsable -o /dev/null -t 10 --gres=tbmesh:"$g":2 --wrap 'srun sleep 300')")
    done
    mkdir -p "$LAB/accept-size"
    accept_setup "$LAB/accept-size"   # the lab tests' plan, and tbmesh.conf with the operations owners
    t0=$(now_ms)
    out=$("$TBMESH" accept "$bg" --plan "$LAB/accept-size/lab.plan" --conf "$LAB/accept-size/tbmesh.conf" \
        --out "$LAB/accept-size" --macnode "$LAB/inst/bin/macnode" 2>&1) && rc=0 || rc=$?
    t1=$(now_ms)
    scancel "${load[@]}" 2>/dev/null || true
    say "tbmesh accept $bg while ${#load[@]} jobs run on other groups: $(( (t1 - t0) / 1000 )) s, exit $rc" \
        "(0 plannable research resource, 10 prototype, 20 macOS compatibility only); $(tail -n1 <<<"$out")"
}

bg=$(sed -n 's/^Group=\([^ ]*\) Nodes=[^ ]* Topology=mesh .*Mode=bridge.*/\1/p' "$LAB/etc/tbmesh.conf" | head -n1)
for p in idle submit queue placement launch admin; do
    if part "$p"; then "run_$p"; fi
done

"$LABCMD" down > /dev/null 2>&1
env -u TBMESH_LAB_SPEC "$LABCMD" up > /dev/null 2>&1
trap - EXIT
if part submit; then
    say "submit RPC with the default lab (8 Macs), for comparison:"
    "$SRC/tests/perf/submit-overhead.sh" 200 | sed 's/^/  /'
fi
