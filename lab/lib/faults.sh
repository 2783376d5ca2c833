# faults.sh (sourced by tbmesh-lab): faults on purpose, for the fault tests: a Mac powered off (every process
# of its namespaces killed) and powered on again, and the lab's daemons restarted one at a time.

# stop_pidfile WHAT FILE: SIGTERM to the process in FILE; until it is gone (at most 20 s).
stop_pidfile() {
    local p end=$((SECONDS + 20))
    p=$(cat "$2" 2>/dev/null) || die "no pid file $2: is $1 running? see 'tbmesh-lab status'"
    kill -TERM "$p" 2>/dev/null || die "$1 (pid $p from $2) is not running"
    while kill -0 "$p" 2>/dev/null; do
        [ "$SECONDS" -lt "$end" ] || die "$1 (pid $p) did not end within 20 s of SIGTERM; see 'tbmesh-lab logs'"
        sleep 0.2
    done
}

# node_responding NODE: slurmctld hears the node's slurmd (registered, not "not responding").
node_responding() {
    local line
    line=$(scontrol show node "$1" --oneliner 2>/dev/null) || return 1
    ! grep -qE 'State=[A-Z_+]*(NOT_RESPONDING|DOWN)' <<<"$line" && grep -q 'SlurmdStartTime=[0-9]' <<<"$line"
}

# slurmd_started NODE SINCE: the node's slurmd registered after SINCE (seconds since the epoch).
slurmd_started() {
    local t
    t=$(scontrol show node "$1" --oneliner 2>/dev/null | grep -o 'SlurmdStartTime=[^ ]*' | cut -d= -f2)
    [ -n "$t" ] && [ "$(date -d "$t" +%s 2>/dev/null || echo 0)" -ge "$2" ] && node_responding "$1"
}

# restart_slurmd NODE...: each node's slurmd stopped (its steps' slurmstepds go on), started again, and
# registered again.
restart_slurmd() {
    local n since
    since=$(date +%s)
    for n in "$@"; do stop_pidfile "slurmd of $n" "$RUN/slurmd-$n.pid"; done
    for n in "$@"; do start_slurmd "$n"; done
    for n in "$@"; do wait_for "slurmd of $n to register again" 30 slurmd_started "$n" "$since"; done
}

# cmd_restart DAEMON [NODE...]: stop one of the lab's daemons and start it again; returns once it serves.
cmd_restart() {
    need_root
    [ -e "$RUN/up" ] || die "the lab is not up"
    local n
    case "${1:-}" in
        slurmd)
            shift
            [ $# -ge 1 ] || die "usage: tbmesh-lab restart slurmd NODE... (or 'bridge' for every slurmd on the bridge host)"
            if [ "$1" = bridge ]; then set -- $(bridge_nodes); fi
            for n in "$@"; do [ -n "$(node_row "$n")" ] || die "no node '$n' in the lab; nodes: $(all_nodes | paste -sd' ')"; done
            restart_slurmd "$@"
            say "restarted the slurmd of $*" ;;
        slurmctld)
            stop_pidfile slurmctld "$RUN/slurmctld.pid"
            start_slurmctld
            say "restarted slurmctld" ;;
        slurmdbd)
            stop_pidfile slurmdbd "$RUN/slurmdbd.pid"
            start_slurmdbd
            say "restarted slurmdbd" ;;
        munged)
            stop_pidfile munged "$RUN/munge/munged.pid"
            start_munge
            say "restarted munged" ;;
        *) die "usage: tbmesh-lab restart slurmd NODE...|bridge | slurmctld | slurmdbd | munged" ;;
    esac
}

# mac_pids NODE: every process inside the Mac's network namespace.
mac_pids() { ip netns pids "$(netns "$1")" 2>/dev/null || true; }

# power_off NS WHAT: every process in the namespace NS is stopped (SIGSTOP, until no new one appears: a stopped
# process forks nothing, so no child keeps a port open a moment longer), then killed (SIGKILL); nothing is told.
power_off() {
    local pids seen="" end=$((SECONDS + 10))
    while pids=$(mac_pids "$1" | sort -n | paste -sd' ') && [ "$pids" != "$seen" ]; do
        # shellcheck disable=SC2086
        [ -z "$pids" ] || kill -STOP $pids 2>/dev/null || true
        seen=$pids
        [ "$SECONDS" -lt "$end" ] || die "the processes of $2 did not stop within 10 s: $pids"
    done
    while pids=$(mac_pids "$1") && [ -n "$pids" ]; do
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null || true
        [ "$SECONDS" -lt "$end" ] || die "processes survived SIGKILL in $2: $pids"
        sleep 0.2
    done
}

