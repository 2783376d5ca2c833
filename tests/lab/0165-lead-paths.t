#!/usr/bin/env bash
# 0165-lead-paths.t: what a lab lead does, and what each must show. A cable is cut and mended, and tbmesh accept
# runs at once: the Macs that are coming back are waited for, not reported unavailable. An agent killed with
# SIGKILL is back through its supervisor, running work goes on, and nothing of the old agent stays once its
# work is done. The report of the last few minutes draws minute buckets with real values on its axis, and an
# efficiency above 100% says why beside it.
. "$(dirname "$0")/lib.sh"
no_jobs
TBMESH=$T_INST/bin/tbmesh
OUT=$LAB/lead-test
rm -rf "$OUT"; mkdir -p "$OUT"
accept_setup "$OUT"
jq_() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }
newest() { ls -t "$1"/"$2"-*."$3" 2>/dev/null | head -n1; }

# ---- accept at once after a mend ----
CUT=mac03:en4
drained() { scontrol show node "$1" | grep -q 'State=[A-Z+]*DRAIN'; }
t_ok "cut the cable at $CUT" "$LABCMD" cut "$CUT"
t_ok "... the link watcher drains its Macs" wait_until 30 "mac03 and mac04 drained" eval "drained mac03 && drained mac04"
t_ok "mend it" "$LABCMD" mend "$CUT"
"$TBMESH" accept studio-a --plan "$OUT/lab.plan" --conf "$OUT/tbmesh.conf" --out "$OUT" --timeout 120 \
    --macnode "$T_MACNODE" > "$OUT/accept.md" 2> "$OUT/accept.err"; rc=$?
json=$(newest "$OUT" studio-a json)
t_ok "the record was written" test -s "$json"
t_is "no Mac is reported unavailable right after the mend" "" \
    "$(jq_ "$json" '"|".join(f["where"] + ": " + f["what"] for f in r["steps"][3]["findings"] if f["code"] == "mac-unavailable")')"
t_is "studio-a, accepted at once after the mend: plannable (exit 0)" "0" "$rc"
came=$(jq_ "$json" '"|".join(f["where"] + ": " + f["what"] for f in r["steps"][3]["findings"] if f["code"] == "mac-came-back")')
echo "# Macs waited for: ${came:-none (Slurm had them back before step 4)}"
[ -z "$came" ] || t_match "... a Mac waited for is said so, with why and how long" \
    "coming back \(.*\) and was [A-Z+]+ after [0-9]+ s of waiting" "$came"
# Not yet up, made so on purpose: mac04 drained by slurm-tbmesh for a cable that is well again (its health check
# passes); the next health check resumes it while the run looks at it. It is waited for, and said so.
scontrol update NodeName=mac04 State=DRAIN Reason="tbmesh: cable-missing at mac04:en4 <-> mac03:en4: mended since"
# The health check runs once accept asks whether mac04 is coming back (its first `macnode check` of mac04,
# seen through a wrapper of macnode), not after a fixed time: then the Mac is sure to be waited for.
cat > "$OUT/macnode-seen" <<WRAP
#!/bin/sh
case " \$* " in *" check "*" --node mac04 "*) touch "$OUT/asked-mac04" ;; esac
exec "$T_MACNODE" "\$@"
WRAP
chmod 755 "$OUT/macnode-seen"; rm -f "$OUT/asked-mac04"
( end=$((SECONDS + 120))
  until [ -e "$OUT/asked-mac04" ] || [ $SECONDS -ge $end ]; do sleep 0.1; done
  "$LABCMD" health mac04 > /dev/null 2>&1 ) &
healer=$!
"$TBMESH" accept studio-a --plan "$OUT/lab.plan" --conf "$OUT/tbmesh.conf" --out "$OUT" --timeout 120 \
    --macnode "$OUT/macnode-seen" > /dev/null 2>&1; rc=$?
wait "$healer"
json=$(newest "$OUT" studio-a json)
t_is "a Mac coming back is not reported unavailable" "" \
    "$(jq_ "$json" '"|".join(f["where"] + ": " + f["what"] for f in r["steps"][3]["findings"] if f["code"] == "mac-unavailable")')"
