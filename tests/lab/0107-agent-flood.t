#!/usr/bin/env bash
# 0107-agent-flood.t: a user of the bridge host floods a bridge-mode Mac's agent with new connections (each a
# prove, never a hello, as fast as it can make them) from the address root's own connections come from. The
# health check, run there as root as slurmd runs it, must still get the Mac's facts, so the Mac is not drained
# for "no facts"; another user's job on the Mac's group must still run, its tasks' connections greeted by
# slurmstepd as root. Both come from ports below 1024, which the user cannot bind, and the agent's gate serves
# those first (tests/macnode/gate-root.sh has the figures on loopback).
. "$(dirname "$0")/lib.sh"
no_jobs

SECS=25
port=$(sed -n 's/^AgentPort=//p' "$LAB/etc/tbmesh.conf")
port=${port:-6830}
poke=$LAB/work/tbm-bob/wire_poke
install -m 0755 -o tbm-bob "$T_BUILD/tests/macnode/wire_poke" "$poke"

# Two flooders as tbm-bob against mac04's agent, 64 connections each kept open, for $SECS s.
flooders=()
for f in 1 2; do
    as tbm-bob "$poke" "10.77.0.14:$port" --churn "$SECS" 64 > "$LAB/work/tbm-bob/churn.$f" 2>&1 &
    flooders+=($!)
done
sleep 2

well=0
for i in 1 2 3; do
    out=$("$LABCMD" health mac04 2>&1)
    grep -q '^mac04: well' <<<"$out" && well=$((well + 1)) || echo "# health check $i: $out" | head -n 5
    sleep 1
done
t_is "the health check got mac04's facts during the flood (3 of 3)" "3" "$well"
t_is "... so mac04 is not drained" "" "$(node_drained mac04 && node_reason mac04)"
out=$(as tbm-alice timeout 60 salloc --gres=tbmesh:studio-a:4 srun hostname 2>&1 | sort | paste -sd' ')
t_is "another user's job on studio-a ran its 4 tasks during the flood" "mac01 mac02 mac03 mac04" "$out"
wait "${flooders[@]}"
opened=$(cat "$LAB"/work/tbm-bob/churn.* | awk '{ s += $2 } END { print s + 0 }')
echo "# the flood: $(cat "$LAB"/work/tbm-bob/churn.* | paste -sd';')"
t_is "the flood made many connections (at least 10,000)" "1" "$([ "$opened" -ge 10000 ] && echo 1)"
t_match "mac04's agent closed the flood's waiting connections to make room" "to make room" \
    "$(tail -n 2000 "$LAB/log/macnoded-mac04.log")"
rm -f "$poke" "$LAB"/work/tbm-bob/churn.*
t_is "mac04 usable after the flood" "1" "$(node_usable mac04 && echo 1)"
no_jobs
t_done
