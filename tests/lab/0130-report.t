#!/usr/bin/env bash
# 0130-report.t: `tbmesh report` against the lab's slurmdbd. A scripted workload of known jobs (two users, two
# accounts, Mac and Linux jobs, a failure, a cancelled job, a drained Mac, one Mac job with a reproducibility
# record and one with records off) runs in a period of its own; the test works out the totals itself from what
# it submitted, from sacct/sacctmgr and from the record store, and the report's CSV and JSON must equal them.
# The HTML page is opened in headless Chromium: it renders, every chart is there, and the numbers in its tables
# are the CSV's. The page and its screenshot stay in $LAB/report/.
. "$(dirname "$0")/lib.sh"
TBMESH=$T_INST/bin/tbmesh   # as the lab installed it: the lab's users reach it wherever the tree is
# The lab's record store: its tbmesh.conf puts it in the lab's state (as 0140 checks). The lab numbers jobs
# from 1 again after a purge: records of an earlier lab's jobs with the same ids go.
STORE=$LAB/records/tbmlab
rm -rf "$STORE"
OUT=$LAB/report
mkdir -p "$OUT"
rm -f "$OUT"/*
export SLURM_TIME_FORMAT=%s
iso() { date -d "@$1" +%Y-%m-%dT%H:%M:%S; }
no_jobs
sleep 1
S=$(date +%s)
sleep 1

# ---- the workload ----
j1=$(as tbm-bob sbatch --parsable -p linux -N1 -o /dev/null --wrap 'timeout 2 sh -c "while :; do :; done"; exit 0')
j2=$(as tbm-bob sbatch --parsable -p linux -N1 -o /dev/null --wrap 'sleep 1; exit 3')
j3=$(as tbm-alice sbatch --parsable --gres=tbmesh:studio-a:4 --mlx-backend=jaccl -o /dev/null --wrap 'srun true; sleep 2')
j4=$(as tbm-alice sbatch --parsable --gres=tbmesh:mini-b:1 --repro=off -o /dev/null --wrap 'sleep 3')
# A purged lab numbers its jobs from 1 again: a record left under j4's id by an earlier lab is not j4's.
rm -f "$STORE/$j4.json" "$STORE/$j4.seal"
j5=$(as tbm-bob sbatch --parsable -p linux -N1 -o /dev/null --wrap 'sleep 120')
t_match "the workload was submitted" '^[0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+$' "$j1 $j2 $j3 $j4 $j5"
for _ in $(seq 60); do [ "$(squeue -h -j "$j5" -o %T)" = RUNNING ] && break; sleep 0.5; done
sleep 2
scancel "$j5"
# A Mac drained for a tbmesh reason for a few seconds (the health check's form of reason).
scontrol update NodeName=mac08 State=DRAIN Reason="tbmesh: cable-missing at mac07:en3 <-> mac08:en2: test" 2>&1
sleep 4
scontrol update NodeName=mac08 State=RESUME 2>&1
t_is "Linux job completed" COMPLETED "$(wait_job "$j1")"
t_is "failing Linux job failed" FAILED "$(wait_job "$j2")"
t_is "studio-a job completed" COMPLETED "$(wait_job "$j3")"
t_is "mini-b job completed" COMPLETED "$(wait_job "$j4")"
t_match "running Linux job cancelled" '^CANCELLED' "$(wait_job "$j5")"
for j in $j1 $j2 $j3 $j4 $j5; do acct "$j" state > /dev/null; done   # slurmdbd has every record
for _ in $(seq 60); do grep -Eq '"phase": "(end|sync)"' "$STORE/$j3.json" 2>/dev/null && break; sleep 0.5; done
t_match "the studio-a job left a complete record" '"phase": "(end|sync)"' "$(cat "$STORE/$j3.json" 2>&1)"
t_is "the mini-b job (--repro=off) left none" "absent" "$([ -e "$STORE/$j4.json" ] && echo present || echo absent)"
sleep 2
E=$(date +%s)

# ---- what the test expects, from sacct and sacctmgr ----
SA=$(sacct -a -X -n -P --noconvert -S "$(iso "$S")" -E "$(iso "$E")" \
     -o jobid,user,account,partition,state,nodelist,allocnodes,alloctres,submit,start,end,submitline)
t_is "sacct sees exactly the submitted jobs" "$(printf '%s\n' $j1 $j2 $j3 $j4 $j5 | sort)" "$(cut -d'|' -f1 <<<"$SA" | sort)"
EV=$(sacctmgr -n -P show event Event=node Start="$(iso "$S")" End="$(iso "$E")" format=nodename,start,end,reason)
t_match "sacctmgr recorded mac08's drain" '^mac08\|[0-9]+\|[0-9]+\|tbmesh: cable-missing' "$EV"
# Mac groups from tbmesh.conf: one "node group" line per Mac.
MACS=$(sed -n 's/^Group=\([^ ]*\) Nodes=\([^ ]*\).*/\1 \2/p' "$LAB/etc/tbmesh.conf" |
         while read -r g n; do scontrol show hostnames "$n" | sed "s/\$/ $g/"; done)

