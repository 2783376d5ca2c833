#!/usr/bin/env bash
# test.sh: the whole test suite of slurm-tbmesh, from a fresh Debian 12 machine, as root.
# Installs what it needs, then: unit tests with ASan+UBSan (full build and the Mac-side --without-slurm
# build, whose `make install` must lay out a Mac's package), the unit tests under valgrind, the release
# tarball (make distcheck), the Debian packages built from it (lintian, installed in a throw-away root), and
# the lab integration tests on a real Slurm cluster.
# Ends with one line "N passed, N failed" over every check. TBMESH_TEST_LAB=no leaves the lab part out (for a
# machine where another lab is running; CI always runs it).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
t_start=$SECONDS
total_pass=0 total_fail=0

# step TITLE: a new part of the run; the wall time of the part before is printed as it ends.
step_name="" step_t=$SECONDS
step_end() { [ -z "$step_name" ] || echo "##### ($((SECONDS - step_t)) s: $step_name)"; }
step() { step_end; step_name=$*; step_t=$SECONDS; echo; echo "##### $*"; }
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

# check DESC CMD...: one check of its own: CMD succeeds.
check() {
    local desc=$1; shift
    if "$@"; then echo "ok - $desc"; count 1 0; return 0; fi
    echo "not ok - $desc"; count 0 1; return 1
}

# mac_layout: `make install` of the --without-slurm build holds what a Mac's package does.
mac_layout() {
    local root=$src/build-mac/pkgroot f prefix
    rm -rf "$root"
    prefix=$(sed -n 's/^prefix *= *//p' "$src/build-mac/Makefile")
    check "make install of the Mac side (DESTDIR)" sh -c "make -C '$src/build-mac' -s install DESTDIR='$root' > /dev/null"
    for f in bin/macnode sbin/macnoded libexec/slurm-tbmesh/macnode-bench libexec/slurm-tbmesh/macnode-refwork \
             share/man/man8/macnode.8 share/man/man8/macnoded.8 share/man/man5/tbmesh.conf.5 \
             share/slurm-tbmesh/launchd/org.slurm-tbmesh.macnoded.plist share/slurm-tbmesh/tbmesh.conf.example; do
        check "Mac side installs $f" test -s "$root$prefix/$f"
    done
    check "Mac side installs no Slurm plug-in and no tbmesh" test -z "$(find "$root" -name '*tbmesh.so' -o -name tbmesh -type f)"
    check "the installed launchd job is a property list that starts the installed macnoded with KeepAlive" python3 -c '
import plistlib, sys
p = plistlib.load(open(sys.argv[1], "rb"))
assert p["ProgramArguments"][0] == sys.argv[2] + "/sbin/macnoded", p["ProgramArguments"][0]
assert p["KeepAlive"] is True and p["RunAtLoad"] is True and p["Label"] == "org.slurm-tbmesh.macnoded"
' "$root$prefix/share/slurm-tbmesh/launchd/org.slurm-tbmesh.macnoded.plist" "$prefix"
}

# distcheck: the release tarball builds, passes `make check` and installs cleanly (one check).
distcheck() {
    local dir=$src/build-dist
    mkdir -p "$dir"
    if (cd "$dir" && { [ -f Makefile ] || "$src/configure" -q; } && make -s distcheck) > "$dir/distcheck.out" 2>&1; then
        grep -E 'archives ready|\.tar\.gz' "$dir/distcheck.out" | tail -n 2; count 1 0
    else
        tail -n 40 "$dir/distcheck.out"; echo "make distcheck: FAILED (whole log: $dir/distcheck.out)"; count 0 1
    fi
}

