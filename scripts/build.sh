#!/usr/bin/env bash
# build.sh: configure, build and install slurm-tbmesh in a build folder (default: build/, the one the lab uses;
# installed under build/inst, where the lab finds the plug-ins).
# Usage: scripts/build.sh [BUILDDIR [CONFIGURE-ARGS...]]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$src/build}
shift || true
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cd "$src"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ -n "$(find . -name Makefile.am -newer configure -not -path './build*' | head -n1)" ]; then
    autoreconf -fi > /dev/null
fi
mkdir -p "$dir"
cd "$dir"
if [ ! -f Makefile ] || [ "$src/configure" -nt config.status ] || ! grep -qF -- "--prefix=$dir/inst" config.status; then
    "$src/configure" -q --prefix="$dir/inst" "$@"
fi
make -s -j"$(nproc)" > /dev/null
make -s install > /dev/null
echo "build.sh: built in $dir"