# expect DIM: the CSV rows of usage-DIM (without the section), sorted by name, computed with awk.
expect() {
    awk -F'|' -v dim="$1" -v S="$S" -v E="$E" -v groups="$MACS" '
    function pct(arr, n, p,    r, i, j, t) {   # nearest rank on arr[1..n]
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
        r = int((n * p + 99) / 100); if (r < 1) r = 1; return arr[r]
    }
    BEGIN { split(groups, gl, "\n"); for (i in gl) { split(gl[i], f, " "); grp[f[1]] = f[2] }
            ns = split("completed failed cancelled timeout node_fail out_of_memory pending running other", sn, " ") }
    {
        split($5, st, " "); s = tolower(st[1]); if (!(s in known)) { known["completed"]; known["failed"]; known["cancelled"]; known["timeout"]; known["node_fail"]; known["out_of_memory"]; known["pending"]; known["running"] }
        if (!(s in known)) s = "other"
        n = $7 + 0; cpu = 0; tb = 0
        if (match($8, /cpu=[0-9]+/)) cpu = substr($8, RSTART + 4, RLENGTH - 4) + 0
        if (match($8, /gres\/tbmesh=[0-9]+/)) tb = substr($8, RSTART + 12, RLENGTH - 12) + 0
        g = ""; cmd = "scontrol show hostnames \047" $6 "\047"
        if (n > 0) { while ((cmd | getline h) > 0) if (g == "" && h in grp) g = grp[h]; close(cmd) }
        kind = g != "" ? "mac" : "linux"; group = g != "" ? g : "linux"
        be = kind == "linux" ? "-" : (match($12, /--mlx-backend[= ][^ ]+/) ? substr($12, RSTART + 14, RLENGTH - 14) : "auto")
        key = dim == "kind" ? kind : dim == "group" ? group : dim == "account" ? $3 : dim == "user" ? $2 :
              dim == "partition" ? $4 : dim == "backend" ? be : s
        run = 0
        if (n > 0 && $10 ~ /^[0-9]+$/) { b = $10 < S ? S : $10; e = ($11 ~ /^[0-9]+$/ ? $11 : E); if (e > E) e = E; run = e > b ? e - b : 0
            wait[key, ++nw[key]] = $10 - $9
            sz = n <= 1 ? 1 : n == 2 ? 2 : n <= 4 ? 3 : n <= 8 ? 4 : 5; size[key, sz]++ }
        keys[key]; jobs[key]++; cnt[key, s]++
        node[key] += run * n; cpuh[key] += run * cpu; tbh[key] += run * tb
    }
    END {
        for (k in keys) {
            line = k "," jobs[k]
            for (i = 1; i <= ns; i++) line = line "," (cnt[k, sn[i]] + 0)
            line = line sprintf(",%.4f,%.4f,%.4f", node[k] / 3600, cpuh[k] / 3600, tbh[k] / 3600)
            if (nw[k]) { for (i = 1; i <= nw[k]; i++) a[i] = wait[k, i]; m = pct(a, nw[k], 50)
                         for (i = 1; i <= nw[k]; i++) a[i] = wait[k, i]; line = line "," m "," pct(a, nw[k], 90) }
            else line = line ",,"
            for (i = 1; i <= 5; i++) line = line "," (size[k, i] + 0)
            print line
        }
    }' <<<"$SA" | sort
}

