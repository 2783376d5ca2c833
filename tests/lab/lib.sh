# lib.sh: what every numbered lab test shares: assertions that count, and the lab's commands.
# A test script sources this file, makes assertions, and ends with `t_done`.
set -uo pipefail

T_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The build the lab runs (build-slurm-RELEASE inside a root of another Slurm release: slurm-root.sh sets it).
T_BUILD=${TBMESH_BUILDDIR:-$T_SRC/build}
LABCMD="$T_SRC/lab/tbmesh-lab"
LAB=${TBMESH_LAB_DIR:-/var/lib/tbmesh-lab}
export SLURM_CONF=$LAB/etc/slurm.conf
# What the nodes run, as the lab installed it in its state folder at 'up' (readable by the lab's users and
# inside every simulated Mac, wherever the source tree is): macnode, the kernels, tbm-mlxcheck.
T_INST=$LAB/inst
T_MACNODE=$T_INST/bin/macnode
T_MLXCHECK=$T_INST/libexec/tbmesh-lab/tbm-mlxcheck
T_BENCH=$T_INST/libexec/slurm-tbmesh/macnode-bench
T_NAME=$(basename "$0")
T_PASS=0
T_FAIL=0

_t_result() {
    if [ "$1" = 0 ]; then
        T_PASS=$((T_PASS + 1)); echo "ok - $2"
    else
        T_FAIL=$((T_FAIL + 1)); echo "not ok - $2"
        [ -z "${3:-}" ] || printf '%s\n' "$3" | sed 's/^/#   /' | head -n 40
    fi
}

# t_ok DESC CMD...: CMD succeeds.
t_ok() {
    local desc=$1 out rc; shift
    out=$("$@" 2>&1); rc=$?
    _t_result "$rc" "$desc" "$out"
}

# t_fail DESC CMD...: CMD fails.
t_fail() {
    local desc=$1 out rc; shift
    out=$("$@" 2>&1); rc=$?
    [ "$rc" != 0 ]; _t_result $? "$desc" "exit 0 where a failure was expected: $out"
}

# t_is DESC EXPECTED ACTUAL
t_is() {
    [ "$2" = "$3" ]; _t_result $? "$1" "expected: [$2]
actual:   [$3]"
}

# t_match DESC REGEX ACTUAL
t_match() {
    grep -Eq -- "$2" <<<"$3"; _t_result $? "$1" "no match for /$2/ in:
$3"
}

t_done() {
    echo "# $T_NAME: $T_PASS passed, $T_FAIL failed"
    [ "$T_FAIL" = 0 ]
}

# as USER CMD...: run a Slurm command as one of the lab's ordinary users, in their work folder.
as() {
    local u=$1; shift
    (cd "$LAB/work/$u" && runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" "$@")
}

# wait_job JOBID [SECONDS]: until the job has left the queue; prints its final state from sacct.
wait_job() {
    local id=$1 end=$((SECONDS + ${2:-60})) st
    while [ "$SECONDS" -lt "$end" ]; do
        st=$(sacct -n -X -P -j "$id" -o state 2>/dev/null | head -n1)
        case "$st" in
            COMPLETED*|FAILED*|CANCELLED*|TIMEOUT*|NODE_FAIL*|OUT_OF_ME*) echo "$st"; return 0 ;;
        esac
        sleep 0.5
    done
    echo "TIMEOUT-WAITING($st)"
}

# acct JOBID FIELDS: sacct's allocation line, once slurmdbd has the whole record (it fills in just after the
# job ends).
acct() {
    local out end=$((SECONDS + 15))
    while :; do
        out=$(sacct -n -X -P -j "$1" -o "partition,$2")
        [ -n "${out%%|*}" ] || [ "$SECONDS" -ge "$end" ] && break
        sleep 0.5
    done
    cut -d'|' -f2- <<<"$out"
}

# acct_final JOBID FIELDS: as acct, once sacct has the job's end (a final state; slurmdbd may hear of it a
# little after the job has left the queue, the more so just after a restart); at most 30 s.
acct_final() {
    local end=$((SECONDS + 30)) st
    while [ "$SECONDS" -lt "$end" ]; do
        st=$(sacct -n -X -P -j "$1" -o state 2>/dev/null | tail -n1)
        case "$st" in COMPLETED*|FAILED*|CANCELLED*|TIMEOUT*|NODE_FAIL*|OUT_OF_ME*|PREEMPTED*|DEADLINE*) break ;; esac
        sleep 0.3
    done
    acct "$1" "$2"
}

