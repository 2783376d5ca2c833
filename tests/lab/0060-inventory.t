#!/usr/bin/env bash
# 0060-inventory.t: every Mac probes itself and `tbmesh inventory` finds studio-a (full mesh, Thunderbolt 5,
# RDMA) and mini-b (ring, Thunderbolt 4, no RDMA); the Macs' slurm.conf lines come from it. Pulling one
# cable makes the report name exactly that cable, and studio-a unfit for a JACCL mesh.
. "$(dirname "$0")/lib.sh"

out=$("$LABCMD" inventory); rc=$?
t_is "the lab is fit" "0" "$rc"
t_match "studio-a: a mesh of 4, tb5, RDMA, all backends" \
    "group studio-a: mesh of 4 \(mac\[01-04\]\), tb5, RDMA, bridge mode; backends: jaccl,jaccl-ring,ring,mpi" "$out"
t_match "mini-b: a ring of 4, tb4, no RDMA, ring and mpi only" \
    "group mini-b: ring of 4 \(mac\[05-08\]\), tb4, no RDMA, direct mode; backends: ring,mpi" "$out"
t_match "verdict fit" "^verdict: fit \(0 errors" "$out"
t_is "tbmesh.conf lists 10 cables" "10" "$(grep -c '^Cable=' "$LAB/etc/tbmesh.conf")"
t_match "tbmesh.conf: studio-a" "^Group=studio-a Nodes=mac\[01-04\] Topology=mesh Link=tb5 Rdma=yes Mode=bridge" "$(cat "$LAB/etc/tbmesh.conf")"
t_match "slurm.conf node line of mac01 comes from the inventory" \
    "^NodeName=mac01 CPUs=32 RealMemory=[0-9]+ Gres=tbmesh:1 Features=tbmesh,tbmesh_studio_a,rdma,macos_26_2,m3_ultra Port=69" \
    "$(cat "$LAB/etc/slurm.conf")"
t_match "a facts document per Mac, with its own hostname" '"hostname": ?"mac06"' "$(cat "$LAB/inventory/facts/mac06.json")"
t_ok "the drawing of the cabling" grep -q 'mac01' "$LAB/inventory/cabling.dot"
if command -v dot > /dev/null; then t_ok "and its SVG" test -s "$LAB/inventory/cabling.svg"; fi
json=$("$T_BUILD/tbmesh/tbmesh" inventory --json "$LAB"/inventory/facts/*.json)
t_is "--json: fit, two groups" "true 2" "$(jq -r '"\(.fit) \(.groups | length)"' <<<"$json")"

t_is "macnode probe --agent: mac01's agent gives the same facts as a probe on mac01" "same" \
    "$(cmp -s <("$T_MACNODE" probe --agent 10.77.0.11 --munge-socket "$LAB/run/munge/munge.socket.2" | jq -S .) \
              <(jq -S . "$LAB/inventory/facts/mac01.json") && echo same)"

# Pull mac01:en2 <-> mac02:en2.
t_ok "cut a cable" "$LABCMD" cut mac01:en2
t_match "the link is down in mac01" "^en2(@[^ ]*)? +DOWN" "$("$LABCMD" exec mac01 ip -br link show en2)"
out=$("$LABCMD" inventory); rc=$?
t_is "the lab is unfit" "1" "$rc"
t_match "the report names exactly the pulled cable" \
    "^error +cable-missing at mac01:en2 <-> mac02:en2: cable mac01:en2 <-> mac02:en2 \(in the last tbmesh.conf\) is seen from neither end" "$out"
t_is "no other cable is named missing" "1" "$(grep -c 'cable-missing' <<<"$out")"
t_match "studio-a is no longer a mesh: no JACCL" "group studio-a: other of 4 .*backends: mpi$" "$out"
t_match "the pair it joined is named" "pairs not joined: mac01-mac02" "$out"
t_match "mini-b is unaffected" "group mini-b: ring of 4 .*backends: ring,mpi$" "$out"
t_is "the lab keeps its last good tbmesh.conf" "10" "$(grep -c '^Cable=' "$LAB/etc/tbmesh.conf")"
# Slurm's health check (macnode check --drain) drains the two Macs of the pulled cable, with the reason.
"$LABCMD" health mac01 mac02 mac03 > /dev/null
reason_of() { scontrol show node "$1" | grep -o 'Reason=.*' | sed 's/ \[.*//'; }
t_match "mac01 is drained" "State=[A-Z+]*DRAIN" "$(scontrol show node mac01)"
t_match "... with the cable as the reason" \
    "^Reason=tbmesh: cable-missing at mac01:en2 <-> mac02:en2: nothing is at the other end of Thunderbolt" "$(reason_of mac01)"
t_match "mac02 too, from its end" "^Reason=tbmesh: cable-missing at mac02:en2 <-> mac01:en2" "$(reason_of mac02)"
t_fail "mac03 is not drained" grep -q DRAIN <<<"$(scontrol show node mac03 | grep State=)"
# (job_submit/tbmesh looks at the nodes' states every few seconds: wait until it has seen both drains)
for _ in $(seq 30); do
    out=$(as tbm-alice sbatch --test-only --gres=tbmesh:studio-a:4 --wrap true 2>&1)
    grep -q 'could hold this job.*mac01 is drained.*mac02 is drained' <<<"$out" && break
    sleep 1
done
t_match "a job for all of studio-a is refused while they are drained, naming them" \
    "studio-a could hold this job, but mac01 is drained \(tbmesh: cable-missing at mac01:en2 .*\), mac02 is drained \(tbmesh: cable-missing" "$out"
t_ok "mend it" "$LABCMD" mend mac01:en2
t_is "the health check resumed both (mend runs it)" "idle idle" \
    "$(sinfo -h -n mac01,mac02 -N -o '%T' | sort -u | tr -d '*' | paste -sd' ' | sed 's/^idle$/idle idle/')"
for _ in $(seq 15); do   # job_submit/tbmesh sees node states within a few seconds
    as tbm-alice sbatch --test-only --gres=tbmesh:studio-a:4 --wrap true > /dev/null 2>&1 && break
    sleep 1
done
t_ok "job_submit/tbmesh takes studio-a jobs again" as tbm-alice sbatch --test-only --gres=tbmesh:studio-a:4 --wrap true
t_is "slurmd ran the health check on every Mac at start (SLURMD_NODENAME): each was well" "8" \
    "$(grep -E '^mac0[1-8]: well$' "$LAB/log/healthcheck.log" | sort -u | wc -l)"
out=$("$LABCMD" inventory); rc=$?
t_is "fit again" "0" "$rc"
t_done
