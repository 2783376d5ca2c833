#!/usr/bin/env bash
# metrics.sh: macnoded's metrics endpoint end to end, with a private munged and macnoded in a network namespace
# of their own holding a veth named like one of the recorded Mac's Thunderbolt interfaces (en2), the
# recorded Mac's GPU and power captures (en2's far end in a namespace of its own), and tbmesh.conf's example
# naming it mac01: the exposition passes promtool; the machine, GPU, power, cable ends (with their far ends and group from tbmesh.conf) and a running
# task are in it; bytes sent over a cable show in its counters; a cable taken down shows within a second (the
# sampler follows link news); what is not reported is absent; garbage, wrong paths and a flood of idle
# connections are refused or outlived; a stuck sampler's figures are not served; a killed sampler and a killed
# metrics server come back; the health check's verdict on the Mac (--health-dir) is served when root's. Needs root
# and ip(8).
set -u
if [ "$(id -u)" != 0 ] || ! command -v ip > /dev/null || ! command -v curl > /dev/null; then
    echo "SKIP: $(basename "$0") needs root, ip(8) and curl"; exit 77
fi
NS=tbmm$$ FAR=tbmf$$   # the Mac's namespace, and the far end's of its cable en2
ip netns add "$NS" || { echo "SKIP: cannot make a network namespace"; exit 77; }
ip netns add "$FAR" || { ip netns del "$NS"; echo "SKIP: cannot make a network namespace"; exit 77; }
ip -n "$NS" link set lo up
ip -n "$NS" link add en2 type veth peer name en2 netns "$FAR"
ip -n "$NS" link set en2 up
ip -n "$FAR" link set en2 up
ip -n "$NS" addr add 10.10.0.1/30 dev en2
ip -n "$FAR" addr add 10.10.0.2/30 dev en2
TBM_AGENT_WRAP="ip netns exec $NS" TBM_AGENT_START=no
. "$(dirname "$0")/agent_env.sh"
trap 'cleanup; ip netns del "$NS"; ip netns del "$FAR"' EXIT
FIX=${TBM_FIXTURES:-$(cd "$(dirname "$0")/../fixtures" && pwd)}
REPLAY=$T/replay
cp -r "$FIX/macos/studio-a1" "$REPLAY"
cp "$FIX/macos/gpu-m3-ultra/ioreg.txt" "$FIX/macos/gpu-m3-ultra/powermetrics.plist" "$REPLAY/"
CONF=$T/tbmesh.conf
cp "$(dirname "$0")/../../etc/tbmesh.conf.example" "$CONF"
MPORT=$((PORT + 1))
URL=http://127.0.0.1:$MPORT/metrics

failures=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }
in_ns() { ip netns exec "$NS" "$@"; }
scrape() { in_ns curl -sS -m 5 "$URL"; }
has() {  # has WHAT LINE: the exposition holds the line
    grep -qxF -- "$2" "$T/m.txt" && ok "$1" || bad "$1: no line [$2] in the exposition"
}
value() { awk -v k="$1" '$1 == k { print $2 }' "$T/m.txt"; }
# until_value SERIES VALUE: wait (at most 5 s) until a scrape shows the series at that value.
until_value() {
    for _ in $(seq 50); do scrape > "$T/m.txt" 2>/dev/null; [ "$(value "$1")" = "$2" ] && return 0; sleep 0.1; done
    return 1
}

AGENT_NODE=mac01 AGENT_ARGS=(--conf "$CONF" --metrics "127.0.0.1:$MPORT" --metrics-interval 1 --health-dir "$T/health")
start_agent
grep -q "metrics: served on http://127.0.0.1:$MPORT/metrics, a sample every 1 s" "$LOG" &&
    ok "the agent says where its metrics are" || bad "no metrics line in the log: $(cat "$LOG")"
for _ in $(seq 50); do scrape > "$T/m.txt" 2>/dev/null && grep -q '^tbmesh_sample_time_seconds' "$T/m.txt" && break; sleep 0.1; done

# --- what a scrape holds -----------------------------------------------------------------------------------
if command -v promtool > /dev/null; then
    lint=$(promtool check metrics < "$T/m.txt" 2>&1) && [ -z "$lint" ] && ok "promtool check metrics takes it" ||
        bad "promtool check metrics: $lint"
