#!/usr/bin/env bash
# 0170-metrics.t: the lab's Prometheus (Debian's prometheus, started by tbmesh-lab up on 127.0.0.1:19090)
# scrapes every Mac's agent and the bridge host's `tbmesh metrics`; asked through its HTTP API: every target is
# up, the project's rules are loaded, the Macs' GPU and power (from their recorded captures) and cable ends are
# there, a running job's tasks appear with its job id on each of its Macs, each cable end's counters grow by
# what a bench says it sent and received through it (within a stated tolerance), a cable cut with `tbmesh-lab cut` is down at the next scrape (and back once mended),
# the drained Macs show with their reason, a Mac job whose record went missing is counted until `tbmesh repro
# sync` makes it, and every query of the Grafana dashboard runs without error.
. "$(dirname "$0")/lib.sh"
no_jobs
PROM=http://127.0.0.1:19090
command -v prometheus > /dev/null || { echo "# SKIP: prometheus is not installed here (scripts/install-deps.sh)"; t_done; }
SCRAPE=2   # the lab's scrape interval

# q EXPR: the query's result (JSON's data.result), or "error: ..." when Prometheus refused it
q() {
    local out
    out=$(curl -sS -m 10 -G --data-urlencode "query=$1" "$PROM/api/v1/query" 2>&1) || { echo "error: $out"; return; }
    if [ "$(jq -r .status <<<"$out" 2>/dev/null)" = success ]; then jq -c .data.result <<<"$out"; else echo "error: $out"; fi
}
# qv EXPR: the value of a query with one result ("" when none)
qv() { q "$1" | jq -r 'if type == "array" and length > 0 then .[0].value[1] else "" end' 2>/dev/null; }
# qn EXPR: how many series the query gives
qn() { q "$1" | jq -r 'if type == "array" then length else -1 end' 2>/dev/null; }
qv_is() { [ "$(qv "$1")" = "$2" ]; }   # for wait_until, which runs its command again each time
qn_is() { [ "$(qn "$1")" = "$2" ]; }
until_qv() {  # until_qv SECONDS EXPR VALUE: until the query's value is VALUE; prints how long it took
    local end=$(( $(date +%s%N) / 1000000 + $1 * 1000 )) t0=$(( $(date +%s%N) / 1000000 ))
    until [ "$(qv "$2")" = "$3" ]; do
        [ $(( $(date +%s%N) / 1000000 )) -lt "$end" ] || return 1
        sleep 0.1
    done
    echo $(( $(date +%s%N) / 1000000 - t0 ))
}

t_match "tbmesh-lab status prints the Prometheus' address" "prometheus +running: http://127\.0\.0\.1:19090" \
    "$("$LABCMD" status 2>&1)"
t_ok "every Mac's agent is scraped (within 30 s)" wait_until 30 "8 Mac targets up" \
    qv_is 'count(up{job="tbmesh-macs"} == 1)' 8
t_ok "the bridge host's tbmesh metrics is scraped" wait_until 15 "tbmesh-slurm up" \
    qv_is 'up{job="tbmesh-slurm"}' 1
t_is "Slurm answers it" "1" "$(qv 'tbmesh_slurm_up')"
t_match "the project's rules are loaded (TbmeshCableDown, TbmeshAgentDown ...)" "TbmeshCableDown.*TbmeshAgentDown|TbmeshAgentDown.*TbmeshCableDown" \
    "$(curl -sS -m 10 "$PROM/api/v1/rules" | jq -r '.data.groups[].rules[].name' | paste -sd' ')"
t_is "a simulated Mac's GPU, from its recorded ioreg" "1" "$(qv 'count(tbmesh_gpu_busy_ratio{node="mac03"} >= 0)')"
t_is "... its package power, from its recorded powermetrics" "1" \
    "$(qv 'count(tbmesh_power_watts{node="mac03",part="package"} > 0)')"
t_is "studio-a's cable ends: 6 cables, 12 ends, each named with its far end" "12" \
    "$(qn 'tbmesh_link_up{group="studio-a",peer=~"mac0[1-4]"}')"
t_is "mini-b's: 4 cables, 8 ends" "8" "$(qn 'tbmesh_link_up{group="mini-b",peer=~"mac0[5-8]"}')"
t_is "the groups' Macs as Slurm sees them (up)" "4 4" \
    "$(qv 'tbmesh_group_macs{group="studio-a",state="up"}') $(qv 'tbmesh_group_macs{group="mini-b",state="up"}')"

# a running job's tasks, with its job id, on each of its Macs
id=$(as tbm-alice sbatch --parsable -o /dev/null --gres=tbmesh:studio-a:4 --wrap 'srun sleep 60')
t_ok "a studio-a job runs" wait_until 30 "job $id running" job_running "$id"
t_ok "its tasks appear with its job id on its 4 Macs (within 15 s)" wait_until 15 "4 Macs with job $id" \
    qv_is "count(tbmesh_tasks_running{jobid=\"$id\",user=\"tbm-alice\"} == 1)" 4
