# netns.sh (sourced by tbmesh-lab): the nodes' namespaces, the management bridge and the Thunderbolt cables
# (veth pairs); running a command inside a node.

netns() { echo "tbml-$1"; }

# in_node NODE CMD...: run CMD inside the node's namespaces (network, mount, hostname).
in_node() {
    local n=$1; shift
    [ -e "$NS/$n.mnt" ] || die "node $n is not up (no namespace); run 'tbmesh-lab up' or see 'tbmesh-lab status'"
    nsenter --net="/run/netns/$(netns "$n")" --mount="$NS/$n.mnt" --uts="$NS/$n.uts" -- "${IN_ROOT[@]}" "$@"
}

# in_bridge NODE CMD...: run CMD on NODE's bridge host (the controller, or a Bridge= host's network
# namespace) in the private mount namespace of NODE's slurmd.
in_bridge() {
    local n=$1 b net=(); shift
    b=$(bridge_of "$n")
    [ -z "$b" ] || net=(--net="/run/netns/$(netns "$b")")
    nsenter "${net[@]}" --mount="$NS/bridge-$n.mnt" -- "${IN_ROOT[@]}" "$@"
}

# Entering a mount namespace leaves a chroot: in a lab run in a root of another Slurm release
# (scripts/slurm-root.sh, which says where the root is in TBMESH_ROOT_PATH), a command in a node goes back
# into the root, as that node's mount namespace sees it (its own /tmp).
IN_ROOT=()
[ -z "${TBMESH_ROOT_PATH:-}" ] || IN_ROOT=(chroot "$TBMESH_ROOT_PATH")

ns_holder_dir() {
    mkdir -p "$NS"
    if ! mountpoint -q "$NS"; then
        mount --bind "$NS" "$NS"
        mount --make-private "$NS"
    fi
}

# new_mount_ns FILE [HOSTNAME]: a persistent mount namespace (and UTS one when HOSTNAME is given) with a
# private /tmp and the lab's /etc/hosts.
new_mount_ns() {
    local file=$1 host=${2:-} uts=()
    touch "$file"
    if [ -n "$host" ]; then
        touch "${file%.mnt}.uts"
        uts=(--uts="${file%.mnt}.uts")
    fi
    unshare --mount="$file" "${uts[@]}" --propagation private -- /bin/sh -euc '
        umount -R -l "$1" 2>/dev/null || true
        mount -t tmpfs -o mode=1777,size=1g tbmlab-tmp /tmp
        mount --bind "$2" /etc/hosts
        if [ -n "$3" ]; then hostname "$3"; fi
    ' sh "$NS" "$ETC/hosts" "$host"
}

# A Mac's TCP congestion control is macOS's, CUBIC, whatever this host's default is (BBR on some machines,
# which paces each connection by its estimate of the path's rate; with the lab's Macs sharing a few cores that
# estimate collapses, to tens of Mb/s, and bulk transfers over the cables with it). A namespace other than
# the host's may only take an algorithm the host allows its users; CUBIC is added to that list for the lab's
# life (the host's list is kept in $LAB/host-tcp-allowed and put back at down).
HOST_TCP_ALLOWED=/proc/sys/net/ipv4/tcp_allowed_congestion_control
MAC_TCP_CC=
mac_tcp_cc_prepare() {
    MAC_TCP_CC=
    grep -qw cubic /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null ||
        modprobe -q tcp_cubic 2>/dev/null || true
    if ! grep -qw cubic /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null; then
        echo "tbmesh-lab: this kernel has no CUBIC congestion control: the Macs keep the host's ($(sysctl -n net.ipv4.tcp_congestion_control))" >&2
        return 0
    fi
    if ! grep -qw cubic "$HOST_TCP_ALLOWED"; then
        [ -e "$LAB/host-tcp-allowed" ] || cat "$HOST_TCP_ALLOWED" > "$LAB/host-tcp-allowed"
        echo "$(cat "$HOST_TCP_ALLOWED") cubic" > "$HOST_TCP_ALLOWED"
    fi
    MAC_TCP_CC=cubic
}

mac_tcp_cc_restore() {
    [ -e "$LAB/host-tcp-allowed" ] || return 0
    cat "$LAB/host-tcp-allowed" > "$HOST_TCP_ALLOWED" 2>/dev/null || true
    rm -f "$LAB/host-tcp-allowed"
}

