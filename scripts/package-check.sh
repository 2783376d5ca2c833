#!/usr/bin/env bash
# package-check.sh: the Debian packages, installed as a site installs them, into a clean root of this
# machine's Debian release (made from Debian's packages with mmdebstrap: Slurm's controller and client, and
# the packages given), where that release's slurmctld loads job_submit/tbmesh and sbatch loads spank_tbmesh.
# Usage: scripts/package-check.sh PACKAGE.deb...   (as root; prints "ok - ..." / "not ok - ..." lines)
# The clean root and every process started in it are gone when it ends (own mount and PID namespaces).
set -uo pipefail
MIRROR=${TBMESH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
[ "$(id -u)" = 0 ] || { echo "package-check.sh: run as root (mmdebstrap, chroot)" >&2; exit 2; }
[ $# -gt 0 ] || { echo "usage: scripts/package-check.sh PACKAGE.deb..." >&2; exit 2; }
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
debs=()
for d in "$@"; do
    [ -r "$d" ] || { echo "package-check.sh: $d: no such package file" >&2; exit 2; }
    debs+=("$(readlink -f "$d")")
done
fail=0
ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; fail=1; [ -z "${2:-}" ] || printf '%s\n' "$2" | tail -n 15 | sed 's/^/#   /'; }

tmp=$(mktemp -d /tmp/tbmesh-pkgcheck.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
t0=$SECONDS
# Local .deb files (each its own --include) are installed with their dependencies from the mirror, as apt
# does; mmdebstrap's file-mirror-automount hook makes them visible inside the root while it installs.
incl=(--include=slurmctld,slurm-client,munge)
for d in "${debs[@]}"; do incl+=(--include="$d"); done
if mmdebstrap --quiet --variant=apt --components=main "${incl[@]}" \
        --hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
        "$suite" "$root" "$MIRROR" > "$tmp/mmdebstrap.log" 2>&1; then
    ok "the packages install into a clean Debian $suite root with Slurm ($((SECONDS - t0)) s)"
else
    notok "the packages install into a clean Debian $suite root with Slurm" "$(cat "$tmp/mmdebstrap.log")"
    exit 1
fi
echo "# in it: $(chroot "$root" dpkg-query -W -f='${Package} ${Version}\n' slurmctld slurm-tbmesh slurm-tbmesh-macnode | paste -sd, | sed 's/,/, /g')"

# A one-node cluster on loopback (ports of its own), its tbmesh.conf the installed example.
ma=$(chroot "$root" dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
mkdir -p "$root/etc/slurm" "$root/var/spool/tbm-check" "$root/run/munge"
cat > "$root/etc/slurm/slurm.conf" <<EOF
ClusterName=pkgcheck
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=16917
SlurmdPort=16918
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
JobSubmitPlugins=tbmesh
PlugStackConfig=/etc/slurm/plugstack.conf
StateSaveLocation=/var/spool/tbm-check
SlurmctldPidFile=/run/slurmctld.pid
SlurmctldLogFile=/var/log/slurmctld.log
SlurmctldDebug=info
ProctrackType=proctrack/pgid
SelectType=select/cons_tres
GresTypes=tbmesh
NodeName=k1 CPUs=1 State=FUTURE Gres=tbmesh:1
PartitionName=all Nodes=ALL Default=YES State=UP
EOF
echo "required /usr/lib/$ma/slurm-wlm/spank_tbmesh.so" > "$root/etc/slurm/plugstack.conf"
cp "$root/usr/share/slurm-tbmesh/tbmesh.conf.example" "$root/etc/slurm/tbmesh.conf" 2>/dev/null ||
    notok "the package holds the example tbmesh.conf (/usr/share/slurm-tbmesh/tbmesh.conf.example)"

cat > "$root/check.sh" <<'EOF'
set -u
mount -t proc proc /proc
chown munge: /run/munge
[ -s /etc/munge/munge.key ] || mungekey --create > /dev/null 2>&1
runuser -u munge -- munged > /dev/null 2>&1
slurmctld > /dev/null 2>&1
for i in $(seq 1 100); do scontrol ping > /dev/null 2>&1 && break; sleep 0.2; done
echo "== ping"; scontrol ping 2>&1
echo "== log"; cat /var/log/slurmctld.log
echo "== help"; sbatch --help 2>&1
echo "== submit"; sbatch --gres=tbmesh:99 --wrap true 2>&1
echo "== end"
EOF
out=$(unshare --mount --pid --fork --propagation private -- sh -c '
    mount --rbind /dev "$1/dev" && exec chroot "$1" bash /check.sh' sh "$root" 2>&1)
section() { sed -n "/^== $1\$/,/^== /p" <<<"$out" | sed '1d;$d'; }
if grep -q 'is UP' <<<"$(section ping)"; then ok "its slurmctld starts with JobSubmitPlugins=tbmesh"
else notok "its slurmctld starts with JobSubmitPlugins=tbmesh" "$(section ping; section log)"; fi
if grep -qE 'job_submit/tbmesh: read /etc/slurm/tbmesh.conf: [0-9]+ groups' <<<"$(section log)"; then
    ok "... and loads job_submit/tbmesh, which reads tbmesh.conf"
else notok "... and loads job_submit/tbmesh, which reads tbmesh.conf" "$(section log)"; fi
if grep -q -- '--mlx-backend' <<<"$(section help)"; then ok "sbatch loads spank_tbmesh (its --mlx-backend option)"
else notok "sbatch loads spank_tbmesh (its --mlx-backend option)" "$(section help)"; fi
if grep -q 'tbmesh' <<<"$(section submit)" && ! grep -q '^Submitted' <<<"$(section submit)"; then
    ok "a request no group can hold is refused by job_submit/tbmesh, saying why"
    section submit | head -n 3 | sed 's/^/#   /'
else notok "a request no group can hold is refused by job_submit/tbmesh, saying why" "$(section submit)"; fi
exit "$fail"