# The utilisation rows: capacity and use of each Mac group over [S, E), from the events and sacct.
expect_use() {
    awk -F'|' -v S="$S" -v E="$E" -v groups="$MACS" -v sa="$SA" '
    BEGIN { split(groups, gl, "\n"); for (i in gl) { split(gl[i], f, " "); grp[f[1]] = f[2]; size[f[2]]++ }
            nj = split(sa, jl, "\n")
            for (i = 1; i <= nj; i++) { split(jl[i], c, "|"); if (c[7] + 0 == 0 || c[10] !~ /^[0-9]+$/) continue
                cmd = "scontrol show hostnames \047" c[6] "\047"; delete per
                while ((cmd | getline h) > 0) if (h in grp) per[grp[h]]++; close(cmd)
                b = c[10] < S ? S : c[10]; e = c[11] > E ? E : c[11]
                for (g in per) { alloc[g] += (e - b) * per[g]; if (per[g] == size[g]) whole[g]++ } } }
    $1 in grp { b = $2 < S ? S : $2; e = ($3 ~ /^[0-9]+$/ && $3 < E) ? $3 : E; if (e > b) down[grp[$1]] += e - b }
    END { for (g in size) { cap = size[g] * (E - S) - down[g]
            printf "%s,%d,%.4f,%.4f,%.4f,%s,%d\n", g, size[g], cap / 3600, down[g] / 3600, alloc[g] / 3600,
                   (cap > 0 ? sprintf("%.1f", 100 * alloc[g] / cap) : ""), whole[g] } }' <<<"$EV" | sort
}

