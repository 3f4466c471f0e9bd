#!/bin/bash
# Runs .clusterfuzzlite/build.sh as ClusterFuzzLite does (its variables: CC, CXX, CFLAGS, CXXFLAGS
# with ASan and the coverage instrumentation, LIB_FUZZING_ENGINE=-fsanitize=fuzzer, OUT, WORK),
# then checks that each fuzzer landed in $OUT with its seed corpus and dictionary, and that each
# runs its seed corpus (-runs=0: the inputs given, no mutation; fuzzing is the engine's job, and a
# crash it finds is a finding, not a broken build).
# Slow (a sanitized build of the libraries): labelled `slow`. Exit 77 (skipped) without clang.
# Usage: clusterfuzzlite_build_test.sh <source dir>
set -u
src=$1
command -v clang++ > /dev/null || { echo "SKIP: no clang++"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CC=clang CXX=clang++
export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS"
export LIB_FUZZING_ENGINE=-fsanitize=fuzzer
export OUT=$work/out WORK=$work/work SRC=$src
mkdir -p "$OUT" "$WORK"
bash "$src/.clusterfuzzlite/build.sh" > "$work/build.log" 2>&1 || { tail -30 "$work/build.log"; echo "FAIL: build.sh"; exit 1; }
for t in case parser; do
  f=$OUT/collfuzz_fuzz_$t
  [ -x "$f" ] || { echo "FAIL: $f missing"; ls "$OUT"; exit 1; }
  [ -s "${f}_seed_corpus.zip" ] || { echo "FAIL: no seed corpus for $t"; exit 1; }
  mkdir -p "$work/corpus-$t"
  (cd "$work/corpus-$t" && unzip -q "${f}_seed_corpus.zip")
  [ -s "$f.dict" ] || { echo "FAIL: no dictionary for $t"; exit 1; }
  (cd "$work" && "$f" -runs=0 -dict="$f.dict" "$work/corpus-$t") > "$work/run-$t.log" 2>&1 || {
    tail -20 "$work/run-$t.log"; echo "FAIL: $t did not run its seed corpus"; exit 1; }
  grep -Eq "INITED|Done [0-9]+ runs" "$work/run-$t.log" || { tail -5 "$work/run-$t.log"; echo "FAIL: $t ran no inputs"; exit 1; }
done
echo "ok: build.sh put collfuzz_fuzz_case and collfuzz_fuzz_parser in \$OUT; each ran its seed corpus"
