#!/usr/bin/env bash
# 0150-faults.t: the fault matrix, part one: what breaks on a Mac or between Macs while a job runs. A cable
# pulled in the middle of an all-reduce on the mesh (studio-a, bridge mode) and on the ring (mini-b, direct
# mode); a Mac that goes off at once (every process in it killed), in direct and in bridge mode; a health
# check whose Mac's agent hangs. Each case ends the same way: the job's state and exit code as a user would
# expect them, with the Mac and the cause named in the job's output or in sacct; the Mac drained with a
# tbmesh reason where it is at fault; nothing of the job left on any Mac; sacct has the job and its steps;
# and after the repair the nodes are back and a following job runs. (0155 restarts the daemons.)
# Bounds on how long a failure takes to surface are asserted (as in 0110); no figure of speed is.
. "$(dirname "$0")/lib.sh"
no_jobs

W=$LAB/work/tbm-alice
BENCH_TMO=5000   # ms: the all-reduce's own timeout (-t): a rank that makes no progress for this long fails

# established MAC ADDR: a TCP connection from inside MAC to ADDR is established.
established() { "$LABCMD" exec "$1" ss -Htn state established dst "$2" | grep -q .; }
# group_runs GROUP N: a following job on the group runs on N Macs (once job_submit/tbmesh takes it again).
group_runs() {
    wait_until 30 "job_submit/tbmesh takes $1 jobs" \
        as tbm-alice sbatch --test-only --gres="tbmesh:$1:$2" --wrap true
    t_is "$3: a following job on $1 runs on its $2 Macs" "$2" \
        "$(as tbm-alice timeout 120 salloc -Q --gres="tbmesh:$1:$2" srun hostname 2>/dev/null | sort -u | wc -l)"
}

# cable_case NAME GROUP BACKEND END-A ADDR-B END-B STALLED: an all-reduce loop on the group; once the
# connection from END-A (MAC:IF) to ADDR-B (the address of END-B, the cable's other end) carries it, the
# cable is pulled. A rank that waits in vain says where its connection leaves its Mac; STALLED is what that
# may be. On the mesh every pair of ranks has its own cable: a rank at either end of the pulled one times
# out on it. On the ring the data goes round, and the first rank to time out is wherever the stall reaches
# first, not always at the pulled cable: there the job's output names a Mac and link of the group, and the
# cable itself is named by the drain reasons of its two Macs (sinfo -R).
cable_case() {
    local name=$1 group=$2 backend=$3 cut=$4 baddr=$5 endb=$6 stalled=$7 a=${4%:*} b=${6%:*} j out t0 took
    local iters=$((100000 + RANDOM))   # marks this job's processes on the Macs
    rm -f "$W/fault-$name.out"
    j=$(as tbm-alice sbatch --parsable -o "fault-$name.out" -t 3 --gres="tbmesh:$group:4" --mlx-backend="$backend" \
        --wrap "srun $T_MACNODE bench -b 1M -e 1M -n $iters -w 1 -t $BENCH_TMO")
    wait_until 60 "$name: the all-reduce of job $j runs over $cut" established "$a" "$baddr"
    t_is "$name: the job's ranks run on the group's 4 Macs" "4" \
        "$(mac_procs "bench .*-n $iters" $ALL_MACS | cut -d: -f1 | sort -u | wc -l)"
    t0=$SECONDS
    t_ok "$name: pull the cable at $cut" "$LABCMD" cut "$cut"
    wait_until 60 "$name: job $j ends" job_gone "$j"
    took=$((SECONDS - t0))
    t_is "$name: the job fails within its all-reduce's ${BENCH_TMO} ms timeout and the step's end ($took s < 30 s)" \
        "1" "$([ "$took" -lt 30 ] && echo 1)"
    t_is "$name: FAILED with the bench's exit code 3 (a rank failed)" "FAILED|3:0" "$(acct_final "$j" state,exitcode)"
    out=$(cat "$W/fault-$name.out")
    t_match "$name: the job's output names the Mac of the failed task" "srun: error: ($a|$b): task [0-9]+: Exited with exit code 3" "$out"
    t_match "$name: ... and where a rank waited in vain: the Mac and its link ('over MAC's IF'), the link down" \
        "macnode bench: rank [0-9]+: all-reduce: no progress with rank [0-9]+ \(169\.254\.[0-9.]+:[0-9]+\) over ($stalled) for $BENCH_TMO ms: it hangs, or the link is down" "$out"
    wait_until 20 "$name: $a and $b drained" eval "node_drained $a && node_drained $b"
    t_match "$name: $a is drained with the cable as the reason" "^Reason=tbmesh: cable-missing at $cut <-> $endb" "$(node_reason "$a")"
    t_match "$name: ... and $b" "^Reason=tbmesh: cable-missing at $endb <-> $cut" "$(node_reason "$b")"
    t_ok "$name: nothing of the job is left on any Mac" wait_until 20 "$name: no bench" none_on_macs "bench .*-n $iters"
    t_ok "$name: sacct has the job and its steps" wait_until 20 "$name: steps in sacct" acct_steps "$j"
    t_ok "$name: mend the cable (the watcher resumes both Macs)" "$LABCMD" mend "$cut"
    t_ok "$name: both are back in service" wait_until 20 "$name: $a and $b usable" eval "node_usable $a && node_usable $b"
    group_runs "$group" 4 "$name"
}

