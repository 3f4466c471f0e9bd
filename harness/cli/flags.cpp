#include "harness/cli/flags.h"

#include <CLI/CLI.hpp>

namespace collfuzz::cli {
namespace {

void add(CLI::App& app, const char* name, bool& value, const char* help) {
  app.add_flag(name, value, help);
}

template <typename T>
void add(CLI::App& app, const char* name, T& value, const char* help) {
  app.add_option(name, value, help)->capture_default_str();
}

}  // namespace

void add_flags(CLI::App& app, Command command, Flags& flags) {
#define COLLFUZZ_FLAG(member, name, type, def, commands, help) \
  if ((commands)&command) add(app, name, flags.member, help);
#include "harness/cli/flags.def"
#undef COLLFUZZ_FLAG
}

}  // namespace collfuzz::cli