# no_jobs: cancel what the lab's users have queued or running (a test starts from an empty queue), and wait.
no_jobs() {
    local end=$((SECONDS + 30))
    scancel -u tbm-alice > /dev/null 2>&1
    scancel -u tbm-bob > /dev/null 2>&1
    while [ -n "$(squeue -h -u tbm-alice,tbm-bob 2>/dev/null)" ] && [ "$SECONDS" -lt "$end" ]; do sleep 0.5; done
    [ -z "$(squeue -h -u tbm-alice,tbm-bob 2>/dev/null)" ] ||
        echo "# no_jobs: the lab's users still have jobs 30 s after scancel: $(squeue -h -u tbm-alice,tbm-bob -o '%i %T %R' | paste -sd';')"
}

plan_rows() { awk -F'\t' -v k="$1" '$1 == k' "$LAB/etc/plan.tsv"; }

# wait_until SECONDS WHAT CMD...: poll CMD until it succeeds; after SECONDS, say WHAT was not reached and
# return 1.
wait_until() {
    local secs=$1 what=$2 end=$((SECONDS + $1)); shift 2
    until "$@" > /dev/null 2>&1; do
        if [ "$SECONDS" -ge "$end" ]; then echo "# wait_until: $what: not within $secs s"; return 1; fi
        sleep 0.3
    done
}

# job_state JOBID: the job's state now (squeue's while it is queued, sacct's once it has left).
job_state() {
    local st
    st=$(squeue -h -j "$1" -o %T 2>/dev/null)
    [ -n "$st" ] || st=$(sacct -n -X -P -j "$1" -o state 2>/dev/null | tail -n1)
    echo "$st"
}
job_running() { [ "$(job_state "$1")" = RUNNING ]; }
job_gone() { [ -z "$(squeue -h -j "$1" -o %T 2>/dev/null)" ]; }

# mac_procs PATTERN MAC...: the processes inside those Macs (network namespaces) whose command line matches
# PATTERN (grep -E), as MAC:PID.
mac_procs() {
    local pat=$1 n p; shift
    for n in "$@"; do
        for p in $(ip netns pids "tbml-$n" 2>/dev/null); do
            { tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null | grep -Eq -- "$pat" && echo "$n:$p"
        done
    done
    true
}
# on_macs N PATTERN MAC...: a process matching PATTERN runs in exactly N of those Macs.
on_macs() {
    local n=$1; shift
    [ "$(mac_procs "$@" | cut -d: -f1 | sort -u | wc -l)" = "$n" ]
}
ALL_MACS="mac01 mac02 mac03 mac04 mac05 mac06 mac07 mac08"
# none_on_macs PATTERN: no process matching PATTERN in any Mac.
none_on_macs() {
    # shellcheck disable=SC2086
    [ -z "$(mac_procs "$1" $ALL_MACS)" ]
}

node_reason() { scontrol show node "$1" | grep -o 'Reason=.*' | sed 's/ \[.*//'; }
node_drained() { scontrol show node "$1" | grep -q 'State=[A-Z+_]*DRAIN'; }
node_usable() { sinfo -h -N -n "$1" -o %T | grep -Eqx '(idle|mixed|allocated)'; }

# acct_steps JOBID: sacct has the job, its batch step and its first srun step (of any of its runs).
acct_steps() {
    local ids
    ids=" $(sacct -n -P -D -j "$1" -o jobid 2>/dev/null | sort -u | paste -sd' ') "
    [[ "$ids" == *" $1 "* && "$ids" == *" $1.batch "* && "$ids" == *" $1.0 "* ]]
}

# accept_setup DIR [SIZE]: in DIR, the acceptance plan the lab's runs use (lab.plan) and the lab's tbmesh.conf
# with the operations owners (tbmesh.conf). The lab's cables are veth pairs sharing this host's cores with
# eight Macs, far from Thunderbolt's rates: the plan asks for a small share of each link (the figures are in
# the record). SIZE (default 1M) bounds the sweep and the point-to-point transfers; the reference network's
# width is half of it in KiB.
accept_setup() {
    local dir=$1 size=${2:-1M} kib
    case "$size" in *M) kib=$(( ${size%M} * 1024 )) ;; *K) kib=${size%K} ;; *) kib=$size ;; esac
    cat > "$dir/lab.plan" <<PLAN
[acceptance]
task = distributed inference of the reference network on all the group's Macs
model = the reference workload (macnode refwork)
data = generated from seed 1
expected_output = the mesh's output equals the single Mac's within 1e-4
backend = jaccl
link_share = 0.01
busbw_share = 0.01
refwork_hidden = $(( kib / 2 ))
sweep_max = $size
p2p_size = $size
PLAN
    { cat "$LAB/etc/tbmesh.conf"; printf 'OwnerRecovery=hpc-ops@lab.example\nOwnerAccess=lab-lead\nOwnerUpkeep=hpc-ops@lab.example\n'; } \
        > "$dir/tbmesh.conf"
}
