#!/usr/bin/env bash
# smoke.t: the lab's smoke set, the same on every Slurm release slurm-tbmesh supports (scripts/test.sh
# --smoke, and on the release that does not get the full suite, e.g. --slurm 24.11 --smoke): from the lab's
# start to its end, a Linux job, jobs on both Mac groups with every rank's MLX environment checked, a
# bridge-mode step, a record that verifies against accounting, a usage report and an acceptance run.
# Brings the lab up itself and leaves it up (tests/lab/run --smoke takes it down).
. "$(dirname "$0")/lib.sh"

TBMESH=$T_INST/bin/tbmesh
W=$LAB/work/tbm-alice
iso() { date -d "@$1" +%Y-%m-%dT%H:%M:%S; }
start=$(date +%s)

t_ok "the lab comes up" "$LABCMD" up
want=${TBMESH_SLURM_ROOT:-$("$T_SRC/scripts/slurm-root.sh" native)}
ctld=$(scontrol show config 2>/dev/null | sed -n 's/^SLURM_VERSION *= *//p')
echo "# slurmctld: Slurm $ctld; the plug-ins are built for $(sed -n 's/^#define TBM_SLURM_BUILT_FOR "\(.*\)"/\1/p' "$T_BUILD/config.h")"
t_match "slurmctld is Slurm $want" "^${want//./\\.}\." "$ctld"
t_match "job_submit/tbmesh is loaded" "JobSubmitPlugins *= .*tbmesh" "$(scontrol show config)"
no_jobs

# ---- a Linux job and a batch job on each group ----
jl=$(as tbm-bob sbatch --parsable -p linux -N1 -o linux-%j.out --wrap 'hostname; id -un')
ja=$(as tbm-alice sbatch --parsable --gres=tbmesh:studio-a:4 -o studio-%j.out --wrap 'srun hostname | sort')
jb=$(as tbm-alice sbatch --parsable --gres=tbmesh:mini-b:4 -o mini-%j.out --wrap 'srun hostname | sort')
t_match "sbatch gave job ids" '^[0-9]+ [0-9]+ [0-9]+$' "$jl $ja $jb"
t_is "the Linux job completed" "COMPLETED" "$(wait_job "$jl")"
t_is "the studio-a job completed" "COMPLETED" "$(wait_job "$ja")"
t_is "the mini-b job completed" "COMPLETED" "$(wait_job "$jb")"
t_is "the Linux job ran on lnx01 as tbm-bob" "lnx01 tbm-bob" "$(paste -sd' ' "$LAB/work/tbm-bob/linux-$jl.out" 2>&1)"
t_is "the studio-a job's steps ran on its four Macs (bridge mode)" "mac01 mac02 mac03 mac04" \
    "$(grep -v '^tbmesh: ' "$W/studio-$ja.out" 2>&1 | paste -sd' ')"
t_is "the mini-b job's steps ran in its four Macs (direct mode)" "mac05 mac06 mac07 mac08" \
    "$(grep -v '^tbmesh: ' "$W/mini-$jb.out" 2>&1 | paste -sd' ')"
t_match "sacct: the studio-a job holds gres/tbmesh=4 on mac[01-04]" 'gres/tbmesh=4.*\|mac\[01-04\]$' \
    "$(acct "$ja" alloctres,nodelist)"
t_is "a Linux job is refused nowhere and gets no tbmesh gres" "" "$(acct "$jl" alloctres | grep -o 'gres/tbmesh[^,]*')"

