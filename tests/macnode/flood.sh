#!/usr/bin/env bash
# flood.sh: the agent under the load a hostile local user can make without authenticating: 1,000 idle
# connections opened and held, and garbage senders hammering it, while a legitimate `macnode exec` must still
# run its task. Prints figures (the agent's peak memory, summed over its processes, and its log's size and
# lines); asserts only that every legitimate task ran, that no stranger got a process of its own, and that
# the log summed up what it did not log one by one. Root; loopback and a private munged (agent_env.sh);
# bounded: TBM_FLOOD_IDLE connections (default 1000), TBM_FLOOD_GARBAGE senders (default 4) for about 15 s.
set -u

. "$(dirname "$0")/agent_env.sh"

IDLE=${TBM_FLOOD_IDLE:-1000}
GARBAGE=${TBM_FLOOD_GARBAGE:-4}
LEGIT=${TBM_FLOOD_LEGIT:-5}
PORT=${AGENT##*:}
failures=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }
# as_stranger CMD...: the hostile user (uid 1), another user than the job's
as_stranger() { setpriv --reuid=1 --regid=1 --clear-groups "$@"; }

main=$(cat "$T/agent.pid")
agent_rss_kb() { ps -o rss= --pid "$main" --ppid "$main" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
agent_procs() { ps -o pid= --ppid "$main" 2>/dev/null | wc -l; }
log_before=$(stat -c %s "$LOG")

# The agent's memory and process count, sampled while the flood lasts.
touch "$T/flooding"
( peak=0 procs=0
  while [ -e "$T/flooding" ]; do
      r=$(agent_rss_kb); [ "$r" -gt "$peak" ] && peak=$r
      p=$(agent_procs); [ "$p" -gt "$procs" ] && procs=$p
      echo "$peak $procs" > "$T/peak"
      sleep 0.2
  done ) &
sampler=$!

strangers=
# 1,000 idle connections, opened by four holders and kept open (what the agent closed stays closed).
per=$(( (IDLE + 3) / 4 ))
for h in 1 2 3 4; do
    as_stranger bash -c '
        ulimit -n 4096 2>/dev/null || ulimit -n "$(ulimit -Hn)"
        n=0
        for i in $(seq '"$per"'); do exec {fd}<>/dev/tcp/127.0.0.1/'"$PORT"' 2>/dev/null && n=$((n + 1)); done
        echo $n
        while [ -e '"$T"'/flooding ]; do sleep 0.5; done' > "$T/idle.$h" &
    strangers="$strangers $!"
done
# Garbage senders: connect, send what is no frame (or a frame too big for a hello), go; over and over.
for g in $(seq "$GARBAGE"); do
    as_stranger bash -c '
        n=0
        while [ -e '"$T"'/flooding ] && [ $n -lt 20000 ]; do
            { printf "GET / HTTP/1.1\r\n\r\n" >&3; } 3<>/dev/tcp/127.0.0.1/'"$PORT"' 2>/dev/null
            { printf "\177\377\377\377{garbage" >&3; } 3<>/dev/tcp/127.0.0.1/'"$PORT"' 2>/dev/null
            n=$((n + 2))
        done
        echo $n' > "$T/garbage.$g" &
    strangers="$strangers $!"
done
for _ in $(seq 300); do [ "$(cat "$T"/idle.* 2>/dev/null | wc -l)" -eq 4 ] && break; sleep 0.1; done
opened=$(cat "$T"/idle.* 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
echo "figure: idle connections opened by the stranger: $opened"
[ "$opened" -ge $((IDLE * 9 / 10)) ] && ok "the stranger opened its idle connections" \
    || bad "the stranger opened only $opened of $IDLE idle connections (its fd limit?)"

# While all that goes on: legitimate tasks.
good=0
for i in $(seq "$LEGIT"); do
    out=$(fwd echo "legit-$i" 2>"$T/legit.err")
    if [ "$out" = "legit-$i" ]; then good=$((good + 1)); else echo "legit task $i: $(cat "$T/legit.err")"; fi
    sleep 1
done
[ "$good" = "$LEGIT" ] && ok "all $LEGIT legitimate tasks ran during the flood" \
    || bad "only $good of $LEGIT legitimate tasks ran during the flood"

# Keep the flood on until the log's interval has passed once, then stop it.
for _ in $(seq 150); do grep -q "not logged one by one" "$LOG" && break; sleep 0.1; done
rm -f "$T/flooding"
wait $sampler $strangers 2>/dev/null
sent=$(cat "$T"/garbage.* 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
read -r peak procs < "$T/peak"
echo "figure: garbage connections sent: $sent"
echo "figure: agent peak RSS (sum over its processes): $peak KiB"
echo "figure: agent processes at most (besides the main one): $procs"
echo "figure: agent log grew by $(( $(stat -c %s "$LOG") - log_before )) bytes, $(wc -l < "$LOG") lines in all"
grep "not logged one by one" "$LOG" | head -3 | sed 's/^/figure: log summary: /'
grep -q "not logged one by one" "$LOG" && ok "the log sums up what it did not log one by one" \
    || bad "no summary line in the agent's log"
# a stranger never got a server process: at most the sweeper and the legitimate servers ran beside the agent
[ "$procs" -le $((LEGIT + 2)) ] && ok "strangers got no process of their own" \
    || bad "the agent had $procs processes during the flood"
out=$(fwd echo after)
[ "$out" = after ] && ok "the agent serves normally after the flood" || bad "after the flood: '$out'"

if [ $failures -gt 0 ]; then
    echo "$failures checks failed; the agent log's end:"; tail -40 "$LOG"
    exit 1
fi
echo "all flood checks passed"
