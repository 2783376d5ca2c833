#!/usr/bin/env bash
# 0155-daemons.t: the fault matrix, part two: the lab's daemons restarted while Mac jobs run and wait. The
# bridge host's slurmd for one Mac, then every slurmd of the bridge host; slurmctld; slurmdbd; munged. The
# jobs go on (a slurmstepd outlives its slurmd), the waiting ones keep the group job_submit/tbmesh placed them
# on, all finish COMPLETED, and sacct has every job and step.
# The lab runs one munged, on the bridge host, whose socket every simulated Mac shares (the Macs' agents and
# direct-mode slurmds use it through the state folder): restarting it restarts MUNGE for the bridge and the
# Macs at once. A real Mac has a munged of its own; the lab cannot restart one without the other.
. "$(dirname "$0")/lib.sh"
no_jobs

W=$LAB/work/tbm-alice

# submit NAME GRES SCRIPT: a batch job of tbm-alice, its output in fault-NAME.out; prints its id.
submit() {
    rm -f "$W/fault-$1.out"
    as tbm-alice sbatch --parsable -o "fault-$1.out" -t 3 --gres="$2" --wrap "$3"
}
# placed JOBID: the constraint job_submit/tbmesh put on the job.
placed() { scontrol show job "$1" | grep -o 'Features=[^ ]*'; }
# finished NAME JOBID NODES-REGEX LINES: the job COMPLETED, its output lines all from the group, accounted.
finished() {
    t_ok "$1: job $2 ends" wait_until 120 "$1: job $2 ends" job_gone "$2"
    t_is "$1: ... COMPLETED" "COMPLETED|0:0" "$(acct_final "$2" state,exitcode)"
    t_is "$1: ... its $4 lines of output from its group" "$4" "$(grep -Ec "^($3)$" "$W/fault-$1.out")"
    t_ok "$1: sacct has the job and its steps" wait_until 20 "$1: steps in sacct" acct_steps "$2"
}
STUDIO="mac01 mac02 mac03 mac04"

# slurmd: the one of mac01 on the bridge host, then all four, while a studio-a step runs.
rm -f "$W/stop-604"
j=$(submit slurmd tbmesh:studio-a:4 'srun sh -c "while [ ! -e stop-604 ]; do sleep 0.3; done; hostname"')
t_ok "slurmd: the job's tasks run on studio-a" wait_until 60 "slurmd: tasks on studio-a" on_macs 4 "stop-604" $STUDIO
t_ok "slurmd: restart mac01's slurmd on the bridge host" "$LABCMD" restart slurmd mac01
t_ok "slurmd: restart every slurmd of the bridge host" "$LABCMD" restart slurmd bridge
t_is "slurmd: the job runs on" "RUNNING" "$(job_state "$j")"
t_ok "slurmd: ... its tasks too" on_macs 4 "stop-604" $STUDIO
touch "$W/stop-604"
finished slurmd "$j" "mac0[1-4]" 4
t_ok "slurmd: nothing of the job is left on any Mac" wait_until 20 "slurmd: no sleep" none_on_macs "stop-604"
rm -f "$W/stop-604"

# slurmctld, then slurmdbd: a studio-a job and a mini-b job run, a second studio-a job waits for the first
# (a Mac job owns its Macs). One step each: Slurm 22.05 itself can hold a step asked for just as a step that
# ran across a slurmctld restart ends ("Requested nodes are busy"), and wakes it only at its next retry or
# step event, a minute or more later; that is Slurm's, not what is tested here.
for d in slurmctld slurmdbd; do
    # (c before b: Slurm's main scheduler starts no job of a partition behind one that waits there; only its
    # backfill pass, every 30 s, would.)
    a=$(submit "$d-a" tbmesh:studio-a:4 'srun sh -c "sleep 12; hostname"')
    c=$(submit "$d-c" tbmesh:mini-b:4 'srun sh -c "sleep 12; hostname"')
    b=$(submit "$d-b" tbmesh:studio-a:2 'srun hostname')
    t_ok "$d: two jobs run" wait_until 60 "$d: a and c run" eval "job_running $a && job_running $c"
    t_is "$d: the third waits" "PENDING" "$(job_state "$b")"
    pa=$(placed "$a") pb=$(placed "$b") pc=$(placed "$c")
    t_ok "$d: restart $d" "$LABCMD" restart "$d"
    t_is "$d: the running jobs run on" "RUNNING RUNNING" "$(job_state "$a") $(job_state "$c")"
    t_is "$d: every job keeps its group constraint" "$pa $pb $pc" "$(placed "$a") $(placed "$b") $(placed "$c")"
    finished "$d-a" "$a" "mac0[1-4]" 4
    finished "$d-c" "$c" "mac0[5-8]" 4
    finished "$d-b" "$b" "mac0[1-4]" 2
    t_match "$d: the waiting job ran on two Macs of studio-a" "^mac0[1-4] mac0[1-4]$" \
        "$(scontrol show hostnames "$(acct "$b" nodelist)" | paste -sd' ')"
done

# munged, between the steps of a studio-a (bridge) and a mini-b (direct) job: each step after the restart
# needs MUNGE again (srun's credential, the job grant the forwarder takes to the agent).
steps='for i in 1 2 3 4; do srun hostname || exit 1; while [ ! -e go-$SLURM_JOB_ID-$i ]; do sleep 0.3; done; done'
a=$(submit munge-a tbmesh:studio-a:4 "$steps")
c=$(submit munge-c tbmesh:mini-b:4 "$steps")
first_steps() { [ "$(grep -c . "$W/fault-munge-a.out" 2>/dev/null)" -ge 4 ] && [ "$(grep -c . "$W/fault-munge-c.out" 2>/dev/null)" -ge 4 ]; }
t_ok "munge: both jobs ran their first step" wait_until 60 "munge: first steps" first_steps
t_ok "munge: restart munged" "$LABCMD" restart munged
for i in 1 2 3 4; do touch "$W/go-$a-$i" "$W/go-$c-$i"; done
finished munge-a "$a" "mac0[1-4]" 16
finished munge-c "$c" "mac0[5-8]" 16
rm -f "$W"/go-"$a"-* "$W"/go-"$c"-*
group_ok() { as tbm-alice timeout 60 salloc -Q --gres="tbmesh:$1:4" srun hostname 2>/dev/null | sort -u | wc -l; }
t_is "after it all, a studio-a job runs on its 4 Macs" "4" "$(group_ok studio-a)"
t_is "... and a mini-b job" "4" "$(group_ok mini-b)"
no_jobs
t_done
