#!/usr/bin/env bash
# exporter.sh: `tbmesh metrics` end to end on 127.0.0.1, with stand-in scontrol and squeue on PATH that print
# the captures of tests/fixtures/slurm (the real commands are met in the lab): --once prints the Macs, groups and
# health verdicts (root's files only: another user's, a link, garbage are refused and said once); the server
# answers /metrics (promtool check metrics takes it, when installed), / , 404, 405 and garbage; a flood of idle
# connections and a flood of scrapes leave it answering, and the scrapes ask Slurm nothing more; Slurm that
# stops answering (or hangs) gives tbmesh_slurm_up 0 at once, the Macs' series go after --max-age, one log
# line; it comes back; a changed tbmesh.conf is read again; SIGTERM stops it. Bad options exit 2. The Mac
# jobs that ended (a stand-in sacct) are looked up in a record store (as root: the store's files are root's):
# those without a complete record are counted and named once in the log; sacct failing leaves the series out.
set -u
export LC_ALL=C

TBMESH=${TBM_TBMESH:-../tbmesh/tbmesh}
FIXTURES=${TBM_FIXTURES:?set TBM_FIXTURES to tests/fixtures (make check does)}
[ -x "$TBMESH" ] || { echo "SKIP: exporter.sh: no tbmesh command at $TBMESH (built --without-slurm?)"; exit 77; }
command -v curl >/dev/null 2>&1 || { echo "SKIP: exporter.sh: curl is not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/tbm-exporter.XXXXXX")
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
has() {   # FILE LINE: the file holds this exact line
    grep -qxF -- "$2" "$1" || fail "no line [$2] in $1: $(head -c 3000 "$1")"
}
lacks() {   # FILE TEXT
    ! grep -qF -- "$2" "$1" || fail "[$2] should not be in $1"
}

# --- the stand-ins: scontrol and squeue as $T/mode says (up, down, hang), every call recorded -------------------
mkdir -p "$T/bin" "$T/health"
echo up > "$T/mode"
cat > "$T/bin/scontrol" <<EOF
#!/bin/sh
echo "\$*" >> "$T/scontrol.calls"
case \$(cat "$T/mode") in
down) echo "slurm_load_node error: Unable to contact slurm controller (connect failure)" >&2; exit 1 ;;
hang) exec sleep 30 ;;
esac
cat "$FIXTURES/slurm/scontrol-22.05.txt"
exit 1   # as the real one: mac09 is not found
EOF
cat > "$T/bin/squeue" <<EOF
#!/bin/sh
echo "\$*" >> "$T/squeue.calls"
[ "\$(cat "$T/mode")" = up ] || { echo "squeue: error: Unable to contact slurm controller" >&2; exit 1; }
cat "$FIXTURES/slurm/squeue-24.11.txt"
EOF
cat > "$T/bin/sacct" <<EOF
#!/bin/sh
echo "\$*" >> "$T/sacct.calls"
[ "\$(cat "$T/sacct.mode" 2>/dev/null)" != down ] || { echo "sacct: error: Problem talking to the database: Connection refused" >&2; exit 1; }
cat "$T/sacct.out" 2>/dev/null
exit 0
EOF
chmod 755 "$T/bin/scontrol" "$T/bin/squeue" "$T/bin/sacct"
export PATH="$T/bin:$PATH"
printf 'ClusterName=testlab\nSlurmctldHost=ctl\n' > "$T/slurm.conf"
export SLURM_CONF=$T/slurm.conf
unset TBMESH_CONF
cp "$FIXTURES/conf/metrics.conf" "$T/tbmesh.conf"

# --- the health folder: root's verdicts, and files root must not trust -------------------------------------------
chmod 755 "$T/health"
now=$(date +%s)
printf '{"node":"mac01","verdict":"well","reason":"","time":%s}\n' "$now" > "$T/health/mac01.json"
printf '{"node":"mac03","verdict":"unwell","reason":"tbmesh: cable-missing at mac03:en2","time":%s}\n' "$now" \
    > "$T/health/mac03.json"
printf '{"node":"mac04","verd' > "$T/health/mac04.json"                     # truncated
ln -s "$T/health/mac01.json" "$T/health/mac05.json"                         # a link
printf '{"node":"mac01","verdict":"well","reason":"","time":1}\n' > "$T/health/mac06.json"   # about another Mac
root=0; [ "$(id -u)" = 0 ] && root=1
if [ $root = 1 ]; then
    printf '{"node":"mac02","verdict":"well","reason":"","time":%s}\n' "$now" > "$T/health/mac02.json"
    chown 65534 "$T/health/mac02.json"                                      # another user's
