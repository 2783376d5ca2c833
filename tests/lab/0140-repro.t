#!/usr/bin/env bash
# 0140-repro.t: every Mac job leaves a reproducibility record: in the record store (sealed by root with
# MUNGE) and as a TBM1 summary in Slurm's AdminComment. Each job state keeps what was known (completed,
# failed, cancelled while running and while pending, timed out, requeued, node failure of a bridge-mode and of
# a direct-mode Mac, with sync's back-fill); bridge mode's resource use comes from the Mac's agent (a CPU
# burner's record against sacct's TotalCPU); the store outlives a killed Mac; a 1-Mac baseline and a 4-Mac run of
# macnode refwork are diffed; an edited record fails verify; a secret in the job's environment reaches neither
# sacct nor the store nor an export; a user cannot read another's record; records outlive a slurmctld restart;
# bad option values are refused at submit; the RO-Crate export loads in an independent reader (npm ro-crate).
. "$(dirname "$0")/lib.sh"
no_jobs

TBMESH=$T_INST/bin/tbmesh   # as the lab installed it: the lab's users reach it wherever the tree is
MACNODE=$T_MACNODE
# The lab's tbmesh.conf puts the store in the lab's state, readable by its users wherever the source tree is.
STORE=$LAB/records/tbmlab
# The lab numbers jobs from 1 again after a purge: records of an earlier lab's jobs with the same ids go.
rm -rf "$STORE"
W=$LAB/work/tbm-alice/repro
SECRET=hf_s3cr3tTokenValue4242
rm -rf "$W"; mkdir -p "$W/corpus"
echo '{"text": "hello"}' > "$W/train.jsonl"
for i in 1 2 3; do echo "part $i" > "$W/corpus/p$i.txt"; done
cat > "$W/refwork.sh" <<EOF
#!/bin/sh
srun "$MACNODE" refwork -L 4 -H 256 -B 8 -o "\$1"
EOF
printf '#!/bin/sh\nsrun sh -c "echo step fails >&2; exit 3"\necho "the end of stderr: boom" >&2\nexit 3\n' > "$W/fail.sh"
printf '#!/bin/sh\nsrun sleep 600\n' > "$W/sleep.sh"
chmod +x "$W"/*.sh; chown -R tbm-alice: "$W"

# summary JOBID: the AdminComment's TBM1 summary decoded by hand (base64, gunzip): an independent reader.
summary() { acct "$1" admincomment | sed -n 's/^TBM1://p' | base64 -d 2>/dev/null | gzip -dc 2>/dev/null; }
jid() { sed -n 's/^Submitted batch job //p' <<<"$1"; }
# ctl_summary JOBID: the same from slurmctld (scontrol), before slurmdbd has the job.
ctl_summary() { scontrol show job -o "$1" | tr ' ' '\n' | sed -n 's/^AdminComment=TBM1://p' | base64 -d 2>/dev/null | gzip -dc 2>/dev/null; }
# wait_record JOBID [PHASE_RE]: until the store's record has reached the phase (the batch step ends a few
# seconds after slurmctld calls the job finished when it was cancelled or timed out).
wait_record() {
    local end=$((SECONDS + 60))
    until grep -Eq "\"phase\": \"(${2:-end|sync})\"" "$STORE/$1.json" 2>/dev/null || [ "$SECONDS" -ge "$end" ]; do sleep 0.3; done
}
# wait_running JOBID [SECONDS]
wait_running() {
    local end=$((SECONDS + ${2:-30}))
    until [ "$(squeue -h -j "$1" -o %T)" = RUNNING ] || [ "$SECONDS" -ge "$end" ]; do sleep 0.3; done
}
repro() { local u=$1; shift; as "$u" "$TBMESH" repro "$@"; }
opts=(--repro-model=mlx-community/Llama-3.2-1B@7c6e1a2 --repro-data="$W/train.jsonl,$W/corpus" --repro-seed=7
      --repro-note="baseline against the mesh")

# ---- bad values are refused at submit, with what to do ----
out=$(as tbm-alice sbatch --gres=tbmesh:studio-a:1 --repro-seed=abc --wrap true 2>&1)
t_match "--repro-seed=abc refused, saying what a seed is" "repro-seed=abc is refused: give the seed as a whole number" "$out"
out=$(as tbm-alice sbatch --gres=tbmesh:studio-a:1 --repro-data=/nonexistent/x --wrap true 2>&1)
t_match "--repro-data of a missing path refused" "/nonexistent/x: No such file or directory; give files or folders the job reads" "$out"
out=$(as tbm-alice sbatch --gres=tbmesh:studio-a:1 "--repro-model=a model" --wrap true 2>&1)
t_match "--repro-model with a space refused, with the form" "give the model as ID\[@REVISION\]" "$out"
out=$(as tbm-alice env TBMESH_REPRO_SEED=-1 sbatch --gres=tbmesh:studio-a:1 --wrap true 2>&1)
t_match "TBMESH_REPRO_SEED=-1 refused too" "TBMESH_REPRO_SEED=-1 is refused" "$out"
t_is "nothing was queued" "" "$(squeue -h -u tbm-alice)"
t_is "the lab's tbmesh.conf puts the record store in the lab's state" "RecordDir=$LAB/records" \
    "$(grep '^RecordDir=' "$LAB/etc/tbmesh.conf")"

# ---- completed: the 1-Mac baseline (bridge mode), a secret in its environment ----
out=$(as tbm-alice env HF_TOKEN=$SECRET sbatch --gres=tbmesh:studio-a:1 "${opts[@]}" --repro-output="$W/single.bin" \
      -o "$W/one.out" "$W/refwork.sh" "$W/single.bin" 2>&1)
one=$(jid "$out"); t_match "baseline submitted" "^[0-9]+$" "$one"
s=$(ctl_summary "$one")
t_match "AdminComment at submit holds the least a report needs (job_submit)" \
    '^\{"v":2,"phase":"submit","state":"PENDING","backend":"[a-z-]+"(,"group":"[a-z0-9-]+")?(,"records":"o[nf]+")?\}$' "$s"
t_is "... and nothing of the submit half: no command line, path, code, model, seed or note" "" \
    "$(grep -oE 'sbatch|/|commit|script|Llama|seed|baseline' <<<"$s")"
t_match "... which tbm-bob reads as well, so it must stay that small" "AdminComment=TBM1:" \
    "$(as tbm-bob scontrol show job -o "$one")"
t_is "wait_job: $one done" "COMPLETED" "$(wait_job "$one" 120)"
s=$(summary "$one")
t_match "AdminComment holds the end summary, set while the job still ran" '"phase":"end".*"state":"COMPLETED"' "$s"
t_ok "the record is in the store" test -s "$STORE/$one.json"
t_is "the summary names the stored record's digest" "$(sha256sum < "$STORE/$one.json" | cut -c1-64)" \
    "$(sed -n 's/.*"record":"\([0-9a-f]*\)".*/\1/p' <<<"$s")"
