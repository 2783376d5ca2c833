#!/usr/bin/env bash
# taskgpu.sh: each task's GPU and energy end to end: macnoded with a private munged, its metrics sampling every
# second from the recorded Mac's GPU and power captures (ioreg: GPU 93% busy; powermetrics: 66.46906 W for the
# package); tasks of a job run through `macnode exec` as the test user, and root's `macnode usage` says what
# the Mac's GPU and package did while each ran: a task of several seconds gets the GPU mean and peak and its
# energy, one shorter than an interval gets "short", one run while the ring cannot be read "no-ring", one run
# with the agent's metrics off "metrics-off"; never a 0 for a figure not known. Needs root.
set -u
TBM_AGENT_START=no
. "$(dirname "$0")/agent_env.sh"
FIX=${TBM_FIXTURES:-$(cd "$(dirname "$0")/../fixtures" && pwd)}
REPLAY=$T/replay
cp -r "$FIX/macos/studio-a1" "$REPLAY"
cp "$FIX/macos/gpu-m3-ultra/ioreg.txt" "$FIX/macos/gpu-m3-ultra/powermetrics.plist" "$REPLAY/"
MPORT=$((PORT + 1))

failures=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }
# rusage JOB TASK: the rusage object of task TASK (its SLURM_PROCID) of job JOB step 0, as root asks for it.
rusage() {
    "$MACNODE" usage --agent "$AGENT" --job "$1" --step 0 |
        python3 -c 'import json, sys
for t in json.load(sys.stdin)["tasks"]:
    if t["task"] == int(sys.argv[1]): print(json.dumps(t["rusage"], sort_keys=True))' "$2"
}
# member JSON KEY: one member of a rusage object ("" when it has none).
member() { python3 -c 'import json, sys; v = json.loads(sys.argv[1]).get(sys.argv[2]); print("" if v is None else v)' "$1" "$2"; }
stop_agent() {
    local pid
    pid=$(cat "$T/agent.pid")
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$T/agent.pid"
}

AGENT_ARGS=(--metrics "127.0.0.1:$MPORT" --metrics-interval 1)
start_agent
for _ in $(seq 50); do [ -s "$T/state/samples.ring" ] && break; sleep 0.1; done
[ -s "$T/state/samples.ring" ] && ok "the sampler keeps its ring" || bad "no sample ring in $T/state"

# --- a task of several intervals: the GPU's mean and peak, and the package's energy, over its time ----------
JOB=21 SLURM_PROCID=0 fwd sleep 3.5
ru=$(rusage 21 0)
n=$(member "$ru" gpu_samples)
[ "${n:-0}" -ge 2 ] && [ "${n:-0}" -le 5 ] && ok "a 3.5 s task: $n GPU samples" || bad "GPU samples: $ru"
[ "$(member "$ru" gpu_mean)" = 0.93 ] && [ "$(member "$ru" gpu_peak)" = 0.93 ] &&
    ok "... the GPU's mean and peak (ioreg's 93%)" || bad "GPU mean and peak: $ru"
e=$(member "$ru" energy_j)
python3 -c 'import sys; e = float(sys.argv[1]); sys.exit(not (66.4 * 2 <= e <= 66.5 * 4.5))' "${e:-0}" &&
    ok "... the package's energy (${e} J: 66.47 W over the task's time)" || bad "energy: $ru"
[ -z "$(member "$ru" gpu_why)" ] && [ -z "$(member "$ru" energy_why)" ] && ok "... and no why beside figures" ||
    bad "a why beside the figures: $ru"
grep -q '"gpu_mean":0.9300,"gpu_peak":0.9300' "$T"/state/usage/21.0.*.json &&
    ok "the agent's kept usage holds them (four decimals)" || bad "kept usage: $(cat "$T"/state/usage/21.0.*.json)"

# --- a task shorter than one interval: not reported, and why ------------------------------------------------
JOB=21 SLURM_PROCID=1 fwd true
ru=$(rusage 21 1)
[ "$(member "$ru" gpu_why)" = short ] && [ "$(member "$ru" energy_why)" = short ] &&
    [ -z "$(member "$ru" gpu_mean)" ] && [ -z "$(member "$ru" energy_j)" ] &&
    ok "a task shorter than a sample interval: short, no figures" || bad "short task: $ru"

# --- a ring that cannot be read (not the agent's alone): no-ring, said in the log ---------------------------
mv "$T/state/samples.ring" "$T/ring.saved"
cp "$T/ring.saved" "$T/state/samples.ring"
chown "$USER_UID" "$T/state/samples.ring"
JOB=21 SLURM_PROCID=2 fwd sleep 1.2
ru=$(rusage 21 2)
[ "$(member "$ru" gpu_why)" = no-ring ] && [ "$(member "$ru" energy_why)" = no-ring ] &&
    ok "a ring that is not the agent's: no-ring" || bad "no-ring: $ru"
grep -q "metrics: a task's GPU and energy are not reported: " "$LOG" && ok "... said in the agent's log" ||
    bad "no log line: $(tail -5 "$LOG")"
rm -f "$T/state/samples.ring"

# --- metrics off: nothing sampled, so nothing reported, whatever ring an earlier run left -------------------
stop_agent
mv "$T/ring.saved" "$T/state/samples.ring"
AGENT_ARGS=(--metrics off)
: > "$LOG"
start_agent
JOB=22 SLURM_PROCID=0 fwd sleep 1.2
ru=$(rusage 22 0)
[ "$(member "$ru" gpu_why)" = metrics-off ] && [ "$(member "$ru" energy_why)" = metrics-off ] &&
    [ -z "$(member "$ru" gpu_samples)" ] && ok "the agent's metrics off: metrics-off, no figures" || bad "metrics off: $ru"

echo "taskgpu.sh: $failures failed"
[ "$failures" = 0 ]