fi

# --- --once --------------------------------------------------------------------------------------------------------
run_once() { "$TBMESH" metrics --once --conf "$T/tbmesh.conf" --health-dir "$T/health" "$@" > "$T/once.txt" 2> "$T/once.err"; }
run_once; rc=$?
[ $rc = 0 ] || fail "--once: exit $rc: $(cat "$T/once.err")"
O=$T/once.txt
grep -q '^tbmesh_exporter_info{cluster="testlab",version="[0-9][0-9a-z.~+-]*"} 1$' "$O" || fail "no exporter_info: $(grep info "$O")"
has "$O" 'tbmesh_slurm_up 1'
has "$O" 'tbmesh_mac_state{group="studio-a",node="mac01",state="allocated"} 1'
has "$O" 'tbmesh_mac_state{group="ring-b",node="mac05",state="absent"} 1'
has "$O" 'tbmesh_mac_drained{group="studio-a",node="mac03"} 1'
has "$O" 'tbmesh_mac_drain_info{group="studio-a",node="mac04",reason="swap the PSU [ticket 4711]"} 1'
has "$O" 'tbmesh_group_macs{group="studio-a",state="allocated"} 2'
has "$O" 'tbmesh_group_macs{group="ring-b",state="down"} 3'
has "$O" 'tbmesh_group_jobs_running{group="studio-a"} 3'
if [ $root = 1 ]; then
    has "$O" 'tbmesh_health_ok{group="studio-a",node="mac01"} 1'
    has "$O" 'tbmesh_health_ok{group="studio-a",node="mac03"} 0'
    has "$O" "tbmesh_health_check_time_seconds{group=\"studio-a\",node=\"mac03\"} $now"
    lacks "$O" 'node="mac02"} 1'
    for why in 'mac02.json not used: .*owned by another user' 'mac04.json not used: health verdict: ' \
               'mac05.json not used: .*is a symbolic link' "mac06.json not used: health verdict: it is about 'mac01', not mac06"; do
        grep -q "$why" "$T/once.err" || fail "no log line [$why]: $(cat "$T/once.err")"
    done
else   # the folder is this user's, not root's: refused whole, and said
    grep -q "no health verdicts: .*owned by another user" "$T/once.err" || fail "non-root: $(cat "$T/once.err")"
fi
lacks "$O" 'tbmesh_health_ok{group="ring-b"'
grep -q -- '--all --oneliner show node mac\[01-07\]' "$T/scontrol.calls" || fail "scontrol called as: $(cat "$T/scontrol.calls")"
grep -q -- "--noheader --all --states=RUNNING --format=%A %N" "$T/squeue.calls" || fail "squeue called as: $(cat "$T/squeue.calls")"
if command -v promtool >/dev/null 2>&1; then
    promtool check metrics < "$O" > "$T/lint" 2>&1 && [ ! -s "$T/lint" ] || fail "promtool check metrics: $(cat "$T/lint")"
else
    echo "exporter.sh: promtool is not installed: the exposition is not checked by Prometheus' own checker"
fi
# --no-jobs asks squeue nothing; a Slurm that does not answer: exit 1, slurm_up 0, no Mac's series, said once
rm -f "$T/squeue.calls"
run_once --no-jobs
[ ! -e "$T/squeue.calls" ] || fail "--no-jobs ran squeue"
lacks "$O" 'tbmesh_group_jobs_running{'
echo down > "$T/mode"
run_once; rc=$?
[ $rc = 1 ] || fail "--once with Slurm down: exit $rc"
has "$O" 'tbmesh_slurm_up 0'
lacks "$O" 'tbmesh_mac_state{'
lacks "$O" 'tbmesh_group_macs{'
[ "$(grep -c 'Slurm did not answer: scontrol exited with 1: slurm_load_node error: Unable to contact slurm controller' "$T/once.err")" = 1 ] ||
    fail "Slurm down, --once's log: $(cat "$T/once.err")"
