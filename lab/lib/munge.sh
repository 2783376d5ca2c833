# munge.sh (sourced by tbmesh-lab): the lab's own munged, its key and socket under the state folder.

MUNGE_SOCKET=$RUN/munge/munge.socket.2

start_munge() {
    mkdir -p "$ETC/munge" "$RUN/munge" "$LOG"
    [ -s "$ETC/munge/munge.key" ] || mungekey --create --keyfile="$ETC/munge/munge.key" --bits=1024
    chown -R munge:munge "$ETC/munge" "$RUN/munge"
    chmod 700 "$ETC/munge"; chmod 600 "$ETC/munge/munge.key"; chmod 755 "$RUN/munge"
    touch "$LOG/munged.log"; chown munge:munge "$LOG/munged.log"
    runuser -u munge -- munged --key-file="$ETC/munge/munge.key" --socket="$MUNGE_SOCKET" \
        --pid-file="$RUN/munge/munged.pid" --log-file="$LOG/munged.log" --seed-file="$RUN/munge/munged.seed"
    wait_for munged 10 munge -S "$MUNGE_SOCKET" -n
}
