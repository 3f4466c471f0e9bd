#!/usr/bin/env bash
# A planted break must fail the GPU check (ci/gpu-differential, emulated), and quickly:
#
#   tests/gpu/gpu_differential_faults.sh BUILD_DIR control|unavailable|silent
#
#   control      the stand-in worker (tests/gpu/fake_worker.cpp) runs every case as the emulated
#                worker does: the check passes (so the two faults below are what fails it)
#   unavailable  the stand-in answers one case that the cuda executor declares it runs
#                `unavailable`: the check exits 1 and names the case
#   silent       the stand-in says hello and never answers: the check exits 1 within a bound,
#                saying the worker did not answer
#   disagree     the stand-in answers one required case wrongly every time: it is rerun 5 times,
#                and the check exits 1 with "failed 5/5"
#   flaky        ... wrongly every other time: the check passes and lists it "flaky 3/5"; with
#                COLLFUZZ_GPU_FAIL_ON_FLAKY=1 it fails
# The JAX steps, the benchmarks and the campaign are left out (COLLFUZZ_GPU_SKIP); ci/test runs
# the whole check.
set -uo pipefail

build=$(cd "$1" && pwd)
fault=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A case the executor declares it runs, on every device it emulates (corpus/, sm_90a, plain copy).
planted_case=mode.plain__two_phases
admission=$("$build/collfuzz-cuda-worker" --emulate --declare "$root/corpus/$planted_case.json")
if [[ $admission != *'"admission":"run"'* ]]; then
  echo "FAIL: the test's planted case is no longer declared runnable: $admission" >&2
  exit 1
fi

export COLLFUZZ_GPU_DIFFERENTIAL_EMULATE=1
export COLLFUZZ_GPU_BIN=$build
export COLLFUZZ_GPU_CARRY=$work/no-carry  # the binaries come from the build directory
export COLLFUZZ_GPU_SKIP=jax,bench,campaign
export COLLFUZZ_GPU_BUDGET_S=240
export COLLFUZZ_GPU_ANSWER_S=5
export COLLFUZZ_CUDA_WORKER=$build/collfuzz_fake_cuda_worker
expect_rc=1
limit_s=120
case $fault in
  control)
    export COLLFUZZ_CUDA_WORKER_ARGS="--emulate-except no.such.case"
    expect_rc=0
    ;;
  unavailable) export COLLFUZZ_CUDA_WORKER_ARGS="--emulate-except $planted_case" ;;
  silent)
    export COLLFUZZ_CUDA_WORKER_ARGS="--silent"
    limit_s=60
    ;;
  disagree) export COLLFUZZ_CUDA_WORKER_ARGS="--disagree $planted_case" ;;
  flaky)
    export COLLFUZZ_CUDA_WORKER_ARGS="--disagree-sometimes $planted_case"
    expect_rc=0
    ;;
  *)
    echo "usage: $0 BUILD_DIR control|unavailable|silent|disagree|flaky" >&2
    exit 2
    ;;
esac

t0=$SECONDS
"$root/ci/gpu-differential" "$work/check" 0 > "$work/stderr.txt" 2>&1
rc=$?
elapsed=$((SECONDS - t0))
echo "ci/gpu-differential with the $fault fault: exit $rc in ${elapsed}s"
failures=0
check() {
  if ! eval "$1"; then
    echo "FAIL: $2" >&2
    failures=$((failures + 1))
  fi
}
check "((rc == expect_rc))" "exit $rc, expected $expect_rc"
check "((elapsed <= limit_s))" "took ${elapsed}s, more than the ${limit_s}s bound"
check "[[ -s $work/check/summary.md ]]" "no summary.md"
case $fault in
  control)
    check "grep -q 'status: \*\*green\*\*' $work/check/summary.md" "summary.md does not say green"
    check "grep -q $'^replay cuda\tpassed' $work/check/steps.tsv" "the cuda replay step did not pass"
    ;;
  unavailable)
    check "grep -q \"$planted_case: required (run) but not run: planted\" $work/check/summary.md" \
      "summary.md does not name the planted case as required but not run"
    check "grep -q $'^replay cuda\tfailed' $work/check/steps.tsv" "the cuda replay step did not fail"
    ;;
  silent)
    check "grep -q 'did not answer' $work/check/summary.md" "summary.md does not say the worker did not answer"
    check "grep -q $'^planted\tfailed' $work/check/steps.tsv" "the planted step did not fail"
    ;;
  disagree)
    check "grep -q \"failed 5/5: $planted_case\" $work/check/summary.md" "summary.md does not say failed 5/5"
    check "grep -q $'^replay cuda\tfailed' $work/check/steps.tsv" "the cuda replay step did not fail"
    ;;
  flaky)
    # The first replay's process sees the case once (wrong); the reruns' process sees it 5 times.
    check "grep -q \"flaky 3/5: $planted_case\" $work/check/summary.md" "summary.md does not say flaky 3/5"
    COLLFUZZ_GPU_FAIL_ON_FLAKY=1 "$root/ci/gpu-differential" "$work/strict" 0 > "$work/strict.txt" 2>&1
    strict_rc=$?
    check "((strict_rc == 1))" "COLLFUZZ_GPU_FAIL_ON_FLAKY=1: exit $strict_rc, expected 1"
    ;;
esac
if ((failures)); then
  echo "--- stderr of the check" >&2
  tail -40 "$work/stderr.txt" >&2
  echo "--- steps.tsv" >&2
  cat "$work/check/steps.tsv" >&2
  exit 1
fi
echo "ok"
