#!/usr/bin/env bash
# rules.sh: the Prometheus rules, the example scrape configuration and the Grafana dashboard of etc/ against
# Prometheus' own checker. Checked:
#   rules      `promtool check rules` takes etc/prometheus/tbmesh.rules.yml; every alert has a severity label
#              and summary and description annotations
#   tests      `promtool test rules` passes etc/prometheus/tbmesh.rules.test.yml, which tests every alert
#              firing and not firing and every recording rule; a copy with one expectation changed fails
#   config     `promtool check config` takes prometheus.yml.example (its rule file and its file_sd example
#              pointed at this tree and at a file written from the example's own comment)
#   dashboard  etc/grafana/tbmesh.json is JSON (python3, else json_pp); with python3: unique panel ids, every
#              query on the ${datasource} variable, and every PromQL expression (panels and variables, the
#              dashboard's $variables replaced by literals) parsed by `promtool check rules` and reading only
#              the families of doc/METRICS.md and the recording rules (python3 missing: that part is skipped,
#              said so)
# Skipped (exit 77) when promtool is not installed (Debian: apt-get install prometheus).
set -u
export LC_ALL=C

if ! command -v promtool >/dev/null 2>&1; then
    echo "SKIP: rules.sh: promtool is not installed (Debian: apt-get install prometheus, or scripts/install-deps.sh)"
    exit 77
fi
SRC=$(cd "$(dirname "$0")/../.." && pwd)
RULES=$SRC/etc/prometheus/tbmesh.rules.yml
RULES_TEST=$SRC/etc/prometheus/tbmesh.rules.test.yml
CONFIG=$SRC/etc/prometheus/prometheus.yml.example
DASHBOARD=$SRC/etc/grafana/tbmesh.json
METRICS_DOC=$SRC/doc/METRICS.md
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tbm-rules.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
indent() { sed 's/^/    /' "$1"; }

for f in "$RULES" "$RULES_TEST" "$CONFIG" "$DASHBOARD" "$METRICS_DOC"; do
    [ -f "$f" ] || { echo "FAIL: rules.sh: no $f"; exit 1; }
done

# --- rules -------------------------------------------------------------------------------------------------
if ! promtool check rules "$RULES" >"$TMP/check.out" 2>&1; then
    fail "promtool check rules $RULES:"
    indent "$TMP/check.out"
fi
# Each alert: severity, summary, description (one awk over the file's alert blocks).
awk '
function done() {
    if (name == "") return
    if (!sev)  printf "alert %s has no severity label\n", name
    if (!sum)  printf "alert %s has no summary annotation\n", name
    if (!desc) printf "alert %s has no description annotation\n", name
    name = ""
}
/^[ \t]*#/ { next }
/^[ \t]*- (alert|record|name):/ { done() }
/^[ \t]*- alert:/ { name = $3; sev = sum = desc = 0 }
name != "" && /^[ \t]+severity:[ \t]*[a-z]/ { sev = 1 }
name != "" && /^[ \t]+summary:[ \t]*[^ \t]/ { sum = 1 }
name != "" && /^[ \t]+description:[ \t]*[^ \t]/ { desc = 1 }
END { done() }' "$RULES" >"$TMP/alerts.err"
if [ -s "$TMP/alerts.err" ]; then
    while IFS= read -r line; do fail "$line"; done <"$TMP/alerts.err"
fi

# --- tests -------------------------------------------------------------------------------------------------
if ! promtool test rules "$RULES_TEST" >"$TMP/test.out" 2>&1; then
    fail "promtool test rules $RULES_TEST:"
    indent "$TMP/test.out"
fi
# Every alert is tested at least once firing and once quiet; every recording rule is an expr of a test.
sed -n 's/^[ \t]*- alert:[ \t]*\([A-Za-z0-9_]*\).*/\1/p' "$RULES" | sort -u >"$TMP/alert.names"
sed -n 's/^[ \t]*- record:[ \t]*\([A-Za-z0-9_:]*\).*/\1/p' "$RULES" | sort -u >"$TMP/record.names"
[ -s "$TMP/alert.names" ] || fail "no alert found in $RULES"
[ -s "$TMP/record.names" ] || fail "no recording rule found in $RULES"
awk '/^[ \t]*#/ { next }
     /^[ \t]*- alertname:/ { name = $3 }
     name != "" && /^[ \t]+exp_alerts:/ { print name, ($2 == "[]" ? "quiet" : "firing"); name = "" }' \
    "$RULES_TEST" | sort -u >"$TMP/alert.tests"
while IFS= read -r a; do
    grep -qx "$a firing" "$TMP/alert.tests" || fail "$RULES_TEST never tests $a firing"
    grep -qx "$a quiet" "$TMP/alert.tests" || fail "$RULES_TEST never tests $a quiet"
