#!/usr/bin/env bash
# 0162-accept-links.t: tbmesh accept runs the reference workload as root on the Macs. Its output once went to a
# fixed name in the Macs' /tmp (tbmesh-accept-JOBID-RANK.rw; job ids come in order), so a user could plant a
# link there and have root overwrite any file. tbm-alice plants such links, on every Mac of studio-a and for
# the next job ids, pointing at a file of root's; after tbmesh accept has run both reference jobs, the file is
# as it was, the links are untouched, and nothing of the run is left in the Macs' /tmp.
. "$(dirname "$0")/lib.sh"
no_jobs

TBMESH=$T_INST/bin/tbmesh
OUT=$LAB/accept-links
rm -rf "$OUT"; mkdir -p "$OUT"
MACS=(mac01 mac02 mac03 mac04)

cat > "$OUT/lab.plan" <<'PLAN'
[acceptance]
task = the reference workload, with links planted where its output once went
backend = jaccl
link_share = 0.01
busbw_share = 0.01
refwork_hidden = 256
sweep_max = 64K
p2p_size = 64K
PLAN

# Root's file, which the links point at: in the lab's state, seen from every Mac's namespace.
VICTIM=$OUT/root-only.conf
printf 'root only\n' > "$VICTIM"; chmod 0644 "$VICTIM"
sum_before=$(sha256sum < "$VICTIM")

# The next job ids: one job now, then accept's (two, and room for more).
next=$(( $(sbatch --parsable -p mac -w mac05 -o /dev/null --wrap true 2>/dev/null) + 1 ))
t_match "the next job id is known" "^[0-9]+$" "$next"
plant='for j in $(seq '"$next $((next + 8))"'); do for r in 0 1 2 3; do
    ln -sf "$1" "/tmp/tbmesh-accept-$j-$r.rw"; done; done; ls /tmp/tbmesh-accept-*.rw | wc -l'
for m in "${MACS[@]}"; do
    t_is "tbm-alice plants 36 links on $m, to root's file" "36" \
        "$("$LABCMD" exec "$m" runuser -u tbm-alice -- sh -c "$plant" sh "$VICTIM" 2>&1)"
done

out=$("$TBMESH" accept studio-a --plan "$OUT/lab.plan" --out "$OUT" --timeout 120 --macnode "$T_MACNODE" --json \
      2> "$OUT/stderr"); rc=$?
t_match "tbmesh accept studio-a ran its steps (exit 0, 10 or 20: a level, not a refusal)" "^(0|10|20)$" "$rc"
echo "# accept: exit $rc; $(tail -n 1 "$OUT/stderr")"
python3 -c 'import json,sys; [print("# step %d: %s: %s" % (i + 1, s["state"], s["summary"])) for i, s in enumerate(json.load(sys.stdin)["steps"])]' <<<"$out"
t_match "... the baseline job ran the reference workload as root, which sent its output" "refwork ran" \
    "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["steps"][1]["summary"])' <<<"$out" 2>&1)"
t_is "root's file is unchanged" "$sum_before" "$(sha256sum < "$VICTIM")"
t_is "... still root's, 0644" "root 644" "$(stat -c '%U %a' "$VICTIM")"
for m in "${MACS[@]}"; do
    t_is "$m: the planted links are still links, tbm-alice's" "36 tbm-alice" \
        "$("$LABCMD" exec "$m" sh -c 'n=0; for l in /tmp/tbmesh-accept-*.rw; do [ -L "$l" ] && n=$((n + 1)); done;
           echo "$n $(stat -c %U /tmp/tbmesh-accept-*.rw | sort -u | paste -sd,)"')"
    t_is "$m: no folder of the run is left in /tmp" "" \
        "$("$LABCMD" exec "$m" sh -c 'ls -d /tmp/tbmesh-accept.* 2>/dev/null')"
    "$LABCMD" exec "$m" sh -c 'rm -f /tmp/tbmesh-accept-*.rw'
done
no_jobs
t_done
