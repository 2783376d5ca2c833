#!/usr/bin/env bash
# agent.sh: macnoded and macnode exec end to end on loopback, with a private munged: exit codes, signals,
# stdin, the SIGTERM->SIGKILL grace, every refusal (forged, replayed, other uid, no grant, bad frames) and
# that the agent keeps serving, prepare/cleanup, the time limit, a pty, and a restarted agent's sweep.
# Needs root (tasks run as other users; grants are made by uid 0): skipped otherwise.
set -u

. "$(dirname "$0")/agent_env.sh"

failures=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: expected '$3', got '$2'"; fi; }
expect_log() { if grep -q -- "$2" "$LOG"; then ok "$1 (logged)"; else bad "$1: no '$2' in the agent log"; fi; }
expect_in() { case "$2" in *"$3"*) ok "$1" ;; *) bad "$1: '$3' not in: $2" ;; esac; }

# --- what a task sees and returns ----------------------------------------------------------------------
expect_eq "echo hi returns hi" "$(fwd echo hi)" "hi"
fwd sh -c 'exit 3'; expect_eq "exit 3 gives 3" "$?" 3
fwd sh -c 'kill -SEGV $$' 2>/dev/null; expect_eq "a SIGSEGV death is re-raised (128+11)" "$?" 139
expect_eq "the task runs as the grant's user in our cwd" "$(fwd sh -c 'echo $(id -u) $PWD')" "$USER_UID $W"
expect_eq "stdin is relayed" "$(printf 'abc\ndef' | fwd tr a-z A-Z)" "$(printf 'ABC\nDEF')"
out=$(cd /root && TBMESH_GRANT=$(grant) as_user "$MACNODE" exec --agent "$AGENT" -- pwd 2>"$T/cwd.err")
expect_eq "an unreachable working directory falls back to /tmp" "$out" "/tmp"
expect_eq "... saying so" "$(cat "$T/cwd.err")" \
    "macnoded: error: cannot change to /root: Permission denied; going to /tmp instead"
expect_eq "the environment travels" "$(TBM_TEST_VAR=x42 fwd sh -c 'echo $TBM_TEST_VAR')" "x42"
expect_eq "the grant does not travel" "$(fwd sh -c 'echo ${TBMESH_GRANT:-none}')" "none"
out=$(fwd no-such-command 2>&1); rc=$?
expect_eq "a missing command exits 127" "$rc" 127
expect_in "a missing command is explained" "$out" "cannot run 'no-such-command': No such file or directory"
out=$({ grant; echo after-the-grant; } | (cd "$W" && as_user "$MACNODE" exec --agent "$AGENT" --grant - -- cat))
expect_eq "--grant - takes the first line of stdin and relays the rest" "$out" "after-the-grant"
grant > "$T/grant.txt"; chmod 644 "$T/grant.txt"
expect_eq "--grant FILE" "$(cd "$W" && as_user "$MACNODE" exec --agent "$AGENT" --grant "$T/grant.txt" -- echo from-file)" "from-file"
expect_eq "stderr is relayed apart from stdout" "$(fwd sh -c 'echo out; echo err >&2' 2>/dev/null)" "out"

# SIGTERM to the forwarder reaches the task.
(cd "$W" && TBMESH_GRANT=$(grant) exec setpriv --reuid=$USER_UID --regid=$USER_UID --clear-groups "$MACNODE" \
    exec --agent "$AGENT" -- sh -c 'trap "echo got-term; exit 7" TERM; echo ready; while :; do sleep 0.1; done' \
    >term.out) &
fpid=$!
for _ in $(seq 50); do grep -q ready "$W/term.out" 2>/dev/null && break; sleep 0.1; done
kill -TERM $fpid; wait $fpid; rc=$?
expect_eq "SIGTERM is forwarded (the task's trap exits 7)" "$rc" 7
expect_eq "the trap's output arrives" "$(tail -n1 "$W/term.out")" "got-term"
expect_log "the signal" "SIGTERM to its group"

# A task that ignores SIGTERM is SIGKILLed one grace period after its forwarder dies.
(cd "$W" && TBMESH_GRANT=$(grant) exec setpriv --reuid=$USER_UID --regid=$USER_UID --clear-groups "$MACNODE" \
    exec --agent "$AGENT" -- sh -c 'trap "" TERM; echo $$ > pid; exec sleep 300' >/dev/null) &
fpid=$!
for _ in $(seq 50); do [ -s "$W/pid" ] && break; sleep 0.1; done
tpid=$(cat "$W/pid")
kill -KILL $fpid; wait $fpid 2>/dev/null
sleep 0.5
if kill -0 "$tpid" 2>/dev/null; then ok "the task outlives SIGTERM during the grace period"; else bad "task $tpid died before the grace period ended"; fi
for _ in $(seq 40); do kill -0 "$tpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$tpid" 2>/dev/null; then bad "task $tpid still runs 4 s after its forwarder died"; else ok "the task was SIGKILLed after the grace period"; fi
expect_log "the escalation" "outlived SIGTERM by 1 s: SIGKILL"

