#!/bin/sh
# repro-show.sh: `tbmesh repro show` prints each Mac agent's task with the Mac's GPU mean and peak and its
# energy, or "not reported" with the class of reason (metrics-off, no-samples, not-said for an agent older than
# the figures), and the job's total: per node and step the largest task's figure (the records/studio-gpu.json
# fixture: two tasks of one step on mac01, one each on mac02 to mac04). A record written before the figures
# (records/one-mac.json, Slurm's accounting of a direct-mode step) shows as before, without a total; --json
# gives the stored figures as written.
tbmesh=${TBM_TBMESH:-../tbmesh/tbmesh}
fixtures=${TBM_FIXTURES:-../../tests/fixtures}
dir=$(mktemp -d)
fail=0
trap 'rm -rf "$dir"' EXIT
say() { echo "repro-show: $*"; fail=1; }
mkdir -p "$dir/records/tbmlab"
cp "$fixtures/records/one-mac.json" "$dir/records/tbmlab/101.json"
cp "$fixtures/records/studio-gpu.json" "$dir/records/tbmlab/103.json"
printf 'ClusterName=tbmlab\n' > "$dir/slurm.conf"
printf 'RecordDir=%s/records\n' "$dir" > "$dir/tbmesh.conf"
export SLURM_CONF="$dir/slurm.conf"

out=$("$tbmesh" repro show 103 --conf "$dir/tbmesh.conf" 2>&1) || say "show 103: exit $?: $out"
# has LINE: the page holds exactly this line
has() { printf '%s\n' "$out" | grep -qxF -- "$1" || say "no line [$1] in: $(printf '%s\n' "$out" | sed -n '/^Resource/,$p')"; }
has "    GPU mean 93.0%, peak 93.0% (360 samples); energy 239.3 kJ (66.47 Wh)"
has "    GPU mean 92.0%, peak 93.0% (359 samples); energy 238.6 kJ (66.28 Wh)"
has "    GPU mean 87.5%, peak 99.0% (360 samples); energy not reported (no-samples: no sample of the task's time had the figure (the Mac does not report it, or its sampler did not run then))"
has "    GPU and energy not reported (metrics-off: the Mac's agent samples nothing: its metrics are off (macnoded --metrics off))"
has "    GPU and energy not reported (not-said: the Mac's agent did not say (it is older than these figures))"
# mac01's two tasks share the Mac: the larger (239.3 kJ, 0.93 x 1 h) counts; mac02 adds 0.875 x 1 h of GPU
has "  in all: energy 239.3 kJ (66.47 Wh) from 2 of 5 tasks, GPU 1.8050 GPU-hours from 3 of 5 tasks; per node and step the largest task's figure (a step's tasks share their Mac)"
[ "$(printf '%s\n' "$out" | grep -c '^    GPU')" = 5 ] || say "not one GPU line per task: $out"

out=$("$tbmesh" repro show 103 --json --conf "$dir/tbmesh.conf" 2>&1)
printf '%s\n' "$out" | grep -q '"gpu_mean": 0.9300,' || say "--json: the stored figure is not as written: $out"

out=$("$tbmesh" repro show 101 --conf "$dir/tbmesh.conf" 2>&1) || say "show 101: exit $?: $out"
printf '%s\n' "$out" | grep -qxF '  mac05 step 0: user 1.20 s, system 0.03 s, max RSS 51200 KiB (slurmstepd)' ||
    say "an older record's usage: $out"
printf '%s\n' "$out" | grep -Eq '^ *(GPU|in all:)' && say "an older record without the figures got GPU lines: $out"
[ $fail = 0 ] && echo "repro-show: ok"
exit $fail
