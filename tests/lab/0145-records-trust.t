#!/usr/bin/env bash
# 0145-records-trust.t: a sealed record means root saw it. Tried as a hostile user of the lab (tbm-alice, an
# ordinary account with the right to run Mac jobs, against tbm-bob): the store's files are root's and nobody
# else may write them (no forgery, no rewrite under another job id, no rollback that verify does not see); root
# copies no file a job named into a record (a root-only marker never appears in the store or in `repro show
# --json`, whatever the job sets in its environment); a record's identity (user, nodes) comes from Slurm, not
# from the job's variables, and a step whose node list variable was rewritten still runs where Slurm placed it;
# another user's job answers as one without a record. Records keep what a job did: the end of stderr of a
# failed job that wrote to Slurm's default slurm-%j.out, a step whose command line is not UTF-8, an array
# task's array and index.
. "$(dirname "$0")/lib.sh"
no_jobs

TBMESH=$T_INST/bin/tbmesh
STORE=$LAB/records/tbmlab
W=$LAB/work/tbm-alice/trust
rm -rf "$W"; mkdir -p "$W"; chown tbm-alice: "$W"
MARKER=$LAB/root-only-marker
MARK=TBM-ROOT-ONLY-$RANDOM$RANDOM
printf 'secret root-only content %s\n' "$MARK" > "$MARKER"; chmod 600 "$MARKER"
jid() { sed -n 's/^Submitted batch job //p' <<<"$1"; }
repro() { local u=$1; shift; as "$u" "$TBMESH" repro "$@"; }
wait_record() {
    local end=$((SECONDS + 60))
    until grep -Eq "\"phase\": \"(${2:-end|sync})\"" "$STORE/$1.json" 2>/dev/null || [ "$SECONDS" -ge "$end" ]; do sleep 0.3; done
}

# ---- a job whose environment lies about who and where it is, and names root-only files ----
lies="ALL,SLURM_JOB_USER=tbm-bob,SLURM_STEP_NODELIST=mac04,SLURM_JOB_NODELIST=mac03,SLURM_JOB_ACCOUNT=lab-hpc"
lies+=",SLURM_SUBMIT_DIR=/root,SLURM_JOB_NAME=forged,MLX_HOSTFILE=$MARKER,MLX_IBV_DEVICES=$MARKER"
lies+=",SLURM_RESTART_COUNT=7,TBMESH_REPRO_SUBMIT_FAKE=1"
cat > "$W/liar.sh" <<EOF
#!/bin/sh
export SLURM_STEP_NODELIST=mac04 SLURM_JOB_NODELIST=mac04 SLURM_NODELIST=mac04 MLX_HOSTFILE=$MARKER MLX_IBV_DEVICES=$MARKER
srun hostname
EOF
chmod +x "$W/liar.sh"; chown tbm-alice: "$W/liar.sh"
out=$(as tbm-alice sbatch --export="$lies" --gres=tbmesh:studio-a:1 -w mac01 -o "$W/liar.out" "$W/liar.sh" 2>&1)
liar=$(jid "$out"); t_match "a job whose variables lie is queued" "^[0-9]+$" "$liar"
# direct mode: only the backend's variables name the root-only file (the node list is left alone, so that
# the step is taken for the direct-mode Mac it is)
printf '#!/bin/sh\nexport MLX_HOSTFILE=%s MLX_IBV_DEVICES=%s\nsrun hostname\n' "$MARKER" "$MARKER" > "$W/dliar.sh"
chmod +x "$W/dliar.sh"; chown tbm-alice: "$W/dliar.sh"
out=$(as tbm-alice sbatch --export="ALL,MLX_HOSTFILE=$MARKER,MLX_IBV_DEVICES=$MARKER" \
      --gres=tbmesh:mini-b:1 -w mac05 -o "$W/dliar.out" "$W/dliar.sh" 2>&1)
dliar=$(jid "$out"); t_match "... and one on a direct-mode Mac" "^[0-9]+$" "$dliar"
t_is "bridge mode: done" COMPLETED "$(wait_job "$liar" 90)"
t_is "direct mode: done" COMPLETED "$(wait_job "$dliar" 90)"
wait_record "$liar"; wait_record "$dliar"
t_is "the step ran on the Mac Slurm placed it on (bridge mode), not the one its variables named" mac01 \
    "$(grep -x 'mac[0-9]*' "$W/liar.out")"
