#!/usr/bin/env bash
# gate-root.sh: a user on the bridge host floods a Mac's agent from the address root's own questions come from
# (new connections as fast as it can make them, each sending its prove and never its hello): root's questions
# (a step's usage at its end, the health check's facts) must still be answered, or a user could drain every
# Mac of its bridge host ("no facts") and leave other users' records without usage. Root's connections come
# from a port below 1024, which only root can bind on the bridge host, and the agent's gate keeps them apart
# from the others. Prints figures (the flood's connections, root's and a user's answers during it); asserts
# only root's. Root; loopback and a private munged (agent_env.sh); about 12 s.
set -u

. "$(dirname "$0")/agent_env.sh"

SECS=${TBM_CHURN_SECONDS:-12}
ASKS=${TBM_CHURN_ASKS:-8}
failures=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }
as_stranger() { setpriv --reuid=1 --regid=1 --clear-groups "$@"; }

# The poker runs as the stranger, who may not reach the build folder: a copy in $T.
cp "$POKE" "$T/wire_poke" && chmod 755 "$T/wire_poke"
for f in 1 2; do
    as_stranger "$T/wire_poke" "$AGENT" --churn "$SECS" 64 > "$T/churn.$f" 2>&1 &
    flooders="${flooders:-} $!"
done
for _ in $(seq 100); do [ "$(cat "$T"/churn.* 2>/dev/null | grep -c ' open$')" = 2 ] && break; sleep 0.1; done

root_good=0 user_good=0
for i in $(seq "$ASKS"); do
    out=$("$MACNODE" usage --agent "$AGENT" --job 99 --step "$i" 2>&1)
    case $out in *'"running":0'*) root_good=$((root_good + 1)) ;; *) echo "root's usage $i: $out" ;; esac
    out=$("$MACNODE" probe --agent "$AGENT" --node testnode --compact 2>&1)
    case $out in *'"tbmesh_facts":'*) root_good=$((root_good + 1)) ;; *) echo "root's probe $i: $(printf '%.300s' "$out")" ;; esac
    out=$(fwd echo "user-$i" 2>&1)
    [ "$out" = "user-$i" ] && user_good=$((user_good + 1))
    sleep 0.5
done
wait $flooders
echo "figure: $(grep opened "$T/churn.1")"
echo "figure: $(grep opened "$T/churn.2")"
echo "figure: root's questions answered during the flood: $root_good of $((2 * ASKS))"
echo "figure: a user's tasks run during the flood (from the flooder's address, no priority): $user_good of $ASKS"
opened=$(cat "$T"/churn.* | awk '/opened/ { s += $2 } END { print s + 0 }')
[ "$opened" -ge 10000 ] && ok "the flood made $opened connections" \
    || bad "the flood made only $opened connections: too few to tell anything"
[ "$root_good" = $((2 * ASKS)) ] && ok "every question of root's was answered during the flood" \
    || bad "only $root_good of root's $((2 * ASKS)) questions were answered during the flood"
out=$("$MACNODE" usage --agent "$AGENT" --job 99 --step 0 2>&1)
case $out in *'"running":0'*) ok "the agent answers normally after the flood" ;; *) bad "after the flood: $out" ;; esac

if [ $failures -gt 0 ]; then
    echo "$failures checks failed; the agent log's end:"; tail -20 "$LOG"
    exit 1
fi
echo "all checks of root's questions under a flood passed"
