// libFuzzer target: the readers of case files. Any bytes go through the bounded JSON reader and
// the case parser (and, when the case has one, the parser of its expected outcome), and give a
// case or an InputError; never a crash, a hang, another exception or a huge allocation (the limits
// are checked while reading, and before anything is allocated). A case that parses serialises to
// JSON that parses to the same case.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "harness/core/bounded_json_reader.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/outcome_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace collfuzz;
  Case c;
  nlohmann::json j;
  try {
    j = parse_json_bounded(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    c = case_from_json(j);
  } catch (const InputError&) {
    return 0;
  }
  if (j.contains("expect")) {
    try {
      outcome_from_json(j["expect"], c, "fuzz:$.expect");
    } catch (const InputError&) {
    }
  }
  const nlohmann::json once = case_to_json(c);
  try {
    if (case_to_json(case_from_json(once)) != once) {
      std::cerr << "a parsed case does not round-trip: " << once.dump() << "\n";
      std::abort();
    }
  } catch (const InputError& e) {
    std::cerr << "a serialised case does not parse: " << e.what() << "\n" << once.dump() << "\n";
    std::abort();
  }
  return 0;
}
