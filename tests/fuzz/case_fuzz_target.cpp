// libFuzzer target: a case, decoded from the bytes (structure-aware: case_decoder.h) or, when
// the bytes are a case file (the seed corpus is corpus/), that case; run on the reference and on
// the simulator, and held against each other by the three oracles. Any disagreement writes the
// case file ($COLLFUZZ_FUZZ_FINDINGS, default fuzz-findings/) and aborts, which is how libFuzzer
// learns of it.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "harness/core/bounded_json_reader.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/executors/executor.h"
#include "harness/runner/atomic_file.h"
#include "oracles/oracles.h"
#include "oracles/reference/reference.h"
#include "tests/fuzz/case_decoder.h"

namespace {

std::optional<collfuzz::Case> case_file(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || data[0] != '{') return std::nullopt;
  try {
    return collfuzz::case_from_json(collfuzz::parse_json_bounded(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz"));
  } catch (const collfuzz::InputError&) {
    return std::nullopt;
  }
}

collfuzz::Executor* simulator() {
  static const std::unique_ptr<collfuzz::Executor> sim =
      []() -> std::unique_ptr<collfuzz::Executor> {
    for (const auto& e : collfuzz::executor_registry()) {
      if (e.name == "sim") return collfuzz::make_executor("sim", collfuzz::ExecutorOptions{});
    }
    return nullptr;
  }();
  return sim.get();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace collfuzz;
  std::optional<Case> parsed = case_file(data, size);
  const Case c = parsed ? std::move(*parsed) : fuzz::decode_case(data, size);
  const Outcome expected = predict(c, Profile::kMosaic).outcome;
  Executor* sim = simulator();
  if (!sim) return 0;  // no simulator in this build: the reference alone ran (it must not crash)
  Outcome actual = sim->run(c);
  actual.executor = sim->name();
  const Verdict v = compare(c, expected, actual);
  if (v.agrees() || !v.ran) return 0;
  const char* env = std::getenv("COLLFUZZ_FUZZ_FINDINGS");
  const std::filesystem::path dir = env ? env : "fuzz-findings";
  const auto file =
      dir / (std::to_string(std::hash<std::string>{}(case_to_json(c).dump())) + ".json");
  write_file_atomically(file, case_to_json(c).dump(2) + "\n");
  std::cerr << "reference and sim disagree (case written to " << file.string() << "):\n";
  for (const auto& m : v.mismatches) std::cerr << "  " << m.signature << ": " << m.detail << "\n";
  std::abort();
}
