#!/usr/bin/env bash
# func-lengths.sh: list the functions of the product's C files longer than a limit, and the C files longer
# than a file limit, one a line as "LINES FILE:LINE NAME"; exits 1 if any, 0 if none.
# Usage: scripts/func-lengths.sh [FUNCTION-LIMIT [FILE-LIMIT]]   (defaults: 100 and 800 lines)
# It reads the project's style: a definition starts at column 0 with a type or name, holds '(' and does not
# end with ';'; its body opens with '{' at column 0 and closes with '}' at column 0. A function's length
# counts from its first line to its closing brace. tests/ and build*/ are not product files.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
func_limit=${1:-100}
file_limit=${2:-800}
case "$func_limit$file_limit" in
    *[!0-9]*) echo "func-lengths.sh: the limits must be whole numbers of lines, e.g. 100 800" >&2; exit 2 ;;
esac
cd "$src"
dirs=()
for d in */; do
    d=${d%/}
    case "$d" in build*|tests) continue ;; esac
    if [ -n "$(find "$d" -name '*.c' -print -quit)" ]; then
        dirs+=("$d")
    fi
done
[ ${#dirs[@]} -gt 0 ] || exit 0
mapfile -t files < <(find "${dirs[@]}" -name '*.c' | LC_ALL=C sort)
exec awk -v flimit="$func_limit" -v filelimit="$file_limit" '
    function checkfile(file, lines) {
        if (lines > filelimit) { printf "%d %s:1 (file)\n", lines, file; found = 1 }
    }
    FNR == 1 { if (NR > 1) checkfile(prevfile, prevlines); start = 0; inbody = 0 }
    { prevfile = FILENAME; prevlines = FNR }
    inbody {
        if (/^\}/) {
            len = FNR - start + 1
            if (len > flimit) { printf "%d %s:%d %s\n", len, FILENAME, start, name; found = 1 }
            inbody = 0
            start = 0
        }
        next
    }
    /^[A-Za-z_]/ && /\(/ && !/;[ \t]*$/ {
        start = FNR
        name = $0
        sub(/\(.*/, "", name)
        sub(/[ \t]+$/, "", name)
        n = split(name, w, /[ \t*]+/)
        name = w[n]
        next
    }
    start && /^\{/ { inbody = 1; next }
    start && /;[ \t]*$/ { start = 0 }
    END { if (NR > 0) checkfile(prevfile, prevlines); exit found ? 1 : 0 }
' "${files[@]}"