t_ok "... and the group has one job running" wait_until 15 "studio-a 1 job" \
    qv_is 'tbmesh_group_jobs_running{group="studio-a"}' 1
scancel "$id"
t_ok "... and are gone once it ended" wait_until 20 "no task of $id" \
    qn_is "tbmesh_tasks_running{jobid=\"$id\"}" 0

# bytes a bench sends over the cables show in their counters: each cable end's, against what the bench says
# its rank sent and received through that interface (--traffic)
# ends SERIES: "node port value" per studio-a cable end
ends() { q "$1{group=\"studio-a\"}" | jq -r '.[] | "\(.metric.node) \(.metric.port) \(.value[1])"' | sort; }
tx0=$(ends tbmesh_link_transmit_bytes_total) rx0=$(ends tbmesh_link_receive_bytes_total)
out=$(as tbm-alice salloc -Q --gres=tbmesh:studio-a:4 --mlx-backend=jaccl \
    srun "$T_MACNODE" bench -b 16M -e 16M -n 4 -w 1 -S 1 -F csv --traffic 2>&1)
t_match "a 16 MiB all-reduce bench on studio-a" "^allreduce," "$(grep -E '^allreduce,' <<<"$out")"
end=$(date +%s)
traffic=$(grep -E '^traffic,[0-9]' <<<"$out")
t_is "... says what each of its 4 ranks sent to each of the 3 others, and through which interface" "12" \
    "$(grep -c . <<<"$traffic")"
# until Prometheus holds a sample of each studio-a Mac taken after the bench ended
sampled_after() { qv_is "min(tbmesh_sample_time_seconds{node=~\"mac0[1-4]\"}) > bool $1" 1; }
t_ok "studio-a's agents sampled after the bench and Prometheus scraped them" wait_until 30 "samples after the bench" \
    sampled_after "$end"
tx1=$(ends tbmesh_link_transmit_bytes_total) rx1=$(ends tbmesh_link_receive_bytes_total)
# Each end's counters grew by at least what the bench moved through it, and by at most 10% and 256 KiB more:
# Ethernet and TCP/IP headers, the acknowledgements of what came the other way, the connections' set-up
cmp_ends() {   # cmp_ends BEFORE AFTER FIELD (7 sent, 8 received): the ends out of tolerance, with figures
    awk -v field="$3" -v before="$1" -v after="$2" -v traffic="$traffic" '
        BEGIN { n = split(before, l, "\n"); for (i = 1; i <= n; i++) { split(l[i], f, " "); b[f[1] ":" f[2]] = f[3] }
                n = split(after, l, "\n"); for (i = 1; i <= n; i++) { split(l[i], f, " "); a[f[1] ":" f[2]] = f[3] }
                n = split(traffic, l, "\n")
                for (i = 1; i <= n; i++) { split(l[i], f, ","); want[f[3] ":" f[6]] += f[field] }
                for (k in want) {
                    if (!(k in a) || !(k in b)) { printf "%s: no counter; ", k; continue }
                    got = a[k] - b[k]; w = want[k]
                    printf "%s %.0f/%.0f=%.3f", k, got, w, w ? got / w : 0
                    if (got < w || got > w * 1.10 + 262144) printf " OUT"
                    printf "; "
                } }'
}
sent=$(cmp_ends "$tx0" "$tx1" 7) got=$(cmp_ends "$rx0" "$rx1" 8)
# A Mac's series in Prometheus can lag its sample time by a scrape on a loaded machine (seen once: one Mac's
# four ends at a quarter of the bench's bytes while both their far ends had it all): read again, at most 30 s,
# while an end is out of tolerance.
for _ in $(seq 15); do
    ! grep -q "OUT\|no counter" <<<"$sent$got" && break
    sleep 2
    tx1=$(ends tbmesh_link_transmit_bytes_total) rx1=$(ends tbmesh_link_receive_bytes_total)
    sent=$(cmp_ends "$tx0" "$tx1" 7) got=$(cmp_ends "$rx0" "$rx1" 8)
done
echo "# transmit counters / bytes the bench sent: $sent"
echo "# receive counters / bytes the bench received: $got"
t_ok "each of studio-a's 12 cable ends sent what its rank sent through it, within +10% and 256 KiB" \
    sh -c '[ "$(printf %s "$1" | grep -o "=[0-9.]*" | wc -l)" = 12 ] && ! printf %s "$1" | grep -q "OUT\|no counter"' _ "$sent"
t_ok "... and received what its rank received, within the same" \
    sh -c '[ "$(printf %s "$1" | grep -o "=[0-9.]*" | wc -l)" = 12 ] && ! printf %s "$1" | grep -q "OUT\|no counter"' _ "$got"

