#!/usr/bin/env bash
# peer-gone.sh: a bridge host that loses its power or its network closes none of its connections; the agent
# finds it gone within --peer-timeout and ends its tasks. macnoded runs in a network namespace of its own (the
# Mac), the forwarder in another (the bridge host), a veth pair between them; the bridge host's link goes down
# and its forwarder is killed while its task runs, so no FIN or RST ever reaches the Mac. Needs root and ip(8).
set -u
if [ "$(id -u)" != 0 ] || ! command -v ip > /dev/null; then
    echo "SKIP: $(basename "$0") needs root and ip(8)"; exit 77
fi
MACNS=tbmpm$$ BRNS=tbmpb$$
ip netns add "$MACNS" || { echo "SKIP: cannot make a network namespace"; exit 77; }
ip netns add "$BRNS" || { ip netns del "$MACNS"; echo "SKIP: cannot make a network namespace"; exit 77; }
ip -n "$MACNS" link set lo up
ip -n "$BRNS" link set lo up
ip -n "$MACNS" link add en0 type veth peer name eth0 netns "$BRNS"
ip -n "$MACNS" addr add 10.10.9.1/30 dev en0
ip -n "$BRNS" addr add 10.10.9.2/30 dev eth0
ip -n "$MACNS" link set en0 up
ip -n "$BRNS" link set eth0 up
TBM_AGENT_WRAP="ip netns exec $MACNS" TBM_AGENT_START=no
. "$(dirname "$0")/agent_env.sh"
trap 'cleanup; ip netns del "$MACNS"; ip netns del "$BRNS"' EXIT
AGENT=10.10.9.1:$PORT

failures=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }
task_pid() { pgrep -u "$USER_UID" -f "^sleep $1\$" | head -n1; }
# run_task SECONDS: a task of the bridge host (the forwarder in its namespace) that sleeps; the forwarder's pid.
run_task() {
    (cd "$W" && TBMESH_GRANT=$(grant) exec ip netns exec "$BRNS" setpriv --reuid=$USER_UID --regid=$USER_UID \
        --clear-groups "$MACNODE" exec --agent "$AGENT" -- sleep "$1" > /dev/null 2>&1) &
    echo $!
}
# wait_gone PID SECONDS: until PID is gone (0), or SECONDS passed (1).
wait_gone() {
    local end=$((SECONDS + $2))
    while kill -0 "$1" 2>/dev/null; do [ "$SECONDS" -lt "$end" ] || return 1; sleep 0.2; done
}
# power_off FORWARDER: the bridge host's link goes, then its forwarder (nothing it held says goodbye).
power_off() {
    ip -n "$BRNS" link set eth0 down
    kill -KILL "$1" 2>/dev/null
    pkill -KILL -u "$USER_UID" -f "macnode exec --agent $AGENT" 2>/dev/null
}

AGENT_ARGS=(--peer-timeout 3)
start_agent
grep -q "peer timeout 3 s" "$LOG" && ok "the agent says its peer timeout" || bad "no peer timeout in the log: $(head -n1 "$LOG")"
# this run's own sleeps (a test beside this one, or another run, that ends "sleep 301" must not end ours)
S1=$((800000 + $$ % 100000 * 2)) S2=$((800001 + $$ % 100000 * 2))
fwd_pid=$(run_task "$S1")
for _ in $(seq 100); do [ -n "$(task_pid "$S1")" ] && break; sleep 0.1; done
task=$(task_pid "$S1")
[ -n "$task" ] && ok "the bridge host's task runs on the Mac" || bad "the task did not start: $(tail -n 5 "$LOG")"
t0=$SECONDS
power_off "$fwd_pid"
if [ -n "$task" ] && wait_gone "$task" 20; then
    ok "the task ends once its bridge host is found gone ($((SECONDS - t0)) s after; peer timeout 3 s, grace 1 s)"
else
    bad "the task of a bridge host gone still runs $((SECONDS - t0)) s after (pid ${task:-none})"
fi
grep -Eq "task [0-9]+: the connection failed: SIGTERM to its group" "$LOG" &&
    ok "... and the agent says why" || bad "no 'the connection failed' in the log: $(tail -n 5 "$LOG")"

# The same with --peer-timeout 0 (keepalive off): the task is not ended for it (over 8 s here).
apid=$(cat "$T/agent.pid")
kill "$apid"; wait_gone "$apid" 10
pkill -KILL -u "$USER_UID" -f "^sleep ($S1|$S2)\$" 2>/dev/null
ip -n "$BRNS" link set eth0 up
AGENT_ARGS=(--peer-timeout 0)
: > "$LOG"
start_agent
fwd_pid=$(run_task "$S2")
for _ in $(seq 100); do [ -n "$(task_pid "$S2")" ] && break; sleep 0.1; done
task=$(task_pid "$S2")
power_off "$fwd_pid"
if [ -n "$task" ] && ! wait_gone "$task" 8; then
    ok "with --peer-timeout 0 the task of a silent bridge host runs on (what the timeout ends)"
else
    bad "with --peer-timeout 0 the task (pid ${task:-none}) did not run on"
fi
pkill -KILL -u "$USER_UID" -f "^sleep $S2\$" 2>/dev/null
out=$("$MACNODED" --peer-timeout 3601 2>&1); rc=$?
[ "$rc" = 2 ] && [ "$out" = "macnoded: --peer-timeout '3601' must be a number of seconds from 0 to 3600" ] &&
    ok "a bad --peer-timeout is refused, saying why" || bad "bad --peer-timeout: $rc $out"

echo "peer-gone.sh: $failures failed"
[ "$failures" = 0 ]
