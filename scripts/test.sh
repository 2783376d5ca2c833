#!/usr/bin/env bash
# test.sh: the whole test suite of slurm-tbmesh, from a fresh Debian 12 machine, as root.
# Installs what it needs, then: unit tests with ASan+UBSan (full build and the Mac-side --without-slurm
# build), the unit tests under valgrind, and the lab integration tests on a real Slurm cluster.
# Ends with one line "N passed, N failed" over every check.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
t_start=$SECONDS
total_pass=0 total_fail=0

step() { echo; echo "##### $*"; }
count() { total_pass=$((total_pass + $1)); total_fail=$((total_fail + $2)); }

# unit_results BUILDDIR: print Check's summary line of each test program and count its checks.
unit_results() {
    local log trs line n f e
    for trs in $(find "$1/tests" -name '*.trs' | sort); do
        log=${trs%.trs}.log
        line=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" 2>/dev/null | tail -n1)
        if [ -n "$line" ]; then
            echo "$(basename "${trs%.trs}"): $line"
            n=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
            f=$(sed -E 's/.*Failures: ([0-9]+), Errors: ([0-9]+).*/\1+\2/' <<<"$line")
            f=$((f))
            count $((n - f)) "$f"
        elif grep -q '^:test-result: PASS' "$trs"; then
            echo "$(basename "${trs%.trs}"): PASS"; count 1 0
        else
            echo "$(basename "${trs%.trs}"): $(sed -n 's/^:test-result: //p' "$trs" | head -n1)"; count 0 1
        fi
    done
}

# unit BUILDDIR CONFIGURE-ARGS...: build and run `make check`; a build failure counts as one failure.
unit() {
    local dir=$1; shift
    if ! scripts/build.sh "$dir" "$@"; then echo "build failed: $dir $*"; count 0 1; return; fi
    find "$dir/tests" \( -name '*.trs' -o -name '*.log' \) -delete 2>/dev/null   # results of tests gone since
    make -C "$dir" -s -j"$(nproc)" check > "$dir/check.out" 2>&1 || grep -E '^(FAIL|ERROR)' "$dir/check.out"
    unit_results "$dir"
}

step "dependencies"
scripts/install-deps.sh || { echo "0 passed, 1 failed"; exit 1; }

step "unit tests, ASan+UBSan, full build"
unit "$src/build-san" --enable-sanitizers

step "unit tests, ASan+UBSan, Mac side only (--without-slurm)"
unit "$src/build-mac" --without-slurm --enable-sanitizers

step "unit tests under valgrind"
if scripts/build.sh "$src/build" && make -C "$src/build/tests" -s check-valgrind > "$src/build/valgrind.out" 2>&1; then
    cat "$src/build/valgrind.out"; count 1 0
else
    cat "$src/build/valgrind.out" 2>/dev/null; echo "valgrind: FAILED"; count 0 1
fi

step "lab integration tests (real slurmctld, slurmd, slurmdbd, MariaDB, munged)"
lab_out=$(mktemp)
tests/lab/run 2>&1 | tee "$lab_out"
lp=$(sed -n 's/^lab: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$lab_out")
lf=$(sed -n 's/^lab: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$lab_out")
[ -n "$lp" ] || { lp=0; lf=1; }
count "$lp" "$lf"
rm -f "$lab_out"

echo
echo "test.sh: wall time $((SECONDS - t_start)) s"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
