#!/usr/bin/env bash
# Installs what collfuzz needs to build on a fresh Debian machine (idempotent): the compilers,
# CMake and Ninja, and the libraries from Debian's packages (nlohmann-json, CLI11, GoogleTest,
# RapidCheck, Google Benchmark, mimalloc). Run as root, or with sudo available.
set -euo pipefail

packages=(cmake ninja-build g++ clang lld clang-format libclang-rt-dev libgtest-dev libgmock-dev librapidcheck-dev
          libbenchmark-dev nlohmann-json3-dev libcli11-dev libmimalloc-dev
          chromium zip unzip)  # chromium: the report's browser test; zip: .clusterfuzzlite/build.sh

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  retry="$(dirname "${BASH_SOURCE[0]}")/retry"
  "$retry" "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "$retry" "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "setup: build dependencies present" >&2