# ---- every rank's MLX environment, both groups ----
dumps=$W/smoke-dumps
rm -rf "$dumps"; mkdir -p "$dumps"; chown tbm-alice: "$dumps"
for spec in studio-a:jaccl mini-b:ring studio-a:mpi; do
    group=${spec%%:*} backend=${spec#*:}
    rm -f "$dumps"/*
    out=$(as tbm-alice salloc --gres=tbmesh:$group:4 --mlx-backend="$backend" \
        srun sh -c "$T_MLXCHECK --local --dump $dumps/r\$SLURM_PROCID.json" 2>&1; "$T_MLXCHECK" --job "$dumps"/r*.json 2>&1)
    t_is "$group, $backend: each of the four ranks follows MLX's rules" "4" "$(grep -c "of 4: backend $backend: ok" <<<"$out")"
    t_match "$group, $backend: and the ranks together" "job of 4 ranks: ok" "$out"
done

# ---- a bridge-mode step: each task on its own Mac, as the user, in the job's folder ----
out=$(as tbm-alice salloc --gres=tbmesh:studio-a:4 srun -l sh -c 'echo $(hostname) $(id -un) $(pwd)' 2>/dev/null | sort)
t_is "bridge mode: each task on its own Mac, as the user, in the job's folder" "0: mac01 tbm-alice $W
1: mac02 tbm-alice $W
2: mac03 tbm-alice $W
3: mac04 tbm-alice $W" "$out"

# ---- a record that verifies ----
STORE=$LAB/records/tbmlab
t_ok "the studio-a job's record is in the store, root's" test "$(stat -c %U "$STORE/$ja.json" 2>&1)" = root
t_ok "tbmesh repro verify: sealed by root, matches accounting" as tbm-alice "$TBMESH" repro verify "$ja"
t_match "tbmesh repro show: the job, its state, sealed" "Job $ja on tbmlab: COMPLETED, exit 0 \(record: end phase, sealed by root\)" \
    "$(as tbm-alice "$TBMESH" repro show "$ja" 2>&1)"

# ---- a usage report over these jobs ----
sleep 1
end=$(( $(date +%s) + 1 ))
acct_final "$jb" state > /dev/null
csv=$("$TBMESH" report --since "$(iso "$start")" --until "$(iso "$end")" --by kind,group --csv 2>&1)
t_match "tbmesh report: Mac jobs on studio-a" '^usage-group,studio-a,[0-9]+,' "$csv"
t_match "tbmesh report: ... and Linux jobs beside them" '^usage-kind,linux,[0-9]+,' "$csv"

# ---- what Slurm's commands print, as tbmesh metrics reads them (scontrol, squeue, sacct of this release) ----
mx=$("$TBMESH" metrics --once --conf "$LAB/etc/tbmesh.conf" --health-dir "$LAB/run/health" 2> "$LAB/smoke-metrics.err"); rc=$?
t_is "tbmesh metrics --once: Slurm answers" "0 1" "$rc $(sed -n 's/^tbmesh_slurm_up //p' <<<"$mx")"
t_is "... every Mac's state read from this release's scontrol (8 Macs)" "8" \
    "$(grep -c '^tbmesh_mac_state{group="[a-z0-9-]*",node="mac0[1-8]",state="[a-z_]*"} 1$' <<<"$mx")"
t_match "... the Mac jobs' records looked up through its sacct" '^tbmesh_job_records_missing [0-9]+$' \
    "$(grep '^tbmesh_job_records_missing' <<<"$mx")"
t_is "... and no line of its output went unread" "" \
    "$(grep -E 'do not read|did not answer|not looked up' "$LAB/smoke-metrics.err")"

# ---- an acceptance run (small shares: the lab's cables are veths on a shared host) ----
OUT=$LAB/smoke-accept
rm -rf "$OUT"; mkdir -p "$OUT"
accept_setup "$OUT" 256K
out=$("$TBMESH" accept studio-a --plan "$OUT/lab.plan" --conf "$OUT/tbmesh.conf" --out "$OUT" --timeout 120 \
    --macnode "$T_MACNODE" 2> "$OUT/stderr"); rc=$?
t_is "tbmesh accept studio-a: exit 0, a plannable research resource" "0" "$rc"
t_match "... the record says so" "^# Acceptance of studio-a: plannable research resource" "$out"
[ "$rc" = 0 ] || tail -n 20 "$OUT/stderr" | sed 's/^/#   /'
no_jobs
t_done