# The time limit.
(cd "$W" && TBMESH_GRANT=$(grant) as_user "$MACNODE" exec --agent "$AGENT" --time-limit 1 -- sleep 30); rc=$?
expect_eq "a task over its time limit dies of SIGTERM (143)" "$rc" 143
expect_log "the time limit" "the time limit passed"

# A pty.
expect_eq "--pty gives the task a terminal" "$(fwd_pty() { (cd "$W" && TBMESH_GRANT=$(grant) as_user "$MACNODE" exec --pty --agent "$AGENT" -- "$@" </dev/null); }; fwd_pty sh -c 'test -t 1 && echo tty' | tr -d '\r')" "tty"

# --- refusals ------------------------------------------------------------------------------------------
cred=$(munge -S "$TBMESH_MUNGE_SOCKET" -n)
mid=$(( ${#cred} / 2 ))
forged="${cred:0:$mid}$( [ "${cred:$mid:1}" = A ] && echo B || echo A )${cred:$((mid + 1))}"
expect_in "a forged hello is refused" "$("$POKE" "$AGENT" --cred "$forged")" '"code":"forged"'
expect_log "the forged hello" "refused (forged): hello credential refused"
expect_in "a first hello is welcome" "$("$POKE" "$AGENT" --cred "$cred")" '"type":"welcome"'
expect_in "a replayed hello is refused" "$("$POKE" "$AGENT" --cred "$cred")" '"code":"replay"'
expect_log "the replayed hello" "refused (replay): hello credential refused"

g=$(grant)
(cd "$W" && TBMESH_GRANT=$g as_user "$MACNODE" exec --agent "$AGENT" -- true)
out=$(cd "$W" && TBMESH_GRANT=$g as_user "$MACNODE" exec --agent "$AGENT" -- true 2>&1); rc=$?
expect_eq "a replayed grant fails the forwarder (255)" "$rc" 255
expect_in "a replayed grant is refused" "$out" "grant credential refused"
expect_log "the replayed grant" "refused (replay): grant credential refused"

payload='{"tbmesh_grant":1,"job":7,"step":0,"node":"testnode","uid":65534,"gid":65534,"expires":'$(( $(date +%s) + 60 ))'}'
ug=$(as_user munge -S "$TBMESH_MUNGE_SOCKET" -s "$payload")
out=$(cd "$W" && TBMESH_GRANT=$ug as_user "$MACNODE" exec --agent "$AGENT" -- true 2>&1)
expect_in "a grant made by a user is refused" "$out" "made by uid 65534, not by root"

out=$(cd "$W" && TBMESH_GRANT=$(grant) "$MACNODE" exec --agent "$AGENT" -- true 2>&1)
expect_in "root asking for uid 0 under a user's grant is refused" "$out" "the spawn asks for uid 0 but the grant is for uid 65534"
out=$(cd "$W" && TBMESH_GRANT=$(grant) setpriv --reuid=1 --regid=1 --clear-groups "$MACNODE" exec --agent "$AGENT" -- true 2>&1)
expect_in "another user's grant is refused" "$out" "it is for uid 65534 but the connection is uid 1"
expect_log "the uid mismatch" "refused (grant): grant refused: it is for uid 65534 but the connection is uid 1"
out=$(cd "$W" && TBMESH_GRANT=$(grant $USER_UID mac99) as_user "$MACNODE" exec --agent "$AGENT" -- true 2>&1)
expect_in "a grant for another node is refused" "$out" "it is for node 'mac99', this is 'testnode'"
out=$(cd "$W" && as_user env -u TBMESH_GRANT "$MACNODE" exec --agent "$AGENT" -- true 2>&1); rc=$?
expect_eq "a spawn without a grant fails the forwarder (255)" "$rc" 255
expect_in "a spawn without a grant is refused" "$out" "no job grant"
expect_log "the missing grant" "refused (grant): refused: no job grant"

expect_in "garbage before the hello gets an error" "$("$POKE" "$AGENT" --raw 474554202f20485454502f312e310d0a)" '"code":"frame"'
expect_log "the garbage" "refused (frame): malformed first frame"
expect_in "a request before the hello is refused" "$("$POKE" "$AGENT" --json '{"type":"probe"}')" 'the first frame must be hello'
out=$("$POKE" "$AGENT" --hello --raw 00000003474554)
expect_in "a malformed frame after the hello gets an error" "$out" '"code":"frame"'
expect_in "... and a closed connection" "$out" "EOF"
out=$("$POKE" "$AGENT" --hello --json '{"type":"spawn","uid":"x"}')
expect_in "a malformed request gets an error" "$out" "spawn: 'uid' must be an integer"
expect_log "the malformed request" "refused (frame): malformed request: spawn: 'uid' must be an integer"
expect_eq "the agent still serves the next client" "$(fwd echo still-here)" "still-here"

# --- probe, prepare, cleanup ---------------------------------------------------------------------------
expect_in "probe answers with the replayed facts" "$("$POKE" "$AGENT" --hello --json '{"type":"probe"}')" '"type":"facts"'
req='{"type":"prepare","grant":"'$(grant)'","files":[{"name":"hostfile.json","mode":420,"data":"[\"10.0.0.1:5000\"]\n"}]}'
out=$("$POKE" "$AGENT" --hello --json "$req")
expect_in "prepare writes the job files" "$out" "\"dir\":\"$T/jobs/7\""
expect_eq "the job file's contents" "$(cat "$T/jobs/7/hostfile.json")" '["10.0.0.1:5000"]'
expect_eq "the job folder belongs to the user, 0700" "$(stat -c '%u %a' "$T/jobs/7")" "$USER_UID 700"
expect_eq "the job file belongs to the user, 0644" "$(stat -c '%u %a' "$T/jobs/7/hostfile.json")" "$USER_UID 644"
req='{"type":"prepare","grant":"'$(grant)'","files":[{"name":"../x","mode":420,"data":""}]}'
expect_in "a job file outside the folder is refused" "$("$POKE" "$AGENT" --hello --json "$req")" "name no folder"
out=$(cd "$W" && as_user "$POKE" "$AGENT" --hello --json '{"type":"cleanup","job":7}')
expect_in "a user may not clean up a job" "$out" "only root on the bridge host may clean up"
expect_in "root cleans up the job" "$("$POKE" "$AGENT" --hello --json '{"type":"cleanup","job":7}')" '"type":"cleaned"'
[ -e "$T/jobs/7" ] && bad "the job folder is still there after cleanup" || ok "cleanup removed the job folder"
printf '10.0.0.1 10.0.0.2\n' > "$T/ring.txt"
out=$(TBMESH_GRANT=$(grant) "$MACNODE" prepare --agent "$AGENT" --mode 0600 --file hosts.txt="$T/ring.txt")
expect_eq "macnode prepare prints the job folder" "$out" "$T/jobs/7"
expect_eq "macnode prepare wrote the file with its mode" "$(stat -c '%u %a' "$T/jobs/7/hosts.txt") $(cat "$T/jobs/7/hosts.txt")" "$USER_UID 600 10.0.0.1 10.0.0.2"
out=$("$MACNODE" prepare --agent "$AGENT" --file x="$T/ring.txt" 2>&1); rc=$?
expect_eq "macnode prepare without a grant fails" "$rc" 1
expect_in "... saying so" "$out" "no job grant"
(cd "$W" && TBMESH_GRANT=$(grant) exec setpriv --reuid=$USER_UID --regid=$USER_UID --clear-groups "$MACNODE" \
    exec --agent "$AGENT" -- sh -c 'echo $$ > pid2; exec sleep 300' >/dev/null 2>&1) &
for _ in $(seq 50); do [ -s "$W/pid2" ] && break; sleep 0.1; done
expect_eq "macnode cleanup ends the job's tasks" "$("$MACNODE" cleanup --agent "$AGENT" --job 7)" "job 7: 1 tasks ended"
kill -0 "$(cat "$W/pid2")" 2>/dev/null && bad "the job's task survived cleanup" || ok "the job's task is gone"
[ -e "$T/jobs/7" ] && bad "cleanup left the job folder" || ok "macnode cleanup removed the job folder"
wait $! 2>/dev/null

# --- a restarted agent kills what its dead servers left ------------------------------------------------
rm -f "$W/pid"
(cd "$W" && TBMESH_GRANT=$(grant) exec setpriv --reuid=$USER_UID --regid=$USER_UID --clear-groups "$MACNODE" \
    exec --agent "$AGENT" -- sh -c 'echo $$ > pid; exec sleep 300' >/dev/null) &
fpid=$!
for _ in $(seq 50); do [ -s "$W/pid" ] && break; sleep 0.1; done
tpid=$(cat "$W/pid")
server=$(ps -o ppid= -p "$tpid" | tr -d ' ')
kill -KILL "$(cat "$T/agent.pid")" "$server"
wait $fpid 2>/dev/null
kill -0 "$tpid" 2>/dev/null && ok "the task outlives its dead agent" || bad "the task died with its agent"
rm -f "$T/agent.pid"
start_agent
for _ in $(seq 40); do kill -0 "$tpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$tpid" 2>/dev/null; then bad "the restarted agent left task $tpid running"; kill -KILL "$tpid"; else ok "the restarted agent killed the leftover task"; fi
expect_log "the sweep" "its server is gone"

if [ $failures -gt 0 ]; then
    echo "$failures checks failed; the agent log:"; cat "$LOG"
    exit 1
fi
echo "all agent checks passed"
