// collfuzz freeze: the reference's prediction written into each case's `expect`, so that an
// imported kernel or a generated case joins the corpus as a regression case (docs/cli.md).
#include <fstream>
#include <iostream>
#include <sstream>

#include "harness/cli/commands.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/terminal_text.h"
#include "harness/runner/atomic_file.h"
#include "harness/runner/freeze.h"
#include "harness/runner/replay.h"

namespace collfuzz::cli {
namespace {

// The case file as written, key order kept, so that a frozen file differs from the original
// only in `expect` (and target.jax with --jax). load_case_file has validated it already.
nlohmann::ordered_json read_ordered(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::ordered_json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file.string(), std::string("not JSON: ") + e.what());
  }
}

}  // namespace

int cmd_freeze(const Flags& flags, const std::vector<std::string>& paths) {
  FreezeOptions options;
  options.jax = parse_jax_flag(flags.jax);
  options.both_profiles = flags.both_profiles;
  options.update = flags.update;
  int written = 0;
  int kept = 0;
  int disagree = 0;
  for (const auto& path : collect_case_files(paths)) {
    const std::string file = path.string();
    const Case c = load_case_file(path);
    const FreezeResult r = freeze_case(read_ordered(path), c, file, options);
    switch (r.action) {
      case FreezeAction::kKept:
        ++kept;
        std::cout << "kept " << terminal_text(file) << ": " << terminal_lines(r.detail) << "\n";
        break;
      case FreezeAction::kDisagrees:
        ++disagree;
        std::cout << "DISAGREES " << terminal_text(file) << ": " << terminal_lines(r.detail)
                  << "\n";
        break;
      case FreezeAction::kWritten:
        ++written;
        if (!flags.check) write_file_atomically(path, r.file.dump(2) + "\n");
        std::cout << (flags.check ? "would freeze " : "frozen ") << terminal_text(file) << ": "
                  << terminal_lines(r.detail) << "\n";
        break;
    }
  }
  std::cout << "collfuzz freeze: " << written << (flags.check ? " to freeze" : " frozen") << ", "
            << kept << " kept, " << disagree << " disagree" << (disagree == 1 ? "s" : "")
            << " with the reference\n";
  return disagree > 0 || (flags.check && written > 0) ? kExitMismatch : kExitOk;
}

}  // namespace collfuzz::cli
