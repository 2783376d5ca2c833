#!/usr/bin/env bash
# 0120-elsewhere.t: the lab runs from a clone in the two places a root user clones into first: under /tmp
# (each simulated Mac has its own /tmp, so nothing there is visible inside a Mac) and under /root (0700: the
# lab's users cannot reach it). The clone reuses this tree's build (the lab needs only what the build
# installed, the generator and tbmesh); the lab installs what the nodes run in its state folder. One Mac job
# and one Linux job each time; the lab is left down (9990 takes it from there).
. "$(dirname "$0")/lib.sh"
no_jobs
"$LABCMD" down > /dev/null 2>&1

# clone DIR: this tree's sources (as git has them, with what is not committed yet) and the build's parts.
clone() {
    rm -rf "$1"; mkdir -p "$1"
    if git -C "$T_SRC" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
        (cd "$T_SRC" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp -a --parents -t "$1" 2>/dev/null)
    else
        (cd "$T_SRC" && tar --exclude='./build*' -cf - .) | tar -xf - -C "$1"
    fi
    mkdir -p "$1/build"
    cp -a "$T_BUILD/inst" "$T_BUILD/lab" "$1/build/"
    mkdir -p "$1/build/tbmesh" "$1/build/macnode"
    cp -a "$T_BUILD/tbmesh/tbmesh" "$1/build/tbmesh/"
}

for dir in "/tmp/tbmesh-clone-$$" "/root/tbmesh-clone-$$"; do
    clone "$dir"
    [[ "$dir" != /root/* ]] || chmod 700 "$dir"    # as root's home is: closed to the lab's users
    t_ok "$dir: tbmesh-lab up from the clone" "$dir/lab/tbmesh-lab" up
    t_match "$dir: slurm.conf names the lab's installed plug-ins, not the clone" \
        "^PluginDir=[^ ]*:$LAB/inst/lib/slurm-tbmesh$" "$(grep '^PluginDir=' "$SLURM_CONF")"
    t_is "$dir: a Linux job runs" "lnx01" "$(as tbm-alice srun -Q -p linux -N1 hostname 2>&1)"
    t_is "$dir: a mini-b job (direct mode) runs on its 4 Macs" "mac05 mac06 mac07 mac08" \
        "$(as tbm-alice salloc -Q --gres=tbmesh:mini-b:4 srun hostname 2>&1 | grep -E '^(mac|lnx)[0-9]+$' | sort | paste -sd' ')"
    t_is "$dir: a studio-a job (bridge mode, through the Macs' agents) runs" "mac01 mac02 mac03 mac04" \
        "$(as tbm-alice salloc -Q --gres=tbmesh:studio-a:4 srun hostname 2>&1 | grep -E '^(mac|lnx)[0-9]+$' | sort | paste -sd' ')"
    no_jobs
    t_ok "$dir: tbmesh-lab down from the clone" "$dir/lab/tbmesh-lab" down
    rm -rf "$dir"
done
# The tests after this one run on this tree's lab again.
t_ok "the lab is up again from this tree" "$LABCMD" up
t_done
