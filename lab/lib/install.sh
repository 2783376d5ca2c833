# install.sh (sourced by tbmesh-lab): what the nodes run is installed into the lab's state folder ($INST,
# under TBMESH_LAB_DIR): readable by the lab's users and visible in every node's view, wherever the source
# was cloned (a clone under /root is closed to the lab's users; one under /tmp is not what a simulated Mac
# sees, since each has its own /tmp). slurm.conf, plugstack.conf, the health check and the agents use it.

install_nodes_tree() {
    [ -d "$BUILD/inst" ] || die "nothing is installed in $BUILD/inst: run scripts/build.sh (or set TBMESH_BUILDDIR)"
    rm -rf "$INST.new"
    mkdir -p "$INST.new"
    cp -a "$BUILD/inst/." "$INST.new/"
    install -D -m 755 "$HERE/lib/keepalive" "$INST.new/libexec/tbmesh-lab/keepalive"
    install -m 755 "$HERE/lib/rsh" "$INST.new/libexec/tbmesh-lab/rsh"   # Open MPI's ssh between the Macs
    # What the lab tests run inside jobs, beside the product.
    if [ -x "$BUILD/tests/mlxcheck/tbm-mlxcheck" ]; then
        install -m 755 "$BUILD/tests/mlxcheck/tbm-mlxcheck" "$INST.new/libexec/tbmesh-lab/tbm-mlxcheck"
    fi
    chown -R root:root "$INST.new"
    chmod -R u=rwX,go=rX "$INST.new"
    rm -rf "$INST"
    mv "$INST.new" "$INST"
    local u
    for u in "${LAB_USERS[@]}"; do
        runuser -u "$u" -- test -x "$MACNODE" || die "the lab's user $u cannot run $MACNODE: every folder above" \
            "$LAB must be open to others (chmod o+x), or set TBMESH_LAB_DIR to a folder that is"
    done
}
