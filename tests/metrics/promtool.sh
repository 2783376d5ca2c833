#!/usr/bin/env bash
# promtool.sh: the exposition lib/metrics.c writes passes Prometheus' own checker. tests/metrics/expose writes one
# from the gpu-m3-ultra fixtures (through lib/'s parsers) and from the cases the format spells specially;
# `promtool check metrics` must take it without a word. A damaged copy must be refused, so that a checker that
# says yes to everything cannot pass this test. Skipped (exit 77) when promtool is not installed.
set -u

if ! command -v promtool >/dev/null 2>&1; then
    echo "SKIP: promtool.sh: promtool is not installed (Debian: apt-get install prometheus, or scripts/install-deps.sh)"
    exit 77
fi
EXPOSE=${TBM_METRICS_EXPOSE:?set TBM_METRICS_EXPOSE to the expose program (make check does)}
FIXTURES=${TBM_FIXTURES:?set TBM_FIXTURES to tests/fixtures (make check does)}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tbm-promtool.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
has() {  # the exposition holds this exact line
    grep -qxF -- "$1" "$TMP/metrics.txt" || fail "no line [$1] in the exposition"
}

if ! "$EXPOSE" "$FIXTURES/macos/gpu-m3-ultra" >"$TMP/metrics.txt" 2>"$TMP/expose.err"; then
    fail "expose failed: $(cat "$TMP/expose.err")"
fi
promtool check metrics <"$TMP/metrics.txt" >"$TMP/lint" 2>&1
rc=$?
if [ "$rc" != 0 ] || [ -s "$TMP/lint" ]; then
    fail "promtool check metrics said (exit $rc):"
    sed 's/^/    /' "$TMP/lint"
fi

# What the fixtures' readings became, as the format writes them.
has 'tbmesh_example_gpu_active_ratio{node="mac01"} 0.9377'
has 'tbmesh_example_gpu_frequency_hertz{node="mac01"} 1378000000'
has 'tbmesh_example_power_watts{node="mac01",part="package"} 66.46906'
has 'tbmesh_example_power_watts{node="mac01",part="gpu"} 61.2345'
has 'tbmesh_example_gpu_utilization_ratio{engine="device",node="mac01"} 0.93'
has 'tbmesh_example_gpu_memory_bytes{kind="in_use",node="mac01"} 68719476736'
has 'tbmesh_example_gpu_info{class="AGXAcceleratorG15X",cores="80",model="Apple M3 Ultra",node="mac01"} 1'
has 'tbmesh_example_energy_joules_total{node="mac01",part="gpu"} 120.071'
has 'tbmesh_example_special_values{case="nan",note="a \\ backslash, a \"quote\",\na new line and UTF-8: été"} NaN'
has '# HELP tbmesh_example_special_values Values the format spells as words; help with a backslash \\ and a "quote"'
has '# TYPE tbmesh_example_not_reported gauge'
for v in '+Inf' '-Inf' '-2.5e-300'; do
    grep -q "^tbmesh_example_special_values{.*} $v\$" "$TMP/metrics.txt" || fail "no special value $v"
done
[ "$(grep -c '^# TYPE ' "$TMP/metrics.txt")" = 9 ] || fail "not 9 families, each once"

# A damaged copy (a sample before its family's TYPE, a label value not closed) is refused: promtool reads.
sed '1,2d' "$TMP/metrics.txt" | sed '1s/^/tbmesh_example_energy_joules_total{node="mac01 1\n/' >"$TMP/bad.txt"
if promtool check metrics <"$TMP/bad.txt" >/dev/null 2>&1; then
    fail "promtool took a damaged exposition: this test cannot tell good from bad"
fi

if [ "$failures" -gt 0 ]; then
    echo "promtool.sh: $failures failure(s)"
    exit 1
fi
echo "promtool.sh: the exposition passes promtool check metrics"
exit 0
