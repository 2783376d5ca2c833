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
t_done