cable_case mesh studio-a jaccl mac01:en2 169.254.1.2 mac02:en2 "mac01's en2|mac02's en2"
cable_case ring mini-b ring mac06:en3 169.254.8.2 mac07:en2 "mac0[5-8]'s en[2-3]"

# A Mac that goes off in the middle of a job: every process in it is killed at once, nothing is told.
# Direct mode (mac07, its slurmd goes with it): Slurm itself ends the job as a node failure, as soon as srun
# sees the Mac's slurmstepd go, or once slurmctld finds its slurmd silent (SlurmdTimeout, 30 s in the lab, and
# a ping); a requeueable batch job is queued again, keeps its group, and runs once the Mac is back.
rm -f "$W/fault-off.out"
j=$(as tbm-alice sbatch --parsable -o fault-off.out -t 5 --requeue --gres=tbmesh:mini-b:4 \
    --wrap 'if [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then srun hostname; else srun sleep 601; fi')
t_ok "off: the job's tasks run on the 4 Macs of mini-b" \
    wait_until 60 "off: sleep on mini-b" on_macs 4 "(^|/)sleep 601 " mac05 mac06 mac07 mac08
t_ok "off: mac07 goes off" "$LABCMD" kill-mac mac07
# release JOBID: Slurm holds a requeued job back for about two minutes (its BeginTime); once it waits, an
# admin lets it start now (the test's wall time).
job_pending() { [ "$(job_state "$1")" = PENDING ]; }
release() {
    wait_until 30 "job $1 waits again" job_pending "$1" && scontrol update JobId="$1" StartTime=now > /dev/null
}
requeued() { [ "$(scontrol show job "$1" 2>/dev/null | grep -o 'Restarts=[0-9]*')" != "Restarts=0" ]; }
t_ok "off: the job is ended by a node failure and queued again (within SlurmdTimeout and a ping)" \
    wait_until 90 "off: job $j requeued" requeued "$j"
# slurmctld tells slurmdbd of the requeue on its own time: sacct has it within seconds, not at once.
first_run_failed() { sacct -n -X -P -D -j "$1" -o state | head -n1 | grep -Eq 'NODE_FAIL|REQUEUED'; }
wait_until 30 "off: job $j's first run in sacct" first_run_failed "$j" || true
t_match "off: sacct records its first run as a node failure" "NODE_FAIL|REQUEUED" "$(sacct -n -X -P -D -j "$j" -o state | head -n1)"
t_match "off: the job's output names the Mac and the node failure" \
    "srun: error: Node failure on mac07|JOB $j ON mac05 CANCELLED AT .* DUE TO NODE FAILURE" "$(cat "$W/fault-off.out")"
t_match "off: mac07 is down" "State=DOWN" "$(scontrol show node mac07)"
t_ok "off: nothing of the job is left on the other Macs" wait_until 30 "off: no sleep" none_on_macs "sleep 601"
t_match "off: the requeued job keeps its group" "Features=\[?tbmesh_mini_b" "$(scontrol show job "$j")"
t_ok "off: mac07 is powered on again" "$LABCMD" revive mac07
t_ok "off: mac07 is back in service" wait_until 60 "off: mac07 usable" node_usable mac07
release "$j"
t_ok "off: the requeued job runs again and ends" wait_until 200 "off: job $j ends" job_gone "$j"
t_is "off: ... COMPLETED" "COMPLETED|0:0" "$(acct_final "$j" state,exitcode)"
# Where the second run was allocated, as slurmctld recorded it; its step's nodes and output lines are printed
# (on a loaded machine Slurm has run that step without the Mac that had just come back, mac[05-06,08], and
# has lost its output line, with the step and the job COMPLETED).
t_is "off: ... on the 4 Macs of mini-b" "mac[05-08]" "$(sacct -n -X -P -j "$j" -o nodelist 2>/dev/null | tail -n1)"
echo "# the second run's step ran on $(sacct -n -P -j "$j.0" -o nodelist 2>/dev/null | tail -n1) and printed: $(sort -u "$W/fault-off.out" | grep '^mac' | paste -sd' ')"
t_ok "off: sacct has the job and its steps" wait_until 20 "off: steps in sacct" acct_steps "$j"

