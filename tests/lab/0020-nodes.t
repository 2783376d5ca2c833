#!/usr/bin/env bash
# 0020-nodes.t: every node registers with the features, GRES and partitions the lab's spec gives it.
. "$(dirname "$0")/lib.sh"

nodes=$(sinfo -h -N -o '%N' | sort -u | paste -sd' ')
t_is "all nine nodes registered" "lnx01 mac01 mac02 mac03 mac04 mac05 mac06 mac07 mac08" "$nodes"
t_is "every node responding (idle, mixed or allocated)" "9" "$(sinfo -h -N -o '%N %T' | awk '$2 ~ /^(idle|mixed|allocated|completing)$/' | sort -u | wc -l)"
for n in mac01 mac02 mac03 mac04; do
    f=$(scontrol show node "$n" | grep -o 'AvailableFeatures=[^ ]*')
    t_match "$n is in studio-a with RDMA" 'tbmesh_studio_a' "$f"
    t_match "$n advertises rdma" '(,|=)rdma(,|$)' "$f"
    t_match "$n: Gres=tbmesh:1" 'Gres=tbmesh:1' "$(scontrol show node "$n")"
    t_match "$n: slurmd on the bridge host with its own port" "NodeAddr=10.77.0.1 .*Port=69[0-9][0-9]" "$(scontrol show node "$n" | tr '\n' ' ')"
done
for n in mac05 mac06 mac07 mac08; do
    f=$(scontrol show node "$n" | grep -o 'AvailableFeatures=[^ ]*')
    t_match "$n is in mini-b" 'tbmesh_mini_b' "$f"
    t_fail "$n does not advertise rdma (TB4)" grep -Eq '(,|=)rdma(,|$)' <<<"$f"
done
t_match "Mac node described as the Mac, not the bridge (config_overrides)" "CPUTot=32 " "$(scontrol show node mac01)"
t_match "lnx01 is the Linux node" 'AvailableFeatures=linux' "$(scontrol show node lnx01)"
t_is "lnx01 has no tbmesh GRES" "(null)" "$(sinfo -h -n lnx01 -o '%G')"
t_is "partition mac holds the eight Macs" "mac[01-08]" "$(sinfo -h -p mac -o '%N')"
t_is "partition linux holds lnx01" "lnx01" "$(sinfo -h -p linux -o '%N')"
t_match "GresTypes and TRES accounting" "AccountingStorageTRES += .*gres/tbmesh" "$(scontrol show config | grep AccountingStorageTRES)"
t_match "Mac nodes track processes by process group" "ProctrackType += proctrack/pgid" "$(scontrol show config | grep ProctrackType)"
assoc=$(sacctmgr -n -P show assoc cluster=tbmlab format=account,user | sort | paste -sd' ')
t_match "tbm-alice is in lab-ml" 'lab-ml\|tbm-alice' "$assoc"
t_match "tbm-bob is in lab-hpc" 'lab-hpc\|tbm-bob' "$assoc"
t_done
