#!/usr/bin/env bash
# Creates a venv at the repository root with the JAX executor's pinned requirements for one JAX
# version (harness/jax/requirements-VERSION.txt):
#   ci/setup-jax.sh            -> .venv-jax            (JAX 0.11.2, the default)
#   ci/setup-jax.sh 0.12.0.1   -> .venv-jax-0.12.0.1
# Idempotent: a venv whose recorded requirements match is kept.
# The last line on stdout is the venv's python. Needs Python >= 3.12 (jax 0.11 requires it).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
default_version="0.11.2"
version="${1:-$default_version}"
req="$root/harness/jax/requirements-$version.txt"
if [[ ! -f "$req" ]]; then
  echo "setup-jax: error: no pinned requirements for JAX $version ($req); known: $(cd "$root/harness/jax" && ls requirements-*.txt | sed 's/requirements-//; s/\.txt$//' | tr '\n' ' ')" >&2
  exit 2
fi
if [[ "$version" == "$default_version" ]]; then
  venv="$root/.venv-jax"
else
  venv="$root/.venv-jax-$version"
fi
stamp="$venv/.collfuzz-requirements.sha256"

log() { echo "setup-jax: $*" >&2; }

# A python is usable when it runs and is at least 3.12.
usable() {
  [[ -n "$1" ]] && "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1
}

find_python() {
  local c
  # python3.12 on PATH (a pyenv shim may be on PATH and still fail to run: usable() runs it).
  for c in python3.12 python3.13 python3; do
    if command -v "$c" >/dev/null 2>&1 && usable "$(command -v "$c")"; then
      command -v "$c"; return 0
    fi
  done
  for c in /root/.pyenv/versions/3.12*/bin/python3.12 /root/.pyenv/versions/3.13*/bin/python3.13 \
           /usr/bin/python3.12 /usr/local/bin/python3.12; do
    if [[ -x "$c" ]] && usable "$c"; then echo "$c"; return 0; fi
  done
  if command -v apt-get >/dev/null 2>&1; then
    log "no Python >= 3.12 found; trying apt-get install python3.12 python3.12-venv"
    if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.12 python3.12-venv) >&2 2>&1; then
      if usable /usr/bin/python3.12; then echo /usr/bin/python3.12; return 0; fi
    fi
  fi
  return 1
}

want="$(sha256sum "$req" | cut -d' ' -f1)"
if [[ -x "$venv/bin/python" ]] && usable "$venv/bin/python" && [[ -f "$stamp" ]] \
   && [[ "$(cat "$stamp")" == "$want" ]] \
   && "$venv/bin/python" -c 'import jax, jaxlib' >/dev/null 2>&1; then
  log "up to date: $venv"
  echo "$venv/bin/python"
  exit 0
fi

if ! py="$(find_python)"; then
  echo "setup-jax: error: no Python >= 3.12 found (tried python3.12 on PATH, pyenv 3.12.x, apt-get python3.12); jax 0.11 needs Python >= 3.12" >&2
  exit 1
fi
log "using $py ($("$py" --version 2>&1))"

if [[ -d "$venv" ]] && ! usable "$venv/bin/python"; then
  log "removing a stale venv at $venv"
  rm -rf "$venv"
fi
if [[ ! -x "$venv/bin/python" ]]; then
  "$py" -m venv "$venv" >&2
fi
# --retries/--timeout: pip's own retries per request; ci/retry: the whole install again.
"$root/ci/retry" "$venv/bin/python" -m pip install -q --disable-pip-version-check --retries 8 --timeout 60 \
  -r "$req" >&2
"$venv/bin/python" -c 'import jax, jaxlib; print("setup-jax: jax", jax.__version__, "jaxlib", jaxlib.__version__)' >&2
echo "$want" > "$stamp"
echo "$venv/bin/python"