echo squeue-down > "$T/mode"   # scontrol answers, squeue does not: no reading in full
run_once; rc=$?
[ $rc = 1 ] || fail "--once with squeue down: exit $rc"
has "$O" 'tbmesh_slurm_up 0'
lacks "$O" 'tbmesh_mac_state{'
grep -q 'Slurm did not answer: squeue exited with 1: squeue: error: Unable to contact slurm controller' "$T/once.err" ||
    fail "squeue down, --once's log: $(cat "$T/once.err")"
echo up > "$T/mode"

# --- the Mac jobs' records ------------------------------------------------------------------------------------------------
has "$O" 'tbmesh_job_records_missing 0'   # sacct listed nothing
grep -q -- '-a -X -n -P -o JobIDRaw,State,End,NodeList,AdminComment -S now-86400 -E now' "$T/sacct.calls" ||
    fail "sacct called as: $(cat "$T/sacct.calls")"
if [ $root = 1 ]; then
    mkdir -p "$T/records/testlab"
    cp "$T/tbmesh.conf" "$T/tbmesh-rec.conf"
    echo "RecordDir=$T/records" >> "$T/tbmesh-rec.conf"
    sed 's/"cluster": "tbmlab"/"cluster": "testlab"/' "$FIXTURES/records/one-mac.json" > "$T/records/testlab/101.json"
    sed 's/"cluster": "tbmlab"/"cluster": "testlab"/; s/"phase": "end"/"phase": "start"/' \
        "$FIXTURES/records/studio-gpu.json" > "$T/records/testlab/103.json"   # its end never came
    at() { date -d "@$(( $(date +%s) - $1 ))" +%Y-%m-%dT%H:%M:%S; }
    {
        echo "101|COMPLETED|$(at 600)|mac05|TBM1:eyJ2IjoxfQ=="
        echo "103|FAILED|$(at 500)|mac[01-04]|TBM1:eyJ2IjoxfQ=="
        echo "105|TIMEOUT|$(at 400)|mac01|TBM1:eyJ2IjoxfQ=="            # no record
        echo "106|COMPLETED|$(at 5)|mac02|TBM1:eyJ2IjoxfQ=="             # ended a moment ago: not yet
        echo "107|CANCELLED by 1001|$(at 300)|None assigned|TBM1:eyJ2IjoxfQ=="   # never ran
        echo "108|COMPLETED|$(at 300)|lnx01|"                            # not a Mac job
        echo "109|RUNNING|Unknown|mac03|TBM1:eyJ2IjoxfQ=="
        echo "garbage"
    } > "$T/sacct.out"
    run_once --conf "$T/tbmesh-rec.conf"
    has "$O" 'tbmesh_job_records_missing 2'
    grep -qF "2 Mac jobs ended without a complete record in $T/records/testlab (jobs 105,103, the latest first): run \`tbmesh repro sync -j JOBS\` as root" \
        "$T/once.err" || fail "the missing records are not named: $(cat "$T/once.err")"
    grep -q "sacct printed 1 line that do not read; the first: not a line of sacct" "$T/once.err" ||
        fail "sacct's garbage not said: $(cat "$T/once.err")"
    echo down > "$T/sacct.mode"
    run_once --conf "$T/tbmesh-rec.conf"; rc=$?
    [ $rc = 0 ] || fail "--once with sacct down: exit $rc (Slurm's controller answers)"
    ! grep -q "^tbmesh_job_records_missing " "$O" || fail "sacct down: the series is served: $(grep records_missing "$O")"
    grep -q "Mac jobs' records not looked up: sacct exited with 1: sacct: error: Problem talking to the database" \
        "$T/once.err" || fail "sacct down not said: $(cat "$T/once.err")"
    rm -f "$T/sacct.mode" "$T/sacct.calls"
    run_once --conf "$T/tbmesh-rec.conf" --records-grace 0   # 106, ended 5 s ago, is looked for at once
    has "$O" 'tbmesh_job_records_missing 3'
    rm -f "$T/sacct.calls"
    run_once --conf "$T/tbmesh-rec.conf" --records-window 0
    [ ! -e "$T/sacct.calls" ] && ! grep -q "^tbmesh_job_records_missing " "$O" || fail "--records-window 0 asked sacct"
    rm -f "$T/sacct.out"
fi

