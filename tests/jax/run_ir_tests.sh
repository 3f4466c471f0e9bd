#!/usr/bin/env bash
# ctest driver of tests/jax/ir_tests.py (jax-ir, docs/ir-executor.md) on one JAX release:
#   run_ir_tests.sh COLLFUZZ_BINARY VENV_DIR
# Exit 77 (skipped) where the venv has not been made (ci/setup-jax.sh [VERSION]).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
python="$root/$2/bin/python"
if [[ ! -x $python ]]; then
  echo "skipped: no $2 (ci/setup-jax.sh)"
  exit 77
fi
cd "$root" && COLLFUZZ_BIN="$1" exec "$python" -m unittest tests/jax/ir_tests.py
