# slurm.sh (sourced by tbmesh-lab): the Slurm side: the Macs' inventory and routes, slurm.conf (from
# slurm.conf.in) and the node lines, the health check, slurmctld and the slurmds.

write_hosts() {
    {
        echo "127.0.0.1 localhost"
        echo "$CTL_ADDR $(hostname -s) tbmlab-ctl"
        local row
        while IFS= read -r row; do
            echo "$(field "$row" mgmt) $(cut -f2 <<<"$row")"
        done < <(plan_rows node; plan_rows linux; plan_rows bridgehost)
    } > "$ETC/hosts"
}

# inventory: every Mac probes itself (replayed macOS outputs, inside its own namespace), then
# `tbmesh inventory` builds and validates the groups and writes tbmesh.conf and the Macs' node lines.
# inventory [LAST]: with LAST (the tbmesh.conf in use), cables it lists that no Mac sees are named; without,
# a fresh lab takes group names, modes and settings from the example and its cabling from the Macs alone.
inventory() {
    local n inv=$LAB/inventory hint=(--hint "$ETC/tbmesh-hint.conf")
    [ -z "${1:-}" ] || hint=(--last "$1")
    # The example's groups and settings, where each Mac's agent listens (its management address), and the
    # record store in the lab's state (the default, under the installation's prefix, lies in the build tree,
    # which users cannot read when the clone is under /root).
    local base=$HINT
    [ ! -s "$ETC/hint-base.conf" ] || base=$ETC/hint-base.conf   # a spec of its own (make_plan)
    { cat "$base"; grep -qi '^RecordDir=' "$base" || echo "RecordDir=$LAB/records"
      plan_rows node | while IFS= read -r row; do
        printf 'NodeName=%s AgentAddr=%s\n' "$(cut -f2 <<<"$row")" "$(field "$row" mgmt)"; done; } > "$ETC/tbmesh-hint.conf"
    [ -x "$MACNODE" ] && [ -x "$TBMESH" ] || die "macnode or tbmesh is not built ($MACNODE, $TBMESH): run scripts/build.sh"
    rm -rf "$inv"; mkdir -p "$inv/facts"
    for n in $(plan_rows node | cut -f2); do
        in_node "$n" "$MACNODE" probe --replay "$NODES/$n/replay" > "$inv/facts/$n.json" 2>> "$LOG/probe.log" \
            || [ $? = 1 ] || die "macnode probe failed on $n; see $LOG/probe.log"
    done
    local rc=0
    "$TBMESH" inventory "${hint[@]}" --out "$inv" "$inv"/facts/*.json > "$LOG/inventory.log" 2>&1 || rc=$?
    [ "$rc" -le 1 ] || die "tbmesh inventory failed; see $LOG/inventory.log"
    # Fail closed: an unfit lab keeps its last good tbmesh.conf and gres.conf (a fresh lab takes what it has).
    if [ "$rc" = 0 ] || [ ! -s "$ETC/tbmesh.conf" ]; then
        cp "$inv/tbmesh.conf" "$ETC/tbmesh.conf"
        cp "$inv/gres.conf" "$ETC/gres.conf"
    fi
    return "$rc"
}

# routes: every Mac runs `macnode netplan --os linux` for itself (what an admin runs on a real Mac, in
# ip(8) form): its addresses, routes to the other Macs' Thunderbolt addresses over the cables, and IPv4
# forwarding on a ring, so that Open MPI reaches every address a peer has. Routes through a cut cable fail
# (as on a Mac); `mend` runs it again.
routes() {
    local n script
    [ -s "$ETC/tbmesh.conf" ] || { say "no tbmesh.conf yet: the Macs' routes are not set"; return 0; }
    for n in $(plan_rows node | cut -f2); do
        script=$NODES/$n/netplan.sh
        in_node "$n" "$MACNODE" netplan --conf "$ETC/tbmesh.conf" --host "$n" --os linux > "$script" 2>> "$LOG/netplan.log" &&
            in_node "$n" sh "$script" >> "$LOG/netplan.log" 2>&1 ||
            echo "$n: the plan did not apply whole (a cable cut?); see $script" >> "$LOG/netplan.log"
    done
}

# node_lines: slurm.conf NodeName and PartitionName lines: the Macs' from the inventory, with the address
# where slurmctld reaches each one's slurmd (the bridge host in bridge mode, the Mac itself in direct
# mode); the Linux node and the partitions from the lab's spec.
node_lines() {
    local row n addr line
    while IFS= read -r line; do
        case "$line" in NodeName=*) ;; *) continue ;; esac
        n=${line%% *}; n=${n#NodeName=}
        row=$(node_row "$n")
        [ -n "$row" ] || die "the inventory names $n, which is not in the lab's plan"
        if [ "$(field "$row" mode)" = direct ]; then
            addr=$(field "$row" mgmt)
        elif [ -n "$(field "$row" bridge)" ]; then
            addr=$(field "$(bridge_row "$(field "$row" bridge)")" mgmt)
        else
            addr=$CTL_ADDR
        fi
        echo "$line NodeAddr=$addr State=UNKNOWN"
    done < "$LAB/inventory/slurm-nodes.conf"
    local linux macs
    linux=$(plan_rows linux | cut -f2 | paste -sd'|')
    "$GEN" slurm-nodes "$ETC/lab.conf" | grep -E "^NodeName=($linux) " \
        || die "the generator could not write the Linux node lines"
    macs=$(plan_rows node | cut -f2 | paste -sd,)
    # One queue: 'all' holds every node (job_submit/tbmesh keeps Linux jobs off the Macs there); 'mac' and
    # 'linux' hold one kind each.
    echo "PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
    echo "PartitionName=mac Nodes=$macs Default=NO MaxTime=INFINITE State=UP"
    echo "PartitionName=linux Nodes=${linux//|/,} Default=NO MaxTime=INFINITE State=UP"
}

# write_healthcheck: Slurm's HealthCheckProgram for the lab. slurmd runs it as root with SLURMD_NODENAME;
# for a Mac it is `macnode check --drain` (a bridge-mode Mac's facts come from its agent; a direct-mode Mac
# probes itself, here from its recorded outputs). Linux nodes pass.
write_healthcheck() {
    mkdir -p -m 0755 "$RUN/health"   # the verdicts tbmesh metrics reads: root's alone
    cat > "$ETC/healthcheck" <<EOF
#!/bin/sh
# HealthCheckProgram of the tbmesh embedded lab (generated by tbmesh-lab)
export SLURM_CONF=$ETC/slurm.conf PATH=/usr/sbin:/usr/bin:/sbin:/bin
node=\${SLURMD_NODENAME:-\$(hostname)}
replay=""
[ "\$(hostname)" = "\$node" ] && [ -d "$NODES/\$node/replay" ] && replay="--replay $NODES/\$node/replay"
exec "$MACNODE" check --drain --if-mac --verdict-dir "$RUN/health" --conf "$ETC/tbmesh.conf" --node "\$node" --munge-socket "$MUNGE_SOCKET" \$replay >> "$LOG/healthcheck.log" 2>&1
EOF
    chmod 755 "$ETC/healthcheck"
}

# health NODE...: run the health check of these Macs now, where slurmd runs it (the bridge host for
# bridge-mode Macs, the Mac for direct-mode ones).
cmd_health() {
    need_root
    [ $# -ge 1 ] || die "usage: tbmesh-lab health NODE..."
    local n rc=0
    for n in "$@"; do
        [ -n "$(node_row "$n")" ] || die "no node '$n' in the lab; nodes: $(all_nodes | paste -sd' ')"
        if bridge_nodes | grep -qx "$n"; then
            SLURMD_NODENAME=$n "$ETC/healthcheck" || rc=1
        else
            in_node "$n" env SLURMD_NODENAME="$n" "$ETC/healthcheck" || rc=1
        fi
        tail -n 3 "$LOG/healthcheck.log" | grep "^$n: " || true
    done
    return $rc
}


# fill TEMPLATE: the template with every @NAME@ replaced by the lab's value of NAME.
fill() {
    local name args=()
    for name in CLUSTER CTL_HOST CTL_ADDR CTLD_PORT DBD_PORT DB_PORT MUNGE_SOCKET SLURM_PLUGINS TBM_PLUGINS \
                ETC LAB RUN LOG DB_SECRET; do
        args+=(-e "s|@$name@|${!name}|g")
    done
    sed "${args[@]}" "$1"
    ! grep -q '@[A-Z_]*@' < <(sed "${args[@]}" "$1") || die "$1 names a value the lab does not know: $(sed "${args[@]}" "$1" | grep -o '@[A-Z_]*@' | head -n1)"
}

write_slurm_conf() {
    local CTL_HOST DB_SECRET=
    CTL_HOST=$(hostname -s)
    [ -n "$SLURM_PLUGINS" ] && [ -e "$SLURM_PLUGINS/select_cons_tres.so" ] || die "Slurm's plug-ins are not in" \
        "'${SLURM_PLUGINS:-(unknown)}': configure did not find them; run configure --with-slurm-system-plugindir=DIR" \
        "(the folder holding select_cons_tres.so) and scripts/build.sh again, or set TBMESH_SLURM_PLUGINDIR"
    [ -e "$TBM_PLUGINS/spank_tbmesh.so" ] && [ -e "$TBM_PLUGINS/job_submit_tbmesh.so" ] \
        || die "the plug-ins are not installed in $TBM_PLUGINS: run scripts/build.sh"
    fill "$HERE/slurm.conf.in" > "$ETC/slurm.conf"
    node_lines >> "$ETC/slurm.conf"
    write_healthcheck
    echo "required $TBM_PLUGINS/spank_tbmesh.so conf=$ETC/tbmesh.conf macnode=$MACNODE" \
         "munge_socket=$MUNGE_SOCKET jobs_dir=/tmp/tbmesh-jobs" > "$ETC/plugstack.conf"
    DB_SECRET=$(cat "$ETC/db.secret")
    ( umask 077; fill "$HERE/slurmdbd.conf.in" > "$ETC/slurmdbd.conf" )
    chmod 600 "$ETC/slurmdbd.conf"
}

start_slurmctld() {
    mkdir -p "$LAB/state/slurmctld"
    slurmctld
    wait_for slurmctld 30 scontrol ping
}

# end_orphaned_jobs REASON: every node goes DOWN with REASON before any slurmd of this start registers:
# the jobs slurmctld recovered from its state (their processes went with the last lab) end at once, as
# NODE_FAIL (a batch job that may be requeued is requeued), instead of holding the nodes until a timeout.
# ReturnToService=2 brings each node back when its slurmd registers.
end_orphaned_jobs() {
    local running
    # Nodes the last 'down' marked DOWN come back too (ReturnToService=2): wait for job_submit to see it.
    [ -z "$(sinfo -h -N -t down -o %N 2>/dev/null)" ] || ORPHANS_ENDED=1
    running=$(squeue -h -t RUNNING,COMPLETING,CONFIGURING -o %i 2>/dev/null | paste -sd, -)
    [ -n "$running" ] || return 0
    scontrol update NodeName="$(all_nodes | paste -sd, -)" State=DOWN Reason="$1" \
        || die "could not mark the nodes DOWN to end the jobs of the last lab ($running); see 'tbmesh-lab logs slurmctld'"
    echo "$(date +%T) jobs $running: their nodes marked DOWN ($1)" >> "$LOG/up.log"
    ORPHANS_ENDED=1
}

# macs_submittable: job_submit/tbmesh, which refreshes its view of the nodes every few seconds, accepts a job
# on all the Macs of every group (sbatch --test-only as a lab user).
macs_submittable() {
    local g n
    while read -r g n; do
        (cd "$LAB/work/${LAB_USERS[0]}" && runuser -u "${LAB_USERS[0]}" -- env SLURM_CONF="$SLURM_CONF" \
            sbatch --test-only --gres="tbmesh:$g:$n" --wrap true) > /dev/null 2>&1 || return 1
    done < <(plan_rows node | tr '\t' '\n' | sed -n 's/^group=//p' | sort | uniq -c | awk '{ print $2, $1 }')
}

# wait_macs_submittable: after nodes were DOWN at this start (marked by the last 'down' or here), until
# job_submit/tbmesh sees them back (else the first Mac jobs are refused as "down"); at most 30 s, then say so.
wait_macs_submittable() {
    local end=$((SECONDS + 30))
    [ "${ORPHANS_ENDED:-0}" = 1 ] || return 0
    until macs_submittable; do
        if [ "$SECONDS" -ge "$end" ]; then
            say "job_submit/tbmesh did not accept a job on every group within 30s of the nodes' return; see 'tbmesh-lab logs slurmctld'"
            return 0
        fi
        sleep 0.5
    done
}

# start_slurmd NODE: the node's slurmd, on the bridge host (bridge mode) or inside the node.
start_slurmd() {
    mkdir -p "$LAB/spool/slurmd-$1"
    if bridge_nodes | grep -qx "$1"; then in_bridge "$1" slurmd -N "$1"; else in_node "$1" slurmd -N "$1"; fi
}

start_slurmds() {
    local n
    for n in $(all_nodes); do start_slurmd "$n"; done
}

nodes_ready() {
    local bad
    bad=$(sinfo -h -N -o '%N %T' | awk '$2 !~ /^(idle|mixed|allocated)/' | wc -l)
    [ "$bad" = 0 ] && [ "$(sinfo -h -N -o '%N' | sort -u | wc -l)" = "$(all_nodes | wc -l)" ]
}

# down_slurm: while slurmctld still answers, the lab's nodes go DOWN with the reason: their jobs end now
# (NODE_FAIL, recorded) rather than being found orphaned at the next 'up'.
down_slurm() {
    [ -s "$RUN/slurmctld.pid" ] && kill -0 "$(cat "$RUN/slurmctld.pid")" 2>/dev/null || return 0
    [ -n "$(timeout 10 squeue -h -t RUNNING,COMPLETING,CONFIGURING -o %i 2>/dev/null)" ] || return 0
    timeout 10 scontrol update NodeName="$(all_nodes | paste -sd, -)" State=DOWN Reason="tbmesh-lab down: the lab was taken down" \
        >/dev/null 2>&1 || true
}