done <"$TMP/alert.names"
while IFS= read -r r; do
    grep -Eq "^[[:space:]]*- expr:[[:space:]]*'?$r'?[[:space:]]*\$" "$RULES_TEST" || fail "$RULES_TEST never tests $r"
done <"$TMP/record.names"
# A copy with one expected label changed must fail: promtool compares, this test can tell.
mkdir -p "$TMP/mutant"
cp "$RULES" "$TMP/mutant/"
sed '0,/severity: critical/s//severity: page/' "$RULES_TEST" >"$TMP/mutant/tbmesh.rules.test.yml"
if promtool test rules "$TMP/mutant/tbmesh.rules.test.yml" >/dev/null 2>&1; then
    fail "promtool test rules passed a test file with a wrong expectation: this test cannot tell good from bad"
fi

# --- config ------------------------------------------------------------------------------------------------
# The file_sd example in the comment, as a file; the paths of the example pointed at it and at this tree.
awk '/tbmesh-macs.yml, e.g.:/ { on = 1; next } on && /^[ \t]*# which/ { exit } on { sub(/^[ \t]*#   /, ""); print }' \
    "$CONFIG" >"$TMP/tbmesh-macs.yml"
[ -s "$TMP/tbmesh-macs.yml" ] || fail "no file_sd example in $CONFIG"
sed -e "s|/etc/prometheus/tbmesh.rules.yml|$RULES|" -e "s|/etc/prometheus/tbmesh-macs.yml|$TMP/tbmesh-macs.yml|" \
    "$CONFIG" >"$TMP/prometheus.yml"
if ! promtool check config "$TMP/prometheus.yml" >"$TMP/config.out" 2>&1; then
    fail "promtool check config $CONFIG (paths pointed at this tree):"
    indent "$TMP/config.out"
fi
for j in tbmesh-macs tbmesh-slurm; do
    grep -q "job_name: $j\$" "$CONFIG" || fail "$CONFIG has no job $j (the rules and the dashboard name it)"
done

# --- dashboard ---------------------------------------------------------------------------------------------
PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
    if command -v json_pp >/dev/null 2>&1; then
        json_pp <"$DASHBOARD" >/dev/null 2>"$TMP/json.err" || { fail "$DASHBOARD is not JSON:"; indent "$TMP/json.err"; }
    fi
    echo "SKIP (part): rules.sh: no python3: the dashboard's queries are not checked"
else
    # Writes $TMP/dashboard.rules.yml (one recording rule per expression) and prints one line per fault.
    "$PY" - "$DASHBOARD" "$METRICS_DOC" "$RULES" "$TMP/dashboard.rules.yml" "$TMP/dashboard.exprs" \
        >"$TMP/dashboard.err" 2>&1 <<'EOF'
import json, re, sys
dashboard, doc, rules, out, listing = sys.argv[1:6]
faults = []
try:
    d = json.load(open(dashboard, encoding="utf-8"))
except ValueError as e:
    print("%s is not JSON: %s" % (dashboard, e)); sys.exit(0)

# What a query may read: the families of doc/METRICS.md, the recording rules, Prometheus' own `up`.
# (the names in the first cell of a table row: `tbmesh_a`, `tbmesh_b`)
families = set()
for row in open(doc, encoding="utf-8"):
    if row.startswith("|"):
        families.update(re.findall(r"`(tbmesh_[a-z0-9_]+)`", row.split("|")[1]))
records = set(re.findall(r"^\s*- record:\s*([A-Za-z0-9_:]+)", open(rules, encoding="utf-8").read(), re.M))
known = families | records | {"up"}

def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))

exprs = []  # (where, expr)
ids = {}
if not isinstance(d.get("schemaVersion"), int) or d["schemaVersion"] < 36:
    faults.append("schemaVersion %r: want a Grafana 9.5+ dashboard (36 or more)" % d.get("schemaVersion"))
if not d.get("uid"):
    faults.append("the dashboard has no uid")
variables = d.get("templating", {}).get("list", [])
if not any(v.get("type") == "datasource" and v.get("query") == "prometheus" for v in variables):
    faults.append("no datasource variable of type prometheus")
for p in panels(d.get("panels", [])):
    where = "panel %s %r" % (p.get("id"), p.get("title"))
    if p.get("id") in ids:
        faults.append("%s: id also used by %r" % (where, ids[p["id"]]))
    ids[p.get("id")] = p.get("title")
    if p.get("type") == "row":
        continue
    if "gridPos" not in p:
        faults.append("%s: no gridPos" % where)
    targets = p.get("targets") or []
    if not targets:
        faults.append("%s: no query" % where)
    refs = [t.get("refId") for t in targets]
    if len(set(refs)) != len(refs):
        faults.append("%s: refIds %s not unique" % (where, refs))
    for t in targets:
        ds = t.get("datasource", p.get("datasource")) or {}
        if ds.get("uid") != "${datasource}":
            faults.append("%s: query %s not on ${datasource}" % (where, t.get("refId")))
        if not t.get("expr"):
            faults.append("%s: query %s has no expr" % (where, t.get("refId")))
        else:
            exprs.append(("%s query %s" % (where, t.get("refId")), t["expr"]))
