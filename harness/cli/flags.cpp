#include "harness/cli/flags.h"

#include <CLI/CLI.hpp>
#include <limits>

#include "harness/campaign/campaign_options.h"
#include "harness/cli/flag_range.h"

namespace collfuzz::cli {
namespace {

CLI::Validator validator(const FlagRange& range) {
  return CLI::Validator([check = range.check](std::string& value) { return check(value); },
                        range.text);
}

void add(CLI::App& app, const char* name, bool& value, const FlagRange&, const char* help,
         std::set<std::string>& given) {
  app.add_flag_callback(
      name,
      [&value, &given, name] {
        value = true;
        given.insert(name);
      },
      help);
}

template <typename T>
void add(CLI::App& app, const char* name, T& value, const FlagRange& range, const char* help,
         std::set<std::string>& given) {
  app.add_option(name, value, help)
      ->capture_default_str()
      ->check(validator(range))
      ->each([&given, name](const std::string&) { given.insert(name); });
}

}  // namespace

void add_flags(CLI::App& app, Command command, Flags& flags) {
#define COLLFUZZ_FLAG(member, name, type, def, range, commands, help) \
  if ((commands)&command) add(app, name, flags.member, range, help, flags.given);
#include "harness/cli/flags.def"
#undef COLLFUZZ_FLAG
}

}  // namespace collfuzz::cli
