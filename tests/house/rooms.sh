#!/usr/bin/env bash
# rooms.sh: the house's rules, checked on a build. The rooms (top-level source folders) and the rooms each may
# call are read from the table "Rooms and the arrows between them" in doc/ARCHITECTURE.md, the only source of
# truth; which file uses which is read from the build's objects with nm (a global symbol one file uses and
# another defines). Checked:
#   table    the table reads, names rooms only, and its arrows run one way (no room calls one that calls it)
#   folders  every source folder with .c files (tests/ aside) is a room of the table
#   arrows   every use between rooms is an arrow of the table, and only to rooms of the table
#   circles  within a room, no two files use each other both ways
#   sizes    no C file of a room over 800 lines, no function over 100 (house style: a definition starts at
#            column 0 with a letter and holds '(', its body opens with '{' and closes with '}' at column 0)
# A room of the table with no folder yet is no error. Objects: ROOM/**/*.o and ROOM/**/.libs/*.o of the build;
# each is mapped back to its source (automake's "target-" prefix dropped when that names an existing source,
# else the object's dependency file); objects of one source are merged; tests/ and test programs' objects
# (test_*.c, a target named *test_*) are skipped.
# Usage: tests/house/rooms.sh [BUILDDIR]   (default: $TBM_BUILDDIR, as make check sets it, else build/)
# Exit: 0 all kept, 1 a rule broken, 99 nothing to check (no such build, no table).
set -u
export LC_ALL=C

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-${TBM_BUILDDIR:-$src/build}}
doc=$src/doc/ARCHITECTURE.md
nm=${NM:-nm}
FILE_LIMIT=${TBM_FILE_LIMIT:-800}
FUNC_LIMIT=${TBM_FUNC_LIMIT:-100}

[ -d "$build" ] || { echo "FAIL: rooms: no build folder $build (build first: scripts/build.sh)"; exit 99; }
build=$(cd "$build" && pwd)
[ -f "$doc" ] || { echo "FAIL: rooms: no $doc"; exit 99; }
command -v "$nm" >/dev/null || { echo "FAIL: rooms: no $nm"; exit 99; }

T=$(mktemp -d "${TMPDIR:-/tmp}/tbm-rooms.XXXXXX")
trap '[ -n "${TBM_ROOMS_KEEP:-}" ] || rm -rf "$T"' EXIT

