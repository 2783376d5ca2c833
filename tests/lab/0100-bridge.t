#!/usr/bin/env bash
# 0100-bridge.t: bridge mode. slurmstepd runs on the bridge host; every task of a studio-a step becomes
# the forwarder and runs on its Mac through the agent: the Mac's hostname, the user, the working folder;
# MLX's environment and files checked in each rank; a real collective over the JACCL device matrix and
# coordinator; exit codes and signals as in direct mode; scancel and a time limit leave nothing on a Mac.
. "$(dirname "$0")/lib.sh"
no_jobs

CHECK=$T_MLXCHECK
MACNODE=$T_MACNODE
W=$LAB/work/tbm-alice

# A job with a one-minute limit whose task would sleep far longer: checked at the end.
tl=$(as tbm-alice sbatch --parsable -o /dev/null -t 1 --gres=tbmesh:studio-a:2 --wrap 'srun sleep 777')

out=$(as tbm-alice salloc --gres=tbmesh:studio-a:4 srun -l sh -c 'echo $(hostname) $(id -un) $(pwd)' 2>/dev/null | sort)
t_is "each studio-a task runs on its own Mac, as the user, in the job's folder" "0: mac01 tbm-alice $W
1: mac02 tbm-alice $W
2: mac03 tbm-alice $W
3: mac04 tbm-alice $W" "$out"
# One MUNGE credential per task: the plug-in greets the task's connection with its grant, which the agent
# checks at its gate; the spawn on it is served as the grant's user's without a second check.
before=(); for n in 1 2 3 4; do before[$n]=$(wc -l < "$LAB/log/macnoded-mac0$n.log"); done
j=$(as tbm-alice sbatch --parsable --wait -o /dev/null --gres=tbmesh:studio-a:4 --wrap 'srun true')
uid=$(id -u tbm-alice)
new_lines=$(for n in 1 2 3 4; do tail -n +$((before[n] + 1)) "$LAB/log/macnoded-mac0$n.log"; done)
t_is "each task's connection was greeted with its grant (the agents' logs)" "4" \
    "$(grep -c "uid $uid (granted): job $j step 0: task [0-9]* started as uid $uid: true" <<<"$new_lines")"
t_is "... and nothing was refused meanwhile" "" "$(grep -E "refused" <<<"$new_lines" | tail -n 3)"
# slurmstepd (root) made those connections from ports below 1024 (the task lane, 512-767), which the agents'
# gates serve first.
t_is "... each from a port of 512-767 (root's task lane on the bridge host)" "4 of 4" \
    "$(grep "uid $uid (granted): job $j step 0: task [0-9]* started" <<<"$new_lines" | sed -E 's/^.*macnoded\[[0-9]+\]: [0-9.]+:([0-9]+) .*$/\1/' |
       awk '{ n++; if ($1 >= 512 && $1 < 768) low++ } END { printf "%d of %d", low, n }')"
t_is "and mini-b (direct mode) the same" "mac05 mac06 mac07 mac08" \
    "$(as tbm-alice salloc --gres=tbmesh:mini-b:4 srun hostname 2>/dev/null | sort | paste -sd' ')"
t_match "the task sees the Mac's Thunderbolt interfaces" "en2(@[^ ]*)? +UP +169\.254\.1\.1/30" \
    "$(as tbm-alice salloc --gres=tbmesh:studio-a:2 srun -N1 -n1 ip -br addr 2>/dev/null)"

