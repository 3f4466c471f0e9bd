// The options struct generated from flags.def, and the command masks.
#pragma once

#include <cstdint>
#include <set>
#include <string>

namespace CLI {
class App;
}

namespace collfuzz::cli {

enum Command : unsigned {
  kRun = 1u << 0,
  kReplay = 1u << 1,
  kExplain = 1u << 2,
  kRules = 1u << 3,
  kGen = 1u << 4,
  kFuzz = 1u << 5,
  kMerge = 1u << 6,
  kReport = 1u << 7,
  kRepro = 1u << 8,
  kImport = 1u << 9,
  kFreeze = 1u << 10,
};

struct Flags {
#define COLLFUZZ_FLAG(member, name, type, def, range, commands, help) type member = def;
#include "harness/cli/flags.def"
#undef COLLFUZZ_FLAG
  // The flags given on the command line ("--seconds"), as opposed to left at their default.
  std::set<std::string> given;
  bool was_given(const std::string& name) const { return given.count(name) != 0; }
};

// Adds the flags of flags.def whose mask contains `command` to `app`, each checked against its
// range; a value given records its name in flags.given.
void add_flags(CLI::App& app, Command command, Flags& flags);

}  // namespace collfuzz::cli