for v in variables:
    if v.get("type") != "query":
        continue
    q = v.get("query")
    q = q.get("query") if isinstance(q, dict) else q
    m = re.match(r"^\s*label_values\((.*),\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*$", q or "")
    if not m:
        faults.append("variable %s: query %r is not label_values(SELECTOR, LABEL)" % (v.get("name"), q))
    else:
        exprs.append(("variable %s" % v.get("name"), m.group(1)))

def literal(e):
    """The expression with Grafana's variables replaced: $__range and its kin by a duration, others by .*"""
    e = re.sub(r"\$\{__[A-Za-z_]+\}|\$__[A-Za-z_]+", "5m", e)
    return re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z]+)?\}|\$[A-Za-z_][A-Za-z0-9_]*|\[\[[A-Za-z_][A-Za-z0-9_]*\]\]",
                  ".*", e)

name_re = re.compile(r"(?<![A-Za-z0-9_:.])[A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z0-9_]+)*(?![A-Za-z0-9_])")
with open(out, "w", encoding="utf-8") as f, open(listing, "w", encoding="utf-8") as lst:
    f.write("groups:\n  - name: dashboard\n    rules:\n")
    for i, (where, e) in enumerate(exprs):
        e2 = literal(e)
        f.write("      - record: tbmesh_dashboard_check:expr_%d\n        expr: %s\n" % (i, json.dumps(e2)))
        lst.write("expr_%d\t%s\t%s\n" % (i, where, e))
        bare = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', e2)  # strings out
        bare = re.sub(r"\{[^{}]*\}", "{}", bare)                                  # label matchers out
        bare = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", "", bare)
        for n in name_re.findall(bare):
            if (n.startswith("tbmesh_") or ":" in n) and n not in known:
                faults.append("%s reads %s, neither a family of doc/METRICS.md nor a recording rule" % (where, n))
if not exprs:
    faults.append("no query found in the dashboard")

# The rules' own expressions (inline or block scalars) read only known families and rules too.
lines = open(rules, encoding="utf-8").read().split("\n")
i = 0
while i < len(lines):
    m = re.match(r"^(\s*)(?:- )?expr:\s*(.*)$", lines[i])
    i += 1
    if not m:
        continue
    e, ind = m.group(2), len(m.group(1))
    if e.strip() in ("|", "|-", ">", ">-"):
        e = ""
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > ind):
            e += lines[i] + "\n"; i += 1
    bare = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', e)
    bare = re.sub(r"\{[^{}]*\}", "{}", bare)
    bare = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", "", bare)
    for n in name_re.findall(bare):
        if (n.startswith("tbmesh_") or ":" in n) and n not in known:
            faults.append("the rule at %s:%d reads %s, neither a family of doc/METRICS.md nor a recording rule"
                          % (rules, i, n))
for x in faults:
    print(x)
EOF
    if [ -s "$TMP/dashboard.err" ]; then
        while IFS= read -r line; do fail "dashboard: $line"; done <"$TMP/dashboard.err"
    fi
    if [ -s "$TMP/dashboard.rules.yml" ]; then
        if ! promtool check rules "$TMP/dashboard.rules.yml" >"$TMP/dashboard.check" 2>&1; then
            fail "dashboard: promtool does not parse every query (expr_N: see the list below):"
            indent "$TMP/dashboard.check"
            indent "$TMP/dashboard.exprs"
        else
            echo "rules.sh: the dashboard's $(wc -l <"$TMP/dashboard.exprs") queries parse"
        fi
    fi
    # A broken expression must be refused: the wrapping really reaches promtool's parser.
    printf 'groups:\n  - name: broken\n    rules:\n      - record: tbmesh_dashboard_check:broken\n        expr: "sum by (node (tbmesh_cpu_busy_ratio)"\n' \
        >"$TMP/broken.rules.yml"
    if promtool check rules "$TMP/broken.rules.yml" >/dev/null 2>&1; then
        fail "promtool check rules took a broken expression: the dashboard's check cannot tell good from bad"
    fi
fi

if [ "$failures" -gt 0 ]; then
    echo "rules.sh: $failures failure(s)"
    exit 1
fi
if [ -n "$PY" ]; then
    echo "rules.sh: the rules pass promtool check and test; the example configuration and the dashboard's queries check"
else
    echo "rules.sh: the rules pass promtool check and test; the example configuration checks; the dashboard is JSON"
fi
exit 0
