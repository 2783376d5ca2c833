#!/usr/bin/env bash
# 0107-agent-flood.t: a user of the bridge host floods a bridge-mode Mac's agent with new connections (each a
# prove, never a hello, as fast as it can make them) from the address root's own connections come from. The
# health check, run there as root as slurmd runs it, must still get the Mac's facts, so the Mac is not drained
# for "no facts"; another user's job on the Mac's group must still run, its tasks' connections greeted by
# slurmstepd as root; and when the flooding user kills its own task's forwarder, slurmstepd's look at the
# agent (root's, at the task's end) must find it there, so the Mac is not drained as "agent-unreachable".
# All three come from ports below 1024, which the user cannot bind, and the agent's gate serves
# those first (tests/macnode/gate-root.sh has the figures on loopback).
. "$(dirname "$0")/lib.sh"
no_jobs

port=$(sed -n 's/^AgentPort=//p' "$LAB/etc/tbmesh.conf")
port=${port:-6830}
poke=$LAB/work/tbm-bob/wire_poke
install -m 0755 -o tbm-bob "$T_BUILD/tests/macnode/wire_poke" "$poke"
rm -f "$LAB"/work/tbm-bob/churn.*   # a run cut short left its own
addr_of() { sed -n "s/^NodeName=$1 AgentAddr=\([0-9.]*\).*/\1/p" "$LAB/etc/tbmesh.conf"; }

# flood NODE SECONDS: two flooders as tbm-bob against NODE's agent, 64 connections each kept open; their pids
# in $flooders, their counts in churn.*.
flood() {
    local f
    flooders=()
    for f in 1 2; do
        as tbm-bob "$poke" "$(addr_of "$1"):$port" --churn "$2" 64 >> "$LAB/work/tbm-bob/churn.$f" 2>&1 &
        flooders+=($!)
    done
    wait_until 20 "the flood on $1" sh -c '[ "$(cat "$1"/churn.* | grep -c " open$")" -ge "$2" ]' _ \
        "$LAB/work/tbm-bob" "${3:-2}"
}

flood mac04 25
well=0
for i in 1 2 3; do
    out=$("$LABCMD" health mac04 2>&1)
    grep -q '^mac04: well' <<<"$out" && well=$((well + 1)) || echo "# health check $i: $out" | head -n 5
    sleep 1
done
t_is "the health check got mac04's facts during the flood (3 of 3)" "3" "$well"
t_is "... so mac04 is not drained" "" "$(node_drained mac04 && node_reason mac04)"
out=$(as tbm-alice timeout 60 salloc --gres=tbmesh:studio-a:4 srun hostname 2>/dev/null | sort | paste -sd' ')
t_is "another user's job on studio-a ran its 4 tasks during the flood" "mac01 mac02 mac03 mac04" "$out"
wait "${flooders[@]}"
t_match "mac04's agent closed the flood's waiting connections to make room" "to make room" \
    "$(tail -n 2000 "$LAB/log/macnoded-mac04.log")"

# The flooder's own task, its forwarder killed by its user while the flood goes on.
j=$(as tbm-bob sbatch --parsable -o /dev/null --gres=tbmesh:studio-a:1 --wrap 'srun sleep 321')
t_ok "tbm-bob's task runs on a studio-a Mac" wait_until 60 "job $j running" job_running "$j"
node=$(squeue -h -j "$j" -o %N)
t_ok "... its forwarder is there" wait_until 20 "the forwarder of job $j" \
    pgrep -u tbm-bob -f 'macnode-forward.*sleep 321'
flood "$node" 15 4   # the files keep the first flood's lines too
as tbm-bob pkill -KILL -u tbm-bob -f 'macnode-forward.*sleep 321'
t_ok "the job ends once its forwarder is killed" wait_until 30 "job $j ends" job_gone "$j"
wait "${flooders[@]}"
t_is "slurmstepd found $node's agent there: not drained" "" "$(node_drained "$node" && node_reason "$node")"
t_ok "nothing of the job is left on $node" wait_until 20 "no sleep 321" none_on_macs "sleep 321"

opened=$(cat "$LAB"/work/tbm-bob/churn.* | awk '/opened/ { s += $2 } END { print s + 0 }')
echo "# the floods: $(grep -h opened "$LAB"/work/tbm-bob/churn.* | paste -sd';')"
t_is "the floods made many connections (at least 10,000)" "1" "$([ "$opened" -ge 10000 ] && echo 1)"
rm -f "$poke" "$LAB"/work/tbm-bob/churn.*
t_is "mac04 and $node usable after the floods" "1" "$(node_usable mac04 && node_usable "$node" && echo 1)"
# a failed case leaves no drained Mac to the tests after this one
for n in mac04 "$node"; do node_drained "$n" && scontrol update nodename="$n" state=resume; done
no_jobs
t_done
