# agent_env.sh: sourced by the agent tests and the stream benchmark: a private munged and macnoded on
# loopback in a temporary folder (removed on exit), and helpers to make grants and run the forwarder as
# the test user. Needs root: the caller is skipped (exit 77) otherwise.
B=${TBM_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)/build}
MACNODE=$B/macnode/macnode
MACNODED=$B/macnode/macnoded
POKE=$B/tests/macnode/wire_poke
USER_UID=65534

if [ "$(id -u)" != 0 ]; then
    echo "SKIP: $(basename "$0") needs root (tasks run as uid $USER_UID, grants are made by uid 0); run make check as root"
    exit 77
fi
for t in munged mungekey munge setpriv; do
    command -v "$t" >/dev/null || { echo "SKIP: $(basename "$0") needs $t"; exit 77; }
done
for p in "$MACNODE" "$MACNODED" "$POKE" "$B/tests/macnode/impostor"; do
    [ -x "$p" ] || { echo "FAIL: $p is not built"; exit 1; }
done

T=$(mktemp -d /tmp/tbm-agent.XXXXXX)
chmod 755 "$T"
# The forwarder runs as the test user, who may not reach the build folder (a clone under /root, 0700): it
# runs from a copy in $T.
cp "$MACNODE" "$T/macnode" && MACNODE=$T/macnode
W=$T/work   # the user's working directory
mkdir "$W" && chown $USER_UID:$USER_UID "$W"
export TBMESH_MUNGE_SOCKET=$T/munge.sock
# the Mac whose agent the clients expect to prove itself, as slurmd names it for a task (no tbmesh.conf here)
export SLURMD_NODENAME=testnode
unset TBMESH_CONF SLURM_CONF
IMPOSTOR=$B/tests/macnode/impostor
# The agent's port and the two above it (a squatter's, a second agent's): below the kernel's range of ephemeral ports, so that
# no connection of a test running beside this one takes them meanwhile, and unused now.
port_free() { [ -z "$(ss -Htan "sport = :$1" 2>/dev/null)" ]; }
eph=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
PORT=$((10000 + $$ % (eph - 10003)))
for _ in $(seq 200); do
    port_free "$PORT" && port_free $((PORT + 1)) && port_free $((PORT + 2)) && break
    PORT=$((PORT + 3 < eph - 2 ? PORT + 3 : 10000))
done
AGENT=127.0.0.1:$PORT
LOG=$T/agent.log
cleanup() {
    [ -s "$T/agent.pid" ] && kill "$(cat "$T/agent.pid")" 2>/dev/null
    [ -s "$T/munged.pid" ] && kill "$(cat "$T/munged.pid")" 2>/dev/null
    sleep 0.2
    rm -rf "$T"
}
trap cleanup EXIT

# TBM_AGENT_WRAP: a command to run macnoded under (e.g. valgrind); AGENT_NODE its node name (testnode);
# AGENT_ARGS more options.
start_agent() {
    local from
    from=$(( $({ wc -l < "$LOG"; } 2>/dev/null || echo 0) + 1 ))   # this start's lines only (the log is kept)
    ${TBM_AGENT_WRAP:-} "$MACNODED" --listen "$AGENT" --node "${AGENT_NODE:-testnode}" --state-dir "$T/state" \
        --jobs-dir "$T/jobs" --grace 1 --munge-socket "$TBMESH_MUNGE_SOCKET" --log "$LOG" --pid-file "$T/agent.pid" \
        --replay "$REPLAY" ${AGENT_ARGS[@]+"${AGENT_ARGS[@]}"} &
    for _ in $(seq 50); do
        tail -n +"$from" "$LOG" 2>/dev/null | grep -q "listening on $AGENT" && return 0
        tail -n +"$from" "$LOG" 2>/dev/null | grep -q "cannot start" && break
        sleep 0.1
    done
    echo "FAIL: macnoded did not start:"; tail -n +"$from" "$LOG"; exit 1
}

# grant [UID] [NODE]: a grant made by root for job $JOB (default 7) step 0.
grant() { "$MACNODE" grant --job "${JOB:-7}" --step 0 --node "${2:-testnode}" --uid "${1:-$USER_UID}" --gid "${1:-$USER_UID}" --ttl 120; }
# as_user CMD...: run CMD as the test user.
as_user() { setpriv --reuid=$USER_UID --regid=$USER_UID --clear-groups "$@"; }
# fwd CMD...: macnode exec as the test user with a fresh grant, in $T.
fwd() { (cd "$W" && TBMESH_GRANT=$(grant) as_user "$MACNODE" exec --agent "$AGENT" -- "$@"); }

mungekey --create --keyfile="$T/munge.key" --bits=1024 2>/dev/null || { echo "FAIL: mungekey"; exit 1; }
chmod 600 "$T/munge.key"
munged --key-file="$T/munge.key" --socket="$TBMESH_MUNGE_SOCKET" --pid-file="$T/munged.pid" \
    --log-file="$T/munged.log" --seed-file="$T/munged.seed" || { echo "FAIL: munged did not start"; exit 1; }
REPLAY=${TBM_FIXTURES:-$(dirname "$0")/../fixtures}/macos/studio-a1
# TBM_AGENT_START=no: the caller starts it (start_agent) once it has set things up.
[ "${TBM_AGENT_START:-yes}" = no ] || start_agent

