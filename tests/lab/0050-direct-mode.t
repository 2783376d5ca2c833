#!/usr/bin/env bash
# 0050-direct-mode.t: an srun step on a direct-mode Mac (mini-b) runs inside that Mac: its hostname, its
# en* interfaces, its /tmp; on studio-a (bridge mode) the step is forwarded to the Mac.
. "$(dirname "$0")/lib.sh"

out=$(as tbm-alice srun -p mac -N4 -w 'mac[05-08]' -l sh -c 'echo $(hostname) $(ip -o -4 addr show | awk "{print \$2}" | sort | paste -sd,)' | sort)
t_is "each mini-b task sees its own Mac" "0: mac05 en0,en2,en3,lo
1: mac06 en0,en2,en3,lo
2: mac07 en0,en2,en3,lo
3: mac08 en0,en2,en3,lo" "$out"
addrs=$(as tbm-alice srun -p mac -N1 -w mac07 ip -o -4 addr show | awk '$2 ~ /^en[23]$/ {print $2, $4}' | sort | paste -sd' ')
want=$(plan_rows cable | awk -F'\t' '$2 == "mac07" {print $3, $4} $6 == "mac07" {print $7, $8}' | sort | paste -sd' ')
t_is "mac07's step sees the Thunderbolt addresses of the plan" "$want" "$addrs"
t_is "a step runs as the submitting user" "tbm-alice" "$(as tbm-alice srun -p mac -N1 -w mac05 id -un)"
t_is "a studio-a step runs on its Mac, forwarded from the bridge host (any job, not only --gres=tbmesh)" "mac02" \
    "$(as tbm-alice srun -p mac -N1 -w mac02 hostname)"
t_done