t_match "... it was waited for, and the record says why and how long" \
    "^mac04: Slurm had the Mac [A-Z+]*DRAIN[A-Z+]*: tbmesh: cable-missing at mac04:en4 <-> mac03:en4: mended since; it was coming back \(slurm-tbmesh had drained it and its health check passed again\) and was IDLE after [0-9]+ s of waiting$" \
    "$(jq_ "$json" '"\n".join(f["where"] + ": " + f["what"] for f in r["steps"][3]["findings"] if f["code"] == "mac-came-back")')"
t_is "... and studio-a is plannable (exit 0)" "0" "$rc"
# A Mac an admin drained is down: not waited for, and the record says so.
scontrol update NodeName=mac04 State=DRAIN Reason="lead test: bench work"
"$TBMESH" accept studio-a --plan "$OUT/lab.plan" --conf "$OUT/tbmesh.conf" --out "$OUT" --timeout 5 \
    --macnode "$T_MACNODE" > /dev/null 2>&1
json=$(newest "$OUT" studio-a json)
t_match "an admin's drain is down, not coming back" "^mac04: Slurm has the Mac [A-Z+]*DRAIN[A-Z+]*: lead test: bench work \(down: not coming back by itself\)$" \
    "$(jq_ "$json" '"\n".join(f["where"] + ": " + f["what"] for f in r["steps"][3]["findings"] if f["code"] == "mac-unavailable")')"
scontrol update NodeName=mac04 State=RESUME
t_ok "mac04 usable again" wait_until 20 "mac04 usable" node_usable mac04
out=$("$TBMESH" accept studio-a --wait-back soon 2>&1); rc=$?
t_is "a bad --wait-back is refused (exit 2)" "2 tbmesh accept: --wait-back soon is not a number of seconds from 0 to 3600" \
    "$rc $out"

# ---- an agent killed with SIGKILL ----
wlog=$LAB/log/watch.log
agent=$(cat "$LAB/run/macnoded-mac03.pid" 2>/dev/null)
t_ok "mac03's agent runs" kill -0 "${agent:-0}"
rcf=$OUT/task.rc
(as tbm-alice srun -p mac -w mac03 sleep 40 > /dev/null 2>&1; echo $? > "$rcf") &
t_ok "a task runs on mac03" wait_until 30 "sleep 40 on mac03" on_macs 1 "(^|/)sleep 40" mac03
mark=$(wc -l < "$wlog")
kill -KILL "$agent"
new_agent() { p=$(cat "$LAB/run/macnoded-mac03.pid" 2>/dev/null); [ -n "$p" ] && [ "$p" != "$agent" ] && kill -0 "$p"; }
t_ok "the supervisor starts the agent again" wait_until 20 "a new agent on mac03" new_agent
t_ok "... which answers" wait_until 20 "mac03's agent answers" "$T_MACNODE" probe --agent 10.77.0.13 --node mac03 --munge-socket "$LAB/run/munge/munge.socket.2"
t_ok "the link watcher follows the new agent" wait_until 20 "watching mac03 again" \
    eval "tail -n +$((mark + 1)) '$wlog' | grep -q ' mac03: watching again'"
agent2=$(cat "$LAB/run/macnoded-mac03.pid")
# old_agent_procs: macnoded processes in mac03 that are neither the new agent nor its children and
# grandchildren (its servers; its metrics process and that one's sampler): the old agent's, reparented
old_agent_procs() {
    local p pp
    for p in $(mac_procs "^[^ ]*/macnoded " mac03 | cut -d: -f2); do
        [ "$p" = "$agent2" ] && continue
        pp=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')
        [ "$pp" = "$agent2" ] && continue
        [ -n "$pp" ] && [ "$(ps -o ppid= -p "$pp" 2>/dev/null | tr -d ' ')" = "$agent2" ] && continue
        ps -o pid=,ppid=,args= -p "$p" 2>/dev/null
    done
}
t_ok "the running task goes on" on_macs 1 "(^|/)sleep 40" mac03
t_ok "of the old agent, only the task's server stays while the task runs (the watch's server ended)" \
    wait_until 10 "one old agent process on mac03" eval '[ "$(old_agent_procs | grep -c .)" = 1 ]'