t_is "... and in direct mode" mac05 "$(grep -x 'mac[0-9]*' "$W/dliar.out")"
rec=$(repro tbm-alice show "$liar" --json 2>&1)
t_is "the record's user is Slurm's, not SLURM_JOB_USER" tbm-alice "$(jq -r .job.user <<<"$rec")"
t_is "... its nodes are Slurm's" '["mac01"]' "$(jq -c .job.nodes <<<"$rec")"
t_is "... its account and name are Slurm's" "$(sacct -n -X -P -j "$liar" -o Account,JobName | head -n1)" \
    "$(jq -r '.job.account + "|" + .job.name' <<<"$rec")"
t_is "... its folder is Slurm's, not SLURM_SUBMIT_DIR" "$(sacct -n -X -P -j "$liar" -o WorkDir | head -n1)" \
    "$(jq -r .job.work_dir <<<"$rec")"
t_is "... its run is Slurm's restart count" 0 "$(jq -r .job.restarts <<<"$rec")"
t_is "... each step part names the Mac it ran on" '["mac01"]' "$(jq -c '[.job.steps[].nodes[]] | unique' <<<"$rec")"
t_is "the root-only marker is in no store file" "" "$(grep -rl "$MARK" "$STORE" 2>/dev/null)"
t_is "... nor in repro show --json (bridge, direct)" 0 \
    "$( (repro tbm-alice show "$liar" --json; repro tbm-alice show "$dliar" --json) 2>&1 | grep -c "$MARK")"
t_is "... nor in the slurmd and agents' logs" "" "$(grep -rl "$MARK" "$LAB/log" 2>/dev/null)"
drec=$(repro tbm-alice show "$dliar" --json 2>&1)
t_match "direct mode: the backend's variables are the ones the plug-in set (a one-Mac step sets MLX_* none)" \
    '^(null|\{"absent".*|\{"TBMESH_BACKEND":"[a-z-]+","TBMESH_RANK":"0","TBMESH_SIZE":"1"\})$' \
    "$(jq -c '.nodes[0].backend_env' <<<"$drec")"

# ---- the store's files are root's: the user can neither rewrite, replace nor add ----
t_is "every file of the store is root's" "" "$(find "$STORE" ! -user root 2>/dev/null | head -3)"
t_is "... and none is writable by group or others" "" "$(find "$STORE" -perm /022 2>/dev/null | head -3)"
t_match "the user reads her record through an ACL entry" "user:tbm-alice:r--" "$(getfacl -p "$STORE/$liar.json" 2>/dev/null)"
t_fail "the user cannot chmod her record" runuser -u tbm-alice -- chmod u+w "$STORE/$liar.json"
t_fail "... nor write it" runuser -u tbm-alice -- sh -c "echo '{}' > '$STORE/$liar.json'"
t_fail "... nor replace it" runuser -u tbm-alice -- sh -c "cp '$STORE/$liar.json' '$W/x' && mv -f '$W/x' '$STORE/$liar.json'"
t_fail "... nor remove its seal" runuser -u tbm-alice -- rm -f "$STORE/$liar.seal"
t_fail "... nor put a record of her own under bob's next job id" runuser -u tbm-alice -- sh -c "echo '{}' > '$STORE/999990.json'"
t_ok "the record still verifies" repro tbm-alice verify "$liar"

# ---- another user's job answers as a job without a record ----
out=$(as tbm-bob sbatch --gres=tbmesh:studio-a:1 -o /dev/null --wrap "srun true" 2>&1); bob=$(jid "$out")
t_is "bob's job done" COMPLETED "$(wait_job "$bob" 90)"
wait_record "$bob"
a=$(repro tbm-alice show "$bob" 2>&1 | sed "s/$bob/N/g"); b=$(repro tbm-alice show 999991 2>&1 | sed "s/999991/N/g")
t_is "alice asking for bob's record gets the answer of a job without one" "$b" "$a"
t_match "... which says what it may mean" "has no record that you may read.*not your job" "$a"
t_fail "alice cannot verify bob's record either" repro tbm-alice verify "$bob"

# ---- a record is only read back under its own job; an earlier version put back is told apart ----
cp "$STORE/$bob.json" "$W/bob.json"; cp "$STORE/$bob.seal" "$W/bob.seal"
cat "$STORE/$liar.json" > "$STORE/$bob.json"   # root's mistake (or a restore gone wrong): alice's text under bob's id
t_fail "a record naming another job is not shown under this one" repro tbm-bob show "$bob"
out=$(repro tbm-bob show "$bob" 2>&1)
t_match "... and says so" "names job $liar of tbmlab: refused" "$out"
"$TBMESH" repro sync -j "$bob" > /dev/null 2>&1
t_is "sync does not seal alice's text under bob's job: it makes bob's anew from Slurm's accounting" "$bob tbm-bob" \
    "$(jq -r '"\(.job.id) \(.job.user)"' "$STORE/$bob.json" 2>&1)"
