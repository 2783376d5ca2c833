#!/usr/bin/env bash
# 0095-step-path.t: the step's path on the nodes. What job_submit/tbmesh decided reaches the nodes with the
# job (its tag), a step the plug-in refuses fails visibly (srun non-zero, sacct not COMPLETED, the reason on
# stderr), steps on part of a job's Macs (Open MPI's daemons, a one-Mac baseline) run and say how, and the
# job's folder on a Mac is made by root where users cannot make it first.
. "$(dirname "$0")/lib.sh"
no_jobs

# The tag: job_submit/tbmesh's decision reaches the job's prolog, which keeps it for the steps in root's state
# folder; the nodes read it there instead of asking slurmctld.
out=$LAB/work/tbm-alice/tag.out; rm -f "$out"
as tbm-alice sbatch --wait -o "$out" --gres=tbmesh:mini-b:4 --mlx-backend=ring \
    --wrap 'srun -N1 sh -c "cat /run/slurm-tbmesh/$SLURM_JOB_ID.tag; stat -c \"%U %a\" /run/slurm-tbmesh"' > /dev/null 2>&1
t_is "a Mac job carries job_submit's decision to its nodes, with its run (Slurm's restart count)" "v1 macs=4 backend=ring
run=0
root 711" "$(grep -v '^tbmesh: ' "$out" 2>/dev/null)"

# A job that asked for no Macs carries no tag: its prolog keeps "macs=0", which its steps read.
out=$LAB/work/tbm-bob/notag.out; rm -f "$out"
as tbm-bob sbatch --wait -o "$out" -p mac -w mac05 --wrap 'cat /run/slurm-tbmesh/$SLURM_JOB_ID.tag' > /dev/null 2>&1
t_is "a job without Macs is kept as one on its node (macs=0)" "v1 macs=0 backend=auto
run=0" "$(grep -v '^tbmesh: ' "$out" 2>/dev/null)"
# A user who puts a tag in a job's request (libslurm takes any SPANK variable): job_submit/tbmesh drops it.
out=$LAB/work/tbm-bob/forged.out; rm -f "$out"
job=$(as tbm-bob "$T_BUILD/tests/lab-tools/forge-tag" mac mac05 "TBMESH_JOB=v1 macs=4 backend=jaccl" "$out" 2>&1)
t_match "a user can send a job request with a SPANK variable of their own" "^[0-9]+$" "$job"
wait_job "$job" 60 > /dev/null
t_is "... a tag put there is not the job's: its node keeps macs=0" "v1 macs=0 backend=auto
run=0" "$(cat "$out" 2>/dev/null)"
# ... nor one under the name the prolog reads (Slurm passes a SPANK_ name as it is), nor one given twice (the
# last of a name is the one the prolog sees)
out=$LAB/work/tbm-bob/forged2.out; rm -f "$out"
job=$(as tbm-bob "$T_BUILD/tests/lab-tools/forge-tag" mac mac05 "SPANK_TBMESH_JOB=v1 macs=4 backend=jaccl" "$out" \
    "TBMESH_JOB=v1 macs=2 backend=ring" "TBMESH_JOB=v1 macs=4 backend=jaccl" 2>&1)
