#!/usr/bin/env bash
# 0070-scheduling.t: `--gres=tbmesh:N` means N Macs of one cabled group, decided by job_submit/tbmesh in the
# real slurmctld: a table of submissions with their placement or message, backends choosing the group, two
# jobs never sharing or straddling, Linux jobs kept off the Macs in the shared partition and untouched in
# their own.
. "$(dirname "$0")/lib.sh"
no_jobs

# sub USER ARGS...: sbatch a short job; prints its id, or the error text.
sub() {
    local u=$1; shift
    as "$u" sbatch --parsable -o /dev/null "$@" --wrap 'sleep 1' 2>&1
}
# placed ID: "partition nodelist constraint" once the job has run (from the controller: accounting
# records fill in a moment after the job ends).
placed() {
    local info
    wait_job "$1" 60 > /dev/null
    info=$(scontrol show job -o "$1" | tr ' ' '\n')
    echo "$(sed -n 's/^Partition=//p' <<<"$info") $(sed -n 's/^NodeList=//p' <<<"$info") $(sed -n 's/^Features=//p' <<<"$info")"
}
refused() {   # refused DESC EXPECTED-MESSAGE ARGS...
    local desc=$1 msg=$2 out; shift 2
    out=$(sub tbm-bob "$@")
    t_match "$desc" "$(sed 's/[][().*|^$]/\\&/g' <<<"$msg")" "$out"
}

# --- placements ---
j=$(sub tbm-alice --gres=tbmesh:4 --mlx-backend=jaccl)
t_match "tbmesh:4 jaccl -> all of studio-a" "^mac mac\[01-04\] tbmesh_studio_a$" "$(placed "$j")"
t_match "AllocTRES counts 4 tbmesh" "gres/tbmesh=4" "$(scontrol show job "$j" | grep -o ' TRES=[^ ]*')"
t_match "4 nodes" "NumNodes=4 " "$(scontrol show job "$j")"
j=$(sub tbm-alice --gres=tbmesh:3 --mlx-backend=ring)
t_match "tbmesh:3 ring -> three of studio-a (three of a 4-ring are no ring)" "^mac mac\[0[1-4][-,]0[1-4](,0[1-4])?\] tbmesh_studio_a$" "$(placed "$j")"
j=$(sub tbm-alice --gres=tbmesh:4 --mlx-backend=ring)
t_match "tbmesh:4 ring -> either group, never across" "^mac mac\[(01-04|05-08)\] \[tbmesh_studio_a\|tbmesh_mini_b\]$" "$(placed "$j")"
j=$(sub tbm-alice --gres=tbmesh:mini-b:4)
t_match "typed tbmesh:mini-b:4 -> mini-b" "^mac mac\[05-08\] tbmesh_mini_b$" "$(placed "$j")"
j=$(sub tbm-alice --gres=tbmesh:2 -C m3_ultra)
t_match "a user constraint is kept and combined (2 of a ring cannot run: studio-a only)" "^mac mac\[0[1-4][-,]0[1-4]\] m3_ultra&tbmesh_studio_a$" "$(placed "$j")"
j=$(sub tbm-alice --gres=tbmesh:2 -p all --mlx-backend=mpi)
t_match "tbmesh in the shared partition stays there, on Macs" "^all mac\[0[1-4][-,]0[1-4]\] " "$(placed "$j")"
j=$(cd "$LAB/work/tbm-alice" && runuser -u tbm-alice -- env SLURM_CONF="$SLURM_CONF" SBATCH_GRES=tbmesh:4 SBATCH_MLX_BACKEND=jaccl \
    sbatch --parsable -o /dev/null --wrap 'sleep 1' 2>&1)
t_match "SBATCH_GRES=tbmesh:4 is rewritten too" "^mac mac\[(01-04|05-08)\] " "$(placed "$j")"
out=$(as tbm-alice salloc --gres=tbmesh:4 --mlx-backend=jaccl srun hostname 2>/dev/null | sort | paste -sd' ')
t_is "salloc --gres=tbmesh:4 then srun: four tasks, one per Mac of studio-a" "mac01 mac02 mac03 mac04" "$out"

