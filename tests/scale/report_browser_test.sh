#!/bin/bash
# collfuzz report in a real browser: a merged run with findings (and a reproducer and provenance
# fields holding HTML) is written as report.html and loaded in headless Chromium; the test checks
# that every chart rendered (the page's own check writes "charts-ok N" into the DOM), that the
# console shows no error, that the screenshot is not blank, that the page loads nothing from the
# network, and that user strings are escaped. Exit 77 (ctest: skipped) without Chromium.
# Usage: report_browser_test.sh <collfuzz> <collfuzz_shard_mutant> [screenshot to keep]
set -u
collfuzz=$1
mutant=$2
keep=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then echo "SKIP: no chromium (ci/setup.sh installs it)"; exit 77; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for i in 0 1 2 3; do
  "$mutant" 3 predicate_ignored "$i/4" 250 2 "$work/runs/shard-$i" > /dev/null || fail "run $i"
done
# Hostile strings: a reproducer and a provenance field with markup.
first=$(ls "$work"/runs/shard-0/findings/*.outcomes.json | head -1)
case_file=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['case_file'])" "$first")
printf 'print("</pre><script>document.title=\\"pwned\\"</script>")\n' > "$work/runs/shard-0/findings/${case_file%.json}.py"
python3 - "$work/runs/shard-1/summary.json" << 'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["host"] = "<img src=x onerror=alert(1)>"; json.dump(s, open(sys.argv[1], "w"))
PY
"$collfuzz" merge "$work"/runs/shard-* --into "$work/merged" > /dev/null 2>&1
[ $? -le 1 ] || fail "merge"
"$collfuzz" report "$work/merged" -o "$work/report.html" > /dev/null || fail "report"
page=$work/report.html
grep -q "<script>document.title" "$page" && fail "the reproducer's markup is not escaped"
grep -q "<img src=x" "$page" && fail "a provenance field is not escaped"
grep -q "&lt;script&gt;document.title" "$page" || fail "the reproducer is not on the page"
grep -Eqi '(src|href)="(https?:)?//' "$page" && fail "the page loads something from the network"
grep -q "Cases compared with the reference per second, per executor" "$page" || fail "no per-executor throughput chart"
grep -q "Rules whose cases reached each executor" "$page" || fail "no per-executor coverage chart"

flags=(--headless=new --no-sandbox --disable-gpu --no-first-run --disable-extensions
       --user-data-dir="$work/profile" --enable-logging=stderr --v=0)
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$page" > "$work/dom.html" 2> "$work/console.log"
grep -q "charts-ok" "$work/dom.html" || { grep -o 'id="status">[^<]*' "$work/dom.html"; fail "the page's check did not pass"; }
charts=$(grep -o 'charts-ok [0-9]*' "$work/dom.html" | awk '{print $2}')
[ "$charts" -ge 7 ] || fail "only $charts charts rendered (5 and the 2 per-executor ones)"
grep -q "<title>pwned" "$work/dom.html" && fail "a script from a user string ran"
if grep -E "Uncaught|CONSOLE\(|console.*[Ee]rror" "$work/console.log"; then fail "console errors"; fi
timeout 120 "$browser" "${flags[@]}" --hide-scrollbars --window-size=1200,1800 \
  --screenshot="$work/shot.png" "file://$page" > /dev/null 2>&1
[ -s "$work/shot.png" ] || fail "no screenshot"
python3 "$here/png_variance.py" "$work/shot.png" || fail "the screenshot is blank"
[ -n "$keep" ] && cp "$work/shot.png" "$keep"
echo "ok: $charts charts rendered, no console errors, screenshot not blank, strings escaped"
