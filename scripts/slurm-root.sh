#!/usr/bin/env bash
# slurm-root.sh: a second Slurm release beside the host's. Each supported release is the one a Debian
# release ships (22.05: Debian 12 "bookworm", 24.11: Debian 13 "trixie"); for a release the host does not
# have, a root filesystem of that Debian release is made from Debian's packages (mmdebstrap), kept in
# /var/cache/slurm-tbmesh/roots (TBMESH_ROOT_CACHE) and made again only when its package list changes, and
# commands run inside it (chroot, with /proc, /sys, /dev and the source tree mounted at their own paths).
# The lab, the build and the tests run there exactly as on a machine of that release.
#
# Usage (as root):
#   slurm-root.sh native            the host's own Slurm release ("22.05", "24.11")
#   slurm-root.sh releases          every supported release, one per line
#   slurm-root.sh path RELEASE      the root's folder (made or not)
#   slurm-root.sh ensure RELEASE    make the root if it is missing or stale; print its folder
#   slurm-root.sh run RELEASE CMD.. run CMD inside the root (TBMESH_* variables kept; the build folder
#                                   defaults to build-slurm-RELEASE in the source tree)
#   slurm-root.sh lab-up            the release whose lab runs in a root now, if one does
#   slurm-root.sh release RELEASE   unmount what run mounted in the root (refused while its lab is up)
#   slurm-root.sh remove RELEASE    release, then delete the root
set -euo pipefail

SRC=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
CACHE=${TBMESH_ROOT_CACHE:-/var/cache/slurm-tbmesh/roots}
MIRROR=${TBMESH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
LAB_IN_ROOT=${TBMESH_LAB_DIR:-/var/lib/tbmesh-lab}
# Raised when what a root holds must change beyond its package list (a root of an older format is remade).
ROOT_FORMAT=1

die() { echo "slurm-root.sh: $*" >&2; exit 1; }
say() { echo "slurm-root.sh: $*" >&2; }

suite_of() {
    case "$1" in
        22.05) echo bookworm ;;
        24.11) echo trixie ;;
        *) return 1 ;;
    esac
}
releases() { printf '%s\n' 22.05 24.11; }

check_release() {
    suite_of "$1" > /dev/null ||
        die "no Slurm release '$1' here: the supported ones are $(releases | paste -sd' ') (the ones Debian 12 and 13 ship)"
}

# native: the Slurm release of the host: its libslurm-dev, else what its Debian release ships.
native() {
    local v codename
    v=$(dpkg-query -W -f='${Status} ${Version}' libslurm-dev 2>/dev/null | sed -n 's/^install ok installed \([0-9]*\.[0-9]*\).*/\1/p')
    if [ -n "$v" ]; then echo "$v"; return; fi
    codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
    case "$codename" in
        bookworm) echo 22.05 ;;
        trixie) echo 24.11 ;;
        *) die "this host is neither Debian 12 nor 13 and has no libslurm-dev: install Slurm's development files" ;;
    esac
}

root_of() { echo "$CACHE/$(suite_of "$1")"; }

# The packages a root holds: the project's dependencies (install-deps.sh's list) but the browser, which only
# the report's rendering test needs, and what mmdebstrap's small variant leaves out.
packages() {
    "$SRC/scripts/install-deps.sh" --list | grep -vxE "chromium|prometheus"
    printf '%s\n' ca-certificates bc
}

key_of() {
    { echo "format=$ROOT_FORMAT suite=$(suite_of "$1") mirror=$MIRROR"; packages | sort; } | sha256sum | cut -c1-16
}

# mounts_under DIR: the mount points at or under DIR, deepest first.
mounts_under() {
    findmnt -rn -o TARGET | awk -v d="$1" '$0 == d || index($0, d "/") == 1' | sort -r
}

# unmount_all DIR: nothing stays mounted under DIR (what run and the lab mounted there), or fail.
unmount_all() {
    local m
    for m in $(mounts_under "$1"); do umount -l "$m" 2>/dev/null || true; done
    [ -z "$(mounts_under "$1")" ] || die "cannot unmount everything under $1: $(mounts_under "$1" | paste -sd' ')"
}

lab_up_in() {
    [ -e "$1$LAB_IN_ROOT/run/up" ]
}

