#!/usr/bin/env bash
# 0025-keepalive.t: every Mac's agent runs under a supervisor, as launchd's KeepAlive keeps it on a real Mac:
# an agent that dies is started again, and steps on that Mac run again; the supervisor stops with the lab.
. "$(dirname "$0")/lib.sh"
no_jobs

# agent_pid NODE: the pid of the Mac's agent, when it runs.
agent_pid() {
    local p
    p=$(cat "$LAB/run/macnoded-$1.pid" 2>/dev/null) && kill -0 "$p" 2>/dev/null && echo "$p"
}
# wait_new_agent NODE OLDPID: until another agent runs on NODE and listens (at most 30 s); prints its pid.
wait_new_agent() {
    local end=$((SECONDS + 30)) p addr
    addr=$(plan_rows node | awk -F'\t' -v n="$1" '$2 == n' | tr '\t' '\n' | sed -n 's/^mgmt=//p')
    while [ "$SECONDS" -lt "$end" ]; do
        p=$(agent_pid "$1")
        if [ -n "$p" ] && [ "$p" != "$2" ] && [ -n "$("$LABCMD" exec "$1" ss -Hltn "src $addr" 2>/dev/null)" ]; then
            echo "$p"; return 0
        fi
        sleep 0.2
    done
    echo "no new agent on $1 within 30 s (pid file: $(cat "$LAB/run/macnoded-$1.pid" 2>/dev/null))"
    return 1
}

for n in mac01 mac05; do
    t_ok "$n: a supervisor runs for its agent" test -n "$(cat "$LAB/run/keepalive-$n.pid" 2>/dev/null)"
    old=$(agent_pid "$n")
    t_ok "$n: its agent runs" test -n "$old"
    kill -KILL "$old" 2>/dev/null
    new=$(wait_new_agent "$n" "$old"); rc=$?
    _t_result "$rc" "$n: the agent killed with SIGKILL is started again and listens" "$new"
    t_match "$n: the supervisor says it restarted the agent" "macnoded \(pid $old\) ended with status 137" \
        "$(cat "$LAB/log/keepalive-$n.log" 2>/dev/null)"
done
# Bridge mode goes through each Mac's agent for every step: mac01's new one answers.
t_is "a studio-a step (bridge mode, through the agents, mac01's the new one) runs" "mac01 mac02 mac03 mac04" \
    "$(as tbm-alice salloc -Q --gres=tbmesh:studio-a:4 srun hostname 2>&1 | grep -E '^(mac|lnx)[0-9]+$' | sort | paste -sd' ')"
t_ok "the new agent answers a probe of mac01's facts" "$T_MACNODE" probe --agent 10.77.0.11 \
    --munge-socket "$LAB/run/munge/munge.socket.2"
# A supervisor ends when told to, taking its agent with it (tbmesh-lab down does this for every Mac).
t_is "one supervisor per Mac" "8" "$(ls "$LAB"/run/keepalive-*.pid 2>/dev/null | wc -l)"
no_jobs
t_done
