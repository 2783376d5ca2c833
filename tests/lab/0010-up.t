#!/usr/bin/env bash
# 0010-up.t: the lab comes up from nothing, a second 'up' is harmless, status says ready.
. "$(dirname "$0")/lib.sh"

"$LABCMD" down --purge > /dev/null 2>&1
t0=$(date +%s.%N)
t_ok "lab up from nothing" "$LABCMD" up
t1=$(date +%s.%N)
echo "# lab up took $(printf '%.1f' "$(echo "$t1 - $t0" | bc 2>/dev/null || awk "BEGIN{print $t1-$t0}")") s"
out=$("$LABCMD" up 2>&1)
t_match "second up is harmless and says so" "already up" "$out"
t_ok "status: every daemon running, every node ready" "$LABCMD" status
t_ok "controller answers" scontrol ping
t_ok "slurmdbd answers" sacctmgr -n show cluster
# up's options: a bad one is refused before anything is touched, saying what to give
bad_up() { out=$("$LABCMD" up "$@" 2>&1); rc=$?; }
bad_up --macs 99
t_is "up --macs 99 is refused" "1|tbmesh-lab: --macs 99: give a number of Macs from 2 to 64" "$rc|$out"
bad_up --macs 8 --bridges 9
t_match "up --bridges 9 is refused" "give a number of bridge hosts from 0 to 8" "$out"
bad_up --bridges 2
t_match "up --bridges without --macs is refused" "--bridges goes with --macs N" "$out"
bad_up --colour red
t_match "an unknown option of up is refused" "up: unknown option '--colour'; up takes --macs N \[--bridges B\] or --spec FILE" "$out"
t_ok "... and the lab is still up" "$LABCMD" status
out=$("$LABCMD" kill-bridge brg1 2>&1); rc=$?
t_match "kill-bridge of a bridge host the lab does not have is refused, saying what it takes" \
    "^tbmesh-lab: usage: tbmesh-lab kill-bridge HOST \(a bridge host of the spec's Bridge=" "$out"
t_done
