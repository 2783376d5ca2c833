#!/usr/bin/env bash
# 0090-mlx-env.t: every rank of a Mac job starts with its backend's MLX environment, checked by an
# independent validator of MLX's rules (tests/mlxcheck) inside each rank and across ranks, and a real
# collective runs over the Thunderbolt veths using exactly the addresses MLX would read.
# Direct mode (mini-b): the step runs in each Mac. Bridge mode (studio-a) is covered with the agent.
. "$(dirname "$0")/lib.sh"
no_jobs

CHECK=$T_MLXCHECK
MACNODE=$T_MACNODE
dumps=$LAB/work/tbm-alice/mlx-dumps
rm -rf "$dumps"; mkdir -p "$dumps"; chown tbm-alice: "$dumps"
# job_folders: the job folders root made in the Macs' jobs folder (each job's, removed by its epilog).
job_folders() { for n in mac05 mac06 mac07 mac08; do "$LABCMD" exec "$n" sh -c 'ls -d /tmp/tbmesh-jobs/[0-9]* 2>/dev/null'; done; }
for n in mac05 mac06 mac07 mac08; do "$LABCMD" exec "$n" sh -c 'rm -rf /tmp/tbmesh-jobs/[0-9]*'; done

# check_job ARGS...: salloc with ARGS, each rank checks itself and dumps; then all dumps together.
check_job() {
    rm -f "$dumps"/*
    as tbm-alice salloc "$@" srun sh -c "$CHECK --local --dump $dumps/rank-\$SLURM_PROCID.json" 2>&1
    echo "--- job"
    "$CHECK" --job "$dumps"/rank-*.json 2>&1
}

for backend in ring mpi; do
    out=$(check_job --gres=tbmesh:mini-b:4 --mlx-backend=$backend)
    t_is "mini-b, $backend: four ranks dumped" "4" "$(ls "$dumps" | wc -l)"
    t_is "mini-b, $backend: each rank follows MLX's rules" "4" "$(grep -c "of 4: backend $backend: ok" <<<"$out")"
    t_match "mini-b, $backend: and all ranks together" "job of 4 ranks: ok" "$out"
    t_is "mini-b, $backend: TBMESH_BACKEND on every rank" "$backend" "$(as tbm-alice salloc --gres=tbmesh:mini-b:4 --mlx-backend=$backend srun printenv TBMESH_BACKEND 2>/dev/null | sort -u)"
done

out=$(as tbm-alice salloc --gres=tbmesh:mini-b:4 srun -l sh -c 'env | grep -E "^(MLX_|JACCL_|OMPI_|TBMESH_)" | cut -d= -f1 | sort | paste -sd" "' 2>&1)
t_match "auto on mini-b picks ring and says so once" "^0: tbmesh: group mini-b, 4 Macs: backend ring \(chosen by auto" "$(grep 'tbmesh: group' <<<"$out")"
t_is "the choice is said once" "1" "$(grep -c 'tbmesh: group' <<<"$out")"
t_match "exactly one backend's variables (ring: no JACCL, no Open MPI)" "^0: MLX_HOSTFILE MLX_RANK TBMESH_BACKEND TBMESH_RANK TBMESH_SIZE$" "$(grep '^0: MLX' <<<"$out")"
ranks=$(as tbm-alice salloc --gres=tbmesh:mini-b:4 srun -l printenv MLX_RANK 2>/dev/null | sort | paste -sd' ')
t_is "ranks 0..3, one per Mac" "0: 0 1: 1 2: 2 3: 3" "$ranks"

# A real exchange over the Thunderbolt veths, with the ring hostfile's addresses.
out=$(as tbm-alice salloc --gres=tbmesh:mini-b:4 --mlx-backend=ring srun "$MACNODE" bench -b 8 -e 256K -f 32 -n 3 -w 1 2>&1)
t_match "all-reduce over MLX_HOSTFILE's addresses: 4 ranks, no wrong value" "Wrong values *: 0 OK" "$out"
t_match "transport ring" "4 ranks, transport ring" "$out"

# The single-Mac baseline against the 4-Mac ring: the same network, compared.
MACNODE=$T_MACNODE
out1=$(as tbm-alice srun -p mac -w mac05 "$MACNODE" refwork -L 4 -H 512 -B 8 -o "$LAB/work/tbm-alice/rw-single.bin" 2>&1)
t_match "single Mac baseline" "on 1 rank: .* output sha256 [0-9a-f]{64}" "$out1"
out4=$(as tbm-alice salloc --gres=tbmesh:mini-b:4 --mlx-backend=ring srun "$MACNODE" refwork -L 4 -H 512 -B 8 -o "$LAB/work/tbm-alice/rw-mesh.bin" 2>&1)
t_match "the same network on the 4-Mac ring" "on 4 ranks: .* output sha256 [0-9a-f]{64}" "$out4"
verdict=$("$MACNODE" refwork --compare "$LAB/work/tbm-alice/rw-single.bin" "$LAB/work/tbm-alice/rw-mesh.bin")
t_match "verdict: the mesh agrees with the single Mac" "^verdict: (bitwise identical|within tolerance)" "$verdict"
echo "# $verdict"

# The files are gone when the job ends (none was there before this test): its epilog removes its folder.
end=$((SECONDS + 30)); while [ -n "$(job_folders)" ] && [ $SECONDS -lt $end ]; do sleep 0.5; done
t_is "no job folders left on the Macs" "" "$(job_folders)"

# A plain job on Macs (no --gres=tbmesh) gets no MLX environment.
t_is "no --gres=tbmesh: no MLX variables" "" "$(as tbm-alice srun -p mac -w mac05 sh -c 'env | grep -E "^(MLX_|TBMESH_)"' 2>/dev/null)"
t_done
