#!/usr/bin/env bash
# 0075-placement-held.t: the placement rules hold for a job's whole life and say what to do. Its owner cannot
# undo a Mac job's placement or move a job that asked for no Mac onto a shared Mac with `scontrol update`
# (root may, and it is logged); a Mac job owns its Macs; requests that could only pend forever or that
# double up ranks are refused at submit with what works.
. "$(dirname "$0")/lib.sh"
no_jobs

sub() { local u=$1; shift; as "$u" sbatch --parsable -o /dev/null "$@" --wrap 'sleep 1' 2>&1; }
upd() { local u=$1; shift; as "$u" scontrol update "$@" 2>&1; }
field() { scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
CTLD_LOG=$LAB/log/slurmctld.log

# Held jobs: a Mac job, a job in the shared partition, a -p linux job.
mac=$(sub tbm-alice --hold --gres=tbmesh:4)
shared=$(sub tbm-alice --hold -p all)
linux=$(sub tbm-alice --hold -p linux)
# job_submit/tbmesh reads the jobs' present fields every 3 s, outside slurmctld's locks; until it has seen a
# job it refuses its owner's placement changes ("try again"). Wait until a harmless one passes.
end=$((SECONDS + 20))
until upd tbm-alice JobId="$linux" ExcNodeList= > /dev/null || [ $SECONDS -ge $end ]; do sleep 0.5; done
t_ok "job_submit/tbmesh knows the held jobs" upd tbm-alice JobId="$linux" ExcNodeList=

t_fail "a Mac job's owner cannot widen it across groups (Features=tbmesh ReqNodeList=mac01,mac02,mac05,mac06)" \
    upd tbm-alice JobId="$mac" Features=tbmesh ReqNodeList=mac01,mac02,mac05,mac06
t_match "... and the controller's log says why" "refused uid [0-9]+'s change of job $mac: job $mac is a Mac job" "$(cat "$CTLD_LOG")"
t_fail "nor move its partition (Partition=all)" upd tbm-alice JobId="$mac" Partition=all
t_fail "nor its node count (NumNodes=2)" upd tbm-alice JobId="$mac" NumNodes=2
t_fail "nor OR its groups without brackets" upd tbm-alice JobId="$mac" Features='tbmesh_studio_a|tbmesh_mini_b'
t_is "the Mac job keeps its group constraint" "[tbmesh_studio_a|tbmesh_mini_b]" "$(field "$mac" Features)"
t_fail "a shared-partition job cannot take mac01 (ExcNodeList= ReqNodeList=mac01)" \
    upd tbm-alice JobId="$shared" ExcNodeList= ReqNodeList=mac01
t_ok "a shared-partition job may change its exclusion (ExcNodeList=lnx01) ..." upd tbm-alice JobId="$shared" ExcNodeList=lnx01
t_match "... and the Macs stay excluded" "^lnx01,mac\[01-08\]$" "$(field "$shared" ExcNodeList)"
t_fail "a -p linux job cannot move to a shared Mac (Partition=all ReqNodeList=mac05)" \
    upd tbm-alice JobId="$linux" Partition=all ReqNodeList=mac05
t_ok "root may override" scontrol update JobId="$linux" Partition=all ReqNodeList=lnx01
t_ok "a change that is no placement passes (TimeLimit)" upd tbm-alice JobId="$mac" TimeLimit=5
scancel "$mac" "$shared" "$linux"

# A Mac job owns its Macs: a plain job on one of them waits for it.
big=$(as tbm-alice sbatch --parsable -o /dev/null --gres=tbmesh:mini-b:4 --wrap 'sleep 20')
end=$((SECONDS + 30)); while [ "$(field "$big" JobState)" != RUNNING ] && [ $SECONDS -lt $end ]; do sleep 0.5; done
t_is "the Mac job is exclusive" "0" "$(field "$big" OverSubscribe | grep -c YES)"
plain=$(as tbm-bob sbatch --parsable -o /dev/null -p mac -w mac05 --wrap true)
# until the scheduler has looked at it (a reason other than None), at most 15 s: a shared node would have
# started it then
end=$((SECONDS + 15))
while [ "$(squeue -h -j "$plain" -o %r)" = None ] && [ "$(field "$plain" JobState)" = PENDING ] && [ $SECONDS -lt $end ]; do
    sleep 0.3
done
t_is "a plain job on mac05 waits while the Mac job holds it" "PENDING" "$(field "$plain" JobState)"
scancel "$big" "$plain"

# Submit-time refusals that say what works.
r() { as tbm-bob sbatch -o /dev/null "$@" --wrap true 2>&1; }
t_match "--ntasks-per-node=2 is refused: one rank per Mac" "one MLX rank on each Mac; --ntasks-per-node=2" \
    "$(r --gres=tbmesh:4 --ntasks-per-node=2)"
t_match "-w naming Macs of both groups is refused at once (was: pends forever)" "-w names Macs of two groups" \
    "$(r -w mac01,mac05 -N4 --gres=tbmesh:4)"
t_match "... also with --gres=tbmesh:2 (was Slurm's generic message)" "-w names Macs of two groups" \
    "$(r -w mac01,mac05 --gres=tbmesh:2)"
j=$(as tbm-bob sbatch --parsable -o /dev/null -w mac05 --gres=tbmesh:4 --wrap true 2>&1)
t_match "-w mac05 --gres=tbmesh:4 runs on mini-b (sbatch's count of -w is no -N)" "^[0-9]+$" "$j"
t_match "... on all of mini-b" "mac\[05-08\]" "$(wait_job "$j" > /dev/null; field "$j" NodeList)"
t_match "--mlx-backend without --gres=tbmesh says it has no effect" "--mlx-backend=ring has no effect without --gres=tbmesh:N" \
    "$(r -p linux --mlx-backend=ring)"
out=$(as tbm-bob sbatch -o /dev/null --gres=tbmesh:2 : --gres=tbmesh:2 --wrap true 2>&1)
t_match "a heterogeneous job with Macs in two components is refused at submit" "may ask for Macs in one component only" "$out"
t_done