# --- refusals, each with what to do ---
refused "tbmesh:0" "tbmesh: --gres=tbmesh:0 asks for no Mac: ask for 1 or more, e.g. --gres=tbmesh:4" --gres=tbmesh:0
refused "more Macs than any group" "tbmesh: no group has 6 Macs (the largest, studio-a, has 4): use --gres=tbmesh:4 or fewer" --gres=tbmesh:6
refused "a conflicting -N" "tbmesh: --gres=tbmesh:4 means 4 Macs, one job node each, but -N asks for 2: drop -N or make it -N 4" -N2 --gres=tbmesh:4
refused "an unknown backend (sbatch)" "tbmesh: --mlx-backend=nccl is unknown: use auto, jaccl, jaccl-ring, ring or mpi" --gres=tbmesh:4 --mlx-backend=nccl
refused "an unknown group" "tbmesh: no group named 'studio-x' in tbmesh.conf: the groups are studio-a, mini-b" --gres=tbmesh:studio-x:2
refused "a backend no group can run there" "tbmesh: no group can run jaccl on 4 Macs: group mini-b" --gres=tbmesh:mini-b:4 --mlx-backend=jaccl
refused "a Linux-only partition" "tbmesh: partition linux has no Macs: use -p mac or leave -p out" -p linux --gres=tbmesh:2
refused "brackets in the user's constraint" "tbmesh: your --constraint '[m3_ultra|m4]' uses [ ]" --gres=tbmesh:2 -C '[m3_ultra|m4]'
out=$(as tbm-bob srun --gres=tbmesh:4 hostname 2>&1)
t_match "srun outside an allocation says how to do it" "use \`salloc --gres=tbmesh:N srun CMD\`" "$out"
out=$(as tbm-bob salloc --gres=tbmesh:4 --mlx-backend=bogus true 2>&1)
t_match "an unknown backend (salloc)" "tbmesh: --mlx-backend=bogus is unknown" "$out"

# A drained Mac: the refusal names it (the plug-in's view of node states is at most 3 s old).
scontrol update NodeName=mac03 State=DRAIN Reason="cable check"
sleep 4
refused "a job only possible when a node returns names it" "tbmesh: studio-a could hold this job, but mac03 is drained (cable check): it can start when it is back; or ask for --gres=tbmesh:3" --gres=tbmesh:4 --mlx-backend=jaccl
scontrol update NodeName=mac03 State=RESUME
sleep 4

# A pending job's Mac request cannot be changed behind the plug-in's back.
j=$(as tbm-alice sbatch --parsable --hold -o /dev/null --gres=tbmesh:2 --wrap true)
t_fail "scontrol update of a Mac request is refused" as tbm-alice scontrol update jobid="$j" TresPerNode=gres:tbmesh:4
t_match "slurmctld's log says what to do instead" "refused uid [0-9]+'s change of job $j: .*(cancel it \(scancel $j\) and submit it again|try again in a few seconds)" \
    "$(grep "change of job $j:" "$LAB/log/slurmctld.log" | tail -n1)"
scancel "$j"

# --- two jobs together: never sharing a node, never straddling groups; the second waits ---
j1=$(as tbm-alice sbatch --parsable -o /dev/null --gres=tbmesh:4 --mlx-backend=jaccl --wrap 'sleep 4')
j2=$(as tbm-alice sbatch --parsable -o /dev/null --gres=tbmesh:4 --mlx-backend=jaccl --wrap 'sleep 4')
sleep 2
t_match "the second jaccl job waits for studio-a" "PENDING" "$(squeue -h -j "$j2" -o %T)"
t_is "both ran on studio-a, one after the other" "mac[01-04] mac[01-04]" "$(for j in $j1 $j2; do placed "$j" | cut -d' ' -f2; done | paste -sd' ')"
s1=$(scontrol show job "$j1" | grep -o 'EndTime=[^ ]*' | cut -d= -f2); s2=$(scontrol show job "$j2" | grep -o 'StartTime=[^ ]*' | cut -d= -f2)
t_ok "the second started when the first ended" test "$s2" '>' "$s1" -o "$s2" = "$s1"
j1=$(as tbm-alice sbatch --parsable -o /dev/null --gres=tbmesh:4 --wrap 'sleep 3')
j2=$(as tbm-bob sbatch --parsable -o /dev/null --gres=tbmesh:4 --wrap 'sleep 3')
both=$(for j in $j1 $j2; do placed "$j" | cut -d' ' -f2; done | sort | paste -sd' ')
t_is "two auto jobs: one group each" "mac[01-04] mac[05-08]" "$both"

# --- Linux jobs ---
j=$(sub tbm-bob -N1)
t_match "a Linux job in the default (shared) partition is kept off the Macs" "ExcNodeList=mac\[01-08\]" "$(scontrol show job "$j")"
t_match "and runs on lnx01" "^all lnx01 " "$(placed "$j")"
for args in "-p linux -N1" "-p linux -n2" "-p linux -C linux" "-p linux --exclude=mac01" "-p linux -t 5" "-p linux --mem=100"; do
    # shellcheck disable=SC2086
    j=$(sub tbm-bob $args)
    info=$(scontrol show job "$j" | tr ' ' '\n')
    case "$args" in
        *-C*) want_f="Features=linux" ;;
        *) want_f="Features=(null)" ;;
    esac
    case "$args" in
        *exclude*) want_x="ExcNodeList=mac01" ;;
        *) want_x="ExcNodeList=(null)" ;;
    esac
    t_is "Linux job '$args' untouched: features, excluded nodes, GRES" "Partition=linux $want_x $want_f TresPerNode=" \
        "$(grep -E '^(Partition|Features|ExcNodeList)=' <<<"$info" | paste -sd' ') $(grep -E '^TresPerNode=' <<<"$info" || echo TresPerNode=)"
done
t_done
