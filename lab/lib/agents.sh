# agents.sh (sourced by tbmesh-lab): macnoded, the agent of every simulated Mac, inside its namespaces,
# listening on the Mac's management address and tbmesh.conf's AgentPort, answering probes from the recorded
# outputs. As launchd does on a real Mac (KeepAlive in org.slurm-tbmesh.macnoded.plist), a supervisor
# (keepalive) starts it again whenever it ends.

KEEPALIVE_THROTTLE=${TBMESH_LAB_KEEPALIVE_THROTTLE:-1}
METRICS_PORT=9431                                       # each agent's metrics endpoint (doc/METRICS.md)
METRICS_INTERVAL=${TBMESH_LAB_METRICS_INTERVAL:-5}      # seconds between samples
PEER_TIMEOUT=${TBMESH_LAB_PEER_TIMEOUT:-15}   # a bridge host gone without a word is found gone after this

agent_port() {
    local port
    port=$(sed -n 's/^AgentPort=//p' "$ETC/tbmesh.conf" 2>/dev/null | head -n1)
    echo "${port:-6830}"
}

# agent_listening NODE ADDR PORT: the Mac's agent has a listening socket on ADDR:PORT.
agent_listening() {
    [ -n "$(in_node "$1" ss -Hltn "src $2:$3" 2>/dev/null)" ]
}

# start_agent NODE: the Mac's agent under its supervisor, in the background.
start_agent() {
    local n=$1 row addr port
    row=$(node_row "$n")
    addr=$(field "$row" mgmt)
    port=$(agent_port)
    (close_fds; in_node "$n" setsid "$KEEPALIVE" "$RUN/keepalive-$n.pid" "$LOG/keepalive-$n.log" "$KEEPALIVE_THROTTLE" \
        "$MACNODED" --listen "$addr:$port" --node "$n" \
        --munge-socket "$MUNGE_SOCKET" --replay "$NODES/$n/replay" \
        --state-dir /tmp/tbmesh-agent --jobs-dir /tmp/tbmesh-jobs --grace 5 --peer-timeout "$PEER_TIMEOUT" \
        --conf "$ETC/tbmesh.conf" --metrics "$addr:$METRICS_PORT" --metrics-interval "$METRICS_INTERVAL" \
        --log "$LOG/macnoded-$n.log" --pid-file "$RUN/macnoded-$n.pid") < /dev/null > /dev/null 2>&1 &
}

# wait_agent NODE: until the Mac's agent listens (at most 15 s).
wait_agent() {
    local row port
    row=$(node_row "$1")
    port=$(agent_port)
    wait_for "macnoded on $1 (listening on $(field "$row" mgmt):$port)" 15 \
        agent_listening "$1" "$(field "$row" mgmt)" "$port"
}

start_agents() {
    local n
    [ -x "$MACNODED" ] || die "macnoded is not built ($MACNODED): run scripts/build.sh"
    for n in $(plan_rows node | cut -f2); do start_agent "$n"; done
    for n in $(plan_rows node | cut -f2); do wait_agent "$n"; done
}

# stop_agents: each supervisor stops its agent (SIGTERM, the agent's grace for its tasks) and ends.
stop_agents() {
    local f p pids=() end
    for f in "$RUN"/keepalive-*.pid; do
        p=$(cat "$f" 2>/dev/null) || continue
        [ -n "$p" ] && kill -TERM "$p" 2>/dev/null && pids+=("$p")
    done
    end=$((SECONDS + 15))
    for p in "${pids[@]}"; do
        while kill -0 "$p" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 0.2; done
    done
    true
}

# The link watcher (macnode watch) on the bridge host, under the same supervisor as the agents: it keeps a
# watch open to every Mac's agent and runs a Mac's health check as soon as one of its Thunderbolt links goes
# down or up (a pulled cable drains both Macs within seconds, a mended one resumes them). Its log is
# $LOG/watch.log.
WATCH_PIDFILE=watch-keepalive.pid

# watching: the watcher has its watch open to every Mac's agent (each said so in its log).
watching() {
    local n
    for n in $(plan_rows node | cut -f2); do
        grep -qE " $n: watching( again)?: the agent follows" "$LOG/watch.log" 2>/dev/null || return 1
    done
}

start_watch() {
    [ -x "$MACNODE" ] || die "macnode is not built ($MACNODE): run scripts/build.sh"
    : > "$LOG/watch.log"
    setsid "$KEEPALIVE" "$RUN/$WATCH_PIDFILE" "$LOG/keepalive-watch.log" "$KEEPALIVE_THROTTLE" \
        "$MACNODE" watch --conf "$ETC/tbmesh.conf" --munge-socket "$MUNGE_SOCKET" --log "$LOG/watch.log" \
        < /dev/null > /dev/null 2>&1 &
    local end=$((SECONDS + 30))
    until watching; do   # not fatal: the lab works without it, as it did before (the health check drains)
        [ "$SECONDS" -lt "$end" ] || { say "the link watcher is not watching every Mac after 30 s; see $LOG/watch.log"; return 0; }
        sleep 0.2
    done
}

# stop_watch: its supervisor stops it (and it its per-Mac watchers and their health checks) and ends.
stop_watch() {
    local p end=$((SECONDS + 15))
    p=$(cat "$RUN/$WATCH_PIDFILE" 2>/dev/null) || return 0
    [ -n "$p" ] && kill -TERM "$p" 2>/dev/null || return 0
    while kill -0 "$p" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 0.2; done
    true
}

# watcher_running: its supervisor runs.
watcher_running() {
    local p
    p=$(cat "$RUN/$WATCH_PIDFILE" 2>/dev/null) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null
}
