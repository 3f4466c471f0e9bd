// collfuzz repro: a case as a standalone JAX script that asserts the reference's prediction
// (docs/python.md).
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "harness/cli/commands.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/terminal_text.h"
#include "harness/runner/atomic_file.h"
#include "harness/runner/replay.h"
#include "harness/runner/repro_script.h"

namespace collfuzz::cli {

int cmd_repro(const Flags& flags, const std::vector<std::string>& paths) {
  const auto mode = parse_repro_mode(flags.mode);
  if (!mode)
    throw InputError("--mode", "expected interpret, gpu or lower, got \"" + flags.mode + "\"");
  const auto jax = parse_jax_flag(flags.jax);
  const std::vector<std::filesystem::path> files = collect_case_files(paths);
  bool one_file = files.size() == 1;
  for (const auto& p : paths) one_file = one_file && !std::filesystem::is_directory(p);
  // -o naming a folder (an existing one, or a path ending in '/') takes one script per case.
  if (!flags.output.empty() &&
      (flags.output.back() == '/' || std::filesystem::is_directory(flags.output)))
    one_file = false;
  if (!one_file && flags.output.empty())
    throw InputError("-o",
                     "several cases (or a directory) need -o DIR, the folder for the scripts");
  ReproGenerator gen(flags.python, "");
  if (const std::string why = gen.unavailable(); !why.empty()) {
    std::cerr << "collfuzz: error: cannot write scripts: " << terminal_text(why) << "\n";
    return kExitInternal;
  }
  if (!one_file) std::filesystem::create_directories(flags.output);
  int written = 0;
  int refused = 0;
  int unreadable = 0;
  std::set<std::string> stems;
  // Several cases: DIR/index.json maps each case file to its script (or the generator's refusal).
  nlohmann::json index = nlohmann::json::array();
  for (const auto& file : files) {
    // Several cases: one that cannot be read is reported and skipped, the others still written.
    std::optional<Case> read;
    try {
      read = with_jax_flag(load_case_file(file), jax);
    } catch (const InputError& e) {
      if (one_file) throw;
      std::cerr << "collfuzz: error: " << terminal_lines(e.what()) << "\n";
      ++unreadable;
      index.push_back({{"case", file.string()}, {"unreadable", e.what()}});
      continue;
    }
    const Case& c = *read;
    const std::string command =
        "collfuzz repro " + file.filename().string() + " --mode " + to_string(*mode);
    const ReproScript s = gen.generate(c, *mode, command);
    if (!s.error.empty()) {
      std::cerr << "collfuzz: error: " << terminal_text(file.string())
                << ": cannot be written as a script: " << terminal_text(s.error) << "\n";
      ++refused;
      index.push_back({{"case", file.string()}, {"error", s.error}});
      continue;
    }
    if (one_file && flags.output.empty()) {
      std::cout << s.script;
    } else if (one_file) {
      write_file_atomically(flags.output, s.script);
    } else {
      std::string stem = file.stem().string();
      while (!stems.insert(stem).second) stem += "_";
      write_file_atomically(std::filesystem::path(flags.output) / (stem + ".py"), s.script);
      index.push_back({{"case", file.string()}, {"script", stem + ".py"}});
    }
    ++written;
  }
  if (!one_file)
    write_file_atomically(std::filesystem::path(flags.output) / "index.json", index.dump(1) + "\n");
  if (!one_file || !flags.output.empty())
    std::cerr << written << " script(s) written" << (refused ? ", " : "")
              << (refused ? std::to_string(refused) + " case(s) refused" : "")
              << (unreadable ? ", " + std::to_string(unreadable) + " case file(s) unreadable" : "")
              << "\n";
  return refused || unreadable ? kExitBadInput : 0;
}

}  // namespace collfuzz::cli