# a cable cut is down at the next scrape; mended, up again
t_is "mac01:en2 is up" "1" "$(qv 'tbmesh_link_up{group="studio-a",node="mac01",port="en2"}')"
"$LABCMD" cut mac01:en2 > /dev/null 2>&1
ms=$(until_qv $((2 * SCRAPE + 2)) 'tbmesh_link_up{group="studio-a",node="mac01",port="en2"}' 0); rc=$?
_t_result "$rc" "cut, mac01:en2 shows down within one scrape and a bit (${ms:-?} ms; scrapes every ${SCRAPE} s)"
t_ok "... and its far end, mac02:en2, too (its own agent, sampled at its own news)" wait_until $((2 * SCRAPE + 2)) "mac02:en2 down" \
    qv_is 'tbmesh_link_up{group="studio-a",node="mac02",port="en2"}' 0
t_ok "the watcher drains mac01 and Prometheus shows it drained with its reason" wait_until 30 "mac01 drained in Prometheus" \
    qn_is 'tbmesh_mac_drain_info{node="mac01",reason=~"tbmesh: cable-missing.*"}' 1
"$LABCMD" mend mac01:en2 > /dev/null 2>&1
t_ok "mended, it is up again" wait_until 10 "mac01:en2 up" qv_is 'tbmesh_link_up{group="studio-a",node="mac01",port="en2"}' 1
t_ok "... and mac01 and mac02 are resumed" wait_until 30 "resumed" sh -c '! scontrol show node mac01,mac02 | grep -q DRAIN'
t_ok "... which Prometheus shows" wait_until 20 "no drained Mac" qn_is 'tbmesh_mac_drained == 1' 0

# a Mac job whose record went missing is counted by tbmesh metrics (its log names it), the alert rule sees it,
# and `tbmesh repro sync` mends it
STORE=$LAB/records/tbmlab TBMESH=$T_INST/bin/tbmesh
missing0=$(qv 'tbmesh_job_records_missing')
t_match "tbmesh metrics counts the Mac jobs without a record (sacct and the store)" '^[0-9]+$' "$missing0"
now=$(date +%s) victim=""
while IFS='|' read -r id state end nodes comment; do
    [[ $comment == TBM1:* && $nodes != "None assigned" && $end != Unknown ]] || continue
    [ $(( now - $(date -d "$end" +%s) )) -ge 15 ] || continue   # the lab's exporter looks 5 s after the end
    grep -q '"phase": "end"' "$STORE/$id.json" 2>/dev/null && victim=$id
done < <(sacct -a -X -n -P -o JobIDRaw,State,End,NodeList,AdminComment -S now-86400 -E now)
t_match "a Mac job that ended a while ago, its record complete" '^[0-9]+$' "$victim"
saved=$(mktemp -d)
cp -a "$STORE/$victim.json" "$STORE/$victim.seal" "$saved/"
rm -f "$STORE/$victim.json"
t_ok "its record gone, tbmesh_job_records_missing counts it (within 20 s)" wait_until 20 "$((missing0 + 1)) missing" \
    qv_is 'tbmesh_job_records_missing' $((missing0 + 1))
t_match "... tbmesh metrics names it in its log" "ended without a complete record in $STORE \\(jobs? ([0-9]+,)*$victim[,)].*tbmesh repro sync" \
    "$(grep 'without a complete record' "$LAB/log/exporter.log" | tail -1)"
t_ok "... and the alert rule TbmeshJobRecordMissing is pending or firing" wait_until 10 "the alert" \
    qn_is 'ALERTS{alertname="TbmeshJobRecordMissing"}' 1
out=$("$TBMESH" repro sync -j "$victim" 2>&1)
t_match "tbmesh repro sync makes its record again" "job $victim: .*record made" "$out"
t_ok "... and the count goes back (within 20 s)" wait_until 20 "$missing0 missing" \
    qv_is 'tbmesh_job_records_missing' "$missing0"
cp -a "$saved/$victim.json" "$saved/$victim.seal" "$STORE/"   # the job's own record, as it was
rm -rf "$saved"

# the dashboard's every query runs against this Prometheus
bad=""
while IFS= read -r expr; do
    expr=${expr//\$group/studio-a}; expr=${expr//\$node/mac01}; expr=${expr//\$__rate_interval/1m}
    expr=${expr//\$__interval/15s}; expr=${expr//\$__range/1h}
    r=$(q "$expr")
    case "$r" in error:*) bad+="$expr => $r"$'\n' ;; esac
done < <(jq -r '.. | objects | select(has("expr")) | .expr' "$T_SRC/etc/grafana/tbmesh.json")
t_is "every query of the Grafana dashboard runs without error" "" "$bad"
t_done
