#!/bin/bash
# Every finding's script is run once by the campaign (issue 27; finding_repro_run.h): the result
# is SIGNATURE.reproduced.json and the summary's `reproduced`. The fake external executor stands
# in for jax-interpret (mode `reject`: a finding on most cases) through a fake JAX Python
# (tests/process/fake_repro_python.py), which also plays the finding scripts: one that fails its
# assertion reproduces the finding (yes), one that passes does not (no), one that never ends is
# stopped at the budget's end (not run, within the budget plus 5 s). With the real JAX venv the
# scripts are run by JAX itself: the fake rejections are not JAX's, so no script reproduces them.
# The scripts are written by the real generator (.venv-jax): without it the test is skipped (77).
# Usage: campaign_repro_run_test.sh <collfuzz binary> <source dir>
source "$(dirname "$0")/fake_campaign_prelude.sh"
unset COLLFUZZ_JAX_PYTHON  # the generator is the real venv's; --python is the fake
[ -x "$src/.venv-jax/bin/python" ] || { echo "SKIP: no $src/.venv-jax (ci/setup-jax.sh)"; exit 77; }
export FAKE_EXECUTOR_MODE=reject FAKE_REAL_PYTHON=$src/.venv-jax/bin/python
run() {  # out-dir [flags...]
  local out=$1
  shift
  "$collfuzz" fuzz --executors jax-interpret --python "$src/tests/process/fake_repro_python.py" \
    --no-shrink --confirm 0 --slow-jobs 0 --slow-every 1 --jobs 1 --seed 7 --out "$out" "$@" > "$work/log" 2>&1
}
check() {  # out-dir expected-status-regex why-regex
  python3 - "$@" << 'PY'
import json, os, re, sys
out, want, why = sys.argv[1:4]
s = json.load(open(f"{out}/summary.json"))
assert s["findings"], "no findings"
scripts = 0
for f in s["findings"]:
    stem = f["case_file"][len("findings/"):-len(".json")]
    r = json.load(open(f"{out}/findings/{stem}.reproduced.json"))
    assert r["reproduced"] == f["reproduced"], (r, f)
    assert f["reproduced_why"] == r["why"], (r, f)
    if not os.path.exists(f"{out}/findings/{stem}.py"):
        assert f["reproduced"] == "skipped" and f["reproduced_why"].startswith("no script"), f
        continue
    scripts += 1
    assert re.fullmatch(want, f["reproduced"]), (f["signature"], f["reproduced"], f["reproduced_why"])
    assert re.search(why, f["reproduced_why"]), (f["reproduced_why"], why)
assert scripts, "no finding has a script"
md = open(f"{out}/summary.md").read()
assert "## Does each finding's script reproduce it?" in md and f"**{f['reproduced']}**" in md, md
print(f"ok: {scripts} finding script(s): {want} ({f['reproduced_why']})")
if len(sys.argv) > 4:  # this status must be among them
    assert any(f["reproduced"] == sys.argv[4] for f in s["findings"]), [f["reproduced"] for f in s["findings"]]
PY
}
FAKE_SCRIPT_MODE=fail run "$work/fail" --cases 60
check "$work/fail" yes 'expected 2, got 0 .*\[fake\]' || fail "a failing script did not reproduce its finding"
FAKE_SCRIPT_MODE=pass run "$work/pass" --cases 60
check "$work/pass" no "JAX does what collfuzz's reference predicts" || fail "a passing script reproduced its finding"
# replay reads the findings folder's cases, not the scripts' results (*.reproduced.json)
"$collfuzz" replay "$work/pass/findings" --executors reference > "$work/replay.log" 2>&1
[ $? -ne 2 ] || { cat "$work/replay.log"; fail "replay of a findings folder took a result for a case"; }
FAKE_SCRIPT_MODE=broken run "$work/broken" --cases 60
check "$work/broken" error "ValueError: fake broken script" || fail "a broken script is not an error"
FAKE_SCRIPT_MODE=fail run "$work/off" --cases 60 --no-script-runs
check "$work/off" skipped "not run: --no-script-runs" || fail "--no-script-runs ran the scripts"
# The budget: a script that never ends is stopped at its end, and the campaign ends within 5 s.
t0=$(date +%s.%N)
FAKE_SCRIPT_MODE=sleep run "$work/sleep" --seconds 3
t1=$(date +%s.%N)
python3 -c "import sys; w = $t1 - $t0; print(f'campaign wall time {w:.1f} s, budget 3 s'); sys.exit(w > 8.0)" ||
  fail "the campaign ran past its budget plus 5 s"
check "$work/sleep" "not run" "^time" || fail "a script cut by the budget is not 'not run (time)'"
grep -q "time: stopped at the budget's end after" "$work/sleep/summary.md" ||
  fail "the script running at the budget's end was not stopped there"
# Real JAX runs the scripts, which end in a verdict (none is broken): the fake executor's
# rejections are not JAX's, so most do not reproduce (one may: JAX's interpret mode names another
# thread from run to run in some messages, which a script sees as a disagreement).
FAKE_SCRIPT_MODE=real run "$work/real" --cases 20
check "$work/real" "yes|no" "." no || fail "real JAX's runs of the finding scripts"
