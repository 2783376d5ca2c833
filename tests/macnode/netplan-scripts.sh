#!/bin/sh
# netplan-scripts.sh: every script `macnode netplan` writes runs where it is meant to. The macOS one (a full
# mesh of three, a ring of four, a multi-rail pair), per Mac, under sh -e with stand-ins for macOS's ifconfig,
# route, sysctl and networksetup (tests/macnode/macos/) that take only macOS's syntax: it must end with exit 0
# and leave each Mac its addresses and routes. The Linux one (the ring of four), when run as root with ip(8),
# in four network namespaces of its own joined by veth pairs named like the cables: it must end with exit 0,
# and a Mac must then reach the far side of the ring over two cables (traffic only between these namespaces).
macnode=${TBM_MACNODE:-../macnode/macnode}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
fail=0
say() { echo "netplan-scripts: $*"; }
trap 'rm -rf "$dir"' EXIT

cat > "$dir/mesh.conf" <<'CONF'
Group=m Nodes=mac[01-03] Topology=mesh Link=tb5 Rdma=no Mode=direct Backends=mpi
Cable=mac01:en2,mac02:en2
Cable=mac01:en3,mac03:en2 Addr=169.254.0.5/30,169.254.0.6/30
Cable=mac02:en3,mac03:en3
CONF
cat > "$dir/ring.conf" <<'CONF'
Group=r Nodes=m[1-4] Topology=ring Link=tb4 Rdma=no Mode=direct Backends=ring,mpi
Cable=m1:en3,m2:en2 Addr=10.0.1.1/30,10.0.1.2/30
Cable=m2:en3,m3:en2 Addr=10.0.2.1/30,10.0.2.2/30
Cable=m3:en3,m4:en2 Addr=10.0.3.1/30,10.0.3.2/30
Cable=m4:en3,m1:en2 Addr=10.0.4.1/30,10.0.4.2/30
CONF
cat > "$dir/rails.conf" <<'CONF'
Group=p Nodes=s[1-2] Topology=mesh Link=tb5 Rdma=no Mode=direct Backends=mpi
Cable=s1:en2,s2:en2
Cable=s1:en3,s2:en3
CONF

# One Mac's script under the stand-ins: exit 0, and what it did.
on_mac() {   # conf host
    "$macnode" netplan --conf "$dir/$1.conf" --host "$2" > "$dir/$1-$2.sh" 2> "$dir/err" ||
        { say "$1 $2: netplan failed: $(cat "$dir/err")"; fail=1; return 1; }
    rm -f "$dir/log" "$dir/log.routes"
    if ! MACOS_LOG="$dir/log" PATH="$here/macos:/usr/bin:/bin" sh -e "$dir/$1-$2.sh" 2> "$dir/err"; then
        say "$1 $2: the macOS script failed on a Mac: $(cat "$dir/err")"; sed 's/^/  /' "$dir/$1-$2.sh"; fail=1
        return 1
    fi
}
# The stand-ins themselves refuse Linux's syntax (so that the test above could fail).
for cmd in "sysctl -qw net.ipv4.conf.all.rp_filter=2" "sysctl -w net.ipv4.ip_forward=1" \
           "route add -host 10.0.0.1 gw 10.0.0.2" "ifconfig eth0 10.0.0.1/30" "ip addr replace 10.0.0.1/30 dev en2" \
           "networksetup -setdhcp Ethernet"; do
    MACOS_LOG="$dir/log" PATH="$here/macos" sh -c "$cmd" 2> /dev/null &&
        { say "the macOS stand-ins took a Linux command: $cmd"; fail=1; }
done

for h in mac01 mac02 mac03; do
    on_mac mesh $h || continue
    grep -q "^ifconfig en2 inet .* netmask 255.255.255.252 up$" "$dir/log" ||
        { say "mesh $h: no address set: $(cat "$dir/log")"; fail=1; }
done
grep -qx 'route add -host 169.254.0.5 -interface en2' "$dir/log" || { say "mesh mac03: no route to its peer"; fail=1; }
for h in m1 m2 m3 m4; do
    on_mac ring $h || continue
    grep -qx 'sysctl -w net.inet.ip.forwarding=1' "$dir/log" || { say "ring $h: does not forward"; fail=1; }
done
grep -qx -- '-host 10.0.2.1 10.0.3.1' "$dir/log.routes" ||
    { say "ring m4: no route to m2 over m3: $(cat "$dir/log.routes")"; fail=1; }
on_mac rails s1 && [ "$(grep -c '^ifconfig en[23] inet' "$dir/log")" = 2 ] ||
    { say "rails s1: $(cat "$dir/log")"; fail=1; }

# The Linux script of the ring, in namespaces of its own.
if [ "$(id -u)" != 0 ] || ! command -v ip > /dev/null; then
    echo "SKIP (Linux part): needs root and ip(8)"
    [ $fail = 0 ] && say "ok"
    exit $fail
fi
ns=tbmnp$$
trap 'for i in 1 2 3 4; do ip netns del $ns$i 2> /dev/null; done; rm -rf "$dir"' EXIT
for i in 1 2 3 4; do
    ip netns add $ns$i || { echo "SKIP (Linux part): cannot make a network namespace"; exit $fail; }
    ip -n $ns$i link set lo up
done
for i in 1 2 3 4; do   # m$i:en3 <-> m$((i % 4 + 1)):en2
    j=$((i % 4 + 1))
    ip link add np$$a$i netns $ns$i type veth peer name np$$b$i netns $ns$j
    ip -n $ns$i link set np$$a$i name en3 && ip -n $ns$j link set np$$b$i name en2
done
for i in 1 2 3 4; do
    ip -n $ns$i link set en2 up; ip -n $ns$i link set en3 up
    "$macnode" netplan --conf "$dir/ring.conf" --host m$i --os linux > "$dir/linux-m$i.sh" &&
        ip netns exec $ns$i sh -e "$dir/linux-m$i.sh" 2> "$dir/err" ||
        { say "ring m$i: the Linux script failed: $(cat "$dir/err")"; fail=1; }
done
# m1 reaches m3's far address over two cables, and the answer comes back (socat, when it is there)
if command -v socat > /dev/null; then
    ip netns exec ${ns}3 timeout 10 socat -u TCP-LISTEN:7077,bind=10.0.3.1 OPEN:"$dir/got",creat &
    sleep 0.5
    echo over-two-cables | ip netns exec ${ns}1 timeout 5 socat -u - TCP:10.0.3.1:7077,connect-timeout=3 ||
        { say "ring: m1 does not reach m3's 10.0.3.1 over two cables: $(ip -n ${ns}1 route)"; fail=1; }
    wait
    grep -qx over-two-cables "$dir/got" 2> /dev/null || { say "ring: nothing arrived at m3"; fail=1; }
fi
[ $fail = 0 ] && say "ok"
exit $fail