t_is "record: root's, mode 0440" "root 440" "$(stat -c '%U %a' "$STORE/$one.json")"
t_match "... which its user reads through an ACL entry" "user:tbm-alice:r--" "$(getfacl -p "$STORE/$one.json" 2>/dev/null)"
show=$(repro tbm-alice show "$one" 2>&1)
t_match "show: state, 1 node, sealed" "Job $one on tbmlab: COMPLETED, exit 0 \(record: end phase, sealed by root\)" "$show"
t_match "show: the Mac's facts from its agent (bridge mode)" "macOS 26\.[0-9.]+ \([0-9A-Z]+\); chip Apple" "$show"
t_match "show: Python absent with why (bridge mode)" "Python absent \(bridge mode: the batch step runs on the bridge host" "$show"
t_match "show: the Mac's own resource use, per task, from its agent (bridge mode)" \
    "mac0[1-4] step 0 task 0: user [0-9.]+ s, system [0-9.]+ s, max RSS [0-9]+ KiB, wall [0-9.]+ s \(macnoded" "$show"
t_match "show: the data's digests" "data $W/corpus: folder sha256 [0-9a-f]{64}, [0-9]+ bytes, 3 files" "$show"
t_match "show: the output digested at the end" "output $W/single.bin: file sha256 [0-9a-f]{64}" "$show"
t_ok "verify: sealed by root on the node" repro tbm-alice verify "$one"
t_match "rerun: the same sbatch line, the declared inputs as options" \
    "^cd .* && sbatch --repro-model=mlx-community/Llama-3.2-1B@7c6e1a2 --repro-data=.*train.jsonl,.*corpus --repro-seed=7 .* --gres=tbmesh:studio-a:1 .*refwork.sh .*single.bin$" \
    "$(repro tbm-alice rerun "$one" | tail -n1)"

