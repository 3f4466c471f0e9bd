// The subcommands of `collfuzz`. Each returns the process exit code (errors.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/cli/flags.h"
#include "harness/executors/executor.h"
#include "oracles/verdict.h"

namespace collfuzz::cli {

int cmd_run(const Flags& flags, const std::vector<std::string>& cases);
int cmd_replay(const Flags& flags, const std::vector<std::string>& paths);
int cmd_explain(const Flags& flags, const std::string& case_file);
int cmd_rules(const Flags& flags);
int cmd_gen(const Flags& flags);
int cmd_fuzz(const Flags& flags);
int cmd_merge(const Flags& flags, const std::vector<std::string>& inputs);
int cmd_report(const Flags& flags, const std::string& dir);
int cmd_repro(const Flags& flags, const std::vector<std::string>& paths);
// FILE.py[:NAME] (docs/python.md).
int cmd_import(const Flags& flags, const std::string& spec);
// Writes the reference's prediction into each case's expect (docs/cli.md, collfuzz freeze).
int cmd_freeze(const Flags& flags, const std::vector<std::string>& paths);

// Shared helpers.
ExecutorOptions executor_options(const Flags& flags);
Profile parse_profile_flag(const std::string& value, Profile fallback);
DiagnosticLevel parse_level_flag(const std::string& value);
// --jax: empty -> nullopt; an unknown release -> InputError naming --jax.
std::optional<JaxVersion> parse_jax_flag(const std::string& value);
// The case as --jax judges it (target.jax pinned to the flag's release).
Case with_jax_flag(Case c, const std::optional<JaxVersion>& v);

}  // namespace collfuzz::cli
