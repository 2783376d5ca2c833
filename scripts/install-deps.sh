#!/usr/bin/env bash
# install-deps.sh: install the Debian packages slurm-tbmesh builds, tests and runs its lab with (Debian 12 or
# 13: the same names in both). Idempotent: installs only what is missing. Run as root.
# install-deps.sh --list prints the list (scripts/slurm-root.sh makes its roots from it).
set -euo pipefail

PKGS=(
  build-essential autoconf automake libtool pkg-config
  libslurm-dev slurmctld slurmd slurmdbd slurm-client
  mariadb-server mariadb-client munge libmunge-dev
  libhwloc-dev hwloc libopenmpi-dev openmpi-bin
  libjson-c-dev check libssl-dev libacl1-dev acl
  iproute2 util-linux procps psmisc valgrind graphviz socat jq git curl
  dpkg-dev debhelper lintian python3
  chromium
  zlib1g-dev
  mmdebstrap
  prometheus
)

if [ "${1:-}" = --list ]; then
  printf '%s\n' "${PKGS[@]}"
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  echo "install-deps.sh: run as root (it installs Debian packages with apt-get)" >&2
  exit 1
fi

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps.sh: all ${#PKGS[@]} packages present"
  exit 0
fi
echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Package scripts must not start the system's own daemons: the lab runs its own.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# prometheus is here for its promtool (tests/metrics/promtool.sh): its own server must not run on this machine.
if [ -d /run/systemd/system ] && systemctl is-enabled --quiet prometheus 2>/dev/null; then
  systemctl disable --now prometheus >/dev/null 2>&1 || echo "install-deps.sh: could not stop the prometheus service; run: systemctl disable --now prometheus" >&2
fi
echo "install-deps.sh: done"