# ---- bridge mode: the work's CPU time is the Mac's (its agent's wait4), not the forwarder's (sacct) ----
# perl burns 1 s of user CPU by its own clock, however busy the machine is.
printf '#!/bin/sh\nsrun perl -e "for (;;) { for (1 .. 100000) {} last if (times)[0] >= 1.0 }"\n' > "$W/burn.sh"; chmod +x "$W/burn.sh"; chown tbm-alice: "$W/burn.sh"
out=$(as tbm-alice sbatch --gres=tbmesh:studio-a:1 -o /dev/null "$W/burn.sh" 2>&1); burn=$(jid "$out")
t_is "CPU burner on a bridge-mode Mac completes" "COMPLETED" "$(wait_job "$burn" 90)"
wait_record "$burn"
mac_cpu=$(python3 -c 'import json,sys
u=[e for e in json.load(open(sys.argv[1]))["usage"] if e["step"] == "0" and "cpu_user_us" in e]
print("%.2f %s" % (sum(e["cpu_user_us"] + e["cpu_system_us"] for e in u) / 1e6, u[0]["source"].split()[0] if u else "none"))' \
    "$STORE/$burn.json" 2>&1)
fwd_cpu=$(sacct -n -P -j "$burn.0" -o TotalCPU | head -n1 | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }')
echo "# CPU of the burner's step: the Mac (agent) $mac_cpu s; sacct TotalCPU (the forwarder) $fwd_cpu s"
t_match "the record: about 1 s of CPU on the Mac, from its agent" "^(0\.9[0-9]|1\.[0-4][0-9]) macnoded$" "$mac_cpu"
t_is "sacct's TotalCPU (the forwarder on the bridge host) is near 0" "1" "$(awk -v c="$fwd_cpu" 'BEGIN { print (c != "" && c < 0.3) }')"
t_match "show: the burner's task with its wall time" "step 0 task 0: user (0\.9|1\.)[0-9]* s, .*wall [0-9.]+ s \(macnoded" \
    "$(repro tbm-alice show "$burn" 2>&1)"

# ---- the 4-Mac run, then the diff ----
out=$(as tbm-alice env HF_TOKEN=$SECRET sbatch --gres=tbmesh:studio-a:4 "${opts[@]}" --repro-output="$W/mesh.bin" \
      -o "$W/four.out" "$W/refwork.sh" "$W/mesh.bin" 2>&1)
four=$(jid "$out")
t_is "four-Mac run completes" "COMPLETED" "$(wait_job "$four" 120)"
diff=$(repro tbm-alice diff "$one" "$four" 2>&1)
echo "$diff" | sed 's/^/# /'
t_match "diff: comparable with stated differences, naming node count and backend" \
    "^Verdict: comparable with stated differences: node count 1 vs 4; backend [a-z-]+ vs [a-z-]+" "$diff"
t_match "diff: the nodes are a hosts difference" "job.nodes: mac0[1-4] -> mac01,mac02,mac03,mac04" "$diff"
t_is "diff: no data or code differences" "" "$(grep -E '^(data and inputs|code)$' <<<"$diff")"
t_ok "the refwork outputs agree (macnode refwork --compare)" "$MACNODE" refwork --compare "$W/single.bin" "$W/mesh.bin"

# ---- failed: the failing step and the end of stderr ----
out=$(as tbm-alice sbatch --gres=tbmesh:studio-a:2 -o "$W/fail.out" "$W/fail.sh" 2>&1); failed=$(jid "$out")
t_is "failing job" "FAILED" "$(wait_job "$failed" 60)"
show=$(repro tbm-alice show "$failed" 2>&1)
t_match "failed: state and exit code kept" "Job $failed on tbmlab: FAILED, exit 3" "$show"
t_match "failed: the step that failed" "failed step 0" "$show"
t_match "failed: the end of the job's stderr" "stderr\| the end of stderr: boom" "$show"

# ---- cancelled while running (direct mode), and what AdminComment allows ----
out=$(as tbm-alice sbatch --gres=tbmesh:mini-b:4 -o /dev/null "$W/sleep.sh" 2>&1); cancelled=$(jid "$out")
wait_running "$cancelled"; wait_record "$cancelled" start
t_match "the start record is in the store while the job runs" '"state": "RUNNING"' "$(cat "$STORE/$cancelled.json")"
t_match "... and AdminComment keeps the submit half until the end" '"phase":"submit"' "$(ctl_summary "$cancelled")"
t_ok "AdminComment: root may update it while the job runs" scontrol update JobId="$cancelled" AdminComment=probe
t_match "... and slurmctld keeps it" "AdminComment=probe" "$(scontrol show job -o "$cancelled")"
scancel "$cancelled"
t_is "cancelled while running" "CANCELLED" "$(wait_job "$cancelled" 60 | cut -d' ' -f1)"
out=$(scontrol update JobId="$cancelled" AdminComment=late 2>&1); rc=$?
t_is "AdminComment: refused once the job has finished" "1" "$([ $rc != 0 ] && echo 1)"
echo "# scontrol update on a finished job: $out"
wait_record "$cancelled"
t_match "cancelled: the record says so" "Job $cancelled on tbmlab: CANCELLED" "$(repro tbm-alice show "$cancelled" 2>&1)"
show=$(repro tbm-alice show "$cancelled" 2>&1)
t_match "direct mode: Python environment of the batch node (dist-info METADATA)" "Python /[^ ]* \(PATH\): mlx absent" "$show"
t_match "direct mode: Open MPI's version from the ompi.pc beside mpirun" "Open MPI [0-9]+\.[0-9]+\.[0-9]+" "$show"
t_match "direct mode: resource use from Slurm's step accounting" "step 0: user [0-9.]+ s, system [0-9.]+ s, max RSS [0-9]+ KiB \(slurmstepd" "$show"

# ---- cancelled while pending: sync makes its record from AdminComment; no node received the submit half ----
out=$(as tbm-alice sbatch --hold --gres=tbmesh:mini-b:4 "${opts[@]}" "$W/sleep.sh" 2>&1); pending=$(jid "$out")
scancel "$pending"; wait_job "$pending" 30 > /dev/null
t_fail "no record before sync" test -e "$STORE/$pending.json"
out=$("$TBMESH" repro sync -j "$pending" 2>&1)
t_match "sync: record made from the summary" "job $pending: CANCELLED: record made from its AdminComment summary" "$out"
show=$(repro tbm-alice show "$pending" 2>&1)
t_match "pending-cancelled: the state" "Job $pending on tbmlab: CANCELLED" "$show"
t_match "pending-cancelled: the submit half absent, and why" \
    "absent \(the job never started, so no node received its submit half" "$show"
t_ok "pending-cancelled: sealed" repro tbm-alice verify "$pending"

# ---- timed out ----
out=$(as tbm-alice sbatch -t 1 --gres=tbmesh:studio-a:1 -o /dev/null "$W/sleep.sh" 2>&1); timedout=$(jid "$out")

# ---- an edited record fails verify ----
cp "$STORE/$one.json" "$W/saved.json"
sed 's/"seed": "7"/"seed": "8"/' "$W/saved.json" > "$STORE/$one.json"   # as root: only root may write the store
out=$(repro tbm-alice verify "$one" 2>&1); rc=$?
t_is "edited record: verify fails" "1" "$rc"
t_match "edited record: and says why" "was changed after it was sealed" "$out"
cat "$W/saved.json" > "$STORE/$one.json"
t_ok "restored record verifies again" repro tbm-alice verify "$one"

# ---- privacy ----
out=$(repro tbm-bob show "$one" 2>&1); rc=$?
t_is "another user cannot read the record" "1" "$rc"
t_match "... and is told no more than for a job without a record" "job $one has no record that you may read" "$out"
t_fail "... nor list the store" runuser -u tbm-bob -- ls "$STORE"
rm -rf "$W/crate"
t_ok "export as the user" repro tbm-alice export "$one" --ro-crate "$W/crate"
t_is "the secret is in no record" "" "$(grep -rl "$SECRET" "$STORE" 2>/dev/null)"
t_is "the secret is in no export" "" "$(grep -rl "$SECRET" "$W/crate" 2>/dev/null)"
t_is "the secret is in no AdminComment" "" "$(for j in $one $four; do summary $j; done | grep -c "$SECRET" | grep -v '^0$')"

# ---- the RO-Crate, read by an independent reader (npm's ro-crate) ----
if ! command -v npm > /dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm > /dev/null 2>&1
fi
rc_dir=$LAB/npm-ro-crate
if [ ! -d "$rc_dir/node_modules/ro-crate" ]; then
    mkdir -p "$rc_dir" && (cd "$rc_dir" && npm install --silent --no-audit --no-fund ro-crate > /dev/null 2>&1)
fi
out=$(cd "$rc_dir" && node -e '
const { ROCrate } = require("ro-crate");
const fs = require("fs");
const crate = new ROCrate(JSON.parse(fs.readFileSync(process.argv[1] + "/ro-crate-metadata.json")), { array: true, link: true });
const root = crate.rootDataset, run = root.mentions[0];
console.log([root["@type"], run["@type"], run.instrument[0]["@id"] === root.mainEntity[0]["@id"],
             run.instrument[0]["@id"], run.object.map(o => o["@type"]).sort().join(","), run.result.length,
             run.actionStatus[0]["@id"], root.conformsTo.map(p => p["@id"]).sort().join(",")].join(" "));
' "$W/crate" 2>&1)
t_match "ro-crate (npm) loads the export: the run, its script (the main workflow), inputs (data, model, seed) and outputs" \
    "^Dataset CreateAction true file://$W/refwork\.sh CreativeWork,Dataset,File,PropertyValue 1 http://schema.org/CompletedActionStatus https://w3id.org/ro/wfrun/process/0\.5,https://w3id.org/ro/wfrun/workflow/0\.5,https://w3id.org/workflowhub/workflow-ro-crate/1\.0$" "$out"

# ---- requeued: each run keeps its record ----
out=$(as tbm-alice sbatch --requeue --gres=tbmesh:mini-b:4 -o /dev/null "$W/sleep.sh" 2>&1); requeued=$(jid "$out")
wait_running "$requeued"; wait_record "$requeued" start
scontrol requeue "$requeued"
wait_record "$requeued"
t_match "requeued: the first run's record ends" '"phase": "end"' "$(cat "$STORE/$requeued.json")"
echo "# after requeue: $(squeue -h -j "$requeued" -o '%T %r %S')"
wait_running "$requeued" 200
wait_record "$requeued" start
scancel "$requeued"; wait_job "$requeued" 60 > /dev/null; wait_record "$requeued"
t_ok "requeued: the first run's record is kept" test -s "$STORE/$requeued.run0.json"
t_match "requeued: the first run's record says REQUEUED, as Slurm does (not FAILED)" '"state": "REQUEUED"' \
    "$(cat "$STORE/$requeued.run0.json")"
t_match "requeued: the last run's record counts the restart" '"restarts": 1' "$(cat "$STORE/$requeued.json")"

# ---- timed out (submitted above) ----
t_is "timed out" "TIMEOUT" "$(wait_job "$timedout" 150)"
wait_record "$timedout"
t_match "timed out: the record says so" "Job $timedout on tbmlab: TIMEOUT" "$(repro tbm-alice show "$timedout" 2>&1)"

# ---- node failure: a Mac dies mid-job (set down in Slurm, its agent killed); the record keeps what was
# known, sync back-fills the state from Slurm's accounting, and the store keeps every record ----
agent_addr() { sed -n "s/^NodeName=$1 AgentAddr=\([0-9.]*\).*/\1/p" "$LAB/etc/tbmesh.conf"; }
# store_state: how many records the store holds (a requeued job's earlier runs too), and how many jobs' records
# verify.
store_state() {
    local f n=0
    for f in "$STORE"/[0-9]*.json; do
        case "$f" in *.run*) continue ;; esac
        "$TBMESH" repro verify "$(basename "$f" .json)" > /dev/null 2>&1 && n=$((n + 1))
    done
    echo "$(ls "$STORE"/*.json | wc -l) records, $n verify"
}
out=$(as tbm-alice sbatch --no-requeue --gres=tbmesh:studio-a:2 "${opts[@]}" -o /dev/null "$W/sleep.sh" 2>&1); nodefail=$(jid "$out")
wait_running "$nodefail" 60; wait_record "$nodefail" start
victim=$(squeue -h -j "$nodefail" -o %N | xargs scontrol show hostnames | tail -n1)   # rank 1: not the batch node
before=$(store_state)
echo "# node failure: job $nodefail on $(squeue -h -j "$nodefail" -o %N); $victim dies; $before"
sup=$(cat "$LAB/run/keepalive-$victim.pid" 2>/dev/null); agent=$(cat "$LAB/run/macnoded-$victim.pid" 2>/dev/null)
tree() { local c; echo "$1"; for c in $(ps -o pid= --ppid "$1"); do tree "$c"; done; }
mac_pids=$(tree "$agent" | paste -sd' ')   # the agent, its connections and the job's task on the Mac
# The Mac hangs (nothing on it answers, nobody restarts its agent), Slurm is told it is down, then it dies.
kill -STOP "$sup"; kill -STOP $mac_pids
scontrol update NodeName="$victim" State=DOWN Reason="lab: the Mac died"
t_is "node failure: the job ends NODE_FAIL" "NODE_FAIL" "$(wait_job "$nodefail" 90)"
kill -KILL $mac_pids
wait_record "$nodefail"
# The dead Mac's step ends on the bridge host after the batch step completed the record: its part comes late.
late_part() { ls "$STORE/.parts/$nodefail/"*.json > /dev/null 2>&1 || grep -q "\"node\": \"$victim\"" "$STORE/$nodefail.json"; }
end=$((SECONDS + 60)); until late_part || [ $SECONDS -ge $end ]; do sleep 0.5; done
out=$("$TBMESH" repro sync -j "$nodefail" 2>&1)
echo "# sync after the node failure: ${out:-nothing to do}"
show=$(repro tbm-alice show "$nodefail" 2>&1)
t_match "node failure: the record says NODE_FAIL" \
    "Job $nodefail on tbmlab: NODE_FAIL" "$show"
t_is "node failure: both Macs' facts from the job's start are kept" "2" "$(grep -c 'macOS 26\.' <<<"$show")"
t_match "node failure: the declared inputs are kept" "seed 7" "$show"
t_match "node failure: the dead Mac's resource use is absent, saying why" \
    "$victim step 0.*: absent \(the agent at [0-9.]+:[0-9]+ gave no usage: " "$show"
t_ok "node failure: the record is sealed" repro tbm-alice verify "$nodefail"
t_is "a killed Mac: the store keeps every record, and each still verifies" "$before" "$(store_state)"
kill -CONT "$sup"                 # the Mac comes back
end=$((SECONDS + 30))
until "$T_MACNODE" probe --agent "$(agent_addr "$victim")" > /dev/null 2>&1 || [ $SECONDS -ge $end ]; do sleep 0.3; done
scontrol update NodeName="$victim" State=RESUME
"$LABCMD" health "$victim" > /dev/null 2>&1
end=$((SECONDS + 30))
until [ "$(sinfo -h -n "$victim" -o %T)" = idle ] || [ $SECONDS -ge $end ]; do sleep 0.5; done
t_is "the Mac is back in service" "idle" "$(sinfo -h -n "$victim" -o %T)"

# ---- node failure of the direct-mode Mac that runs the batch script: all on it dies (its slurmd, the batch
# step, the task; launchd starts its agent again), so nothing can complete the record there; sync back-fills
# the state and the other Macs' resource use from what their steps' ends left in the store ----
out=$(as tbm-alice sbatch --no-requeue --gres=tbmesh:mini-b:4 "${opts[@]}" -o /dev/null "$W/sleep.sh" 2>&1); dfail=$(jid "$out")
wait_running "$dfail" 60; wait_record "$dfail" start
end=$((SECONDS + 30)); until squeue -h -s -j "$dfail" -o %i | grep -qx "$dfail\.0" || [ $SECONDS -ge $end ]; do sleep 0.3; done
bnode=$(squeue -h -j "$dfail" -o %B)
dsup=$(cat "$LAB/run/keepalive-$bnode.pid" 2>/dev/null)
echo "# direct-mode node failure: job $dfail on $(squeue -h -j "$dfail" -o %N), batch script on $bnode, which dies"
kill -KILL $(ip netns pids "tbml-$bnode" | grep -vx "$dsup")
scontrol update NodeName="$bnode" State=DOWN Reason="lab: the Mac died"
t_is "direct-mode Mac dies: the job ends NODE_FAIL" "NODE_FAIL" "$(wait_job "$dfail" 90)"
end=$((SECONDS + 30)); until [ "$(ls "$STORE/.parts/$dfail" 2>/dev/null | wc -l)" -ge 3 ] || [ $SECONDS -ge $end ]; do sleep 0.5; done
t_match "... its record is as the job's start left it" '"phase": "start"' "$(cat "$STORE/$dfail.json")"
out=$("$TBMESH" repro sync -j "$dfail" 2>&1)
t_match "sync back-fills the state and what the surviving Macs' steps used" \
    "job $dfail: RUNNING -> NODE_FAIL: record brought up to date from Slurm's accounting and its steps' parts" "$out"
show=$(repro tbm-alice show "$dfail" 2>&1)
t_match "... the record says NODE_FAIL" "Job $dfail on tbmlab: NODE_FAIL" "$show"
t_is "... with the resource use of the three Macs that lived" "3" "$(grep -cE "^  mac0[5-8] step 0: user .*\(slurmstepd" <<<"$show")"
t_match "... and the facts the job's start found" "seed 7" "$show"
t_ok "... and it is sealed" repro tbm-alice verify "$dfail"
"$LABCMD" exec "$bnode" slurmd -N "$bnode"
end=$((SECONDS + 30))
until "$T_MACNODE" probe --agent "$(agent_addr "$bnode")" > /dev/null 2>&1 || [ $SECONDS -ge $end ]; do sleep 0.3; done
scontrol update NodeName="$bnode" State=RESUME
"$LABCMD" health "$bnode" > /dev/null 2>&1
end=$((SECONDS + 30))
until [ "$(sinfo -h -n "$bnode" -o %T)" = idle ] || [ $SECONDS -ge $end ]; do sleep 0.5; done
t_is "the Mac is back in service (slurmd and agent)" "idle" "$(sinfo -h -n "$bnode" -o %T)"

# ---- records outlive a slurmctld restart ----
kill "$(cat "$LAB/run/slurmctld.pid")"; sleep 2
slurmctld; end=$((SECONDS + 30)); until scontrol ping > /dev/null 2>&1 || [ "$SECONDS" -ge "$end" ]; do sleep 0.3; done
t_ok "after a slurmctld restart: the baseline still verifies" repro tbm-alice verify "$one"
t_ok "... and sync finds nothing to do for it" test -z "$("$TBMESH" repro sync -j "$one,$four")"
grep -h 'tbmesh: job' "$LAB"/log/slurmd-*.log | sed 's/^/# log: /' | tail -n 40
t_done
