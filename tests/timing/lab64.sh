#!/usr/bin/env bash
# lab64.sh: a 64-Mac lab (8 full meshes of 8, Thunderbolt 5 with RDMA) as raw macOS outputs, made by
# tbmlab-gen, then timed by time_inventory. Usage: lab64.sh TBMLAB-GEN TIME-INVENTORY
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for g in 0 1 2 3 4 5 6 7; do
    nodes=
    for i in 1 2 3 4 5 6 7 8; do nodes="$nodes${nodes:+,}mac$(printf %02d $((g * 8 + i)))"; done
    echo "Group=g$g Mode=direct Wiring=mesh Nodes=$nodes ModelName=\"Mac Studio\" ModelId=Mac15,14" \
         "Chip=\"Apple M3 Ultra\" MemoryGiB=256 PCores=24 ECores=8 OS=26.2 Build=25C56 LinkGbps=80 Rdma=yes Ports=7"
done > "$dir/lab.conf"
"$1" outputs "$dir/lab.conf" "$dir/out"
"$2" "$dir/out"
