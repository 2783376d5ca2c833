#!/bin/sh
# repro-export.sh: `tbmesh repro export JOBID --ro-crate DIR` writes only into a folder of the caller's own:
# DIR is made, or an empty folder of the caller's; a DIR that is a link, a full folder, another user's folder
# or a path through another user's link is refused with the reason, and nothing is written where it points.
# Run as root (as root runs it on the bridge host): the other user's link and folder need root to be made.
tbmesh=${TBM_TBMESH:-../gres/tbmesh}
fixtures=${TBM_FIXTURES:-../../tests/fixtures}
other=65534                      # nobody: "another user"
dir=$(mktemp -d)
fail=0
trap 'rm -rf "$dir"' EXIT
say() { echo "repro-export: $*"; fail=1; }
mkdir -p "$dir/records/tbmlab"
cp "$fixtures/records/one-mac.json" "$dir/records/tbmlab/101.json"
printf 'ClusterName=tbmlab\n' > "$dir/slurm.conf"
printf 'RecordDir=%s/records\n' "$dir" > "$dir/tbmesh.conf"
export SLURM_CONF="$dir/slurm.conf"

# export DIR: the command's exit status in $rc, what it said in $out.
export_to() { out=$("$tbmesh" repro export 101 --conf "$dir/tbmesh.conf" --ro-crate "$1" 2>&1); rc=$?; }
# refused WHAT DIR PATTERN: exit 1 and "tbmesh repro export: PATTERN".
refused() {
    export_to "$2"
    [ "$rc" = 1 ] && printf '%s\n' "$out" | grep -Eq "^tbmesh repro export: $3" || say "$1: exit $rc, said: $out"
}

export_to "$dir/crate"
[ "$rc" = 0 ] || say "a new folder: exit $rc: $out"
printf '%s\n' "$out" | grep -q "^$dir/crate: Workflow Run RO-Crate of job 101 (ro-crate-metadata.json, record.json)$" ||
    say "a new folder: said $out"
python3 -c 'import json, sys; json.load(open(sys.argv[1])); json.load(open(sys.argv[2]))' \
    "$dir/crate/ro-crate-metadata.json" "$dir/crate/record.json" || say "the crate's files are not JSON"
[ "$(stat -c '%a' "$dir/crate") $(stat -c '%a' "$dir/crate/record.json" "$dir/crate/ro-crate-metadata.json" | sort -u)" = "755 644" ] ||
    say "modes: $(stat -c '%n %a' "$dir/crate" "$dir/crate"/*)"
refused "a folder with files in it" "$dir/crate" "$dir/crate: is not empty; nothing in it is replaced"
mkdir "$dir/empty" && export_to "$dir/empty"
[ "$rc" = 0 ] && [ -s "$dir/empty/record.json" ] || say "an empty folder of the caller's: exit $rc: $out"
refused "a missing parent" "$dir/no/crate" "$dir/no/crate: cannot open the folder no on the way: No such file or directory"
printf 'x' > "$dir/file"
refused "a file" "$dir/file" "$dir/file: exists and is not a folder"

if [ "$(id -u)" = 0 ]; then
    # the user's folder, and the user's links to it: as DIR, and on the way to DIR
    mkdir "$dir/users" && chown "$other" "$dir/users"
    ln -s "$dir/users" "$dir/link" && chown -h "$other" "$dir/link"
    refused "DIR is another user's link" "$dir/link" \
        "$dir/link: is a symbolic link; the folder is never reached through a link: give the name of a new folder, or of an empty folder of yours"
    refused "another user's link on the way" "$dir/link/crate" \
        "$dir/link/crate: link on the way is a symbolic link owned by uid $other; a link made by another user is never followed: give the path without it"
    refused "another user's empty folder" "$dir/users" "$dir/users: belongs to uid $other, not to you \(uid 0\)"
    [ -z "$(ls -A "$dir/users")" ] || say "something was written in the user's folder: $(ls -A "$dir/users")"
    # root's own link on the way is followed
    ln -s "$dir" "$dir/roots-link"
    export_to "$dir/roots-link/crate2"
    [ "$rc" = 0 ] && [ -s "$dir/crate2/record.json" ] || say "root's own link on the way: exit $rc: $out"
fi
[ $fail = 0 ] && echo "repro-export: ok"
exit $fail
