#!/usr/bin/env bash
# 0080-conf-reload.t: job_submit/tbmesh reads tbmesh.conf again when it changes (before `scontrol
# reconfigure`); a bad file is logged with file:line and the last good configuration stays in force:
# slurmctld never dies of it.
. "$(dirname "$0")/lib.sh"

conf=$LAB/etc/tbmesh.conf
cp -p "$conf" "$conf.good"
log_lines=$(wc -l < "$LAB/log/slurmctld.log")

# A bad line: the plug-in logs where and keeps the last good groups.
sed -i 's/^Group=mini-b \(.*\) Topology=ring /Group=mini-b \1 Topology=donut /' "$conf"
t_ok "the file now has a bad line" grep -q 'Topology=donut' "$conf"
scontrol reconfigure
sleep 1
j=$(as tbm-alice sbatch --parsable -o /dev/null --gres=tbmesh:mini-b:4 --wrap true 2>&1)
t_match "a Mac job is still placed with the last good configuration" "^[0-9]+$" "$j"
t_ok "slurmctld is alive" scontrol ping
new=$(tail -n +"$((log_lines + 1))" "$LAB/log/slurmctld.log")
t_match "the log names file and line" "job_submit/tbmesh: $conf:[0-9]+: .*donut" "$new"
t_match "and says the last good one is kept" "keeping the last good configuration" "$new"

# A good change is taken: rename mini-b to mini-c (feature names change with it, so only the refusal
# message is checked: the group is no longer called mini-b).
sed -e 's/^Group=mini-b /Group=mini-c /' "$conf.good" > "$conf"
scontrol reconfigure
sleep 1
out=$(as tbm-alice sbatch --parsable -o /dev/null --gres=tbmesh:mini-b:4 --wrap true 2>&1)
t_match "the new file is in force" "no group named 'mini-b' in tbmesh.conf: the groups are studio-a, mini-c" "$out"

cp -p "$conf.good" "$conf"
touch "$conf"
scontrol reconfigure
sleep 1
t_match "restored" "^[0-9]+$" "$(as tbm-alice sbatch --parsable -o /dev/null --gres=tbmesh:mini-b:4 --wrap true 2>&1)"
rm -f "$conf.good"
t_done