cat "$W/bob.json" > "$STORE/$bob.json"; cat "$W/bob.seal" > "$STORE/$bob.seal"

# the job runs until the test has seen its start record (a file it waits for; at most 2 minutes)
rm -f "$W/go"
out=$(as tbm-alice sbatch --gres=tbmesh:studio-a:1 -o /dev/null \
      --wrap "i=0; while [ ! -e '$W/go' ] && [ \$i -lt 600 ]; do sleep 0.2; i=\$((i + 1)); done; srun true" 2>&1)
roll=$(jid "$out")
wait_record "$roll" start
cp "$STORE/$roll.json" "$W/start.json"; cp "$STORE/$roll.seal" "$W/start.seal"
t_match "while it runs: verify says it is the start record" "the start record \(phase start, run 0\)" \
    "$(repro tbm-alice verify "$roll" 2>&1)"
touch "$W/go"
t_is "rollback job done" COMPLETED "$(wait_job "$roll" 90)"
wait_record "$roll"
t_match "at its end: the current record, named by Slurm's accounting" "verified: the current record.*phase end, run 0" \
    "$(repro tbm-alice verify "$roll" 2>&1)"
t_fail "alice cannot put the start version back" runuser -u tbm-alice -- sh -c "cat '$W/start.json' > '$STORE/$roll.json'"
cat "$W/start.json" > "$STORE/$roll.json"; cat "$W/start.seal" > "$STORE/$roll.seal"   # as root
out=$(repro tbm-alice verify "$roll" 2>&1); rc=$?
t_is "an earlier sealed version put back: verify fails" 1 "$rc"
t_match "... and says which it is" "FAILED: sealed by root \(phase start, run 0\), but not the job's current record" "$out"

# ---- what a record keeps ----
printf '#!/bin/sh\necho "last words of the job" >&2\nexit 4\n' > "$W/fails.sh"; chmod +x "$W/fails.sh"; chown tbm-alice: "$W/fails.sh"
out=$(as tbm-alice sh -c "cd '$W' && sbatch --gres=tbmesh:studio-a:1 '$W/fails.sh'" 2>&1); failed=$(jid "$out")
t_is "a failing job writing to slurm-%j.out" FAILED "$(wait_job "$failed" 90)"
wait_record "$failed"
t_match "its record holds the end of stderr from Slurm's default output file" "last words of the job" \
    "$(repro tbm-alice show "$failed" --json 2>&1 | jq -c .results.stderr_tail)"

printf '#!/bin/sh\nsrun sh -c "exit 0" x caf\351\n' > "$W/latin.sh"; chmod +x "$W/latin.sh"; chown tbm-alice: "$W/latin.sh"
out=$(as tbm-alice sbatch --gres=tbmesh:mini-b:1 -o /dev/null "$W/latin.sh" 2>&1); latin=$(jid "$out")
t_is "a step whose command line is Latin-1" COMPLETED "$(wait_job "$latin" 90)"
wait_record "$latin"
rec=$(repro tbm-alice show "$latin" --json 2>&1)
t_match "its step is in the record, the bytes that are not UTF-8 shown as U+FFFD" "caf\\\\ufffd|caf�" "$(jq -c '.job.steps' <<<"$rec")"
t_is "... and its node does not read 'no step ran on this node'" 0 "$(grep -c 'no step ran on this node' <<<"$rec")"

out=$(as tbm-alice sbatch --array=3-4 --gres=tbmesh:studio-a:1 -o /dev/null --wrap "srun true" 2>&1); arr=$(jid "$out")
t_match "an array of two Mac jobs" "^[0-9]+$" "$arr"
end=$((SECONDS + 90))
while [ -n "$(squeue -h -j "$arr" 2>/dev/null)" ] && [ "$SECONDS" -lt "$end" ]; do sleep 0.5; done
# (slurmdbd hears of the array's tasks on its own time: asked until it knows the second)
task4=""; end=$((SECONDS + 30))
while [ -z "$task4" ] && [ "$SECONDS" -lt "$end" ]; do
    task4=$(sacct -n -X -P -j "${arr}_4" -o JobIDRaw 2>/dev/null | head -n1); [ -n "$task4" ] || sleep 0.5
done
wait_record "$task4"
t_is "an array task's record says its array and index" "$arr 4" \
    "$(repro tbm-alice show "$task4" --json 2>&1 | jq -r '"\(.job.array_job_id) \(.job.array_task_id)"')"

rm -f "$MARKER"
t_done