fi
has "the agent's version" 'tbmesh_agent_info{node="mac01",version="'"$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"/\1/p' "$B/config.h")"'"} 1'
has "the GPU from ioreg" 'tbmesh_gpu_busy_ratio{node="mac01"} 0.93'
has "package power from powermetrics" 'tbmesh_power_watts{node="mac01",part="package"} 66.46906'
has "the samplers that worked" 'tbmesh_sampler_up{node="mac01",sampler="power"} 1'
grep -q '^tbmesh_memory_total_bytes{node="mac01"} [1-9]' "$T/m.txt" && ok "memory" || bad "no memory total"
E='group="studio-a",node="mac01",peer="mac02",peer_port="en2",port="en2"'
has "a cable end up, with its far end and group from tbmesh.conf" "tbmesh_link_up{$E} 1"
has "... its negotiated speed (the probe's 80 Gb/s)" "tbmesh_link_speed_bytes{$E} 10000000000"
has "... its class's (tbmesh.conf's Speed=80)" "tbmesh_link_class_speed_bytes{$E} 10000000000"
has "... RDMA on it (rdma_ctl enabled, rdma_en2 listed)" "tbmesh_link_rdma_enabled{$E} 1"
has "a recorded cable end with no interface here is down" \
    'tbmesh_link_up{group="studio-a",node="mac01",peer="mac04",peer_port="en2",port="en4"} 0'
grep -q 'tbmesh_link_receive_bytes_total{group="studio-a",node="mac01",peer="mac04"' "$T/m.txt" &&
    bad "counters of an interface that is not there" || ok "... and has no made-up counters"
grep -q '^tbmesh_memory_pressure' "$T/m.txt" && bad "memory pressure reported off macOS" ||
    ok "what the OS does not report (memory pressure, off macOS) is absent"

# the health check's verdict on this Mac (direct mode: it runs on the Mac), from --health-dir: absent while
# there is none; served once root's file is there; a file root must not trust is refused and said once
grep -q '^tbmesh_health_ok' "$T/m.txt" && bad "a health verdict served with none made" || ok "no health verdict: none served"
mkdir -m 0755 "$T/health"
printf '{"node":"mac01","verdict":"unwell","reason":"tbmesh: cable-missing at mac01:en4","time":1736850067}\n' \
    > "$T/health/mac01.json"
until_value 'tbmesh_health_ok{group="studio-a",node="mac01"}' 0 && ok "the health check's verdict is served (unwell: 0)" ||
    bad "no health verdict served: $(grep health "$T/m.txt")"
has "... with its time" 'tbmesh_health_check_time_seconds{group="studio-a",node="mac01"} 1736850067'
printf '{"node":"mac01","verdict":"well","reason":"","time":1736850099}\n' > "$T/health/mac01.json.new"
mv "$T/health/mac01.json.new" "$T/health/mac01.json"
until_value 'tbmesh_health_ok{group="studio-a",node="mac01"}' 1 && ok "... and the next one (well: 1)" || bad "the new verdict is not served"
printf '{"node":"mac02","verdict":"well","reason":"","time":1736850099}\n' > "$T/health/mac01.json"   # another Mac's
until_value 'tbmesh_health_ok{group="studio-a",node="mac01"}' "" && ok "a verdict about another Mac is not served" ||
    bad "a verdict about another Mac is served"
sleep 1.5
[ "$(grep -c 'metrics: the health verdict is not served: .*mac01.json' "$LOG")" = 1 ] && ok "... said once in the log" ||
    bad "the refused verdict in the log: $(grep 'health verdict' "$LOG")"
printf '{"node":"mac01","verdict":"well","reason":"","time":1736850099}\n' > "$T/health/mac01.json"
until_value 'tbmesh_health_ok{group="studio-a",node="mac01"}' 1 || bad "the verdict about this Mac is not served again"
chmod 0777 "$T/health"   # served a moment ago: the refusal is seen as the series going
until_value 'tbmesh_health_ok{group="studio-a",node="mac01"}' "" &&
    ok "a verdict in a folder anyone may write is not served" || bad "a verdict in a folder anyone may write is served"
rm -rf "$T/health"

# bytes over the cable show in its counters
before=$(value "tbmesh_link_transmit_bytes_total{$E}")
in_ns python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(20):
    s.sendto(b"x" * 1400, ("10.10.0.2", 9))
' 
sleep 1.5
scrape > "$T/m.txt"
after=$(value "tbmesh_link_transmit_bytes_total{$E}")
[ -n "$before" ] && [ -n "$after" ] && [ "$((after - before))" -ge $((20 * 1400)) ] &&
    ok "bytes sent over en2 show in its counter (+$((after - before)))" || bad "transmit bytes $before -> $after"

# a cable taken down shows within a second, without waiting for the interval
ip -n "$FAR" link set en2 down
t0=$(date +%s%N)
until_value "tbmesh_link_up{$E}" 0 && ok "a cable taken down shows down ($(( ($(date +%s%N) - t0) / 1000000 )) ms)" ||
    bad "en2 still up after its far end went down"
ip -n "$FAR" link set en2 up
until_value "tbmesh_link_up{$E}" 1 && ok "... and up again" || bad "en2 not up again"

