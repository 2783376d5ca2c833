#!/bin/sh
# collbench-smoke.sh: tbm-collbench runs every operation on 3 local ranks, counts no wrong value, writes its
# three formats, and refuses bad options with a message. No timing is asserted.
bench=${TBM_COLLBENCH:-../kernels/tbm-collbench}
fail=0
say() { echo "collbench-smoke: $*"; }

for op in allreduce allgather reducescatter broadcast sendrecv; do
  for algo in mesh ring; do
    out=$("$bench" -l 3 -A "$algo" -o "$op" -d bf16 -r max -R 2 -b 4 -e 64K -f 16 -n 2 -w 1 -F csv) ||
      { say "$op $algo: exit $?"; fail=1; continue; }
    rows=$(echo "$out" | awk -F, 'NR > 1' | wc -l)
    wrong=$(echo "$out" | awk -F, 'NR > 1 { w += $13 } END { print w + 0 }')
    [ "$rows" -ge 2 ] && [ "$wrong" = 0 ] || { say "$op $algo: $rows rows, $wrong wrong"; fail=1; }
  done
done
table=$("$bench" -l 2 -b 8 -e 1K -f 4 -n 2 -w 1)
echo "$table" | grep -q '^# Wrong values       : 0 OK' || { say "table: no OK line"; echo "$table"; fail=1; }
echo "$table" | grep -q 'transport mesh' || { say "table: no transport"; fail=1; }
json=$("$bench" -l 2 -b 8 -e 64 -f 2 -n 2 -w 1 -F json)
echo "$json" | grep -q '"wrong_total": 0,' || { say "json: no wrong_total"; echo "$json"; fail=1; }
if "$bench" -l 2 -o allsum 2>err.$$; then say "bad op accepted"; fail=1; fi
grep -q "bad value 'allsum' for -o" err.$$ || { say "bad op: $(cat err.$$)"; fail=1; }
if "$bench" -l 2 -b 1M -e 1K 2>err.$$; then say "-b > -e accepted"; fail=1; fi
grep -q -- "-b must not exceed -e" err.$$ || { say "-b > -e: $(cat err.$$)"; fail=1; }
rm -f err.$$
[ $fail = 0 ] && say "ok"
exit $fail
