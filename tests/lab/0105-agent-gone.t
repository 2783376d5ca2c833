#!/usr/bin/env bash
# 0105-agent-gone.t: a bridge-mode Mac whose agent is gone is drained at the first step that cannot reach it,
# with the reason, not at the next periodic health check; the health check resumes it once the agent is back.
# An agent still there but answering nothing (stopped: its port still completes connections) drains it too.
# A user's own exit status 255 drains nothing (root looks at the agent itself).
. "$(dirname "$0")/lib.sh"
no_jobs

reason_of() { scontrol show node "$1" | grep -o 'Reason=.*' | sed 's/ \[.*//'; }
t_is "a task that exits 255 by itself drains nothing" "255 no-drain" \
    "$(as tbm-alice srun -p mac -w mac02 sh -c 'exit 255' > /dev/null 2>&1; echo "$? $(scontrol show node mac02 | grep -q DRAIN && echo drained || echo no-drain)")"

sup=$(cat "$LAB/run/keepalive-mac02.pid" 2>/dev/null)
agent=$(cat "$LAB/run/macnoded-mac02.pid" 2>/dev/null)
t_ok "mac02's agent and its supervisor run" test -n "$sup" -a -n "$agent"
kill -STOP "$sup"                 # the supervisor cannot restart it: an agent that stays gone
kill -KILL "$agent"
out=$(as tbm-alice srun -p mac -w mac02 hostname 2>&1); rc=$?
t_is "the step on mac02 fails" "255" "$rc"
t_match "... saying the agent cannot be reached" "mac02|10\.77\.0\.12" "$out"
end=$((SECONDS + 15)); while ! scontrol show node mac02 | grep -q DRAIN && [ $SECONDS -lt $end ]; do sleep 0.3; done
t_match "mac02 is drained at once" "State=[A-Z+]*DRAIN" "$(scontrol show node mac02)"
t_match "... with the agent as the reason" "^Reason=tbmesh: agent-unreachable at 10\.77\.0\.12:[0-9]+ \(" "$(reason_of mac02)"
kill -CONT "$sup"                 # the supervisor starts the agent again
end=$((SECONDS + 30))
until "$T_MACNODE" probe --agent 10.77.0.12 --node mac02 --munge-socket "$LAB/run/munge/munge.socket.2" > /dev/null 2>&1 || [ $SECONDS -ge $end ]; do sleep 0.3; done
"$LABCMD" health mac02 > /dev/null 2>&1
t_fail "the health check resumes mac02 once its agent is back" grep -q DRAIN <<<"$(scontrol show node mac02 | grep State=)"
t_is "and steps run there again" "mac02" "$(as tbm-alice srun -p mac -w mac02 hostname 2>/dev/null)"
# An agent that is there but answers nothing when a task's connection dies: its port still takes
# connections (the kernel completes them on a stopped or dying agent's listening socket), so a connection
# alone says nothing; root's hello gets no answer, and that drains the Mac too.
rcf=$(mktemp)
(as tbm-alice srun -p mac -w mac02 sleep 301 > /dev/null 2>&1; echo $? > "$rcf") &
t_ok "a task runs on mac02" wait_until 30 "sleep 301 on mac02" on_macs 1 "(^|/)sleep 301" mac02
agent=$(cat "$LAB/run/macnoded-mac02.pid" 2>/dev/null)
kill -STOP "$agent"               # stopped: it accepts nothing, its port still completes connections
task=$(mac_procs "(^|/)sleep 301" mac02 | head -n1 | cut -d: -f2)
conn=$(ps -o ppid= -p "$task" 2>/dev/null | tr -d ' ')   # the agent's server of that task's connection
t_is "its connection is served by a child of the agent" "$agent" "$(ps -o ppid= -p "$conn" 2>/dev/null | tr -d ' ')"
kill -KILL "$conn"                # the task's connection on the Mac ends (the link watcher's stays)
t_ok "the step on mac02 ends" wait_until 30 "srun on mac02 ends" test -s "$rcf"
t_is "... failed (the forwarder lost its agent)" "255" "$(cat "$rcf" 2>/dev/null)"
t_ok "mac02 is drained at once" wait_until 20 "mac02 drained" node_drained mac02
t_match "... its agent took the connection but did not answer" \
    "^Reason=tbmesh: agent-unreachable at 10\.77\.0\.12:[0-9]+ \(it took the connection but sent no answer" \
    "$(reason_of mac02)"
kill -CONT "$agent"
# its connection was cut: end it here, the lab user's alone (a "pkill sleep 301" of any user's once ended
# another test's task of that name, running beside the lab's; its pid may be another process's by now)
pkill -KILL -u tbm-alice -f '^sleep 301$' 2>/dev/null || true
rm -f "$rcf"
"$LABCMD" health mac02 > /dev/null 2>&1
t_ok "the health check resumes mac02 once its agent answers" wait_until 20 "mac02 usable" node_usable mac02
t_ok "nothing of the task is left on mac02" wait_until 20 "no sleep 301" none_on_macs "(^|/)sleep 301"
# job_submit/tbmesh sees node states every few seconds: wait until it takes studio-a jobs again.
end=$((SECONDS + 20))
until as tbm-alice sbatch --test-only --gres=tbmesh:studio-a:4 --wrap true > /dev/null 2>&1 || [ $SECONDS -ge $end ]; do
    sleep 0.5
done
t_ok "job_submit/tbmesh takes studio-a jobs again" as tbm-alice sbatch --test-only --gres=tbmesh:studio-a:4 --wrap true
t_done
