#!/usr/bin/env bash
# report-1m.sh: `tbmesh report` over a site's year of accounting against `sacct --parsable2` dumping the same
# jobs, in one run. Loads a synthetic history of N jobs (default 1,000,000: mostly Linux jobs, a tenth Mac
# jobs on studio-a and mini-b, six accounts, several partitions and states) straight into the lab cluster's
# job table in MariaDB, then prints wall time and peak memory (/usr/bin/time -v) of both over the whole year
# and over a tenth of it (N/10 jobs), to show the report's memory does not grow with the number of jobs; over
# the tenth also `tbmesh report --efficiency`, which reads each job's steps as sacct does.
# The synthetic jobs are deleted at the end (also when interrupted): the database is left as it was; with
# REPORT_1M_KEEP=1 they stay for the next run, which then loads nothing when it finds the same N jobs there.
# REPORT_1M_SPANS lists the periods measured, in days back from the history's end (default "365 36").
# Usage: tests/perf/report-1m.sh [N]   (as root, with the lab up:
#   flock /work/lab.lock bash -c 'lab/tbmesh-lab up && tests/perf/report-1m.sh; lab/tbmesh-lab down')
set -euo pipefail
N=${1:-1000000}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
LAB=${TBMESH_LAB_DIR:-/var/lib/tbmesh-lab}
export SLURM_CONF=$LAB/etc/slurm.conf
TBMESH=${TBMESH_CMD:-$SRC/build/inst/bin/tbmesh}
TAG=tbm-perf-synthetic                  # job_name of every job this script inserts
FIRST_ID=900000000                      # their job ids: far above what the lab hands out
db() { mariadb --socket="$LAB/run/mysql/mysqld.sock" -uroot -N -B tbmlab_acct_db "$@"; }
sacctmgr -n show cluster > /dev/null || { echo "report-1m: the lab is not up (lab/tbmesh-lab up)" >&2; exit 1; }
[ -x "$TBMESH" ] || { echo "report-1m: $TBMESH is missing: scripts/build.sh first" >&2; exit 1; }

cleanup() { db -e "DELETE FROM tbmlab_job_table WHERE job_name = '$TAG' AND id_job >= $FIRST_ID"; }
loaded() { db -e "SELECT COUNT(*), COALESCE(MIN(time_submit), 0), COALESCE(MAX(time_submit), 0) FROM tbmlab_job_table WHERE job_name = '$TAG' AND id_job >= $FIRST_ID"; }
[ "${REPORT_1M_KEEP:-0}" = 1 ] || trap cleanup EXIT

TRES_TBM=$(db -e "SELECT id FROM tres_table WHERE type = 'gres' AND name = 'tbmesh'")
ALICE=$(id -u tbm-alice); BOB=$(id -u tbm-bob)
ASSOC=$(db -e "SELECT id_assoc FROM tbmlab_assoc_table WHERE user = 'tbm-alice' LIMIT 1")
NOW=$(date +%s)
END=$(( NOW / 86400 * 86400 - 86400 ))          # the history ends at midnight UTC yesterday ...
BEGIN=$(( END - 365 * 86400 ))                   # ... and spans a year
STEP=$(( 365 * 86400 / N ))                      # seconds between submits
[ "$STEP" -ge 1 ] || STEP=1
read -r HAVE FIRST _ <<<"$(loaded)"
if [ "${REPORT_1M_KEEP:-0}" = 1 ] && [ "$HAVE" = "$N" ]; then
    BEGIN=$FIRST END=$(( FIRST + 365 * 86400 ))          # the history loaded by an earlier run
    echo "report-1m: reusing the $N synthetic jobs already loaded ($(date -u -d "@$BEGIN" +%F) to $(date -u -d "@$END" +%F))"
else
cleanup