# The failure rows: jobs by final state, node events by reason.
expect_fail() {
    { awk -F'|' -v S="$S" -v E="$E" '
        { split($5, st, " "); r = st[1] == "FAILED" ? "failed" : st[1] == "CANCELLED" ? "cancelled" : st[1] == "TIMEOUT" ? "timeout" :
              st[1] == "NODE_FAIL" ? "node failure" : st[1] == "OUT_OF_MEMORY" ? "out of memory" : ""
          if (r == "") next
          run = 0; if ($7 + 0 > 0 && $10 ~ /^[0-9]+$/) { b = $10 < S ? S : $10; e = $11 > E ? E : $11; run = (e - b) * $7 }
          n[r]++; h[r] += run }
        END { for (r in n) printf "job,%s,%d,%.4f\n", r, n[r], h[r] / 3600 }' <<<"$SA"
      awk -F'|' -v S="$S" -v E="$E" '
        { b = $2 < S ? S : $2; e = ($3 ~ /^[0-9]+$/ && $3 < E) ? $3 : E; if (e <= b) next
          if ($4 ~ /^tbmesh: /) { r = substr($4, 9); sub(/[ :,].*/, "", r); r = "drain: tbmesh " r } else r = "down or drain: other reason"
          n[r]++; h[r] += e - b }
        END { for (r in n) printf "node,%s,%d,%.4f\n", r, n[r], h[r] / 3600 }' <<<"$EV"; } | sort
}

# The coverage rows: per user, the Mac jobs, those with a record in the store, those whose record is complete
# (phase end or sync) and verifies (tbmesh repro verify: root's MUNGE seal over its digest), and that share.
expect_cov() {
    local id user nl n h mac
    declare -A jobs=() recs=() vers=()
    while IFS='|' read -r id user _ _ _ nl n _; do
        mac=0
        if [ "${n:-0}" -gt 0 ]; then
            for h in $(scontrol show hostnames "$nl" < /dev/null); do grep -q "^$h " <<<"$MACS" && mac=1; done
        fi
        [ "$mac" = 1 ] || continue
        jobs[$user]=$(( ${jobs[$user]:-0} + 1 ))
        if [ -e "$STORE/$id.json" ]; then recs[$user]=$(( ${recs[$user]:-0} + 1 )); fi
        if grep -Eq '"phase": "(end|sync)"' "$STORE/$id.json" 2>/dev/null && "$TBMESH" repro verify "$id" < /dev/null > /dev/null 2>&1; then
            vers[$user]=$(( ${vers[$user]:-0} + 1 ))
        fi
    done <<<"$SA"
    for user in "${!jobs[@]}"; do
        printf '%s,%d,%d,%d,%s\n' "$user" "${jobs[$user]}" "${recs[$user]:-0}" "${vers[$user]:-0}" \
            "$(awk -v v="${vers[$user]:-0}" -v n="${jobs[$user]}" 'BEGIN { printf "%.1f", 100 * v / n }')"
    done | sort
}

# ---- the report ----
PERIOD=(--since "$(iso "$S")" --until "$(iso "$E")")
CSV=$("$TBMESH" report "${PERIOD[@]}" --by kind,group,account,user,partition,backend,state --csv 2>&1)
t_match "report --csv ran" '^usage-kind,kind,jobs,' "$CSV"
printf '%s\n' "$CSV" > "$OUT/report.csv"
section() { grep "^$1," <<<"$CSV" | tail -n +2 | cut -d, -f2- | sort; }
for dim in kind group account user partition backend state; do
    t_is "CSV usage by $dim equals the totals from sacct" "$(expect "$dim")" "$(section "usage-$dim")"
done
t_is "CSV utilisation of each Mac group equals capacity less drains, and allocations" "$(expect_use)" "$(section utilisation)"
t_is "CSV failures by reason equal sacct's states and sacctmgr's events" "$(expect_fail)" "$(section failures)"
t_match "the studio-a job asked for jaccl" '^jaccl,1,' "$(section usage-backend)"
t_match "the studio-a job took the whole group" '^studio-a,4,.*,1$' "$(section utilisation)"
t_match "mac08's drain is a tbmesh drain" '^node,drain: tbmesh cable-missing,1,' "$(section failures)"
t_is "what was submitted: 2 jobs of tbm-alice, 3 of tbm-bob" "tbm-alice,2 tbm-bob,3" "$(section usage-user | cut -d, -f1,2 | paste -sd' ')"
t_is "CSV coverage of Mac jobs per user equals the record store's" "$(expect_cov)" "$(section coverage-user)"
t_is "coverage: tbm-alice's 2 Mac jobs, 1 with a verified record (the --repro=off one has none): 50.0%" \
    "tbm-alice,2,1,1,50.0" "$(section coverage-user)"

# JSON: the same numbers, field by field (numbers compared as numbers).
JSON=$("$TBMESH" report "${PERIOD[@]}" --json 2>&1)
t_ok "report --json is JSON" jq -e .usage <<<"$JSON"
norm() { awk -F, -v OFS=, '{ for (i = 1; i <= NF; i++) if ($i ~ /^-?[0-9]+(\.[0-9]+)?$/) $i = sprintf("%.4f", $i); print }' | sort; }
jrows() { jq -r "$1 | to_entries | map(.value | if . == null then \"\" else tostring end) | join(\",\")" <<<"$JSON"; }
for dim in kind group account user partition backend state; do
    t_is "JSON usage by $dim equals the CSV" "$(section "usage-$dim" | norm)" "$(jrows ".usage.$dim[]" | norm)"
done
t_is "JSON utilisation equals the CSV" "$(section utilisation | norm)" "$(jrows '.utilisation[]' | norm)"
t_is "JSON failures equal the CSV" "$(section failures | norm)" "$(jrows '.failures[]' | norm)"
t_is "JSON: records in use" "true" "$(jq -r '.records_in_use' <<<"$JSON")"
t_is "JSON coverage equals the CSV" "$(section coverage-user | norm)" "$(jrows '.coverage[]' | norm)"
# Efficiency: Slurm's CPU use only with --efficiency (each job's steps); tbm-bob's CPU loop burnt up to 2 s.
EFF=$("$TBMESH" report "${PERIOD[@]}" --efficiency --csv 2>&1)
# cpu_s JOBID: sacct's TotalCPU of the job ([D-][HH:]MM:SS[.mmm]) in seconds.
cpu_s() {
    sacct -n -P -j "$1" -o jobid,totalcpu | awk -F'|' '$1 !~ /\./ { t = $2; d = 0
        if (t ~ /-/) { split(t, a, "-"); d = a[1]; t = a[2] }
        n = split(t, p, ":"); print p[n] + (n > 1 ? p[n - 1] * 60 : 0) + (n > 2 ? p[n - 2] * 3600 : 0) + d * 86400 }'
}
BOB_CPU=$(for j in $j1 $j2 $j5; do cpu_s "$j"; done | awk '{ s += $1 } END { printf "%.4f", s / 3600 }')
BOB_EFF=$(grep '^efficiency-user,tbm-bob,' <<<"$EFF" | cut -d, -f4)
t_ok "--efficiency: tbm-bob's Linux CPU use ($BOB_EFF h) is sacct's TotalCPU ($BOB_CPU h)" \
    awk -v a="$BOB_EFF" -v b="$BOB_CPU" 'BEGIN { exit !(a != "" && a - b <= 0.0002 && b - a <= 0.0002) }'
