# prometheus.sh (sourced by tbmesh-lab): a real Prometheus (Debian's prometheus package) on the bridge host,
# listening on loopback only, scraping every Mac's agent (its metrics endpoint on the management network) and
# the bridge host's `tbmesh metrics`, with the project's rules loaded (etc/prometheus/). Its data live in
# $LAB/prometheus for the lab's life; `tbmesh-lab status` prints its address. Left out (said once) where the
# prometheus binary is missing; TBMESH_LAB_PROMETHEUS=no leaves it out on purpose.

PROM_ADDR=127.0.0.1:19090               # the lab's Prometheus (a port of its own, on loopback)
PROM_SCRAPE_S=${TBMESH_LAB_SCRAPE_S:-2}  # the lab scrapes often, so that a test sees a change within seconds
EXPORTER_ADDR=127.0.0.1:19432           # the bridge host's `tbmesh metrics`
PROM_PIDFILE=prometheus-keepalive.pid
EXPORTER_PIDFILE=exporter-keepalive.pid

prometheus_wanted() {
    [ "${TBMESH_LAB_PROMETHEUS:-yes}" != no ] && command -v prometheus >/dev/null 2>&1
}

# write_prometheus_conf: the scrape configuration of the lab's Macs and bridge host.
write_prometheus_conf() {
    local n row targets="" rules
    for n in $(plan_rows node | cut -f2); do
        row=$(node_row "$n")
        targets+="${targets:+, }'$(field "$row" mgmt):$METRICS_PORT'"
    done
    rules=$SRC/etc/prometheus/tbmesh.rules.yml
    {
        echo "# the embedded lab's Prometheus (written by tbmesh-lab up)"
        echo "global:"
        echo "  scrape_interval: ${PROM_SCRAPE_S}s"
        echo "  scrape_timeout: 1s"
        echo "  evaluation_interval: ${PROM_SCRAPE_S}s"
        if [ -r "$rules" ]; then
            echo "rule_files:"
            echo "  - $rules"
        fi
        echo "scrape_configs:"
        echo "  - job_name: tbmesh-macs"
        echo "    static_configs:"
        echo "      - targets: [$targets]"
        echo "  - job_name: tbmesh-slurm"
        echo "    static_configs:"
        echo "      - targets: ['$EXPORTER_ADDR']"
    } > "$ETC/prometheus.yml"
}

prometheus_ready() {
    curl -fsS -m 2 "http://$PROM_ADDR/-/ready" >/dev/null 2>&1
}

start_prometheus() {
    prometheus_wanted || { say "no Prometheus in this lab (prometheus is not installed, or TBMESH_LAB_PROMETHEUS=no)"; return 0; }
    write_prometheus_conf
    mkdir -p "$LAB/prometheus"
    : > "$LOG/prometheus.log"
    (close_fds; setsid "$KEEPALIVE" "$RUN/$PROM_PIDFILE" "$LOG/keepalive-prometheus.log" "$KEEPALIVE_THROTTLE" \
        prometheus --config.file="$ETC/prometheus.yml" --storage.tsdb.path="$LAB/prometheus" \
        --storage.tsdb.retention.time=2d --web.listen-address="$PROM_ADDR" --web.enable-lifecycle \
        --log.level=warn) < /dev/null >> "$LOG/prometheus.log" 2>&1 &
    if [ -x "$TBMESH" ]; then
        : > "$LOG/exporter.log"
        (close_fds; setsid "$KEEPALIVE" "$RUN/$EXPORTER_PIDFILE" "$LOG/keepalive-exporter.log" "$KEEPALIVE_THROTTLE" \
            /bin/sh -c 'exec "$@" 2>> "$0"' "$LOG/exporter.log" \
            "$TBMESH" metrics --listen "$EXPORTER_ADDR" --conf "$ETC/tbmesh.conf" --interval "$PROM_SCRAPE_S" \
            --health-dir "$RUN/health" --records-every "$PROM_SCRAPE_S" --records-grace 5) < /dev/null >> "$LOG/exporter.log" 2>&1 &
    fi
    wait_for "Prometheus (http://$PROM_ADDR)" 30 prometheus_ready
}

stop_prometheus() {
    local f p
    for f in "$RUN/$PROM_PIDFILE" "$RUN/$EXPORTER_PIDFILE"; do
        p=$(cat "$f" 2>/dev/null) || continue
        [ -n "$p" ] && kill -TERM "$p" 2>/dev/null
    done
    true
}

prometheus_status() {
    if prometheus_ready; then
        printf '  %-10s running: http://%s (scrapes the Macs every %s s; rules: etc/prometheus/)\n' prometheus "$PROM_ADDR" "$PROM_SCRAPE_S"
    elif prometheus_wanted; then
        printf '  %-10s NOT RUNNING (log: %s)\n' prometheus "$LOG/prometheus.log"
    fi
}
