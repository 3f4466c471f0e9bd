#!/bin/bash
# collfuzz merge: two runs (shards 0/2 and 1/2 of one seed, against a simulator with a planted bug,
# so that both have findings) merged into one; merged twice (the same bytes); and merged from a
# partial copy (a finding's files and a summary cut short: reported and skipped, no crash), then
# again after the copy completes (the same result as from the whole copy).
# Usage: merge_test.sh <collfuzz> <collfuzz_shard_mutant>
set -u
collfuzz=$1
mutant=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for i in 0 1; do
  "$mutant" 3 predicate_ignored "$i/2" 120 2 "$work/runs/s$i" > /dev/null || fail "run $i"
done
# A provenance field merge does not know (the JAX helper's versions, say) is carried untouched.
python3 - "$work/runs/s0/summary.json" << 'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["collfuzz_version"] = "test-9.9 <b>"; json.dump(s, open(sys.argv[1], "w"))
PY
# The result of running a finding's script (SIGNATURE.reproduced.json, as a campaign writes it)
# is carried into the merged summary, its markdown and its report, with its file.
first_outcomes=$(ls "$work"/runs/s0/findings/*.outcomes.json | head -1)
[ -n "$first_outcomes" ] || fail "run 0 made no finding"
# Beside the finding in each run that has it: merge keeps the smallest case's run, whichever.
for run in "$work"/runs/s0 "$work"/runs/s1; do
  outcomes=$run/findings/$(basename "$first_outcomes")
  [ -f "$outcomes" ] || continue
  echo '{"reproduced": "yes", "why": "planted: the script raised AssertionError", "mode": "interpret"}' > "${outcomes%.outcomes.json}.reproduced.json"
done
reproduced_sig=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['signature'])" "$first_outcomes")

"$collfuzz" merge "$work/runs/s0" "$work/runs/s1" --into "$work/m" > "$work/m.log" 2>&1
rc=$?
export REPRODUCED_SIG="$reproduced_sig"
[ "$rc" -le 1 ] || { cat "$work/m.log"; fail "merge exited $rc"; }
python3 - "$work" << 'PY' || exit 1
import json, sys, pathlib
w = pathlib.Path(sys.argv[1])
runs = [json.loads((w / f"runs/s{i}/summary.json").read_text()) for i in (0, 1)]
m = json.loads((w / "m/summary.json").read_text())
err = []
if m["cases"] != sum(r["cases"] for r in runs): err.append("cases not summed")
sigs = {f["signature"] for r in runs for f in r["findings"]}
if {f["signature"] for f in m["findings"]} != sigs: err.append("findings are not the union")
if not sigs: err.append("no findings: nothing tested")
size = lambda s: (s["ops"], s["ctas"], s["elements"])
for f in m["findings"]:
    per = [g for r in runs for g in r["findings"] if g["signature"] == f["signature"]]
    if f["occurrences"] != sum(g["occurrences"] for g in per): err.append(f"{f['signature']}: occurrences not summed")
    if size(f["size"]) != min(size(g["size"]) for g in per): err.append(f"{f['signature']}: not the smallest case")
    case = w / "m" / f["case_file"]
    if not case.exists(): err.append(f"{case} missing")
    elif size(json.loads((w / "m" / f["outcomes_file"]).read_text())["size"]) != size(f["size"]): err.append("outcomes file is not the kept case's")
shards = sorted((r["shard"]["index"], r["shard"]["count"]) for r in m["runs"])
if shards != [(0, 2), (1, 2)]: err.append(f"runs' shards {shards}")
if not all("host" in r and r.get("seed") == 3 for r in m["runs"]): err.append("host/seed provenance lost")
if m["runs"][0].get("collfuzz_version") != "test-9.9 <b>": err.append("extra provenance field not carried")
cov_hit = m["coverage"]["rules_hit"]
if cov_hit < max(r["coverage"]["rules_hit"] for r in runs): err.append("coverage not merged")
md = (w / "m/summary.md").read_text()
if "## Runs merged" not in md or "report.html" not in md: err.append("summary.md lacks runs or the report link")
if not (w / "m/report.html").exists(): err.append("no report.html")
# Root-cause groups: each finding keeps its outcomes file's group; the groups partition the
# merged findings; each group's smallest case is the smallest of its findings; a planted bug is
# fewer groups than findings (one bug, one finding).
groups = {g["group"]: g for g in m["groups"]}
for f in m["findings"]:
    og = json.loads((w / "m" / f["outcomes_file"]).read_text()).get("group")
    if not og or f.get("group") != og: err.append(f"{f['signature']}: group {f.get('group')} is not its outcomes' {og}")
    if f["signature"] not in groups.get(f.get("group"), {}).get("signatures", []): err.append(f"{f['signature']} not listed in its group")
if sum(g["findings"] for g in m["groups"]) != len(m["findings"]): err.append("groups do not partition the findings")
for name, g in groups.items():
    members = [f for f in m["findings"] if f.get("group") == name]
    if size(g["smallest"]["size"]) != min(size(f["size"]) for f in members): err.append(f"{name}: not its smallest case")
if not 1 <= len(groups) < len(m["findings"]): err.append(f"{len(groups)} groups for {len(m['findings'])} findings of one planted bug")
if any(r.get("groups", 0) > r["findings"] for r in m["runs"]): err.append("a run record counts more groups than findings")
if "## Root-cause groups" not in (w / "m/summary.md").read_text(): err.append("summary.md lacks the groups")
import os
rsig = os.environ["REPRODUCED_SIG"]
for f in m["findings"]:
    want = "yes" if f["signature"] == rsig else None
    got = f.get("reproduced")
    if want and (got != "yes" or "planted" not in f.get("reproduced_why", "")): err.append(f"{rsig}: reproduced {got!r}, not carried")
    if want and not (w / "m" / f["outcomes_file"].replace(".outcomes.json", ".reproduced.json")).exists(): err.append("the reproduced file was not copied")
    if not got: err.append(f"{f['signature']}: no reproduced status")
if "planted: the script raised AssertionError" not in md: err.append("summary.md lacks the reproduced line")
if "Its repro script, run once by the campaign: <b>yes</b>" not in (w / "m/report.html").read_text(): err.append("report.html lacks the reproduced status")
if err: print("FAIL:", err); sys.exit(1)
print(f"ok: merged {len(m['runs'])} runs, {m['cases']} cases, {len(m['findings'])} findings in {len(m['groups'])} groups")
PY

# Idempotent: the same inputs again give the same bytes.
snapshot() { (cd "$1" && find . -type f ! -name report.html | sort | xargs sha256sum); }
snapshot "$work/m" > "$work/first.sha"
"$collfuzz" merge "$work/runs/s0" "$work/runs/s1" --into "$work/m" > /dev/null 2>&1
snapshot "$work/m" > "$work/second.sha"
cmp -s "$work/first.sha" "$work/second.sha" || { diff "$work/first.sha" "$work/second.sha"; fail "merging twice changed the result"; }
# A run given twice (or inside a merged input) is counted once.
"$collfuzz" merge "$work/m" "$work/runs/s1" --into "$work/m2" > /dev/null 2> "$work/m2.err"
grep -q "already merged" "$work/m2.err" || fail "a run merged twice was not reported"
python3 -c "import json,sys; a=json.load(open('$work/m/summary.json')); b=json.load(open('$work/m2/summary.json')); sys.exit(a['cases']!=b['cases'] or len(a['runs'])!=len(b['runs']))" \
  || fail "a run merged twice was counted twice"

# A partial copy: s1 copied with one finding's outcomes cut short, another's case file cut short
# and its summary cut short. The merge reports each and skips it.
mkdir -p "$work/partial"
cp -r "$work/runs/s1" "$work/partial/s1"
outs=("$work"/partial/s1/findings/*.outcomes.json)
[ "${#outs[@]}" -ge 2 ] || fail "too few findings in s1 for the partial-copy test"
head -c 100 "${outs[0]}" > "$work/cut" && mv "$work/cut" "${outs[0]}"
case1=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['case_file'])" "${outs[1]}")
head -c 50 "$work/partial/s1/findings/$case1" > "$work/cut" && mv "$work/cut" "$work/partial/s1/findings/$case1"
head -c 300 "$work/partial/s1/summary.json" > "$work/cut" && mv "$work/cut" "$work/partial/s1/summary.json"
"$collfuzz" merge "$work/runs/s0" "$work/partial/s1" --into "$work/p" > "$work/p.log" 2> "$work/p.err"
rc=$?
[ "$rc" -le 1 ] || { cat "$work/p.err"; fail "merge of a partial copy exited $rc"; }
for f in "${outs[0]}" "$work/partial/s1/findings/$case1" "$work/partial/s1/summary.json"; do
  grep -qF "$f" "$work/p.err" || { cat "$work/p.err"; fail "$f was not reported"; }
done
# The copy completes; merging again gives what the whole copy gives.
rm -rf "$work/partial/s1" && cp -r "$work/runs/s1" "$work/partial/s1"
"$collfuzz" merge "$work/runs/s0" "$work/partial/s1" --into "$work/p" > /dev/null 2> "$work/p2.err"
[ -s "$work/p2.err" ] && { cat "$work/p2.err"; fail "problems left after the copy completed"; }
snapshot "$work/p" > "$work/p.sha"
cmp -s "$work/first.sha" "$work/p.sha" || { diff "$work/first.sha" "$work/p.sha"; fail "the rerun after a partial copy differs from a whole merge"; }

# Bad input: exit 2 naming it.
"$collfuzz" merge "$work/nope" --into "$work/x" > /dev/null 2>&1
[ $? -eq 2 ] || fail "a missing input did not exit 2"
"$collfuzz" merge "$work/runs/s0" > /dev/null 2>&1
[ $? -eq 2 ] || fail "a merge without --into did not exit 2"
"$collfuzz" merge "$work/runs/s0" --into "$work/runs/s1" > /dev/null 2>&1
[ $? -eq 2 ] || fail "a merge into a campaign's directory did not exit 2"
[ -n "$(ls "$work"/runs/s1/findings/*.outcomes.json 2> /dev/null)" ] || fail "a merge removed a campaign's findings"
echo "ok: idempotent, a run merged twice counted once, partial copy reported and recovered"