# --- the table ---------------------------------------------------------------------------------------------
# $T/table: "ROOM<TAB>CALLEE CALLEE..." (rooms without their slash); $T/table.err: what does not read.
awk -v doc="doc/ARCHITECTURE.md" -v table="$T/table" -v err="$T/table.err" '
function strip(s) { gsub(/`/, "", s); gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
/^## / { inside = ($0 ~ /^## Rooms and the arrows between them[ \t]*$/); if (inside) seen = 1; next }
!inside || !/^\|/ { next }
{
    n = split($0, col, "|")              # col[1] is empty: the line opens with "|"
    room = strip(col[2]); calls = strip(col[4])
    if (room == "room" || room ~ /^:?-+:?$/) next
    if (n < 5 || room !~ /^[A-Za-z0-9_.-]+\/$/) { print doc ": not a row of a room: " $0 > err; next }
    sub(/\/$/, "", room)
    if (room in rows) { print doc ": " room "/ has two rows" > err; next }
    rows[room] = 1; nrows++; line = room "\t"
    if (calls != "nothing of ours") {
        m = split(calls, callee, ",")
        for (i = 1; i <= m; i++) {
            c = strip(callee[i])
            if (c !~ /^[A-Za-z0-9_.-]+\/$/) { print doc ": " room "/ may call \"" c "\": not a folder (ROOM/) nor \"nothing of ours\"" > err; continue }
            sub(/\/$/, "", c); line = line " " c
        }
    }
    print line > table
}
END {
    if (!seen) print doc ": no section \"## Rooms and the arrows between them\"" > err
    else if (nrows == 0) print doc ": no rows in \"Rooms and the arrows between them\"" > err
}' "$doc"
touch "$T/table" "$T/table.err"
if [ ! -s "$T/table" ]; then cat "$T/table.err"; echo "FAIL: rooms: no table of rooms in $doc"; exit 99; fi

# --- the source folders, the product's C files --------------------------------------------------------------
# A source folder: a top-level folder of the source tree with a .c file, not tests/, not a build folder in it.
: > "$T/folders"; : > "$T/cfiles"
for d in "$src"/*/; do
    d=${d%/}; name=${d##*/}
    [ "$name" = tests ] && continue
    [ -e "$d/config.status" ] && continue
    [ "$d" = "$build" ] && continue
    find "$d" -name '*.c' -type f -print -quit | grep -q . || continue
    echo "$name" >> "$T/folders"
    (cd "$src" && find "$name" \( -name .libs -o -name .deps -o -name 'build*' -a -type d \) -prune -o \
        \( -name '*.c' -type f ! -name 'test_*.c' -print \)) >> "$T/cfiles"
done
sort -o "$T/cfiles" "$T/cfiles"

# --- the objects and their sources --------------------------------------------------------------------------
# $T/objects: "OBJECT<TAB>SOURCE" (SOURCE relative to the source tree, e.g. macnode/exec.c).
source_of() {   # object (relative to the build) -> source, or nothing
    local obj=$1 dir base cand rest dep
    dir=${obj%/*}; dir=${dir%/.libs}
    base=${obj##*/}; base=${base%.o}
    # automake's target prefix is a canonical name (no '-'): try without it first, then the name itself, then
    # every later '-' (a source named with '-' and compiled under a prefix)
    for cand in "${base#*-}" "$base"; do
        [ -f "$src/$dir/$cand.c" ] && { echo "$dir/$cand.c"; return; }
    done
    rest=${base#*-}
    while [ "$rest" != "${rest#*-}" ]; do
        rest=${rest#*-}
        [ -f "$src/$dir/$rest.c" ] && { echo "$dir/$rest.c"; return; }
    done
    # a source from another folder: the first prerequisite in the object's dependency file
    for dep in "$build/$dir/.deps/$base.Plo" "$build/$dir/.deps/$base.Po"; do
        [ -f "$dep" ] || continue
        cand=$(awk 'NR == 1 { sub(/^[^:]*:[ \t]*/, ""); print $1; exit }' "$dep")
        case $cand in *.c) ;; *) continue ;; esac
        case $cand in /*) ;; *) cand=$build/$dir/$cand ;; esac
        [ -f "$cand" ] || continue
        cand=$(cd "${cand%/*}" && pwd)/${cand##*/}
        case $cand in "$src"/*) echo "${cand#"$src"/}"; return ;; esac
    done
}
: > "$T/objects"; : > "$T/unmapped"
for d in "$build"/*/; do
    d=${d%/}; name=${d##*/}
    [ "$name" = tests ] && continue
    [ -d "$src/$name" ] || continue         # inst/ and the like
    while IFS= read -r obj; do
        # a test program's object of a product source (unit_test_foo-foo.o): the test's, not the product's
        b=${obj##*/}
        case $b in *-*) case "_${b%%-*}_" in *_test_*) continue ;; esac ;; esac
        s=$(source_of "$obj")
        if [ -z "$s" ]; then echo "$obj" >> "$T/unmapped"; continue; fi
        case "/$s" in */tests/*|*/test_*.c) continue ;; esac
        printf '%s\t%s\n' "$obj" "$s" >> "$T/objects"
    done < <(cd "$build" && find "$name" -name '*.o' -type f | sort)
done
if [ ! -s "$T/objects" ]; then echo "FAIL: rooms: no objects of the product in $build (build first: scripts/build.sh)"; exit 99; fi

# $T/symbols: "SOURCE<TAB>D|U<TAB>SYMBOL": the global symbols each source defines and uses (all its objects).
(cd "$build" && cut -f1 "$T/objects" | xargs "$nm" -P -A 2>"$T/nm.err") |
awk -v map="$T/objects" '
BEGIN { FS = "\t"; while ((getline l < map) > 0) { split(l, f, "\t"); src[f[1] ":"] = f[2] } FS = " " }
{
    s = src[$1]; if (s == "") next
    if ($3 == "U") print s "\tU\t" $2
    else if ($3 ~ /^[ABCDGRSTVWiu]$/) print s "\tD\t" $2
}' | sort -u > "$T/symbols"
grep -v 'no symbols' "$T/nm.err" | sed 's/^/rooms: /'

# --- the checks ------------------------------------------------------------------------------------------------
# One awk over the table, the folders, the files and the symbols; it prints "CHECK<TAB>violation" lines and
# "stat<TAB>NAME<TAB>VALUE" lines.
awk -v T="$T" '
function room(f) { sub(/\/.*/, "", f); return f }
# the table: a circle through the arrows from r back to r, or ""
function circle(r, at, path,    i, n, c, p) {
    n = split(calls[at], c, " ")
    for (i = 1; i <= n; i++) {
        if (c[i] == r) return path " → " r "/"
        if (c[i] in visiting) continue
        visiting[c[i]] = 1
        p = circle(r, c[i], path " → " c[i] "/")
        if (p != "") return p
    }
    return ""
}
BEGIN {
    OFS = "\t"
    while ((getline l < (T "/table")) > 0) {
        split(l, f, "\t"); table[f[1]] = 1; calls[f[1]] = f[2]; nrooms++
        n = split(f[2], c, " "); for (i = 1; i <= n; i++) may[f[1], c[i]] = 1
    }
    while ((getline l < (T "/table.err")) > 0) print "table", l
    for (r in table) {
        n = split(calls[r], c, " ")
        for (i = 1; i <= n; i++) {
            if (!(c[i] in table)) print "table", "doc/ARCHITECTURE.md: " r "/ may call " c[i] "/, which is not a room of the table"
            if (c[i] == r) print "table", "doc/ARCHITECTURE.md: " r "/ names itself"
        }
    }
    for (r in table) {
        delete visiting; p = circle(r, r, r "/")
        if (p == "") continue
        # told once: from its least room
        n = split(p, c, " → "); least = 1
        for (i = 2; i < n; i++) if (c[i] < c[least]) least = i
        p = c[least]; for (i = 1; i < n; i++) p = p " → " c[(least + i - 1) % (n - 1) + 1]
        print "table", "doc/ARCHITECTURE.md: a circle of rooms: " p
    }
    while ((getline l < (T "/folders")) > 0) {
        folder[l] = 1; nfolders++
        if (!(l in table)) print "folders", "rooms: " l "/ is not in doc/ARCHITECTURE.md'"'"'s table"
    }
    while ((getline l < (T "/symbols")) > 0) {
        split(l, f, "\t")
        if (!(f[1] in files)) { files[f[1]] = 1; nfiles++ }
        if (f[2] == "D") { def[f[3]] = (f[3] in def) ? def[f[3]] " " f[1] : f[1] }
        else { nu++; usef[nu] = f[1]; uses[nu] = f[3] }
    }
    for (i = 1; i <= nu; i++) {
        a = usef[i]; s = uses[i]
        if (!(s in def)) continue
        n = split(def[s], d, " ")
        # a symbol of the file itself is no arrow; defined by several files: those of the user s room if any
        self = 0; same = 0
        for (j = 1; j <= n; j++) { if (d[j] == a) self = 1; if (room(d[j]) == room(a)) same++ }
        if (self) continue
        for (j = 1; j <= n; j++) {
            b = d[j]
            if (same && room(b) != room(a)) continue
            if (!((a, b) in edge)) { edge[a, b] = s; nedges++ }
            ra = room(a); rb = room(b)
            if (ra == rb) continue
            if (!((ra, rb) in arrow)) { arrow[ra, rb] = 0; narrows++ }
            arrow[ra, rb]++
            if (!(ra in table) || !(rb in table)) {
                if (!((a, b, "c") in told)) {
                    told[a, b, "c"] = 1
                    print "arrows", "rooms: " a " → " b " (" s "): " (!(rb in table) ? rb : ra) "/ is not in doc/ARCHITECTURE.md'"'"'s table"
                }
            } else if (!((ra, rb) in may) && !((a, b) in told)) {
                told[a, b] = 1
                print "arrows", "rooms: " a " → " b " (" s "): " ra "/ may not call " rb "/"
            }
        }
    }
    for (k in edge) {
        split(k, ab, SUBSEP); a = ab[1]; b = ab[2]
        if (a < b && room(a) == room(b) && ((b, a) in edge))
            print "circles", "rooms: " a " ↔ " b ": a circle in " room(a) "/ (" edge[a, b] ", " edge[b, a] ")"
    }
    for (k in arrow) { split(k, ab, SUBSEP); print "seen", ab[1] "/ → " ab[2] "/ (" arrow[k] (arrow[k] == 1 ? " use)" : " uses)") ((ab[1], ab[2]) in may ? "" : " not in the table") }
    for (r in table) { n = split(calls[r], c, " "); for (i = 1; i <= n; i++) if (!((r, c[i]) in arrow) && (r in folder) && (c[i] in folder)) print "unused", r "/ → " c[i] "/" }
    built = 0; for (r in table) if (r in folder) built++
    print "stat", "rooms", nrooms; print "stat", "built", built; print "stat", "arrows", narrows + 0
    print "stat", "files", nfiles + 0; print "stat", "edges", nedges + 0
}' < /dev/null > "$T/found"

# sizes: whole files and functions (house style), one awk over every C file of the rooms
: > "$T/sizes"
if [ -s "$T/cfiles" ]; then
    (cd "$src" && xargs awk -v flimit="$FILE_LIMIT" -v limit="$FUNC_LIMIT" '
    function whole() { if (last != "" && lines > flimit) printf "sizes\tsizes: %s: %d lines (limit %d)\n", last, lines, flimit }
    FNR == 1 { whole(); head = 0; body = 0 }
    { last = FILENAME; lines = FNR }
    body && /^}/ {
        n = FNR - head + 1
        if (n > limit) printf "sizes\tsizes: %s:%d %s: %d lines (limit %d)\n", FILENAME, head, name, n, limit
        body = 0; head = 0; next
    }
    body { next }
    /^[A-Za-z]/ && /\(/ && !/;[ \t]*$/ { head = FNR; name = $0; sub(/[ \t]*\(.*/, "", name); sub(/.*[ \t*]/, "", name); next }
    /^\{/ { if (head) body = 1; next }
    /^[^ \t]/ && /;[ \t]*$/ { head = 0 }
    END { whole() }' < "$T/cfiles") > "$T/sizes"
fi
cat "$T/sizes" >> "$T/found"

# --- the report ------------------------------------------------------------------------------------------------
stat() { awk -F'\t' -v k="$1" '$1 == "stat" && $2 == k { print $3 }' "$T/found"; }
violations=0
report() {   # CHECK, what it keeps
    local lines n
    lines=$(awk -F'\t' -v c="$1" '$1 == c { print $2 }' "$T/found" | sort -u)
    if [ -z "$lines" ]; then echo "ok: $1: $2"; return; fi
    n=$(printf '%s\n' "$lines" | wc -l)
    printf '%s\n' "$lines"
    echo "FAIL: $1: $2 ($n broken)"
    violations=$((violations + n))
}
report table "doc/ARCHITECTURE.md's table reads and its arrows run one way"
report folders "every source folder is a room of the table"
report arrows "every use between rooms is an arrow of the table"
report circles "no two files of a room use each other both ways"
report sizes "no C file over $FILE_LIMIT lines, no function over $FUNC_LIMIT"
if [ -s "$T/unmapped" ]; then
    echo "note: $(wc -l < "$T/unmapped") objects without a source, not read: $(tr '\n' ' ' < "$T/unmapped")"
fi
awk -F'\t' '$1 == "seen" { print "seen: " $2 }' "$T/found" | sort
awk -F'\t' '$1 == "unused" { print "note: an arrow of the table no file uses: " $2 }' "$T/found" | sort
echo "rooms: $(stat rooms) rooms in the table ($(stat built) with code), $(stat arrows) arrows seen between rooms," \
     "$(stat files) files ($(wc -l < "$T/objects") objects, $(stat edges) uses between files), $(wc -l < "$T/cfiles") C files measured;" \
     "$violations violations"
[ "$violations" = 0 ]
