#!/usr/bin/env bash
# 0160-accept.t: the staged acceptance run (tbmesh accept, tbmesh-accept(1)) on the lab's two groups. studio-a,
# the Thunderbolt 5 RDMA mesh, is a plannable research resource for a JACCL task; mini-b, the Thunderbolt 4 ring,
# a prototype (it cannot run JACCL: the reason says so and what to do), and a group without owners is held back
# for them. Every step's Slurm job id is in the record (and in sacct, under the step's job name), the record sits
# beside the reproducibility records or in --out. A bad plan and bad options are refused with the line and what
# to do, before any job runs. With a cable pulled, studio-a drops to macOS compatibility only and the record names
# the cable; mended, the lab is healthy again.
. "$(dirname "$0")/lib.sh"
no_jobs

TBMESH=$T_INST/bin/tbmesh
OUT=$LAB/accept-test
rm -rf "$OUT"; mkdir -p "$OUT"
STORE=$LAB/records/tbmlab/accept   # beside the reproducibility records: RecordDir, in the lab's state
CUT=mac01:en2

accept_setup "$OUT"   # lab.plan and tbmesh.conf with the operations owners (step 7)

# accept ARGS...: tbmesh accept, its stdout in $out, stderr in $err, exit status in $rc.
accept() {
    out=$("$TBMESH" accept "$@" --macnode "$T_MACNODE" 2> "$OUT/stderr"); rc=$?
    err=$(cat "$OUT/stderr")
}
# jq_ FILE EXPR: a value of the JSON record (Python's json; EXPR indexes `r`).
jq_() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }
newest() { ls -t "$1"/"$2"-*."$3" 2>/dev/null | head -n1; }

# ---- refused before any job runs ----
# Jobs submitted, as slurmctld counts them (sdiag): sacct would lag behind the jobs of earlier tests that
# slurmdbd is still taking in. The counter starts again at midnight: then count from there.
submitted() { sdiag | awk -F: '/^Jobs submitted/ { gsub(/ /, "", $2); print $2; exit }'; }
jobs_before=$(submitted)
accept --conf "$OUT/tbmesh.conf"
t_is "no group: exit 2" "2" "$rc"
t_match "... and how to name one" "name one group, e.g. tbmesh accept studio-a" "$err"
accept nope --conf "$OUT/tbmesh.conf"
t_match "an unknown group: the groups there are named" "no group 'nope' in .*tbmesh.conf; its groups: studio-a, mini-b" "$err"
accept studio-a --conf "$OUT/tbmesh.conf" --timeout soon
t_match "a bad --timeout" "--timeout soon is not a number of seconds from 1 to 86400" "$err"
accept studio-a --conf "$OUT/tbmesh.conf" --out "$OUT/no-such-folder"
t_match "a missing --out folder" "--out .*/no-such-folder is not a folder; create it first" "$err"
accept studio-a --conf "$OUT/tbmesh.conf" --plan "$OUT/no-such.plan"
t_match "an unreadable plan" "--plan: .*no-such.plan: .*leave --plan out to run the default checks" "$err"
printf 'task = x\nbackend = nccl\nhello\nlink_share = 2\n' > "$OUT/bad.plan"
accept studio-a --conf "$OUT/tbmesh.conf" --plan "$OUT/bad.plan"
t_is "a bad plan: exit 2" "2" "$rc"
t_match "... line 2 named, with what to write" "bad.plan:2: backend = nccl is unknown: use auto, jaccl, jaccl-ring, ring or mpi" "$err"
t_match "... line 3" "bad.plan:3: 'hello' is not key = value: write settings as key = value" "$err"
t_match "... line 4" "bad.plan:4: link_share = 2 is not a number from 0 to 1" "$err"
t_match "... and nothing ran" "the plan .*bad.plan was not used and nothing ran" "$err"
jobs_after=$(submitted)
t_is "no job was submitted by the refusals" "0" \
    "$(( jobs_after >= jobs_before ? jobs_after - jobs_before : jobs_after ))"