up_network() {
    local row n addr hw
    mac_tcp_cc_prepare
    if ! ip link show "$MGMT_BR" >/dev/null 2>&1; then
        ip link add "$MGMT_BR" type bridge
        ip addr add "$CTL_ADDR/24" dev "$MGMT_BR"
    fi
    ip link set "$MGMT_BR" up
    while IFS= read -r row; do
        n=$(cut -f2 <<<"$row")
        addr=$(field "$row" mgmt)
        hw=$(field "$row" mac)
        ip netns add "$(netns "$n")"
        ip -n "$(netns "$n")" link set lo up
        # a Mac picks its outgoing connections' ports where macOS does (49152-65535), not in Linux's
        # 32768-60999, which holds the jobs' coordinator and ring ports: an outgoing connection there could
        # hold the port a job's rank 0 is to listen on
        [ -z "$(field "$row" group)" ] ||
            ip netns exec "$(netns "$n")" sysctl -qw net.ipv4.ip_local_port_range="49152 65535"
        [ -z "$(field "$row" group)" ] || [ -z "$MAC_TCP_CC" ] ||
            ip netns exec "$(netns "$n")" sysctl -qw net.ipv4.tcp_congestion_control="$MAC_TCP_CC"
        ip link add "tbml-$n" type veth peer name "tbmt-$n"
        ip link set "tbmt-$n" netns "$(netns "$n")"
        if [ -n "$(field "$row" group)" ]; then ifname=en0; else ifname=eth0; fi
        ip -n "$(netns "$n")" link set "tbmt-$n" name "$ifname"
        [ -z "$hw" ] || ip -n "$(netns "$n")" link set "$ifname" address "$hw"
        ip -n "$(netns "$n")" addr add "$addr/24" dev "$ifname"
        ip -n "$(netns "$n")" link set "$ifname" up
        ip link set "tbml-$n" master "$MGMT_BR"
        ip link set "tbml-$n" up
    done < <(plan_rows node; plan_rows linux; plan_rows bridgehost)
    local i=0 a aif aip ahw b bif bip bhw state
    while IFS=$'\t' read -r _ a aif aip ahw b bif bip bhw state; do
        i=$((i + 1))
        ip link add "tbmc${i}a" type veth peer name "tbmc${i}b"
        ip link set "tbmc${i}a" netns "$(netns "$a")"
        ip link set "tbmc${i}b" netns "$(netns "$b")"
        cable_end "$a" "tbmc${i}a" "$aif" "$aip" "$ahw" "$state"
        cable_end "$b" "tbmc${i}b" "$bif" "$bip" "$bhw" "$state"
    done < <(plan_rows cable)
}

# cable_end NODE TMPNAME IFNAME ADDR HWADDR STATE: one end of a Thunderbolt cable inside a Mac.
cable_end() {
    local ns
    ns=$(netns "$1")
    ip -n "$ns" link set "$2" name "$3"
    ip -n "$ns" link set "$3" address "$5"
    ip -n "$ns" addr add "$4" dev "$3"
    if [ "$6" = "state=up" ]; then ip -n "$ns" link set "$3" up; fi
}

up_namespaces() {
    local n
    ns_holder_dir
    for n in $(all_nodes) $(bridge_hosts); do new_mount_ns "$NS/$n.mnt" "$n"; done
    for n in $(bridge_nodes); do new_mount_ns "$NS/bridge-$n.mnt"; done
}

# down_network: the namespaces, veths, bridge and mounts of the lab go away.
down_network() {
    local f
    for f in /run/netns/tbml-*; do [ -e "$f" ] && ip netns del "${f##*/}"; done
    ip link del "$MGMT_BR" 2>/dev/null || true
    for f in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^tbm(l|t|c)' || true); do
        ip link del "$f" 2>/dev/null || true
    done
    for f in "$NS"/*.mnt "$NS"/*.uts; do
        [ -e "$f" ] && umount "$f" 2>/dev/null || true
    done
    if mountpoint -q "$NS"; then umount "$NS"; fi
    mac_tcp_cc_restore
}

# lab_pids: every process inside a lab namespace or started from the lab's folder.
lab_pids() {
    local f ino p
    local -A inos=()
    for f in "$NS"/*.mnt "$NS"/*.uts; do
        [ -e "$f" ] || continue
        ino=$(stat -L -c %i "$f" 2>/dev/null) || continue
        inos[$ino]=1
    done
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [ "$p" != $$ ] || continue
        ino=$(stat -L -c %i "/proc/$p/ns/mnt" 2>/dev/null) || continue
        if [ -n "${inos[$ino]:-}" ]; then echo "$p"; continue; fi
        { tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null | grep -qF -- "$LAB/" && echo "$p"
    done
    for f in /run/netns/tbml-*; do
        [ -e "$f" ] && ip netns pids "${f##*/}" 2>/dev/null
    done
    true
}

# kill_lab_processes: the daemons by their pid files, then whatever is left in the lab's namespaces or
# runs from its folder: TERM, then KILL, waiting (bounded) for each round to take effect.
kill_lab_processes() {
    local sig pids f end
    for f in "$RUN"/slurmctld.pid "$RUN"/slurmdbd.pid "$RUN"/slurmd-*.pid; do
        [ -s "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null || true
    done
    for sig in TERM KILL; do
        pids=$(lab_pids | sort -un | grep -vx "$$" || true)
        [ -n "$pids" ] || return 0
        # shellcheck disable=SC2086
        kill -"$sig" $pids 2>/dev/null || true
        end=$((SECONDS + 5))
        while [ "$SECONDS" -lt "$end" ] && [ -n "$(lab_pids | sort -un | grep -vx "$$" || true)" ]; do sleep 0.2; done
    done
    pids=$(lab_pids | sort -un | grep -vx "$$" || true)
    [ -z "$pids" ] || die "processes survived SIGKILL: $pids ($(ps -o pid=,comm= -p "${pids//$'\n'/,}" | paste -sd' '))"
}
