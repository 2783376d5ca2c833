#!/usr/bin/env bash
# 0065-link-watch.t: a pulled cable is noticed when it happens. The link watcher (macnode watch, started by
# tbmesh-lab up under the lab's supervisor) keeps a watch open to every Mac's agent; when the agents of mac01
# and mac02 see their en2 link go down, it runs their health checks at once and drains both with the cable
# as the reason, without anyone running the health check (HealthCheckInterval is minutes); mac03 is left
# alone. Mending the cable resumes both, again through the watcher alone.
. "$(dirname "$0")/lib.sh"
no_jobs

reason_of() { scontrol show node "$1" | grep -o 'Reason=.*' | sed 's/ \[.*//'; }
drained() { scontrol show node "$1" | grep -q 'State=[A-Z+]*DRAIN'; }
# until_ok SECONDS CMD...: CMD succeeds within SECONDS (polled; the figure is printed, never asserted).
until_ok() {
    local end=$((SECONDS + $1)) t0=$SECONDS; shift
    until "$@"; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.2
    done
    echo "# took about $((SECONDS - t0)) s"
}
both_drained() { drained mac01 && drained mac02; }
none_drained() { ! drained mac01 && ! drained mac02; }
wlog=$LAB/log/watch.log

sup=$(cat "$LAB/run/watch-keepalive.pid" 2>/dev/null)
t_ok "the watcher's supervisor runs" kill -0 "${sup:-no-pid-file}"
t_is "the watcher watches every Mac's links" "mac01 mac02 mac03 mac04 mac05 mac06 mac07 mac08" \
    "$(grep -oE ' mac0[1-8]: watching( again)?: the agent follows' "$wlog" | awk '{print $1}' | tr -d : | sort -u | paste -sd' ')"
t_match "mac01's agent follows its Thunderbolt interfaces (en2 among them, not en0)" \
    " mac01: watching( again)?: the agent follows( en[1-9][0-9]*)* en2( en[1-9][0-9]*)*$" "$(cat "$wlog")"
t_match "the agent says so in its log" "uid 0: watching the links of .*en2" "$(cat "$LAB/log/macnoded-mac01.log")"
t_fail "mac01 is not drained before" drained mac01
t_fail "mac02 is not drained before" drained mac02

# Pull mac01:en2 <-> mac02:en2, and run no health check.
mark=$(wc -l < "$wlog")
t_ok "cut the cable" "$LABCMD" cut mac01:en2
out=$(until_ok 20 both_drained); rc=$?
_t_result "$rc" "within 20 s both Macs of the cable are drained, by the watcher alone" "$out"
echo "${out:-# not drained}"
t_match "mac01: the cable is the reason" \
    "^Reason=tbmesh: cable-missing at mac01:en2 <-> mac02:en2: nothing is at the other end of Thunderbolt" "$(reason_of mac01)"
t_match "mac02 too, from its end" "^Reason=tbmesh: cable-missing at mac02:en2 <-> mac01:en2" "$(reason_of mac02)"
t_fail "mac03 is not drained" drained mac03
new=$(tail -n +"$((mark + 1))" "$wlog")
t_match "the watcher heard mac01's en2 go down" "mac01: link en2 down \(change [0-9]+\)" "$new"
t_match "... and mac02's" "mac02: link en2 down \(change [0-9]+\)" "$new"
t_match "it drained mac01 (its health check's words in its log)" "^mac01: drained$" "$new"
t_match "... and mac02" "^mac02: drained$" "$new"
t_fail "it did not check mac03" grep -q "mac03: " <<<"$new"

# Mend it: the links come up, the watcher resumes both (mend only waits for it while it runs).
mark=$(wc -l < "$wlog")
t_ok "mend the cable" "$LABCMD" mend mac01:en2
out=$(until_ok 20 none_drained); rc=$?
_t_result "$rc" "both Macs are resumed" "$out"
new=$(tail -n +"$((mark + 1))" "$wlog")
t_match "the watcher heard en2 come up" "mac01: link en2 up \(change [0-9]+\)" "$new"
t_match "... and resumed mac01" "^mac01: resumed \(slurm-tbmesh had drained it\)$" "$new"
t_match "... and mac02" "^mac02: resumed \(slurm-tbmesh had drained it\)$" "$new"
t_is "both idle (in every partition)" "idle" "$(sinfo -h -n mac01,mac02 -N -o '%T' | tr -d '*' | sort -u | paste -sd' ')"

# The watcher lives under the supervisor: killed, it is started again and watches again.
old=$(pgrep -P "${sup:-1}" -f 'macnode watch' | head -n1)
t_ok "the watcher runs under its supervisor" test -n "$old"
olds=$(pgrep -P "${old:-1}" | paste -sd' ')
t_is "one Mac watcher process per Mac under it" "8" "$(wc -w <<<"$olds")"
mark=$(wc -l < "$wlog")
kill -KILL "$old" 2>/dev/null
new_watching() { test "$(tail -n +"$((mark + 1))" "$wlog" | grep -cE ' mac0[1-8]: watching: the agent follows')" = 8; }
t_ok "killed, it is started again and watches every Mac again (within 30 s)" until_ok 30 new_watching
olds_gone() { local p; for p in $olds; do ! kill -0 "$p" 2>/dev/null || return 1; done; }
t_ok "its old Mac watchers end with it, none watching beside the new ones (within 15 s)" until_ok 15 olds_gone
t_done