ensure() {
    local rel=$1 root key tmp t0
    check_release "$rel"
    [ "$(id -u)" = 0 ] || die "run as root: a root filesystem is made with mmdebstrap and entered with chroot"
    root=$(root_of "$rel")
    key=$(key_of "$rel")
    mkdir -p "$CACHE"
    exec 9> "$CACHE/.lock"
    flock 9
    if [ -x "$root/usr/sbin/slurmctld" ] && [ "$(cat "$root/.slurm-tbmesh-root" 2>/dev/null)" = "$key" ]; then
        echo "$root"; return 0
    fi
    command -v mmdebstrap > /dev/null ||
        die "mmdebstrap is missing: run scripts/install-deps.sh (it installs mmdebstrap) or apt-get install mmdebstrap"
    if [ -d "$root" ]; then
        ! lab_up_in "$root" || die "the Slurm $rel root must be made again (its package list changed) but its lab is up: take it down first (lab/tbmesh-lab --slurm $rel down)"
        exec 7>> "$CACHE/.in-use-$(suite_of "$rel")"
        flock -xn 7 || die "the Slurm $rel root must be made again (its package list changed) but a command runs in it: try again when it has ended"
        say "the Slurm $rel root's packages changed: making it again"
    fi
    t0=$SECONDS
    tmp=$root.new
    unmount_all "$tmp"
    rm -rf "$tmp"
    say "making a Debian $(suite_of "$rel") root for Slurm $rel in $root (Debian's packages from $MIRROR; a few minutes, once)"
    mmdebstrap --quiet --variant=apt --components=main --include="$(packages | paste -sd,)" \
        "$(suite_of "$rel")" "$tmp" "$MIRROR" > "$CACHE/mmdebstrap-$rel.log" 2>&1 ||
        die "mmdebstrap could not make the root (log: $CACHE/mmdebstrap-$rel.log; last lines: $(tail -n 3 "$CACHE/mmdebstrap-$rel.log" | paste -sd' '))"
    echo "$key" > "$tmp/.slurm-tbmesh-root"
    if [ -d "$root" ]; then
        unmount_all "$root"
        rm -rf "$root"
    fi
    mv "$tmp" "$root"
    say "made the Slurm $rel root in $((SECONDS - t0)) s ($(du -sh "$root" | cut -f1))"
    echo "$root"
}

# mount_root ROOT: what a command inside needs, mounted once (kept while the root's lab may use it).
mount_root() {
    local r=$1
    # The root is a mount point of its own: inside, "/" must be one (ip netns exec makes it a slave).
    if ! mountpoint -q "$r"; then
        findmnt -rn -o TARGET | grep -q "^$r/" && unmount_all "$r"
        mount --bind "$r" "$r"
    fi
    mountpoint -q "$r/proc" || mount -t proc proc "$r/proc"
    if ! mountpoint -q "$r/sys"; then mount --rbind /sys "$r/sys"; mount --make-rslave "$r/sys"; fi
    if ! mountpoint -q "$r/dev"; then mount --rbind /dev "$r/dev"; mount --make-rslave "$r/dev"; fi
    mkdir -p "$r$SRC"
    mountpoint -q "$r$SRC" || mount --bind "$SRC" "$r$SRC"
    cp -L /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null || true
}

run() {
    local rel=$1 root cwd; shift
    [ $# -gt 0 ] || die "usage: slurm-root.sh run RELEASE CMD..."
    root=$(ensure "$rel")
    # Held (shared) by the command and what it starts that keeps its descriptors: release waits for none.
    exec 8>> "$CACHE/.in-use-$(suite_of "$rel")"
    flock -s 8
    mount_root "$root"
    cwd=$PWD
    case "$cwd" in "$SRC"|"$SRC"/*) ;; *) cwd=$SRC ;; esac
    local vars=() v
    while IFS= read -r v; do vars+=("$v"); done < <(env | grep -E '^TBMESH_[A-Z0-9_]*=' | grep -vE '^TBMESH_(SLURM_ROOT|ROOT_PATH)=')
    exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        TERM="${TERM:-dumb}" "${vars[@]}" TBMESH_SLURM_ROOT="$rel" TBMESH_ROOT_PATH="$root" \
        TBMESH_BUILDDIR="${TBMESH_BUILDDIR:-$SRC/build-slurm-$rel}" \
        chroot "$root" /bin/bash -c 'cd "$1" && shift && exec "$@"' slurm-root "$cwd" "$@"
}

lab_up() {
    local rel
    [ -z "${TBMESH_SLURM_ROOT:-}" ] || return 0
    for rel in $(releases); do
        [ -d "$(root_of "$rel")" ] && lab_up_in "$(root_of "$rel")" && { echo "$rel"; return 0; }
    done
    return 0
}

release() {
    local root
    check_release "$1"
    root=$(root_of "$1")
    [ -d "$root" ] || return 0
    ! lab_up_in "$root" || die "the Slurm $1 lab is up in $root: take it down first (lab/tbmesh-lab --slurm $1 down)"
    # Not while a command runs in it (it holds the lock shared): its mounts are still in use.
    exec 8>> "$CACHE/.in-use-$(suite_of "$1")"
    flock -xn 8 || { say "the Slurm $1 root is in use by a command running in it: its mounts stay"; return 0; }
    unmount_all "$root"
}

case "${1:-}" in
    native) native ;;
    releases) releases ;;
    path) check_release "${2:-}"; root_of "$2" ;;
    ensure) ensure "${2:-}" > /dev/null; root_of "$2" ;;
    run) shift; rel=${1:-}; shift || true; run "$rel" "$@" ;;
    lab-up) lab_up ;;
    release) release "${2:-}" ;;
    remove) release "${2:-}"
            [ -z "$(mounts_under "$(root_of "$2")")" ] || die "$(root_of "$2") still has mounts (in use?): not removed"
            rm -rf "$(root_of "$2")"; say "removed $(root_of "$2")" ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