# Bridge mode (mac02): the bridge host's slurmd for it lives on, so Slurm sees no node failure (no requeue:
# that would take marking the Mac DOWN from the step, which ends the step before srun has its tasks'
# statuses and makes a failed srun exit 0; left open). The forwarder loses the agent and fails its task;
# slurm-tbmesh finds the agent unreachable and drains the Mac with the reason; the job's all-reduce fails
# at once on the other ranks (its peer closed), so the job ends FAILED, naming the Mac and its agent.
rm -f "$W/fault-off2.out"
iters=$((100000 + RANDOM))
j=$(as tbm-alice sbatch --parsable -o fault-off2.out -t 3 --gres=tbmesh:studio-a:4 --mlx-backend=jaccl \
    --wrap "srun $T_MACNODE bench -b 1M -e 1M -n $iters -w 1 -t $BENCH_TMO")
t_ok "off-bridge: the job's all-reduce runs (mac01 to mac02 over their cable)" \
    wait_until 60 "off-bridge: all-reduce of job $j" established mac01 169.254.1.2
t_ok "off-bridge: mac02 goes off" "$LABCMD" kill-mac mac02
t_ok "off-bridge: the job ends" wait_until 60 "off-bridge: job $j ends" job_gone "$j"
# (srun exits 255, the forwarder's status, which slurmctld logs as the job's; sacct has shown 127 for it.)
t_match "off-bridge: FAILED with a non-zero exit code" "^FAILED\|[1-9][0-9]*:0$" "$(acct_final "$j" state,exitcode)"
# The forwarder's end drains the Mac; the link watcher may see the Mac go too: wait for the drain, bounded.
agent_reason() { node_reason mac02 | grep -q '^Reason=tbmesh: agent-unreachable at 10\.77\.0\.12:'; }
wait_until 30 "off-bridge: mac02 drained for its agent" agent_reason || true
t_match "off-bridge: mac02 is drained with the agent as the reason" "^Reason=tbmesh: agent-unreachable at 10\.77\.0\.12:" "$(node_reason mac02)"
out=$(cat "$W/fault-off2.out")
t_match "off-bridge: the job's output names the Mac and its agent gone" \
    "macnode exec: the agent of mac02 at 10\.77\.0\.12:[0-9]+ closed the connection" "$out"
t_match "off-bridge: ... and the other ranks' peer gone" "macnode bench: rank [023]: all-reduce: .*rank 1 \(169\.254\.[0-9.]+:[0-9]+\).* closed" "$out"
t_ok "off-bridge: nothing of the job is left on any Mac" wait_until 30 "off-bridge: no bench" none_on_macs "bench .*-n $iters"
t_ok "off-bridge: sacct has the job and its steps" wait_until 20 "off-bridge: steps in sacct" acct_steps "$j"
t_ok "off-bridge: mac02 is powered on again" "$LABCMD" revive mac02
"$LABCMD" health mac02 > /dev/null 2>&1
t_ok "off-bridge: the health check resumes it" wait_until 20 "off-bridge: mac02 usable" node_usable mac02
group_runs studio-a 4 off-bridge

# A health check that hangs: mac03's agent stops answering (SIGSTOP: its port still takes connections).
# Slurm kills a HealthCheckProgram after 60 s, which would leave the Mac as it is; macnode check gives the
# agent less than that, and drains the Mac saying why.
rm -f "$W/fault-hang.out"
j=$(as tbm-alice sbatch --parsable -o fault-hang.out -t 3 --gres=tbmesh:studio-a:4 --wrap 'srun sh -c "sleep 603; :"')
t_ok "hang: the job's tasks run on the 4 Macs of studio-a" \
    wait_until 60 "hang: sleep on studio-a" on_macs 4 "(^|/)sleep 603 " mac01 mac02 mac03 mac04
agent=$(cat "$LAB/run/macnoded-mac03.pid")
kill -STOP "$agent"
t0=$SECONDS
out=$(timeout 90 "$LABCMD" health mac03 2>&1)
took=$((SECONDS - t0))
t_is "hang: the health check ends before Slurm's 60 s limit would kill it ($took s)" "1" "$([ "$took" -lt 55 ] && echo 1)"
t_match "hang: ... and drains mac03" "^mac03: drained$" "$out"
t_match "hang: with the silent agent as the reason" "^Reason=tbmesh: no facts: .*agent at 10\.77\.0\.13:[0-9]+: no whole frame within [0-9]+ ms" "$(node_reason mac03)"
kill -CONT "$agent"
scancel "$j"
t_ok "hang: the job, cancelled, ends" wait_until 30 "hang: job $j ends" job_gone "$j"
t_match "hang: ... CANCELLED" "^CANCELLED" "$(acct_final "$j" state)"
t_ok "hang: nothing of the job is left on any Mac" wait_until 20 "hang: no sleep" none_on_macs "sleep 603"
t_ok "hang: sacct has the job and its steps" wait_until 20 "hang: steps in sacct" acct_steps "$j"
"$LABCMD" health mac03 > /dev/null 2>&1
t_ok "hang: the health check resumes mac03 once its agent answers" wait_until 20 "hang: mac03 usable" node_usable mac03
group_runs studio-a 4 hang
no_jobs
t_done