# --- bad usage --------------------------------------------------------------------------------------------------------
usage() {   # WANT_RC TEXT ARGS...
    want=$1 text=$2; shift 2
    "$TBMESH" metrics "$@" > /dev/null 2> "$T/usage.err"; rc=$?
    [ "$rc" = "$want" ] && grep -q -- "$text" "$T/usage.err" || fail "tbmesh metrics $*: exit $rc: $(cat "$T/usage.err")"
}
usage 2 "--interval 0 is not a number of seconds from 1 to 3600" --interval 0
usage 2 "--max-age 20 is shorter than the interval and two time limits (55 s)" --max-age 20
usage 2 "give one of them" --once --listen 127.0.0.1:1
usage 2 "unexpected argument 'extra'" --once extra
usage 2 "--records-window 40d is not a number of seconds from 0 (none) to 2592000" --records-window 40d
usage 2 "--records-every 0 is not a number of seconds from 1 to 3600" --records-every 0
usage 2 "--records-grace -1 is not a number of seconds from 0 to 3600" --records-grace -1
usage 3 "give the lab's tbmesh.conf with --conf FILE" --once --conf "$T/none.conf"
"$TBMESH" metrics --help | grep -q -- '--listen ADDR\[:PORT\]' || fail "--help"

# --- the server ---------------------------------------------------------------------------------------------------------
URL=
for try in 1 2 3 4 5; do
    port=$((20000 + (RANDOM % 20000)))
    "$TBMESH" metrics --listen "127.0.0.1:$port" --conf "$T/tbmesh.conf" --health-dir "$T/health" --interval 1 \
        --timeout 2 --max-age 6 > "$T/serve.log" 2>&1 &
    pid=$!
    for i in $(seq 1 100); do
        grep -q "serving http://127.0.0.1:$port/metrics" "$T/serve.log" && { URL=http://127.0.0.1:$port; break 2; }
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    wait "$pid" 2>/dev/null; pid=
done
[ -n "$URL" ] || { fail "the server did not start: $(cat "$T/serve.log")"; echo "exporter.sh: $failures failure(s)"; exit 1; }

scrape() { curl -s -m 5 -o "$T/scrape.txt" -D "$T/scrape.head" -w '%{http_code}' "$URL${1:-/metrics}"; }
code=$(scrape)
[ "$code" = 200 ] || fail "GET /metrics: $code"
grep -qi '^Content-Type: text/plain; version=0.0.4; charset=utf-8' "$T/scrape.head" || fail "content type: $(cat "$T/scrape.head")"
has "$T/scrape.txt" 'tbmesh_group_jobs_running{group="studio-a"} 3'
if command -v promtool >/dev/null 2>&1; then
    promtool check metrics < "$T/scrape.txt" > "$T/lint" 2>&1 && [ ! -s "$T/lint" ] || fail "promtool on a scrape: $(cat "$T/lint")"
fi
[ "$(scrape /)" = 200 ] && grep -q 'href="/metrics"' "$T/scrape.txt" || fail "GET /: $(cat "$T/scrape.txt")"
[ "$(scrape /other)" = 404 ] || fail "GET /other is not 404"
[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST "$URL/metrics")" = 405 ] || fail "POST is not 405"
[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H 'Bad Header: x' "$URL/metrics")" = 400 ] || fail "a bad header is not 400"
# garbage on a raw connection: 400 with the reason, then closed
exec 3<>"/dev/tcp/127.0.0.1/${URL##*:}"
printf '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n' >&3
reply=$(timeout 5 cat <&3 | tr -d '\r' | head -c 600)
exec 3<&-
case $reply in *"400 Bad Request"*"starts with byte 0x16"*) ;; *) fail "garbage got: $reply" ;; esac

# a flood of idle connections (more than the server keeps) and then a scrape: answered
fds=()
for i in $(seq 1 150); do
    exec {fd}<>"/dev/tcp/127.0.0.1/${URL##*:}" && fds+=("$fd")
done
[ "$(scrape)" = 200 ] && grep -q '^tbmesh_slurm_up 1$' "$T/scrape.txt" || fail "no answer under a flood of idle connections"
for fd in "${fds[@]}"; do exec {fd}<&-; done
# a flood of scrapes (200, 8 at once) asks Slurm no more than its interval does
calls0=$(wc -l < "$T/scontrol.calls"); t0=$(date +%s)
seq 1 200 | xargs -P 8 -I{} curl -s -m 10 -o /dev/null -w '%{http_code}\n' "$URL/metrics" > "$T/codes"
t1=$(date +%s); calls1=$(wc -l < "$T/scontrol.calls")
[ "$(grep -c '^200$' "$T/codes")" = 200 ] || fail "scrape flood: $(sort "$T/codes" | uniq -c | tr '\n' ' ')"
[ $((calls1 - calls0)) -le $((t1 - t0 + 2)) ] || fail "200 scrapes in $((t1 - t0)) s ran scontrol $((calls1 - calls0)) times"

