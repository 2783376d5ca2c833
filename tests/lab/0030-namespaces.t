#!/usr/bin/env bash
# 0030-namespaces.t: each simulated Mac is its own host: hostname, private /tmp, the planned Thunderbolt
# interfaces and addresses, cables that carry traffic, and recorded macOS outputs that agree with them.
. "$(dirname "$0")/lib.sh"

for n in mac01 mac05 lnx01; do
    t_is "$n has its own hostname" "$n" "$("$LABCMD" exec "$n" hostname)"
done
"$LABCMD" exec mac05 sh -c 'echo secret > /tmp/tbm-private'
t_fail "mac05's /tmp is private (mac06 cannot see it)" "$LABCMD" exec mac06 test -e /tmp/tbm-private
t_fail "mac05's /tmp is private (the host cannot see it)" test -e /tmp/tbm-private
t_is "a Mac's outgoing ports are macOS's (49152-65535), above the jobs' ports" "49152	65535" \
    "$("$LABCMD" exec mac03 cat /proc/sys/net/ipv4/ip_local_port_range)"
t_is "a Linux node's are Linux's" "$(cat /proc/sys/net/ipv4/ip_local_port_range)" \
    "$("$LABCMD" exec lnx01 cat /proc/sys/net/ipv4/ip_local_port_range)"
cc=/proc/sys/net/ipv4/tcp_congestion_control
if grep -qw cubic /proc/sys/net/ipv4/tcp_available_congestion_control; then
    t_is "a Mac's TCP congestion control is macOS's (CUBIC)" cubic "$("$LABCMD" exec mac03 cat "$cc")"
    t_is "a Mac's of the other group too" cubic "$("$LABCMD" exec mac07 cat "$cc")"
else
    echo "# this kernel has no CUBIC: the Macs keep the host's congestion control"
fi
t_is "a Linux node's is the host's" "$(cat "$cc")" "$("$LABCMD" exec lnx01 cat "$cc")"

# Every cable end in the plan is an interface with that address inside its Mac, and the link carries TCP.
while IFS=$'\t' read -r _ a aif aip _ b bif bip _ state; do
    t_match "$a:$aif has $aip" "^$aif(@[^ ]*)? +UP +${aip%/*}/30" "$("$LABCMD" exec "$a" ip -br addr show dev "$aif")"
    t_match "$b:$bif has $bip" "^$bif(@[^ ]*)? +UP +${bip%/*}/30" "$("$LABCMD" exec "$b" ip -br addr show dev "$bif")"
done < <(plan_rows cable)

# A real exchange over one studio-a cable and one mini-b cable.
exchange() {  # exchange NODE_A NODE_B ADDR_B
    "$LABCMD" exec "$2" timeout 5 socat -u TCP-LISTEN:7777,bind="$3",reuseaddr OPEN:/tmp/got,creat,trunc &
    local srv=$! end=$((SECONDS + 10))
    until [ -n "$("$LABCMD" exec "$2" ss -Hltn "src $3:7777" 2>/dev/null)" ]; do
        [ "$SECONDS" -lt "$end" ] || { echo "socat on $2 was not listening on $3:7777 within 10 s" >&2; break; }
        sleep 0.1
    done
    echo "hello from $1" | "$LABCMD" exec "$1" timeout 5 socat -u STDIN TCP:"$3":7777,connect-timeout=3
    wait "$srv"
    "$LABCMD" exec "$2" cat /tmp/got
}
row=$(plan_rows cable | head -n1)
IFS=$'\t' read -r _ a _ _ _ b _ bip _ _ <<<"$row"
t_is "TCP over cable $a-$b" "hello from $a" "$(exchange "$a" "$b" "${bip%/*}")"
row=$(plan_rows cable | grep -P '\tmac05\t' | head -n1)
IFS=$'\t' read -r _ a _ _ _ b _ bip _ _ <<<"$row"
t_is "TCP over cable $a-$b" "hello from $a" "$(exchange "$a" "$b" "${bip%/*}")"

# Thunderbolt links join only the Macs they cable: mac01 cannot reach mini-b's cable addresses.
t_fail "no route from studio-a into mini-b's Thunderbolt links" "$LABCMD" exec mac01 timeout 3 socat -u STDIN TCP:"${bip%/*}":7777,connect-timeout=2 </dev/null

# The recorded outputs agree with the live interfaces.
for n in mac01 mac06; do
    r=$LAB/nodes/$n/replay
    t_ok "$n has its recorded macOS outputs" test -s "$r/system_profiler_SPThunderboltDataType.json" -a -s "$r/ifconfig.txt" -a -s "$r/networksetup_listallhardwareports.txt" -a -s "$r/ibv_devices.txt" -a -s "$r/rdma_ctl_status.txt" -a -s "$r/sw_vers.txt" -a -s "$r/sysctl.txt"
    for addr in $("$LABCMD" exec "$n" ip -4 -o addr show | awk '$2 ~ /^en[2-9]/ {sub("/.*","",$4); print $4}'); do
        t_match "$n: ifconfig.txt records $addr" "inet $addr netmask 0xfffffffc" "$(cat "$r/ifconfig.txt")"
    done
    t_ok "$n: Thunderbolt JSON is valid" jq -e '.SPThunderboltDataType | length > 0' "$r/system_profiler_SPThunderboltDataType.json"
done
t_is "studio-a lists RDMA devices" "enabled" "$(tr -d '\n' < "$LAB/nodes/mac01/replay/rdma_ctl_status.txt")"
t_match "studio-a: ibv_devices names rdma_en2" "rdma_en2" "$(cat "$LAB/nodes/mac01/replay/ibv_devices.txt")"
t_fail "mini-b (TB4): ibv_devices lists no device" grep -q rdma_en "$LAB/nodes/mac05/replay/ibv_devices.txt"
t_done
