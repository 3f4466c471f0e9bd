// collfuzz: fuzzing and property testing of Pallas Mosaic GPU's collective allocations and copies.
#include <CLI/CLI.hpp>
#include <iostream>

#include "harness/cli/commands.h"
#include "harness/core/errors.h"

int main(int argc, char** argv) {
  using namespace collfuzz;
  using namespace collfuzz::cli;
  CLI::App app{
      "collfuzz: a fuzzing and property-testing harness for the collective memory semantics of "
      "Pallas Mosaic GPU kernels (cluster-collective scoped allocations, collective TMA copies and "
      "their mbarrier byte accounting).\n\nExit codes: 0 ok, 1 a case failed or a finding was "
      "made, "
      "2 bad input, 3 internal error."};
  app.require_subcommand(1);
  Flags flags;
  std::vector<std::string> cases;
  std::string one_case;

  auto* run = app.add_subcommand(
      "run", "Run cases on the reference (and --executors) and print each outcome");
  run->add_option("cases", cases, "case files")->required();
  add_flags(*run, kRun, flags);

  auto* replay = app.add_subcommand(
      "replay",
      "Replay case files (directories searched recursively); print one line per failure and, last, "
      "'N passed, N failed'");
  replay->add_option("paths", cases, "case files or directories")->required();
  add_flags(*replay, kReplay, flags);

  auto* explain = app.add_subcommand(
      "explain", "List, in order, the rules checked for a case and which one fired");
  explain->add_option("case", one_case, "a case file")->required();
  add_flags(*explain, kExplain, flags);

  auto* rules = app.add_subcommand("rules", "Print the rule table");
  add_flags(*rules, kRules, flags);

  auto* gen = app.add_subcommand(
      "gen", "Print generated cases as JSON lines (--stats: rule and outcome hit rates)");
  add_flags(*gen, kGen, flags);

  auto* fuzz = app.add_subcommand("fuzz",
                                  "Run a fuzzing campaign: generated cases on the reference and "
                                  "every executor; findings shrunk and "
                                  "written to --out; exit 1 if any finding");
  add_flags(*fuzz, kFuzz, flags);

  auto* merge = app.add_subcommand(
      "merge",
      "Merge the finding folders of campaign runs (shards, machines) into --into: findings "
      "deduplicated by signature, smallest case kept, statistics summed, each run's provenance "
      "kept; summary.md, summary.json and report.html written");
  merge->add_option("runs", cases, "campaign (or merged) directories")->required();
  add_flags(*merge, kMerge, flags);

  auto* report = app.add_subcommand(
      "report", "Write one self-contained HTML report (no network access) of a campaign directory");
  report->add_option("out", one_case, "a campaign or merged directory")->required();
  add_flags(*report, kReport, flags);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadInput;
  }

  try {
    if (*run) return cmd_run(flags, cases);
    if (*replay) return cmd_replay(flags, cases);
    if (*explain) return cmd_explain(flags, one_case);
    if (*rules) return cmd_rules(flags);
    if (*gen) return cmd_gen(flags);
    if (*fuzz) return cmd_fuzz(flags);
    if (*merge) return cmd_merge(flags, cases);
    if (*report) return cmd_report(flags, one_case);
  } catch (const InputError& e) {
    std::cerr << "collfuzz: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "collfuzz: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
  return kExitInternal;
}
