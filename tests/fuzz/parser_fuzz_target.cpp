// libFuzzer target: the case-file parser. Any bytes give a case or an InputError; never a crash,
// a hang, another exception or a huge allocation (the limits are checked before anything is
// allocated). A case that parses serialises to JSON that parses to the same case.
#include <cstdint>
#include <cstdlib>
#include <iostream>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace collfuzz;
  const auto j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;  // not JSON: load_json_file turns this into an InputError
  Case c;
  try {
    c = case_from_json(j);
  } catch (const InputError&) {
    return 0;
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