# ---- studio-a: plannable, the record beside the reproducibility records ----
accept studio-a --plan "$OUT/lab.plan" --conf "$OUT/tbmesh.conf" --timeout 120
t_is "studio-a: exit 0, a plannable research resource" "0" "$rc"
t_match "... the record says so" "^# Acceptance of studio-a: plannable research resource" "$out"
echo "$out" | sed -n '/^## Steps/,/^## 1\./p' | sed 's/^/# /'
json=$(newest "$STORE" studio-a json)
t_ok "the record is beside the reproducibility records ($STORE)" test -s "$json"
t_ok "... in Markdown too" test -s "${json%.json}.md"
t_is "... its level" "plannable" "$(jq_ "$json" 'r["level"]')"
t_is "every step ran" "True True True True True True True" "$(jq_ "$json" '" ".join(str(s["ran"]) for s in r["steps"])')"
j2=$(jq_ "$json" 'r["steps"][1]["jobs"][0]'); j5=$(jq_ "$json" 'r["steps"][4]["jobs"][0]')
t_match "step 2's job id is in the record" "^[0-9]+$" "$j2"
t_match "step 5's job id is in the record" "^[0-9]+$" "$j5"
t_is "... and Slurm has them: the baseline on one Mac, the group's job on studio-a's four" \
    "tbmesh-accept-baseline|COMPLETED|1 tbmesh-accept-group|COMPLETED|4" \
    "$(for j in $j2 $j5; do acct "$j" jobname,state,nnodes; done | paste -sd' ')"
t_is "the group's job ran JACCL with its environment right on all 4 ranks" "jaccl 4 4" \
    "$(jq_ "$json" 'r["path"]["run"], r["env_ok"], r["env_ranks"]' | paste -sd' ')"
t_is "every one of the 6 cables measured, both ways" "6" \
    "$(jq_ "$json" 'sum(1 for c in r["cables"] if c["measured"] and c["a_to_b_gbs"] > 0 and c["b_to_a_gbs"] > 0)')"
t_is "the mesh's reference output equals the single Mac's within the tolerance" "True" \
    "$(jq_ "$json" 'r["compare"]["refwork_compared"] and r["compare"]["refwork_beyond_tolerance"] == 0')"
echo "# studio-a: slowest cable $(jq_ "$json" 'r["compare"]["slowest_cable_gbs"]') GB/s, busbw share $(jq_ "$json" 'r["compare"]["busbw_share"]')"

# ---- mini-b: a prototype, and what keeps it from plannable ----
accept mini-b --plan "$OUT/lab.plan" --conf "$LAB/etc/tbmesh.conf" --out "$OUT" --timeout 120 --json
t_is "mini-b: exit 10, a prototype" "10" "$rc"
json=$(newest "$OUT" mini-b json)
t_is "... --json printed the record that was written" "prototype" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["level"])' <<<"$out")"
t_is "the group's job ran the ring backend, environment right on 4 of 4 ranks" "ring 4 4" \
    "$(jq_ "$json" 'r["path"]["run"], r["env_ok"], r["env_ranks"]' | paste -sd' ')"
t_is "... over its 4 cables" "4" "$(jq_ "$json" 'sum(1 for c in r["cables"] if c["measured"])')"
kept=$(jq_ "$json" '"\n".join(f["code"] + " | " + f["what"] + " | " + f["fix"] for f in r["kept_from"]["plannable"])')
t_match "kept from plannable: the plan asks for JACCL, which the TB4 ring cannot run, with what to do" \
    "^backend-not-possible \| step 3: the plan asks for jaccl, which mini-b cannot run: .* \| JACCL needs Thunderbolt 5 .*rdma_ctl enable" "$kept"
t_match "... and no owner (the lab's tbmesh.conf names none), with the key to set" \
    "^owner-missing \| step 7: no owner for recovery .* \| set OwnerRecovery= in tbmesh.conf, globally or on the line Group=mini-b" "$kept"
