#!/bin/bash
# collfuzz report in a real browser: a merged run with findings (and a reproducer and provenance
# fields holding HTML) is written as report.html and loaded in headless Chromium; the test checks
# that every chart rendered (the page's own check writes "charts-ok N" into the DOM), that the
# console shows no error, that the screenshot is not blank, that the page loads nothing from the
# network, and that user strings are escaped. The shard runs are made to look like a campaign with
# several executors (sim, jax-interpret, jax-ir: their summary, timeline and provenance), and the
# page's layout is measured in Chromium at a 1280 px window (report_layout_check.js, injected into a
# copy of the page): nothing wider than the viewport, legends inside their charts, JSON in
# <details>. Exit 77 (ctest: skipped) without Chromium.
# Usage: report_browser_test.sh <collfuzz> <collfuzz_shard_mutant> [screenshot to keep]
# (with the third argument, the 1280 px screenshot is kept there, and the page with every <details>
# open beside it as NAME-expanded.png)
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
# A campaign with several executors, as `collfuzz fuzz --executors sim,jax-interpret,jax-ir` on a
# JAX machine writes it: the executors and per-executor timeline entries, and its provenance.
python3 - "$work"/runs/shard-* << 'PY'
import json, os, sys
extra = {"jax-interpret": 0.61, "jax-ir": 0.37}
for d in sys.argv[1:]:
    s = json.load(open(os.path.join(d, "summary.json")))
    s["executors"] = ["sim"] + list(extra)
    s["versions"] = {"jax": "0.12.0.1", "jaxlib": "0.12.0.1", "python": "3.12.3 (main, Nov  6 2025, 13:44:16) [GCC 13.2.0]",
                     "python_executable": "/home/runner/work/collfuzz/collfuzz/.venv-jax-0.12.0.1/bin/python3.12",
                     "collfuzz": "322cb1c0e7d6f2f7b1b5d8a0c4e7c1a2b3d4e5f6-dirty"}
    s["command"] = ("collfuzz fuzz --executors sim,jax-interpret,jax-ir --python "
                    "/home/runner/work/collfuzz/collfuzz/.venv-jax-0.12.0.1/bin/python3.12 --seed 3 "
                    "--shard 0/4 --seconds 3600 --jobs 16 --known-bugs ci/known-jax-bugs.json --out " + d)
    json.dump(s, open(os.path.join(d, "summary.json"), "w"))
    lines = [json.loads(l) for l in open(os.path.join(d, "timeline.jsonl")) if l.strip()]
    for l in lines:
        l["executors"] = s["executors"]
        sim = l.get("per_executor", {}).get("sim")
        if sim:
            for name, f in extra.items():
                l["per_executor"][name] = {k: (v * f if isinstance(v, float) else int(v * f))
                                           for k, v in sim.items()}
    with open(os.path.join(d, "timeline.jsonl"), "w") as f:
        f.writelines(json.dumps(l) + "\n" for l in lines)
PY
[ $? -eq 0 ] || fail "making the runs look like a several-executor campaign"
# Hostile strings: a reproducer and a provenance field with markup.
# Beside the finding in every shard that has it: merge keeps the smallest case's shard, whichever.
first=$(ls "$work"/runs/shard-0/findings/*.outcomes.json | head -1)
for shard in "$work"/runs/shard-*; do
  outcomes=$shard/findings/$(basename "$first")
  [ -f "$outcomes" ] || continue
  case_file=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['case_file'])" "$outcomes")
  printf 'print("</pre><script>document.title=\\"pwned\\"</script>")\n' > "$shard/findings/${case_file%.json}.py"
done
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
timeout 120 "$browser" "${flags[@]}" --hide-scrollbars --window-size=1280,1800 \
  --screenshot="$work/shot.png" "file://$page" > /dev/null 2>&1
[ -s "$work/shot.png" ] || fail "no screenshot"
python3 "$here/png_variance.py" "$work/shot.png" || fail "the screenshot is blank"

# The layout, measured by Chromium at a 1280 px window: the check script goes into a copy of the
# page (the page's CSP allows inline scripts) and writes what it found into <pre id="layout">.
checked=$work/checked.html
python3 - "$page" "$here/report_layout_check.js" "$checked" << 'PY'
import sys
page, script = open(sys.argv[1]).read(), open(sys.argv[2]).read()
assert page.count("</body>") == 1
open(sys.argv[3], "w").write(page.replace("</body>", "<script>\n" + script + "</script></body>"))
PY
timeout 120 "$browser" "${flags[@]}" --window-size=1280,900 --dump-dom "file://$checked" \
  > "$work/checked-dom.html" 2> /dev/null
layout=$(python3 - "$work/checked-dom.html" << 'PY'
import html, re, sys
m = re.findall(r'<pre id="layout">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
print(html.unescape(m[-1]) if m else "layout-missing: the check script did not run")
PY
)
if [ -n "$keep" ]; then
  cp "$work/shot.png" "$keep"
  timeout 120 "$browser" "${flags[@]}" --hide-scrollbars --window-size=1280,6000 \
    --screenshot="${keep%.png}-expanded.png" "file://$checked" > /dev/null 2>&1
fi
echo "$layout" | head -1
case $layout in layout-ok*) ;; *) echo "$layout" | tail -n +2; fail "the layout check at 1280 px";; esac
width=$(echo "$layout" | head -1 | grep -o 'width=[0-9]*' | cut -d= -f2)
legends=$(echo "$layout" | head -1 | grep -o 'legends=[0-9]*' | cut -d= -f2)
blobs=$(echo "$layout" | head -1 | grep -o 'json=[0-9]*' | cut -d= -f2)
[ "${width:-0}" -eq 1280 ] || fail "the window was $width px wide, not 1280"
[ "${legends:-0}" -ge 6 ] || fail "only $legends chart legends measured (4 line charts, 2 bar charts)"
[ "${blobs:-0}" -ge 4 ] || fail "only $blobs JSON blocks found (provenance and outcomes)"
echo "ok: $charts charts rendered, no console errors, screenshot not blank, strings escaped," \
  "layout at 1280 px: $legends legends inside their charts, $blobs JSON blocks in <details>"
