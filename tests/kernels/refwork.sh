#!/bin/sh
# refwork.sh: the reference workload: one rank (the single-Mac baseline) against 2, 3 and 4 ranks on
# loopback gives outputs within tolerance (float32 sums in another order), the same N twice gives the same
# bits, and bad options or files get messages. No timing is asserted.
macnode=${TBM_MACNODE:-../macnode/macnode}
rw() { "$macnode" refwork "$@"; }
dir=$(mktemp -d)
fail=0
say() { echo "refwork: $*"; }
trap 'rm -rf "$dir"' EXIT

rw -L 3 -H 131 -B 3 -s 7 -o "$dir/one.bin" > "$dir/one.txt" || { say "single rank failed"; fail=1; }
grep -q 'on 1 rank: .* output sha256 [0-9a-f]\{64\}$' "$dir/one.txt" || { say "no digest: $(cat "$dir/one.txt")"; fail=1; }
for n in 2 3 4; do
  rw -L 3 -H 131 -B 3 -s 7 -l $n -o "$dir/n$n.bin" > /dev/null || { say "$n ranks failed"; fail=1; }
  out=$(rw --compare "$dir/one.bin" "$dir/n$n.bin") || { say "1 vs $n: $out"; fail=1; }
  echo "$out" | grep -Eq '^verdict: (bitwise identical|within tolerance)' || { say "1 vs $n: $out"; fail=1; }
done
rw -L 3 -H 131 -B 3 -s 7 -l 3 -o "$dir/again.bin" > /dev/null
out=$(rw --compare "$dir/n3.bin" "$dir/again.bin")
echo "$out" | grep -q '^verdict: bitwise identical' || { say "3 ranks twice: $out"; fail=1; }
# A different seed is another network: refused with a message, never compared.
rw -L 3 -H 131 -B 3 -s 8 -o "$dir/seed8.bin" > /dev/null
rw --compare "$dir/one.bin" "$dir/seed8.bin" > "$dir/cmp.txt" && { say "another seed compared equal"; fail=1; }
grep -q 'different networks' "$dir/cmp.txt" 2>/dev/null || rw --compare "$dir/one.bin" "$dir/seed8.bin" 2>&1 |
  grep -q 'different networks' || { say "seed mismatch not named"; fail=1; }
# Within the same network, zero tolerance turns a reordered sum into DIFFERENT with its place.
if ! cmp -s "$dir/one.bin" "$dir/n3.bin"; then
  out=$(rw --compare "$dir/one.bin" "$dir/n3.bin" --rtol 0 --atol 0) && { say "rtol 0 passed"; fail=1; }
  echo "$out" | grep -q '^verdict: DIFFERENT: .* at batch [0-9]*, column [0-9]*: ' || { say "no place: $out"; fail=1; }
fi
# -o never writes through a link (root runs refwork in tbmesh accept): the link's target is left as it was;
# a plain file is written again.
printf 'root file\n' > "$dir/target"; ln -s "$dir/target" "$dir/planted.bin"
err=$(rw -L 1 -H 8 -B 1 -o "$dir/planted.bin" 2>&1) && { say "-o through a link accepted"; fail=1; }
echo "$err" | grep -q "macnode refwork: -o $dir/planted.bin: is a symbolic link; a file is never written through a link: remove the link or give another path" ||
  { say "-o link: $err"; fail=1; }
[ "$(cat "$dir/target")" = "root file" ] || { say "the link's target was written"; fail=1; }
rw -L 3 -H 131 -B 3 -s 7 -o "$dir/one.bin" > /dev/null && rw --compare "$dir/one.bin" "$dir/n3.bin" > /dev/null ||
  { say "-o over an earlier output failed"; fail=1; }
printf 'junk' > "$dir/junk.bin"
err=$(rw --compare "$dir/one.bin" "$dir/junk.bin" 2>&1) && { say "junk accepted"; fail=1; }
echo "$err" | grep -q 'junk.bin is not an output of macnode refwork (-o): make it again' || { say "junk: $err"; fail=1; }
err=$(rw -H 0 2>&1) && { say "-H 0 accepted"; fail=1; }
echo "$err" | grep -q "hidden '0' is not a whole number from 1 to 65536" || { say "-H 0: $err"; fail=1; }
[ $fail = 0 ] && say "ok"
exit $fail
