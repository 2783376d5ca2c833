#!/usr/bin/env bash
# bench_stream.sh: stdout throughput of one stream (BENCH_MB MiB, default 1024) through macnoded and
# macnode exec on loopback, against the same stream piped straight into the same reader. Prints MB/s of
# both and their ratio (the target: at least 0.5), then the median time to run `true` through the agent
# (grant, connect, MUNGE both ways, spawn, exit) against running it here. Timing only: not in make check.
set -u
SIZE_MB=${BENCH_MB:-1024}
. "$(dirname "$0")/agent_env.sh"

now_ns() { date +%s%N; }

# run_timed LABEL CMD...: run CMD (its stdout counted by wc -c), print bytes and MB/s, set $mbs.
run_timed() {
    local label=$1 t0 t1 bytes
    shift
    t0=$(now_ns)
    bytes=$("$@" | wc -c)
    t1=$(now_ns)
    mbs=$(awk -v b="$bytes" -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f", b / 1e6 / (ns / 1e9) }')
    printf '%-28s %12s bytes  %8s MB/s\n' "$label" "$bytes" "$mbs"
    [ "$bytes" = $((SIZE_MB * 1048576)) ] || { echo "FAIL: $label delivered $bytes bytes"; exit 1; }
}

run_timed "direct (head | wc)" head -c "${SIZE_MB}M" /dev/zero
direct=$mbs
run_timed "agent + forwarder" fwd head -c "${SIZE_MB}M" /dev/zero
through=$mbs
awk -v a="$through" -v d="$direct" 'BEGIN { printf "ratio forwarded/direct: %.2f (target >= 0.50)\n", a / d }'

# median_ms CMD...: the median wall time of 21 runs of CMD, in ms.
median_ms() {
    local i t0 t1
    for i in $(seq 21); do
        t0=$(now_ns); "$@" >/dev/null 2>&1; t1=$(now_ns)
        echo $(( (t1 - t0) / 1000 ))
    done | sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", v[11] / 1000 }'
}
here=$(median_ms as_user true)
there=$(median_ms fwd true)
printf 'launch of true: here %s ms, through the agent %s ms (grant included)\n' "$here" "$there"