# cmd_kill_mac NODE: the Mac goes off at once: every process in it (its agent and that agent's supervisor,
# the tasks, in direct mode its slurmd and slurmstepds) is stopped (SIGSTOP, until no new one appears: a
# stopped process forks nothing, so no agent child keeps its port open a moment longer), then killed
# (SIGKILL); nothing is told. Its namespaces and cables stay (as a powered-off Mac's ports stay cabled);
# `revive` powers it on.
cmd_kill_mac() {
    need_root
    [ $# = 1 ] && [ -n "$(plan_rows node | awk -F'\t' -v n="$1" '$2 == n')" ] ||
        die "usage: tbmesh-lab kill-mac MAC (one of $(plan_rows node | cut -f2 | paste -sd' '))"
    power_off "$1" "$1"
    say "killed every process of $1 ('tbmesh-lab revive $1' starts it again)"
}

# cmd_revive MAC: a Mac powered on again: its agent (under its supervisor) and, in direct mode, its slurmd.
cmd_revive() {
    need_root
    [ $# = 1 ] && [ -n "$(plan_rows node | awk -F'\t' -v n="$1" '$2 == n')" ] ||
        die "usage: tbmesh-lab revive MAC (one of $(plan_rows node | cut -f2 | paste -sd' '))"
    [ -z "$(mac_pids "$1")" ] || die "$1 runs already (processes in it: $(mac_pids "$1" | paste -sd' '))"
    start_agent "$1"
    wait_agent "$1"
    if ! bridge_nodes | grep -qx "$1"; then
        local since
        since=$(date +%s)
        start_slurmd "$1"
        wait_for "slurmd of $1 to register" 30 slurmd_started "$1" "$since"
    fi
    say "revived $1"
}

# bridge_usage: what kill-bridge and revive-bridge take.
bridge_usage() {
    local hosts
    hosts=$(bridge_hosts | paste -sd' ')
    die "usage: tbmesh-lab $1 HOST (${hosts:+one of $hosts; }a bridge host of the spec's Bridge=; the controller's own bridge-mode slurmds are not one)"
}

# cmd_kill_bridge HOST: a bridge host loses its power: its link to the management network goes first (so
# that nothing it held says goodbye: the Macs' agents and slurmctld hear nothing more from it, as from a
# machine switched off), then every process in it (the slurmds of its Macs, their slurmstepds, the bridge
# forwarders) is stopped and killed. Its Macs and their agents live on. 'revive-bridge' powers it on.
cmd_kill_bridge() {
    need_root
    [ $# = 1 ] && [ -n "$(bridge_row "$1")" ] || bridge_usage kill-bridge
    ip link set "tbml-$1" down
    power_off "$1" "bridge host $1"
    say "bridge host $1 is off: its link is down and its processes are gone (the slurmds of $(bridge_macs "$1" | paste -sd' ')); 'tbmesh-lab revive-bridge $1' starts it again"
}

# cmd_revive_bridge HOST: the bridge host powered on again: its link up, its Macs' slurmds started (as its
# boot would), each registered with slurmctld.
cmd_revive_bridge() {
    need_root
    [ $# = 1 ] && [ -n "$(bridge_row "$1")" ] || bridge_usage revive-bridge
    [ -z "$(mac_pids "$1")" ] || die "bridge host $1 runs already (processes in it: $(mac_pids "$1" | paste -sd' '))"
    local n since
    ip link set "tbml-$1" up
    since=$(date +%s)
    for n in $(bridge_macs "$1"); do start_slurmd "$n"; done
    for n in $(bridge_macs "$1"); do wait_for "slurmd of $n to register" 60 slurmd_started "$n" "$since"; done
    say "revived bridge host $1 (the slurmds of $(bridge_macs "$1" | paste -sd' '))"
}
