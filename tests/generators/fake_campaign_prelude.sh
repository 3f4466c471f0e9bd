# Sourced by the campaign tests that run the fake external executor (tests/process/fake_executor.py)
# in place of the JAX executors: their two arguments (the collfuzz binary, the source dir), a
# private work directory removed on exit, fail() (which prints the run's log), and
# COLLFUZZ_JAX_PYTHON pointing at the fake. Use: source "$(dirname "$0")/fake_campaign_prelude.sh"
set -u
collfuzz=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; cat "$work/log"; exit 1; }
export COLLFUZZ_JAX_PYTHON=$src/tests/process/fake_executor.py
