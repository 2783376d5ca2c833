#!/usr/bin/env bash
# metrics-cost.sh: what the agent's metrics cost, printed as figures (no pass/fail):
#  1. sampling and serving: the CPU time of the metrics server and its sampler (and anything they ran) over S
#     seconds at the default interval (10 s) while Prometheus-like scrapes come every 15 s, as a share of one
#     core; beside it, the same for a scrape every second;
#  2. a scrape's time: N scrapes one after another (curl, a new connection each), median, 99th percentile and
#     the largest, beside the same curl fetching a file of the same size from python3's http.server (a peer
#     that also serves a file from memory-backed disk) on the same machine in the same run.
# The agent samples the recorded Mac of tests/fixtures/macos/gpu-m3-ultra (its ioreg and powermetrics outputs
# are read, not run: on a real Mac those two commands cost what they cost, which this does not measure).
# Usage: tests/perf/metrics-cost.sh [S] [N]   (as root; default S=60, N=500; needs a built tree: scripts/build.sh)
set -euo pipefail
S=${1:-60}
N=${2:-500}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=${TBM_BUILDDIR:-$SRC/build}
MACNODED=$B/macnode/macnoded
[ -x "$MACNODED" ] || { echo "metrics-cost: $MACNODED is not built (scripts/build.sh)" >&2; exit 1; }
command -v curl > /dev/null || { echo "metrics-cost: needs curl" >&2; exit 1; }
T=$(mktemp -d /tmp/tbm-mcost.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; sleep 0.3; rm -rf "$T"' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# cpu_ticks PID...: utime+stime of the processes and of their reaped children, in clock ticks
cpu_ticks() {
    local p t=0
    for p in "$@"; do
        t=$((t + $(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$p/stat")))
    done
    echo "$t"
}
hz=$(getconf CLK_TCK)

# run_agent INTERVAL SCRAPE_EVERY: the share of one core the metrics processes took over S seconds
run_agent() {
    local interval=$1 every=$2 ap mp agent mproc sampler t0 t1 end
    ap=$(port); mp=$(port)
    rm -rf "$T/state"
    "$MACNODED" --listen "127.0.0.1:$ap" --node mac01 --state-dir "$T/state" --jobs-dir "$T/jobs" \
        --replay "$SRC/tests/fixtures/macos/gpu-m3-ultra" --metrics "127.0.0.1:$mp" --metrics-interval "$interval" \
        --log "$T/agent.log" --pid-file "$T/agent.pid" &
    agent=$!
    pids+=("$agent")
    for _ in $(seq 100); do curl -fs -m 2 -o /dev/null "http://127.0.0.1:$mp/metrics" && break; sleep 0.1; done
    mproc=$(pgrep -P "$agent" | while read -r p; do [ -n "$(pgrep -P "$p")" ] && echo "$p"; done | head -n1)
    sampler=$(pgrep -P "$mproc" | head -n1)
    t0=$(cpu_ticks "$mproc" "$sampler")
    end=$((SECONDS + S))
    while [ $SECONDS -lt $end ]; do
        curl -fs -m 2 -o /dev/null "http://127.0.0.1:$mp/metrics" || true
        sleep "$every"
    done
    t1=$(cpu_ticks "$mproc" "$sampler")
    kill "$agent"; wait "$agent" 2>/dev/null || true
    awk -v d=$((t1 - t0)) -v hz="$hz" -v s="$S" 'BEGIN { printf "%.3f", 100 * d / hz / s }'
}
# the smallest share one clock tick over S seconds can show
tick=$(awk -v hz="$hz" -v s="$S" 'BEGIN { printf "%.3f", 100 / hz / s }')

echo "metrics-cost: sampling and serving, $S s each, at the default interval (10 s); one clock tick over $S s is $tick%"
printf '  %-44s %s%% of one core\n' "scraped every 15 s (Prometheus' default):" "$(run_agent 10 15)"
printf '  %-44s %s%% of one core\n' "scraped every second:" "$(run_agent 10 1)"

# scrape times
ap=$(port); mp=$(port); pp=$(port)
rm -rf "$T/state"
"$MACNODED" --listen "127.0.0.1:$ap" --node mac01 --state-dir "$T/state" --jobs-dir "$T/jobs" \
    --replay "$SRC/tests/fixtures/macos/gpu-m3-ultra" --metrics "127.0.0.1:$mp" --log "$T/agent.log" &
pids+=("$!")
for _ in $(seq 100); do curl -fs -m 2 -o "$T/www/metrics" --create-dirs "http://127.0.0.1:$mp/metrics" && break; sleep 0.1; done
(cd "$T/www" && exec python3 -m http.server "$pp" --bind 127.0.0.1 > /dev/null 2>&1) &
pids+=("$!")
for _ in $(seq 100); do curl -fs -m 2 -o /dev/null "http://127.0.0.1:$pp/metrics" && break; sleep 0.1; done
times() {   # times URL: N scrape times in ms, one a line
    local i
    for ((i = 0; i < N; i++)); do curl -fs -o /dev/null -w '%{time_total}\n' "$1"; done | awk '{ printf "%.3f\n", $1 * 1000 }'
}
stats() { sort -n | awk '{ v[NR] = $1 } END { printf "median %.3f ms, p99 %.3f ms, max %.3f ms", v[int((NR + 1) / 2)], v[int(NR * 0.99)], v[NR] }'; }
size=$(stat -c %s "$T/www/metrics")
echo "metrics-cost: $N scrapes one after another (curl, a new connection each; the exposition is $size bytes)"
a=$(times "http://127.0.0.1:$mp/metrics" | tee "$T/agent.ms" | stats)
p=$(times "http://127.0.0.1:$pp/metrics" | tee "$T/peer.ms" | stats)
printf '  %-44s %s\n' "macnoded:" "$a" "python3 http.server (the same bytes):" "$p"
ma=$(sort -n "$T/agent.ms" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
mpeer=$(sort -n "$T/peer.ms" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
awk -v a="$ma" -v p="$mpeer" 'BEGIN { printf "  median ratio, python3 http.server / macnoded: %.2f\n", p / a }'
