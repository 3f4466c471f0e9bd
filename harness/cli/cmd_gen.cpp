// collfuzz gen: the generated cases of a seed, as JSON lines (each a valid case file), or with
// --stats the hit rate of every rule (per profile) and every outcome kind over those cases.
#include <iostream>

#include "generators/case_stream.h"
#include "generators/rule_coverage.h"
#include "harness/campaign/isolated_loop.h"
#include "harness/campaign/shared_memory.h"
#include "harness/cli/commands.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "oracles/reference/reference.h"

namespace collfuzz::cli {
namespace {

int print_cases(std::uint64_t seed, std::uint64_t first, std::uint64_t count) {
  for (std::uint64_t i = first; i < first + count; ++i) {
    std::cout << case_to_json(generators::generate_case(seed, i)).dump() << "\n";
  }
  return kExitOk;
}

// Predicts every case for both profiles, in a child process that a crashing reference cannot
// take the command down with.
int print_stats(std::uint64_t seed, std::uint64_t first, std::uint64_t count, bool json) {
  campaign::SharedMemory<generators::RuleCoverage> coverage;
  const auto crashes = campaign::run_isolated(first, first + count, [&](std::uint64_t i) {
    const Case c = generators::generate_case(seed, i);
    for (Profile p : {Profile::kMosaic, Profile::kInterpret})
      coverage->record(p, predict(c, p).outcome);
  });
  if (json) {
    nlohmann::json j = coverage->to_json();
    j["seed"] = seed;
    j["cases"] = count;
    nlohmann::json cj = nlohmann::json::array();
    for (const auto& cr : crashes) {
      cj.push_back({{"case", generators::generated_case_name(seed, cr.index)},
                    {"signal", cr.signal ? campaign::signal_name(cr.signal) : ""},
                    {"exit_status", cr.exit_status}});
    }
    j["reference_crashes"] = cj;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "seed " << seed << ", " << count << " cases, each predicted for both profiles\n"
              << coverage->to_text();
    if (!crashes.empty()) {
      std::cout << "the reference crashed on " << crashes.size() << " cases (collfuzz gen --seed "
                << seed << " --count N prints them):\n";
      for (const auto& cr : crashes) {
        std::cout << "  " << generators::generated_case_name(seed, cr.index) << ": "
                  << (cr.signal ? campaign::signal_name(cr.signal)
                                : "exit " + std::to_string(cr.exit_status))
                  << "\n";
      }
    }
  }
  return kExitOk;
}

}  // namespace

int cmd_gen(const Flags& flags) {
  if (flags.count < 0) throw InputError("--count", "expected a count >= 0");
  const auto count = static_cast<std::uint64_t>(flags.count);
  return flags.stats ? print_stats(flags.seed, flags.first, count, flags.json)
                     : print_cases(flags.seed, flags.first, count);
}

}  // namespace collfuzz::cli