t_ok "the CPU loop used CPU time ($BOB_CPU h)" awk -v b="$BOB_CPU" 'BEGIN { exit !(b >= 0.0001) }'
t_is "without --efficiency, Slurm's CPU columns are empty" "," "$(section efficiency-user | grep '^tbm-bob,' | cut -d, -f3,4)"
t_match "without --efficiency, a note says how to have them" "add --efficiency to read it" "$(jq -r '.notes[]' <<<"$JSON")"
# A record changed after root sealed it (here root plays the forger: the usage claims about 278 CPU-hours) no
# longer counts in the records' CPU efficiency, and a note says how many were left out and why.
rec_eff() { grep '^efficiency-user,tbm-alice,' <<<"$1" | cut -d, -f9-11; }
cp -p "$STORE/$j3.json" "$OUT/j3-sealed.json"
python3 - "$STORE/$j3.json" <<'PY'
import json, sys
rec = json.load(open(sys.argv[1]))
rec["usage"] = [{"node": "mac01", "step": "0", "source": "agent", "cpu_user_us": 10**12, "cpu_system_us": 0}]
json.dump(rec, open(sys.argv[1], "w"), indent=2)
PY
t_is "the changed record fails verify" "1" "$("$TBMESH" repro verify "$j3" > /dev/null 2>&1; echo $?)"
FORGED=$("$TBMESH" report "${PERIOD[@]}" --csv 2>&1)
t_is "... its CPU use is not in the records' efficiency (none of tbm-alice's counts)" "0.0000,0.0000," \
    "$(rec_eff "$FORGED")"
t_match "... and a note says it was left out and why" \
    "counts only records that verify .*left out: 1 whose record does not verify \(anyone may have written its CPU use" \
    "$("$TBMESH" report "${PERIOD[@]}" --json 2>&1 | jq -r '.notes[]')"
cp -p "$OUT/j3-sealed.json" "$STORE/$j3.json"
t_is "the sealed record put back: the records' efficiency is as before" "$(section efficiency-user | grep '^tbm-alice,' | cut -d, -f8-10)" \
    "$(rec_eff "$("$TBMESH" report "${PERIOD[@]}" --csv 2>&1)")"
# Records off in tbmesh.conf: the coverage is left out, with the note saying why.
{ echo "Records=no"; cat "$LAB/etc/tbmesh.conf"; } > "$OUT/tbmesh-records-off.conf"
JOFF=$("$TBMESH" report "${PERIOD[@]}" --conf "$OUT/tbmesh-records-off.conf" --json 2>&1)
t_is "Records=no: coverage left out, with the note" "null records are not in use (Records=no in tbmesh.conf)" \
    "$(jq -r '.coverage' <<<"$JOFF") $(jq -r '.notes[0]' <<<"$JOFF" | cut -d: -f1)"

# The table for the terminal.
TABLE=$("$TBMESH" report "${PERIOD[@]}" 2>&1)
t_match "table: the coverage section" 'Reproducibility coverage of Mac jobs' "$TABLE"
t_match "table: usage by Mac group" 'Usage by group' "$TABLE"

