#!/usr/bin/env bash
# 0040-jobs.t: batch jobs run in both partitions and on both groups, submitted by ordinary users, and
# sacct records them with gres/tbmesh in AllocTRES.
. "$(dirname "$0")/lib.sh"
no_jobs

jl=$(as tbm-bob sbatch --parsable -p linux -N1 -o linux-%j.out --wrap 'hostname; id -un')
ja=$(as tbm-alice sbatch --parsable --gres=tbmesh:studio-a:4 -o studio-%j.out --wrap 'srun hostname | sort')
jb=$(as tbm-alice sbatch --parsable --gres=tbmesh:mini-b:4 -o mini-%j.out --wrap 'srun hostname | sort')
t_match "sbatch gave job ids" '^[0-9]+ [0-9]+ [0-9]+$' "$jl $ja $jb"
t_is "Linux job completed" "COMPLETED" "$(wait_job "$jl")"
t_is "studio-a job completed" "COMPLETED" "$(wait_job "$ja")"
t_is "mini-b job completed" "COMPLETED" "$(wait_job "$jb")"
t_is "Linux job ran on lnx01 as tbm-bob" "lnx01 tbm-bob" "$(paste -sd' ' "$LAB/work/tbm-bob/linux-$jl.out")"
t_is "mini-b job's steps ran in the four Macs (direct mode)" "mac05 mac06 mac07 mac08" "$(grep -v '^tbmesh: ' "$LAB/work/tbm-alice/mini-$jb.out" | paste -sd' ')"
t_match "the step said its MLX backend once" "^tbmesh: group mini-b, 4 Macs: backend ring" "$(grep '^tbmesh: ' "$LAB/work/tbm-alice/mini-$jb.out")"
t_is "studio-a job's steps ran on the four Macs (bridge mode, forwarded)" "mac01 mac02 mac03 mac04" "$(grep -v '^tbmesh: ' "$LAB/work/tbm-alice/studio-$ja.out" | paste -sd' ')"
t_is "studio-a job placed on mac[01-04]" "mac[01-04]" "$(acct "$ja" nodelist)"
t_is "mini-b job placed on mac[05-08]" "mac[05-08]" "$(acct "$jb" nodelist)"
t_match "sacct: studio-a job has gres/tbmesh=4" 'gres/tbmesh=4' "$(acct "$ja" alloctres)"
t_match "sacct: mini-b job has gres/tbmesh=4" 'gres/tbmesh=4' "$(acct "$jb" alloctres)"
t_fail "sacct: Linux job has no gres/tbmesh" grep -q tbmesh <<<"$(acct "$jl" alloctres)"
t_is "sacct: accounts recorded" "lab-hpc lab-ml lab-ml" "$(for j in $jl $ja $jb; do acct "$j" account; done | paste -sd' ')"
t_is "Mac jobs went to the mac partition" "mac mac" "$(for j in $ja $jb; do acct "$j" partition; done | paste -sd' ')"
t_is "srun exit code propagates" "3" "$(as tbm-alice srun -p mac -N1 -w mac06 sh -c 'exit 3' >/dev/null 2>&1; echo $?)"
t_done