# One INSERT from MariaDB's sequence engine: job i is submitted at BEGIN + i*STEP; every tenth job is a Mac job
# (studio-a: 4 or 2 Macs; mini-b: 4 or 1), the rest Linux jobs of 1 to 8 nodes; states mostly COMPLETED (3),
# some FAILED (5), CANCELLED (4) and TIMEOUT (6).
echo "report-1m: loading $N synthetic jobs ($(date -u -d "@$BEGIN" +%F) to $(date -u -d "@$END" +%F)) ..."
t0=$(date +%s.%N)
db <<EOF
INSERT INTO tbmlab_job_table
  (mod_time, deleted, account, cpus_req, derived_ec, exit_code, flags, timelimit, time_submit, time_eligible,
   time_start, time_end, time_suspended, id_array_job, id_array_task, id_assoc, id_group, id_job, id_qos,
   id_resv, id_wckey, id_user, het_job_id, het_job_offset, state_reason_prev, kill_requid, nodelist, nodes_alloc, node_inx, \`partition\`, priority, state,
   tres_alloc, tres_req, work_dir, job_name, submit_line)
SELECT $NOW, 0,
  ELT(1 + seq % 6, 'lab-ml', 'lab-hpc', 'lab-bio', 'lab-chem', 'lab-phys', 'lab-vision'),
  cpus, 0, 0, 0, 1440, sub, sub, sub + w, sub + w + d, 0, 0, 4294967294, $ASSOC, 0, $FIRST_ID + seq, 1,
  0, 0, IF(seq % 3 = 0, $BOB, $ALICE), 0, 4294967294, 0, NULL, nl, n, '', part, 1, st,
  CONCAT('1=', cpus, ',2=', cpus * 4096, ',4=', n, ',5=', cpus, IF(mac, CONCAT(',$TRES_TBM=', n), '')),
  CONCAT('1=', cpus, ',4=', n, IF(mac, CONCAT(',$TRES_TBM=', n), '')), '/tmp', '$TAG',
  IF(mac AND seq % 7 = 0, 'sbatch --gres=tbmesh:4 --mlx-backend=jaccl train.sh', 'sbatch job.sh')
FROM (
  SELECT seq, mac, n, nl, IF(mac, 'mac', ELT(1 + seq % 3, 'linux', 'all', 'long')) AS part,
         n * IF(mac, 24, 32) AS cpus, $BEGIN + seq * $STEP AS sub, (seq * 7919) % 3600 AS w,
         60 + (seq * 104729) % 14400 AS d,
         IF(seq % 23 = 0, 5, IF(seq % 31 = 0, 4, IF(seq % 47 = 0, 6, 3))) AS st
  FROM (
    SELECT seq, seq % 10 = 0 AS mac,
           IF(seq % 10 = 0, ELT(1 + seq % 4, 4, 2, 4, 1), 1 + seq % 8) AS n,
           IF(seq % 10 = 0, ELT(1 + seq % 4, 'mac[01-04]', 'mac[01-02]', 'mac[05-08]', 'mac05'),
              IF(seq % 8 = 0, CONCAT('lnx', LPAD(seq % 200, 3, '0')),
                 CONCAT('lnx[', LPAD(seq % 200, 3, '0'), '-', LPAD(seq % 200 + seq % 8, 3, '0'), ']'))) AS nl
    FROM seq_0_to_$((N - 1))
  ) a
) b;
EOF
awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "report-1m: loaded in %.1f s\n", b - a }'
fi

# measure LABEL CMD...: wall time and peak RSS of CMD (stdout counted in lines, then thrown away).
measure() {
    local label=$1 log rc=0; shift
    log=$(mktemp)
    /usr/bin/time -v "$@" 2> "$log" | wc -l > "$log.lines" || rc=$?
    [ "$rc" = 0 ] || { echo "  $label failed (exit $rc):"; grep -v '^\s' "$log" | head -n 5 | sed 's/^/    /'; }
    printf '  %-34s wall %8s  peak RSS %8d KiB  (%s lines out)\n' "$label" \
        "$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")" \
        "$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")" "$(cat "$log.lines")"
    grep -h '^tbmesh report:' "$log" | sed 's/^/    /' || true
    rm -f "$log" "$log.lines"
}

iso() { date -d "@$1" +%Y-%m-%dT%H:%M:%S; }
for span in ${REPORT_1M_SPANS-365 36}; do
    S=$(( END - span * 86400 )); E=$END
    jobs=$(db -e "SELECT COUNT(*) FROM tbmlab_job_table WHERE job_name = '$TAG' AND time_eligible < $E AND time_end >= $S")
    echo "report-1m: $span days, $jobs synthetic jobs in the period"
    measure "tbmesh report --csv" env TBMESH_REPORT_STATS=1 "$TBMESH" report --since "$(iso "$S")" --until "$(iso "$E")" --csv
    measure "sacct -a --parsable2" sacct -a --parsable2 -S "$(iso "$S")" -E "$(iso "$E")"
    [ "$span" -gt 36 ] ||
        measure "tbmesh report --csv --efficiency" env TBMESH_REPORT_STATS=1 "$TBMESH" report --since "$(iso "$S")" \
            --until "$(iso "$E")" --csv --efficiency
done