# packages: the Debian packages from the release tarball and debian/: dpkg-buildpackage, lintian (no
# error), then unpacked into a throw-away root and their contents checked.
packages() {
    local tarball tmp d root deb ma f
    tarball=$(ls -t "$src"/build-dist/slurm-tbmesh-*.tar.gz 2>/dev/null | head -n1)
    [ -n "$tarball" ] || { echo "no release tarball in build-dist (make distcheck failed?)"; count 0 1; return; }
    tmp=$(mktemp -d /tmp/tbmesh-deb.XXXXXX)
    tar -xzf "$tarball" -C "$tmp"
    d=$(echo "$tmp"/slurm-tbmesh-*/)
    cp -a "$src/debian" "$d"
    if ! check "dpkg-buildpackage -us -uc -b" sh -c "cd '$d' && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b > '$tmp/build.log' 2>&1"; then
        tail -n 30 "$tmp/build.log"; return
    fi
    check "lintian: no error" sh -c "lintian --fail-on error '$tmp'/*.changes > '$tmp/lintian.log' 2>&1"
    sed 's/^/  lintian: /' "$tmp/lintian.log" | head -n 30
    root=$tmp/root
    for deb in "$tmp"/*.deb; do
        echo "  package $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version) $(dpkg-deb -f "$deb" Architecture): $(stat -c %s "$deb") bytes, installed size $(dpkg-deb -f "$deb" Installed-Size) KiB"
        dpkg -x "$deb" "$root"
    done
    ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
    for f in usr/lib/$ma/slurm-wlm/spank_tbmesh.so usr/lib/$ma/slurm-wlm/job_submit_tbmesh.so usr/bin/tbmesh \
             usr/libexec/slurm-tbmesh/tbmesh-healthcheck usr/bin/macnode usr/sbin/macnoded \
             usr/libexec/slurm-tbmesh/macnode-bench usr/libexec/slurm-tbmesh/macnode-forward usr/share/man/man5/tbmesh.conf.5.gz usr/share/man/man8/macnode.8.gz \
             usr/share/man/man1/tbmesh.1.gz usr/share/man/man1/tbmesh-accept.1.gz usr/share/man/man1/tbmesh-report.1.gz usr/share/man/man1/tbmesh-repro.1.gz \
             usr/share/slurm-tbmesh/systemd/tbmesh-watch.service \
             usr/share/slurm-tbmesh/launchd/org.slurm-tbmesh.macnoded.plist; do
        check "packages install /$f" test -s "$root/$f"
    done
    check "the installed plug-ins are Slurm plug-ins (plugin_name, plugin_version)" sh -c \
        "nm -D '$root/usr/lib/$ma/slurm-wlm/spank_tbmesh.so' | grep -q ' plugin_name\$' && nm -D '$root/usr/lib/$ma/slurm-wlm/job_submit_tbmesh.so' | grep -q ' plugin_version\$'"
    check "the packaged tbmesh and macnode run" sh -c "'$root/usr/bin/tbmesh' --help > /dev/null && '$root/usr/bin/macnode' --help > /dev/null"
    check "the packaged launchd job starts /usr/sbin/macnoded" grep -q '<string>/usr/sbin/macnoded</string>' \
        "$root/usr/share/slurm-tbmesh/launchd/org.slurm-tbmesh.macnoded.plist"
    rm -rf "$tmp"
}

step "unit tests under valgrind"
if scripts/build.sh "$src/build" && make -C "$src/build/tests" -s check-valgrind > "$src/build/valgrind.out" 2>&1; then
    cat "$src/build/valgrind.out"; count 1 0
else
    cat "$src/build/valgrind.out" 2>/dev/null; echo "valgrind: FAILED"; count 0 1
fi

step "the Mac side's installed layout (make install of --without-slurm)"
mac_layout

step "release tarball (make distcheck)"
distcheck

step "Debian packages (dpkg-buildpackage, lintian, a throw-away root)"
packages

step "lab integration tests (real slurmctld, slurmd, slurmdbd, MariaDB, munged)"
if [ "${TBMESH_TEST_LAB:-yes}" = no ]; then
    echo "left out: TBMESH_TEST_LAB=no (the suite is whole only with the lab)"
else
    lab_out=$(mktemp)
    tests/lab/run 2>&1 | tee "$lab_out"
    lp=$(sed -n 's/^lab: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$lab_out")
    lf=$(sed -n 's/^lab: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$lab_out")
    [ -n "$lp" ] || { lp=0; lf=1; }
    count "$lp" "$lf"
    rm -f "$lab_out"
fi

step_end
echo
echo "test.sh: wall time $((SECONDS - t_start)) s"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
