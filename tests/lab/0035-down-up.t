#!/usr/bin/env bash
# 0035-down-up.t: 'tbmesh-lab down' then 'up' with jobs running: the jobs do not stay RUNNING with no process
# anywhere, holding their nodes: they end (NODE_FAIL) with a reason, and every node is back in service.
# The same after a crash (slurmctld killed, no orderly down): the next 'up' ends the orphaned jobs.
. "$(dirname "$0")/lib.sh"
no_jobs

# wait_running JOBID...: until every job RUNNING (at most 60 s).
wait_running() {
    local end=$((SECONDS + 60)) j ok
    while [ "$SECONDS" -lt "$end" ]; do
        ok=1
        for j in "$@"; do [ "$(squeue -h -j "$j" -o %T 2>/dev/null)" = RUNNING ] || ok=0; done
        [ "$ok" = 0 ] || return 0
        sleep 0.5
    done
    echo "not all of $* RUNNING within 60 s: $(squeue -h -j "$(IFS=,; echo "$*")" -o '%i %T %R' 2>&1)"
    return 1
}
# ended JOBID: the job's state once it has left RUNNING (at most 60 s after 'up'), else what it still is.
ended() {
    local end=$((SECONDS + 60)) st
    while [ "$SECONDS" -lt "$end" ]; do
        st=$(squeue -h -j "$1" -o %T 2>/dev/null)
        [ -n "$st" ] && [ "$st" != RUNNING ] && [ "$st" != COMPLETING ] && { echo "$st"; return; }
        [ -z "$st" ] && { sacct -n -X -P -j "$1" -o state | head -n1; return; }
        sleep 0.5
    done
    echo "still $st 60 s after up"
}

# submit TAG: a Linux job and a mini-b job, named with TAG (the state file keeps a job's name as a string;
# its id is binary, so the name is what a look into the file can find).
submit() {
    jl=$(as tbm-alice sbatch --parsable --no-requeue -p linux -N1 -J "orphan-linux-$1" --wrap 'sleep 600')
    jm=$(as tbm-alice sbatch --parsable --no-requeue --gres=tbmesh:mini-b:4 -J "orphan-mac-$1" --wrap 'srun sleep 600')
}

submit down-$$
out=$(wait_running "$jl" "$jm"); _t_result $? "a Linux job and a mini-b job are running" "$out"
t_ok "lab down with the jobs running" "$LABCMD" down
t_ok "lab up again" "$LABCMD" up
t_is "the Linux job ended with its node" "NODE_FAIL" "$(ended "$jl")"
t_is "the mini-b job ended with its nodes" "NODE_FAIL" "$(ended "$jm")"
t_match "slurmctld says why: the lab was taken down" "tbmesh-lab down: the lab was taken down" \
    "$(grep -E "(update_node|node .* set to DOWN|Reason)" "$LAB/log/slurmctld.log" | tail -n 20)"
t_is "every node back in service" "9" "$(sinfo -h -N -o '%N %T' | awk '$2 ~ /^(idle|mixed|allocated)$/' | sort -u | wc -l)"

# A crash: slurmctld and the slurmds die with SIGKILL, so nothing ends the jobs before the next 'up'.
submit crash-$$
out=$(wait_running "$jl" "$jm"); _t_result $? "jobs running again" "$out"
# slurmctld has saved them (its state is what the next start recovers): at most 30 s.
end=$((SECONDS + 30)); since=$(date +%s.%N)
saved_since() { awk -v a="$(stat -c %.9Y "$LAB/state/slurmctld/job_state" 2>/dev/null || echo 0)" -v b="$since" 'BEGIN { exit !(a > b) }'; }
until saved_since || [ "$SECONDS" -ge "$end" ]; do sleep 0.5; done
t_ok "slurmctld saved the running jobs" grep -q "orphan-mac-crash-$$" <(strings "$LAB/state/slurmctld/job_state")
for f in "$LAB"/run/slurmctld.pid "$LAB"/run/slurmd-*.pid; do kill -9 "$(cat "$f")" 2>/dev/null; done
t_ok "lab down after the crash" "$LABCMD" down
t_ok "lab up again" "$LABCMD" up
t_is "the orphaned Linux job ended at up" "NODE_FAIL" "$(ended "$jl")"
t_is "the orphaned mini-b job ended at up" "NODE_FAIL" "$(ended "$jm")"
t_match "with the reason of the restart" "the lab restarted, the job's processes are gone" \
    "$(grep -F 'the lab restarted' "$LAB/log/slurmctld.log" "$LAB/log/up.log" | tail -n 3)"
t_is "every node back in service" "9" "$(sinfo -h -N -o '%N %T' | awk '$2 ~ /^(idle|mixed|allocated)$/' | sort -u | wc -l)"
no_jobs
t_done