# Slurm stops answering: slurm_up 0 within a reading or two; the Macs' series go after --max-age; said once
wait_for() {   # SECONDS PATTERN [absent]: a scrape matches the pattern (or no longer does)
    local end=$(( $(date +%s) + $1 ))
    while [ "$(date +%s)" -le $end ]; do
        scrape > /dev/null
        if [ "${3:-}" = absent ]; then ! grep -q "$2" "$T/scrape.txt" && return 0
        else grep -q "$2" "$T/scrape.txt" && return 0; fi
        sleep 0.3
    done
    return 1
}
echo down > "$T/mode"
wait_for 10 '^tbmesh_slurm_up 0$' || fail "Slurm down: no tbmesh_slurm_up 0"
wait_for 15 '^tbmesh_mac_state{' absent || fail "Slurm down: the Macs' series stayed past --max-age"
grep -q '^tbmesh_health_ok{' "$T/scrape.txt" || [ $root = 0 ] || fail "Slurm down: the verdicts went too"
sleep 2   # more readings that fail: still one line
[ "$(grep -c 'Slurm did not answer' "$T/serve.log")" = 1 ] || fail "Slurm down: log: $(grep 'Slurm' "$T/serve.log")"
echo up > "$T/mode"
wait_for 10 '^tbmesh_mac_state{group="studio-a",node="mac01"' || fail "Slurm back: no Mac's series"
grep -q 'Slurm answers again' "$T/serve.log" || fail "Slurm back: not said"
# a scontrol that hangs: killed at --timeout, slurm_up 0, scrapes answered at once meanwhile
echo hang > "$T/mode"
wait_for 10 '^tbmesh_slurm_up 0$' || fail "Slurm hangs: no tbmesh_slurm_up 0"
s0=$(date +%s%N); scrape > /dev/null; s1=$(date +%s%N)
[ $(( (s1 - s0) / 1000000 )) -lt 1000 ] || fail "a scrape while scontrol hangs took $(( (s1 - s0) / 1000000 )) ms"
grep -q 'Slurm did not answer: scontrol: no answer within 2000 ms' "$T/serve.log" || fail "hang: $(grep Slurm "$T/serve.log")"
echo up > "$T/mode"
wait_for 10 '^tbmesh_slurm_up 1$' || fail "Slurm back after the hang"
# tbmesh.conf changes: read again; a broken one is refused and the last kept
printf 'Group=mini-c Nodes=mac[08-09] Topology=mesh Link=tb5 Rdma=no Mode=bridge Backends=mpi\n' >> "$T/tbmesh.conf"
wait_for 10 'tbmesh_group_macs{group="mini-c",state="down"} 2' || fail "tbmesh.conf changed: not read again"
grep -q 'tbmesh.conf changed: read again (3 groups, 9 Macs)' "$T/serve.log" || fail "conf change not said: $(tail -3 "$T/serve.log")"
[ "$(grep -c 'mac05.json not used' "$T/serve.log")" = 1 ] || fail "a refused verdict file was said again after the change"
echo 'Group=broken' >> "$T/tbmesh.conf"
sleep 2.5
[ "$(scrape)" = 200 ] && grep -q 'group="mini-c"' "$T/scrape.txt" || fail "a broken tbmesh.conf dropped the last one"
[ "$(grep -c 'tbmesh.conf: .*(the last one read is kept)' "$T/serve.log")" = 1 ] || fail "broken conf: $(tail -3 "$T/serve.log")"
# SIGTERM: it stops
kill -TERM "$pid"
for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then fail "still running 10 s after SIGTERM"; else
    wait "$pid"; rc=$?; pid=
    [ $rc = 0 ] || fail "exit $rc after SIGTERM"
    grep -q 'stopped$' "$T/serve.log" || fail "no 'stopped' in the log"
fi

if [ "$failures" -gt 0 ]; then
    echo "--- the server's log"; cat "$T/serve.log"
    echo "exporter.sh: $failures failure(s)"
    exit 1
fi
echo "exporter.sh: tbmesh metrics answers, refuses garbage, outlasts floods and a silent Slurm ($(wc -l < "$T/serve.log") log lines)"
exit 0