# ---- the page in headless Chromium ----
t_ok "report --html writes the page" "$TBMESH" report "${PERIOD[@]}" --by kind,group,account,user,partition,backend,state --html "$OUT/report.html"
t_is "the page fetches nothing (no scripts, links or URLs but SVG's namespace)" "" \
    "$(grep -Eo '<script|<link|@import|url\(|(src|href)="[^"#]+"|https?://[^"]+' "$OUT/report.html" | grep -v '^http://www.w3.org/2000/svg$')"
CHROME=(chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-dev-shm-usage --user-data-dir="$OUT/chromium")
DOM=$(HOME=$OUT "${CHROME[@]}" --dump-dom "file://$OUT/report.html" 2> "$OUT/chromium.log")
t_match "Chromium rendered the page" '</html>' "$DOM"
t_is "Chromium logged no page error" "" "$(grep -Ei 'Uncaught|CONSOLE\(|ERR_FILE|Failed to load' "$OUT/chromium.log")"
for c in chart-timeline chart-utilisation chart-wait chart-failures chart-coverage; do
    t_match "the page has its chart $c" "<svg id=\"$c\"" "$DOM"
done
# Each table of the rendered page, back to CSV rows.
dom_table() {
    awk -v id="$1" 'index($0, "<table id=\"" id "\"") { on = 1 } on && /<tr><td/ { print } on && /<\/table>/ { exit }' <<<"$DOM" |
        sed -e 's/<\/td><td[^>]*>/,/g' -e 's/<[^>]*>//g' -e 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g' | sort
}
for sec in usage-kind usage-group usage-account usage-user usage-backend usage-state utilisation failures efficiency-user coverage-user top-users timeline; do
    t_is "the page's $sec numbers equal the CSV's" "$(section "$sec")" "$(dom_table "$sec")"
done
HOME=$OUT "${CHROME[@]}" --hide-scrollbars --window-size=1200,3400 --screenshot="$OUT/report.png" "file://$OUT/report.html" >> "$OUT/chromium.log" 2>&1
t_match "a screenshot of the page was kept ($OUT/report.png)" 'PNG image data, 1200 x 3400' "$(file "$OUT/report.png")"
rm -rf "$OUT/chromium"

# ---- bad arguments get a clear message ----
msg() { "$TBMESH" report "$@" 2>&1 >/dev/null; echo "rc=$?"; }
t_match "a reversed period is refused" "period is reversed or empty .*--since must come before --until.*rc=2" "$(msg --since 2026-11-20 --until 2026-11-10 | paste -sd' ')"
t_match "a bad month is refused" "'2026-13' is not a month: write YYYY-MM.*rc=2" "$(msg --month 2026-13 | paste -sd' ')"
t_match "an unknown Mac group is refused, with the groups" "--group nosuch: no such Mac group in tbmesh.conf; the groups are: studio-a mini-b.*rc=2" "$(msg --group nosuch | paste -sd' ')"
t_match "an unknown account is refused" "account 'lab-nosuch' is not known to Slurm's accounting: see .sacctmgr show account.*rc=2" "$(msg --account lab-nosuch | paste -sd' ')"
t_match "an unknown user is refused" "user 'nobody-here' is not known to Slurm's accounting.*rc=2" "$(msg --user nobody-here | paste -sd' ')"
t_match "an unknown cluster is refused" "cluster 'nosuch' is not known to Slurm's accounting: see .sacctmgr show cluster.*rc=2" "$(msg --cluster nosuch | paste -sd' ')"
t_match "a reversed period in the future is called reversed" "period is reversed or empty .*rc=2" "$(msg --since 2099-03-01 --until 2099-02-01 | paste -sd' ')"
t_match "an unknown grouping is refused" "--by: 'colour' is not a grouping: use kind, group,.*rc=2" "$(msg --by colour | paste -sd' ')"
t_is "--group keeps only that group's jobs" "mac,1" \
    "$("$TBMESH" report "${PERIOD[@]}" --group mini-b --csv 2>&1 | grep '^usage-kind,' | tail -n +2 | cut -d, -f2,3 | paste -sd' ')"
t_done