dumps=$W/bridge-dumps
rm -rf "$dumps"; mkdir -p "$dumps"; chown tbm-alice: "$dumps"
for backend in jaccl jaccl-ring ring mpi; do
    rm -f "$dumps"/*
    out=$(as tbm-alice salloc --gres=tbmesh:studio-a:4 --mlx-backend=$backend \
        srun sh -c "$CHECK --local --dump $dumps/r\$SLURM_PROCID.json" 2>&1; "$CHECK" --job "$dumps"/r*.json 2>&1)
    t_is "studio-a, $backend: four ranks dumped on their Macs" "4" "$(ls "$dumps" | wc -l)"
    t_is "studio-a, $backend: each rank follows MLX's rules" "4" "$(grep -c "of 4: backend $backend: ok" <<<"$out")"
    t_match "studio-a, $backend: and all ranks together" "job of 4 ranks: ok" "$out"
done

out=$(as tbm-alice salloc --gres=tbmesh:studio-a:4 --mlx-backend=jaccl srun "$MACNODE" bench -b 8 -e 256K -f 32 -n 3 -w 1 2>&1)
t_match "all-reduce over the JACCL matrix and coordinator: no wrong value" "Wrong values *: 0 OK" "$out"
t_match "on 4 ranks" "4 ranks" "$out"

rc_of() { as tbm-alice salloc --gres=tbmesh:"$1":4 srun -N1 -n1 sh -c "$2" > /dev/null 2>&1; echo $?; }
t_is "exit 3 gives srun exit 3 (bridge)" "3" "$(rc_of studio-a 'exit 3')"
t_is "exit 3 gives srun exit 3 (direct)" "3" "$(rc_of mini-b 'exit 3')"
t_is "a signal death is reported as in direct mode" "$(rc_of mini-b 'kill -9 $$')" "$(rc_of studio-a 'kill -9 $$')"
t_is "stdin reaches the Mac" "hello mac" \
    "$(echo 'hello mac' | as tbm-alice salloc --gres=tbmesh:studio-a:2 srun -N1 -n1 cat 2>/dev/null)"
pty=$(cd "$W" && script -qec "runuser -u tbm-alice -- env SLURM_CONF=$SLURM_CONF salloc --gres=tbmesh:studio-a:2 srun -N1 -n1 --pty sh -c 'tty; hostname'" /dev/null 2>/dev/null | tr -d '\r')
t_match "srun --pty gets a terminal on the Mac" "/dev/pts/[0-9]+" "$pty"
t_match "... on a Mac of studio-a" "mac0[1-4]" "$pty"

# scancel: the forwarders, the agents' tasks and their children are gone from every Mac.
j=$(as tbm-alice sbatch --parsable -o /dev/null --gres=tbmesh:studio-a:4 --wrap 'srun sh -c "sleep 888 & sleep 889"')
for _ in $(seq 40); do [ -n "$(mac_procs 'sleep 889' mac01 mac02 mac03 mac04)" ] && break; sleep 0.5; done
t_is "the job's tasks run on the four Macs" "4" "$(mac_procs 'sleep 889' mac01 mac02 mac03 mac04 | cut -d: -f1 | sort -u | wc -l)"
t_is "on the bridge host each task is the forwarder, macnode-forward" "4" \
    "$(pgrep -fc '^macnode-forward -- sh -c sleep 888 & sleep 889$')"
scancel "$j"
sleep 8
t_is "after scancel no task or child is left on a Mac" "" "$(mac_procs 'sleep 88[89]' mac01 mac02 mac03 mac04)"

# Without macnode-forward (a tree installed without it) the task becomes `macnode exec`; with forwarder= naming
# one that cannot run, the same, saying so on the task's stderr.
fwd=$T_INST/libexec/slurm-tbmesh/macnode-forward
plug=$LAB/etc/plugstack.conf
cp -p "$plug" "$plug.keep"
mv "$fwd" "$fwd.aside"
trap 'mv -f "$fwd.aside" "$fwd" 2>/dev/null; mv -f "$plug.keep" "$plug" 2>/dev/null' EXIT
t_match "without macnode-forward the tasks still run on their Macs" "^mac0([1-4]) mac0[1-4]$" \
    "$(as tbm-alice salloc --gres=tbmesh:studio-a:2 srun -N2 hostname 2>/dev/null | sort | paste -sd' ')"
j=$(as tbm-alice sbatch --parsable -o /dev/null --gres=tbmesh:studio-a:2 --wrap 'srun -N1 -n1 sleep 886')
for _ in $(seq 40); do pgrep -f '^/.*/macnode exec -- sleep 886$|^macnode exec -- sleep 886$' > /dev/null && break; sleep 0.5; done
t_is "... through macnode exec" "1" "$(pgrep -fc 'macnode exec -- sleep 886$')"
scancel "$j"
mv "$fwd.aside" "$fwd"
sed -i 's|$| forwarder=/nonexistent/macnode-forward|' "$plug"
out=$(as tbm-alice salloc --gres=tbmesh:studio-a:2 srun -N1 -n1 hostname 2>&1)
# (any two of studio-a: the job before may still be ending on mac01-02)
t_match "forwarder= naming a missing program: the task runs through macnode exec" "^mac0[1-4]$" "$out"
t_match "... and its stderr says why" \
    "tbmesh: cannot start the forwarder /nonexistent/macnode-forward \(No such file or directory\); running macnode exec instead" "$out"
mv -f "$plug.keep" "$plug"
trap - EXIT

# The time limit (set at the start): one minute, then nothing left.
for _ in $(seq 90); do [ "$(wait_job "$tl" 1)" != "TIMEOUT-WAITING(RUNNING)" ] && break; done
t_match "the job hit its time limit" "TIMEOUT|CANCELLED" "$(wait_job "$tl" 30)"
sleep 6
t_is "after the time limit no task is left on a Mac" "" "$(mac_procs 'sleep 777' mac01 mac02 mac03 mac04)"
t_done