echo "# old agent's processes on mac03 now: $(old_agent_procs | paste -sd';')"
t_ok "the task ends in its own time" wait_until 60 "srun on mac03 ends" test -s "$rcf"
t_is "... with its exit status (0)" "0" "$(cat "$rcf" 2>/dev/null)"
t_ok "then nothing of the old agent is left on mac03" wait_until 10 "no old agent processes" \
    eval '[ -z "$(old_agent_procs)" ]'
left=$(old_agent_procs)
[ -z "$left" ] || echo "# left: $left"

# ---- the report of the last minutes ----
# A Linux job of one CPU that keeps many CPUs busy (the lab does not hold jobs to their CPUs: task/none). On a
# busy machine its spinners get less than a share fixed in advance: they spin until they have used 4 s of CPU
# time more than the job has lasted (at most 150 s), so that its CPU time is above its one CPU's whatever the
# load. Each spinner has a session of its own: with the kernel's autogroups, one session's processes share
# one session's part of the CPUs, which a loaded machine gives to the other sessions' builds. The job's shell
# reaps them, so Slurm counts their CPU time.
BUSY=$LAB/work/tbm-bob/busy.sh
cat > "$BUSY" <<'EOF'
#!/bin/bash
t0=$(date +%s%N) hz=$(getconf CLK_TCK) pids=()
for i in $(seq 16); do setsid sh -c 'while :; do :; done' & pids+=($!); done
while sleep 0.5; do
    ticks=0
    for p in "${pids[@]}"; do read -r -a f < "/proc/$p/stat" && ticks=$((ticks + f[13] + f[14])); done
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    [ $((ticks * 1000 / hz)) -ge $((ms + 4000)) ] || [ "$ms" -ge 150000 ] && break
done
kill "${pids[@]}"; wait
echo "spun $((ticks * 1000 / hz)) ms of CPU time in $ms ms"
EOF
chmod 755 "$BUSY"; rm -f "${BUSY%.sh}.out"
S=$(date +%s)
jb=$(as tbm-bob sbatch --parsable -p linux -N1 -n1 -o "${BUSY%.sh}.out" "$BUSY")
t_is "the busy job completed" COMPLETED "$(wait_job "$jb" 200)"
echo "# the busy job: $(cat "${BUSY%.sh}.out" 2>/dev/null)"
E=$(( $(date +%s) + 1 ))
iso() { date -d "@$1" +%Y-%m-%dT%H:%M:%S; }
"$TBMESH" report --last 5m --html "$OUT/last.html" > /dev/null 2>&1
svg=$(sed -n '/<svg id="chart-timeline"/,/<\/svg>/p' "$OUT/last.html")
t_match "the last 5 minutes: a bucket per minute" "<title>Node-hours per minute, per Mac group and Linux</title>" "$svg"
t_match "... the axis carries real values (a tick above 0)" 'class="tick"[^>]*>0\.[0-9]*[1-9]' "$svg"
t_fail "... and is no flat line of 0 at both ends" grep -q "no use in this period" <<<"$svg"
# efficiency above 100%: Slurm's TotalCPU of the job against its one CPU
EFF=$("$TBMESH" report --since "$(iso "$S")" --until "$(iso "$E")" --user tbm-bob --efficiency --csv 2>&1)
row=$(grep '^efficiency-user,tbm-bob,' <<<"$EFF")
echo "# $row"
pct=$(cut -d, -f5 <<<"$row")
t_ok "the job used more CPU time than its one CPU could give ($pct%)" awk -v p="$pct" 'BEGIN { exit !(p > 100) }'
t_match "... and the row says why beside it" \
    "above 100% \(linux_eff_pct [0-9.]+%\): used above allocated is not an efficiency; Slurm counted more CPU time than the jobs' CPUs could give while they ran: their processes were not held to their CPUs" \
    "$row"
table=$("$TBMESH" report --since "$(iso "$S")" --until "$(iso "$E")" --user tbm-bob --efficiency 2>&1)
t_match "... in the table too" "tbm-bob .* above 100% \(linux_eff_pct" "$table"
rm -f "$rcf"
t_done