t_is "mini-b's steps 2 and 5 have their job ids" "1 1" \
    "$(jq_ "$json" 'len(r["steps"][1]["jobs"]), len(r["steps"][4]["jobs"])' | paste -sd' ')"

# ---- a pulled cable: studio-a drops, and the record names the cable ----
drained() { scontrol show node "$1" | grep -q 'State=[A-Z+]*DRAIN'; }
both_drained() { drained mac01 && drained mac02; }
until_ok() { local end=$((SECONDS + $1)); shift; until "$@"; do [ "$SECONDS" -lt "$end" ] || return 1; sleep 0.5; done; }
t_ok "pull the cable at $CUT" "$LABCMD" cut "$CUT"
t_ok "... the link watcher drains mac01 and mac02 (within 30 s)" until_ok 30 both_drained
accept studio-a --plan "$OUT/lab.plan" --conf "$OUT/tbmesh.conf" --out "$OUT" --timeout 15
t_is "studio-a with a pulled cable: exit 20, macOS compatibility only" "20" "$rc"
t_match "... the record says so" "^# Acceptance of studio-a: macOS compatibility only" "$out"
t_match "... what kept it from prototype names the cable" \
    "What kept it from \*\*prototype\*\*" "$out"
kept=$(sed -n '/What kept it from \*\*prototype\*\*/,/^Then/p' <<<"$out")
t_match "... the group's job did not get its Macs, Slurm's reason naming the cable" \
    "job-not-started.*(job [0-9]+ did not get|the job was refused at submit: it got none of the) 4 Macs of studio-a.*Slurm will not give mac01, mac02 \(the first: [A-Z+]*DRAIN: tbmesh: cable-missing at mac01:en2 <-> mac02:en2" "$kept"
t_match "... and step 4's inventory names it" "\`cable-missing\` at mac01:en2 <-> mac02:en2" "$out"
json=$(newest "$OUT" studio-a json)
# The cable's drain may reach Slurm before the group's job is submitted (job_submit refuses it: no job id) or
# after (the job waits, and gets its id).
ids=1; grep -q "the job was refused at submit" <<<"$kept" && ids=0
t_is "... step 5 failed, its job id recorded when it had one; step 6 did not run" "failed $ids not run" \
    "$(jq_ "$json" 'r["steps"][4]["state"], len(r["steps"][4]["jobs"]), r["steps"][5]["state"]' | paste -sd' ')"
t_is "... the other steps ran (1, 2, 3, 4, 7)" "True True True True True" \
    "$(jq_ "$json" '" ".join(str(r["steps"][i]["ran"]) for i in (0, 1, 2, 3, 6))')"
# Every message of the record is whole: one too long for its field is cut after a whole word and marked " ...".
t_is "... every finding's text is whole, or cut between words and marked" "" \
    "$(jq_ "$json" '"|".join(t for s in r["steps"] for f in s["findings"] for t in (f["what"], f["fix"]) if len(t.encode()) >= 500 and not t.endswith(" ..."))')"
# Every job the record names is one Slurm has; none is "job 0".
named=$(grep -oE '(^|[^a-z])job [0-9]+' <<<"$out" | grep -oE '[0-9]+$' | sort -u)
t_is "... it names no job 0" "" "$(grep -x 0 <<<"$named")"
for j in $named; do
    t_ok "... job $j, which it names, is in Slurm's accounting" wait_until 30 "job $j in sacct" \
        eval "sacct -n -X -P -j $j -o jobid | grep -qx $j"
done

# ---- mended: the lab is healthy again ----
t_ok "mend the cable (returns once the watcher resumed both Macs)" "$LABCMD" mend "$CUT"
t_is "mac01 and mac02 idle again" "idle" "$(sinfo -h -n mac01,mac02 -N -o '%T' | tr -d '*' | sort -u | paste -sd' ')"
t_ok "every node ready" "$LABCMD" status
no_jobs
t_done
