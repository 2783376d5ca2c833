#!/bin/sh
# inventory.sh: `tbmesh inventory` on the captured facts of two Macs: the report, the files it writes, the
# exit status, --json, and a message for each bad use (no facts, a bad facts file, --out not a folder,
# --last and --hint together, a bad --hint file).
tbmesh=${TBM_TBMESH:-../gres/tbmesh}
facts=${TBM_FIXTURES:-../fixtures}/facts
dir=$(mktemp -d)
fail=0
say() { echo "inventory: $*"; }
trap 'rm -rf "$dir"' EXIT

out=$("$tbmesh" inventory --out "$dir" "$facts/studio-a1.json" "$facts/mini-b1.json"); rc=$?
echo "$out" | grep -q '^tbmesh inventory: 2 Macs' || { say "report: $out"; fail=1; }
echo "$out" | grep -q '^verdict: ' || { say "no verdict: $out"; fail=1; }
case $rc in 0|1) ;; *) say "exit $rc for readable facts"; fail=1 ;; esac
for f in tbmesh.conf slurm-nodes.conf gres.conf cabling.dot; do
  [ -s "$dir/$f" ] || { say "$f not written"; fail=1; }
done
"$tbmesh" inventory --json "$facts/studio-a1.json" | grep -Eq '"macs": ?1,' || { say "--json: no macs"; fail=1; }

err=$("$tbmesh" inventory 2>&1); rc=$?
[ $rc = 2 ] && echo "$err" | grep -q 'no facts given; pass one `macnode probe` JSON file per Mac' ||
  { say "no facts: $rc $err"; fail=1; }
printf '{"tbmesh_facts": 1}' > "$dir/bad.json"
err=$("$tbmesh" inventory "$dir/bad.json" 2>&1); rc=$?
[ $rc = 3 ] && echo "$err" | grep -q "bad.json: .*(make it with \`macnode probe > FILE\` on that Mac)" ||
  { say "bad facts: $rc $err"; fail=1; }
err=$("$tbmesh" inventory --out "$dir/none" "$facts/studio-a1.json" 2>&1); rc=$?
[ $rc = 2 ] && echo "$err" | grep -q "none is not a folder; create it first" || { say "--out: $rc $err"; fail=1; }
err=$("$tbmesh" inventory --last "$dir/tbmesh.conf" --hint "$dir/tbmesh.conf" "$facts/studio-a1.json" 2>&1); rc=$?
[ $rc = 2 ] && echo "$err" | grep -q "give one of --last and --hint, once" || { say "--last --hint: $rc $err"; fail=1; }
printf 'Group=x Colour=red\n' > "$dir/bad.conf"
err=$("$tbmesh" inventory --hint "$dir/bad.conf" "$facts/studio-a1.json" 2>&1); rc=$?
[ $rc = 3 ] && echo "$err" | grep -q "bad.conf was not used: fix the lines above" &&
  echo "$err" | grep -q "bad.conf:1: " || { say "bad hint: $rc $err"; fail=1; }
[ $fail = 0 ] && say "ok"
exit $fail