# a running task of a job shows with its job id and user
(cd "$W" && JOB=4242 TBMESH_GRANT=$(JOB=4242 grant "$USER_UID" mac01) in_ns setpriv --reuid=$USER_UID --regid=$USER_UID \
    --clear-groups "$MACNODE" exec --agent "$AGENT" --node mac01 -- sleep 4 > /dev/null 2>&1) &
task=$!
user=$(getent passwd $USER_UID | cut -d: -f1)
until_value "tbmesh_tasks_running{jobid=\"4242\",node=\"mac01\",user=\"$user\"}" 1 &&
    ok "a running task shows with its job id and user" || bad "no task of job 4242: $(grep tasks_running "$T/m.txt")"
wait "$task"
until_value "tbmesh_tasks_running{jobid=\"4242\",node=\"mac01\",user=\"$user\"}" "" &&
    ok "... and is gone once it ended" || bad "task of job 4242 still shown"

# --- bad requests ------------------------------------------------------------------------------------------
code=$(in_ns curl -s -o /dev/null -w '%{http_code}' -m 5 "http://127.0.0.1:$MPORT/secrets")
[ "$code" = 404 ] && ok "another path: 404" || bad "another path: $code"
code=$(in_ns curl -s -o /dev/null -w '%{http_code}' -m 5 -X POST "$URL")
[ "$code" = 405 ] && ok "a POST: 405" || bad "a POST: $code"
out=$(printf 'GARBAGE\r\n\r\n' | in_ns timeout 5 socat - "TCP:127.0.0.1:$MPORT" 2>&1 | head -n1)
case "$out" in "HTTP/1.1 400"*) ok "garbage: 400" ;; *) bad "garbage: [$out]" ;; esac
# a flood of idle connections: the server closes the oldest to make room, and a scrape is still answered
in_ns python3 - "$MPORT" <<'PY' &
import socket, sys, time
s = []
for _ in range(500):
    try:
        c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2); s.append(c)
    except OSError:
        pass
time.sleep(4)
PY
flood=$!
sleep 1
scrape > "$T/m.txt" 2>&1 && grep -q '^tbmesh_agent_info' "$T/m.txt" && ok "a scrape is answered during a flood of 500 idle connections" ||
    bad "no answer during the flood: $(head -3 "$T/m.txt")"
wait "$flood"

# --- a stuck sampler, a killed one, a killed server ---------------------------------------------------------
mpid=$(pgrep -P "$(cat "$T/agent.pid")" -f macnoded | while read -r p; do
    [ -n "$(pgrep -P "$p")" ] && echo "$p"; done | head -n1)   # the metrics server: the child with a child
spid=$(pgrep -P "$mpid" | head -n1)
[ -n "$mpid" ] && [ -n "$spid" ] && ok "the metrics server and its sampler run" || bad "no metrics processes"
kill -STOP "$spid"
code=
for _ in $(seq 150); do
    code=$(in_ns curl -s -o "$T/stale.txt" -w '%{http_code}' -m 5 "$URL"); [ "$code" = 503 ] && break; sleep 0.1
done
[ "$code" = 503 ] && grep -q "the sampler is stuck" "$T/stale.txt" && ok "a stuck sampler's figures are not served (503)" ||
    bad "stale figures served: $code $(cat "$T/stale.txt" | head -2)"
kill -KILL "$spid"
kill -CONT "$spid" 2>/dev/null
until_value 'tbmesh_gpu_busy_ratio{node="mac01"}' 0.93 && ok "a killed sampler starts again" || bad "no sampler again"
grep -q "metrics: the sampler ended; it starts again" "$LOG" && ok "... said in the log" || bad "no log line of the sampler's end"
kill -KILL "$mpid"
ok_again=no
for _ in $(seq 100); do scrape > "$T/m.txt" 2>/dev/null && grep -q '^tbmesh_agent_info' "$T/m.txt" && ok_again=yes && break; sleep 0.1; done
[ "$ok_again" = yes ] && ok "a killed metrics server starts again" || bad "no metrics server again"
[ -z "$(pgrep -f "macnoded.*$MPORT" | while read -r p; do [ "$(ps -o stat= -p "$p")" = Z ] && echo z; done)" ] &&
    ok "no zombie left" || bad "a zombie is left"

# --- off --------------------------------------------------------------------------------------------------
out=$("$MACNODED" --metrics-interval 0 2>&1); rc=$?
[ "$rc" = 2 ] && [ "$out" = "macnoded: --metrics-interval '0' must be a number of seconds from 1 to 3600" ] &&
    ok "a bad interval is refused, saying why" || bad "bad interval: $rc $out"
out=$("$MACNODED" --metrics-tasks maybe 2>&1); rc=$?
[ "$rc" = 2 ] && [ "$out" = "macnoded: --metrics-tasks 'maybe' must be on or off" ] && ok "a bad --metrics-tasks is refused" ||
    bad "bad --metrics-tasks: $rc $out"

echo "metrics.sh: $failures failed"
[ "$failures" = 0 ]
