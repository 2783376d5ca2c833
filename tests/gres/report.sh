#!/bin/sh
# report.sh: `tbmesh report`'s refusals of bad arguments, each with its message and exit status 2, before any
# Slurm daemon is asked (a reversed or empty period, one in the future, a bad month or length, two ways of
# saying the period, an unknown Mac group, an unknown grouping, a bad --top, two output formats, a stray
# argument, an unreadable tbmesh.conf). Unknown accounts, users and clusters need slurmdbd: lab test 0130.
tbmesh=${TBM_TBMESH:-../gres/tbmesh}
dir=$(mktemp -d)
fail=0
trap 'rm -rf "$dir"' EXIT
printf 'Group=studio-a Nodes=mac[01-02] Topology=mesh Link=tb5 Mode=direct Backends=ring\nCable=mac01:en2,mac02:en2 Addr=10.10.0.1/30,10.10.0.2/30 Speed=80\n' \
    > "$dir/tbmesh.conf"

# refused WHAT PATTERN ARGS...: the report exits 2 and says PATTERN (a grep -E expression) on stderr, nothing
# on stdout.
refused() {
    what=$1 pattern=$2; shift 2
    err=$("$tbmesh" report --conf "$dir/tbmesh.conf" "$@" 2>&1 >"$dir/out"); rc=$?
    if [ "$rc" != 2 ] || ! printf '%s\n' "$err" | grep -Eq "^tbmesh report: .*$pattern" || [ -s "$dir/out" ]; then
        echo "report: $what: exit $rc, said: $err"
        fail=1
    fi
}

refused "a reversed period" \
    "the period is reversed or empty \(since 2026-11-20T00:00:00, until 2026-11-10T00:00:00\): --since must come before --until" \
    --since 2026-11-20 --until 2026-11-10
refused "a reversed period in the future" "the period is reversed or empty .*--since must come before --until" \
    --since 2099-03-01 --until 2099-02-01
refused "an empty period" "the period is reversed or empty" --since 2026-11-10T10:00 --until 2026-11-10T10:00
refused "a period in the future" "the period starts in the future \(2099-01\): nothing has run yet; give an earlier start" \
    --month 2099-01
refused "a bad month" "'2026-13' is not a month: write YYYY-MM, e.g. --month 2026-11" --month 2026-13
refused "a bad length" "'7y' is not a length of time: write N followed by m, h, d or w" --last 7y
refused "a bad time" "--since: 'yesterday' is not a time: write YYYY-MM-DD, YYYY-MM-DDTHH:MM\[:SS\] or now" \
    --since yesterday
refused "--month with --since" "--month cannot be combined with --since/--until" --month 2026-11 --since 2026-11-02
refused "an unknown Mac group, with the groups" "--group nosuch: no such Mac group in tbmesh.conf; the groups are: studio-a$" \
    --last 7d --group nosuch
refused "an unknown grouping" "--by: 'colour' is not a grouping: use kind, group, account, user, partition, backend or state" \
    --by kind,colour
refused "a bad --top" "--top 0: give a number from 1 to 1000" --top 0
refused "two formats" "give one of --csv, --json and --html" --csv --json
refused "a stray argument" "unexpected argument 'lastweek'; see tbmesh report --help" lastweek
refused "an unknown option" "--colour is unknown or needs a value; see tbmesh report --help" --colour
err=$("$tbmesh" report --conf "$dir/none.conf" --last 1d 2>&1); rc=$?
if [ "$rc" != 2 ] || ! printf '%s\n' "$err" | grep -q "cannot read tbmesh.conf ($dir/none.conf): .*give its place with --conf"; then
    echo "report: a missing tbmesh.conf: exit $rc, said: $err"
    fail=1
fi
"$tbmesh" report --help | grep -q '^usage: tbmesh report \[PERIOD\]' || { echo "report: --help"; fail=1; }
exit $fail