t_match "a user can send several SPANK variables, one named as the prolog reads it" "^[0-9]+$" "$job"
wait_job "$job" 60 > /dev/null
t_is "... none of them is the job's tag: its node keeps macs=0" "v1 macs=0 backend=auto
run=0" "$(cat "$out" 2>/dev/null)"
# The tag's one route: a step on a Mac whose tag its prolog did not keep is refused, saying why; no step asks
# slurmctld what the job asked for.
out=$LAB/work/tbm-alice/lost-tag.out; rm -f "$out" "$LAB/work/tbm-alice"/lost-tag.{ready,go}
# (the job waits for the test's word, at most 2 min, not a fixed time)
job=$(as tbm-alice sbatch --parsable -o "$out" --gres=tbmesh:mini-b:4 --mlx-backend=ring \
    --wrap 'srun -N4 true; touch lost-tag.ready; for i in $(seq 600); do [ -e lost-tag.go ] && break; sleep 0.2; done
srun -N4 true; echo "srun exit $?"')
for _ in $(seq 600); do [ -e "$LAB/work/tbm-alice/lost-tag.ready" ] && break; sleep 0.2; done
for m in mac05 mac06 mac07 mac08; do "$LABCMD" exec "$m" rm -f "/run/slurm-tbmesh/$job.tag"; done
touch "$LAB/work/tbm-alice/lost-tag.go"
wait_job "$job" 90 > /dev/null
t_match "a step whose tag is lost fails" "^srun exit [1-9][0-9]*$" "$(grep '^srun exit' "$out" 2>/dev/null)"
t_match "... saying why and what to do" "has no tbmesh tag on this node .*its prolog did not keep it.*resubmit the job" \
    "$(cat "$out" 2>/dev/null)"

# A requeued job keeps its id, and on a loaded node the epilog of its first run can come after the prolog of
# its second: that epilog must leave the second run's tag (else the second run's steps are refused). Here the
# job's run 0 ends while its tag on mac05 says run 1, as that prolog would have written it.
out=$LAB/work/tbm-alice/later-run.out; rm -f "$out" "$LAB/work/tbm-alice"/later-run.{ready,go}
job=$(as tbm-alice sbatch --parsable -o "$out" -p mac -w mac05 \
    --wrap 'touch later-run.ready; for i in $(seq 600); do [ -e later-run.go ] && break; sleep 0.2; done')
for _ in $(seq 600); do [ -e "$LAB/work/tbm-alice/later-run.ready" ] && break; sleep 0.2; done
"$LABCMD" exec mac05 sh -c "printf 'v1 macs=0 backend=auto\nrun=1\n' > /run/slurm-tbmesh/$job.tag"
touch "$LAB/work/tbm-alice/later-run.go"
wait_job "$job" 60 > /dev/null
kept_gone() { ! "$LABCMD" exec mac05 test -e "/run/slurm-tbmesh/$1.tag"; }
epilog_said() { grep -q "job $1: run 0's epilog leaves the tag a later run kept" "$LAB/log/slurmd-mac05.log"; }
wait_until 20 "job $job's epilog on mac05" epilog_said "$job" || true
t_is "the epilog of a job's run 0 leaves the tag its run 1 kept" "v1 macs=0 backend=auto
run=1" "$("$LABCMD" exec mac05 cat "/run/slurm-tbmesh/$job.tag" 2>&1)"
t_ok "... and says so in slurmd's log" epilog_said "$job"
"$LABCMD" exec mac05 rm -f "/run/slurm-tbmesh/$job.tag"
# ... and a job's own tag goes with its epilog.
job=$(as tbm-alice sbatch --parsable -o /dev/null -p mac -w mac05 --wrap true)
wait_job "$job" 60 > /dev/null
t_ok "a job's own tag goes with its epilog" wait_until 20 "job $job's tag gone on mac05" kept_gone "$job"

# A refused step: JACCL asked of a ring without RDMA.
out=$(as tbm-alice salloc --gres=tbmesh:mini-b:4 bash -c 'srun --mlx-backend=jaccl true; echo "srun exit $?"; echo "job $SLURM_JOB_ID"' 2>&1)
t_match "a refused step's srun exits non-zero" "srun exit (125|[1-9][0-9]*)$" "$(grep '^srun exit' <<<"$out")"
t_match "the reason is on the job's stderr" "tbmesh: step [0-9]+\.0 refused on mac0[5-8].*jaccl" "$out"
job=$(sed -n 's/^job //p' <<<"$out")
# The job may end before slurmctld has every node's end of the step: the step's record can read COMPLETED a
# moment before the nodes' exit codes make it FAILED. Wait (bounded) for the final word.
state=""; end=$((SECONDS + 20))
while [ $SECONDS -lt $end ]; do
    state=$(sacct -n -P -j "$job.0" -o state 2>/dev/null | head -n1)
    [[ "$state" == FAILED* ]] && break; sleep 0.5
done
t_match "sacct does not call the refused step COMPLETED" "^FAILED" "$state"

# Steps on part of the job's Macs run: without MLX's distributed variables, saying so.
out=$(as tbm-alice salloc --gres=tbmesh:mini-b:4 --mlx-backend=mpi srun -N3 -l sh -c 'echo "ran ${TBMESH_BACKEND:-without}"' 2>&1)
t_is "a step on 3 Macs of a 4-Mac ring job runs on each" "3" "$(grep -c 'ran without' <<<"$out")"
t_match "and says it has no MLX variables" "runs on 3 of the job's 4 Macs without MLX's distributed variables" "$out"
t_is "a one-Mac step of a ring job runs (the baseline)" "none" \
    "$(as tbm-alice salloc --gres=tbmesh:mini-b:4 srun -N1 printenv TBMESH_BACKEND 2>/dev/null)"
out=$LAB/work/tbm-alice/mpirun.out; rm -f "$out"
as tbm-alice sbatch --wait -o "$out" --gres=tbmesh:mini-b:4 --mlx-backend=mpi \
    --wrap 'mpirun -np 4 --map-by ppr:1:node hostname | sort | paste -sd" "' > /dev/null 2>&1
t_match "mpirun in a mini-b mpi job starts its daemons and runs on all four Macs" "^mac05 mac06 mac07 mac08$" \
    "$(cat "$out" 2>/dev/null)"

# The job's folder: in the Mac's jobs folder, which only root may write; a user cannot make it first.
as tbm-alice salloc --gres=tbmesh:mini-b:4 --mlx-backend=ring srun true > /dev/null 2>&1
last=$(as tbm-bob sbatch --parsable -p mac -w mac05 --wrap true)
next=$((last + 1))
wait_job "$last" 60 > /dev/null   # mac05 free again before the step that tries to squat
squat=$(as tbm-bob srun -p mac -w mac05 sh -c "for i in \$(seq $next $((next + 20))); do mkdir -p /tmp/tbmesh-jobs/\$i /tmp/tbmesh-job-\$i 2>/dev/null; done; ls -d /tmp/tbmesh-jobs/[0-9]* 2>/dev/null | wc -l" 2>/dev/null)
t_is "a user cannot make job folders in the Mac's jobs folder" "0" "$squat"
t_match "the jobs folder is root's and not writable by others" "^root [0-9]*7[15][15]$" \
    "$("$LABCMD" exec mac05 stat -c '%U %a' /tmp/tbmesh-jobs)"
out=$(as tbm-alice salloc --gres=tbmesh:mini-b:4 --mlx-backend=ring srun -l sh -c 'stat -c "%U %a" $(dirname $MLX_HOSTFILE); test -r $MLX_HOSTFILE && echo readable' 2>&1)
t_is "the next Mac job runs on every rank" "4" "$(grep -c 'readable' <<<"$out")"
t_is "its folder is the user's, 0700" "4" "$(grep -c 'tbm-alice 700' <<<"$out")"
as tbm-bob srun -p mac -w mac05 sh -c 'rm -rf /tmp/tbmesh-job-*' > /dev/null 2>&1
t_done
