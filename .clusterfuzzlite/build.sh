#!/bin/bash -eu
# ClusterFuzzLite (and OSS-Fuzz) build script: builds collfuzz's libFuzzer targets with the
# engine's compiler, flags and fuzzing engine, and puts each in $OUT with its seed corpus and
# dictionary. The environment is the engine's: $CC, $CXX, $CFLAGS, $CXXFLAGS (sanitizers and
# coverage), $LIB_FUZZING_ENGINE (e.g. -fsanitize=fuzzer), $OUT; $SRC and $WORK when set.
# tests/scale/clusterfuzzlite_build_test.sh runs it here under those variables, and so does
# ci/fuzz-short without --prebuilt, which sets COLLFUZZ_WERROR=ON (warnings are errors; default OFF).
src=${SRC:-$(cd "$(dirname "$0")/.." && pwd)}
[ -f "$src/CMakeLists.txt" ] || src=$src/collfuzz
work=${WORK:-$(mktemp -d)}
build=$work/collfuzz-build
mkdir -p "$build" "$OUT"
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
cmake -S "$src" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DCOLLFUZZ_LIB_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" \
  -DCOLLFUZZ_WERROR="${COLLFUZZ_WERROR:-OFF}" -DCOLLFUZZ_BUILD_BENCH=OFF -DCOLLFUZZ_CUDA=OFF -DCOLLFUZZ_MUTANTS=OFF \
  -DCOLLFUZZ_MIMALLOC=OFF > "$build/configure.log"
cmake --build "$build" -j "${CFL_JOBS:-$(nproc)}" --target collfuzz_engine_fuzz_case collfuzz_engine_fuzz_parser
for t in case parser; do
  cp "$build/collfuzz_engine_fuzz_$t" "$OUT/collfuzz_fuzz_$t"
  # The seed corpus: the hand-written cases and the fuzzers' own seeds.
  (cd "$src" && find corpus tests/fuzz/seeds -type f | sort | zip -q -j "$OUT/collfuzz_fuzz_${t}_seed_corpus.zip" -@)
  cp "$src/tests/fuzz/case.dict" "$OUT/collfuzz_fuzz_$t.dict"
done
