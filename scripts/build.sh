#!/usr/bin/env bash
# build.sh: configure, build and install slurm-tbmesh in a build folder (default: build/, the one the lab uses;
# installed under build/inst, where the lab finds the plug-ins).
# Usage: scripts/build.sh [--slurm RELEASE] [BUILDDIR [CONFIGURE-ARGS...]]
#   --slurm RELEASE: build against that Slurm release (22.05, 24.11) in a Debian root of it when the host
#   has another (scripts/slurm-root.sh); BUILDDIR then defaults to build-slurm-RELEASE.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --slurm ]; then
    [ $# -ge 2 ] || { echo "build.sh: --slurm needs a release (22.05, 24.11)" >&2; exit 2; }
    rel=$2; shift 2
    if [ "$rel" != "$("$src/scripts/slurm-root.sh" native)" ]; then
        exec "$src/scripts/slurm-root.sh" run "$rel" "$src/scripts/build.sh" "${1:-$src/build-slurm-$rel}" "${@:2}"
    fi
fi
dir=${1:-${TBMESH_BUILDDIR:-$src/build}}
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
