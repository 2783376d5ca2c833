#!/usr/bin/env bash
# watch.sh: the watch request and macnode watch end to end, with a private munged and macnoded in a network
# namespace of their own holding a veth pair named like two of the recorded Mac's Thunderbolt interfaces
# (en2, en3): only root may watch; the agent names the interfaces it follows and sends a link message when
# one goes down or up; macnode watch runs the Mac's health check at once on such a change (a stand-in scontrol
# records it), says once that an agent went away and once that it is back. Needs root and ip(8).
set -u
if [ "$(id -u)" != 0 ] || ! command -v ip > /dev/null; then
    echo "SKIP: $(basename "$0") needs root and ip(8) (a network namespace with veth interfaces)"; exit 77
fi
NS=tbmw$$
ip netns add "$NS" || { echo "SKIP: cannot make a network namespace"; exit 77; }
ip -n "$NS" link set lo up
ip -n "$NS" link add en2 type veth peer name en3
ip -n "$NS" link set en2 up
ip -n "$NS" link set en3 up
TBM_AGENT_WRAP="ip netns exec $NS ${TBM_AGENT_WRAP:-}"
. "$(dirname "$0")/agent_env.sh"
trap 'kill_watch; cleanup; ip netns del "$NS"' EXIT

failures=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_in() { case "$2" in *"$3"*) ok "$1" ;; *) bad "$1: '$3' not in: $2" ;; esac; }
# until_in FILE TEXT: wait (at most 10 s) until FILE holds TEXT.
until_in() { for _ in $(seq 100); do grep -qF -- "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
wpid=
kill_watch() { [ -z "$wpid" ] || { kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null; }; wpid=; }

# --- the request ------------------------------------------------------------------------------------------
out=$(cd "$W" && timeout 10 ip netns exec "$NS" setpriv --reuid=$USER_UID --regid=$USER_UID --clear-groups \
    "$POKE" "$AGENT" --hello --json '{"type":"watch"}' 2>&1)
expect_in "a user may not watch" "$out" "only root on the bridge host may watch"

(exec ip netns exec "$NS" "$POKE" "$AGENT" --keep --hello --json '{"type":"watch"}' > "$T/poke.out" 2>&1) &
ppid=$!
until_in "$T/poke.out" '"type":"watching"' && ok "root's watch is taken" || bad "no watching answer: $(cat "$T/poke.out")"
expect_in "... naming the recorded Mac's Thunderbolt interfaces, not bridge0" "$(cat "$T/poke.out")" \
    '"ifaces":["en3","en2","en4","en5","en6","en7"]'
ip -n "$NS" link set en2 down
until_in "$T/poke.out" '"iface":"en2","up":false' && ok "en2 down is sent" || bad "no link message: $(cat "$T/poke.out")"
until_in "$T/poke.out" '"iface":"en3","up":false' && ok "... and its peer en3 losing its carrier" \
    || bad "no en3 message: $(cat "$T/poke.out")"
ip -n "$NS" link set en2 up
until_in "$T/poke.out" '"iface":"en2","up":true' && ok "en2 up again is sent" || bad "no up message: $(cat "$T/poke.out")"
expect_in "the changes are counted" "$(grep -o '"seq":[0-9]*' "$T/poke.out" | tail -n1)" '"seq":'
kill "$ppid"; wait "$ppid" 2>/dev/null
until_in "$LOG" "watch ended" && ok "the agent ends the watch when its client goes" || bad "no 'watch ended' in the log"

# --- macnode watch ----------------------------------------------------------------------------------------
cat > "$T/tbmesh.conf" <<CONF
AgentPort=$PORT
Group=g Nodes=testnode,other Topology=mesh Link=tb5 Rdma=no Mode=bridge Backends=ring,mpi
Cable=testnode:en2,other:en2 Addr=169.254.1.1/30,169.254.1.2/30
NodeName=testnode AgentAddr=127.0.0.1
NodeName=other AgentAddr=127.0.0.2
CONF
cat > "$T/scontrol" <<'SC'
#!/bin/sh
echo "$*" >> "${0%/*}/scontrol.calls"
[ "$1" != show ] || echo "NodeName=$3 State=IDLE ThreadsPerCore=1"
SC
chmod 755 "$T/scontrol"
out=$("$MACNODE" watch --conf "$T/tbmesh.conf" --node nosuch 2>&1); rc=$?
expect_in "an unknown --node is refused (exit $rc)" "$rc $out" "2 macnode watch: --node nosuch: no such Mac in tbmesh.conf"
(exec ip netns exec "$NS" ${TBM_WATCH_WRAP:-} "$MACNODE" watch --conf "$T/tbmesh.conf" --node testnode --scontrol "$T/scontrol" \
    --log "$T/watch.log") &
wpid=$!
until_in "$T/watch.log" "testnode: watching: the agent follows en3 en2 en4 en5 en6 en7" && ok "macnode watch watches testnode" \
    || bad "macnode watch did not start: $(cat "$T/watch.log")"
until_in "$T/scontrol.calls" "show node testnode" && ok "... and checks it at once (changes may have come before)" \
    || bad "no first check: $(cat "$T/watch.log")"
for _ in $(seq 100); do grep -qE '^testnode: (well|drained|left)' "$T/watch.log" && break; sleep 0.1; done
: > "$T/scontrol.calls"
ip -n "$NS" link set en3 down
until_in "$T/watch.log" "testnode: link en3 down (change " && ok "the link change reaches macnode watch" \
    || bad "no link line: $(cat "$T/watch.log")"
until_in "$T/scontrol.calls" "show node testnode" && ok "... which runs testnode's health check with --drain" \
    || bad "no check after the change: $(cat "$T/watch.log")"
until_in "$T/scontrol.calls" "update NodeName=testnode State=DRAIN Reason=tbmesh: " \
    && ok "... which drains it with the reason" || bad "not drained: $(cat "$T/scontrol.calls" "$T/watch.log")"
# The agent is killed (SIGKILL, its servers not): the watch's server ends with it, rather than serving a
# watch of an agent that is gone; one line for the outage, one when it is back.
server=$(ps -o pid= --ppid "$(cat "$T/agent.pid")" | tr -d ' ' | head -n1)
kill -KILL "$(cat "$T/agent.pid")" 2>/dev/null
rm -f "$T/agent.pid"
running() { ps -o stat= -p "$1" 2>/dev/null | grep -qv Z; }   # there, and not a zombie nobody reaped yet
for _ in $(seq 50); do [ -n "$server" ] && running "$server" || break; sleep 0.1; done
[ -n "$server" ] && ! running "$server" && ok "the watch's server ends with its killed agent" \
    || bad "the killed agent's server $server is still there: $(ps -o pid,ppid,args -p "$server")"
grep -q "watch ends: the agent that served it is gone" "$LOG" && ok "... saying why (logged)" \
    || bad "no reason in the agent log: $(tail -3 "$LOG")"
until_in "$T/watch.log" "trying again every 1 to 30 s" && ok "the lost agent is logged" || bad "no outage line"
sleep 4   # a few tries (1 s, 2 s) while it is away
n=$(grep -c "trying again" "$T/watch.log")
[ "$n" = 1 ] && ok "... once per outage, not per try" || bad "$n outage lines: $(cat "$T/watch.log")"
start_agent
until_in "$T/watch.log" "testnode: watching again: the agent follows" && ok "the watch comes back with the agent" \
    || bad "not watching again: $(cat "$T/watch.log")"
kill_watch
grep -q "stopped" "$T/watch.log" && ok "macnode watch stops on SIGTERM" || bad "no 'stopped' line"
[ -z "$(pgrep -f "watch --conf $T/tbmesh.conf" || true)" ] && ok "... leaving no process" \
    || bad "processes left: $(pgrep -af "watch --conf $T/tbmesh.conf")"

if [ $failures -gt 0 ]; then
    echo "$failures checks failed; the agent log:"; cat "$LOG"; echo "watch log:"; cat "$T/watch.log"
    exit 1
fi
echo "all watch checks passed"
