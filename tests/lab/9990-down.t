#!/usr/bin/env bash
# 9990-down.t: 'down' leaves no process, namespace, veth or mount behind, also after a crash.
. "$(dirname "$0")/lib.sh"

leftovers() {
    local p
    for p in /proc/[0-9]*; do
        [ "$(awk '{print $3}' "$p/stat" 2>/dev/null)" != Z ] || continue
        { tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null | grep -qE "$LAB/|slurmstepd|slurmd -N" && echo "process ${p#/proc/}: $(tr '\0' ' ' < "$p/cmdline")"
    done
    ip netns list 2>/dev/null | grep '^tbml-' | sed 's/^/netns /'
    ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | grep -E '^tbm' | sed 's/^/link /'
    grep -F " $LAB" /proc/mounts | sed 's/^/mount /'
    true
}

allowed=/proc/sys/net/ipv4/tcp_allowed_congestion_control
before=$(cat "$LAB/host-tcp-allowed" 2>/dev/null || cat "$allowed")   # the host's list before up
t_ok "lab down" "$LABCMD" down
t_is "nothing left after down" "" "$(leftovers)"
t_is "the host's allowed TCP congestion controls are as before up" "$before" "$(cat "$allowed")"
t_fail "the kept copy is gone" test -e "$LAB/host-tcp-allowed"
t_ok "down twice is harmless" "$LABCMD" down

# A crash: daemons killed with SIGKILL, a job step left running, the state file left behind.
t_ok "lab up again" "$LABCMD" up
as tbm-alice srun -p mac -N1 -w mac06 sleep 300 > /dev/null 2>&1 &
end=$((SECONDS + 30))
until [ -n "$(squeue -h -s -u tbm-alice -o %i 2>/dev/null | grep -v '\.extern$')" ] || [ "$SECONDS" -ge "$end" ]; do sleep 0.2; done
[ "$SECONDS" -lt "$end" ] || echo "# the step on mac06 was not running within 30 s; the crash comes without it"
kill -9 "$(cat "$LAB/run/slurmctld.pid")" "$(cat "$LAB/run/slurmd-mac06.pid")" 2>/dev/null
kill -9 $! 2>/dev/null
t_ok "lab down after a crash" "$LABCMD" down
t_is "nothing left after a crash and down" "" "$(leftovers)"
t_done
