# common.sh (sourced by tbmesh-lab): messages, bounded waits and the lab's plan (nodes and cables, from the
# lab spec through the generator).

die() { echo "tbmesh-lab: $*" >&2; exit 1; }
say() { echo "tbmesh-lab: $*"; }

need_root() {
    [ "$(id -u)" = 0 ] || die "run as root: the lab makes network namespaces, veth cables and starts daemons"
}

# wait_for WHAT SECONDS CMD...: poll CMD until it succeeds; after SECONDS, die saying WHAT was not ready.
wait_for() {
    local what=$1 secs=$2 end=$((SECONDS + $2)); shift 2
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$end" ] || die "$what was not ready within ${secs}s; see 'tbmesh-lab logs'"
        sleep 0.2
    done
}

# close_fds: close every file descriptor above 2 of this (sub)shell, so that a daemon started from it keeps
# no pipe of the caller open (a test's $(tbmesh-lab revive ...) would wait for the agent to end) nor the
# caller's lock. Redirect the subshell's own stdio, not a command's inside it: bash keeps a copy of the
# caller's stdout while a command with redirections runs.
close_fds() {
    local fd
    for fd in /proc/"$BASHPID"/fd/*; do
        fd=${fd##*/}
        if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
}

# timed STEP: run one step of 'up' and note its wall time in the log.
timed() {
    local t=$SECONDS
    "$@"
    echo "$(date +%T) $1: $((SECONDS - t)) s" >> "$LOG/up.log"
}

# plan_rows KIND: the plan's rows of that kind (node, linux, cable), tab-separated.
plan_rows() { awk -F'\t' -v k="$1" '$1 == k' "$ETC/plan.tsv"; }
# field ROW KEY: the value of key=value in a plan row.
field() { tr '\t' '\n' <<<"$1" | sed -n "s/^$2=//p" | head -n1; }
all_nodes() { { plan_rows node; plan_rows linux; } | cut -f2; }
# bridge_hosts: the bridge hosts other than the controller (Bridge= in the spec), each a namespace of its own.
bridge_hosts() { plan_rows bridgehost | cut -f2; }
bridge_row() { plan_rows bridgehost | awk -F'\t' -v n="$1" '$2 == n'; }
# bridge_of MAC: the bridge host whose slurmd runs the Mac's slurmd ("": the controller, or a direct-mode Mac).
bridge_of() { field "$(node_row "$1")" bridge; }
# bridge_macs HOST: the Macs whose slurmds run on that bridge host.
bridge_macs() { plan_rows node | awk -F'\t' -v b="bridge=$1" '{ for (i = 3; i <= NF; i++) if ($i == b) print $2 }'; }
direct_nodes() { plan_rows node | grep -P '\tmode=direct(\t|$)' | cut -f2; plan_rows linux | cut -f2; }
bridge_nodes() { plan_rows node | grep -P '\tmode=bridge(\t|$)' | cut -f2; }
node_row() { { plan_rows node; plan_rows linux; } | awk -F'\t' -v n="$1" '$2 == n'; }

# make_plan [fresh]: the plan and the Macs' recorded outputs from the lab's spec, with the cables cut so far.
# At 'up' (fresh) the spec is taken from $SPEC (TBMESH_LAB_SPEC, else lab/lab.conf); later (a cut, a mend) the
# lab keeps the spec it came up with. A spec other than lab/lab.conf gets the inventory's hint from its own
# groups (their names and modes; the example's settings).
make_plan() {
    [ -x "$GEN" ] || die "the lab generator $GEN is missing: build first (scripts/build.sh) or set TBMESH_LAB_GEN"
    if [ "${1:-}" = fresh ] || [ ! -s "$ETC/lab.conf" ]; then
        [ -r "$SPEC" ] || die "the lab spec $SPEC is missing: set TBMESH_LAB_SPEC"
        cp "$SPEC" "$ETC/lab.conf"
        rm -f "$ETC/hint-base.conf"
        if ! cmp -s "$SPEC" "$SRC/lab/lab.conf"; then
            { grep -Ev '^(Group|Cable)=' "$HINT"; "$GEN" hint "$ETC/lab.conf"; } > "$ETC/hint-base.conf" ||
                die "the generator could not write the inventory's hint for $SPEC"
        fi
    fi
    local cuts=() c
    if [ -s "$ETC/cuts" ]; then
        while read -r c; do cuts+=(--cut "$c"); done < "$ETC/cuts"
    fi
    set -- "${cuts[@]}"
    "$GEN" plan "$ETC/lab.conf" "$@" > "$ETC/plan.tsv.new" || die "the generator rejected $SPEC (see above)"
    mv "$ETC/plan.tsv.new" "$ETC/plan.tsv"
    rm -rf "$NODES.new"
    "$GEN" outputs "$ETC/lab.conf" "$NODES.new" "$@" || die "the generator could not write the recorded macOS outputs"
    rm -rf "$NODES"
    mv "$NODES.new" "$NODES"
}
